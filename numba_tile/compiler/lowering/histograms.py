"""Lowering of ``histogram``: the block counts in shared memory.

The counts start at zero (each thread zeroes the bins its result registers hold: together
they hold every bin), then every element of the input, counted once (by the first of the
registers that hold it, in the one thread of the threads that hold it), adds 1 to its bin
with a shared-memory atomic; a value outside the bins adds to one slot past them, so no
thread branches. Each thread then reads its result registers' bins. Three barriers: before
the zeroing (earlier users of the scratch buffer have read it), after it, and after the
adds.
"""

from llvmlite import ir
from numba.core import types

from ...language import histograms
from .registry import registry
from .tiles import I32, barrier, first_holders, is_replica_leader, make_tile, \
    register_coordinates, scratch, thread_coordinates, tile_registers

lower = registry.lower
I64 = ir.IntType(64)


def _bin_index(builder, value, signed, bins):
    """The int32 slot of an element: its value where in ``[0, bins)``, else ``bins``."""
    wide = value if value.type.width >= 64 else (
        builder.sext(value, I64) if signed else builder.zext(value, I64))
    inside = builder.icmp_unsigned("<", wide, ir.Constant(wide.type, bins))
    return builder.select(inside, builder.trunc(wide, ir.IntType(32)), I32(bins))


@lower(histograms.histogram, types.Any, types.Any)
def lower_histogram(context, builder, sig, args):
    x_type, result_type = sig.args[0], sig.return_type
    bins = result_type.shape[0]
    counts = scratch(builder, ir.IntType(32), bins + 1)
    layout = result_type.layout
    base = thread_coordinates(builder, layout)
    slots = [builder.gep(counts, [register_coordinates(builder, base, layout, r)[0]])
             for r in range(result_type.registers)]
    barrier(builder)
    for slot in slots:
        builder.store(I32(0), slot)
    barrier(builder)
    repeats = {register for register, _ in first_holders(x_type.layout)}
    signed = x_type.dtype.is_signed
    with builder.if_then(is_replica_leader(builder, x_type.layout)):
        for register, value in enumerate(tile_registers(builder, x_type, args[0])):
            if register in repeats:
                continue
            slot = builder.gep(counts, [_bin_index(builder, value, signed, bins)])
            builder.atomic_rmw("add", slot, I32(1), "monotonic")
    barrier(builder)
    return make_tile(context, builder, result_type, [builder.load(slot) for slot in slots])
