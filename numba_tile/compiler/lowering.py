"""Lowering of tile code to LLVM IR on numba-cuda's target context.

A tile is held by the thread block as its layout says: thread ``tid`` has lane ``tid % 32``
and warp ``tid // 32``, and register ``r`` of that thread holds the element at
``layout.apply(r, lane, warp)``. Coordinates are the XOR of the lane and warp basis vectors
(run time) with the register's (compile time), so every register index is a constant and
fragments stay in registers. Elementwise ops work register by register (broadcast operands
have a collapsed layout with the same registers); reductions combine within a thread, then
across lanes with butterfly shuffles, then across warps through shared memory.
"""

import math
import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing import signature
from numba.cuda import nvvmutils
from numba.cuda.core.imputils import Registry

from ..enums import PaddingMode
from ..errors import TileUnsupportedFeatureError
from ..language import debugging, elementwise, factories, memory, reductions, shapes
from ..rules import elementwise as elementwise_rules
from ..rules.memory import normalize_order
from .types import ArrayType, ConstantType, FloatLiteral, TileType, scalar_type
from .abstract import constant_of
from .contexts import FOLDABLE
from .typing import COMPILED_BINARY, COMPILED_REDUCTIONS, COMPILED_UNARY

registry = Registry("numba_tile")
lower = registry.lower

I32 = ir.IntType(32)
I64 = ir.IntType(64)
FULL_MASK = I32(0xFFFFFFFF)


# -- constants --------------------------------------------------------------------------------
def element_constant(context, element, value):
    """An LLVM constant of a tile element type (numba-cuda keeps halves as i16 bits)."""
    if element == types.float16:
        import numpy as np
        return ir.IntType(16)(int(np.array(value, np.float16).view(np.uint16)))
    return context.get_constant(element, value)


@registry.lower_constant(ConstantType)
def lower_compile_time_constant(context, builder, ty, value):
    return context.get_dummy_value()


@registry.lower_constant(FloatLiteral)
def lower_float_literal(context, builder, ty, value):
    return context.get_constant(types.float64, ty.literal_value)


@registry.lower_cast(FloatLiteral, types.Number)
def cast_float_literal(context, builder, fromty, toty, value):
    return context.get_constant(toty, fromty.literal_value)


@registry.lower_cast(ConstantType, types.Boolean)
def cast_constant_to_bool(context, builder, fromty, toty, value):
    return context.get_constant(toty, bool(fromty.value))


def _constant_comparison(context, builder, sig, args):
    return context.get_constant(types.boolean, sig.return_type.literal_value)


lower(operator.eq, ConstantType, ConstantType)(_constant_comparison)
lower(operator.ne, ConstantType, ConstantType)(_constant_comparison)


def _folded_constant(context, builder, sig, args):
    """An operation the typing folded: its result is a constant of the literal type."""
    result = sig.return_type
    if isinstance(result, types.Literal):
        if isinstance(result, FloatLiteral):
            return context.get_constant(types.float64, result.literal_value)
        return context.get_constant(result.literal_type, result.literal_value)
    if isinstance(result, types.BaseTuple):
        return context.make_tuple(builder, result, [
            context.get_constant(t.literal_type, t.literal_value) for t in result])
    return context.get_dummy_value()


_CONSTANT_KINDS = (types.IntegerLiteral, types.BooleanLiteral, FloatLiteral, ConstantType)
_UNARY_FOLDS = (operator.neg, operator.not_, operator.invert)
for _fold_op in FOLDABLE:
    for _a in _CONSTANT_KINDS:
        if _fold_op in _UNARY_FOLDS:
            lower(_fold_op, _a)(_folded_constant)
            continue
        for _b in _CONSTANT_KINDS:
            if not (_a is ConstantType and _b is ConstantType):
                lower(_fold_op, _a, _b)(_folded_constant)


# -- thread geometry ------------------------------------------------------------------------
def thread_ids(builder):
    tid = nvvmutils.call_sreg(builder, "tid.x")
    return builder.and_(tid, I32(31)), builder.lshr(tid, I32(5))


def thread_coordinates(builder, layout):
    """This thread's base coordinates in a tile of ``layout`` (lane and warp bits applied)."""
    lane, warp = thread_ids(builder)
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


def make_tile(context, builder, tile_type, values):
    return context.make_tuple(builder, types.UniTuple(tile_type.element, tile_type.registers),
                              values)


