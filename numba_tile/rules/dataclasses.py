"""Frozen dataclasses in tile code: what both executors accept, and cuTile's errors for the
rest.

An instance of a frozen dataclass is a value of tile code: its fields hold tiles, scalars,
arrays, constants, tuples or other such instances, and it can be made in the kernel
(``Point(x, y)``, ``dataclasses.replace(p, x=0)``), captured from a global or returned by
``ct.static_eval``. Its methods, properties, ``__call__``, ``__getitem__``, ``__setitem__``
and ``__post_init__`` are tile code, called with the instance; its other class attributes are
constants. cuTile refuses dataclasses that are not frozen, subclasses that are no dataclass,
and creating instances of classes whose ``__init__`` is not the one ``@dataclass`` makes,
with a custom ``__new__``, or with fields that ``__init__`` does not set alike
(``init=False``, ``default_factory``). The interpreter runs the class's Python; the compiler
types and inlines it; both check with these rules.

>>> import dataclasses
>>> from numba_tile.rules.dataclasses import check_construction
>>> @dataclasses.dataclass
... class Thawed:
...     foo: int
>>> check_construction(Thawed)
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Only frozen dataclasses are supported
"""

import dataclasses
import inspect
import types

from ..errors import TileTypeError, TileUnsupportedFeatureError

# the members tile code calls implicitly: ``d(...)``, ``d[i]``, ``d[i] = v``, after __init__
CALL, GETITEM, SETITEM, POST_INIT = "__call__", "__getitem__", "__setitem__", "__post_init__"


def is_dataclass_class(value):
    """True for a class that is (or derives from) a dataclass."""
    return isinstance(value, type) and dataclasses.is_dataclass(value)


