"""Rules of foreign pointers: ``Array.foreign_pointer`` (a scalar of a
:func:`~numba_tile.dtypes.foreign_pointer_dtype`) and ``Array.from_foreign(pointer, shape,
strides)``, which makes an array of the pointee dtype over it. Both executors call them, so a
kernel that one refuses the other refuses with the same words (cuTile's).

>>> import numba_tile as ct
>>> from numba_tile.promotion import Loose
>>> from numba_tile.rules.foreign_pointers import from_foreign
>>> from_foreign(ct.int32(0), (Loose(4),), (Loose(1),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: expected a foreign pointer tile, got Tile[int32,()]
"""

import enum

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose, integer_range
from .core import invalid_argument, type_name


def pointee(pointer):
    """The pointee dtype of ``pointer``, a scalar foreign pointer; else cuTile's
    ``TileTypeError``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.foreign_pointers import pointee
    >>> class Pointers:  # what pointers are to the rule: a tile of a pointer dtype
    ...     dtype, shape = ct.foreign_pointer_dtype(ct.float32), (4,)
    >>> pointee(Pointers())
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: expected a scalar foreign pointer, got Tile[foreign_poi...
    """
    dtype = None if isinstance(pointer, Loose) else getattr(pointer, "dtype", None)
    if getattr(pointer, "is_tile_array", False) or not d.is_foreign_pointer(dtype) or \
            not hasattr(pointer, "shape"):
        raise TileTypeError(f"expected a foreign pointer tile, got {type_name(pointer)}")
    if tuple(pointer.shape) != ():
        raise TileTypeError(f"expected a scalar foreign pointer, got {type_name(pointer)}")
    return dtype.pointee


def _item_dtype(value, where):
    """The index dtype that item ``where`` (``shape[0]``) needs: its own for a signed integer
    scalar, int32 (int64 beyond its range) for a constant; a negative constant, or anything
    but a signed integer scalar, is cuTile's ``TileTypeError``."""
    if isinstance(value, Loose):
        value = value.value
    number = isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum)
    if number and isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise TileTypeError(f"{where} must be non-negative")
        return d.int32 if value <= integer_range(d.int32)[1] else d.int64
    dtype = getattr(value, "dtype", None)
    if number or not isinstance(dtype, d.DType) or getattr(value, "is_tile_array", False) or \
            not (dtype.is_integral and dtype.is_signed) or tuple(value.shape) != ():
        raise TileTypeError(f"{where} must be a signed integer; got {type_name(value)}")
    if getattr(value, "is_constant", False) and value.constant_value() < 0:
        raise TileTypeError(f"{where} must be non-negative")
    return dtype


def from_foreign(pointer, shape, strides):
    """Rule of ``Array.from_foreign(pointer, shape, strides)``: ``pointer`` a scalar foreign
    pointer, ``shape`` and ``strides`` tuples of one length of non-negative signed integer
    scalars (constants or run-time values). Returns ``(dtype, ndim, index_dtype)`` of the
    array it makes: the pointee dtype, and int64 indices where an item is an int64 (or a
    constant beyond int32), int32 ones otherwise.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.foreign_pointers import from_foreign
    >>> class Pointer:  # what a pointer is to the rule: a scalar of a pointer dtype
    ...     dtype, shape = ct.foreign_pointer_dtype(ct.float16), ()
    >>> from_foreign(Pointer(), (Loose(4), ct.int64(2)), (Loose(2), Loose(1)))
    (float16, 2, int64)
    >>> from_foreign(Pointer(), (Loose(-4),), (Loose(1),))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: shape[0] must be non-negative
    """
    dtype = pointee(pointer)
    for name, value in (("shape", shape), ("strides", strides)):
        if not isinstance(value, tuple):
            raise invalid_argument("from_foreign", name, f"Expected a tuple, but given value "
                                                         f"has type {type_name(value)}")
    if len(shape) != len(strides):
        raise TileTypeError("shape and strides must have the same rank")
    widths = [_item_dtype(value, f"{name}[{axis}]")
              for name, values in (("shape", shape), ("strides", strides))
              for axis, value in enumerate(values)]
    index_dtype = d.int64 if any(w.bitwidth > 32 for w in widths) else d.int32
    return dtype, len(shape), index_dtype


def check_run_time_values(shape, strides):
    """The interpreter's check of the run-time values of ``from_foreign``'s shape and
    strides (Python ints): a negative one is a ``TileValueError``. (A compiled kernel does
    not check them: such an array's memory is undefined there.)

    >>> from numba_tile.rules.foreign_pointers import check_run_time_values
    >>> check_run_time_values((4, 2), (-1, 1))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: from_foreign(): strides[0] is -1; it must be non-negative
    """
    for name, values in (("shape", shape), ("strides", strides)):
        for axis, value in enumerate(values):
            if value < 0:
                raise TileValueError(f"from_foreign(): {name}[{axis}] is {value}; it must be "
                                     f"non-negative")
