"""Element-wise loads and stores at index tiles: ``gather`` and ``scatter``, and their
row-wise form ``load_advanced_indexing`` / ``store_advanced_indexing`` with ``Slice``.

The rules are in :mod:`numba_tile.rules.gather`. Here, in the interpreter, every access is
bounds-checked, even with ``check_bounds=False`` (on the GPU an out-of-bounds access without
checks is undefined).
"""

import numpy as np

from ..enums import PaddingMode
from ..host.arrays import padding_value
from ..host.context import tile_op
from ..host.element_access import selected, selected_at
from ..host.tile import Tile, values_as
from ..promotion import Loose
from ..rules import gather as rules


@tile_op
def gather(array, indices, /, *, mask=None, padding_value=0, check_bounds=True, latency=None):
    """The elements of ``array`` at ``indices`` (one index tile or scalar per axis, broadcast
    together), as a tile of their broadcast shape; ``padding_value`` where an index is
    outside the array (negative ones too) or the ``mask`` is false.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def show(x):
    ...     rows = ct.arange(4, dtype=ct.int32)
    ...     print(ct.gather(x, rows * 3, padding_value=-1))
    >>> ct.launch(0, (1,), show, (np.arange(10, dtype=np.int32),))
    [0, 3, 6, 9]
    >>> ct.launch(0, (1,), show, (np.arange(7, dtype=np.int32),))
    [0, 3, 6, -1]
    """
    dtype, shape, operands, mask, padding = rules.gather(array, indices, mask, padding_value,
                                                         check_bounds, latency)
    out = np.array(np.broadcast_to(values_as(padding, dtype), shape), dtype=dtype.storage)
    inside, positions = selected(array, operands, shape, mask)
    out[inside] = array.data[positions]
    return Tile(dtype, out)


@tile_op
def scatter(array, indices, value, /, *, mask=None, check_bounds=True, latency=None):
    """Store ``value`` (broadcast to the indices' shape) into ``array`` at ``indices`` (one
    index tile or scalar per axis, broadcast together); elements whose index is outside the
    array, or whose ``mask`` is false, are not stored. Where indices repeat, one of the
    values is stored (which one is unspecified on the GPU).

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def reverse(x, y):
    ...     i = ct.arange(8, dtype=ct.int32)
    ...     ct.scatter(y, 7 - i, ct.gather(x, i))
    >>> x, y = np.arange(8, dtype=np.float32), np.zeros(6, np.float32)
    >>> ct.launch(0, (1,), reverse, (x, y))
    >>> y
    array([7., 6., 5., 4., 3., 2.], dtype=float32)
    """
    shape, operands, value, mask = rules.scatter(array, indices, value, mask, check_bounds,
                                                 latency)
    values = np.broadcast_to(values_as(value, array.dtype), shape)
    inside, positions = selected(array, operands, shape, mask)
    if array.data.ndim == 0:  # no indices: the one element
        if inside:
            array.data[()] = values[()]
        return
    array.data[positions] = values[inside]


class Slice:
    """``Slice(start, length)``: the elements ``start, ..., start + length - 1`` of one axis,
    an index of :func:`load_advanced_indexing` and :func:`store_advanced_indexing`. ``start``
    is an integer scalar known at run time or not; ``length`` a constant power of two.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def show(x, start):
    ...     rows = ct.arange(2, dtype=ct.int32) * 2
    ...     print(ct.load_advanced_indexing(x, (rows, ct.Slice(start, 2))))
    >>> ct.launch(0, (1,), show, (np.arange(12, dtype=np.int32).reshape(4, 3), 1))
    [[1, 2], [7, 8]]
    """

    is_tile_slice = True

    def __init__(self, start, length, /):
        self.start, self.length = rules.slice_parts(start, length)

    def describe(self):
        return f"ct.Slice of length {self.length}"


def _advanced_positions(array, shape, axis, index, slices):
    """The index values of every axis, each an array of ``shape``: the index tile's along the
    sparse axis, ``start + k`` along the others."""
    found = []
    for a, part in enumerate(slices):
        view = [1] * len(shape)
        view[a] = shape[a]
        if part is None:
            values = np.asarray(index.values)
        else:
            start = part.start.value if isinstance(part.start, Loose) else \
                np.asarray(part.start.values).item()
            values = np.arange(shape[a], dtype=object) + int(start)
        found.append(np.broadcast_to(np.asarray(values).reshape(view), shape))
    return found


@tile_op
def load_advanced_indexing(array, indices, /, *, padding_mode=PaddingMode.UNDETERMINED,
                           latency=None, allow_tma=None):
    """Rows (or columns ...) of ``array`` chosen by an index tile: ``indices`` has one 1-d
    integer tile, the sparse axis, and a :class:`Slice` for every other axis. The result has
    the index tile's length along the sparse axis and each slice's length along its axis;
    elements outside the array take the padding value.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def pick(x, y):
    ...     rows = ct.arange(4, dtype=ct.int32) * 3
    ...     ct.store(y, (0, 0), ct.load_advanced_indexing(
    ...         x, (rows, ct.Slice(0, 2)), padding_mode=ct.PaddingMode.ZERO))
    >>> y = np.empty((4, 2), np.int32)
    >>> ct.launch(0, (1,), pick, (np.arange(16, dtype=np.int32).reshape(8, 2), y))
    >>> y.tolist()
    [[0, 1], [6, 7], [12, 13], [0, 0]]
    """
    dtype, shape, axis, index, slices, mode = rules.load_advanced_indexing(array, indices,
                                                                           padding_mode)
    out = np.full(shape, padding_value(mode, dtype), dtype=dtype.storage)
    positions = _advanced_positions(array, shape, axis, index, slices)
    inside, selected = selected_at(array, positions, shape, None)
    out[inside] = array.data[selected]
    return Tile(dtype, out)


@tile_op
def store_advanced_indexing(array, indices, tile, /, *, latency=None, allow_tma=None):
    """Store ``tile`` into rows (or columns ...) of ``array`` chosen by an index tile, the
    ``indices`` convention of :func:`load_advanced_indexing`; the tile has exactly the shape
    the indices give (a scalar fills it). Elements outside the array are not stored; where
    indices repeat, which row is stored is unspecified.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def put(y):
    ...     rows = ct.arange(2, dtype=ct.int32) * 2 + 1
    ...     ct.store_advanced_indexing(y, (rows, ct.Slice(1, 2)), 5)
    >>> y = np.zeros((4, 3), np.int32)
    >>> ct.launch(0, (1,), put, (y,))
    >>> y.tolist()
    [[0, 0, 0], [0, 5, 5], [0, 0, 0], [0, 5, 5]]
    """
    shape, axis, index, slices = rules.store_advanced_indexing(array, indices, tile)
    values = np.broadcast_to(values_as(tile, array.dtype), shape)
    positions = _advanced_positions(array, shape, axis, index, slices)
    inside, selected = selected_at(array, positions, shape, None)
    array.data[selected] = values[inside]