def tile_registers(builder, tile_type, value):
    return [builder.extract_value(value, r) for r in range(tile_type.registers)]


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
            length = builder.trunc(length, I32) if length.type.width > 32 else length
            in_bounds = builder.and_(in_bounds, builder.icmp_unsigned("<", index, length))
            offset = builder.add(offset, builder.mul(builder.sext(index, I64),
                                                     builder.sext(stride, I64)))
        return builder.gep(self.data, [offset]), in_bounds


def _tile_indices(context, builder, index_type, index_value):
    if not isinstance(index_type, types.BaseTuple):
        return [context.cast(builder, index_value, index_type, types.int32)]
    return [context.cast(builder, builder.extract_value(index_value, i), index_type[i],
                         types.int32) for i in range(len(index_type))]


def _padding(context, tile_type, mode):
    element = tile_type.element
    if mode in (PaddingMode.UNDETERMINED, PaddingMode.ZERO) or isinstance(element,
                                                                        types.Integer):
        return element_constant(context, element, 0)
    value = {PaddingMode.NEG_ZERO: -0.0, PaddingMode.NAN: math.nan,
             PaddingMode.POS_INF: math.inf, PaddingMode.NEG_INF: -math.inf}[mode]
    return element_constant(context, element, value)


# -- grid -------------------------------------------------------------------------------------
@lower(memory.bid, types.IntegerLiteral)
def lower_bid(context, builder, sig, args):
    return nvvmutils.call_sreg(builder, "ctaid." + "xyz"[sig.args[0].literal_value])


@lower(memory.num_blocks, types.IntegerLiteral)
def lower_num_blocks(context, builder, sig, args):
    return nvvmutils.call_sreg(builder, "nctaid." + "xyz"[sig.args[0].literal_value])


# -- memory -----------------------------------------------------------------------------------
def vector_groups(layout, element_bytes):
    """Groups of registers holding consecutive elements along the last axis, as many as fit
    16 bytes: ``[(first register, count), ...]`` covering every register. The blocked layout
    gives each thread such runs, so loads and stores can be 8- or 16-byte vectors."""
    run_bits = 0
    rank = len(layout.shape)
    for vector in layout.bases["register"]:
        if rank and vector == tuple(0 for _ in range(rank - 1)) + (1 << run_bits,):
            run_bits += 1
        else:
            break
    width = 1 << run_bits
    while width > 1 and width * element_bytes > 16:
        width //= 2
    registers = layout.in_sizes["register"]
    return [(first, width) for first in range(0, registers, width)]


def from_memory(context, builder, array_type, raw):
    """An element as stored in an array (bools are bytes) to its value (bools are i1)."""
    if array_type.element == types.boolean:
        return builder.icmp_unsigned("!=", raw, raw.type(0))
    return raw


def to_memory(context, builder, array_type, value):
    if array_type.element == types.boolean:
        return builder.zext(value, ir.IntType(8))
    return value


def _element_indices(builder, tile_index, tile_type, coords):
    return [builder.add(builder.mul(t, I32(n)), c)
            for t, n, c in zip(tile_index, tile_type.shape, coords)]


def _vector_ok(builder, view, indices, width, element_bytes):
    """The run of ``width`` elements at ``indices`` is inside the array, contiguous and
    aligned to its size: then one vector access moves it."""
    last = list(indices)
    last[-1] = builder.add(indices[-1], I32(width - 1))
    pointer, first_inside = view.element(builder, indices)
    _, last_inside = view.element(builder, last)
    stride = view.strides[-1]
    contiguous = builder.icmp_signed("==", stride, stride.type(1))
    address = builder.ptrtoint(pointer, I64)
    aligned = builder.icmp_unsigned("==", builder.and_(address, I64(width * element_bytes - 1)),
                                    I64(0))
    ok = builder.and_(builder.and_(first_inside, last_inside), builder.and_(contiguous, aligned))
    return pointer, ok


