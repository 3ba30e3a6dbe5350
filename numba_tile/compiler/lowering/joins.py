"""The casts of values where paths meet (:mod:`..typing.joins`): a scalar, or a constant,
becomes the 0-d tile a variable holds on another path (every register holds its one
element), and an array the alignment the joined array type keeps."""

from numba.core import types

from ..types import ArrayType, FloatLiteral, TileType, TypedConstant
from .elementwise import operand_values, pack
from .registry import registry


@registry.lower_cast(types.Number, TileType)
@registry.lower_cast(types.Boolean, TileType)
@registry.lower_cast(TypedConstant, TileType)
@registry.lower_cast(FloatLiteral, TileType)
def cast_scalar_to_tile(context, builder, fromty, toty, value):
    if toty.shape != ():
        raise NotImplementedError(f"cast from {fromty} to {toty}")
    return pack(context, builder, toty,
                operand_values(context, builder, fromty, value, toty, toty.dtype))


@registry.lower_cast(ArrayType, ArrayType)
def cast_array(context, builder, fromty, toty, value):
    if fromty.with_alignment(False) != toty.with_alignment(False):
        raise NotImplementedError(f"cast from {fromty} to {toty}")
    return value  # the same data model: alignment only decides how it is accessed
