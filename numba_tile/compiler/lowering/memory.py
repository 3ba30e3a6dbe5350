"""Lowering of the grid queries, of ``load`` from arrays to tiles, and the array accesses
that ``store`` (:mod:`.stores`) shares with it.

Each thread moves the elements its registers hold. Runs of registers that are consecutive in
the array's last axis move as one 8- or 16-byte vector when the run is inside the array,
contiguous and aligned (checked at run time, with a scalar fallback), so that the common case
of contiguous, aligned arrays runs at full memory bandwidth. Elements outside the array read
as the padding value and are not written.
"""

import math

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing import signature
from numba.cuda import nvvmutils

from ...enums import PaddingMode
from ...language import memory, elementwise
from ...rules.core import normalize_axis
from ...rules.memory import SLICE_BOUNDS, normalize_order
from ..abstract import constant_of
from ..types import ArrayType, TiledViewType, TileType
from . import arithmetic
from .checks import check_uniform
from .constants import folded_constant
from .predicated_stores import store_where
from .registry import registry
from .tiles import I32, I64, make_tile, register_coordinates, thread_coordinates

lower = registry.lower


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
        # specialized at launch (types.is_aligned), seen in the array's own axis order
        self.aligned = array_type.aligned and tuple(order) == tuple(range(array_type.ndim))
        # element coordinates have the width of the array's shape: int32 unless the array is
        # int64-indexed (ct.IndexedWithInt64), as every extent then fits
        self.coordinate = self.shape[0].type if self.shape else I32

    def element(self, builder, indices):
        """``(pointer, in_bounds)`` of the element at tile-space ``indices`` (coordinates of
        :attr:`coordinate` type; negative ones compare as huge, so out of bounds)."""
        in_bounds = cgutils.true_bit
        offset = I64(0)
        for index, length, stride in zip(indices, self.shape, self.strides):
            in_bounds = builder.and_(in_bounds, builder.icmp_unsigned("<", index, length))
            offset = builder.add(offset, builder.mul(widened(builder, index),
                                                     widened(builder, stride)))
        return builder.gep(self.data, [offset]), in_bounds


def widened(builder, value):
    """An integer value as int64 (sign-extended)."""
    return value if value.type.width == 64 else builder.sext(value, I64)


def shifted(builder, coordinate, delta):
    """``coordinate + delta`` for an int32 ``delta`` (a thread's place within the tile)."""
    if coordinate.type.width > delta.type.width:
        delta = builder.sext(delta, coordinate.type)
    return builder.add(coordinate, delta)


def tile_origin(builder, view, tile_index, steps, extents):
    """Element coordinates of a tile's first element: the tile index (int64 values) times
    the step of each axis (the tile shape, or a tiled view's traversal steps). The product is
    taken in 64 bits and saturated to ``[-extent, length]``, where the whole tile lies
    outside the array, so no index wraps around into it; then it fits the view's coordinate
    type, and the tile's elements ``origin + c`` (``0 <= c < extent``) are in bounds exactly
    where the unsaturated ones were."""
    origin = []
    for index, step, extent, length in zip(tile_index, steps, extents, view.shape):
        limit = (1 << 62) // max(step, 1)  # no overflow in the product
        first = builder.mul(_clamped(builder, index, I64(-limit), I64(limit)), I64(step))
        first = _clamped(builder, first, I64(-extent), widened(builder, length))
        origin.append(first if view.coordinate.width == 64 else
                      builder.trunc(first, view.coordinate))
    return origin


def _clamped(builder, value, low, high):
    value = builder.select(builder.icmp_signed("<", value, low), low, value)
    return builder.select(builder.icmp_signed(">", value, high), high, value)


def tile_indices(context, builder, index_type, index_value, to=types.int64):
    """The entries of a tile index (an int or a tuple of ints) as values of type ``to``."""
    if not isinstance(index_type, types.BaseTuple):
        return [context.cast(builder, index_value, index_type, to)]
    return [context.cast(builder, builder.extract_value(index_value, i), index_type[i], to)
            for i in range(len(index_type))]