def _access_type(element_type, width, element_bytes):
    """The LLVM type one vector access moves: 32-bit words for narrow elements (so that
    NVVM emits one 8- or 16-byte access instead of several narrow ones)."""
    if element_bytes < 4 and width * element_bytes >= 4:
        return ir.VectorType(I32, width * element_bytes // 4)
    return ir.VectorType(element_type, width)


def vector_load(builder, pointer, width, element_bytes):
    access = _access_type(pointer.type.pointee, width, element_bytes)
    raw = builder.load(builder.bitcast(pointer, access.as_pointer(pointer.type.addrspace)),
                       align=width * element_bytes)
    return builder.bitcast(raw, ir.VectorType(pointer.type.pointee, width))


def vector_store(builder, vector, pointer, width, element_bytes):
    access = _access_type(pointer.type.pointee, width, element_bytes)
    builder.store(builder.bitcast(vector, access),
                  builder.bitcast(pointer, access.as_pointer(pointer.type.addrspace)),
                  align=width * element_bytes)


@lower(memory.load, ArrayType, types.Any, types.Any, types.VarArg(types.Any))
def lower_load(context, builder, sig, args):
    tile_type, array_type, index_type = sig.return_type, sig.args[0], sig.args[1]
    order = normalize_order(constant_of(sig.args[3]), array_type.ndim)
    padding = _padding(context, tile_type, constant_of(sig.args[4]))
    view = ArrayView(context, builder, array_type, args[0], order)
    tile_index = _tile_indices(context, builder, index_type, args[1])
    layout = tile_type.layout
    base = thread_coordinates(builder, layout)
    element_bytes = array_type.dtype.itemsize
    values = []

    def scalar_loads(first, width):
        out = []
        for register in range(first, first + width):
            indices = _element_indices(builder, tile_index, tile_type,
                                       register_coordinates(builder, base, layout, register))
            pointer, in_bounds = view.element(builder, indices)
            with builder.if_else(in_bounds) as (then, otherwise):
                with then:
                    block_then = builder.block
                    loaded = context.cast(builder, from_memory(context, builder, array_type,
                                                               builder.load(pointer)),
                                          array_type.element, tile_type.element)
                with otherwise:
                    block_otherwise = builder.block
            phi = builder.phi(loaded.type)
            phi.add_incoming(loaded, block_then)
            phi.add_incoming(padding, block_otherwise)
            out.append(phi)
        return out

    for first, width in vector_groups(layout, element_bytes):
        if width == 1:
            values.extend(scalar_loads(first, 1))
            continue
        indices = _element_indices(builder, tile_index, tile_type,
                                   register_coordinates(builder, base, layout, first))
        pointer, ok = _vector_ok(builder, view, indices, width, element_bytes)
        with builder.if_else(ok) as (vector_path, scalar_path):
            with vector_path:
                vector = vector_load(builder, pointer, width, element_bytes)
                fast = [context.cast(builder, from_memory(
                    context, builder, array_type, builder.extract_element(vector, I32(i))),
                    array_type.element, tile_type.element) for i in range(width)]
                fast_block = builder.block
            with scalar_path:
                slow = scalar_loads(first, width)
                slow_block = builder.block
        for a, b in zip(fast, slow):
            phi = builder.phi(a.type)
            phi.add_incoming(a, fast_block)
            phi.add_incoming(b, slow_block)
            values.append(phi)
    return make_tile(context, builder, tile_type, values)


@lower(memory.store, ArrayType, types.Any, TileType, types.VarArg(types.Any))
def lower_store(context, builder, sig, args):
    array_type, index_type, tile_type = sig.args[0], sig.args[1], sig.args[2]
    order = normalize_order(constant_of(sig.args[3]), array_type.ndim)
    view = ArrayView(context, builder, array_type, args[0], order)
    tile_index = _tile_indices(context, builder, index_type, args[1])
    layout = tile_type.layout
    base = thread_coordinates(builder, layout)
    leader = is_replica_leader(builder, layout)
    element_bytes = array_type.dtype.itemsize
    converted = [to_memory(context, builder, array_type, context.cast(
        builder, builder.extract_value(args[2], r), tile_type.element, array_type.element))
        for r in range(tile_type.registers)]
    seen = set()

    def scalar_stores(first, width):
        for register in range(first, first + width):
            indices = _element_indices(builder, tile_index, tile_type,
                                       register_coordinates(builder, base, layout, register))
            pointer, in_bounds = view.element(builder, indices)
            with builder.if_then(builder.and_(in_bounds, leader)):
                builder.store(converted[register], pointer)

    for first, width in vector_groups(layout, element_bytes):
        constant = layout.apply(register=first)
        if constant in seen:  # registers that repeat others (collapsed layouts)
            continue
        seen.add(constant)
        if width == 1:
            scalar_stores(first, 1)
            continue
        indices = _element_indices(builder, tile_index, tile_type,
                                   register_coordinates(builder, base, layout, first))
        pointer, ok = _vector_ok(builder, view, indices, width, element_bytes)
        with builder.if_then(leader):
            with builder.if_else(ok) as (vector_path, scalar_path):
                with vector_path:
                    vector = ir.Constant(ir.VectorType(converted[first].type, width), None)
                    for i in range(width):
                        vector = builder.insert_element(vector, converted[first + i], I32(i))
                    vector_store(builder, vector, pointer, width, element_bytes)
                with scalar_path:
                    scalar_stores(first, width)
    return context.get_dummy_value()


# -- elementwise ------------------------------------------------------------------------------
def compute_type(element):
    """The Numba type arithmetic on ``element`` is done in: halves go through float32
    (numba-cuda stores them as i16), small integers stay as they are."""
    return types.float32 if element == types.float16 else element


def operand_registers(context, builder, numba_type, value, result_type, target):
    """Per-register values of an operand converted to ``target``, broadcast to the result
    (through shared memory when its layout does not line up with the result's)."""
    if isinstance(numba_type, TileType):
        from .typing import broadcasts_in_registers
        if not broadcasts_in_registers(numba_type, result_type):
            moved_type = TileType(numba_type.dtype, result_type.shape, result_type.num_warps,
                                  result_type.layout)
            value = relayout(context, builder, numba_type, value, moved_type,
                             _broadcast_source(numba_type.shape, result_type.shape))
            numba_type = moved_type
        return [context.cast(builder, builder.extract_value(value, r), numba_type.element,
                             target) for r in range(result_type.registers)]
    scalar = context.cast(builder, value, numba_type, target)
    return [scalar] * result_type.registers


def _float_binary(builder, op, a, b):
    if op == "add":
        return builder.fadd(a, b)
    if op == "sub":
        return builder.fsub(a, b)
    if op == "mul":
        return builder.fmul(a, b)
    if op == "truediv":
        return builder.fdiv(a, b)
    if op in ("minimum", "maximum"):  # NaN loses, as with the default propagate_nan=False
        better = builder.fcmp_ordered("<" if op == "minimum" else ">", a, b)
        b_is_nan = builder.fcmp_unordered("uno", b, b)
        return builder.select(b_is_nan, a, builder.select(better, a, b))
    symbol = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<=",
              "equal": "==", "not_equal": "!="}[op]
    if op == "not_equal":
        return builder.fcmp_unordered(symbol, a, b)
    return builder.fcmp_ordered(symbol, a, b)


