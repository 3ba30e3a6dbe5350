"""Shape ops: reshape, permute, transpose, expand_dims, broadcast_to, extract, insert, cat,
bitcast, and ``t[:, None]`` indexing. None of them changes the dtype. The tile methods that
call them (``t.reshape(...)``, ``t.item()``, ``t[:, None]``...) are attached here too.
"""

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..host.bit_patterns import from_bits, packed_bytes, to_bits, unpacked_bytes
from ..host.context import tile_op
from ..host.tile import Tile, tile_argument, to_tile
from ..rules import shapes as rules
from ..rules.core import describe, dtype_argument, index_items, is_python_number, normalize_axis
from .tile_methods import tile_method


@tile_op
def reshape(x, /, shape):
    """Reshape in row-major order; every dimension a power of two.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.reshape(ct.arange(8, dtype=ct.int32), (2, 4)))
    >>> ct.launch(0, (1,), show, ())
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    x = tile_argument(x, "reshape")
    new = rules.reshape(x.shape, shape)
    return Tile(x.dtype, x.values.reshape(new), x.is_constant)


@tile_op
def permute(x, /, axes):
    """Reorder the axes: result axis ``i`` is input axis ``axes[i]``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(8, dtype=ct.int32), (2, 2, 2))
    ...     print(ct.permute(t, (2, 0, 1)).shape, ct.permute(t, (2, 0, 1)))
    >>> ct.launch(0, (1,), show, ())
    (2, 2, 2) [[[0, 2], [4, 6]], [[1, 3], [5, 7]]]
    """
    x = tile_argument(x, "permute")
    axes = rules.permute_axes(axes, x.ndim)
    return Tile(x.dtype, np.transpose(x.values, axes), x.is_constant)


@tile_op
def transpose(x, /, axis0=None, axis1=None):
    """Swap two axes; with no axes, transpose a 2-d tile.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.transpose(ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))))
    >>> ct.launch(0, (1,), show, ())
    [[0, 2], [1, 3]]
    """
    x = tile_argument(x, "transpose")
    axes = rules.transpose_axes(x.ndim, axis0, axis1)
    return Tile(x.dtype, np.transpose(x.values, axes), x.is_constant)


@tile_op
def expand_dims(x, /, axis):
    """Insert an axis of length 1 (``t[:, None]`` does the same).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.expand_dims(ct.arange(2, dtype=ct.int32), 1))
    >>> ct.launch(0, (1,), show, ())
    [[0], [1]]
    """
    x = tile_argument(x, "expand_dims")
    shape = rules.expand_dims(x.shape, axis)
    return Tile(x.dtype, x.values.reshape(shape), x.is_constant)


@tile_op
def broadcast_to(x, /, shape):
    """Broadcast to a larger shape (NumPy rules).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.broadcast_to(ct.arange(2, dtype=ct.int32), (2, 2)))
    >>> ct.launch(0, (1,), show, ())
    [[0, 1], [0, 1]]
    """
    x = tile_argument(x, "broadcast_to")
    target = rules.broadcast_to(x.shape, shape)
    return Tile(x.dtype, np.broadcast_to(x.values, target), x.is_constant)


def _region(starts, sub):
    """The slices of the sub-tile of shape ``sub`` at tile-space index ``starts`` (a region
    outside the tile comes out empty or short: the caller's error, as a run-time index's
    value is known here)."""
    return tuple(slice(int(i) * s, (int(i) + 1) * s) for i, s in zip(starts, sub))


@tile_op
def extract(x, /, index, shape):
    """The sub-tile at ``index`` in the tile space of ``shape`` within ``x``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(16, dtype=ct.int32), (4, 4))
    ...     print(ct.extract(t, (1, 0), (2, 2)))
    >>> ct.launch(0, (1,), show, ())
    [[8, 9], [12, 13]]
    """
    x = tile_argument(x, "extract")
    sub = rules.extract(x.shape, index, shape)
    unit = sub or (1,) * x.ndim
    values = x.values[_region(index_items(index, "extract"), unit)]
    if values.shape != unit:
        raise TileValueError(f"extract index {index} is outside the tile")
    return Tile(x.dtype, values.reshape(sub), x.is_constant)


@tile_op
def insert(x, /, index, value):
    """A copy of ``x`` with the sub-tile at ``index`` (in the tile space of ``value``'s
    shape) replaced by ``value``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.zeros((4,), ct.int32)
    ...     print(ct.insert(t, (1,), ct.ones((2,), ct.int32)))
    >>> ct.launch(0, (1,), show, ())
    [0, 0, 1, 1]
    """
    x = tile_argument(x, "insert")
    value = to_tile(value) if is_python_number(value) else tile_argument(value, "insert", 3)
    rules.insert(x.dtype, x.shape, index, value.dtype, value.shape)
    unit = value.shape or (1,) * x.ndim
    out = np.array(x.values)
    region = _region(index_items(index, "insert"), unit)
    if out[region].shape != unit:
        raise TileValueError(f"insert index {index} is outside the tile")
    out[region] = value.values.reshape(unit)
    return Tile(x.dtype, out, x.is_constant and value.is_constant)


@tile_op
def cat(tiles, /, axis):
    """Concatenate two tiles of identical shape along ``axis``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     a = ct.arange(2, dtype=ct.int32)
    ...     print(ct.cat((a, a + 2), 0))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 2, 3]
    """
    if not isinstance(tiles, tuple):
        raise TileTypeError(f"cat() needs a tuple of two tiles, got {describe(tiles)}")
    rules.cat_count(len(tiles))
    if len(tiles) == 1:  # (cuTile's: the tile itself)
        only = tile_argument(tiles[0], "cat")
        normalize_axis(axis, only.ndim)
        return only
    a, b = tile_argument(tiles[0], "cat"), tile_argument(tiles[1], "cat")
    _, axis = rules.cat(a.dtype, a.shape, b.dtype, b.shape, axis)
    return Tile(a.dtype, np.concatenate([a.values, b.values], axis), a.is_constant and
                b.is_constant)


@tile_op
def bitcast(x, /, dtype):
    """Reinterpret the bits of each element as another dtype of the same width.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.bitcast(ct.full((2,), 1.0, ct.float32), ct.int32))
    >>> ct.launch(0, (1,), show, ())
    [1065353216, 1065353216]
    """
    x = tile_argument(x, "bitcast")
    dtype = rules.bitcast(x.dtype, dtype_argument(dtype, "bitcast"))
    return Tile(dtype, from_bits(to_bits(x.values, x.dtype), dtype), x.is_constant)


def index_tile(x, key):
    """``t[:, None]`` and friends: add axes of length 1."""
    items = rules.index_key(key, x.ndim)
    return Tile(x.dtype, x.values[items], x.is_constant)


@tile_op
def pack_to_bytes(x, /):
    """The bytes of a tile: its elements row-major, each as its bytes in memory order, as a
    1-d uint8 tile.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.pack_to_bytes(ct.full((1,), 0x04030201, ct.int32)))
    >>> ct.launch(0, (1,), show, ())
    [1, 2, 3, 4]
    """
    x = tile_argument(x, "pack_to_bytes")
    rules.pack_to_bytes(x.dtype, x.shape)
    data = packed_bytes(np.ascontiguousarray(x.values).reshape(-1), x.dtype)
    return Tile(d.uint8, data.copy(), x.is_constant)


@tile_op
def unpack_from_bytes(x, /, dtype):
    """A 1-d uint8 tile's bytes read as elements of ``dtype`` (the inverse of
    :func:`pack_to_bytes`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.unpack_from_bytes(ct.arange(4, dtype=ct.uint8) + 1, ct.int32))
    >>> ct.launch(0, (1,), show, ())
    [67305985]
    """
    x = tile_argument(x, "unpack_from_bytes")
    dtype = dtype_argument(dtype, "unpack_from_bytes")
    rules.unpack_from_bytes(x.dtype, x.shape, dtype)
    return Tile(dtype, unpacked_bytes(x.values, dtype).copy(), x.is_constant)


# -- the tile methods of these ops ----------------------------------------------------------
@tile_method("item")
def _tile_item(self):
    """The single element as a scalar: ``reshape(())``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(ct.sum(t).item(), ct.reshape(t, (4, 1))[:, None].shape)
    >>> ct.launch(0, (1,), show, ())
    6 (4, 1, 1)
    """
    return self._op(reshape)(self, ())


@tile_method("reshape")
def _tile_reshape(self, shape):
    """Row-major reshape (see :func:`numba_tile.reshape`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(t.reshape((4,)))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 2, 3]
    """
    return self._op(reshape)(self, shape)


@tile_method("permute")
def _tile_permute(self, axes):
    """Permute the axes (see :func:`numba_tile.permute`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(t.permute((1, 0)))
    >>> ct.launch(0, (1,), show, ())
    [[0, 2], [1, 3]]
    """
    return self._op(permute)(self, axes)


@tile_method("transpose")
def _tile_transpose(self, axis0=None, axis1=None):
    """Swap two axes (see :func:`numba_tile.transpose`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(t.transpose())
    >>> ct.launch(0, (1,), show, ())
    [[0, 2], [1, 3]]
    """
    return self._op(transpose)(self, axis0, axis1)


@tile_method("extract")
def _tile_extract(self, index, shape):
    """A sub-tile (see :func:`numba_tile.extract`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(t.extract((1, 0), (1, 2)))
    >>> ct.launch(0, (1,), show, ())
    [[2, 3]]
    """
    return self._op(extract)(self, index, shape)


@tile_method("insert")
def _tile_insert(self, index, value):
    """A copy with a sub-tile replaced (see :func:`numba_tile.insert`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(t.insert((0, 1), ct.full((2, 1), 9, ct.int32)))
    >>> ct.launch(0, (1,), show, ())
    [[0, 9], [2, 9]]
    """
    return self._op(insert)(self, index, value)


@tile_method("__getitem__")
def _tile_getitem(self, key):
    return self._op(index_tile)(self, key)
