"""Compile-time constants in tile code: which Python operations on them fold into constants
while typing, and the Numba type of a folded value.

>>> import operator
>>> from numba_tile.compiler.constant_folding import FOLDABLE, literal_type
>>> operator.mod in FOLDABLE, literal_type(3), literal_type(0.5)
(True, Literal[int](3), Literal[float](0.5))
"""

import operator

from numba.core import types

from ..promotion import is_wide_integer, wide_integer_error
from ..rules.operators import BINARY_OPERATORS, INPLACE_OPERATORS
from .types import ConstantType, FloatLiteral

# the unary operators that fold (``not`` is a truth test, an op of no tile)
UNARY_FOLDABLE = frozenset({operator.neg, operator.not_, operator.invert})
# every binary operator of the tile model, in place too (``j += 1`` on a constant ``j`` is a
# constant: a counter ``j = 0; j += 1`` then joins int32, not Numba's int64), and those
FOLDABLE = frozenset(BINARY_OPERATORS) | frozenset(INPLACE_OPERATORS) | UNARY_FOLDABLE


def check_integer_constant(value):
    """Raise ``TileValueError`` for an integer constant no integer dtype holds (Numba has no
    type for it; the interpreter finds it out of range of the dtype it meets).

    >>> from numba_tile.compiler.constant_folding import check_integer_constant
    >>> check_integer_constant(2 ** 64 - 1)
    >>> check_integer_constant(2 ** 64)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Integer constant 18446744073709551616 is out of range ...
    """
    if is_wide_integer(value):
        raise wide_integer_error(value)


def literal_type(value):
    """The literal (or constant) Numba type of a folded Python value."""
    if isinstance(value, float):
        return FloatLiteral(value)
    if isinstance(value, (bool, int)):
        if is_wide_integer(value):  # loosely typed ints are unbounded while they fold
            return ConstantType(value)
        return types.literal(value)
    if isinstance(value, tuple):
        return types.Tuple([literal_type(v) for v in value])
    return ConstantType(value)
