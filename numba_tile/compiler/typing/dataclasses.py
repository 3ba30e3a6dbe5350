"""Typing of frozen dataclasses in tile code (the rules: :mod:`numba_tile.rules.dataclasses`).

An instance is a :class:`DataclassType`: the class and the type of each field, stored like a
tuple of them (a field made from a constant keeps its literal type, so it stays a constant).
A class is a :class:`DataclassClassType`, a compile-time constant whose call makes an
instance (binding the arguments as its ``__init__`` does, defaults included); class
attributes that are not functions are constants, as are those read through an instance.
``dataclasses.replace`` makes a new instance type with the given fields' types.

The functions of a class (methods, properties, ``__call__``, ``__getitem__``,
``__setitem__``, ``__post_init__``) are tile code inlined where they are called, as helpers
are: reading one gives a :class:`MemberType`, which nothing can call, and the pass of
:mod:`~numba_tile.compiler.frontend.dataclass_members` replaces each such call (each call of an
instance, each item read or assignment, each construction of a class with ``__post_init__``)
with a call of the function's inlinable helper, before the kernel is typed.

>>> import dataclasses
>>> from numba.core import types
>>> from numba_tile.compiler.typing.dataclasses import DataclassType
>>> @dataclasses.dataclass(frozen=True)
... class Point:
...     x: int
...     y: int
>>> DataclassType(Point, (types.int32, types.IntegerLiteral(0)))
Point(x=int32, y=Literal[int](0))
"""

import dataclasses
import enum
import inspect
import operator
import types as pytypes

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, AttributeTemplate

from ...errors import TileTypeError
from ...host.tile import Tile
from ...promotion import Loose
from ...rules import dataclasses as rules
from ..compile_state import current
from ..constant_folding import literal_type
from ..types import ConstantType, TypedConstant
from .templates import registry


class DataclassType(types.Type):
    """An instance of frozen dataclass ``cls`` whose fields have the Numba types
    ``field_types`` (in field order)."""

    def __init__(self, cls, field_types):
        self.cls, self.field_types = cls, tuple(field_types)
        self.names = rules.field_names(cls)
        shown = ", ".join(f"{n}={t}" for n, t in zip(self.names, self.field_types))
        super().__init__(name=f"{cls.__qualname__}({shown})")

    @property
    def key(self):
        return self.cls, self.field_types

    def __iter__(self):  # the entries of its data model, in order
        return iter(self.field_types)

    def __len__(self):
        return len(self.field_types)

    def is_precise(self):
        return all(t.is_precise() for t in self.field_types)

    def unify(self, typingctx, other):
        """Instances of one class unify field by field (a loop-carried instance whose fields
        change from constants to run-time values)."""
        if not isinstance(other, DataclassType) or other.cls is not self.cls:
            return None
        fields = [a if a == b else typingctx.unify_pairs(a, b)
                  for a, b in zip(self.field_types, other.field_types)]
        if any(t is None or t == types.undefined for t in fields):
            return None
        return DataclassType(self.cls, fields)

    def can_convert_to(self, typingctx, other):
        if isinstance(other, DataclassType) and other.cls is self.cls:
            kinds = [typingctx.can_convert(a, b)
                     for a, b in zip(self.field_types, other.field_types)]
            if all(kind is not None for kind in kinds):
                return max(kinds, default=types.Conversion.exact)
        return None

    def describe(self):
        return f"instance of dataclass {self.cls.__name__}"


class DataclassClassType(ConstantType, types.Callable):
    """A dataclass as a value of tile code: a compile-time constant, nothing at run time;
    calling it makes an instance."""

    def __init__(self, cls):
        super().__init__(cls)

    @property
    def key(self):  # by the class, not by its name (two local classes may share one)
        return "dataclass", self.value

    def get_call_type(self, context, args, kws):
        if rules.class_attribute(self.value, rules.POST_INIT) is not dataclasses.MISSING:
            return None  # made by construct_dataclass, __post_init__ inlined after it
        return construction_signature(context, self.value, args, kws)

    def get_call_signatures(self):
        return (), True

    def get_impl_key(self, sig):
        return type(self)


