"""Lowering of the run ops of a work-efficient scan with a user's combining function
(:mod:`numba_tile.language.combiners`): ``split_runs``/``merge_runs`` regroup the bits of a
coordinate and move nothing, ``run_element`` and ``stack_runs`` pick registers. Where the
scanned axis has a lane or warp bit in the run (a layout the typing could not avoid), the
same results come through shared memory or from selects, slower but alike.
"""

from numba.core import types

from ...language import scans
from ..abstract import constant_of
from ..types import TileType
from ..typing.scans import register_only
from .registry import registry
from .tiles import I32, make_tile, move_tile, register_coordinates, relayout, \
    thread_coordinates, tile_registers

lower = registry.lower


def _same_registers(context, builder, sig, args):
    """A tile seen on another shape whose layout maps the same registers (moved first where
    the typing chose another layout for the runs)."""
    x_type, result_type = sig.args[0], sig.return_type
    axis = constant_of(sig.args[1]) % len(x_type.shape)
    if len(result_type.shape) > len(x_type.shape):  # split: the runs merged back
        seen_as = result_type.layout.merge_axes(axis)
    else:
        seen_as = result_type.layout.split_axis(axis, x_type.shape[axis + 1])
    value = args[0]
    if seen_as != x_type.layout:
        value = move_tile(context, builder, x_type, value,
                          TileType(x_type.dtype, x_type.shape, x_type.num_warps, seen_as))
    return make_tile(context, builder, result_type, tile_registers(builder, x_type, value))


lower(scans.split_runs, types.Any, types.Any, types.Any)(_same_registers)
lower(scans.merge_runs, types.Any, types.Any)(_same_registers)


@lower(scans.run_element, types.Any, types.Any, types.Any)
def lower_run_element(context, builder, sig, args):
    """Each register takes the register of the same thread that holds its run's element
    ``index``."""
    x_type, result_type = sig.args[0], sig.return_type
    axis, index = constant_of(sig.args[1]), constant_of(sig.args[2])
    axis %= len(x_type.shape)
    layout = x_type.layout
    if register_only(layout, axis):
        holders = {}
        for register in range(x_type.registers):
            holders.setdefault(layout.apply(register=register), register)
        sources = []
        for register in range(result_type.registers):
            wanted = list(layout.apply(register=register))
            wanted[axis] = index
            sources.append(holders.get(tuple(wanted)))
        if None not in sources:
            return make_tile(context, builder, result_type,
                             [builder.extract_value(args[0], s) for s in sources])

    def source(builder, coords):
        return coords[:axis] + [I32(index)] + coords[axis + 1:]
    return relayout(context, builder, x_type, args[0], result_type, source)


@lower(scans.stack_runs, types.Any, types.Any, types.Any)
def lower_stack_runs(context, builder, sig, args):
    """Each register of ``like``'s layout takes its element from the part of its index
    along the axis, the parts held in that layout collapsed (as ``run_element`` gives
    them); an index known only at run time (a lane or warp bit) picks with selects."""
    part_types, result_type = sig.args[0], sig.return_type
    axis = constant_of(sig.args[2]) % len(result_type.shape)
    layout = result_type.layout
    collapsed = layout.collapse((axis,))
    parts = []
    for k, part_type in enumerate(part_types):
        value = builder.extract_value(args[0], k)
        target = TileType(part_type.dtype, part_type.shape, part_type.num_warps, collapsed)
        if part_type.layout != collapsed:
            value = move_tile(context, builder, part_type, value, target)
        parts.append(tile_registers(builder, target, value))
    in_registers = register_only(layout, axis)
    base = None if in_registers else thread_coordinates(builder, layout)
    values = []
    for register in range(result_type.registers):
        if in_registers:
            values.append(parts[layout.apply(register=register)[axis]][register])
            continue
        position = register_coordinates(builder, base, layout, register)[axis]
        value = parts[0][register]
        for k in range(1, len(parts)):
            value = builder.select(builder.icmp_unsigned("==", position, I32(k)),
                                   parts[k][register], value)
        values.append(value)
    return make_tile(context, builder, result_type, values)
