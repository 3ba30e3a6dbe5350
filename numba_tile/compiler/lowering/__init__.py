"""Lowering of tile code to LLVM IR on numba-cuda's target context: the registry, and the
lowering of constants, factories and attributes.

The ops are lowered in their own modules, imported at the end so that they register here:
:mod:`~numba_tile.compiler.lowering.memory`, :mod:`~numba_tile.compiler.lowering.elementwise`, :mod:`~numba_tile.compiler.lowering.reductions` and
:mod:`~numba_tile.compiler.lowering.shapes`; :mod:`~numba_tile.compiler.lowering.tiles` says how a tile lives in a thread block.
"""

import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.cuda.core.imputils import Registry

from ... import dtypes as d
from ...language import factories
from . import arithmetic
from ..contexts import FOLDABLE, UNARY_FOLDABLE
from .tiles import make_tile
from ..types import ArrayType, ConstantType, FloatLiteral, TiledViewType, TileType, TypedConstant

registry = Registry("numba_tile")
lower = registry.lower


# -- constants --------------------------------------------------------------------------------
@registry.lower_constant(ConstantType)
def lower_compile_time_constant(context, builder, ty, value):
    return context.get_dummy_value()


@registry.lower_constant(FloatLiteral)
def lower_float_literal(context, builder, ty, value):
    return context.get_constant(types.float64, ty.literal_value)


@registry.lower_constant(TypedConstant)
def lower_typed_constant(context, builder, ty, value):
    return arithmetic.constant(ty.dtype, ty.literal_value)


@registry.lower_cast(TypedConstant, types.Number)
@registry.lower_cast(TypedConstant, types.Boolean)
def cast_typed_constant(context, builder, fromty, toty, value):
    from ..types import dtype_of_scalar
    return arithmetic.convert(context, builder, arithmetic.constant(fromty.dtype,
                                                                    fromty.literal_value),
                              fromty.dtype, dtype_of_scalar(toty))


@registry.lower_cast(FloatLiteral, types.Number)
def cast_float_literal(context, builder, fromty, toty, value):
    return context.get_constant(toty, fromty.literal_value)


@registry.lower_cast(ConstantType, types.Boolean)
def cast_constant_to_bool(context, builder, fromty, toty, value):
    return context.get_constant(toty, bool(fromty.value))


def _constant_comparison(context, builder, sig, args):
    return context.get_constant(types.boolean, sig.return_type.literal_value)


for _compare in (operator.eq, operator.ne):  # a Constant[str] with a literal: MODE == "x"
    for _pair in ((ConstantType, ConstantType), (ConstantType, types.StringLiteral),
                  (types.StringLiteral, ConstantType)):
        lower(_compare, *_pair)(_constant_comparison)


def folded_constant(context, builder, sig, args):
    """An operation the typing folded: its result is a constant of the literal type."""
    result = sig.return_type
    if isinstance(result, TypedConstant):
        return arithmetic.constant(result.dtype, result.literal_value)
    if isinstance(result, types.Literal):
        if isinstance(result, FloatLiteral):
            return context.get_constant(types.float64, result.literal_value)
        return context.get_constant(result.literal_type, result.literal_value)
    if isinstance(result, types.BaseTuple):
        return context.make_tuple(builder, result, [
            context.get_constant(t.literal_type, t.literal_value) for t in result])
    return context.get_dummy_value()


_CONSTANT_KINDS = (types.IntegerLiteral, types.BooleanLiteral, FloatLiteral, ConstantType,
                   TypedConstant)
lower("numba_tile.folded", types.VarArg(types.Any))(folded_constant)
for _fold_op in FOLDABLE:
    for _a in _CONSTANT_KINDS:
        if _fold_op in UNARY_FOLDABLE:
            lower(_fold_op, _a)(folded_constant)
            continue
        for _b in _CONSTANT_KINDS:
            if not (_a is ConstantType and _b is ConstantType):
                lower(_fold_op, _a, _b)(folded_constant)




# -- factories ------------------------------------------------------------------------------
@lower(factories.full, types.Any, types.Any, types.Any)
def lower_full(context, builder, sig, args):
    tile_type = sig.return_type
    from .elementwise import operand_values
    value, = operand_values(context, builder, sig.args[1], args[1], sig.args[1],
                            tile_type.dtype)
    return make_tile(context, builder, tile_type, [value] * tile_type.registers)


