"""Lowering of tile code to LLVM IR on numba-cuda's target context.

A tile is held by the thread block as its layout says: thread ``tid`` has lane ``tid % 32``
and warp ``tid // 32``, and register ``r`` of that thread holds the element at
``layout.apply(r, lane, warp)``. Coordinates are computed as the XOR of the lane and warp basis
vectors (run time, once per op) with the register's (compile time), so every register index is
a constant and fragments stay in registers.
"""

import math

from llvmlite import ir
from numba.core import cgutils, types
from numba.cuda import nvvmutils
from numba.cuda.core.imputils import Registry

from ..enums import PaddingMode
from ..language import elementwise, memory
from ..rules.memory import normalize_order
from .types import ArrayType, ConstantType, TileType

registry = Registry("numba_tile")
lower = registry.lower


@registry.lower_constant(ConstantType)
def lower_compile_time_constant(context, builder, ty, value):
    return context.get_dummy_value()

I32 = ir.IntType(32)
I64 = ir.IntType(64)


# -- thread geometry ------------------------------------------------------------------------
def thread_coordinates(builder, layout):
    """This thread's base coordinates in a tile of ``layout`` (lane and warp bits applied)."""
    tid = nvvmutils.call_sreg(builder, "tid.x")
    lane = builder.and_(tid, I32(31))
    warp = builder.lshr(tid, I32(5))
    coords = [I32(0)] * len(layout.shape)
    for value, vectors in ((lane, layout.bases["lane"]), (warp, layout.bases["warp"])):
        for bit, vector in enumerate(vectors):
            if not any(vector):
                continue
            flag = builder.and_(builder.lshr(value, I32(bit)), I32(1))
            for axis, component in enumerate(vector):
                if component:
                    coords[axis] = builder.xor(coords[axis], builder.mul(flag, I32(component)))
    return coords


def is_replica_leader(builder, layout):
    """True in the one thread of each group that holds the same elements (replicated bits 0),
    so that side effects such as stores happen once."""
    tid = nvvmutils.call_sreg(builder, "tid.x")
    mask = 0
    for bit in layout.replicated_bits("lane"):
        mask |= 1 << bit
    for bit in layout.replicated_bits("warp"):
        mask |= 1 << (bit + 5)
    if not mask:
        return cgutils.true_bit
    return builder.icmp_unsigned("==", builder.and_(tid, I32(mask)), I32(0))


def register_coordinates(builder, base, layout, register):
    constant = layout.apply(register=register)
    return [builder.xor(b, I32(c)) if c else b for b, c in zip(base, constant)]


# -- arrays -----------------------------------------------------------------------------------
class ArrayView:
    """An array argument seen through a tile-space ``order`` (tile axis k is array axis
    ``order[k]``)."""

    def __init__(self, context, builder, array_type, value, order):
        proxy = cgutils.create_struct_proxy(array_type)(context, builder, value=value)
        self.data = proxy.data
        shape = [builder.extract_value(proxy.shape, i) for i in range(array_type.ndim)]
        strides = [builder.extract_value(proxy.strides, i) for i in range(array_type.ndim)]
        self.shape = [shape[a] for a in order]
        self.strides = [strides[a] for a in order]

    def element(self, builder, indices):
        """``(pointer, in_bounds)`` of the element at tile-space ``indices`` (int32)."""
        in_bounds = cgutils.true_bit
        offset = I64(0)
        for index, length, stride in zip(indices, self.shape, self.strides):
            inside = builder.icmp_unsigned("<", index, builder.sext(length, I32)
                                           if length.type != I32 else length)
            in_bounds = builder.and_(in_bounds, inside)
            offset = builder.add(offset, builder.mul(builder.sext(index, I64),
                                                     builder.sext(stride, I64)))
        return builder.gep(self.data, [offset]), in_bounds


def _tile_indices(context, builder, index_type, index_value):
    count = len(index_type) if isinstance(index_type, types.BaseTuple) else 1
    if not isinstance(index_type, types.BaseTuple):
        return [context.cast(builder, index_value, index_type, types.int32)]
    return [context.cast(builder, builder.extract_value(index_value, i), index_type[i],
                         types.int32) for i in range(count)]


def _omitted_or_literal(numba_type):
    if isinstance(numba_type, types.Omitted):
        return numba_type.value
    if isinstance(numba_type, ConstantType):
        return numba_type.value
    if isinstance(numba_type, types.Literal):
        return numba_type.literal_value
    if isinstance(numba_type, types.BaseTuple):
        return tuple(_omitted_or_literal(t) for t in numba_type)
    raise AssertionError(f"not a constant: {numba_type}")


def _padding(context, tile_type, mode):
    element = tile_type.element
    if mode in (PaddingMode.UNDETERMINED, PaddingMode.ZERO):
        return context.get_constant(element, 0)
    value = {PaddingMode.NEG_ZERO: -0.0, PaddingMode.NAN: math.nan,
             PaddingMode.POS_INF: math.inf, PaddingMode.NEG_INF: -math.inf}[mode]
    if isinstance(element, types.Integer):
        return context.get_constant(element, 0)
    return context.get_constant(element, value)


# -- grid -------------------------------------------------------------------------------------
@lower(memory.bid, types.IntegerLiteral)
def lower_bid(context, builder, sig, args):
    return nvvmutils.call_sreg(builder, "ctaid." + "xyz"[sig.args[0].literal_value])


