"""Lowering of compile-time constants (folded ops, casts of typed and float literals) and of the
attributes of arrays, constants and scalars."""

import operator

from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.cuda.models import register_model

from ...rules import enums as enum_rules
from ..abstract import operand
from ..compile_state import current
from ..constant_folding import FOLDABLE, UNARY_FOLDABLE
from ..typing.static_expressions import compiled_static_assert, compiled_static_eval, \
    compiled_static_raise
from ..typing.static_iteration import compiled_static_condition, compiled_static_iter_instance
from ..types import ArrayType, ConstantType, FloatLiteral, RawMemoryType, TiledViewType, TileType, \
    TypedConstant, dtype_of_scalar
from ..typing.context_manager_values import ContextManagerFunctionType, \
    GeneratorContextManagerType
from ..typing.dataclasses import DataclassType
from . import arithmetic, dataclasses as lowering_dataclasses
from .registry import lower, registry


@registry.lower_constant(ConstantType)
def lower_compile_time_constant(context, builder, ty, value):
    return context.get_dummy_value()


register_model(ContextManagerFunctionType)(models.OpaqueModel)
register_model(GeneratorContextManagerType)(models.OpaqueModel)


@lower(ContextManagerFunctionType, types.VarArg(types.Any))
def lower_context_manager_call(context, builder, sig, args):
    """A ``contextlib.contextmanager`` helper called outside a ``with``: what it makes is
    nothing at run time (a ``with`` inlines the helper instead)."""
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
for _compare in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
    lower(_compare, types.StringLiteral, types.StringLiteral)(_constant_comparison)


def folded_constant(context, builder, sig, args):
    """An operation the typing folded: its result is a constant of the literal type."""
    return _constant_of_type(context, builder, sig.return_type)


def _constant_of_type(context, builder, result):
    """The value of a constant's type (a literal, a typed constant, a tuple of them, nested
    as deep as it goes, a dataclass instance of constants)."""
    if isinstance(result, TypedConstant):
        return arithmetic.constant(result.dtype, result.literal_value)
    if isinstance(result, types.Literal):
        if isinstance(result, FloatLiteral):
            return context.get_constant(types.float64, result.literal_value)
        return context.get_constant(result.literal_type, result.literal_value)
    if isinstance(result, types.BaseTuple):
        return context.make_tuple(builder, result, [
            _constant_of_type(context, builder, t) for t in result])
    if isinstance(result, DataclassType):  # a static_eval's instance of constants
        return lowering_dataclasses.constant_instance(context, builder, result)
    return context.get_dummy_value()


@lower(compiled_static_eval, types.VarArg(types.Any))
def lower_static_eval(context, builder, sig, args):
    """A static_eval's value: the run-time value it returned, or its constant."""
    _, index = current().static_values[sig.args[0].literal_value, tuple(sig.args[1:])]
    if index is not None:
        return args[1 + index]
    return folded_constant(context, builder, sig, args)


@lower(compiled_static_assert, types.VarArg(types.Any))
@lower(compiled_static_raise, types.VarArg(types.Any))
@lower(compiled_static_iter_instance, types.VarArg(types.Any))
def lower_static_assert(context, builder, sig, args):
    return context.get_dummy_value()  # checked while typing


@lower(compiled_static_condition, types.Any)
def lower_static_condition(context, builder, sig, args):
    return context.get_constant(types.boolean, sig.return_type.literal_value)


_CONSTANT_KINDS = (types.IntegerLiteral, types.BooleanLiteral, FloatLiteral, ConstantType,
                   TypedConstant)
lower("numba_tile.folded", types.VarArg(types.Any))(folded_constant)
for _fold_op in FOLDABLE:
    for _a in _CONSTANT_KINDS:
        if _fold_op in UNARY_FOLDABLE:
            lower(_fold_op, _a)(folded_constant)
            continue
        for _b in _CONSTANT_KINDS:
            # (two ConstantTypes: ints no dtype holds, 2**200 // 2**198; == and != of them
            # are _constant_comparison's, above)
            if not (_a is ConstantType and _b is ConstantType and
                    _fold_op in (operator.eq, operator.ne)):
                lower(_fold_op, _a, _b)(folded_constant)




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


registry.lower_getattr(RawMemoryType, "dtype")(
    lambda context, builder, typ, value: _constant_attribute(context, builder, typ, value,
                                                             "dtype"))
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


def _array_values(context, builder, typ, value, attribute):
    """``shape`` or ``strides`` of an array: the run-time fields, with the values the kernel
    is specialized to (static dims) as constants."""
    fields = getattr(cgutils.create_struct_proxy(typ)(context, builder, value=value), attribute)
    result = typ.values_type(attribute)
    if not (typ.static_shape if attribute == "shape" else typ.static_strides):
        return fields
    items = [context.get_constant(item.literal_type, item.literal_value)
             if isinstance(item, types.IntegerLiteral) else builder.extract_value(fields, axis)
             for axis, item in enumerate(result)]
    return context.make_tuple(builder, result, items)


@registry.lower_getattr(ArrayType, "shape")
def array_shape(context, builder, typ, value):
    return _array_values(context, builder, typ, value, "shape")


@registry.lower_getattr(ArrayType, "strides")
def array_strides(context, builder, typ, value):
    return _array_values(context, builder, typ, value, "strides")


@registry.lower_getattr_generic(ConstantType)
def constant_attribute(context, builder, typ, value, attr):
    return _constant_attribute(context, builder, typ, value, attr)


@lower(operator.iadd, types.BaseTuple, types.BaseTuple)
def lower_tuple_extension(context, builder, sig, args):
    """``parts += (t,)`` on tuples: a new tuple, as ``parts + (t,)``."""
    return context.get_function(operator.add, sig)(builder, args)


@lower(types.EnumClass, types.Any)
def lower_enum_call(context, builder, sig, args):
    """``Color(0)``: the member, a constant (an ``IntEnum`` member is its value)."""
    if isinstance(sig.return_type, types.EnumMember):  # which member: its argument says
        member = enum_rules.member(sig.return_type.instance_class, operand(sig.args[0]))
        return context.get_constant(sig.return_type.dtype, member.value)
    return context.get_dummy_value()