def _lower_constant_fill(fill):
    def lower_fill(context, builder, sig, args):
        tile_type = sig.return_type
        value = arithmetic.constant(tile_type.dtype, fill)
        return make_tile(context, builder, tile_type, [value] * tile_type.registers)
    return lower_fill


lower(factories.zeros, types.Any, types.Any)(_lower_constant_fill(0))
lower(factories.ones, types.Any, types.Any)(_lower_constant_fill(1))


# -- attributes -------------------------------------------------------------------------------
def _constant_attribute(context, builder, typ, value, attr):
    result_type = context.typing_context.resolve_getattr(typ, attr)
    if isinstance(result_type, types.Literal):
        return context.get_constant(result_type.literal_type, result_type.literal_value)
    if isinstance(result_type, types.BaseTuple):
        return context.make_tuple(builder, result_type, [
            context.get_constant(t.literal_type, t.literal_value) for t in result_type])
    return context.get_dummy_value()


for _attr in ("dtype", "ndim", "shape"):
    registry.lower_getattr(TileType, _attr)(
        lambda context, builder, typ, value, attr=_attr: _constant_attribute(
            context, builder, typ, value, attr))
for _attr in ("dtype", "ndim"):
    registry.lower_getattr(ArrayType, _attr)(
        lambda context, builder, typ, value, attr=_attr: _constant_attribute(
            context, builder, typ, value, attr))


for _attr in ("dtype", "tile_shape", "traversal_steps", "padding_mode"):
    registry.lower_getattr(TiledViewType, _attr)(
        lambda context, builder, typ, value, attr=_attr: _constant_attribute(
            context, builder, typ, value, attr))
for _kind in (types.Number, types.Boolean, FloatLiteral, TypedConstant):
    for _attr in ("dtype", "ndim", "shape"):
        registry.lower_getattr(_kind, _attr)(
            lambda context, builder, typ, value, attr=_attr: _constant_attribute(
                context, builder, typ, value, attr))


@lower("scalar.item", types.Any)
def scalar_item(context, builder, sig, args):
    return args[0]


@registry.lower_getattr(ArrayType, "shape")
def array_shape(context, builder, typ, value):
    return cgutils.create_struct_proxy(typ)(context, builder, value=value).shape


@registry.lower_getattr(ArrayType, "strides")
def array_strides(context, builder, typ, value):
    return cgutils.create_struct_proxy(typ)(context, builder, value=value).strides


@registry.lower_getattr_generic(ConstantType)
def constant_attribute(context, builder, typ, value, attr):
    return _constant_attribute(context, builder, typ, value, attr)


def _scalar_argument(context, builder, numba_type, value, dtype):
    """A scalar argument (a literal, an omitted default, a run-time scalar or a one-element
    tile) as a storage value of ``dtype``."""
    from .elementwise import operand_values
    if isinstance(numba_type, types.Omitted):
        return arithmetic.constant(dtype, numba_type.value)
    value, = operand_values(context, builder, numba_type, value, None, dtype)
    return value


@lower(factories.arange, types.Any, types.Any, types.Any, types.Any)
def lower_arange(context, builder, sig, args):
    """Element ``i`` is ``start + step * i``, computed in float64 for float dtypes (one
    rounding, as the interpreter)."""
    from .tiles import register_coordinates, thread_coordinates
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
    import numpy as np
    from .tiles import linear_offset, register_coordinates, thread_coordinates
    tile_type, value_type = sig.return_type, sig.args[0]
    dtype = tile_type.dtype
    if isinstance(value_type, TileType):
        from .elementwise import operand_values
        values = operand_values(context, builder, value_type, args[0], tile_type, dtype)
        return make_tile(context, builder, tile_type, values)
    if not isinstance(value_type, types.BaseTuple):
        value = _scalar_argument(context, builder, value_type, args[0], dtype)
        return make_tile(context, builder, tile_type, [value] * tile_type.registers)
    from ...language.factories import astile
    from ..abstract import constant_of
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


# the ops register their lowering on import
from . import elementwise, matrix, memory, reductions, shapes  # noqa: E402,F401
