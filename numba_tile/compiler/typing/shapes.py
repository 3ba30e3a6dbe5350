"""Typing of the shape ops: reshape, permute, transpose, expand_dims, broadcast_to, indexing
with ``None`` and constants, extract, insert, cat, bitcast and the byte views."""

import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...errors import TileUnsupportedFeatureError, TileTypeError
from ...language import shapes
from ...rules import shapes as shape_rules
from ...rules.core import describe, dtype_argument, normalize_axis, not_a_tile, operand_dtype
from ..abstract import RuntimeScalar, operand
from ..compile_state import current
from ..types import RUN_TIME_SLICES, ConstantType, FloatLiteral, TileType, TypedConstant, \
    dtype_of_scalar, scalar_type, storage_scalar_type
from .templates import constant_value, folded_type, is_constant, is_scalar, register_template, \
    registry, tile_argument


def infer_reshape(values):
    x = values["x"]
    dtype = dtype_of_scalar(x)
    if dtype is not None and not isinstance(x, types.Literal):  # a run-time scalar: (1, ...)
        return TileType(dtype, shape_rules.reshape((), constant_value(values["shape"])),
                        current().num_warps)
    x = tile_argument(values, "reshape")
    shape = shape_rules.reshape(x.shape, constant_value(values["shape"]))
    # dropping or adding axes of length 1 keeps every element where it is
    return TileType(x.dtype, shape, x.num_warps, x.layout.without_unit_change(shape))


def infer_permute(values):
    x = tile_argument(values, "permute")
    axes = shape_rules.permute_axes(constant_value(values["axes"]), x.ndim)
    return TileType(x.dtype, tuple(x.shape[a] for a in axes), x.num_warps)


def infer_transpose(values):
    x = tile_argument(values, "transpose")
    axes = shape_rules.transpose_axes(x.ndim, constant_value(values["axis0"]),
                                      constant_value(values["axis1"]))
    return TileType(x.dtype, tuple(x.shape[a] for a in axes), x.num_warps)


def infer_expand_dims(values):
    x = tile_argument(values, "expand_dims")
    axis = normalize_axis(constant_value(values["axis"]), x.ndim + 1)
    shape = shape_rules.expand_dims(x.shape, axis)
    return TileType(x.dtype, shape, x.num_warps, x.layout.expand_dims(axis))


def infer_broadcast_to(values):
    x = tile_argument(values, "broadcast_to")
    return TileType(x.dtype, shape_rules.broadcast_to(x.shape, constant_value(values["shape"])),
                    x.num_warps)


register_template(shapes.reshape, infer_reshape)
register_template(shapes.permute, infer_permute)
register_template(shapes.transpose, infer_transpose)
register_template(shapes.expand_dims, infer_expand_dims)
register_template(shapes.broadcast_to, infer_broadcast_to)


def inserted_axes(ndim, key):
    """The axes of the result of indexing a tile of rank ``ndim`` with ``key`` (the Numba
    type of ``:``, ``None``, ``...`` or a tuple of them) that ``None`` inserts."""
    items = list(key) if isinstance(key, types.BaseTuple) else [key]
    if sum(isinstance(i, types.EllipsisType) for i in items) > 1:
        shape_rules.index_key((Ellipsis, Ellipsis), ndim)  # (the shared rule's error)
    explicit = sum(isinstance(i, types.SliceType) for i in items)
    expanded = []
    for item in items:  # '...' stands for the ':' that the other entries leave out
        if isinstance(item, types.EllipsisType):
            expanded.extend([types.slice2_type] * max(ndim - explicit, 0))
        else:
            expanded.append(item)
    axes, axis, full_slices = [], 0, 0
    for item in expanded:
        if isinstance(item, types.NoneType):
            axes.append(axis)
            axis += 1
        elif isinstance(item, types.SliceType):
            axis += 1
            full_slices += 1
        else:  # (the shared rule's error: a run-time index)
            shape_rules.index_key(operand(item), ndim)
    for item in expanded:  # a slice of run-time bounds (constant ones are static_getitem's)
        if isinstance(item, types.SliceType) and item in RUN_TIME_SLICES.values():
            shape_rules.index_key(slice(RUN_TIME, None), ndim)
    if full_slices > ndim:
        shape_rules.index_key((slice(None),) * full_slices, ndim)
    return axes


class TileIndexTemplate(AbstractTemplate):
    """``t[:, None]`` and friends: axes of length 1 added, nothing moved."""

    key = operator.getitem
    prefer_literal = True  # (an index that is a constant is named by its value)

    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], TileType):
            return None
        tile, key = args
        layout = tile.layout
        for axis in inserted_axes(tile.ndim, key):
            layout = layout.expand_dims(axis)
        return signature(TileType(tile.dtype, layout.shape, tile.num_warps, layout), *args)


registry.register_global(operator.getitem)(TileIndexTemplate)


class TileStaticIndexTemplate(AbstractTemplate):
    """``t[key]`` with a constant ``key`` (``t[1:3]``, ``t[0]``, ``t[:, None]``): the shared
    rule checks it as the interpreter does (a slice's bounds are only known here); the
    typing is then :class:`TileIndexTemplate`'s."""

    key = "static_getitem"

    def generic(self, args, kws):
        if len(args) == 2 and isinstance(args[0], TileType):
            shape_rules.index_key(args[1], args[0].ndim)
        return None