class MemberType(types.Type):
    """A function of a dataclass read in tile code (see the module's docstring): ``kind``
    ``"method"`` is called with ``owner`` (the instance or class it was read from, whose
    run-time value this is) first, ``"property"`` is read the same way, ``"function"`` is
    called as it is. ``function`` is the Python function or a helper's dispatcher."""

    def __init__(self, owner, name, function, kind):
        self.owner, self.member, self.function, self.kind = owner, name, function, kind
        super().__init__(name=f"DataclassMember({kind} {name} of {owner})")

    @property
    def key(self):
        return self.owner, self.member, self.function, self.kind

    def unify(self, typingctx, other):
        """One method read from instances whose types unify (in a loop)."""
        if not isinstance(other, MemberType) or other.key[1:] != self.key[1:] or \
                self.owner is None or other.owner is None:
            return None
        owner = typingctx.unify_pairs(self.owner, other.owner)
        return None if owner is None else MemberType(owner, self.member, self.function,
                                                     self.kind)


# -- the calls the member pass writes ------------------------------------------------------
def construct_dataclass(cls, *args, **kwargs):
    """``cls(*args, **kwargs)`` without its ``__post_init__``, which the pass inlines after
    it (never called: typed and lowered)."""


def replace_fields(obj, /, **changes):
    """``dataclasses.replace(obj, **changes)`` without ``__post_init__`` (as above)."""


def member_receiver(member):
    """The instance (or class) a method was read from, passed to it as ``self``."""


# -- types of values ------------------------------------------------------------------------
def value_type(context, value):
    """The Numba type of a constant of tile code that holds dataclasses (an instance, a
    class, a tuple with one), or of a field's or class attribute's constant value.

    >>> import dataclasses
    >>> from numba_tile.compiler.contexts import contexts
    >>> from numba_tile.compiler.typing.dataclasses import value_type
    >>> @dataclasses.dataclass(frozen=True)
    ... class Span:
    ...     start: int
    ...     length: float = 0.5
    >>> value_type(contexts()[0], Span(3))
    Span(start=Literal[int](3), length=Literal[float](0.5))
    """
    if rules.is_dataclass_instance(value):
        rules.check_instance(value)
        cls = type(value)
        return DataclassType(cls, [value_type(context, getattr(value, name))
                                   for name in rules.field_names(cls)])
    if rules.is_dataclass_class(value):
        return DataclassClassType(value)
    if isinstance(value, tuple):
        return types.Tuple([value_type(context, item) for item in value])
    if isinstance(value, Tile) and value.is_constant and value.ndim == 0:
        return TypedConstant(value.dtype, value.constant_value())
    if isinstance(value, Loose):
        value = value.value
    if isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum):
        return literal_type(bool(value) if isinstance(value, bool) else
                            int(value) if isinstance(value, int) else float(value))
    if value is None:
        return types.none
    if isinstance(value, str):
        return ConstantType(value)
    if isinstance(value, pytypes.FunctionType) and current().static_helpers is not None:
        value = current().static_helpers.value(value)  # a helper: inlined where called
    return context.resolve_value_type(value)


def holds_dataclasses(value):
    """Whether a global value is a dataclass, an instance of one, or a tuple holding one."""
    if isinstance(value, tuple):
        return any(holds_dataclasses(item) for item in value)
    return dataclasses.is_dataclass(value)


def constant_instance(instance_type, field_value, missing):
    """The Python instance a :class:`DataclassType` whose fields are all constants holds
    (``field_value(field type)`` gives each field's value, ``missing`` where none), made
    without running ``__init__``; ``missing`` where a field is not constant."""
    values = [field_value(t) for t in instance_type.field_types]
    if any(v is missing for v in values):
        return missing
    instance = object.__new__(instance_type.cls)
    for name, value in zip(instance_type.names, values):
        object.__setattr__(instance, name, value)
    return instance


def _field_type(numba_type):
    """The type a field keeps of an argument's type (a string literal is a constant)."""
    if isinstance(numba_type, types.StringLiteral):
        return ConstantType(numba_type.literal_value)
    return numba_type


def construction_signature(context, cls, args, kws):
    """The signature of ``cls(*args, **kws)``: its arguments in the order of ``cls``'s
    fields, defaults as the constants they are."""
    rules.check_construction(cls)
    given = rules.bind_construction(cls, args, kws)
    parameter_types = [value_type(context, rules.default(cls, index))
                       if numba_type is dataclasses.MISSING else numba_type
                       for index, numba_type in enumerate(given)]
    pysig = inspect.Signature([p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
                               for p in inspect.signature(cls).parameters.values()])
    instance = DataclassType(cls, [_field_type(t) for t in parameter_types])
    return signature(instance, *parameter_types).replace(pysig=pysig)


