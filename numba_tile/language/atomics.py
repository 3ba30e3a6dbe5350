"""Atomic read-modify-writes at index tiles: ``atomic_cas``, ``atomic_xchg``, ``atomic_add``,
``atomic_max``, ``atomic_min``, ``atomic_and``, ``atomic_or``, ``atomic_xor``.

The rules are in :mod:`numba_tile.rules.atomics`. The interpreter applies the elements one
after another in row-major order (on the GPU their order is unspecified), so that repeated
indices see each other's updates. An element whose index is outside the array (when
``check_bounds``, the default) or whose mask is false is not touched: ``atomic_cas`` returns
its ``expected`` value there, the other operations 0.
"""

import numpy as np

from .. import dtypes as d
from ..enums import MemoryOrder, MemoryScope
from ..interpreter.context import tile_op
from ..interpreter.tile import Tile, values_as
from ..rules import atomics as rules
from .gather import _selected


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
    inside, positions = _selected(array, operands, shape, mask)
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


def _rmw(op):
    def atomic(array, indices, update, /, *, check_bounds=True,
               memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE):
        _, shape, operands, update, _ = rules.atomic_rmw(op, array, indices, update,
                                                         check_bounds, memory_order,
                                                         memory_scope)
        return atomic_on_indices(op, array, operands, shape, update, None)
    atomic.__name__ = atomic.__qualname__ = f"atomic_{op}"
    return atomic


@tile_op
def atomic_cas(array, indices, expected, desired, /, *, check_bounds=True,
               memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE):
    """Compare and swap, element by element: where ``array[indices]`` equals ``expected``
    (bit for bit) it becomes ``desired``. Returns the old elements (``expected`` where an
    index is outside the array). Indices as in :func:`gather`.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def claim(x):
    ...     old = ct.atomic_cas(x, ct.arange(4, dtype=ct.int32), 0, 42)
    ...     print(old)
    >>> x = np.array([0, 1, 0, 1], np.int32)
    >>> ct.launch(0, (1,), claim, (x,))
    [0, 1, 0, 1]
    >>> x
    array([42,  1, 42,  1], dtype=int32)
    """
    _, shape, operands, expected, desired, _ = rules.atomic_cas(
        array, indices, expected, desired, check_bounds, memory_order, memory_scope)
    return atomic_on_indices("cas", array, operands, shape, desired, expected)


def _documented(op, doc):
    function = _rmw(op)
    function.__doc__ = doc
    return tile_op(function)


_EXAMPLE = """

    Indices as in :func:`gather` (one tile or scalar per axis, broadcast together); ``update``
    broadcasts to their shape. Each element is updated atomically, in an unspecified order;
    the result holds the old elements (0 where an index is outside the array).
    ``memory_order`` (RELAXED, ACQUIRE, RELEASE, ACQ_REL) and ``memory_scope`` (BLOCK,
    CLUSTER, DEVICE, SYS) say what the update orders and for whom.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def update(x):
    ...     print(ct.{name}(x, ct.arange(4, dtype=ct.int32), {update}))
    >>> x = np.array([1, 2, 3, 4], np.int32)
    >>> ct.launch(0, (1,), update, (x,))
    [1, 2, 3, 4]
    >>> x
    array({after}, dtype=int32)
    """

atomic_xchg = _documented("xchg", "Exchange: ``array[indices] = update``, returning the old "
                          "elements." + _EXAMPLE.format(name="atomic_xchg", update=7,
                                                        after="[7, 7, 7, 7]"))
atomic_add = _documented("add", "Add: ``array[indices] += update`` (integers wrap around; "
                         "float16 and bfloat16 need sm_90 for bfloat16), returning the old "
                         "elements." + _EXAMPLE.format(name="atomic_add", update=10,
                                                       after="[11, 12, 13, 14]"))
atomic_max = _documented("max", "Maximum: ``array[indices] = max(array[indices], update)`` "
                         "(integer arrays), returning the old elements." +
                         _EXAMPLE.format(name="atomic_max", update=3, after="[3, 3, 3, 4]"))
atomic_min = _documented("min", "Minimum: ``array[indices] = min(array[indices], update)`` "
                         "(integer arrays), returning the old elements." +
                         _EXAMPLE.format(name="atomic_min", update=2, after="[1, 2, 2, 2]"))
atomic_and = _documented("and", "Bitwise AND into integer arrays (``update`` of the array's "
                         "dtype), returning the old elements." +
                         _EXAMPLE.format(name="atomic_and", update="ct.int32(6)",
                                         after="[0, 2, 2, 4]"))
atomic_or = _documented("or", "Bitwise OR into integer arrays (``update`` of the array's "
                        "dtype), returning the old elements." +
                        _EXAMPLE.format(name="atomic_or", update="ct.int32(1)",
                                        after="[1, 3, 3, 5]"))
atomic_xor = _documented("xor", "Bitwise XOR into integer arrays (``update`` of the array's "
                         "dtype), returning the old elements." +
                         _EXAMPLE.format(name="atomic_xor", update="ct.int32(5)",
                                         after="[4, 7, 6, 1]"))