def _int_binary(builder, op, a, b, signed):
    if op == "add":
        return builder.add(a, b)
    if op == "sub":
        return builder.sub(a, b)
    if op == "mul":
        return builder.mul(a, b)
    compare = builder.icmp_signed if signed else builder.icmp_unsigned
    if op in ("minimum", "maximum"):
        return builder.select(compare("<" if op == "minimum" else ">", a, b), a, b)
    symbol = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<=",
              "equal": "==", "not_equal": "!="}[op]
    return compare(symbol, a, b)


def _lower_binary(op):
    def lower_binary(context, builder, sig, args):
        x_type, y_type = sig.args[0], sig.args[1]
        result_type = sig.return_type
        from .abstract import operand
        _, operand_dtype = elementwise_rules.binary(op, operand(x_type), operand(y_type))
        if op == "truediv":
            compute = compute_type(result_type.element)
        else:
            compute = compute_type(scalar_type(operand_dtype))
        xs = operand_registers(context, builder, x_type, args[0], result_type, compute)
        ys = operand_registers(context, builder, y_type, args[1], result_type, compute)
        values = []
        for a, b in zip(xs, ys):
            if isinstance(compute, types.Float):
                out = _float_binary(builder, op, a, b)
            else:
                out = _int_binary(builder, op, a, b, getattr(compute, "signed", False))
            out_type = types.boolean if op in elementwise_rules.COMPARISONS else compute
            values.append(context.cast(builder, out, out_type, result_type.element))
        return make_tile(context, builder, result_type, values)
    return lower_binary


