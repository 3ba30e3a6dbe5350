"""Lowering of the scans ``cumsum`` and ``cumprod``: a work-efficient scan.

A thread first scans its own run of consecutive elements (the lowest bits of the scanned
axis that the layout gives to registers) one after the other: ``k - 1`` combines for ``k``
elements. Then the totals of the runs are scanned across the rest of the axis bit by bit,
lowest first: each run keeps one *offset*, the combined totals of the runs before it in its
block; at each bit the block doubles, the run in the upper half adds the other half's total
to its offset (the other half is another register of the thread, a lane reached by a
butterfly shuffle, or a warp reached through shared memory), and both halves' totals become
their sum. That is one combine per run and per bit, not one per element; a last combine per
element applies the offset. A reversed scan runs the other way: the lower half takes the
upper half's total.
"""

from numba.core import types

from ... import dtypes as d
from ...language import scans
from ...rules import scans as scan_rules
from ..abstract import constant_of
from ..typing.scans import axis_bits
from . import arithmetic
from .registry import registry
from .tiles import I32, barrier, first_holders, load_shared, make_tile, move_tile, \
    register_coordinates, scratch, shuffle_xor, store_shared, thread_coordinates, thread_ids, \
    tile_registers

lower = registry.lower


def _work_dtype(dtype, rounding_mode):
    """Floats narrower than 32 bits accumulate in float32; a directed rounding accumulates
    in float64 and rounds once at the end."""
    if dtype.is_float and rounding_mode in arithmetic.DIRECTED:
        return d.float64
    return arithmetic.compute_dtype(dtype)


# the identities of a scan's combine, in the work dtype (-0.0 so that -0.0 + x is x)
_IDENTITIES = {"add": -0.0, "mul": 1}


def _lower_scan(op):
    combine_op = scan_rules.SCANS[op]

    def lower_scan(context, builder, sig, args):
        x_type, result_type = sig.args[0], sig.return_type
        axis = scan_rules.scan(op, x_type, constant_of(sig.args[1]), False)[1]
        reverse = bool(constant_of(sig.args[2]))
        rounding_mode = constant_of(sig.args[3])
        flush = bool(constant_of(sig.args[4]))
        value, x_type = _in_result_layout(context, builder, sig, args[0])
        work = _work_dtype(result_type.dtype, rounding_mode)

        def combine(a, b):
            return arithmetic.binary(context, builder, combine_op, work, work, a, b)

        elements = []
        for register in tile_registers(builder, x_type, value):
            start = arithmetic.convert(context, builder, register, x_type.dtype, work)
            if flush:
                start = arithmetic._flush(builder, start, work)
            elements.append(start)
        identity = _IDENTITIES[combine_op]
        identity = arithmetic.constant(work, identity if work.is_float else int(identity))
        scanned = _scan_registers(builder, x_type, axis, elements,
                                  _Combiner(combine, reverse), identity)
        return make_tile(context, builder, result_type, [
            arithmetic.convert(context, builder, v, work, result_type.dtype,
                               rounding_mode if work is d.float64 else None)
            for v in scanned])
    return lower_scan


class _Combiner:
    """A scan's combine in the scan's direction: ``before(a, b)`` combines ``a``, which
    comes first in the scan's order, with ``b`` (forward: lower coordinates first)."""

    def __init__(self, combine, reverse):
        self.combine, self.reverse = combine, reverse

    def before(self, earlier, later):
        return self.combine(later, earlier) if self.reverse else self.combine(earlier, later)


def _run_bits(layout, axis):
    """The register bits holding the lowest bits of the axis coordinate, in order (the
    thread's runs of consecutive elements), and the other axis bits ``(bit, dim, index)``."""
    bits = axis_bits(layout, axis)
    run = 0
    while run < len(bits) and bits[run][1] == "register" and bits[run][0] == run:
        run += 1
    return [index for _, _, index in bits[:run]], bits[run:]


def _scan_registers(builder, x_type, axis, elements, combiner, identity):
    """The scanned registers (see the module's docstring)."""
    run_indices, other_bits = _run_bits(x_type.layout, axis)
    run_mask = sum(1 << index for index in run_indices)
    prefix, totals = _scan_runs(x_type.registers, run_indices, run_mask, elements, combiner)
    # a run is named by its registers' bits outside the run (its lowest register)
    offsets = {group: None for group in totals}
    folded = 0  # register bits of the axis done: runs differing only there share a total
    lane, warp = thread_ids(builder)
    for _, dim, index in other_bits:
        bit = 1 << index
        if dim == "register":
            for group in offsets:
                if bool(group & bit) != combiner.reverse:  # takes the other half's total
                    other = totals[(group ^ bit) & ~folded]
                    offsets[group] = other if offsets[group] is None else \
                        combiner.before(other, offsets[group])
            totals = {key: combiner.combine(totals[key], totals[key | bit])
                      for key in totals if not key & bit}
            folded |= bit
            continue
        if dim == "lane":
            partner = {key: shuffle_xor(builder, t, bit) for key, t in totals.items()}
            upper = builder.icmp_unsigned("!=", builder.and_(lane, I32(bit)), I32(0))
        else:
            partner = _across_warps(builder, x_type, totals, lane, warp, bit)
            upper = builder.icmp_unsigned("!=", builder.and_(warp, I32(bit)), I32(0))
        takes = builder.not_(upper) if combiner.reverse else upper
        for group, offset in offsets.items():
            other = partner[group & ~folded]
            offsets[group] = builder.select(
                takes, other if offset is None else combiner.before(other, offset),
                identity if offset is None else offset)
        # the sum of both halves (the scans' operations commute)
        totals = {key: combiner.combine(t, partner[key]) for key, t in totals.items()}
    return [value if offsets[r & ~run_mask] is None else
            combiner.before(offsets[r & ~run_mask], value) for r, value in enumerate(prefix)]


def _scan_runs(registers, run_indices, run_mask, elements, combiner):
    """Each register's running result within its thread's run, one combine per element in
    the scan's order, and each run's total (keyed by the run's lowest register)."""
    def coordinate(register):  # the position within the run
        return sum(1 << position for position, index in enumerate(run_indices)
                   if register >> index & 1)

    prefix, totals = list(elements), {}
    for group in range(registers):
        if group & run_mask:
            continue
        members = sorted((r for r in range(registers) if r & ~run_mask == group),
                         key=coordinate, reverse=combiner.reverse)
        running = None
        for r in members:
            running = elements[r] if running is None else combiner.before(running, elements[r])
            prefix[r] = running
        totals[group] = running
    return prefix, totals


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
        return make_tile(context, builder, sig.return_type,
                         [registers[r ^ (1 << index)] for r in range(len(registers))])
    # registers that repeat an element (a run's total) move once
    first = dict(first_holders(x_type.layout))
    distinct = {r: v for r, v in enumerate(registers) if r not in first}
    if dim == "lane":
        moved = {r: shuffle_xor(builder, v, 1 << index) for r, v in distinct.items()}
    else:
        lane, warp = thread_ids(builder)
        moved = _across_warps(builder, x_type, distinct, lane, warp, 1 << index)
    return make_tile(context, builder, sig.return_type,
                     [moved[first.get(r, r)] for r in range(len(registers))])


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
