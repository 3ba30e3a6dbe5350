"""Rules of the shape ops: reshape, permute, transpose, expand_dims, broadcast_to, extract, cat,
and the byte views ``pack_to_bytes``/``unpack_from_bytes``.

>>> import numba_tile as ct
>>> from numba_tile.rules.shapes import permute_axes
>>> permute_axes((1, 0, 2), 3)
(1, 0, 2)
"""

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose
from .core import (broadcast_shapes, constant_value, describe, is_python_number,
                   is_tile_or_scalar, normalize_axis, product,
                   require_constant, tile_shape)


def reshape(shape_in, shape):
    """The new shape of a row-major reshape; sizes must match. One entry may be -1: the
    length that makes them match.

    >>> from numba_tile.rules.shapes import reshape
    >>> reshape((4, 8), (-1,)), reshape((4, 8), (2, -1))
    ((32,), (2, 16))
    """
    value = constant_value(shape, None)
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, tuple) and value.count(-1) == 1:
        known = product(n for n in value if n != -1)
        if known <= 0 or product(shape_in) % known:
            raise TileValueError(f"Cannot reshape a tile of shape {tuple(shape_in)} to "
                                 f"{value}: no length for -1 makes the sizes match")
        shape = tuple(product(shape_in) // known if n == -1 else n for n in value)
    new = tile_shape(shape, "reshape")
    if product(new) != product(shape_in):
        raise TileValueError(f"Cannot reshape a tile of shape {tuple(shape_in)} "
                             f"({product(shape_in)} elements) to {new} ({product(new)} elements)")
    return new


def permute_axes(axes, ndim):
    """A validated permutation of ``range(ndim)``."""
    axes = require_constant(axes, "axes")
    if not isinstance(axes, tuple) or sorted(
            normalize_axis(a, ndim) for a in axes) != list(range(ndim)):
        raise TileValueError(f"axes {axes!r} is not a permutation of the {ndim} axes")
    return tuple(normalize_axis(a, ndim) for a in axes)


def transpose_axes(ndim, axis0, axis1):
    """The permutation that ``transpose(axis0, axis1)`` applies."""
    if axis0 is None and axis1 is None:
        if ndim != 2:
            raise TileValueError(f"transpose() without axes needs a 2-d tile, got rank {ndim}; "
                                 f"name the two axes to swap")
        return (1, 0)
    if axis0 is None or axis1 is None:
        raise TileTypeError("transpose() needs both axis0 and axis1, or neither")
    a, b = normalize_axis(axis0, ndim, "axis0"), normalize_axis(axis1, ndim, "axis1")
    axes = list(range(ndim))
    axes[a], axes[b] = axes[b], axes[a]
    return tuple(axes)


def expand_dims(shape_in, axis):
    """The shape with a new axis of length 1 at ``axis``."""
    ndim = len(shape_in)
    axis = normalize_axis(axis, ndim + 1)
    return tuple(shape_in[:axis]) + (1,) + tuple(shape_in[axis:])


def broadcast_to(shape_in, shape):
    """Validate ``broadcast_to``: the target must be what broadcasting gives."""
    target = tile_shape(shape, "broadcast_to")
    if len(target) < len(shape_in) or broadcast_shapes(shape_in, target) != target:
        raise TileValueError(f"Cannot broadcast a tile of shape {tuple(shape_in)} to {target}")
    return target


def extract(shape_in, index, shape, what="extract"):
    """Validate ``extract`` (or ``insert``): the index into the tile space of ``shape``
    within the tile; constant index entries must lie inside it."""
    sub = tile_shape(shape, what)
    if len(sub) != len(shape_in):
        raise TileValueError(f"extract shape {sub} must have the tile's rank {len(shape_in)}")
    for i, (outer, inner) in enumerate(zip(shape_in, sub)):
        if inner > outer:
            raise TileValueError(f"extract shape {sub} is larger than the tile's {shape_in} "
                                 f"along axis {i}")
    if not isinstance(index, tuple) or len(index) != len(sub):
        raise TileTypeError(f"extract index must be a tuple of {len(sub)} integers, "
                            f"got {describe(index)}")
    for item in index:  # an integer constant or an integer scalar each
        value = item.value if isinstance(item, Loose) else item
        integral = isinstance(value, int) and not isinstance(value, bool) if \
            is_python_number(value) else is_tile_or_scalar(item)  # (tiles: checked later)
        if not integral:
            raise TileTypeError(f"Index entries must be integers, got {describe(item)}")
    starts = [constant_value(i, None) for i in index]
    if any(start is not None and not 0 <= start < outer // inner
           for start, outer, inner in zip(starts, shape_in, sub)):  # constants: checked now
        shown = tuple("?" if start is None else start for start in starts)
        raise TileValueError(f"{what} index {shown} is outside the tile")
    return sub


def cat(shape_a, shape_b, axis):
    """The shape of concatenating two tiles of identical shape along ``axis``."""
    if tuple(shape_a) != tuple(shape_b):
        raise TileValueError(f"cat() needs two tiles of identical shape, got {tuple(shape_a)} "
                             f"and {tuple(shape_b)}")
    axis = normalize_axis(axis, len(shape_a))
    out = list(shape_a)
    out[axis] *= 2
    return tuple(out), axis


def bad_index_item(item):
    """The error of ``t[item]`` for what indexes no tile (an integer, a string, an array),
    in both executors.

    >>> from numba_tile.rules.shapes import bad_index_item
    >>> bad_index_item("a").message
    "Tiles can only be indexed with ':', None and '...' (to add axes), got str 'a'; use ..."
    """
    return TileTypeError(f"Tiles can only be indexed with ':', None and '...' (to add axes), "
                         f"got {_key_text(item)}; use ct.extract for sub-tiles")


def index_key(key, ndim):
    """Validate ``t[...]`` indexing (only ``:``, ``None`` and ``...``); return NumPy's key."""
    items = key if isinstance(key, tuple) else (key,)
    consumed = 0
    for item in items:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, slice) and all(b is None for b in (item.start, item.stop, item.step)):
            consumed += 1
            continue
        raise bad_index_item(item)
    if consumed > ndim:
        raise TileValueError(f"Too many ':' for a tile of rank {ndim}")
    return items


