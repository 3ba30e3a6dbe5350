"""The rules of enum members in tile code, as cuTile has them: a member is a compile-time
constant; calling an enum class makes the member of a constant value (``Color(0)``,
``Status("ok")``, ``Weight(0.5)``); members compare with ``==``/``!=``, and only those of
an ``IntEnum`` (which are ints) are ordered.

>>> import enum
>>> from numba_tile.promotion import Loose
>>> from numba_tile.rules.enums import member
>>> class Color(enum.Enum):
...     RED = 0
...     GREEN = 1
>>> member(Color, Loose(1))
<Color.GREEN: 1>
>>> member(Color, Loose(7))
Traceback (most recent call last):
...
numba_tile.errors.TileValueError: 7 is not a valid Color
"""

import enum

from ..enums import enum_constant_message
from ..errors import TileTypeError, TileValueError
from .core import constant_value, describe

_NOT_CONSTANT = object()


def member(enum_class, value):
    """The member of ``enum_class`` whose value is the constant ``value`` (a rule operand):
    ``TileTypeError`` for a run-time value, ``TileValueError`` for a value no member has."""
    constant = constant_value(value, _NOT_CONSTANT)
    if constant is _NOT_CONSTANT:
        raise TileTypeError(enum_constant_message(enum_class, describe(value)))
    try:
        return enum_class(constant)
    except ValueError:
        raise TileValueError(f"{constant!r} is not a valid {enum_class.__name__}") from None


def check_comparison(symbol, left, right):
    """Raise ``TileTypeError`` for an ordering (``<``, ``<=``, ``>``, ``>=``) of members of
    an enum that is not an ``IntEnum``.

    >>> import enum
    >>> from numba_tile.rules.enums import check_comparison
    >>> class Color(enum.Enum):
    ...     RED = 0
    >>> check_comparison("<", Color.RED, Color.RED)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Operator '<' is not supported for members of Color: ...
    """
    if symbol in ("==", "!="):
        return
    for value in (left, right):
        if isinstance(value, enum.Enum) and not isinstance(value, int):
            raise TileTypeError(f"Operator '{symbol}' is not supported for members of "
                                f"{type(value).__name__}: enum members are not ordered "
                                f"(IntEnum members are)")
