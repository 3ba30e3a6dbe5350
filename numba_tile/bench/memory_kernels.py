"""The memory-operation kernels the benchmark times (issue 19): an embedding lookup with
``gather``, a scatter-add of rows with ``atomic_add`` and a histogram with ``atomic_add``.
Each ``*_launch`` function returns ``(kernel, grid, args)``, as in
:mod:`numba_tile.bench.kernels`:

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.bench import memory_kernels
>>> values = np.array([3, 1, 3, 0, 3, 1], np.int32)
>>> counts = np.zeros(4, np.int32)
>>> kernel, grid, args = memory_kernels.histogram_launch(values, counts, tile=4)
>>> with ct.interpret():
...     ct.launch(0, grid, kernel, args)
>>> counts
array([1, 2, 0, 3], dtype=int32)
"""

import numba_tile as ct
from .kernels import _with_warps


@ct.kernel
def embedding(table, indices, out, ROWS: ct.Constant[int], COLS: ct.Constant[int]):
    """``out[i, :] = table[indices[i], :]``: a block gathers ``ROWS`` whole rows of
    ``COLS`` (at least the row length) elements."""
    rows = ct.load(indices, (ct.bid(0),), shape=(ROWS,))
    cols = ct.arange(COLS, dtype=ct.int32)
    ct.store(out, (ct.bid(0), 0), ct.gather(table, (rows[:, None], cols[None, :])))


@ct.kernel
def scatter_add_rows(out, indices, source, ROWS: ct.Constant[int], COLS: ct.Constant[int]):
    """``out[indices[i], :] += source[i, :]`` with atomic adds (indices may repeat): a block
    adds ``ROWS`` whole rows. Nothing orders the adds, so they are relaxed."""
    rows = ct.load(indices, (ct.bid(0),), shape=(ROWS,))
    cols = ct.arange(COLS, dtype=ct.int32)
    values = ct.load(source, (ct.bid(0), 0), shape=(ROWS, COLS))
    ct.atomic_add(out, (rows[:, None], cols[None, :]), values,
                  memory_order=ct.MemoryOrder.RELAXED)


@ct.kernel
def histogram(values, counts, TILE: ct.Constant[int]):
    """``counts[v] += 1`` for every ``v`` of ``values`` (each in ``[0, len(counts))``): a
    block counts ``TILE`` values with relaxed atomic adds; the padding past the end is -1,
    an index outside ``counts``, which the atomic skips."""
    tile = ct.load(values, (ct.bid(0),), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    position = ct.arange(TILE, dtype=ct.int32) + ct.bid(0) * TILE
    bins = ct.where(position < values.shape[0], tile, -1)
    ct.atomic_add(counts, bins, 1, memory_order=ct.MemoryOrder.RELAXED)


def embedding_launch(table, indices, out, *, rows=8, num_warps=None):
    """``(kernel, grid, args)`` gathering ``table[indices]`` into ``out``, ``rows`` rows a
    block (``len(indices)`` a multiple of ``rows``; the row length a power of two).

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.memory_kernels import embedding_launch
    >>> table = np.arange(12, dtype=np.float32).reshape(6, 2)
    >>> out = np.full((4, 2), np.nan, np.float32)
    >>> kernel, grid, args = embedding_launch(table, np.array([5, 0, 2, 2]), out, rows=2)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> out[:, 0]
    array([10.,  0.,  4.,  4.], dtype=float32)
    """
    return (_with_warps(embedding, num_warps), (indices.shape[0] // rows,),
            (table, indices, out, rows, table.shape[1]))


def scatter_add_launch(out, indices, source, *, rows=8, num_warps=None):
    """``(kernel, grid, args)`` adding row ``i`` of ``source`` to row ``indices[i]`` of
    ``out``, ``rows`` rows a block.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.memory_kernels import scatter_add_launch
    >>> out = np.zeros((3, 2), np.float32)
    >>> kernel, grid, args = scatter_add_launch(out, np.array([2, 0, 2, 2]),
    ...                                         np.ones((4, 2), np.float32), rows=2)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> out[:, 0]
    array([1., 0., 3.], dtype=float32)
    """
    return (_with_warps(scatter_add_rows, num_warps), (indices.shape[0] // rows,),
            (out, indices, source, rows, source.shape[1]))


def histogram_launch(values, counts, *, tile=4096, num_warps=None):
    """``(kernel, grid, args)`` adding the histogram of ``values`` to ``counts``, ``tile``
    values a block (see the module's example)."""
    return (_with_warps(histogram, num_warps), (ct.cdiv(values.shape[0], tile),),
            (values, counts, tile))
