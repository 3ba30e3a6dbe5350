"""Rules of Python's loop builtins in tile code.

>>> import numba_tile as ct
>>> from numba_tile.rules.loops import range_index_dtype
>>> range_index_dtype([4]), range_index_dtype([ct.int64, 8]), range_index_dtype([2 ** 40])
(int32, int64, int64)
"""

from .. import dtypes as d
from ..errors import TileTypeError
from ..promotion import Loose
from .core import describe, is_python_number, is_tile_or_scalar

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


def check_range_arguments(bounds):
    """``range`` in tile code takes one to three integer bounds, each a constant or an
    integer scalar (a 0-d tile); anything else (a float, None, a string, a tile of several
    elements) is a ``TileTypeError``.

    >>> from numba_tile.rules.loops import check_range_arguments
    >>> check_range_arguments([0, 8, 2])
    >>> check_range_arguments([2.5])
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: range() needs integer bounds (integer constants or \
scalars), got constant 2.5
    """
    if not 1 <= len(bounds) <= 3:
        raise TileTypeError(f"range() takes 1 to 3 integer bounds, got {len(bounds)}")
    for bound in bounds:
        value = bound.value if isinstance(bound, Loose) else bound
        if is_python_number(value):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = is_tile_or_scalar(value) and tuple(value.shape) == () and \
                value.dtype.is_integral
        if not ok:
            raise TileTypeError(f"range() needs integer bounds (integer constants or "
                                f"scalars), got {describe(bound)}")
