"""The interpreter's ``RawArrayMemory``: an array's memory addressed by element offsets from
its first element (``Array.get_raw_memory()``), with loads, stores and atomics.

Offsets reach every element the array's strides cover (for a strided array, the elements in
between too). On the GPU an offset outside that memory is undefined; here it is a
``TileValueError``.
"""

import numpy as np

from .. import dtypes as d
from ..enums import MemoryOrder, MemoryScope
from ..errors import TileValueError
from ..promotion import Loose
from ..rules import atomics as atomic_rules
from ..rules import gather as gather_rules
from ..rules.objects import MemoryObject
from . import context
from .element_access import apply_atomics
from .tile import Tile, values_as


def _span(data):
    """A 1-d view of every element between the lowest and the highest address of ``data``,
    and the position of ``data``'s first element in it."""
    itemsize = data.itemsize
    if data.size == 0:
        return np.empty(0, data.dtype), 0
    low = sum((n - 1) * s for n, s in zip(data.shape, data.strides) if s < 0) // itemsize
    high = sum((n - 1) * s for n, s in zip(data.shape, data.strides) if s > 0) // itemsize
    corner = data[tuple(slice(n - 1, n) if s < 0 else slice(0, 1)
                        for n, s in zip(data.shape, data.strides))]
    span = np.lib.stride_tricks.as_strided(corner, shape=(high - low + 1,),
                                           strides=(itemsize,))
    return span, -low


class RawArrayMemory(MemoryObject):
    """Element-offset access to an array's memory.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def every_other(x, y):
    ...     memory = x.get_raw_memory()
    ...     offsets = ct.arange(4, dtype=ct.int32) * 2
    ...     y.get_raw_memory().store_offset(ct.arange(4, dtype=ct.int32),
    ...                                     memory.load_offset(offsets))
    >>> x, y = np.arange(8, dtype=np.float32), np.zeros(4, np.float32)
    >>> ct.launch(0, (1,), every_other, (x, y))
    >>> y
    array([0., 2., 4., 6.], dtype=float32)
    """

    __slots__ = ("dtype", "_span", "_first")
    object_kind = "RawArrayMemory"

    def __init__(self, array):
        self.dtype = array.dtype
        self._span, self._first = _span(array.data)

    def __repr__(self):
        return f"<RawArrayMemory {self.dtype}, {self._span.size} elements>"

    def _positions(self, operand, shape, mask, what):
        """``(touched, positions)``: where an element is accessed (its mask true) and the
        span positions of those elements; an offset outside the memory is an error."""
        context.check_effect(what)
        if isinstance(operand, Loose):
            offsets = np.broadcast_to(np.array(int(operand.value), dtype=object), shape)
        else:
            offsets = np.broadcast_to(np.asarray(operand.values), shape)
        touched = np.ones(shape, bool)
        if mask is not None:
            touched &= np.broadcast_to(values_as(mask, d.bool_), shape)
        chosen = [int(v) for v in np.asarray(offsets)[touched].reshape(-1)]
        lowest, highest = -self._first, self._span.size - self._first - 1
        for value in chosen:
            if not lowest <= value <= highest:
                raise TileValueError(f"{what}(): offset {value} is outside the array's memory "
                                     f"(offsets {lowest} to {highest})")
        return touched, np.array(chosen, dtype=np.int64) + self._first

    @context.checked_method
    def load_offset(self, offset, /, *, mask=None, padding_value=0, latency=None):
        """The elements at ``offset`` (an integer tile or scalar, in elements from the
        array's first one); ``padding_value`` where ``mask`` is false.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     i = ct.arange(4, dtype=ct.int32)
        ...     print(x.get_raw_memory().load_offset(i * 3, mask=i < 3, padding_value=-1))
        >>> ct.launch(0, (1,), show, (np.arange(12, dtype=np.int32),))
        [0, 3, 6, -1]
        """
        shape, operand, mask, padding = gather_rules.raw_load(self.dtype, offset, mask,
                                                              padding_value, latency)
        touched, positions = self._positions(operand, shape, mask, "load_offset")
        out = np.array(np.broadcast_to(values_as(padding, self.dtype), shape),
                       dtype=self.dtype.storage)
        out[touched] = self._span[positions]
        return Tile(self.dtype, out)

    @context.checked_method
    def store_offset(self, offset, value, /, *, mask=None, latency=None):
        """Store ``value`` (broadcast to the offsets' shape) at ``offset`` where ``mask``
        is true.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def odd(x):
        ...     i = ct.arange(4, dtype=ct.int32)
        ...     x.get_raw_memory().store_offset(i * 2 + 1, 7)
        >>> x = np.zeros(8, np.int32)
        >>> ct.launch(0, (1,), odd, (x,))
        >>> x
        array([0, 7, 0, 7, 0, 7, 0, 7], dtype=int32)
        """
        shape, operand, value, mask = gather_rules.raw_store(self.dtype, offset, value, mask,
                                                             latency)
        touched, positions = self._positions(operand, shape, mask, "store_offset")
        self._span[positions] = np.broadcast_to(values_as(value, self.dtype), shape)[touched]

    def _atomics(self, op, operand, shape, mask, update, expected, what):
        touched, positions = self._positions(operand, shape, mask, what)
        updates = np.broadcast_to(values_as(update, self.dtype), shape)
        if op == "cas":
            expected_values = np.broadcast_to(values_as(expected, self.dtype), shape)
            out = np.array(expected_values, dtype=self.dtype.storage)
            expected_touched = np.ascontiguousarray(expected_values[touched])
        else:
            out = np.zeros(shape, dtype=self.dtype.storage)
            expected_touched = None
        span = self._span
        out[touched] = apply_atomics(
            op, self.dtype, lambda k: span[positions[k]:positions[k] + 1].reshape(()),
            len(positions), np.ascontiguousarray(updates[touched]), expected_touched)
        return Tile(self.dtype, out)

    @context.checked_method
    def atomic_cas_offset(self, offset, expected, desired, /, *, mask=None,
                          memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE):
        """Compare and swap at ``offset``: the old elements (``expected`` where ``mask`` is
        false).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def claim(x):
        ...     i = ct.arange(4, dtype=ct.int32)
        ...     print(x.get_raw_memory().atomic_cas_offset(i, 0, 9, mask=i < 3))
        >>> x = np.array([0, 1, 0, 0], np.int32)
        >>> ct.launch(0, (1,), claim, (x,))
        [0, 1, 0, 0]
        >>> x
        array([9, 1, 9, 0], dtype=int32)
        """
        _, shape, operand, expected, desired, mask, _ = atomic_rules.raw_cas(
            self.dtype, offset, expected, desired, mask, memory_order, memory_scope)
        return self._atomics("cas", operand, shape, mask, desired, expected,
                             "atomic_cas_offset")