for _op, _operator in COMPILED_BINARY.items():
    _impl = _lower_binary(_op)
    lower(getattr(elementwise, _op), types.Any, types.Any, types.VarArg(types.Any))(_impl)
    if _operator is not None:
        lower(_operator, TileType, types.Any)(_impl)
        lower(_operator, types.Number, TileType)(_impl)
        lower(_operator, types.Boolean, TileType)(_impl)
        lower(_operator, FloatLiteral, TileType)(_impl)


_MATH = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "sin": math.sin,
         "cos": math.cos, "tanh": math.tanh, "floor": math.floor, "ceil": math.ceil,
         "log2": math.log2}


def _unary_value(context, builder, op, compute, value):
    if op == "negative":  # NVVM's LLVM predates `fneg`: subtract from -0.0 instead
        if isinstance(compute, types.Float):
            return builder.fsub(context.get_constant(compute, -0.0), value)
        return builder.neg(value)
    if op == "abs":
        if isinstance(compute, types.Float):  # libdevice's fabs (NVVM lacks llvm.fabs here)
            return context.get_function(math.fabs, signature(compute, compute))(builder,
                                                                                 [value])
        if not compute.signed:
            return value
        return builder.select(builder.icmp_signed("<", value, value.type(0)),
                              builder.neg(value), value)
    if op == "rsqrt":
        root = _unary_value(context, builder, "sqrt", compute, value)
        return builder.fdiv(context.get_constant(compute, 1.0), root)
    if op == "exp2":  # 2 ** x = e ** (x ln 2)
        scaled = builder.fmul(value, context.get_constant(compute, math.log(2.0)))
        return _unary_value(context, builder, "exp", compute, scaled)
    impl = context.get_function(_MATH[op], signature(compute, compute))
    return impl(builder, [value])


def _lower_unary(op):
    def lower_unary(context, builder, sig, args):
        x_type, result_type = sig.args[0], sig.return_type
        compute = compute_type(x_type.element)
        values = []
        for value in operand_registers(context, builder, x_type, args[0], result_type, compute):
            out = _unary_value(context, builder, op, compute, value)
            values.append(context.cast(builder, out, compute, result_type.element))
        return make_tile(context, builder, result_type, values)
    return lower_unary


for _op in COMPILED_UNARY:
    lower(getattr(elementwise, _op), TileType, types.VarArg(types.Any))(_lower_unary(_op))
lower(operator.neg, TileType)(_lower_unary("negative"))


@lower(elementwise.where, types.Any, types.Any, types.Any)
def lower_where(context, builder, sig, args):
    result_type = sig.return_type
    compute = result_type.element
    conditions = operand_registers(context, builder, sig.args[0], args[0], result_type,
                                   types.boolean)
    xs = operand_registers(context, builder, sig.args[1], args[1], result_type, compute)
    ys = operand_registers(context, builder, sig.args[2], args[2], result_type, compute)
    values = [builder.select(c, x, y) for c, x, y in zip(conditions, xs, ys)]
    return make_tile(context, builder, result_type, values)


def _lower_astype(context, builder, sig, args):
    x_type, result_type = sig.args[0], sig.return_type
    values = [context.cast(builder, v, x_type.element, result_type.element)
              for v in tile_registers(builder, x_type, args[0])]
    return make_tile(context, builder, result_type, values)


lower(elementwise.astype, TileType, types.Any, types.VarArg(types.Any))(_lower_astype)
lower("tile.astype", TileType, types.Any)(_lower_astype)


# -- layout conversions -----------------------------------------------------------------------
SHARED_LIMIT = 48 * 1024  # static shared memory a kernel may use without opting in


def _linear(builder, coords, shape):
    """Row-major linear offset (int32) of run-time coordinates in ``shape``."""
    offset = I32(0)
    for c, n in zip(coords, shape):
        offset = builder.add(builder.mul(offset, I32(n)), c)
    return offset


def _broadcast_source(src_shape, dst_shape):
    """Source coordinates of a destination element when broadcasting ``src_shape``."""
    lead = len(dst_shape) - len(src_shape)

    def source(builder, coords):
        return [I32(0) if n == 1 else c for c, n in zip(coords[lead:], src_shape)]
    return source


