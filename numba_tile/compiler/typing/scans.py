"""Typing of the scans ``cumsum`` and ``cumprod`` (the rules: :mod:`numba_tile.rules.scans`).

The result keeps the input's shape and layout where every basis vector of the layout that
moves along the scanned axis moves along it alone, by a power of two (the blocked layouts
of loads and factories); otherwise it takes the default layout, and the input is moved
there first."""

from ... import dtypes as d
from ...language import scans
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
