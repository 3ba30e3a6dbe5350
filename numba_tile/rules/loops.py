"""Rules of Python's loop builtins in tile code.

>>> import numba_tile as ct
>>> from numba_tile.rules.loops import range_index_dtype
>>> range_index_dtype([4]), range_index_dtype([ct.int64, 8]), range_index_dtype([2 ** 40])
(int32, int64, int64)
"""

import numbers
import operator

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose
from .core import as_operand, constant_value, invalid_argument, type_name

_INT32 = range(-2 ** 31, 2 ** 31)


def range_index_dtype(bounds):
    """The dtype of a ``range`` loop's index, from its bounds: each a constant int or the
    dtype of a run-time integer scalar. int32, as cuTile counts, unless a bound is a 64-bit
    integer or a uint32 (values int32 cannot hold) or a constant outside int32."""
    for bound in bounds:
        if isinstance(bound, d.DType):
            if bound.bitwidth > 32 or (bound.bitwidth == 32 and not bound.is_signed):
                return d.int64
        elif int(bound) not in _INT32:
            return d.int64
    return d.int32


def check_range_arguments(bounds, keywords=()):
    """``range(*bounds, **keywords)`` in tile code: one to three integer scalars (constants
    or run-time 0-d integer tiles), no keywords, a constant step above zero; else cuTile's
    ``TileTypeError`` naming the argument (``range(t)`` of a tile, ``range(2.5)``).

    >>> from numba_tile.rules.loops import check_range_arguments
    >>> check_range_arguments([2.5])
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument #1 of range(): Expected an integer ...
    """
    if keywords:
        raise TileTypeError(f"range() takes no keyword arguments, got "
                            f"{', '.join(map(repr, keywords))}")
    if not 1 <= len(bounds) <= 3:
        raise TileTypeError(f"Invalid number of arguments: {len(bounds)}: range() takes 1 to "
                            f"3 (stop; start, stop; or start, stop, step)")
    for position, bound in enumerate(bounds, 1):
        try:
            operand = bound if isinstance(bound, Loose) else as_operand(bound)
        except TileTypeError:
            operand = None
        if operand is None:  # (what stands for a constant in static_iter's expression)
            integral = _has_index(bound)
        elif isinstance(operand, Loose):
            integral = isinstance(operand.value, numbers.Integral) and \
                not isinstance(operand.value, bool)
        else:
            integral = not getattr(operand, "is_tile_array", False) and \
                tuple(operand.shape) == () and operand.dtype.is_integral
        if not integral:
            raise invalid_argument("range", position, f"Expected an integer scalar, but given "
                                                      f"value has type {type_name(bound)}")
    if len(bounds) == 3:
        step = constant_value(bounds[2], None)
        if isinstance(step, int) and not isinstance(step, bool) and step <= 0:
            raise TileTypeError(f"Step must be positive, got {step}")  # (loops count up)


def check_range_step(step):
    """A ``range`` step of zero (a constant, or a run-time value the interpreter knows) is a
    ``TileValueError``: the compiled loop would never end.

    >>> from numba_tile.rules.loops import check_range_step
    >>> check_range_step(0)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Step must be positive, got 0: a range() step of zero ...
    """
    if step is not None and not isinstance(step, bool) and step == 0:
        raise TileValueError("Step must be positive, got 0: a range() step of zero never ends "
                             "the loop")


def _has_index(value):
    if value is None or isinstance(value, (str, float, bool)):
        return False
    try:
        operator.index(value)
    except Exception:  # (whatever the object raises: it is no integer)
        return False
    return True