def relayout(context, builder, src_type, value, dst_type, source_of):
    """Move a tile to another layout (and shape) through shared memory.

    Every thread writes its distinct registers at their row-major place in a buffer of the
    source tile; after a barrier, each thread reads the elements its destination registers
    hold: ``source_of(builder, dst_coords)`` gives the source coordinates to read.
    """
    element = context.get_value_type(src_type.element)
    size = 1
    for n in src_type.shape:
        size *= n
    buffer = scratch(builder, element, size)
    _barrier(builder)  # an earlier use of the buffer (in a loop) must be finished
    src_base = thread_coordinates(builder, src_type.layout)
    seen = set()
    for register in range(src_type.registers):
        constant = src_type.layout.apply(register=register)
        if constant in seen:
            continue
        seen.add(constant)
        coords = register_coordinates(builder, src_base, src_type.layout, register)
        slot = builder.gep(buffer, [_linear(builder, coords, src_type.shape)])
        builder.store(builder.extract_value(value, register), slot)
    _barrier(builder)
    dst_base = thread_coordinates(builder, dst_type.layout)
    values = []
    for register in range(dst_type.registers):
        coords = register_coordinates(builder, dst_base, dst_type.layout, register)
        slot = builder.gep(buffer, [_linear(builder, source_of(builder, coords),
                                            src_type.shape)])
        values.append(builder.load(slot))
    return make_tile(context, builder, dst_type, values)


def _lower_reshape(context, builder, sig, args):
    src, dst = sig.args[0], sig.return_type

    def source(builder, coords):  # the same row-major position in the source shape
        offset = _linear(builder, coords, dst.shape)
        out = []
        for n in reversed(src.shape):
            out.append(builder.urem(offset, I32(n)))
            offset = builder.udiv(offset, I32(n))
        return list(reversed(out))
    return relayout(context, builder, src, args[0], dst, source)


def _permutation_lowering(axes_of):
    def lower_permutation(context, builder, sig, args):
        src, dst = sig.args[0], sig.return_type
        axes = axes_of(sig)

        def source(builder, coords):  # result axis i is source axis axes[i]
            out = [None] * len(coords)
            for i, a in enumerate(axes):
                out[a] = coords[i]
            return out
        return relayout(context, builder, src, args[0], dst, source)
    return lower_permutation


def _permute_axes(sig):
    from ..rules.shapes import permute_axes
    return permute_axes(constant_of(sig.args[1]), len(sig.args[0].shape))


def _transpose_axes(sig):
    from ..rules.shapes import transpose_axes
    extra = [constant_of(t) for t in sig.args[1:3]] + [None] * (3 - len(sig.args))
    return transpose_axes(len(sig.args[0].shape), extra[0], extra[1])


def _lower_broadcast_to(context, builder, sig, args):
    src, dst = sig.args[0], sig.return_type
    return relayout(context, builder, src, args[0], dst, _broadcast_source(src.shape, dst.shape))


def _same_value(context, builder, sig, args):
    return args[0]


def _nothing(context, builder, sig, args):
    return context.get_dummy_value()


lower(debugging.static_assert, types.VarArg(types.Any))(_nothing)
lower(debugging.ensure_constant, types.Any)(_same_value)
lower(debugging.static_eval, types.Any)(_same_value)


lower(shapes.reshape, TileType, types.Any)(_lower_reshape)
lower("tile.reshape", TileType, types.Any)(_lower_reshape)
lower(shapes.permute, TileType, types.Any)(_permutation_lowering(_permute_axes))
lower("tile.permute", TileType, types.Any)(_permutation_lowering(_permute_axes))
lower(shapes.transpose, TileType, types.VarArg(types.Any))(
    _permutation_lowering(_transpose_axes))
lower("tile.transpose", TileType, types.VarArg(types.Any))(
    _permutation_lowering(_transpose_axes))
lower(shapes.broadcast_to, TileType, types.Any)(_lower_broadcast_to)
lower(shapes.expand_dims, TileType, types.Any)(_same_value)
lower(operator.getitem, TileType, types.Any)(_same_value)


# -- reductions -------------------------------------------------------------------------------
def _combine(context, builder, op, compute, a, b):
    if op == "sum":
        return builder.fadd(a, b) if isinstance(compute, types.Float) else builder.add(a, b)
    if op == "prod":
        return builder.fmul(a, b) if isinstance(compute, types.Float) else builder.mul(a, b)
    name = "maximum" if op == "max" else "minimum"
    if isinstance(compute, types.Float):
        return _float_binary(builder, name, a, b)
    return _int_binary(builder, name, a, b, compute.signed)


