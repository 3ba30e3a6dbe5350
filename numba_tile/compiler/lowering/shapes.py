"""Lowering of the shape ops: reshape, permute, transpose, broadcast_to, expand_dims and
indexing with ``None``; and of the compile-time helpers.

Expanding dimensions moves nothing (the layout gains an axis of length 1); the others move
elements between threads through shared memory (:func:`~numba_tile.compiler.lowering.tiles.relayout`).
"""

import math
import operator

from llvmlite import ir
from numba.core import types
from numba.core.typing import signature

from ...language import debugging, elementwise, shapes
from ...rules.core import normalize_axis
from ...rules.shapes import permute_axes, transpose_axes
from ..abstract import constant_of
from ..types import TileType, TypedConstant
from . import arithmetic
from .constants import folded_constant
from .elementwise import operand_values
from .memory import tile_indices
from .registry import registry
from .tiles import I32, barrier, broadcast_source, linear_offset, make_tile, \
    register_coordinates, relayout, scratch, thread_coordinates, tile_registers

lower = registry.lower


def _lower_reshape(context, builder, sig, args):
    src, dst = sig.args[0], sig.return_type
    if src.layout.without_unit_change(dst.shape) == dst.layout:
        return args[0]  # axes of length 1 dropped or added: the same registers
    if math.prod(src.shape) == 1:  # one element, held by every thread
        return make_tile(context, builder, dst, [builder.extract_value(args[0], 0)] *
                         dst.registers)

    def source(builder, coords):  # the same row-major position in the source shape
        offset = linear_offset(builder, coords, dst.shape)
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
    return permute_axes(constant_of(sig.args[1]), len(sig.args[0].shape))


def _transpose_axes(sig):
    extra = [constant_of(t) for t in sig.args[1:3]] + [None] * (3 - len(sig.args))
    return transpose_axes(len(sig.args[0].shape), extra[0], extra[1])


def _lower_broadcast_to(context, builder, sig, args):
    src, dst = sig.args[0], sig.return_type
    return relayout(context, builder, src, args[0], dst, broadcast_source(src.shape, dst.shape))


def _same_value(context, builder, sig, args):
    return args[0]


def _nothing(context, builder, sig, args):
    return context.get_dummy_value()


lower(debugging.static_assert, types.VarArg(types.Any))(_nothing)
lower(debugging.ensure_constant, types.Any)(_same_value)
lower("numba_tile.same_value", types.Any)(_same_value)
lower(debugging.static_eval, types.Any)(_same_value)


@lower("numba_tile.tuple_item", types.BaseTuple, types.IntegerLiteral)
def lower_tuple_item(context, builder, sig, args):
    return builder.extract_value(args[0], sig.args[1].literal_value % len(sig.args[0]))


@lower("numba_tile.reversed_tuple", types.BaseTuple)
def lower_reversed_tuple(context, builder, sig, args):
    count = len(sig.args[0])
    items = [builder.extract_value(args[0], i) for i in reversed(range(count))]
    return context.make_tuple(builder, sig.return_type, items)


lower(shapes.reshape, TileType, types.Any)(_lower_reshape)


@lower(shapes.reshape, types.Number, types.Any)
def _lower_reshape_scalar(context, builder, sig, args):
    """A run-time scalar as a tile of one element, which every thread holds."""
    result = sig.return_type
    return make_tile(context, builder, result, operand_values(
        context, builder, sig.args[0], args[0], result, result.dtype))
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


# -- sub-tiles --------------------------------------------------------------------------------
def _index_values(context, builder, index_type, value):
    """The int32 entries of a tile index (an int or a tuple of ints)."""
    return tile_indices(context, builder, index_type, value, types.int32)


def _unit_tile_type(dtype, ndim, num_warps):
    """A tile of one element, of rank ``ndim``: a 0-d sub-tile's place in a tile space."""
    return TileType(dtype, (1,) * ndim, num_warps)


