"""The interpreter's global arrays and tiled views, over writable NumPy views.

``shape`` and ``strides`` are run-time int32 scalars (int64 with ``IndexedWithInt64``), as on
the GPU; ``ndim`` and ``dtype`` are constants.
"""

import numpy as np

from .. import dtypes as d
from ..enums import PaddingMode
from ..errors import TileValueError
from ..partitions import region_bounds
from ..promotion import Loose
from ..rules import atomics as atomic_rules
from ..rules.calls import numpy_call_error
from ..rules.core import is_python_number
from ..rules.formatting import check_printable
from ..rules import foreign_pointers as pointer_rules
from ..rules import memory as rules
from ..rules.objects import MemoryObject, ObjectTuple
from . import context
from .conversion import convert
from .element_access import atomic_on_indices
from .foreign_pointers import pointer_to, view_of
from .raw_memory import RawArrayMemory
from .scalars import LooseInt
from .tile import Tile, to_tile


def symbolic_shape(ndim):
    """How ``static_eval`` shows an array's shape: ``(?, ?)``.

    >>> from numba_tile.host.arrays import symbolic_shape
    >>> symbolic_shape(2), symbolic_shape(1)
    ('(?, ?)', '(?,)')
    """
    return "(" + ", ".join("?" * ndim) + ("," if ndim == 1 else "") + ")"


