"""Rules of ``gather`` and ``scatter``: element-wise loads and stores at index tiles.

One index operand per array axis (a tile or a scalar of any integer dtype; a 1-d array takes
a bare one), broadcast together: the result of ``gather`` has their broadcast shape, and a
``mask``, a ``padding_value`` or the value ``scatter`` stores must broadcast to it. Values
move between the array's dtype and the tile's by implicit casts only (those the promotion
table allows).

>>> import numba_tile as ct
>>> from numba_tile.rules.memory import implicit_cast
>>> from numba_tile.promotion import Loose
>>> implicit_cast(ct.int8, ct.float32, "scatter()"), implicit_cast(Loose(7), ct.int8, "x")
(float32, int8)
"""

from .. import dtypes as d
from ..errors import TileTypeError
from ..promotion import Loose
from .core import broadcast_many, broadcast_shapes, constant_value, describe, \
    is_power_of_two, is_tile_or_scalar, operand_dtype, operand_shape
from .memory import array_padding, check_hints, check_writable, implicit_cast, require_array


def index_operands(array, indices, what):
    """The index operands (a tuple, one per axis) and their broadcast shape."""
    require_array(array)
    items = indices if isinstance(indices, tuple) else (indices,)
    if not isinstance(indices, tuple) and array.ndim != 1:
        raise TileTypeError(f"{what} on a {array.ndim}-d array needs a tuple of {array.ndim} "
                            f"index tiles, got {describe(indices)}")
    if len(items) != array.ndim:
        raise TileTypeError(f"{what} needs {array.ndim} indices (one per axis of the array), "
                            f"got {len(items)}")
    operands = []
    for axis, item in enumerate(items):
        operand = Loose(item) if isinstance(item, int) and not isinstance(item, bool) else item
        dtype = operand_dtype(operand) if isinstance(operand, Loose) or hasattr(
            operand, "dtype") else None
        if dtype is None or not dtype.is_integral:
            raise TileTypeError(f"{what} indices must be integer tiles or scalars; index "
                                f"{axis} is {describe(item)}")
        operands.append(operand)
    return tuple(operands), broadcast_many(operand_shape(x) for x in operands)


def _broadcasts_to(operand, shape, name, what):
    own = operand_shape(operand)
    try:
        fits = broadcast_shapes(own, shape) == tuple(shape)
    except Exception:
        fits = False
    if not fits:
        raise TileTypeError(f"The {name} of {what} has shape {own}, which is not broadcastable "
                            f"to the indices' shape {tuple(shape)}")


def _mask(mask, shape, what):
    if mask is None:
        return None
    if isinstance(mask, Loose):
        mask = mask.value
    if isinstance(mask, bool):
        operand = Loose(mask)
    elif getattr(mask, "dtype", None) is d.bool_:
        operand = mask
    else:
        raise TileTypeError(f"The mask of {what} must be a boolean tile or scalar, got "
                            f"{describe(mask)}")
    _broadcasts_to(operand, shape, "mask", what)
    return operand


def _value(value, shape, target, name, what):
    """A value operand (``padding_value``, scatter's value) checked against the array."""
    operand = Loose(value) if isinstance(value, (bool, int, float)) else value
    if not (isinstance(operand, Loose) or is_tile_or_scalar(operand)):
        raise TileTypeError(f"The {name} of {what} must be a tile or a scalar, got "
                            f"{describe(value)}")
    implicit_cast(operand if isinstance(operand, Loose) else operand.dtype, target,
                  f"{what} {name}:")
    _broadcasts_to(operand, shape, name, what)
    return operand


def _check_bounds(check_bounds, what):
    check_hints(what, check_bounds)


def gather(array, indices, mask, padding_value, check_bounds, latency=None):
    """Rule of ``gather``: ``(result dtype, result shape, index operands, mask operand,
    padding operand)``."""
    operands, shape = index_operands(array, indices, "gather()")
    check_hints("gather()", check_bounds, latency)
    mask = _mask(mask, shape, "gather()")
    padding = _value(padding_value, shape, array.dtype, "padding_value", "gather()")
    return array.dtype, shape, operands, mask, padding


def scatter(array, indices, value, mask, check_bounds, latency=None):
    """Rule of ``scatter``: ``(shape, index operands, value operand, mask operand)``."""
    operands, shape = index_operands(array, indices, "scatter()")
    check_writable(array, "scatter")
    check_hints("scatter()", check_bounds, latency)
    mask = _mask(mask, shape, "scatter()")
    value = _value(value, shape, array.dtype, "value", "scatter()")
    return shape, operands, value, mask


def offset_operand(offset, what):
    """The offset operand of a raw-memory access (an integer tile or scalar, in elements
    from the array's first one) and its shape."""
    operand = Loose(offset) if isinstance(offset, int) and not isinstance(offset, bool) \
        else offset
    dtype = operand_dtype(operand) if isinstance(operand, Loose) or hasattr(
        operand, "dtype") else None
    if dtype is None or not dtype.is_integral:
        raise TileTypeError(f"The offset of {what}() must be an integer tile or scalar, got "
                            f"{describe(offset)}")
    return operand, tuple(operand_shape(operand))