def _lower_extract(context, builder, sig, args):
    src, dst = sig.args[0], sig.return_type
    if dst.shape == ():  # the unit sub-tile, as a 0-d tile
        unit = _unit_tile_type(dst.dtype, len(src.shape), src.num_warps)
        value = _lower_extract(context, builder, signature(unit, *sig.args), args)
        return _lower_reshape(context, builder, signature(dst, unit, types.none), [value, None])
    index = _index_values(context, builder, sig.args[1], args[1])
    origin = [builder.mul(i, I32(n)) for i, n in zip(index, dst.shape)]

    def source(builder, coords):
        return [builder.add(o, c) for o, c in zip(origin, coords)]
    return relayout(context, builder, src, args[0], dst, source)


def _lower_insert(context, builder, sig, args):
    """Each register of ``x`` inside the inserted region takes the value's element (moved to
    ``x``'s layout through shared memory), the others keep theirs."""
    x_type, value_type = sig.args[0], sig.args[2]
    if not isinstance(value_type, TileType) or value_type.shape == ():
        # a scalar or a 0-d tile: the unit sub-tile, its one element held by every thread
        unit = _unit_tile_type(x_type.dtype, len(x_type.shape), x_type.num_warps)
        scalar, = operand_values(context, builder, value_type, args[2], None, x_type.dtype)
        unit_value = make_tile(context, builder, unit, [scalar] * unit.registers)
        return _lower_insert(context, builder, signature(x_type, x_type, sig.args[1], unit),
                             [args[0], args[1], unit_value])
    index = _index_values(context, builder, sig.args[1], args[1])
    origin = [builder.mul(i, I32(n)) for i, n in zip(index, value_type.shape)]
    inside = []

    def source(builder, coords):
        flags, out = [], []
        for o, c, n in zip(origin, coords, value_type.shape):
            offset = builder.sub(c, o)
            flag = builder.icmp_unsigned("<", offset, I32(n))
            flags.append(flag)
            out.append(builder.select(flag, offset, I32(0)))
        inside.append(flags)
        return out
    moved_type = TileType(value_type.dtype, x_type.shape, x_type.num_warps, x_type.layout)
    moved = relayout(context, builder, value_type, args[2], moved_type, source)
    values = []
    for r, (own, new) in enumerate(zip(tile_registers(builder, x_type, args[0]),
                                       tile_registers(builder, moved_type, moved))):
        flag = inside[r][0]
        for other in inside[r][1:]:
            flag = builder.and_(flag, other)
        new = arithmetic.convert(context, builder, new, value_type.dtype, x_type.dtype)
        values.append(builder.select(flag, new, own))
    return make_tile(context, builder, x_type, values)


@lower(shapes.cat, types.Any, types.Any)
def lower_cat(context, builder, sig, args):
    """Both halves are moved to the result's layout (each register reads the same position
    within its half); a register then keeps the one of the half it lies in."""
    pair_type, dst = sig.args[0], sig.return_type
    if len(pair_type) == 1:  # a tuple of one tile is that tile, as in cuTile
        return builder.extract_value(args[0], 0)
    axis = normalize_axis(constant_of(sig.args[1]), len(dst.shape))
    half = dst.shape[axis] // 2

    def source(builder, coords):
        coords = list(coords)
        coords[axis] = builder.and_(coords[axis], I32(half - 1))  # halves are powers of two
        return coords
    moved_type = TileType(dst.dtype, dst.shape, dst.num_warps, dst.layout)
    first, second = [tile_registers(builder, dst, relayout(
        context, builder, pair_type[k], builder.extract_value(args[0], k), moved_type, source))
        for k in range(2)]
    base = thread_coordinates(builder, dst.layout)
    values = []
    for r, (a, b) in enumerate(zip(first, second)):
        position = register_coordinates(builder, base, dst.layout, r)[axis]
        values.append(builder.select(builder.icmp_unsigned("<", position, I32(half)), a, b))
    return make_tile(context, builder, dst, values)


def _lower_bitcast(context, builder, sig, args):
    src, dst = sig.args[0], sig.return_type
    target = arithmetic.storage_type(dst.dtype)
    values = [builder.bitcast(v, target) for v in tile_registers(builder, src, args[0])]
    return make_tile(context, builder, dst, values)


def _lower_item(context, builder, sig, args):
    return builder.extract_value(args[0], 0)


