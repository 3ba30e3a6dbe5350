"""Typing of the scans ``cumsum`` and ``cumprod`` (the rules: :mod:`numba_tile.rules.scans`).

The result keeps the input's shape and layout where every basis vector of the layout that
moves along the scanned axis moves along it alone, by a power of two (the blocked layouts
of loads and factories); otherwise it takes the default layout, and the input is moved
there first."""

from numba.core import types

from ... import dtypes as d
from ...errors import TileTypeError
from ...language import scans
from ...layouts import blocked
from ...rules import scans as scan_rules
from ..types import TileType
from .templates import compile_time_value, constant_value, register_template, tile_argument


def axis_bits(layout, axis):
    """``[(bit along the axis, layout dimension, index of the basis vector), ...]`` in
    increasing bit order, or None where a basis vector moves along the axis and another
    axis, or along the axis by other than a power of two."""
    found = []
    for dim in ("register", "lane", "warp"):
        for index, vector in enumerate(layout.bases[dim]):
            step = vector[axis]
            if not step:
                continue
            if any(c for a, c in enumerate(vector) if a != axis) or step & (step - 1):
                return None
            found.append((step.bit_length() - 1, dim, index))
    return sorted(found)


def scan_type(x, dtype, axis):
    """The tile type a scan of ``x`` along ``axis`` gives (see the module's docstring)."""
    if axis_bits(x.layout, axis) is not None:
        return TileType(dtype, x.shape, x.num_warps, x.layout)
    return TileType(dtype, x.shape, x.num_warps)


def infer_scan(op):
    def infer(values):
        x = tile_argument(values, op)
        dtype, axis, _ = scan_rules.scan(op, x, constant_value(values["axis"]),
                                         constant_value(values["reverse"]))
        scan_rules.scan_options(op, dtype, constant_value(values["rounding_mode"]),
                                compile_time_value(values["flush_to_zero"],
                                                   f"{op}(flush_to_zero=...)"))
        return scan_type(x, dtype, axis)
    return infer


for _op in scan_rules.SCANS:
    register_template(getattr(scans, _op), infer_scan(_op))


def infer_halves(kind):
    """``swap_halves`` keeps the dtype, ``upper_halves`` gives bools; both in the layout
    :func:`scan_type` picks."""
    def infer(values):
        x = tile_argument(values, kind)
        axis, _ = scan_rules.halves(x.shape, constant_value(values["axis"]),
                                    constant_value(values["width"]))
        return scan_type(x, x.dtype if kind == "swap_halves" else d.bool_, axis)
    return infer


register_template(scans.swap_halves, infer_halves("swap_halves"))
register_template(scans.upper_halves, infer_halves("upper_halves"))


def register_only(layout, axis):
    """True where only register bits move along ``axis`` of ``layout`` (the axis never
    crosses a lane or a warp)."""
    return not any(vector[axis] for dim in ("lane", "warp") for vector in layout.bases[dim])


def infer_split_runs(values):
    """A run kept in registers: ``x``'s layout seen on the split shape where the run's
    bits are register bits; otherwise a blocked layout with runs of that length along the
    last axis (the input is moved there), or the default one for another axis."""
    x = tile_argument(values, "split_runs")
    axis, run = scan_rules.run_split(x.shape, constant_value(values["axis"]),
                                     constant_value(values["run"]))
    split = x.layout.split_axis(axis, run)
    if not register_only(split, axis + 1):
        split = blocked(split.shape, x.num_warps, 16 // run) if axis == x.ndim - 1 else None
    return TileType(x.dtype, x.shape[:axis] + (x.shape[axis] // run, run) +
                    x.shape[axis + 1:], x.num_warps, split)


def infer_merge_runs(values):
    x = tile_argument(values, "merge_runs")
    axis = scan_rules.run_merge(x.shape, constant_value(values["axis"]))
    merged = x.layout.merge_axes(axis)
    return TileType(x.dtype, merged.shape, x.num_warps, merged)


def infer_run_element(values):
    """The run's axis collapsed: the other registers of the run repeat the element."""
    x = tile_argument(values, "run_element")
    axis, _ = scan_rules.run_index(x.shape, constant_value(values["axis"]),
                                   constant_value(values["index"]))
    collapsed = x.layout.collapse((axis,))
    return TileType(x.dtype, collapsed.shape, x.num_warps, collapsed)


def infer_stack_runs(values):
    like, parts = values["like"], values["parts"]
    if not isinstance(like, TileType) or not isinstance(parts, types.BaseTuple) or not all(
            isinstance(p, TileType) for p in parts):
        raise TileTypeError("stack_runs() needs a tuple of tiles and a tile")
    scan_rules.run_stack(like.shape, [p.shape for p in parts], [p.dtype for p in parts],
                         constant_value(values["axis"]))
    return TileType(parts[0].dtype, like.shape, like.num_warps, like.layout)


register_template(scans.split_runs, infer_split_runs)
register_template(scans.merge_runs, infer_merge_runs)
register_template(scans.run_element, infer_run_element)
register_template(scans.stack_runs, infer_stack_runs)