@lower(memory.num_blocks, types.IntegerLiteral)
def lower_num_blocks(context, builder, sig, args):
    return nvvmutils.call_sreg(builder, "nctaid." + "xyz"[sig.args[0].literal_value])


# -- memory -----------------------------------------------------------------------------------
@lower(memory.load, ArrayType, types.Any, types.Any, types.VarArg(types.Any))
def lower_load(context, builder, sig, args):
    tile_type, array_type, index_type = sig.return_type, sig.args[0], sig.args[1]
    order = normalize_order(_omitted_or_literal(sig.args[3]), array_type.ndim)
    padding = _padding(context, tile_type, _omitted_or_literal(sig.args[4]))
    view = ArrayView(context, builder, array_type, args[0], order)
    tile_index = _tile_indices(context, builder, index_type, args[1])
    layout = tile_type.layout
    base = thread_coordinates(builder, layout)
    values = []
    for register in range(tile_type.registers):
        coords = register_coordinates(builder, base, layout, register)
        indices = [builder.add(builder.mul(t, I32(n)), c)
                   for t, n, c in zip(tile_index, tile_type.shape, coords)]
        pointer, in_bounds = view.element(builder, indices)
        with builder.if_else(in_bounds) as (then, otherwise):
            with then:
                block_then = builder.block
                loaded = builder.load(pointer)
            with otherwise:
                block_otherwise = builder.block
        phi = builder.phi(loaded.type)
        phi.add_incoming(loaded, block_then)
        phi.add_incoming(padding, block_otherwise)
        values.append(context.cast(builder, phi, array_type.element, tile_type.element))
    return context.make_tuple(builder, types.UniTuple(tile_type.element, tile_type.registers),
                              values)


@lower(memory.store, ArrayType, types.Any, TileType, types.VarArg(types.Any))
def lower_store(context, builder, sig, args):
    array_type, index_type, tile_type = sig.args[0], sig.args[1], sig.args[2]
    order = normalize_order(_omitted_or_literal(sig.args[3]), array_type.ndim)
    view = ArrayView(context, builder, array_type, args[0], order)
    tile_index = _tile_indices(context, builder, index_type, args[1])
    layout = tile_type.layout
    base = thread_coordinates(builder, layout)
    leader = is_replica_leader(builder, layout)
    for register in range(tile_type.registers):
        coords = register_coordinates(builder, base, layout, register)
        indices = [builder.add(builder.mul(t, I32(n)), c)
                   for t, n, c in zip(tile_index, tile_type.shape, coords)]
        pointer, in_bounds = view.element(builder, indices)
        value = context.cast(builder, builder.extract_value(args[2], register),
                             tile_type.element, array_type.element)
        with builder.if_then(builder.and_(in_bounds, leader)):
            builder.store(value, pointer)
    return context.get_dummy_value()


# -- elementwise ------------------------------------------------------------------------------
def _scalar_op(builder, op, element, a, b):
    floating = isinstance(element, types.Float)
    signed = isinstance(element, types.Integer) and element.signed
    if op == "add":
        return builder.fadd(a, b) if floating else builder.add(a, b)
    if op == "sub":
        return builder.fsub(a, b) if floating else builder.sub(a, b)
    if op == "mul":
        return builder.fmul(a, b) if floating else builder.mul(a, b)
    if op == "truediv":
        return builder.fdiv(a, b)
    if op in ("minimum", "maximum"):
        if floating:  # NaN loses, as with the default propagate_nan=False
            better = builder.fcmp_ordered("<" if op == "minimum" else ">", a, b)
            b_is_nan = builder.fcmp_unordered("uno", b, b)
            return builder.select(b_is_nan, a, builder.select(better, a, b))
        compare = builder.icmp_signed if signed else builder.icmp_unsigned
        take_a = compare("<" if op == "minimum" else ">", a, b)
        return builder.select(take_a, a, b)
    raise AssertionError(op)


def _lower_binary(op):
    def lower_binary(context, builder, sig, args):
        from ..rules import elementwise as rules
        x_type, y_type = sig.args[0], sig.args[1]
        result_type = sig.return_type
        _, operand_dtype = rules.binary(op, x_type, y_type)
        compute = result_type.element if op == "truediv" else TileType(
            operand_dtype, result_type.shape, result_type.num_warps).element
        if compute == types.float16:  # numba-cuda stores halves as i16: compute in float32
            compute = types.float32
        values = []
        for register in range(result_type.registers):
            a = context.cast(builder, builder.extract_value(args[0], register),
                             x_type.element, compute)
            b = context.cast(builder, builder.extract_value(args[1], register),
                             y_type.element, compute)
            out = _scalar_op(builder, op, compute, a, b)
            values.append(context.cast(builder, out, compute, result_type.element))
        return context.make_tuple(builder, types.UniTuple(result_type.element,
                                                          result_type.registers), values)
    return lower_binary


def _register_binary():
    import operator
    pairs = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
             "truediv": operator.truediv, "minimum": None, "maximum": None}
    for op, python_operator in pairs.items():
        impl = _lower_binary(op)
        lower(getattr(elementwise, op), TileType, TileType)(impl)
        if python_operator is not None:
            lower(python_operator, TileType, TileType)(impl)


_register_binary()
