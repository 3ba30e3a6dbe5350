"""Rules of Python's loop builtins in tile code.

>>> import numba_tile as ct
>>> from numba_tile.rules.loops import range_index_dtype
>>> range_index_dtype([4]), range_index_dtype([ct.int64, 8]), range_index_dtype([2 ** 40])
(int32, int64, int64)
"""

from .. import dtypes as d

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