def _raw_rmw(op):
    def atomic(self, offset, update, /, *, mask=None, memory_order=MemoryOrder.ACQ_REL,
               memory_scope=MemoryScope.DEVICE):
        _, shape, operand, update, mask, _ = atomic_rules.raw_rmw(
            op, self.dtype, offset, update, mask, memory_order, memory_scope)
        return self._atomics(op, operand, shape, mask, update, None, f"atomic_{op}_offset")
    atomic.__name__ = atomic.__qualname__ = f"atomic_{op}_offset"
    atomic.__doc__ = (f"``atomic_{op}`` at ``offset`` where ``mask`` is true: the old "
                      f"elements (0 where it is false).\n\n"
                      f"        >>> import numpy as np, numba_tile as ct\n"
                      f"        >>> @ct.kernel\n"
                      f"        ... def update(x):\n"
                      f"        ...     memory = x.get_raw_memory()\n"
                      f"        ...     offsets = ct.arange(4, dtype=ct.int32)\n"
                      f"        ...     print(memory.atomic_{op}_offset(offsets, ct.int32(1)))\n"
                      f"        >>> ct.launch(0, (1,), update, (np.arange(4, dtype=np.int32),))\n"
                      f"        [0, 1, 2, 3]\n        ")
    return atomic


for _op in atomic_rules.RMW_DTYPES:
    setattr(RawArrayMemory, f"atomic_{_op}_offset", context.checked_method(_raw_rmw(_op)))