class Array(MemoryObject):
    """A global array as tile code sees it: dtype, shape, strides, views and tiled views.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def show(x):
    ...     print(x.ndim, x.dtype, x.shape, x.strides)
    >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
    2 float32 (4, 8) (8, 1)
    """

    __slots__ = ("data", "dtype", "index_dtype", "static_shape_axes", "static_stride_axes")
    is_tile_array = True  # what the memory rules accept as an array
    object_kind = "Array"

    def __init__(self, data, dtype, index_dtype=d.int32, static_shape_axes=(),
                 static_stride_axes=()):
        self.data = data
        self.dtype = dtype
        self.index_dtype = index_dtype
        # axes whose shape/stride an ArrayAnnotation makes compile-time constants
        self.static_shape_axes = tuple(static_shape_axes)
        self.static_stride_axes = tuple(static_stride_axes)

    def describe(self):
        """How error messages name this array.

        >>> import numpy as np, numba_tile as ct
        >>> ct.Array(np.zeros((2, 2), np.float32), ct.float32).describe()
        '2-d float32 array'
        """
        return f"{self.ndim}-d {self.dtype} array"

    @property
    def read_only(self):
        """True for an array that may not be written (a NumPy array with
        ``writeable=False``, a JAX array): the memory rules refuse to store into it.

        >>> import numpy as np, numba_tile as ct
        >>> data = np.zeros(4, np.float32)
        >>> data.flags.writeable = False
        >>> ct.Array(data, ct.float32).read_only
        True
        """
        return not self.data.flags.writeable

    def __array__(self, *args, **kwargs):  # what NumPy asks of np.exp(x), np.sum(x)...
        raise numpy_call_error()

    def __format__(self, spec):
        if context.in_static_evaluation():  # (a static_eval's message names it)
            return format(repr(self), spec)
        check_printable(self)  # f"{x}" prints no array in tile code (only a tile from it)
        return format(repr(self), spec)

    def __repr__(self):
        if context.in_static_evaluation():  # as the compiler sees it: shapes at run time
            return f"<array[{self.dtype}, {symbolic_shape(self.data.ndim)}]>"
        return f"<Array {self.dtype} shape={self.data.shape}>"

    @property
    def ndim(self):
        """Number of dimensions (a loosely typed constant).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.ndim, x.dtype)
        >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
        2 float32
        """
        return LooseInt(self.data.ndim)

    @property
    def shape(self):
        """Lengths of the axes: a tuple of run-time int32 scalars (constants for the axes an
        ``ArrayAnnotation(static_shape_dims=...)`` names).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.shape, x.shape[0].dtype)
        >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
        (4, 8) int32
        """
        return ObjectTuple(LooseInt(n) if axis in self.static_shape_axes else
                           Tile(self.index_dtype, np.array(n))
                           for axis, n in enumerate(self.data.shape))

    @property
    def strides(self):
        """Strides in elements: a tuple of run-time int32 scalars.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.strides)
        >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
        (8, 1)
        """
        itemsize = self.data.itemsize
        return ObjectTuple(LooseInt(s // itemsize) if axis in self.static_stride_axes else
                           Tile(self.index_dtype, np.array(s // itemsize))
                           for axis, s in enumerate(self.data.strides))

    @context.checked_method
    def slice(self, axis, start, stop):
        """A view restricted to ``start:stop`` along ``axis`` (no copy).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     sub = x.slice(axis=0, start=1, stop=3)
        ...     print(ct.load(sub, (0, 0), shape=(2, 4)))
        >>> ct.launch(0, (1,), show, (np.arange(16).reshape(4, 4),))
        [[4, 5, 6, 7], [8, 9, 10, 11]]
        """
        context.check_effect("slice")
        axis = rules.slice_axis(axis, self.ndim)
        start, stop = (rules.index_value(start, "start"), rules.index_value(stop, "stop"))
        # (constants are checked as the compiler checks them; the rest when it runs)
        rules.check_constant_slice_bounds(*(rules.constant_value(v, None) for v in (start,
                                                                                 stop)))
        start, stop = int(start), int(stop)
        rules.check_slice_bounds(axis, start, stop, self.data.shape[axis])
        key = [slice(None)] * self.ndim
        key[axis] = slice(start, stop)
        # (the sliced axis's length is no longer the one the kernel was specialized to)
        return Array(self.data[tuple(key)], self.dtype, self.index_dtype,
                     tuple(a for a in self.static_shape_axes if a != axis),
                     self.static_stride_axes)

    @context.checked_method
    def tiled_view(self, tile_shape, *, padding_mode=PaddingMode.UNDETERMINED,
                   traversal_steps=None):
        """A :class:`TiledView` of this array with a fixed tile shape.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     tv = x.tiled_view((2, 4), traversal_steps=(1, 4))
        ...     print(tv.num_tiles(0), tv.load((1, 0)))
        >>> ct.launch(0, (1,), show, (np.arange(16).reshape(4, 4),))
        3 [[4, 5, 6, 7], [8, 9, 10, 11]]
        """
        context.check_effect("tiled_view")
        shape, steps, padding = rules.tiled_view(self, tile_shape, padding_mode, traversal_steps)
        return TiledView(self, shape, steps, padding)

    @context.checked_method
    def get_raw_memory(self):
        """The array's memory addressed by element offsets from its first element: a
        :class:`~numba_tile.host.raw_memory.RawArrayMemory`.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.get_raw_memory().load_offset(ct.arange(4, dtype=ct.int32) + 5))
        >>> ct.launch(0, (1,), show, (np.arange(12, dtype=np.int32).reshape(3, 4),))
        [5, 6, 7, 8]
        """
        context.check_effect("get_raw_memory")
        return RawArrayMemory(self)

    @property
    def foreign_pointer(self):
        """The array's base pointer: a run-time scalar of dtype
        ``ct.foreign_pointer_dtype(self.dtype)``, with no arithmetic, for
        :meth:`from_foreign` to make an array of.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     p = x.foreign_pointer
        ...     ct.static_assert(p.dtype == ct.foreign_pointer_dtype(ct.float32))
        ...     print(p.shape)
        >>> ct.launch(0, (1,), show, (np.zeros(4, np.float32),))
        ()
        """
        return pointer_to(self.data, self.dtype)


@context.tile_op
def from_foreign(pointer, shape, strides):
    """``Array.from_foreign`` (a static method): an array of the pointer's pointee dtype at
    ``pointer`` (a scalar foreign pointer) with ``shape`` and ``strides`` (in elements):
    equal-length tuples of non-negative signed integer scalars, constants or run-time
    values. Its shape and strides are int64 where an item is an int64, int32 otherwise. The
    interpreter refuses an array that would reach outside the memory of the array the
    pointer came from (``TileValueError``); compiled code checks nothing at run time.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def rows(x):
    ...     view = ct.Array.from_foreign(x.foreign_pointer, (2, x.shape[1]), (x.shape[1], 1))
    ...     print(ct.load(view, (0, 0), shape=(2, 4)))
    >>> ct.launch(0, (1,), rows, (np.arange(12, dtype=np.int32).reshape(3, 4),))
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    dtype, _, index_dtype = pointer_rules.from_foreign(pointer, shape, strides)
    data = view_of(pointer, [int(n) for n in shape], [int(s) for s in strides])
    return Array(data, dtype, index_dtype)


Array.from_foreign = staticmethod(from_foreign)


def partition_region(array, tile_shape, block_id):
    """The region of a ``ct.partition`` argument (the whole :class:`Array`, divided into
    ``tile_shape`` regions) that the block ``block_id`` (``(x, y, z)``) writes: a view of the
    elements :func:`numba_tile.partitions.region_bounds` gives along each axis. Its shape
    differs from block to block, so no axis keeps a static shape.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.host.arrays import partition_region
    >>> whole = ct.Array(np.arange(10, dtype=np.int32), ct.int32)
    >>> partition_region(whole, (4,), (2, 0, 0)).data
    array([8, 9], dtype=int32)
    """
    key = tuple(slice(*region_bounds(block, extent, length))
                for block, extent, length in zip(block_id, tile_shape, array.data.shape))
    return Array(array.data[key], array.dtype, array.index_dtype, (), array.static_stride_axes)


class TiledView(MemoryObject):
    """The tile space of an array: tiles of one shape at origins ``index * traversal_steps``.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def double(x):
    ...     tv = x.tiled_view((4,))
    ...     tv.store((ct.bid(0),), tv.load((ct.bid(0),)) * 2)
    >>> a = np.arange(8, dtype=np.int32)
    >>> ct.launch(0, (2,), double, (a,))
    >>> a
    array([ 0,  2,  4,  6,  8, 10, 12, 14], dtype=int32)
    """

    __slots__ = ("array", "tile_shape", "traversal_steps", "padding_mode")
    object_kind = "TiledView"

    def __init__(self, array, tile_shape, traversal_steps, padding_mode):
        self.array = array
        self.tile_shape = tile_shape
        self.traversal_steps = traversal_steps
        self.padding_mode = padding_mode

    def describe(self):
        """How error messages name this view.

        >>> import numpy as np, numba_tile as ct
        >>> a = ct.Array(np.zeros(8, np.int8), ct.int8)
        >>> ct.TiledView(a, (4,), (4,), ct.PaddingMode.ZERO).describe()
        'tiled view of a 1-d int8 array with tiles (4,)'
        """
        return f"tiled view of a {self.array.describe()} with tiles {self.tile_shape}"

    @property
    def dtype(self):
        """The array's dtype.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.tiled_view((2, 4)).dtype)
        >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
        float32
        """
        return self.array.dtype

    @context.checked_method
    def num_tiles(self, axis):
        """Number of tiles along ``axis`` (a run-time int32 scalar).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.tiled_view((2, 4)).num_tiles(1))
        >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
        2
        """
        axis = rules.slice_axis(axis, self.array.ndim)
        n = rules.view_tile_count(self.array.data.shape[axis], self.tile_shape[axis],
                                  self.traversal_steps[axis])
        return Tile(self.array.index_dtype, np.array(n))

    @context.checked_method
    def load(self, index, *, check_bounds=True, latency=None, allow_tma=None):
        """Load the tile at ``index`` (padding elements past the end).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def show(x):
        ...     print(x.tiled_view((2, 4)).load((1, 1)))
        >>> ct.launch(0, (1,), show, (np.zeros((4, 8), np.float32),))
        [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
        """
        context.check_effect("load")
        rules.check_hints("load()", check_bounds, latency, allow_tma)
        origin = rules.view_origin(index, self.tile_shape, self.traversal_steps)
        values = read_region(self.array.data, origin, self.tile_shape, self.padding_mode,
                             self.array.dtype)
        return Tile(self.array.dtype, values)

    @context.checked_method
    def store(self, index, tile, *, check_bounds=True, latency=None, allow_tma=None):
        """Store ``tile`` at ``index`` (dropping elements past the end).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def fill(x):
        ...     x.tiled_view((2,)).store((1,), ct.full((2,), 5, ct.int32))
        >>> a = np.zeros(4, np.int32)
        >>> ct.launch(0, (1,), fill, (a,))
        >>> a
        array([0, 0, 5, 5], dtype=int32)
        """
        context.check_effect("store")
        rules.check_hints("store()", check_bounds, latency, allow_tma)
        origin = rules.view_origin(index, self.tile_shape, self.traversal_steps, "store")
        value = to_tile(tile)
        # (a Python number is a loosely typed constant to the rule, as compiled)
        rules.view_store_tile(self, Loose(tile) if is_python_number(tile) else value)
        tile = value
        values = np.broadcast_to(tile.values, self.tile_shape)
        write_region(self.array.data, origin, values, tile.dtype, self.array.dtype)

    def _atomic_store(self, op, index, update):
        """``TiledView.atomic_store_<op>``: an ``atomic_<op>`` on each element of the tile at
        ``index`` (elements outside the array untouched)."""
        context.check_effect(f"atomic_store_{op}")
        update = atomic_rules.view_atomic_store(op, self, index, update)
        origin = rules.view_origin(index, self.tile_shape, self.traversal_steps,
                                   f"atomic_store_{op}")
        operands = []
        for axis, (start, length) in enumerate(zip(origin, self.tile_shape)):
            place = [1] * len(self.tile_shape)
            place[axis] = length
            operands.append(Tile(d.int64, (np.arange(length) + start).reshape(place)))
        atomic_on_indices(op, self.array, operands, tuple(self.tile_shape), update, None)


def _atomic_store_method(op, effect, result):
    def atomic_store(self, index, update, /):
        self._atomic_store(op, index, update)
    atomic_store.__name__ = f"atomic_store_{op}"
    atomic_store.__qualname__ = f"TiledView.atomic_store_{op}"
    atomic_store.__doc__ = f"""Atomically {effect}, element by element, in the tile at ``index``
        (``update`` broadcast to the tile shape; elements outside the array are untouched).
        Nothing is returned and nothing is ordered: ``ct.atomic_{op}`` gives the old values
        and takes a memory order.

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def update(x):
        ...     x.tiled_view((4,)).atomic_store_{op}((0,), ct.full((4,), 6, ct.int32))
        >>> x = np.array([3, 3, 3, 3, 3], np.int32)
        >>> ct.launch(0, (2,), update, (x,))
        >>> x.tolist()
        [{result}, {result}, {result}, {result}, 3]
        """
    return atomic_store


for _op, _effect, _twice in (
        ("add", "adds ``update``", 15), ("max", "keeps the larger of the two", 6),
        ("min", "keeps the smaller of the two", 3), ("and", "ANDs the bits of ``update``", 2),
        ("or", "ORs the bits of ``update``", 7), ("xor", "XORs the bits of ``update``", 3)):
    setattr(TiledView, f"atomic_store_{_op}",
            context.checked_method(_atomic_store_method(_op, _effect, _twice)))


def padding_value(mode, dtype):
    """The value a load gives out-of-bounds elements (UNDETERMINED pads with zero here)."""
    if mode in (PaddingMode.UNDETERMINED, PaddingMode.ZERO):
        return 0
    if not dtype.is_float:
        if mode is PaddingMode.NEG_ZERO:
            return 0
        raise TileValueError(f"padding_mode {mode.name} needs a floating-point array, got "
                             f"{dtype}")
    return {PaddingMode.NEG_ZERO: -0.0, PaddingMode.NAN: np.nan, PaddingMode.POS_INF: np.inf,
            PaddingMode.NEG_INF: -np.inf}[mode]


def _overlap(origin, tile_shape, array_shape):
    """Slices into the tile and into the array for the part of the tile inside the array."""
    tile_key, array_key = [], []
    for start, size, length in zip(origin, tile_shape, array_shape):
        low, high = max(start, 0), min(start + size, length)
        if low >= high:
            return None
        tile_key.append(slice(low - start, high - start))
        array_key.append(slice(low, high))
    return tuple(tile_key), tuple(array_key)


def read_region(data, origin, tile_shape, padding_mode, dtype):
    """The tile of ``tile_shape`` whose first element is at ``origin`` (element coordinates)."""
    out = convert(np.full(tile_shape, padding_value(padding_mode, dtype), np.float64
                          if dtype.is_float else np.int64), d.float64 if dtype.is_float
                  else d.int64, dtype)
    out = np.array(out, dtype=dtype.storage)
    overlap = _overlap(origin, tile_shape, data.shape)
    if overlap is not None:
        out[overlap[0]] = data[overlap[1]]
    return out


def write_region(data, origin, values, src_dtype, dst_dtype):
    """Write ``values`` (stored as ``src_dtype``) at ``origin``, dropping what falls outside."""
    overlap = _overlap(origin, values.shape, data.shape)
    if overlap is not None:
        data[overlap[1]] = convert(values[overlap[0]], src_dtype, dst_dtype)
