"""Tile factories: ``arange``, ``full``, ``zeros``, ``ones``, ``astile``."""

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..host.context import tile_op
from ..host.conversion import convert
from ..host.tile import Tile, make_constant, to_tile, values_as
from ..promotion import check_constant_converts
from ..rules import factories as rules
from ..rules.core import as_operand, constant_value, describe, dtype_argument, is_python_number, \
    tile_shape


def _scalar_values(value, dtype, what):
    """A scalar operand's value in ``dtype`` (constants range-checked; a NumPy scalar is a
    typed constant of its dtype, as compiled)."""
    if isinstance(value, np.generic):
        value = as_operand(value)
    if is_python_number(value):
        check_constant_converts(value, dtype)
        return make_constant(value, dtype).values, True
    if isinstance(value, Tile):
        if value.ndim != 0:
            raise TileTypeError(f"{what} must be a scalar, got {describe(value)}")
        return convert(value.values, value.dtype, dtype), value.is_constant
    raise TileTypeError(f"{what} must be a scalar, got {describe(value)}")


@tile_op
def arange(size, /, *, dtype, start=0, step=1):
    """``[start, start + step, ...]`` of ``size`` (a constant power of two) elements.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.arange(4, dtype=ct.int32), ct.arange(4, dtype=ct.float32, start=1, step=0.5))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 2, 3] [1.0, 1.5, 2.0, 2.5]
    """
    (n,) = tile_shape(size, "arange", "size")
    dtype = dtype_argument(dtype, "arange")
    start_v, start_c = _scalar_values(start, dtype, "start")
    step_v, step_c = _scalar_values(step, dtype, "step")
    if dtype.is_float:
        values = start_v.astype(np.float64) + step_v.astype(np.float64) * np.arange(n)
        values = convert(values, d.float64, dtype)
    else:
        with np.errstate(all="ignore"):
            values = (start_v + step_v * np.arange(n).astype(dtype.storage)).astype(dtype.storage)
    return Tile(dtype, values, start_c and step_c)


@tile_op
def full(shape, fill_value, dtype):
    """A tile of ``shape`` filled with ``fill_value`` (a constant or a run-time scalar).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.full((2, 2), 3.5, ct.float16))
    >>> ct.launch(0, (1,), show, ())
    [[3.5, 3.5], [3.5, 3.5]]
    """
    return _filled("full", shape, fill_value, dtype)


def _filled(op, shape, fill_value, dtype):
    spec = rules.filled(op, shape, fill_value, dtype)
    values, _ = _scalar_values(fill_value, spec.dtype, "fill_value")
    return Tile(spec.dtype, np.broadcast_to(values, spec.shape), spec.constant)


@tile_op
def zeros(shape, dtype):
    """A tile of zeros.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.zeros((2,), ct.int8))
    >>> ct.launch(0, (1,), show, ())
    [0, 0]
    """
    return _filled("zeros", shape, 0, dtype)


@tile_op
def ones(shape, dtype):
    """A tile of ones.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.ones((2,), ct.float32))
    >>> ct.launch(0, (1,), show, ())
    [1.0, 1.0]
    """
    return _filled("ones", shape, 1, dtype)


@tile_op
def astile(value, /, *, dtype):
    """A tile of ``dtype`` from a scalar, a tile, or nested tuples of constants.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.astile(((1, 2), (3, 4)), dtype=ct.float32), ct.astile(5, dtype=ct.int8))
    >>> ct.launch(0, (1,), show, ())
    [[1.0, 2.0], [3.0, 4.0]] 5
    """
    dtype = dtype_argument(dtype, "astile")
    if isinstance(value, tuple):
        rules.check_astile_elements(value)
        const = constant_value(value, None)
        if const is None:
            items = [astile.__tile_op__(v, dtype=dtype) for v in value]
            shapes = {t.shape for t in items}
            if len(shapes) != 1:
                raise TileTypeError("astile() needs nested tuples of one shape")
            stacked = np.stack([t.values for t in items])
            tile_shape(stacked.shape, "astile", "value")
            return Tile(dtype, stacked, all(t.is_constant for t in items))
        try:
            array = np.array(const, dtype=np.float64 if dtype.is_float else object)
        except (TypeError, ValueError):
            raise TileValueError(f"astile() needs nested tuples of one shape, got "
                                 f"{const!r}") from None
        if array.dtype == object and any(isinstance(v, tuple) for v in array.flat):
            raise TileValueError(f"astile() needs nested tuples of one shape, got {const!r}")
        tile_shape(array.shape, "astile", "value")
        for v in array.flat:
            check_constant_converts(v, dtype)
        if dtype.is_float:
            return Tile(dtype, convert(array, d.float64, dtype), True)
        return Tile(dtype, np.array([int(v) for v in array.flat]).reshape(array.shape)
                    .astype(dtype.storage), True)
    tile = to_tile(value) if not is_python_number(value) else None
    if tile is None:
        return make_constant(value, dtype)
    return Tile(dtype, values_as(tile, dtype), tile.is_constant)
