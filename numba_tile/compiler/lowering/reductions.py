"""Lowering of the reductions: sum, prod, max, min, argmax, argmin.

A reduction combines within a thread (registers that differ only along the reduced axes),
then across lanes with butterfly shuffles, then across warps through shared memory. The
partial results are *states*: the value, plus the element's index for argmax/argmin, so that
one combining step serves all six.
"""

import math

from numba.core import types

from ... import dtypes as d
from ...errors import TileUnsupportedFeatureError
from ...language import reductions
from ...rules.core import normalize_axes
from ...rules.reductions import ARG_REDUCTIONS, REDUCTIONS
from ..abstract import constant_of
from . import arithmetic
from .registry import registry
from .tiles import I32, barrier, load_shared, make_tile, register_coordinates, scratch_regions, \
    shuffle_xor, store_shared, thread_coordinates, thread_ids, tile_registers

lower = registry.lower


def _reduced_bits(vectors, axes):
    """Bits whose basis vector moves only along the reduced ``axes`` (they get combined)."""
    bits = []
    for bit, vector in enumerate(vectors):
        if any(vector[a] for a in axes):
            if any(c for i, c in enumerate(vector) if i not in axes):
                raise TileUnsupportedFeatureError("Reducing a layout whose basis mixes reduced "
                                                  "and kept axes is not compiled yet")
            bits.append(bit)
    return bits


class Reduction:
    """How the states of one reduction are made and combined."""

    def __init__(self, op, dtype, options):
        self.op = op
        self.dtype = dtype
        self.options = options
        self.is_arg = op in ARG_REDUCTIONS
        compute = arithmetic.compute_dtype(dtype)
        if options.rounding_mode in arithmetic.DIRECTED and dtype.is_float:
            compute = d.float64  # accumulate exactly enough to round once at the end
        if compute.is_integral and compute.bitwidth < 32 and op in ("sum", "prod"):
            compute = d.int32 if compute.is_signed else d.uint32
        if dtype.is_bool and not self.is_arg:  # (a bool tile counts in int32)
            compute = d.int32
        self.compute = compute

    def initial(self, context, builder, value, index):
        """The state of one element (``index``: its int32 index within the reduced axes)."""
        value = arithmetic.convert(context, builder, value, self.dtype, self.compute)
        if self.options.flush_to_zero and self.compute is d.float32:
            value = arithmetic._flush(builder, value, d.float32)
        if self.is_arg and self.compute.is_float and not self.options.propagate_nan:
            # NaN never wins: it counts as the worst value
            worst = -math.inf if self.op == "argmax" else math.inf
            value = builder.select(arithmetic._is_nan(builder, value), value.type(worst), value)
        return (value, index) if self.is_arg else (value,)

    def combine(self, context, builder, a, b):
        if not self.is_arg:
            op = {"sum": "add", "prod": "mul", "max": "maximum", "min": "minimum"}[self.op]
            options = arithmetic.Options(propagate_nan=self.options.propagate_nan)
            return (arithmetic.binary(context, builder, op, self.compute, self.compute,
                                      a[0], b[0], options),)
        (value_a, index_a), (value_b, index_b) = a, b
        better = "greater" if self.op == "argmax" else "less"
        b_better = arithmetic.binary(context, builder, better, self.compute, d.bool_,
                                     value_b, value_a)
        equal = arithmetic.binary(context, builder, "equal", self.compute, d.bool_, value_a,
                                  value_b)
        if self.compute.is_float and self.options.propagate_nan:  # the first NaN wins
            nan_a = arithmetic._is_nan(builder, value_a)
            nan_b = arithmetic._is_nan(builder, value_b)
            b_better = builder.or_(builder.and_(nan_b, builder.not_(nan_a)), b_better)
            equal = builder.or_(builder.and_(nan_a, nan_b), equal)
        earlier = builder.icmp_signed("<", index_b, index_a)
        take_b = builder.or_(b_better, builder.and_(equal, earlier))
        return (builder.select(take_b, value_b, value_a),
                builder.select(take_b, index_b, index_a))

    def result(self, context, builder, state, result_dtype):
        if self.is_arg:
            return state[1]
        mode = self.options.rounding_mode if self.compute is d.float64 else None
        return arithmetic.convert(context, builder, state[0], self.compute, result_dtype, mode)


def _element_indices(builder, x_type, axes):
    """Per register: the int32 row-major index of its element within the reduced axes."""
    base = thread_coordinates(builder, x_type.layout)
    indices = []
    for register in range(x_type.registers):
        coords = register_coordinates(builder, base, x_type.layout, register)
        index = I32(0)
        for axis in axes:
            index = builder.add(builder.mul(index, I32(x_type.shape[axis])), coords[axis])
        indices.append(index)
    return indices


