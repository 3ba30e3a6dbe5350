"""Scans along one axis: ``cumsum`` and ``cumprod`` (the rules:
:mod:`numba_tile.rules.scans`). The interpreter accumulates floats in float64 and rounds
each output once: the exact reference the compiled scan is checked against.
"""

import numpy as np

from ..interpreter.context import tile_op
from ..interpreter.conversion import flush_subnormals, round_float
from ..interpreter.tile import Tile, to_tile
from ..rules.scans import scan, scan_options


def _scan(op, x, axis, reverse, rounding_mode, flush_to_zero):
    x = to_tile(x)
    dtype, axis, reverse = scan(op, x, axis, reverse)
    scan_options(op, dtype, rounding_mode, flush_to_zero)
    values = x.values
    if reverse:
        values = np.flip(values, axis)
    accumulate = np.cumsum if op == "cumsum" else np.cumprod
    with np.errstate(all="ignore"):
        if dtype.is_float:
            wide = values.astype(np.float64)
            if flush_to_zero:
                wide = flush_subnormals(wide, dtype)
            out = round_float(accumulate(wide, axis=axis), dtype, rounding_mode)
        else:  # integers wrap around in their own dtype
            out = accumulate(values.astype(dtype.storage), axis=axis, dtype=dtype.storage)
    if reverse:
        out = np.flip(out, axis)
    return Tile(dtype, np.ascontiguousarray(out), x.is_constant)


@tile_op
def cumsum(x, /, axis=0, *, reverse=False, rounding_mode=None, flush_to_zero=False):
    """The running sum of ``x`` along ``axis`` (from the end with ``reverse``), in the
    tile's dtype (a bool tile counts in int32).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(8, dtype=ct.int32), (2, 4))
    ...     print(ct.cumsum(t, 1))
    ...     print(ct.cumsum(t, 1, reverse=True))
    >>> ct.launch(0, (1,), show, ())
    [[0, 1, 3, 6], [4, 9, 15, 22]]
    [[6, 6, 5, 3], [22, 18, 13, 7]]
    """
    return _scan("cumsum", x, axis, reverse, rounding_mode, flush_to_zero)


@tile_op
def cumprod(x, /, axis=0, *, reverse=False, rounding_mode=None, flush_to_zero=False):
    """The running product of ``x`` along ``axis`` (from the end with ``reverse``).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.cumprod(ct.full((2, 4), 2, ct.int32), 1))
    >>> ct.launch(0, (1,), show, ())
    [[2, 4, 8, 16], [2, 4, 8, 16]]
    """
    return _scan("cumprod", x, axis, reverse, rounding_mode, flush_to_zero)