def padding_constant(context, dtype, mode):
    """The value a load gives elements outside the array under padding ``mode``."""
    if mode in (PaddingMode.UNDETERMINED, PaddingMode.ZERO) or not dtype.is_float:
        return arithmetic.constant(dtype, 0)
    value = {PaddingMode.NEG_ZERO: -0.0, PaddingMode.NAN: math.nan,
             PaddingMode.POS_INF: math.inf, PaddingMode.NEG_INF: -math.inf}[mode]
    return arithmetic.constant(dtype, value)


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


def element_indices(builder, origin, coords):
    return [shifted(builder, o, c) for o, c in zip(origin, coords)]


def _vector_ok(builder, view, indices, width, element_bytes):
    """The run of ``width`` elements at ``indices`` is inside the array, contiguous and
    aligned to its size: then one vector access moves it."""
    last = list(indices)
    last[-1] = shifted(builder, indices[-1], I32(width - 1))
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
    """``width`` elements from one aligned vector access, as an LLVM vector."""
    return vector_elements(builder, vector_words_load(builder, pointer, width, element_bytes),
                           pointer.type.pointee, width)


def vector_words_load(builder, pointer, width, element_bytes):
    """One aligned vector access of ``width`` elements, as the words it moves
    (:func:`vector_elements` splits them): code that branches between loads splits after
    the branches join, so that no load waits for the one before it to arrive."""
    access = _access_type(pointer.type.pointee, width, element_bytes)
    return builder.load(builder.bitcast(pointer, access.as_pointer(pointer.type.addrspace)),
                        align=width * element_bytes)


def vector_elements(builder, words, element_type, width):
    """The ``width`` elements of ``element_type`` that ``words`` (of
    :func:`vector_words_load`) hold, as an LLVM vector."""
    return _split_words(builder, words, element_type, width)


def vector_words(builder, elements, element_bytes):
    """``elements`` (LLVM values as stored in memory) packed as the words
    :func:`vector_words_load` gives for them."""
    vector = ir.Constant(ir.VectorType(elements[0].type, len(elements)), ir.Undefined)
    for k, element in enumerate(elements):
        vector = builder.insert_element(vector, element, I32(k))
    return _join_words(builder, vector, _access_type(elements[0].type, len(elements),
                                                     element_bytes))


def vector_store(builder, vector, pointer, width, element_bytes, where=None):
    """Store ``vector`` (``width`` elements) at ``pointer``; only where the ``i1`` ``where``
    holds, if given (one predicated instruction: :mod:`.predicated_stores`)."""
    access = _access_type(pointer.type.pointee, width, element_bytes)
    words = _join_words(builder, vector, access)
    target = builder.bitcast(pointer, access.as_pointer(pointer.type.addrspace))
    if where is None:
        builder.store(words, target, align=width * element_bytes)
    else:
        store_where(builder, words, target, where, width * element_bytes)