registry.register(TileStaticIndexTemplate)


class NotSubscriptable(AbstractTemplate):
    """``v[i]`` of a scalar, a number, None or a dtype: the shared rule's error (Numba found
    no implementation: a compiler gap to its words)."""

    def generic(self, args, kws):
        value = args[0] if len(args) == 2 else None
        if isinstance(value, (types.NoneType, types.Number, types.Boolean, FloatLiteral,
                              TypedConstant)) or \
                (isinstance(value, ConstantType) and isinstance(value.value, d.DType)):
            key = args[1] if self.key == "static_getitem" else operand(args[1])
            raise shape_rules.not_subscriptable(operand(args[0]), key)
        return None


registry.register_global(operator.getitem)(type("NotSubscriptableItem", (NotSubscriptable,),
                                                {"key": operator.getitem}))
registry.register(type("NotSubscriptableStatic", (NotSubscriptable,), {"key": "static_getitem"}))


RUN_TIME = RuntimeScalar(d.int64)


class RunTimeSlice(AbstractTemplate):
    """``slice(...)`` (``a:b`` in a subscript) with a run-time bound: one of
    :data:`RUN_TIME_SLICES`, built as Numba builds its slices."""

    key = slice
    tile_first = True

    def generic(self, args, kws):
        if kws or not 1 <= len(args) <= 3 or all(
                isinstance(a, (types.NoneType, types.Literal)) for a in args) or not all(
                isinstance(a, (types.NoneType, types.Integer)) for a in args):
            return None
        return signature(RUN_TIME_SLICES[3 if len(args) == 3 else 2], *[
            a if isinstance(a, types.NoneType) else types.intp for a in args])


registry.register_global(slice)(RunTimeSlice)


def infer_extract(values):
    x = tile_argument(values, "extract")
    sub = shape_rules.extract(x.shape, _index_operand(values["index"]),
                              constant_value(values["shape"]))
    return TileType(x.dtype, sub, x.num_warps)


def infer_insert(values):
    x = tile_argument(values, "insert")
    value = values["value"]
    if not (isinstance(value, TileType) or is_scalar(value)):
        raise not_a_tile("insert", operand(value), 3)
    shape_rules.insert(x.dtype, x.shape, _index_operand(values["index"]),
                       operand_dtype(operand(value)), getattr(value, "shape", ()))
    return x


def _index_operand(index):
    """A tile index (a tuple or one entry) as the rules take it."""
    if isinstance(index, types.BaseTuple):
        return tuple(operand(item) for item in index)
    return operand(index)


def infer_cat(values):
    tiles = values["tiles"]
    if not isinstance(tiles, types.BaseTuple):
        raise TileTypeError(f"cat() needs a tuple of two tiles, got {describe(operand(tiles))}")
    shape_rules.cat_count(len(tiles))
    for tile in tiles:  # (the interpreter's words for an item that is no tile nor scalar)
        if not (isinstance(tile, TileType) or is_scalar(tile)):
            raise not_a_tile("cat", operand(tile))
    if not all(isinstance(t, TileType) for t in tiles):
        raise TileUnsupportedFeatureError("cat() of a scalar is not compiled yet")
    if len(tiles) == 1:  # (cuTile's: the tile itself)
        normalize_axis(constant_value(values["axis"]), tiles[0].ndim)
        return tiles[0]
    a, b = tiles
    shape, _ = shape_rules.cat(a.dtype, a.shape, b.dtype, b.shape,
                               constant_value(values["axis"]))
    return TileType(a.dtype, shape, a.num_warps)


def infer_bitcast(values):
    x = values["x"]
    dtype = dtype_argument(constant_value(values["dtype"]), "bitcast")
    if is_constant(x) and not isinstance(x, TileType):  # folded, as the interpreter does
        return folded_type(shapes.bitcast.__tile_op__(constant_value(x), dtype))
    if is_scalar(x):  # a run-time scalar: a scalar of the new dtype
        return scalar_type(shape_rules.bitcast(dtype_of_scalar(x), dtype))
    x = tile_argument(values, "bitcast")
    shape_rules.bitcast(x.dtype, dtype)
    storage_scalar_type(dtype)  # (refuses a dtype the compiler cannot hold)
    return x.with_dtype(dtype)


register_template(shapes.extract, infer_extract)
register_template(shapes.insert, infer_insert)
register_template(shapes.cat, infer_cat)
register_template(shapes.bitcast, infer_bitcast)


def infer_pack_to_bytes(values):
    x = tile_argument(values, "pack_to_bytes")
    return TileType(d.uint8, shape_rules.pack_to_bytes(x.dtype, x.shape), x.num_warps)


def infer_unpack_from_bytes(values):
    x = tile_argument(values, "unpack_from_bytes")
    dtype = dtype_argument(constant_value(values["dtype"]), "unpack_from_bytes")
    return TileType(dtype, shape_rules.unpack_from_bytes(x.dtype, x.shape, dtype), x.num_warps)


register_template(shapes.pack_to_bytes, infer_pack_to_bytes)
register_template(shapes.unpack_from_bytes, infer_unpack_from_bytes)