def _lower_reduction(op):
    parameters = ("x", "axis", "keepdims") + tuple(
        name for name in ("rounding_mode", "flush_to_zero", "propagate_nan")
        if name in getattr(reductions, op).__tile_op__.__code__.co_varnames)

    def lower_reduction(context, builder, sig, args):
        x_type, result_type = sig.args[0], sig.return_type
        values = dict(zip(parameters, sig.args))
        options = arithmetic.Options(
            constant_of(values.get("rounding_mode", types.Omitted(None))),
            bool(constant_of(values.get("flush_to_zero", types.Omitted(False)))),
            bool(constant_of(values.get("propagate_nan", types.Omitted(False)))))
        layout = x_type.layout
        axes = normalize_axes(constant_of(sig.args[1]), len(x_type.shape))
        reduction = Reduction(op, x_type.dtype, options)
        indices = _element_indices(builder, x_type, axes) if reduction.is_arg else \
            [None] * x_type.registers
        states = [reduction.initial(context, builder, v, i)
                  for v, i in zip(tile_registers(builder, x_type, args[0]), indices)]
        # 1. within a thread: a tree over the register bits that move along the axes; the
        # registers with those bits clear hold the partial results (one per kept element)
        folded = 0
        partial = dict(enumerate(states))
        for bit in _reduced_bits(layout.bases["register"], axes):
            partial = {r: reduction.combine(context, builder, s, partial[r | 1 << bit])
                       for r, s in partial.items() if not r >> bit & 1}
            folded |= 1 << bit
        # 2. across lanes: butterfly shuffles over the lane bits that move along the axes
        for bit in _reduced_bits(layout.bases["lane"], axes):
            partial = {r: reduction.combine(context, builder, s, tuple(
                shuffle_xor(builder, v, 1 << bit) for v in s)) for r, s in partial.items()}
        states = [partial[r & ~folded] for r in range(x_type.registers)]
        # 3. across warps: through shared memory
        warp_bits = _reduced_bits(layout.bases["warp"], axes)
        if warp_bits:
            states = _combine_across_warps(context, builder, reduction, states, x_type,
                                           layout.collapse(axes), warp_bits)
        values = [reduction.result(context, builder, s, result_type.dtype) for s in states]
        return make_tile(context, builder, result_type, values)
    return lower_reduction


def _combine_across_warps(context, builder, reduction, states, x_type, collapsed, warp_bits):
    """Combine the partial results of warps that differ only in ``warp_bits``.

    After the in-thread and lane steps, registers with the same collapsed coordinates hold
    the same state: only one per distinct coordinate (a *key*) goes to shared memory, at
    ``[warp][lane][key]``, one array per state component.
    """
    keys = sorted({collapsed.apply(register=r) for r in range(x_type.registers)})
    key_of = [keys.index(collapsed.apply(register=r)) for r in range(x_type.registers)]
    count = len(keys) * 32 * x_type.num_warps
    component_types = [v.type for v in states[0]]
    buffers = scratch_regions(builder, [(t, count) for t in component_types])
    lane, warp = thread_ids(builder)

    def slots(warp_index, key):
        base = builder.add(builder.mul(warp_index, I32(32 * len(keys))),
                           builder.mul(lane, I32(len(keys))))
        offset = builder.add(base, I32(key))
        return [builder.gep(buffer, [offset]) for buffer in buffers]

    barrier(builder)  # the buffer may still be read by an earlier pass of a loop
    for key in range(len(keys)):
        for value, slot in zip(states[key_of.index(key)], slots(warp, key)):
            store_shared(builder, value, slot)
    barrier(builder)
    combined = [states[key_of.index(key)] for key in range(len(keys))]
    for mask in range(1, 1 << len(warp_bits)):
        other_warp = warp
        for i, bit in enumerate(warp_bits):
            if mask >> i & 1:
                other_warp = builder.xor(other_warp, I32(1 << bit))
        for key in range(len(keys)):
            other = tuple(load_shared(builder, slot, t) for slot, t in
                          zip(slots(other_warp, key), component_types))
            combined[key] = reduction.combine(context, builder, combined[key], other)
    return [combined[key_of[r]] for r in range(x_type.registers)]


for _op in REDUCTIONS:
    lower(getattr(reductions, _op), types.Any, types.VarArg(types.Any))(_lower_reduction(_op))
