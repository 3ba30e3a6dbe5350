"""Typing of the factories: full, zeros, ones, arange and astile."""

from numba.core import types

from ...errors import TileTypeError
from ...language import factories
from ...promotion import check_constant_converts
from ...rules import factories as factory_rules
from ...rules.core import dtype_argument, tile_shape
from ..abstract import operand
from ..compile_state import current
from ..intrinsics import arange_in_layout
from ..types import TileType, scalar_type
from .templates import constant_value, register_template, is_constant, is_scalar


def infer_filled(op, fill_value=None):
    """The typing of factory ``op``: ``full``, or ``zeros``/``ones`` of ``fill_value``."""
    def infer(values):
        fill = operand(values["fill_value"]) if fill_value is None else fill_value
        spec = factory_rules.filled(op, constant_value(values["shape"]), fill,
                                    constant_value(values["dtype"]))
        return TileType(spec.dtype, spec.shape, current().num_warps)
    return infer


register_template(factories.full, infer_filled("full"))
register_template(factories.zeros, infer_filled("zeros", 0))
register_template(factories.ones, infer_filled("ones", 1))


def _check_constant_converts(numba_type, dtype):
    """A constant scalar argument must fit the dtype it becomes (as in the interpreter)."""
    if not is_constant(numba_type):
        return
    value = constant_value(numba_type)
    if isinstance(value, (bool, int, float)):
        check_constant_converts(value, dtype)


def infer_arange(values):
    (n,) = tile_shape(constant_value(values["size"]), "arange", "size")
    dtype = dtype_argument(constant_value(values["dtype"]), "arange")
    for name in ("start", "step"):
        value = values[name]
        if not (is_scalar(value) or isinstance(value, types.Omitted) or (
                isinstance(value, TileType) and value.shape == ())):
            raise TileTypeError(f"{name} must be a scalar, got {value}")
        _check_constant_converts(value, dtype)
    scalar_type(dtype)
    return TileType(dtype, (n,), current().num_warps)


def infer_astile(values):
    dtype = dtype_argument(constant_value(values["dtype"]), "astile")
    value = values["value"]
    if isinstance(value, TileType):
        return value.with_dtype(dtype)
    if is_scalar(value):
        scalar_type(dtype)  # (a scalar converts through one: nested constants need none)
        _check_constant_converts(value, dtype)
        return TileType(dtype, (), current().num_warps)
    if isinstance(value, types.BaseTuple):
        factory_rules.check_astile_elements(_nested_operands(value))
    constant = constant_value(value)  # nested tuples of constants: checked by the interpreter
    tile = factories.astile.__tile_op__(constant, dtype=dtype)
    return TileType(dtype, tile.shape, current().num_warps)



def _nested_operands(value):
    """Nested tuple types as the rules take them: tuples of operands."""
    if isinstance(value, types.BaseTuple):
        return tuple(_nested_operands(item) for item in value)
    return operand(value)


register_template(factories.arange, infer_arange)
register_template(factories.astile, infer_astile)


def infer_arange_in_layout(values):
    """``arange`` in the layout the compilation holds for the call's ``layout_key`` (asked
    by :mod:`~numba_tile.compiler.frontend.index_layouts`)."""
    tile = infer_arange(values)
    layout = current().index_layouts[values["layout_key"].literal_value]
    return TileType(tile.dtype, tile.shape, tile.num_warps, layout)


register_template(arange_in_layout, infer_arange_in_layout)
