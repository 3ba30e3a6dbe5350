"""``histogram``: the counts of a tile's integer values (a numba_tile extension; the rule is
:mod:`numba_tile.rules.histograms`). Compiled, a thread block counts in shared memory, which
tile code cannot name: a kernel counts each tile of values into a block histogram, adds the
block histograms of its tiles in registers, and adds the result to global counts with one
``atomic_add`` per bin, instead of one atomic per value (see ``docs/performance``).
"""

import numpy as np

from .. import dtypes as d
from ..host.context import tile_op
from ..host.tile import Tile, tile_argument
from ..rules.histograms import histogram as histogram_rule


@tile_op
def histogram(x, /, bins):
    """An int32 tile of shape ``(bins,)``: element ``j`` counts the elements of ``x`` (an
    integer tile of any shape) equal to ``j``; values outside ``[0, bins)`` are not counted
    (so ``ct.where(mask, x, -1)`` leaves masked-off values out). ``bins`` is a constant power
    of two, at most 16384. A numba_tile extension (Triton's ``tl.histogram``); cuTile has no
    such op.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.arange(8, dtype=ct.int32) % 3
    ...     print(t, ct.histogram(t, 4))
    ...     print(ct.histogram(t - 1, 2))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 2, 0, 1, 2, 0, 1] [3, 3, 2, 0]
    [3, 2]
    """
    x = tile_argument(x, "histogram")
    (count,) = histogram_rule(x.dtype, bins)
    values = np.asarray(x.values).ravel()
    inside = (values >= 0) & (values < count)
    counts = np.bincount(values[inside].astype(np.int64), minlength=count)
    return Tile(d.int32, counts.astype(np.int32), x.is_constant)
