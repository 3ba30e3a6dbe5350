"""Rules of the shape ops: reshape, permute, transpose, expand_dims, broadcast_to, extract, cat,
and the byte views ``pack_to_bytes``/``unpack_from_bytes``.

>>> import numba_tile as ct
>>> from numba_tile.rules.shapes import permute_axes
>>> permute_axes((1, 0, 2), 3)
(1, 0, 2)
"""

from .. import dtypes as d
from ..errors import TileTypeError
from ..promotion import Loose
from .core import (check_not_pointer, check_shape_rank, constant_value, describe, index_items,
                   is_python_number, normalize_axis, product, require_constant, tile_shape,
                   type_name)


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
    if isinstance(value, tuple) and all(isinstance(n, int) for n in value):
        for n in value:
            if n < -1:
                raise TileTypeError(f"Dimension can only be -1 or non-negative, got {n}")
        if value.count(-1) > 1:
            raise TileTypeError(f"Only one dimension can be -1, got {value}")
    if isinstance(value, tuple) and value.count(-1) == 1:
        known = product(n for n in value if n != -1)
        if known <= 0 or product(shape_in) % known:
            raise TileTypeError(f"Cannot reshape {tuple(shape_in)} to {value}: no length for "
                                f"-1 makes the sizes match")
        shape = tuple(product(shape_in) // known if n == -1 else n for n in value)
    new = tile_shape(shape, "reshape")
    if product(new) != product(shape_in):
        raise TileTypeError(f"Cannot reshape {tuple(shape_in)} to {new}: "
                            f"{product(shape_in)} elements to {product(new)}")
    return new


def permute_axes(axes, ndim):
    """A validated permutation of ``range(ndim)``, in cuTile's words where it is none.

    >>> from numba_tile.rules.shapes import permute_axes
    >>> permute_axes((0, 0), 2)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Repeated axis #1: 0
    """
    axes = require_constant(axes, "axes")
    if not isinstance(axes, tuple):
        raise TileTypeError(f"axes of permute() must be a tuple of {ndim} axes, got {axes!r}")
    if len(axes) != ndim:
        raise TileTypeError(f"Num axes must match input's rank: {len(axes)} vs {ndim}")
    normalized = tuple(normalize_axis(a, ndim) for a in axes)
    for position, axis in enumerate(normalized):
        if axis in normalized[:position]:
            raise TileTypeError(f"Repeated axis #{position}: {axes[position]}")
    return normalized


def transpose_axes(ndim, axis0, axis1):
    """The permutation that ``transpose(axis0, axis1)`` applies."""
    if ndim < 2:
        raise TileTypeError("Cannot transpose a tile with fewer than 2 dimensions")
    if axis0 is None and axis1 is None:
        if ndim != 2:
            raise TileTypeError("`axes` must be specified for tile with more than 2 dimensions")
        return (1, 0)
    if axis0 is None or axis1 is None:
        raise TileTypeError(f"transpose axes must either both be specified or both be None, "
                            f"got axis0={axis0}, axis1={axis1}")
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
    shape_in = tuple(shape_in)
    trailing = target[len(target) - len(shape_in):] if shape_in else ()
    if len(target) < len(shape_in) or any(n not in (1, m) for n, m in zip(shape_in, trailing)):
        raise TileTypeError(f"Shape {shape_in} is not broadcastable to {target}")
    return target


def extract(shape_in, index, shape):
    """Validate ``extract(x, index, shape)`` of a tile of ``shape_in``, in cuTile's words:
    ``shape`` a tile shape of the tile's rank (or ``()``: the element at ``index``, as a 0-d
    tile), ``index`` into the tile space of sub-tiles of that shape. Returns the result's
    shape.

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.shapes import extract
    >>> extract((4, 8), (Loose(1), Loose(0)), (2, 8))
    (2, 8)
    >>> extract((4, 8), (Loose(2), Loose(0)), (2, 8))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Index 2 out of bounds at dimension #0: valid range is [0, 2) in tile space (input shape (4, 8), result shape (2, 8))
    """
    sub = tile_shape(shape, "extract")
    if sub != ():
        check_shape_rank(sub, len(shape_in), "extract")
    subtile_index(shape_in, sub or (1,) * len(shape_in), index, "extract", "result")
    return sub


def insert(dtype, shape_in, index, value_dtype, value_shape):
    """Validate ``insert(x, index, value)`` of a tile of ``dtype`` and ``shape_in``, in
    cuTile's words: ``value`` of the same dtype, of the tile's rank (or 0-d: one element),
    ``index`` into the tile space of sub-tiles of its shape.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.shapes import insert
    >>> insert(ct.float32, (4,), Loose(1), ct.float32, (2,))
    >>> insert(ct.float32, (4,), Loose(1), ct.int32, ())
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Cannot insert a tile of dtype int32 into a tile of dtype float32
    """
    if value_dtype is not dtype:
        raise TileTypeError(f"Cannot insert a tile of dtype {value_dtype} into a tile of dtype "
                            f"{dtype}")
    value_shape = tuple(value_shape)
    if value_shape == ():
        value_shape = (1,) * len(shape_in)
    elif len(value_shape) != len(shape_in):
        raise TileTypeError(f"Value rank {len(value_shape)} does not match the tile rank "
                            f"{len(shape_in)}")
    subtile_index(shape_in, value_shape, index, "insert", "value")


def subtile_index(shape_in, sub, index, op, noun):
    """The entries of ``index`` into the tile space of sub-tiles of shape ``sub`` within a
    tile of ``shape_in`` (``op``'s index; ``noun`` names the sub-tile in messages): signed
    integers, one per axis; ``sub`` must divide the tile, and constant entries lie inside."""
    items = index_items(index, op)
    if len(items) != len(shape_in):
        raise TileTypeError(f"Index size {len(items)} does not match the tile rank "
                            f"{len(shape_in)}")
    for axis, (outer, inner, item) in enumerate(zip(shape_in, sub, items)):
        if outer % inner:
            raise TileTypeError(f"Input shape {tuple(shape_in)} is not divisible by {noun} "
                                f"shape {tuple(sub)} at dimension #{axis}")
        start = constant_value(item, None)
        if start is not None and not 0 <= start < outer // inner:
            raise TileTypeError(f"Index {start} out of bounds at dimension #{axis}: valid "
                                f"range is [0, {outer // inner}) in tile space (input shape "
                                f"{tuple(shape_in)}, {noun} shape {tuple(sub)})")
    return items


def cat_count(count):
    """``cat`` takes a tuple of two tiles, or of one (which it returns), in cuTile's words for
    other counts.

    >>> from numba_tile.rules.shapes import cat_count
    >>> cat_count(3)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: cat() supports at most 2 tiles, got 3
    """
    if count == 0:
        raise TileTypeError("cat() received an empty tuple")
    if count > 2:
        raise TileTypeError(f"cat() supports at most 2 tiles, got {count}")


def cat(dtype_a, shape_a, dtype_b, shape_b, axis):
    """The shape of concatenating two tiles along ``axis`` and the axis, in cuTile's
    words where they do not concatenate (the result's extent along ``axis`` must be a power
    of two: the tiles are of one shape).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.shapes import cat
    >>> cat(ct.int32, (2, 4), ct.int32, (2, 4), 1)
    ((2, 8), 1)
    """
    shape_a, shape_b = tuple(shape_a), tuple(shape_b)
    if len(shape_a) != len(shape_b):
        raise TileTypeError(f"Expected tiles to have the same rank: {len(shape_a)} != "
                            f"{len(shape_b)}")
    if dtype_a is not dtype_b:
        raise TileTypeError(f"Expected tiles to have the same dtype: {dtype_a} != {dtype_b}")
    axis = normalize_axis(axis, len(shape_a))
    if any(i != axis and m != n for i, (m, n) in enumerate(zip(shape_a, shape_b))):
        raise TileTypeError(f"Expected tiles to have the same shape for non axis dimensions, "
                            f"got {shape_a} and {shape_b}")
    out = list(shape_a)
    out[axis] += shape_b[axis]
    if shape_a[axis] != shape_b[axis]:
        raise TileTypeError(f"Result tile shape must be power of 2, got: {out}")
    return tuple(out), axis


def bad_index_item(item):
    """The error of ``t[item]`` for what indexes no tile (an integer, a string, an array),
    in both executors.

    >>> from numba_tile.rules.shapes import bad_index_item
    >>> bad_index_item("a").message
    "Directly indexing a tile is not supported; use `extract()` or `item()` instead. Tiles ..."
    """
    return TileTypeError(f"{DIRECT_TILE_INDEX} Tiles can only be indexed with ':', None and "
                         f"'...' (to add axes), got {_key_text(item)}; use ct.extract for "
                         f"sub-tiles")


#: cuTile's words for ``t[i]`` (a scalar is a 0-d tile: ``ct.bid(0)[0]``, ``(1.5)[0]`` too)
DIRECT_TILE_INDEX = "Directly indexing a tile is not supported; use `extract()` or `item()` " \
    "instead."


def not_subscriptable(value, key):
    """The ``TileTypeError`` of ``value[...]`` where ``value`` (a rule operand) is none of
    what tile code indexes (a tile's shape, a tuple, a list argument, a dataclass): a scalar
    or a number is a 0-d tile to cuTile, anything else (None, a dtype) is no sequence.

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.shapes import not_subscriptable
    >>> not_subscriptable(None, 0).message
    'Object of type None is not subscriptable'
    >>> not_subscriptable(Loose(1.5), Loose(0)).message
    "Directly indexing a tile is not supported; use `extract()` or `item()` instead. Tiles ..."
    """
    value = value.value if isinstance(value, Loose) else value
    if is_python_number(value) or (hasattr(value, "dtype") and hasattr(value, "shape")):
        return bad_index_item(key)
    return TileTypeError(f"Object of type {type_name(value)} is not subscriptable")


def index_key(key, ndim):
    """Validate ``t[...]`` indexing (only ``:``, ``None`` and ``...``); return NumPy's key."""
    items = key if isinstance(key, tuple) else (key,)
    if sum(item is Ellipsis for item in items) > 1:
        raise TileTypeError("Only one ellipsis is allowed")
    consumed = 0
    for item in items:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, slice) and all(b is None for b in (item.start, item.stop, item.step)):
            consumed += 1
            continue
        raise bad_index_item(item)
    if consumed > ndim:
        raise TileTypeError(f"Tile is {ndim}-dimensional, but {consumed} were indexed")
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
    check_not_pointer("bitcast", source)
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
