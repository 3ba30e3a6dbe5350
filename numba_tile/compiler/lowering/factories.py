"""Lowering of the factories: full, zeros, ones, arange and astile."""

import numpy as np
from llvmlite import ir
from numba.core import types

from ... import dtypes as d
from ...language import factories
from ...language.factories import astile
from ..abstract import constant_of
from ..intrinsics import arange_in_layout
from ..types import TileType
from . import arithmetic
from .elementwise import operand_values
from .registry import lower
from .tiles import make_tile, register_coordinates, thread_coordinates, linear_offset


@lower(factories.full, types.Any, types.Any, types.Any)
def lower_full(context, builder, sig, args):
    tile_type = sig.return_type
    value, = operand_values(context, builder, sig.args[1], args[1], None, tile_type.dtype)
    return make_tile(context, builder, tile_type, [value] * tile_type.registers)


def _lower_constant_fill(fill):
    def lower_fill(context, builder, sig, args):
        tile_type = sig.return_type
        value = arithmetic.constant(tile_type.dtype, fill)
        return make_tile(context, builder, tile_type, [value] * tile_type.registers)
    return lower_fill


lower(factories.zeros, types.Any, types.Any)(_lower_constant_fill(0))
lower(factories.ones, types.Any, types.Any)(_lower_constant_fill(1))


def _scalar_argument(context, builder, numba_type, value, dtype):
    """A scalar argument (a literal, an omitted default, a run-time scalar or a one-element
    tile) as a storage value of ``dtype``."""
    if isinstance(numba_type, types.Omitted):
        return arithmetic.constant(dtype, numba_type.value)
    value, = operand_values(context, builder, numba_type, value, None, dtype)
    return value


@lower(factories.arange, types.Any, types.Any, types.Any, types.Any)
def lower_arange(context, builder, sig, args):
    """Element ``i`` is ``start + step * i``, computed in float64 for float dtypes (one
    rounding, as the interpreter)."""
    tile_type = sig.return_type
    dtype = tile_type.dtype
    work = d.float64 if dtype.is_float else dtype
    start = _scalar_argument(context, builder, sig.args[2], args[2], dtype)
    step = _scalar_argument(context, builder, sig.args[3], args[3], dtype)
    start = arithmetic.convert(context, builder, start, dtype, work)
    step = arithmetic.convert(context, builder, step, dtype, work)
    base = thread_coordinates(builder, tile_type.layout)
    values = []
    for register in range(tile_type.registers):
        (position,) = register_coordinates(builder, base, tile_type.layout, register)
        position = arithmetic.convert(context, builder, position, d.int32, work)
        value = arithmetic.binary(context, builder, "add", work, work, start,
                                  arithmetic.binary(context, builder, "mul", work, work, step,
                                                    position))
        values.append(arithmetic.convert(context, builder, value, work, dtype))
    return make_tile(context, builder, tile_type, values)


@lower(factories.astile, types.Any, types.Any)
def lower_astile(context, builder, sig, args):
    """A scalar or tile converted; nested tuples of constants become a constant table that
    each thread reads its elements from."""
    tile_type, value_type = sig.return_type, sig.args[0]
    dtype = tile_type.dtype
    if isinstance(value_type, TileType):
        values = operand_values(context, builder, value_type, args[0], tile_type, dtype)
        return make_tile(context, builder, tile_type, values)
    if not isinstance(value_type, types.BaseTuple):
        value = _scalar_argument(context, builder, value_type, args[0], dtype)
        return make_tile(context, builder, tile_type, [value] * tile_type.registers)
    table = astile.__tile_op__(constant_of(value_type), dtype=dtype).values
    flat = [arithmetic.constant(dtype, v) for v in np.asarray(table).reshape(-1).tolist()]
    storage = arithmetic.storage_type(dtype)
    if storage.width == 1 if hasattr(storage, "width") else False:
        storage = ir.IntType(8)
        flat = [ir.IntType(8)(int(v.constant)) for v in flat]
    array_type = ir.ArrayType(storage, len(flat))
    module = builder.module
    name = f"numba_tile_table_{len(module.globals)}"
    table_global = ir.GlobalVariable(module, array_type, name, addrspace=4)
    table_global.global_constant = True
    table_global.linkage = "internal"
    table_global.initializer = ir.Constant(array_type, flat)
    base = thread_coordinates(builder, tile_type.layout)
    values = []
    for register in range(tile_type.registers):
        coords = register_coordinates(builder, base, tile_type.layout, register)
        pointer = builder.gep(table_global, [ir.IntType(32)(0),
                                             linear_offset(builder, coords, tile_type.shape)])
        value = builder.load(pointer)
        if value.type != arithmetic.storage_type(dtype):
            value = builder.trunc(value, arithmetic.storage_type(dtype))
        values.append(value)
    return make_tile(context, builder, tile_type, values)


lower(arange_in_layout, types.Any, types.Any, types.Any, types.Any, types.Any)(lower_arange)