# -- templates -------------------------------------------------------------------------------
@registry.register_global(construct_dataclass)
class ConstructDataclass(AbstractTemplate):
    prefer_literal = True

    def generic(self, args, kws):
        if not args or not isinstance(args[0], DataclassClassType):
            return None
        found = construction_signature(self.context, args[0].value, args[1:], kws)
        return signature(found.return_type, args[0], *found.args).replace(
            pysig=_with_first("cls", found.pysig))


def _with_first(name, pysig):
    return pysig.replace(parameters=[
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *pysig.parameters.values()])


class _Replace(AbstractTemplate):
    """``dataclasses.replace(obj, **changes)``: an instance type with the changed fields'
    types."""

    prefer_literal = True

    def generic(self, args, kws):
        if not args or not isinstance(args[0], DataclassType):
            raise TileTypeError("dataclasses.replace() needs an instance of a frozen "
                                "dataclass")
        if len(args) != 1:
            raise TileTypeError("dataclasses.replace() takes the instance and the changed "
                                "fields as keyword arguments")
        instance = args[0]
        rules.check_construction(instance.cls)
        rules.check_replacement(instance.cls, kws)
        if self.key is dataclasses.replace and rules.class_attribute(
                instance.cls, rules.POST_INIT) is not dataclasses.MISSING:
            return None  # replace_fields, then __post_init__ inlined (the member pass)
        fields = list(instance.field_types)
        for name, numba_type in kws.items():
            fields[instance.names.index(name)] = _field_type(numba_type)
        names = list(kws)
        pysig = inspect.Signature([
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for name in ["obj", *names]])
        return signature(DataclassType(instance.cls, fields), instance,
                         *(kws[name] for name in names)).replace(pysig=pysig)


for _function in (dataclasses.replace, replace_fields):
    registry.register_global(_function)(type("Replace", (_Replace,), {"key": _function}))


@registry.register_global(member_receiver)
class MemberReceiver(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], MemberType) and args[0].owner is not None:
            return signature(args[0].owner, *args)
        return None


@registry.register_attr
class InstanceAttributes(AttributeTemplate):
    """Fields, functions and class constants read through an instance."""

    key = DataclassType

    def generic_resolve(self, instance, attr):
        found = rules.member(instance.cls, attr)
        if found is None:
            if attr == rules.CALL:
                raise rules.cannot_call(instance.cls)
            if not attr.startswith("__"):
                raise rules.no_attribute(instance.cls, attr)
            return None
        kind, what = found
        if kind == "field":
            field_type = instance.field_types[what]
            if isinstance(field_type, types.Dispatcher):  # a helper held in a field
                return MemberType(None, attr, field_type.dispatcher, "function")
            return field_type
        if kind in ("method", "property"):
            return MemberType(instance, attr, what, kind)
        return _class_member(self.context, instance.cls, attr, kind, what)


@registry.register_attr
class ClassAttributes(AttributeTemplate):
    """Functions and constants read through the class (``Point.ORIGIN``)."""

    key = DataclassClassType

    def generic_resolve(self, klass, attr):
        if attr.startswith("__"):
            return None
        found = rules.member(klass.value, attr, of_instance=False)
        return None if found is None else _class_member(self.context, klass.value, attr,
                                                        *found)


def _class_member(context, cls, attr, kind, what):
    if kind == "classmethod":
        return MemberType(DataclassClassType(cls), attr, what, "method")
    if kind == "function":
        return MemberType(None, attr, what, "function")
    return value_type(context, what)


class _ItemAccess(AbstractTemplate):
    """``d[i]`` and ``d[i] = v`` on an instance: its ``__getitem__``/``__setitem__``,
    inlined (the member pass); an error where the class has none."""

    dunder = None

    def generic(self, args, kws):
        if not args or not isinstance(args[0], DataclassType):
            return None
        cls = args[0].cls
        if rules.class_attribute(cls, self.dunder) is dataclasses.MISSING:
            raise rules.not_subscriptable(cls, assignment=self.dunder == rules.SETITEM)
        return None


registry.register_global(operator.getitem)(type("DataclassGetItem", (_ItemAccess,),
                                                {"dunder": rules.GETITEM}))
registry.register_global(operator.setitem)(type("DataclassSetItem", (_ItemAccess,),
                                                {"dunder": rules.SETITEM}))
