"""Rules of Python's loop builtins in tile code.

>>> import numba_tile as ct
>>> from numba_tile.rules.loops import range_index_dtype
>>> range_index_dtype([4]), range_index_dtype([ct.int64, 8]), range_index_dtype([2 ** 40])
(int32, int64, int64)
"""

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError

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


def check_range_call(count, keywords, step=None):
    """Rule of a ``range(...)`` call of ``count`` positional arguments, ``keywords`` the
    names of keyword ones and ``step`` the step where it is a constant (else None):
    ``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)``, a step other
    than zero.

    >>> from numba_tile.rules.loops import check_range_call
    >>> check_range_call(3, (), 0)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: range() step must not be zero
    """
    if keywords:
        raise TileTypeError(f"range() takes no keyword arguments, got "
                            f"{', '.join(map(repr, keywords))}")
    if not 1 <= count <= 3:
        raise TileTypeError(f"range() takes 1 to 3 arguments (stop; start, stop; or start, "
                            f"stop, step), got {count}")
    if step is not None and not isinstance(step, bool) and step == 0:
        raise TileValueError("range() step must not be zero")
