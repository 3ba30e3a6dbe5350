"""The elements of an array that an access at index tiles touches, and atomics applied to
them one after another: what ``ct.gather``/``ct.scatter``, the atomics and the arrays' atomic
methods (``TiledView.atomic_store_add``, ``RawArrayMemory.atomic_add_offset``...) compute
with in the interpreter.

Atomics are applied in row-major order (on the GPU their order is unspecified), so that
repeated indices see each other's updates.

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.host.element_access import selected_at
>>> array = ct.Array(np.arange(4, dtype=np.int32), ct.int32)
>>> inside, positions = selected_at(array, [np.array([1, 5, 3])], (3,), None)
>>> inside.tolist(), positions
([True, False, True], (array([1, 3]),))
"""

import numpy as np

from .. import dtypes as d
from ..promotion import Loose
from .tile import Tile, values_as


def index_values(operand, shape):
    """An index operand's values broadcast to ``shape``, in its own integer dtype (so that
    uint64 indices compare exactly)."""
    if isinstance(operand, Loose):
        return np.broadcast_to(np.array(int(operand.value), dtype=object), shape)
    return np.broadcast_to(np.asarray(operand.values), shape)


def selected(array, operands, shape, mask):
    """``(inside, positions)``: where an element is accessed (inside the array and the mask
    true), and the array positions of those elements."""
    return selected_at(array, [index_values(op, shape) for op in operands], shape, mask)


def selected_at(array, indices, shape, mask):
    """:func:`selected` of index values (one array of ``shape`` per axis)."""
    inside = np.ones(shape, bool)
    for values, length in zip(indices, array.data.shape):
        inside &= (values >= 0) & (values < length)
    if mask is not None:
        inside &= np.broadcast_to(values_as(mask, d.bool_), shape)
    positions = tuple(np.asarray(values[inside], dtype=np.int64) for values in indices)
    return inside, positions


def _unsigned(dtype):
    return np.dtype(f"u{np.dtype(dtype.storage).itemsize}")


def _combine(op, dtype, old, update):
    """The new value of an element: ``old`` combined with ``update`` (0-d arrays of the
    array's storage dtype), wrapping around for integers, rounded once for floats."""
    if op == "xchg":
        return update
    if op == "add":
        if dtype in (d.float16, d.bfloat16):  # the exact sum (float64 holds it), rounded once
            return np.asarray(np.float64(old) + np.float64(update)).astype(old.dtype)
        with np.errstate(over="ignore"):
            return np.add(old, update, dtype=old.dtype)
    function = {"max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
                "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    return function(old, update)


def apply_atomics(op, dtype, element, count, updates, expected=None):
    """Apply ``count`` atomics one after another: ``element(k)`` is the 0-d view of the
    ``k``-th element touched, ``updates[k]`` its update (its desired value for a ``cas``,
    with ``expected[k]``). Returns the old values."""
    old_values = np.empty(count, dtype=np.dtype(dtype.storage))
    bits = _unsigned(dtype)
    for k in range(count):
        place = element(k)
        old = place.copy()
        old_values[k] = old
        if op == "cas":
            if old.view(bits) == expected[k:k + 1].view(bits)[0]:
                place[...] = updates[k]
        else:
            place[...] = _combine(op, dtype, old, updates[k:k + 1].reshape(()))
    return old_values


def atomic_on_indices(op, array, operands, shape, updates, expected, mask=None):
    """The atomics of one call at index operands: the old values as a tile of ``shape``."""
    dtype = array.dtype
    inside, positions = selected(array, operands, shape, mask)
    update_values = np.broadcast_to(values_as(updates, dtype), shape)
    if op == "cas":
        expected_values = np.broadcast_to(values_as(expected, dtype), shape)
        out = np.array(expected_values, dtype=dtype.storage)
        expected_touched = np.ascontiguousarray(expected_values[inside])
    else:
        out = np.zeros(shape, dtype=dtype.storage)
        expected_touched = None
    count = int(np.count_nonzero(inside))
    if array.data.ndim == 0:
        def element(k):
            return array.data[...]
    else:
        def element(k):
            return array.data[tuple(slice(p[k], p[k] + 1) for p in positions)].reshape(())
    old = apply_atomics(op, dtype, element, count,
                        np.ascontiguousarray(update_values[inside]), expected_touched)
    out[inside] = old
    return Tile(dtype, out)
