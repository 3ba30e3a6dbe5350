"""Scans along one axis: ``cumsum`` and ``cumprod`` (the rules:
:mod:`numba_tile.rules.scans`). The interpreter accumulates floats in float64 and rounds
each output once: the exact reference the compiled scan is checked against.
"""

import numpy as np

from .. import dtypes as d
from ..host.context import tile_op
from ..host.conversion import flush_subnormals, round_float
from ..host.tile import Tile, tile_argument
from ..rules.scans import halves, run_index, run_merge, run_split, run_stack, scan, \
    scan_options


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


# -- a thread's runs of consecutive elements, for a work-efficient scan (.combiners) -------
@tile_op
def split_runs(x, /, axis, run):
    """``x`` with ``axis`` split into ``(n // run, run)``: runs of ``run`` consecutive
    elements (compiled, each run in one thread's registers; a reshape that moves nothing
    where the layout already keeps them there).

    >>> import numba_tile as ct
    >>> from numba_tile.language.scans import split_runs
    >>> @ct.kernel
    ... def show():
    ...     print(split_runs(ct.arange(8, dtype=ct.int32), 0, 4))
    >>> ct.launch(0, (1,), show, ())
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    x = tile_argument(x, "split_runs")
    axis, run = run_split(x.shape, axis, run)
    shape = x.shape[:axis] + (x.shape[axis] // run, run) + x.shape[axis + 1:]
    return Tile(x.dtype, x.values.reshape(shape), x.is_constant)


@tile_op
def merge_runs(x, /, axis):
    """The inverse of :func:`split_runs`: axes ``axis`` and ``axis + 1`` made one.

    >>> import numba_tile as ct
    >>> from numba_tile.language.scans import merge_runs, split_runs
    >>> @ct.kernel
    ... def show():
    ...     print(merge_runs(split_runs(ct.arange(8, dtype=ct.int32), 0, 4), 0))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    x = tile_argument(x, "merge_runs")
    axis = run_merge(x.shape, axis)
    shape = x.shape[:axis] + (x.shape[axis] * x.shape[axis + 1],) + x.shape[axis + 2:]
    return Tile(x.dtype, x.values.reshape(shape), x.is_constant)


@tile_op
def run_element(x, /, axis, index):
    """Element ``index`` of each run along ``axis`` (the inner axis of :func:`split_runs`),
    that axis kept with length 1 (compiled, a register of the thread; nothing moves).

    >>> import numba_tile as ct
    >>> from numba_tile.language.scans import run_element, split_runs
    >>> @ct.kernel
    ... def show():
    ...     print(run_element(split_runs(ct.arange(8, dtype=ct.int32), 0, 4), 1, 3))
    >>> ct.launch(0, (1,), show, ())
    [[3], [7]]
    """
    x = tile_argument(x, "run_element")
    axis, index = run_index(x.shape, axis, index)
    return Tile(x.dtype, np.ascontiguousarray(np.take(x.values, [index], axis=axis)),
                x.is_constant)


@tile_op
def stack_runs(parts, like, /, axis):
    """The inverse of :func:`run_element`: the tiles ``parts`` (one per element of a run,
    each of length 1 along ``axis``) side by side along ``axis``, a tile of ``like``'s
    shape (compiled, in ``like``'s layout: each register taken from its part).

    >>> import numba_tile as ct
    >>> from numba_tile.language.scans import run_element, split_runs, stack_runs
    >>> @ct.kernel
    ... def show():
    ...     runs = split_runs(ct.arange(4, dtype=ct.int32), 0, 2)
    ...     print(stack_runs((run_element(runs, 1, 1), run_element(runs, 1, 0)), runs, 1))
    >>> ct.launch(0, (1,), show, ())
    [[1, 0], [3, 2]]
    """
    like = tile_argument(like, "stack_runs")
    parts = [tile_argument(p, "stack_runs") for p in parts]
    axis = run_stack(like.shape, [p.shape for p in parts], [p.dtype for p in parts], axis)
    return Tile(parts[0].dtype, np.concatenate([p.values for p in parts], axis=axis),
                all(p.is_constant for p in parts))
