"""The memory-operation kernels the benchmark times (issue 19): an embedding lookup with
``gather``, a scatter-add of rows with ``atomic_add`` and a histogram with ``atomic_add`` (into
copies of the counts, or of block histograms made with ``ct.histogram``).
Each ``*_launch`` function returns ``(kernel, grid, args)``, as in
:mod:`numba_tile.bench.kernels`:

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.bench import memory_kernels
>>> table = np.arange(8, dtype=np.float32).reshape(4, 2)
>>> out = np.full((2, 2), np.nan, np.float32)
>>> kernel, grid, args = memory_kernels.embedding_launch(table, np.array([3, 1]), out, rows=2)
>>> with ct.interpret():
...     ct.launch(0, grid, kernel, args)
>>> out
array([[6., 7.],
       [2., 3.]], dtype=float32)
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
def embedding_by_rows(table, indices, out, ROWS: ct.Constant[int], COLS: ct.Constant[int]):
    """:func:`embedding` written with ``load_advanced_indexing``."""
    rows = ct.load(indices, (ct.bid(0),), shape=(ROWS,))
    ct.store(out, (ct.bid(0), 0), ct.load_advanced_indexing(table, (rows, ct.Slice(0, COLS))))


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
    """``counts[c, v] += 1`` for every ``v`` of ``values`` (each in ``[0, counts.shape[1])``):
    a block counts ``TILE`` values with relaxed atomic adds into copy ``c = bid % copies`` of
    the histogram (several copies spread the adds to one bin over more addresses). The
    padding past the end is -1, an index outside ``counts``, which the atomic skips."""
    tile = ct.load(values, (ct.bid(0),), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    position = ct.arange(TILE, dtype=ct.int32) + ct.bid(0) * TILE
    bins = ct.where(position < values.shape[0], tile, -1)
    copy = ct.bid(0) % counts.shape[0]
    ct.atomic_add(counts, (copy, bins), 1, memory_order=ct.MemoryOrder.RELAXED)


@ct.kernel
def block_histogram(values, counts, TILE: ct.Constant[int], TILES: ct.Constant[int],
                    BINS: ct.Constant[int]):
    """``counts[v] += 1`` for every ``v`` of ``values``: a block counts ``TILES`` tiles of
    ``TILE`` values into one block histogram (``ct.histogram``, a numba_tile extension that
    counts in shared memory), then adds it to ``counts`` with one relaxed atomic per bin.
    The padding past the end is -1, a value outside the bins."""
    total = ct.zeros((BINS,), ct.int32)
    for k in range(TILES):
        i = ct.bid(0) * TILES + k
        tile = ct.load(values, (i,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
        position = ct.arange(TILE, dtype=ct.int32) + i * TILE
        total += ct.histogram(ct.where(position < values.shape[0], tile, -1), BINS)
    ct.atomic_add(counts, ct.arange(BINS, dtype=ct.int32), total,
                  memory_order=ct.MemoryOrder.RELAXED)


@ct.kernel
def sum_copies(copies, counts, COPIES: ct.Constant[int], TILE: ct.Constant[int]):
    """``counts[j] = sum(copies[:, j])``, ``TILE`` bins a block."""
    ct.store(counts, (ct.bid(0),), ct.sum(ct.load(copies, (0, ct.bid(0)),
                                                  shape=(COPIES, TILE)), axis=0))


def embedding_launch(table, indices, out, *, rows=8, num_warps=None, by_rows=False):
    """``(kernel, grid, args)`` gathering ``table[indices]`` into ``out``, ``rows`` rows a
    block (``len(indices)`` a multiple of ``rows``; the row length a power of two), with
    ``gather`` (or ``load_advanced_indexing``: ``by_rows``).

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
    kernel = embedding_by_rows if by_rows else embedding
    return (_with_warps(kernel, num_warps), (indices.shape[0] // rows,),
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


def histogram_launches(values, copies, counts, *, tile=4096, num_warps=None):
    """The two launches ``[(kernel, grid, args), ...]`` that write the histogram of
    ``values`` into ``counts``: the counts go into the zeroed ``copies`` (``(number of
    copies, bins)``), then each bin's copies are summed.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.memory_kernels import histogram_launches
    >>> values = np.array([3, 1, 3, 0, 3, 1], np.int32)
    >>> copies, counts = np.zeros((2, 4), np.int32), np.full(4, -1, np.int32)
    >>> with ct.interpret():
    ...     for kernel, grid, args in histogram_launches(values, copies, counts, tile=2):
    ...         ct.launch(0, grid, kernel, args)
    >>> counts
    array([1, 2, 0, 3], dtype=int32)
    """
    number, bins = copies.shape
    bins_tile = min(bins, max(1, 4096 // number))
    return [(_with_warps(histogram, num_warps), (ct.cdiv(values.shape[0], tile),),
             (values, copies, tile)),
            (sum_copies, (ct.cdiv(bins, bins_tile),), (copies, counts, number, bins_tile))]


def block_histogram_launch(values, counts, *, block=8192, tiles=16, num_warps=None):
    """``(kernel, grid, args)`` adding the histogram of ``values`` to ``counts`` (zeroed
    first), ``tiles`` tiles of ``block`` values a thread block.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.memory_kernels import block_histogram_launch
    >>> counts = np.zeros(4, np.int32)
    >>> kernel, grid, args = block_histogram_launch(np.array([3, 1, 3, 0, 3], np.int32), counts,
    ...                                             block=2, tiles=2)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> counts
    array([1, 1, 0, 3], dtype=int32)
    """
    return (_with_warps(block_histogram, num_warps),
            (ct.cdiv(values.shape[0], block * tiles),),
            (values, counts, block, tiles, counts.shape[0]))