def _shuffle_xor(builder, value, lane_mask):
    """``shfl.sync.bfly`` of a 32- or 64-bit value."""
    width = value.type.width if isinstance(value.type, ir.IntType) else (
        64 if isinstance(value.type, ir.DoubleType) else 32)
    as_int = builder.bitcast(value, ir.IntType(width)) if not isinstance(
        value.type, ir.IntType) else value
    fn = builder.module.declare_intrinsic(
        "llvm.nvvm.shfl.sync.bfly.i32", fnty=ir.FunctionType(I32, [I32, I32, I32, I32]))
    if width == 32:
        moved = builder.call(fn, [FULL_MASK, as_int, I32(lane_mask), I32(0x1F)])
    else:
        low = builder.trunc(as_int, I32)
        high = builder.trunc(builder.lshr(as_int, ir.IntType(64)(32)), I32)
        low = builder.call(fn, [FULL_MASK, low, I32(lane_mask), I32(0x1F)])
        high = builder.call(fn, [FULL_MASK, high, I32(lane_mask), I32(0x1F)])
        moved = builder.or_(builder.zext(low, ir.IntType(64)),
                            builder.shl(builder.zext(high, ir.IntType(64)), ir.IntType(64)(32)))
    return builder.bitcast(moved, value.type) if not isinstance(value.type, ir.IntType) \
        else moved


# Bytes of shared scratch the kernel being compiled needs (reset per compilation).
SCRATCH = {"bytes": 0}
SCRATCH_NAME = "numba_tile_scratch"


def scratch(builder, element_type, count):
    """The kernel's shared-memory scratch buffer, as a pointer to ``count`` elements.

    One dynamic shared-memory array serves every conversion and reduction of a kernel: each
    use starts with a barrier and finishes its reads before the next barrier, so they can all
    start at offset 0. The launch asks for the largest size any use needs.
    """
    nbytes = count * (element_type.width // 8 if isinstance(element_type, ir.IntType) else
                      (8 if isinstance(element_type, ir.DoubleType) else 4))
    if nbytes > SHARED_LIMIT:
        raise TileUnsupportedFeatureError(
            f"This op needs {nbytes} bytes of shared memory; more than 48 KB is not compiled "
            f"yet")
    SCRATCH["bytes"] = max(SCRATCH["bytes"], nbytes)
    module = builder.module
    try:
        variable = module.get_global(SCRATCH_NAME)
    except KeyError:
        variable = ir.GlobalVariable(module, ir.ArrayType(ir.IntType(8), 0), SCRATCH_NAME,
                                     addrspace=3)
        variable.linkage = "external"
        variable.align = 16
    return builder.bitcast(variable, element_type.as_pointer(3))


def _barrier(builder):
    fn = builder.module.declare_intrinsic("llvm.nvvm.barrier0", fnty=ir.FunctionType(
        ir.VoidType(), []))
    builder.call(fn, [])


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


def _lower_reduction(op):
    def lower_reduction(context, builder, sig, args):
        x_type, result_type = sig.args[0], sig.return_type
        layout = x_type.layout
        from ..rules.core import normalize_axes
        axes = normalize_axes(constant_of(sig.args[1]), len(x_type.shape))
        compute = compute_type(x_type.element)
        if isinstance(compute, types.Integer) and compute.bitwidth < 32:
            compute = types.int32 if compute.signed else types.uint32
        values = [context.cast(builder, v, x_type.element, compute)
                  for v in tile_registers(builder, x_type, args[0])]
        # 1. within a thread: registers that differ only along the reduced axes
        for bit in _reduced_bits(layout.bases["register"], axes):
            values = [_combine(context, builder, op, compute, v, values[r ^ (1 << bit)])
                      for r, v in enumerate(values)]
        # 2. across lanes: butterfly shuffles over the lane bits that move along the axes
        for bit in _reduced_bits(layout.bases["lane"], axes):
            values = [_combine(context, builder, op, compute, v,
                               _shuffle_xor(builder, v, 1 << bit)) for v in values]
        # 3. across warps: through shared memory
        warp_bits = _reduced_bits(layout.bases["warp"], axes)
        if warp_bits:
            values = _combine_across_warps(context, builder, op, compute, values, x_type,
                                           layout.collapse(axes), warp_bits)
        values = [context.cast(builder, v, compute, result_type.element) for v in values]
        return make_tile(context, builder, result_type, values)
    return lower_reduction


