"""Lowering of the scans ``cumsum`` and ``cumprod``.

Each element carries two values: its running result within the aligned block of elements
it belongs to, and that block's total. The blocks double along the scanned axis one bit at a
time, in the order of the bits: the element whose bit is set adds the total of the other
half (its partner: another register of the same thread, a lane reached by a butterfly
shuffle, or a warp reached through shared memory), and both halves' totals become their
sum. ``log2(n)`` steps scan ``n`` elements, with no loop over elements; registers that share
a block total compute it once. A reversed scan adds the other half's total to the elements
of the lower half instead.
"""

from numba.core import types

from ... import dtypes as d
from ...language import scans
from ...rules import scans as scan_rules
from ..abstract import constant_of
from ..typing.scans import axis_bits
from . import arithmetic
from .registry import registry
from .tiles import I32, barrier, load_shared, make_tile, move_tile, register_coordinates, \
    scratch, shuffle_xor, store_shared, thread_coordinates, thread_ids, tile_registers

lower = registry.lower


def _work_dtype(dtype, rounding_mode):
    """Floats narrower than 32 bits accumulate in float32; a directed rounding accumulates
    in float64 and rounds once at the end."""
    if dtype.is_float and rounding_mode in arithmetic.DIRECTED:
        return d.float64
    return arithmetic.compute_dtype(dtype)


def _lower_scan(op):
    combine_op = scan_rules.SCANS[op]

    def lower_scan(context, builder, sig, args):
        x_type, result_type = sig.args[0], sig.return_type
        axis = scan_rules.scan(op, x_type, constant_of(sig.args[1]), False)[1]
        reverse = bool(constant_of(sig.args[2]))
        rounding_mode = constant_of(sig.args[3])
        flush = bool(constant_of(sig.args[4]))
        value = args[0]
        if x_type.layout != result_type.layout:
            moved = type(x_type)(x_type.dtype, x_type.shape, x_type.num_warps,
                                 result_type.layout)
            value, x_type = move_tile(context, builder, x_type, value, moved), moved
        work = _work_dtype(result_type.dtype, rounding_mode)

        def combine(a, b):
            return arithmetic.binary(context, builder, combine_op, work, work, a, b)

        prefix = []
        for register in tile_registers(builder, x_type, value):
            start = arithmetic.convert(context, builder, register, x_type.dtype, work)
            if flush:
                start = arithmetic._flush(builder, start, work)
            prefix.append(start)
        prefix = _scan_registers(builder, x_type, axis, prefix, combine, reverse, work,
                                 context)
        return make_tile(context, builder, result_type, [
            arithmetic.convert(context, builder, v, work, result_type.dtype,
                               rounding_mode if work is d.float64 else None)
            for v in prefix])
    return lower_scan


def _scan_registers(builder, x_type, axis, prefix, combine, reverse, work, context):
    """The scanned registers (see the module's docstring)."""
    layout = x_type.layout
    registers = x_type.registers
    folded = 0  # register bits done: registers differing only there share a block total
    totals = {r: v for r, v in enumerate(prefix)}
    lane, warp = thread_ids(builder)
    for _, dim, index in axis_bits(layout, axis):
        bit = 1 << index
        if dim == "register":
            new_prefix = []
            for r in range(registers):
                partner_total = totals[(r ^ bit) & ~folded]
                upper = r & bit
                if upper and not reverse:
                    new_prefix.append(combine(partner_total, prefix[r]))
                elif not upper and reverse:
                    new_prefix.append(combine(prefix[r], partner_total))
                else:
                    new_prefix.append(prefix[r])
            totals = {key: combine(totals[key], totals[key | bit])
                      for key in totals if not key & bit}
            folded |= bit
            prefix = new_prefix
            continue
        if dim == "lane":
            partner = {key: shuffle_xor(builder, t, bit) for key, t in totals.items()}
            upper = builder.icmp_unsigned("!=", builder.and_(lane, I32(bit)), I32(0))
        else:
            partner = _across_warps(builder, x_type, totals, lane, warp, bit)
            upper = builder.icmp_unsigned("!=", builder.and_(warp, I32(bit)), I32(0))
        new_prefix = []
        for r in range(registers):
            other = partner[r & ~folded]
            added = combine(other, prefix[r]) if not reverse else combine(prefix[r], other)
            take = upper if not reverse else builder.not_(upper)
            new_prefix.append(builder.select(take, added, prefix[r]))
        prefix = new_prefix
        # the sum of both halves, lower half first (the operations here are commutative)
        totals = {key: combine(t, partner[key]) for key, t in totals.items()}
    return prefix


