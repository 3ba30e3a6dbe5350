"""Scans along one axis: ``cumsum`` and ``cumprod`` (the rules:
:mod:`numba_tile.rules.scans`). The interpreter accumulates floats in float64 and rounds
each output once: the exact reference the compiled scan is checked against.
"""

import numpy as np

from .. import dtypes as d
from ..interpreter.context import tile_op
from ..interpreter.conversion import flush_subnormals, round_float
from ..interpreter.tile import Tile, tile_argument
from ..rules.scans import halves, scan, scan_options


def _scan(op, x, axis, reverse, rounding_mode, flush_to_zero):
    x = tile_argument(x, op)
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


# -- the steps of scans and reductions with a user's combining function (.combiners) -------
@tile_op
def swap_halves(x, /, axis, width):
    """Each element of ``x`` replaced by its partner in its block of ``2 * width`` elements
    along ``axis``: the element ``width`` away (index ``i ^ width``). A step of
    :func:`~numba_tile.scan` and :func:`~numba_tile.reduce`; compiled as a swap of registers,
    a lane shuffle or an exchange between warps.

    >>> import numba_tile as ct
    >>> from numba_tile.language.scans import swap_halves
    >>> @ct.kernel
    ... def show():
    ...     print(swap_halves(ct.arange(8, dtype=ct.int32), 0, 2))
    >>> ct.launch(0, (1,), show, ())
    [2, 3, 0, 1, 6, 7, 4, 5]
    """
    x = tile_argument(x, "swap_halves")
    axis, width = halves(x.shape, axis, width)
    partners = np.arange(x.shape[axis]) ^ width
    return Tile(x.dtype, np.take(x.values, partners, axis=axis), x.is_constant)


@tile_op
def upper_halves(x, /, axis, width):
    """A bool tile of ``x``'s shape: True (printed 1) for the elements in the upper half of their block
    of ``2 * width`` elements along ``axis`` (those whose index has the bit ``width``).

    >>> import numba_tile as ct
    >>> from numba_tile.language.scans import upper_halves
    >>> @ct.kernel
    ... def show():
    ...     print(upper_halves(ct.arange(4, dtype=ct.int32), 0, 1))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 0, 1]
    """
    x = tile_argument(x, "upper_halves")
    axis, width = halves(x.shape, axis, width)
    index = np.arange(x.shape[axis]) & width != 0
    shape = [1] * len(x.shape)
    shape[axis] = x.shape[axis]
    return Tile(d.bool_, np.broadcast_to(index.reshape(shape), x.shape).copy(), x.is_constant)
