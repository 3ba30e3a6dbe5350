"""Element-wise loads and stores at index tiles: ``gather`` and ``scatter``.

The rules are in :mod:`numba_tile.rules.gather`. Here, in the interpreter, every access is
bounds-checked, even with ``check_bounds=False`` (on the GPU an out-of-bounds access without
checks is undefined).
"""

import numpy as np

from .. import dtypes as d
from ..interpreter.context import tile_op
from ..interpreter.tile import Tile, values_as
from ..promotion import Loose
from ..rules import gather as rules


def _index_values(operand, shape):
    """An index operand's values broadcast to ``shape``, in its own integer dtype (so that
    uint64 indices compare exactly)."""
    if isinstance(operand, Loose):
        return np.broadcast_to(np.array(int(operand.value), dtype=object), shape)
    return np.broadcast_to(np.asarray(operand.values), shape)


def _selected(array, operands, shape, mask):
    """``(inside, positions)``: where an element is accessed (inside the array and the mask
    true), and the array positions of those elements."""
    indices = [_index_values(op, shape) for op in operands]
    inside = np.ones(shape, bool)
    for values, length in zip(indices, array.data.shape):
        inside &= (values >= 0) & (values < length)
    if mask is not None:
        inside &= np.broadcast_to(values_as(mask, d.bool_), shape)
    positions = tuple(np.asarray(values[inside], dtype=np.int64) for values in indices)
    return inside, positions


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
                                                         check_bounds)
    out = np.array(np.broadcast_to(values_as(padding, dtype), shape), dtype=dtype.storage)
    inside, positions = _selected(array, operands, shape, mask)
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
    shape, operands, value, mask = rules.scatter(array, indices, value, mask, check_bounds)
    values = np.broadcast_to(values_as(value, array.dtype), shape)
    inside, positions = _selected(array, operands, shape, mask)
    if array.data.ndim == 0:  # no indices: the one element
        if inside:
            array.data[()] = values[()]
        return
    array.data[positions] = values[inside]
