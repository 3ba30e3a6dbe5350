"""Typing of the factories: full, zeros, ones, arange and astile."""

from numba.core import types

from ...errors import TileUnsupportedFeatureError, TileTypeError
from ...language import factories
from ...promotion import Loose, check_constant_converts
from ...rules.core import dtype_argument, tile_shape
from ..abstract import operand
from ..compilation import current
from ..intrinsics import arange_in_layout
from ..types import TileType, scalar_type
from .templates import constant_value, register_template, is_constant, is_scalar


def infer_full(values):
    shape = tile_shape(constant_value(values["shape"]), "shape")
    dtype = constant_value(values["dtype"])
    fill = values["fill_value"]
    if not is_scalar(fill):
        raise TileUnsupportedFeatureError("full() with a tile fill value is not compiled")
    fill_op = operand(fill)
    if isinstance(fill_op, Loose):
        check_constant_converts(fill_op.value, dtype)
    return TileType(dtype, shape, current().num_warps)


def infer_zeros(values):
    return TileType(constant_value(values["dtype"]), tile_shape(constant_value(values["shape"]), "shape"),
                    current().num_warps)


register_template(factories.full, infer_full)
register_template(factories.zeros, infer_zeros)
register_template(factories.ones, infer_zeros)


def _check_constant_converts(numba_type, dtype):
    """A constant scalar argument must fit the dtype it becomes (as in the interpreter)."""
    if not is_constant(numba_type):
        return
    value = constant_value(numba_type)
    if isinstance(value, (bool, int, float)):
        check_constant_converts(value, dtype)


def infer_arange(values):
    (n,) = tile_shape(constant_value(values["size"]), "arange size")
    dtype = dtype_argument(constant_value(values["dtype"]))
    for name in ("start", "step"):
        value = values[name]
        if not (is_scalar(value) or isinstance(value, types.Omitted) or (
                isinstance(value, TileType) and value.shape == ())):
            raise TileTypeError(f"{name} must be a scalar, got {value}")
        _check_constant_converts(value, dtype)
    scalar_type(dtype)
    return TileType(dtype, (n,), current().num_warps)


def infer_astile(values):
    dtype = dtype_argument(constant_value(values["dtype"]))
    value = values["value"]
    scalar_type(dtype)
    if isinstance(value, TileType):
        return value.with_dtype(dtype)
    if is_scalar(value):
        _check_constant_converts(value, dtype)
        return TileType(dtype, (), current().num_warps)
    constant = constant_value(value)  # nested tuples of constants: checked by the interpreter
    tile = factories.astile.__tile_op__(constant, dtype=dtype)
    return TileType(dtype, tile.shape, current().num_warps)



register_template(factories.arange, infer_arange)
register_template(factories.astile, infer_astile)


def infer_arange_in_layout(values):
    """``arange`` in the layout the compilation holds for the call's ``layout_key`` (asked
    by :mod:`~numba_tile.compiler.frontend.index_layouts`)."""
    tile = infer_arange(values)
    layout = current().index_layouts[values["layout_key"].literal_value]
    return TileType(tile.dtype, tile.shape, tile.num_warps, layout)


register_template(arange_in_layout, infer_arange_in_layout)