def _combine_across_warps(context, builder, op, compute, values, x_type, collapsed,
                          warp_bits):
    """Combine the partial results of warps that differ only in ``warp_bits``.

    After the in-thread and lane steps, registers with the same collapsed coordinates hold
    the same value: only one per distinct coordinate (a *key*) goes to shared memory, at
    ``[warp][lane][key]``.
    """
    keys = sorted({collapsed.apply(register=r) for r in range(x_type.registers)})
    key_of = [keys.index(collapsed.apply(register=r)) for r in range(x_type.registers)]
    warps = x_type.num_warps
    llvm_type = context.get_value_type(compute)
    buffer = scratch(builder, llvm_type, len(keys) * 32 * warps)
    lane, warp = thread_ids(builder)

    def slot(warp_index, key):
        base = builder.add(builder.mul(warp_index, I32(32 * len(keys))),
                           builder.mul(lane, I32(len(keys))))
        return builder.gep(buffer, [builder.add(base, I32(key))])

    _barrier(builder)  # the buffer may still be read by an earlier pass of a loop
    for key in range(len(keys)):
        builder.store(values[key_of.index(key)], slot(warp, key))
    _barrier(builder)
    combined = [values[key_of.index(key)] for key in range(len(keys))]
    for mask in range(1, 1 << len(warp_bits)):
        other_warp = warp
        for i, bit in enumerate(warp_bits):
            if mask >> i & 1:
                other_warp = builder.xor(other_warp, I32(1 << bit))
        for key in range(len(keys)):
            combined[key] = _combine(context, builder, op, compute, combined[key],
                                     builder.load(slot(other_warp, key)))
    return [combined[key_of[r]] for r in range(x_type.registers)]


for _op in COMPILED_REDUCTIONS:
    lower(getattr(reductions, _op), TileType, types.VarArg(types.Any))(_lower_reduction(_op))


# -- factories ------------------------------------------------------------------------------
@lower(factories.full, types.Any, types.Any, types.Any)
def lower_full(context, builder, sig, args):
    tile_type = sig.return_type
    value = context.cast(builder, args[1], sig.args[1], tile_type.element)
    return make_tile(context, builder, tile_type, [value] * tile_type.registers)


def _lower_constant_fill(fill):
    def lower_fill(context, builder, sig, args):
        tile_type = sig.return_type
        value = element_constant(context, tile_type.element, fill)
        return make_tile(context, builder, tile_type, [value] * tile_type.registers)
    return lower_fill


lower(factories.zeros, types.Any, types.Any)(_lower_constant_fill(0))
lower(factories.ones, types.Any, types.Any)(_lower_constant_fill(1))


# -- attributes -------------------------------------------------------------------------------
def _constant_attribute(context, builder, typ, value, attr):
    result_type = context.typing_context.resolve_getattr(typ, attr)
    if isinstance(result_type, types.Literal):
        return context.get_constant(result_type.literal_type, result_type.literal_value)
    if isinstance(result_type, types.BaseTuple):
        return context.make_tuple(builder, result_type, [
            context.get_constant(t.literal_type, t.literal_value) for t in result_type])
    return context.get_dummy_value()


for _attr in ("dtype", "ndim", "shape"):
    registry.lower_getattr(TileType, _attr)(
        lambda context, builder, typ, value, attr=_attr: _constant_attribute(
            context, builder, typ, value, attr))
for _attr in ("dtype", "ndim"):
    registry.lower_getattr(ArrayType, _attr)(
        lambda context, builder, typ, value, attr=_attr: _constant_attribute(
            context, builder, typ, value, attr))


@registry.lower_getattr(ArrayType, "shape")
def array_shape(context, builder, typ, value):
    return cgutils.create_struct_proxy(typ)(context, builder, value=value).shape


@registry.lower_getattr(ArrayType, "strides")
def array_strides(context, builder, typ, value):
    return cgutils.create_struct_proxy(typ)(context, builder, value=value).strides


@registry.lower_getattr_generic(ConstantType)
def constant_attribute(context, builder, typ, value, attr):
    return _constant_attribute(context, builder, typ, value, attr)