def _key_text(item):
    """An item of a tile's index as messages name it: a slice as written (``1:3``) where its
    bounds are constants, anything else as :func:`describe` does."""
    if isinstance(item, slice):
        bounds = [constant_value(bound, None) for bound in (item.start, item.stop, item.step)]
        if any(bound is None and given is not None for bound, given in
               zip(bounds, (item.start, item.stop, item.step))):
            return "a slice with run-time bounds"
        text = ":".join("" if bound is None else repr(bound) for bound in bounds[:2])
        return f"the slice {text}" + (f":{bounds[2]!r}" if bounds[2] is not None else "")
    return describe(item)


def bitcast(source, target):
    """Rule of ``bitcast``: ``source`` and ``target`` dtypes must have the same width (bits
    and storage bytes). Returns ``target``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.shapes import bitcast
    >>> bitcast(ct.float32, ct.int32)
    int32
    """
    if d.bool_ in (source, target):
        # a bool_ is one bit in cuTile (its byte here is storage): no other dtype has its width
        raise TileTypeError(f"bitcast() cannot reinterpret {source} as {target}: bool_ has no "
                            f"bit pattern to share; convert with astype() instead")
    if target.bitwidth != source.bitwidth:
        raise TileTypeError(f"bitcast() needs dtypes of the same width, got {source} and "
                            f"{target}")
    return target


def pack_to_bytes(dtype, shape):
    """The length of the uint8 tile ``pack_to_bytes`` makes of a tile of ``dtype`` and
    ``shape`` (its elements row-major, each as its bytes in memory order; float4 elements
    two to a byte, the first in the low nibble).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.shapes import pack_to_bytes
    >>> pack_to_bytes(ct.float16, (4, 8))
    (64,)
    """
    if dtype is d.bool_:
        raise TileTypeError("Cannot pack_to_bytes from a bool_ tile; convert it with astype() "
                            "first")
    bits = product(shape) * dtype.bitwidth
    if bits % 8:  # float4: two elements to a byte
        raise TileTypeError(f"pack_to_bytes: a tile of {product(shape)} {dtype} elements "
                            f"is {bits} bits, not a whole number of bytes")
    return (bits // 8,)


def unpack_from_bytes(dtype, shape, target):
    """The length of the ``target`` tile ``unpack_from_bytes`` reads from a uint8 tile of
    ``dtype`` and ``shape``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.shapes import unpack_from_bytes
    >>> unpack_from_bytes(ct.uint8, (64,), ct.float32)
    (16,)
    """
    if dtype is not d.uint8:
        raise TileTypeError(f"unpack_from_bytes requires uint8 tile, got a {dtype} tile")
    if len(shape) != 1:
        raise TileTypeError(f"unpack_from_bytes requires a 1D tile, got shape {tuple(shape)}")
    if target is d.bool_:
        raise TileTypeError("Cannot unpack_from_bytes to a bool_ tile")
    bits = shape[0] * 8
    if bits % target.bitwidth:
        raise TileTypeError(f"unpack_from_bytes: the tile's {bits} bits are not divisible by "
                            f"{target.bitwidth}, the width of {target}")
    return (bits // target.bitwidth,)
