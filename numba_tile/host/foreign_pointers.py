"""The interpreter's foreign pointers: ``Array.foreign_pointer`` is a scalar tile of a
:func:`~numba_tile.dtypes.foreign_pointer_dtype` whose one element is a
:class:`ForeignMemory`, the memory of the array it came from; ``Array.from_foreign`` views
that memory with the shape and strides it is given.

On the GPU a pointer is an address, and an array made from it may reach any memory; here the
array it makes must lie inside the memory of the array the pointer came from, else
``from_foreign`` raises ``TileValueError``, so that the interpreter never reads or writes
memory that is not the kernel's.
"""

import numpy as np

from .. import dtypes as d
from ..errors import TileValueError
from ..rules import foreign_pointers as rules
from .raw_memory import _span
from .tile import Tile


class ForeignMemory:
    """What an interpreted foreign pointer holds: every element between the lowest and the
    highest address of the array it came from (``span``, a 1-d NumPy view) and the position
    of the array's first element in it (``first``), where the pointer points.

    >>> import numpy as np
    >>> from numba_tile.host.foreign_pointers import ForeignMemory
    >>> ForeignMemory(np.arange(6, dtype=np.int32)[::-2])
    <foreign memory: element 4 of 5>
    """

    __slots__ = ("span", "first")

    def __init__(self, data):
        self.span, self.first = _span(data)

    def __repr__(self):
        return f"<foreign memory: element {self.first} of {self.span.size}>"


def pointer_to(data, dtype):
    """The foreign pointer (a run-time scalar tile) to the first element of ``data``, the
    NumPy view of an array of ``dtype``.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.host.foreign_pointers import pointer_to
    >>> p = pointer_to(np.zeros(4, np.float32), ct.float32)
    >>> p.dtype, p.shape
    (foreign_pointer[float32], ())
    """
    # (np.asarray of the object would not do: np.array([x]) may look into x)
    holder = np.empty((), dtype=object)
    holder[()] = ForeignMemory(data)
    return Tile(d.foreign_pointer_dtype(dtype), holder)


def view_of(pointer, shape, strides):
    """The NumPy view that ``Array.from_foreign(pointer, shape, strides)`` makes (``shape``
    and ``strides`` Python ints, strides in elements); ``TileValueError`` where a value is
    negative, or where the view would reach past the memory the pointer came from.

    >>> import numpy as np
    >>> from numba_tile.host.foreign_pointers import pointer_to, view_of
    >>> import numba_tile as ct
    >>> p = pointer_to(np.arange(6, dtype=np.int32), ct.int32)
    >>> view_of(p, (2, 2), (3, 1))
    array([[0, 1],
           [3, 4]], dtype=int32)
    >>> view_of(p, (2, 4), (3, 1))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: from_foreign(): an array of shape (2, 4) and strides ...
    """
    rules.check_run_time_values(shape, strides)
    memory = pointer.values[()]
    room = memory.span.size - memory.first  # elements from the pointer on
    start = memory.span[memory.first:]
    if 0 not in shape:
        last = sum((n - 1) * s for n, s in zip(shape, strides))
        if last >= room:
            raise TileValueError(f"from_foreign(): an array of shape {tuple(shape)} and "
                                 f"strides {tuple(strides)} reaches element {last} past the "
                                 f"pointer, outside the memory of the array it came from "
                                 f"({room} elements from the pointer)")
    else:  # (no element: nothing is reached, the strides need no room)
        start = memory.span[:0]
        strides = (0,) * len(strides)
    itemsize = memory.span.itemsize
    return np.lib.stride_tricks.as_strided(
        start, shape=tuple(shape), strides=tuple(s * itemsize for s in strides),
        writeable=memory.span.flags.writeable)
