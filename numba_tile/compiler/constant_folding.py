"""Compile-time constants in tile code: which Python operations on them fold into constants
while typing, and the Numba type of a folded value.

>>> import operator
>>> from numba_tile.compiler.constant_folding import FOLDABLE, literal_type
>>> operator.mod in FOLDABLE, literal_type(3), literal_type(0.5)
(True, Literal[int](3), Literal[float](0.5))
"""

import operator

from numba.core import types

from .types import ConstantType, FloatLiteral

FOLDABLE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.mod, operator.pow, operator.eq, operator.ne, operator.lt, operator.le,
             operator.gt, operator.ge, operator.and_, operator.or_, operator.xor,
             operator.lshift, operator.rshift, operator.neg, operator.not_, operator.invert}
UNARY_FOLDABLE = {operator.neg, operator.not_, operator.invert}


def literal_type(value):
    """The literal (or constant) Numba type of a folded Python value."""
    if isinstance(value, float):
        return FloatLiteral(value)
    if isinstance(value, (bool, int)):
        return types.literal(value)
    if isinstance(value, tuple):
        return types.Tuple([literal_type(v) for v in value])
    return ConstantType(value)