def _across_warps(builder, x_type, totals, lane, warp, bit):
    """Each block total of the warp ``warp ^ bit`` (same lane), through shared memory at
    ``[warp][lane][key]``."""
    keys = sorted(totals)
    element = next(iter(totals.values())).type
    buffer = scratch(builder, element, len(keys) * 32 * x_type.num_warps)

    def slot(warp_index, position):
        offset = builder.add(builder.mul(builder.add(builder.mul(warp_index, I32(32)), lane),
                                         I32(len(keys))), I32(position))
        return builder.gep(buffer, [offset])

    barrier(builder)  # an earlier step (or loop pass) may still read the buffer
    for position, key in enumerate(keys):
        store_shared(builder, totals[key], slot(warp, position))
    barrier(builder)
    other = builder.xor(warp, I32(bit))
    return {key: load_shared(builder, slot(other, position), element)
            for position, key in enumerate(keys)}


for _op in scan_rules.SCANS:
    lower(getattr(scans, _op), types.Any, types.VarArg(types.Any))(_lower_scan(_op))


def _in_result_layout(context, builder, sig, value):
    """The tile ``value`` (``sig.args[0]``) moved to the result's layout where they differ;
    ``(value, its type)``."""
    x_type, result_type = sig.args[0], sig.return_type
    if x_type.layout == result_type.layout:
        return value, x_type
    moved = type(x_type)(x_type.dtype, x_type.shape, x_type.num_warps, result_type.layout)
    return move_tile(context, builder, x_type, value, moved), moved


@lower(scans.swap_halves, types.Any, types.Any, types.Any)
def lower_swap_halves(context, builder, sig, args):
    """The partner of each element is where one layout bit differs: another register of the
    thread, the lane of a butterfly shuffle, or a warp reached through shared memory."""
    value, x_type = _in_result_layout(context, builder, sig, args[0])
    axis, width = scan_rules.halves(x_type.shape, constant_of(sig.args[1]),
                                    constant_of(sig.args[2]))
    (dim, index), = [(dim, index) for bit, dim, index in axis_bits(x_type.layout, axis)
                     if 1 << bit == width]
    registers = tile_registers(builder, x_type, value)
    if dim == "register":
        swapped = [registers[r ^ (1 << index)] for r in range(len(registers))]
    elif dim == "lane":
        swapped = [shuffle_xor(builder, v, 1 << index) for v in registers]
    else:
        lane, warp = thread_ids(builder)
        partner = _across_warps(builder, x_type, dict(enumerate(registers)), lane, warp,
                                1 << index)
        swapped = [partner[r] for r in range(len(registers))]
    return make_tile(context, builder, sig.return_type, swapped)


@lower(scans.upper_halves, types.Any, types.Any, types.Any)
def lower_upper_halves(context, builder, sig, args):
    """Each register's coordinate along the axis, tested for the bit ``width``."""
    result_type = sig.return_type
    axis, width = scan_rules.halves(result_type.shape, constant_of(sig.args[1]),
                                    constant_of(sig.args[2]))
    layout = result_type.layout
    base = thread_coordinates(builder, layout)
    return make_tile(context, builder, result_type, [
        builder.icmp_unsigned("!=", builder.and_(
            register_coordinates(builder, base, layout, register)[axis], I32(width)), I32(0))
        for register in range(result_type.registers)])