@lower("numba_tile.divmod", types.Any, types.Any)
def lower_divmod(context, builder, sig, args):
    quotient_type, remainder_type = sig.return_type
    floordiv = context.get_function(elementwise.floordiv, signature(quotient_type, *sig.args))
    mod = context.get_function(elementwise.mod, signature(remainder_type, *sig.args))
    return context.make_tuple(builder, sig.return_type, [floordiv(builder, args),
                                                         mod(builder, args)])


lower(elementwise.divmod, types.Any, types.Any)(lower_divmod)
lower(shapes.extract, TileType, types.Any, types.Any)(_lower_extract)
lower("tile.extract", TileType, types.Any, types.Any)(_lower_extract)
lower(shapes.insert, TileType, types.Any, types.Any)(_lower_insert)
lower("tile.insert", TileType, types.Any, types.Any)(_lower_insert)
lower(shapes.bitcast, TileType, types.Any)(_lower_bitcast)


@lower(shapes.bitcast, types.Number, types.Any)
@lower(shapes.bitcast, TypedConstant, types.Any)
@lower(shapes.bitcast, types.Literal, types.Any)  # (a Python number: ct.bitcast(1.0, ...))
def _lower_scalar_bitcast(context, builder, sig, args):
    if isinstance(sig.return_type, types.Literal):  # folded while typing
        return folded_constant(context, builder, sig, args)
    return builder.bitcast(args[0], context.get_value_type(sig.return_type))


def _lower_byte_view(context, builder, sig, args):
    """``pack_to_bytes``/``unpack_from_bytes``: the source's elements go row-major into
    shared memory, where the result's elements are read from the same bytes. A float4 is a
    byte holding its code in registers and half a byte in memory: its codes are written a
    byte each and paired when packed, and a packed byte's nibbles are split when unpacked."""
    src, dst = sig.args[0], sig.return_type
    buffer = scratch(builder, ir.IntType(8), math.prod(src.shape) * max(src.dtype.bitwidth, 8)
                     // 8)
    barrier(builder)  # an earlier use of the buffer (in a loop) must be finished
    source_view = builder.bitcast(buffer, context.get_value_type(src.element).as_pointer(3))
    base = thread_coordinates(builder, src.layout)
    seen = set()
    for register in range(src.registers):
        constant = src.layout.apply(register=register)
        if constant not in seen:  # registers that repeat another's element: written once
            seen.add(constant)
            coords = register_coordinates(builder, base, src.layout, register)
            builder.store(builder.extract_value(args[0], register), builder.gep(
                source_view, [linear_offset(builder, coords, src.shape)]))
    barrier(builder)
    result_view = builder.bitcast(buffer, context.get_value_type(dst.element).as_pointer(3))
    base = thread_coordinates(builder, dst.layout)

    def read(index):
        if dst.dtype.bitwidth == 4:
            return _read_nibble(builder, buffer, index)
        if src.dtype.bitwidth == 4:
            return _read_nibble_pair(builder, buffer, index)
        return builder.load(builder.gep(result_view, [index]))

    values = [read(register_coordinates(builder, base, dst.layout, register)[0])
              for register in range(dst.registers)]
    return make_tile(context, builder, dst, values)


def _read_nibble(builder, buffer, index):
    """Element ``index`` of packed float4 bytes: the low nibble of byte index // 2 for an
    even index, the high one for an odd index."""
    byte = builder.load(builder.gep(buffer, [builder.lshr(index, index.type(1))]))
    shift = builder.trunc(builder.shl(builder.and_(index, index.type(1)), index.type(2)),
                          ir.IntType(8))
    return builder.and_(builder.lshr(byte, shift), ir.IntType(8)(0x0F))


def _read_nibble_pair(builder, buffer, index):
    """Byte ``index`` of packed float4 codes (one code a byte in ``buffer``): codes 2 * index
    and 2 * index + 1 in its low and high nibbles."""
    first = builder.shl(index, index.type(1))
    low = builder.load(builder.gep(buffer, [first]))
    high = builder.load(builder.gep(buffer, [builder.add(first, index.type(1))]))
    return builder.or_(builder.and_(low, ir.IntType(8)(0x0F)),
                       builder.shl(high, ir.IntType(8)(4)))


lower(shapes.pack_to_bytes, TileType)(_lower_byte_view)
lower(shapes.unpack_from_bytes, TileType, types.Any)(_lower_byte_view)
lower("tile.item", TileType)(_lower_item)