def is_dataclass_instance(value):
    """True for an instance of a dataclass (not the class itself)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def check_class(cls):
    """Refuse a class whose instances tile code cannot hold: a subclass of a dataclass that
    is no dataclass itself, or a dataclass that is not frozen (``TileTypeError``)."""
    if "__dataclass_fields__" not in vars(cls):
        raise TileTypeError("Non-dataclass subclasses of a dataclass are not supported")
    if not cls.__dataclass_params__.frozen:
        raise TileTypeError("Only frozen dataclasses are supported")


def check_instance(value):
    """:func:`check_class` for the class of ``value``; returns ``value``."""
    check_class(type(value))
    return value


def check_values(value):
    """:func:`check_instance` for every dataclass instance in ``value`` (a value a static
    expression gives): in tuples, in the fields of instances."""
    if isinstance(value, tuple):
        for item in value:
            check_values(item)
    elif is_dataclass_instance(value):
        check_instance(value)
        for name in field_names(type(value)):
            check_values(getattr(value, name))


def check_construction(cls):
    """Refuse creating an instance of ``cls`` in tile code where cuTile does (see the module's
    docstring)."""
    check_class(cls)
    if any("__new__" in vars(klass) for klass in cls.__mro__[:-1]):
        raise TileTypeError("Dataclasses with custom __new__ are not supported")
    fields = dataclasses.fields(cls)
    if any(not field.init for field in fields):
        raise TileTypeError("Dataclasses with init=False fields are not supported")
    if any(field.default_factory is not dataclasses.MISSING for field in fields):
        raise TileTypeError("Dataclasses with default_factory fields are not supported")
    init = vars(cls).get("__init__")
    # the __init__ @dataclass makes is compiled from generated text, not from a file
    if not (cls.__dataclass_params__.init and isinstance(init, types.FunctionType)
            and init.__code__.co_filename == "<string>"):
        raise TileTypeError("Dataclass instance creation is only supported for dataclasses "
                            "with a default generated __init__() method")
    if set(inspect.signature(cls).parameters) - set(field_names(cls)):  # InitVar parameters
        raise TileUnsupportedFeatureError("Dataclasses with InitVar pseudo-fields are not "
                                          "supported in tile code")


def field_names(cls):
    """The names of the fields of dataclass ``cls``, in order."""
    return tuple(field.name for field in dataclasses.fields(cls))


def bind_construction(cls, args, kwargs):
    """The value given for each field of ``cls(*args, **kwargs)``, in field order, with
    ``dataclasses.MISSING`` where the field's default applies; ``TileTypeError`` where the
    arguments do not bind (after :func:`check_construction`).

    >>> import dataclasses
    >>> from numba_tile.rules.dataclasses import bind_construction
    >>> @dataclasses.dataclass(frozen=True)
    ... class Span:
    ...     start: int
    ...     length: int = 1
    >>> bind_construction(Span, (), {"start": 4})
    (4, <dataclasses._MISSING_TYPE object at ...>)
    >>> bind_construction(Span, (1, 2, 3), {})
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Span(): too many positional arguments
    """
    try:
        bound = inspect.signature(cls).bind(*args, **kwargs)
    except TypeError as error:
        raise TileTypeError(f"{cls.__name__}(): {error}") from None
    return tuple(bound.arguments.get(name, dataclasses.MISSING) for name in field_names(cls))


def default(cls, index):
    """The default of field ``index`` of ``cls``."""
    return dataclasses.fields(cls)[index].default


def check_replacement(cls, names):
    """Refuse ``dataclasses.replace`` of fields ``cls`` does not have.

    >>> import dataclasses
    >>> from numba_tile.rules.dataclasses import check_replacement
    >>> @dataclasses.dataclass(frozen=True)
    ... class Span:
    ...     start: int
    >>> check_replacement(Span, ["stop"])
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Dataclass 'Span' has no such field 'stop'
    """
    for name in names:
        if name not in field_names(cls):
            raise TileTypeError(f"Dataclass '{cls.__name__}' has no such field '{name}'")


def class_attribute(cls, name):
    """``name`` as defined in the body of ``cls`` or of its nearest base (descriptors as
    they are: a ``property``, a ``staticmethod``...), or ``dataclasses.MISSING``."""
    for klass in cls.__mro__[:-1]:
        if name in vars(klass):
            return vars(klass)[name]
    return dataclasses.MISSING


def member(cls, name, of_instance=True):
    """What attribute ``name`` of ``cls`` (``of_instance``: of one of its instances) is to
    tile code: ``("field", index)``, ``("method", function)`` (called with the instance
    first), ``("property", getter)``, ``("classmethod", function)`` (called with the class
    first), ``("function", function)`` (called as it is), ``("constant", value)``, or None
    (no such attribute).

    >>> import dataclasses
    >>> from numba_tile.rules.dataclasses import member
    >>> @dataclasses.dataclass(frozen=True)
    ... class Point:
    ...     x: int
    ...     ORIGIN = 0
    ...     def norm(self):
    ...         return abs(self.x)
    >>> member(Point, "x"), member(Point, "ORIGIN"), member(Point, "norm")[0]
    (('field', 0), ('constant', 0), 'method')
    """
    names = field_names(cls)
    if of_instance and name in names:
        return "field", names.index(name)
    found = class_attribute(cls, name)
    if found is dataclasses.MISSING:
        return None
    if isinstance(found, property):
        return ("property", found.fget) if of_instance and found.fget is not None else None
    if isinstance(found, staticmethod):
        return "function", found.__func__
    if isinstance(found, classmethod):
        return "classmethod", found.__func__
    if isinstance(found, types.FunctionType):
        return ("method" if of_instance else "function"), found
    return "constant", getattr(cls, name)


class MissingAttributeError(TileTypeError, AttributeError):
    """An attribute an instance does not have: a ``TileTypeError`` for tile code, an
    ``AttributeError`` for Python's ``hasattr`` and ``getattr`` with a default."""


def no_attribute(cls, name):
    """The error for reading an attribute an instance of ``cls`` does not have."""
    return MissingAttributeError(f"'{cls.__name__}' object has no attribute '{name}'")


def cannot_call(cls):
    """cuTile's error for calling an instance of a class without ``__call__``."""
    return TileTypeError(f"Cannot call an object of type {cls.__name__}")


def not_subscriptable(cls, assignment=False):
    """The error for ``d[i]`` (or ``d[i] = v``) on an instance whose class lacks the
    dunder."""
    if assignment:
        return TileTypeError(f"'{cls.__name__}' object does not support item assignment")
    return TileTypeError(f"'{cls.__name__}' object is not subscriptable")
