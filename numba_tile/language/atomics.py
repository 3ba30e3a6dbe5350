"""Atomic read-modify-writes at index tiles: ``atomic_cas``, ``atomic_xchg``, ``atomic_add``,
``atomic_max``, ``atomic_min``, ``atomic_and``, ``atomic_or``, ``atomic_xor``.

The rules are in :mod:`numba_tile.rules.atomics`. The interpreter applies the elements one
after another in row-major order (on the GPU their order is unspecified), so that repeated
indices see each other's updates (:mod:`numba_tile.host.element_access`, which the arrays'
atomic methods share). An element whose index is outside the array (when
``check_bounds``, the default) or whose mask is false is not touched: ``atomic_cas`` returns
its ``expected`` value there, the other operations 0.
"""

from ..enums import MemoryOrder, MemoryScope
from ..host.context import tile_op
from ..host.element_access import atomic_on_indices
from ..rules import atomics as rules


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
