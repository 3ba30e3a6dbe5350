"""Lowering of frozen dataclasses (:mod:`~numba_tile.compiler.typing.dataclasses`): an
instance is a struct of its fields' values, in field order, like a tuple; a class, and a
function read from a class, are nothing at run time; a method read from an instance is the
instance."""

import dataclasses

from numba.core import types
from numba.core.datamodel import models
from numba.cuda.models import register_model

from ...rules import dataclasses as rules
from ..types import ConstantType, TypedConstant
from ..typing.dataclasses import DataclassClassType, DataclassType, MemberType, \
    construct_dataclass, member_receiver, replace_fields
from .registry import lower, registry

register_model(DataclassType)(models.TupleModel)
register_model(DataclassClassType)(models.OpaqueModel)


@register_model(MemberType)
class MemberModel(models.ProxyModel):
    """A method read from an instance is the instance (its ``self``); anything else is
    nothing at run time."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type)
        self._proxied_model = dmm.lookup(types.none if fe_type.owner is None
                                         else fe_type.owner)


def _field_value(context, builder, from_type, to_type, value):
    """A field's value of ``to_type`` from ``value`` of ``from_type`` (a constant field
    holds its constant)."""
    if isinstance(to_type, ConstantType):
        return context.get_dummy_value()
    return context.cast(builder, value, from_type, to_type)


def _instance(context, builder, instance_type, value_types, values):
    return context.make_tuple(builder, instance_type, [
        _field_value(context, builder, from_type, to_type, value)
        for from_type, to_type, value in zip(value_types, instance_type.field_types, values)])


@lower(DataclassClassType, types.VarArg(types.Any))
def lower_construction(context, builder, sig, args):
    """``Point(x, y)``: the arguments are the fields' values, in field order."""
    return _instance(context, builder, sig.return_type, sig.args, args)


@lower(construct_dataclass, types.VarArg(types.Any))
def lower_construct_dataclass(context, builder, sig, args):
    return _instance(context, builder, sig.return_type, sig.args[1:], args[1:])


@lower(dataclasses.replace, types.VarArg(types.Any))
@lower(replace_fields, types.VarArg(types.Any))
def lower_replace(context, builder, sig, args):
    """``dataclasses.replace(obj, **changes)``: the changes (in the order of the call's
    signature) in place of the fields they name."""
    instance, result = sig.args[0], sig.return_type
    changes = dict(zip(list(sig.pysig.parameters)[1:], zip(sig.args[1:], args[1:])))
    values = []
    for index, name in enumerate(result.names):
        from_type, value = changes.get(name, (instance.field_types[index],
                                              builder.extract_value(args[0], index)))
        values.append(_field_value(context, builder, from_type, result.field_types[index],
                                   value))
    return context.make_tuple(builder, result, values)


@lower(member_receiver, MemberType)
def lower_member_receiver(context, builder, sig, args):
    return args[0]


@registry.lower_constant(DataclassType)
def lower_constant_instance(context, builder, ty, value):
    return context.make_tuple(builder, ty, [
        context.get_constant_generic(builder, field_type, getattr(value, name))
        for name, field_type in zip(ty.names, ty.field_types)])


def constant_instance(context, builder, instance_type):
    """An instance whose fields are constants, from its type alone (a ``static_eval``
    result)."""
    return context.make_tuple(builder, instance_type, [
        _constant(context, builder, t) for t in instance_type.field_types])


def _constant(context, builder, numba_type):
    if isinstance(numba_type, DataclassType):
        return constant_instance(context, builder, numba_type)
    if isinstance(numba_type, types.BaseTuple):
        return context.make_tuple(builder, numba_type,
                                  [_constant(context, builder, t) for t in numba_type])
    if isinstance(numba_type, (types.Literal, TypedConstant)):
        return context.get_constant_generic(builder, numba_type, numba_type.literal_value)
    return context.get_dummy_value()  # a constant of no run-time value (a dtype, None...)


@registry.lower_cast(DataclassType, DataclassType)
def cast_instance(context, builder, fromty, toty, value):
    """An instance whose field types were unified (a loop-carried instance)."""
    return context.make_tuple(builder, toty, [
        _field_value(context, builder, a, b, builder.extract_value(value, index))
        for index, (a, b) in enumerate(zip(fromty.field_types, toty.field_types))])


@registry.lower_cast(MemberType, MemberType)
def cast_member(context, builder, fromty, toty, value):
    """A method read from instances whose types were unified: its instance, cast."""
    if fromty.owner is None or toty.owner is None:
        return value
    return context.cast(builder, value, fromty.owner, toty.owner)


def _attribute(context, builder, owner, value, attr, cls):
    result = context.typing_context.resolve_getattr(owner, attr)
    if isinstance(result, MemberType):  # a method's run-time value is its instance
        return value if result.owner is owner else context.get_dummy_value()
    return context.get_constant_generic(builder, result, getattr(cls, attr))


@registry.lower_getattr_generic(DataclassType)
def lower_instance_attribute(context, builder, typ, value, attr):
    found = rules.member(typ.cls, attr)
    if found is not None and found[0] == "field" and \
            not isinstance(typ.field_types[found[1]], types.Dispatcher):
        return builder.extract_value(value, found[1])
    return _attribute(context, builder, typ, value, attr, typ.cls)


@registry.lower_getattr_generic(DataclassClassType)
def lower_class_attribute(context, builder, typ, value, attr):
    return _attribute(context, builder, typ, value, attr, typ.value)