# Narrow elements travel as 32-bit words and are split and joined with shifts: a plain bitcast
# of <4 x i32> to <8 x half> lets LLVM rewrite the access as <8 x i16>, which NVPTX cuts into
# two 8-byte accesses.
def _split_words(builder, raw, element_type, width):
    if raw.type.element == element_type:
        return raw
    bits = _bits(element_type)
    per_word = 32 // bits
    narrow = ir.IntType(bits)
    vector = ir.Constant(ir.VectorType(element_type, width), ir.Undefined)
    for i in range(width):
        word = builder.extract_element(raw, I32(i // per_word))
        part = builder.trunc(builder.lshr(word, I32(bits * (i % per_word))), narrow)
        vector = builder.insert_element(vector, builder.bitcast(part, element_type), I32(i))
    return vector


def _join_words(builder, vector, access):
    element_type = vector.type.element
    if access.element == element_type:
        return vector
    bits = _bits(element_type)
    per_word = 32 // bits
    words = ir.Constant(access, ir.Undefined)
    for w in range(access.count):
        word = I32(0)
        for k in range(per_word):
            part = builder.bitcast(builder.extract_element(vector, I32(w * per_word + k)),
                                   ir.IntType(bits))
            word = builder.or_(word, builder.shl(builder.zext(part, I32), I32(bits * k)))
        words = builder.insert_element(words, word, I32(w))
    return words


def _bits(element_type):
    return 16 if isinstance(element_type, (ir.HalfType,)) else element_type.width


@lower(memory.load, ArrayType, types.Any, types.Any, types.VarArg(types.Any))
def lower_load(context, builder, sig, args):
    result_type, array_type, index_type = sig.return_type, sig.args[0], sig.args[1]
    order = normalize_order(constant_of(sig.args[3]), array_type.ndim, "load")
    view = ArrayView(context, builder, array_type, args[0], order)
    tile_index = tile_indices(context, builder, index_type, args[1])
    mode = constant_of(sig.args[4])
    if not isinstance(result_type, TileType):  # shape=(): one element, a scalar
        return load_element(context, builder, view, array_type,
                            element_origin(builder, view, tile_index), mode)
    origin = tile_origin(builder, view, tile_index, result_type.shape, result_type.shape)
    return load_tile(context, builder, view, array_type, origin, result_type, mode,
                     result_type.shape[-1])


def element_origin(builder, view, tile_index):
    """Coordinates of the one element a load or store of shape ``()`` moves."""
    ones = (1,) * len(tile_index)
    return tile_origin(builder, view, tile_index, ones, ones)


def load_element(context, builder, view, array_type, indices, padding_mode):
    """The element at ``indices`` (every thread loads it), or the padding value."""
    pointer, in_bounds = view.element(builder, indices)
    return loaded_or(context, builder, array_type, pointer, in_bounds,
                     padding_constant(context, array_type.dtype, padding_mode))


def loaded_or(context, builder, array_type, pointer, accessed, otherwise_value, likely=None):
    """The element at ``pointer`` where ``accessed``, else ``otherwise_value`` (nothing is
    read then)."""
    with builder.if_else(accessed, likely=likely) as (then, otherwise):
        with then:
            block_then = builder.block
            loaded = from_memory(context, builder, array_type, builder.load(pointer))
        with otherwise:
            block_otherwise = builder.block
    phi = builder.phi(loaded.type)
    phi.add_incoming(loaded, block_then)
    phi.add_incoming(otherwise_value, block_otherwise)
    return phi


def vector_plan(builder, view, origin, base, layout, groups, element_bytes):
    """``(pointers, ok)``: the first element's pointer of each register group, and whether
    every group can move as one vector (inside the array, contiguous, aligned). One check
    for the whole tile keeps a single branch between the vector and the element path."""
    pointers, ok = [], None
    for first, width in groups:
        indices = element_indices(builder, origin,
                                  register_coordinates(builder, base, layout, first))
        pointer, group_ok = _vector_ok(builder, view, indices, width, element_bytes)
        pointers.append(pointer)
        ok = group_ok if ok is None else builder.and_(ok, group_ok)
    return pointers, ok


def whole_vectors(view, layout, groups, origin_step):
    """True if each register group is known at compile time to be one aligned vector that
    lies wholly inside or wholly outside the array: the array is specialized as aligned,
    the tile origin's last coordinate steps by a multiple of the vector width, and so does
    every other coordinate bit of the layout along the last axis."""
    width = groups[0][1]
    if not view.aligned or width == 1 or origin_step % width:
        return False
    run = [(0,) * (len(layout.shape) - 1) + (1 << bit,) for bit in range(width.bit_length() - 1)]
    others = [v for dim in ("register", "lane", "warp") for v in layout.bases[dim]
              if v not in run]
    return all(v[-1] % width == 0 for v in others)


def _memory_constant(array_type, value, access):
    """A vector of ``access`` type filled with the in-memory bits of the constant ``value``."""
    if array_type.element == types.boolean:
        value = ir.Constant(ir.IntType(8), int(value.constant))
    if access.element == value.type:
        return ir.Constant(access, [value] * access.count)
    bits = value.type.width
    pattern = int(value.constant) & ((1 << bits) - 1)
    word = sum(pattern << (bits * k) for k in range(32 // bits))
    return ir.Constant(access, [word] * access.count)


def _load_whole_vectors(context, builder, view, array_type, origin, tile_type, base, groups,
                        padding_mode):
    """Each vector loaded where its first element is inside the array, else the padding."""
    layout = tile_type.layout
    element_bytes = array_type.dtype.itemsize
    padding = padding_constant(context, array_type.dtype, padding_mode)
    values = []
    for first, width in groups:
        indices = element_indices(builder, origin,
                                  register_coordinates(builder, base, layout, first))
        pointer, inside = view.element(builder, indices)
        access = _access_type(pointer.type.pointee, width, element_bytes)
        before = builder.block
        with builder.if_then(inside, likely=True):
            raw = builder.load(builder.bitcast(pointer, access.as_pointer(
                pointer.type.addrspace)), align=width * element_bytes)
            loaded_block = builder.block
        words = builder.phi(access)
        words.add_incoming(raw, loaded_block)
        words.add_incoming(_memory_constant(array_type, padding, access), before)
        vector = _split_words(builder, words, pointer.type.pointee, width)
        values.extend(from_memory(context, builder, array_type,
                                  builder.extract_element(vector, I32(i))) for i in range(width))
    return make_tile(context, builder, tile_type, values)


def load_tile(context, builder, view, array_type, origin, tile_type, padding_mode,
              origin_step=1):
    """The tile whose first element is at element coordinates ``origin`` of ``view`` (the
    last coordinate a multiple of ``origin_step``): whole vectors where the tile lies inside
    the array, contiguous and aligned, else element by element with the padding value
    outside."""
    layout = tile_type.layout
    base = thread_coordinates(builder, layout)
    element_bytes = array_type.dtype.itemsize

    def scalar_loads():
        return [load_element(context, builder, view, array_type, element_indices(
            builder, origin, register_coordinates(builder, base, layout, register)),
            padding_mode) for register in range(tile_type.registers)]

    groups = vector_groups(layout, element_bytes)
    if groups[0][1] == 1:
        return make_tile(context, builder, tile_type, scalar_loads())
    if whole_vectors(view, layout, groups, origin_step):
        return _load_whole_vectors(context, builder, view, array_type, origin, tile_type,
                                   base, groups, padding_mode)
    pointers, ok = vector_plan(builder, view, origin, base, layout, groups, element_bytes)
    with builder.if_else(ok, likely=True) as (vector_path, scalar_path):
        with vector_path:
            fast = []
            for pointer, (first, width) in zip(pointers, groups):
                vector = vector_load(builder, pointer, width, element_bytes)
                fast.extend(from_memory(context, builder, array_type,
                                        builder.extract_element(vector, I32(i)))
                            for i in range(width))
            fast_block = builder.block
        with scalar_path:
            slow = scalar_loads()
            slow_block = builder.block
    values = []
    for a, b in zip(fast, slow):
        phi = builder.phi(a.type)
        phi.add_incoming(a, fast_block)
        phi.add_incoming(b, slow_block)
        values.append(phi)
    return make_tile(context, builder, tile_type, values)


@lower(memory.num_tiles, ArrayType, types.Any, types.Any, types.Any)
def lower_num_tiles(context, builder, sig, args):
    array_type = sig.args[0]
    order = normalize_order(constant_of(sig.args[3]), array_type.ndim, "num_tiles")
    axis = normalize_axis(constant_of(sig.args[1]), array_type.ndim)
    tile = constant_of(sig.args[2])[axis]
    proxy = cgutils.create_struct_proxy(array_type)(context, builder, value=args[0])
    length = builder.extract_value(proxy.shape, order[axis])
    return builder.udiv(builder.add(length, length.type(tile - 1)), length.type(tile))


@lower(memory.assume_divisible_by, types.Any, types.Any)
def lower_assume_divisible_by(context, builder, sig, args):
    """``x`` unchanged, with ``llvm.assume(x % divisor == 0)`` for LLVM's known bits."""
    if isinstance(sig.return_type, types.Literal):
        return folded_constant(context, builder, sig, args)
    value, divisor = args[0], constant_of(sig.args[1])
    if isinstance(value.type, ir.IntType) and divisor > 1:
        if divisor & (divisor - 1) == 0:  # a power of two: the low bits are zero
            remainder = builder.and_(value, value.type(divisor - 1))
        else:
            remainder = builder.srem(value, value.type(divisor))
        assume = builder.module.declare_intrinsic("llvm.assume", fnty=ir.FunctionType(
            ir.VoidType(), [ir.IntType(1)]))
        builder.call(assume, [builder.icmp_signed("==", remainder, value.type(0))])
    return value


@lower(memory.cdiv, types.Any, types.Any)
def lower_cdiv(context, builder, sig, args):
    """``-(-x // y)``: one floor division of the negated numerator."""
    if isinstance(sig.return_type, types.Literal):
        return folded_constant(context, builder, sig, args)
    negate = context.get_function(elementwise.negative, signature(sig.args[0], sig.args[0]))
    floordiv = context.get_function(elementwise.floordiv, sig)
    quotient = floordiv(builder, (negate(builder, (args[0],)), args[1]))
    return context.get_function(elementwise.negative, signature(sig.return_type,
                                                                sig.return_type))(
        builder, (quotient,))


# -- array views ------------------------------------------------------------------------------
@lower("array.slice", ArrayType, types.Any, types.Any, types.Any)
def lower_slice(context, builder, sig, args):
    """The same array struct with the data pointer moved to ``start`` and the axis' length
    ``stop - start``. The bounds are checked in 64 bits (``rules.memory.SLICE_BOUNDS``):
    a kernel whose slice is out of bounds stops with a device assertion, and its view is
    empty meanwhile, so no thread reaches outside the array."""
    array_type = sig.args[0]
    axis = normalize_axis(constant_of(sig.args[1]), array_type.ndim)
    start, stop = (context.cast(builder, value, numba_type, types.int64)
                   for value, numba_type in zip(args[2:], sig.args[2:]))
    proxy = cgutils.create_struct_proxy(array_type)(context, builder, value=args[0])
    length = widened(builder, builder.extract_value(proxy.shape, axis))
    zero = I64(0)
    holds = builder.and_(builder.icmp_signed(">=", start, zero),
                         builder.icmp_signed("<=", start, stop))
    holds = builder.and_(holds, builder.icmp_signed("<=", stop, length))
    holds = builder.and_(holds, builder.or_(builder.icmp_signed("<", start, length),
                                            builder.icmp_signed("==", length, zero)))
    check_uniform(context, builder, holds, f"slice(start, stop) is out of bounds for axis "
                                           f"{axis}: {SLICE_BOUNDS}")
    start = builder.select(holds, start, zero)
    stop = builder.select(holds, stop, zero)
    stride = builder.extract_value(proxy.strides, axis)
    proxy.data = builder.gep(proxy.data, [builder.mul(start, widened(builder, stride))])
    index = context.get_value_type(array_type.index)
    proxy.shape = builder.insert_value(proxy.shape, builder.trunc(builder.sub(stop, start), index)
                                       if index.width < 64 else builder.sub(stop, start), axis)
    return proxy._getvalue()


@lower("array.tiled_view", ArrayType, types.VarArg(types.Any))
def lower_tiled_view(context, builder, sig, args):
    return args[0]


def view_origin(context, builder, sig, args):
    """``(view type, array view, origin)`` of a tiled view's tile at ``args[1]``."""
    view = sig.args[0]
    array = ArrayView(context, builder, view.array, args[0], tuple(range(view.array.ndim)))
    tile_index = tile_indices(context, builder, sig.args[1], args[1])
    return view, array, tile_origin(builder, array, tile_index, view.steps, view.tile_shape)


@lower("view.load", TiledViewType, types.VarArg(types.Any))
def lower_view_load(context, builder, sig, args):
    view, array, origin = view_origin(context, builder, sig, args)
    return load_tile(context, builder, array, view.array, origin, sig.return_type,
                     view.padding_mode, view.steps[-1])


@lower("view.num_tiles", TiledViewType, types.Any)
def lower_view_num_tiles(context, builder, sig, args):
    """Tiles whose origin ``k * step`` is inside the axis, stopping once a tile reaches its
    end (``rules.memory.view_tile_count`` at run time)."""
    view = sig.args[0]
    axis = normalize_axis(constant_of(sig.args[1]), view.array.ndim)
    tile, step = view.tile_shape[axis], view.steps[axis]
    proxy = cgutils.create_struct_proxy(view.array)(context, builder, value=args[0])
    length = builder.extract_value(proxy.shape, axis)
    zero, one = length.type(0), length.type(1)
    beyond = builder.sub(length, length.type(tile))
    beyond = builder.select(builder.icmp_signed(">", beyond, zero), beyond, zero)
    covering = builder.add(builder.sdiv(builder.add(beyond, length.type(step - 1)),
                                        length.type(step)), one)
    reaching = builder.sdiv(builder.add(length, length.type(step - 1)), length.type(step))
    count = builder.select(builder.icmp_signed("<", covering, reaching), covering, reaching)
    return builder.select(builder.icmp_signed("<=", length, zero), zero, count)
