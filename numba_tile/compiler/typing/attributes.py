"""Typing of attributes and methods: ``dtype``, ``shape``, ``ndim`` and the methods of tiles,
arrays, scalars (0-d tiles) and constants."""


from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AttributeTemplate, bound_function

from ... import dtypes as d
from ...rules import shapes as shape_rules
from ...promotion import Loose
from ..abstract import operand
from ..types import ConstantType, FloatLiteral, TileType, TypedConstant, scalar_type
from .elementwise import infer_astype
from .shapes import infer_extract, infer_insert, infer_permute, infer_reshape, infer_transpose
from .templates import tile_method, tile_argument, registry


@registry.register_attr
class TileAttributes(AttributeTemplate):
    key = TileType

    def resolve_dtype(self, tile):
        return ConstantType(tile.dtype)

    def resolve_ndim(self, tile):
        return types.IntegerLiteral(len(tile.shape))

    def resolve_shape(self, tile):
        return types.Tuple([types.IntegerLiteral(n) for n in tile.shape])


@registry.register_attr
class ConstantAttributes(AttributeTemplate):
    """``x.dtype.bitwidth`` and friends on constants are constants too."""

    key = ConstantType

    def generic_resolve(self, constant, attr):
        if attr.startswith("_") or not hasattr(constant.value, attr):
            return None
        value = getattr(constant.value, attr)
        if isinstance(value, bool):
            return types.BooleanLiteral(value)
        if isinstance(value, int):
            return types.IntegerLiteral(value)
        if isinstance(value, float):  # Weight.HEAVY.value
            return FloatLiteral(value)
        if isinstance(value, (str, d.DType)) or value is None:
            return ConstantType(value)
        return None





def infer_item(values):
    x = tile_argument(values, "item")
    shape_rules.reshape(x.shape, ())  # (the interpreter's item() is reshape((): its error)
    return scalar_type(x.dtype)


def _item_stub(x, /):
    """``Tile.item()``."""


TileAttributes.resolve_reshape = tile_method("reshape", infer_reshape)
TileAttributes.resolve_permute = tile_method("permute", infer_permute)
TileAttributes.resolve_transpose = tile_method("transpose", infer_transpose)
TileAttributes.resolve_extract = tile_method("extract", infer_extract)
TileAttributes.resolve_insert = tile_method("insert", infer_insert)
TileAttributes.resolve_item = tile_method("item", infer_item, _item_stub)
TileAttributes.resolve_astype = tile_method("astype", infer_astype)


class ScalarAttributes(AttributeTemplate):
    """Scalars are 0-d tiles: ``v.dtype``, ``v.shape``, ``v.ndim``, ``v.item()`` and
    ``v.astype(dtype)`` (literals have their loose constant's dtype: int32, float32, ...)."""

    def resolve_dtype(self, scalar):
        value = operand(scalar)
        return ConstantType(value.concrete_dtype() if isinstance(value, Loose) else value.dtype)

    def resolve_ndim(self, scalar):
        return types.IntegerLiteral(0)

    def resolve_shape(self, scalar):
        return types.Tuple([])

    @bound_function("scalar.item")
    def resolve_item(self, scalar, args, kws):
        if args or kws:
            return None
        return signature(scalar)

    resolve_astype = tile_method("astype", infer_astype)


for _kind in (types.Number, types.Boolean, FloatLiteral, TypedConstant):
    registry.register_attr(type(f"ScalarAttributes_{_kind.__name__}", (ScalarAttributes,),
                                {"key": _kind}))