def raw_load(dtype, offset, mask, padding_value, latency=None):
    """Rule of ``RawArrayMemory.load_offset``: ``(shape, offset operand, mask operand,
    padding operand)``."""
    operand, shape = offset_operand(offset, "load_offset")
    check_hints("load_offset()", latency=latency)
    mask = _mask(mask, shape, "load_offset()")
    padding = _value(padding_value, shape, dtype, "padding_value", "load_offset()")
    return shape, operand, mask, padding


def raw_store(dtype, offset, value, mask, latency=None):
    """Rule of ``RawArrayMemory.store_offset``: ``(shape, offset operand, value operand,
    mask operand)``."""
    operand, shape = offset_operand(offset, "store_offset")
    check_hints("store_offset()", latency=latency)
    mask = _mask(mask, shape, "store_offset()")
    value = _value(value, shape, dtype, "value", "store_offset()")
    return shape, operand, value, mask


# -- load_advanced_indexing / store_advanced_indexing --------------------------------------------
def slice_parts(start, length):
    """Rule of ``ct.Slice(start, length)``: ``(start operand, length)``. The start is an
    integer scalar (known at run time or not); the length a constant power of two."""
    operand = Loose(start) if isinstance(start, int) and not isinstance(start, bool) else start
    dtype = operand_dtype(operand) if isinstance(operand, Loose) or hasattr(
        operand, "dtype") else None
    if dtype is None or not dtype.is_integral or operand_shape(operand) != ():
        raise TileTypeError(f"The start of ct.Slice must be an integer scalar, got "
                            f"{describe(start)}")
    value = constant_value(length, None)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TileTypeError(f"The length of ct.Slice must be a compile-time constant integer, "
                            f"got {describe(length)}")
    if not is_power_of_two(value):
        raise TileTypeError(f"The length of ct.Slice must be a power of two, got {value}")
    return operand, value


def _is_slice(item):
    return getattr(item, "is_tile_slice", False)


def advanced_indexing(array, indices, what):
    """The shape and sparse axis of a ``load_advanced_indexing`` or
    ``store_advanced_indexing``: one 1-d integer tile (the sparse axis) and a ``ct.Slice``
    for every other axis of ``array``. Returns ``(shape, sparse axis, index tile, slices)``,
    ``slices`` holding None at the sparse axis."""
    require_array(array)
    if array.ndim < 2:  # (cuTile's words: a gather or scatter does it)
        op = what.rstrip("()")
        raise TileTypeError(f"{op} requires a 2D or higher-rank array; use ct."
                            f"{'gather' if op.startswith('load') else 'scatter'}() for 1D "
                            f"arrays")
    items = indices if isinstance(indices, tuple) else (indices,)
    if len(items) != array.ndim:
        raise TileTypeError(f"{what}: the number of indices ({len(items)}) does not match "
                            f"array rank ({array.ndim})")
    sparse = [axis for axis, item in enumerate(items) if not _is_slice(item)]
    tiles = [axis for axis in sparse if hasattr(items[axis], "dtype") and tuple(
        operand_shape(items[axis])) != () and items[axis].dtype.is_integral]
    if len(sparse) != 1 or len(tiles) != 1 or len(operand_shape(items[sparse[0]])) != 1:
        found = ", ".join(describe(item) if not _is_slice(item) else "ct.Slice"
                          for item in items)
        raise TileTypeError(f"{what}: exactly one index must be a 1D integer Tile (the "
                            f"gathered axis) and every other one a ct.Slice; got ({found})")
    axis = sparse[0]
    shape = tuple(operand_shape(items[axis])[0] if a == axis else item.length
                  for a, item in enumerate(items))
    return shape, axis, items[axis], tuple(None if a == axis else item
                                           for a, item in enumerate(items))


def load_advanced_indexing(array, indices, padding_mode):
    """Rule of ``load_advanced_indexing``: ``(dtype, shape, sparse axis, index tile, slices,
    padding mode)``."""
    shape, axis, index, slices = advanced_indexing(array, indices, "load_advanced_indexing()")
    mode = array_padding(padding_mode, array)
    return array.dtype, shape, axis, index, slices, mode


def store_advanced_indexing(array, indices, tile):
    """Rule of ``store_advanced_indexing``: ``(shape, sparse axis, index tile, slices)``; the
    tile (or scalar) must have exactly the shape the indices give."""
    require_array(array)
    check_writable(array, "store_advanced_indexing")  # (memory first, as for every store)
    shape, axis, index, slices = advanced_indexing(array, indices, "store_advanced_indexing()")
    operand = Loose(tile) if isinstance(tile, (bool, int, float)) else tile
    if not (isinstance(operand, Loose) or is_tile_or_scalar(operand)):
        raise TileTypeError(f"store_advanced_indexing() stores a tile or a scalar, got "
                            f"{describe(tile)}")
    own = tuple(operand_shape(operand))
    if own not in ((), shape):
        raise TileTypeError(f"store_advanced_indexing(): the tile has shape {own}, but the "
                            f"indices give shape {shape}")
    return shape, axis, index, slices
