"""Rules of the tile factories ``full``, ``zeros`` and ``ones``.

>>> import numba_tile as ct
>>> from numba_tile.rules.factories import filled
>>> filled("full", (2, 4), 1.5, ct.float16)
Spec(float16, (2, 4), constant=True)
"""

import numpy as np

from ..promotion import Loose, check_constant_converts
from .core import Spec, as_operand, dtype_argument, invalid_argument, is_python_number, \
    tile_shape, type_name


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
