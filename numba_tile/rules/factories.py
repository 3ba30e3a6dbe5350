"""Rules of the tile factories ``full``, ``zeros`` and ``ones``.

>>> import numba_tile as ct
>>> from numba_tile.rules.factories import filled
>>> filled("full", (2, 4), 1.5, ct.float16)
Spec(float16, (2, 4), constant=True)
"""

import numpy as np

from ..errors import TileTypeError
from ..promotion import Loose, check_constant_converts
from .core import Spec, as_operand, dtype_argument, invalid_argument, is_power_of_two, \
    is_python_number, tile_shape, type_name


def filled(op, shape, fill_value, dtype):
    """Rule of a tile of ``shape`` and ``dtype`` filled with one value: ``full``, and
    ``zeros`` and ``ones`` (``op``) with their own fill value. The fill value is a scalar, a
    constant one in the range of ``dtype``."""
    shape = tile_shape(shape, op)
    dtype = dtype_argument(dtype, op)
    if isinstance(fill_value, np.generic):  # np.float32(2): a typed constant, as compiled
        fill_value = as_operand(fill_value)
    value = fill_value.value if isinstance(fill_value, Loose) else fill_value
    if is_python_number(value):
        check_constant_converts(value, dtype)
        return Spec(dtype, shape, constant=True)
    if not hasattr(fill_value, "dtype") or tuple(getattr(fill_value, "shape", (None,))) != ():
        raise invalid_argument(op, "fill_value", f"Expected a scalar, but given value has type "
                                                 f"{type_name(fill_value)}")
    return Spec(dtype, shape, constant=bool(fill_value.is_constant))


def check_astile_elements(value, path="value"):
    """cuTile's rule of the nested tuples ``astile`` takes: each element a scalar (a 0-d
    tile, a constant), each tuple's length a power of two; else its ``TileTypeError``,
    naming where (``value[0][1]``).

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.factories import check_astile_elements
    >>> check_astile_elements((Loose(1), Loose(2)))
    >>> check_astile_elements((Loose(1), Loose(2), Loose(3)))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Tuple length 3 at value is not a power of 2
    """
    if not isinstance(value, tuple):
        array = getattr(value, "is_tile_array", False) or (
            hasattr(value, "dtype") and hasattr(value, "ndim") and not hasattr(value, "shape"))
        if array or tuple(getattr(value, "shape", ())) != ():
            raise TileTypeError(f"Expected scalar elements at {path}; got element of type "
                                f"{type_name(value)}")
        return
    if not is_power_of_two(len(value)):
        raise TileTypeError(f"Tuple length {len(value)} at {path} is not a power of 2")
    for position, item in enumerate(value):
        check_astile_elements(item, f"{path}[{position}]")
