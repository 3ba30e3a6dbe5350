"""Frozen dataclasses in interpreted tile code: the rules of
:mod:`numba_tile.rules.dataclasses` applied where Python would run the class as it is, and the
class's functions run as tile code.

Instances are Python objects of a *tile class* made once per launch for each dataclass
(:meth:`Dataclasses.tile_class`): a subclass with the same name and fields whose methods,
properties and dunders are the class's own re-bound to tile semantics, as helpers are
(:class:`~numba_tile.interpreter.runner.TileGlobals`), and whose missing ``__call__``,
``__getitem__`` and ``__setitem__`` raise cuTile's errors. What tile code reads of a
dataclass goes through :meth:`Dataclasses.value`: a class becomes a :class:`TileDataclass`,
which checks cuTile's rules before making an instance; ``dataclasses.replace`` checks the
fields it is given; an instance becomes one of its tile class, or refuses to be used where
tile code cannot hold it (not frozen).

>>> import dataclasses
>>> import numpy as np
>>> import numba_tile as ct
>>> @dataclasses.dataclass(frozen=True)
... class Span:
...     start: int
...     length: int
...     def end(self):
...         return self.start + self.length
>>> @ct.kernel
... def ends(x):
...     span = Span(ct.bid(0), 10)
...     ct.scatter(x, ct.bid(0), span.end())
>>> x = np.zeros(2, np.int32)
>>> ct.launch(0, (2,), ends, (x,))
>>> x
array([10, 11], dtype=int32)
"""

import dataclasses
import enum
import types

from ..errors import TileTypeError
from ..rules import dataclasses as rules
from ..host.scalars import loose

# the class a tile class was made from, as an attribute of the tile class
_ORIGINAL = "__numba_tile_dataclass__"


def original_class(cls):
    """The dataclass a tile class was made from (``cls`` itself for any other class)."""
    return vars(cls).get(_ORIGINAL, cls)


class TileDataclass:
    """A dataclass as interpreted tile code sees it: calling it makes an instance of its
    tile class after cuTile's checks (:func:`~numba_tile.rules.dataclasses.check_construction`);
    its class attributes are the tile class's."""

    def __init__(self, cls, tile_class):
        object.__setattr__(self, "__wrapped__", cls)
        object.__setattr__(self, "_tile_class", tile_class)

    def __call__(self, *args, **kwargs):
        cls = self.__wrapped__
        rules.check_construction(cls)
        rules.bind_construction(cls, args, kwargs)  # cuTile's error where they do not bind
        return self._tile_class(cls)(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tile_class(self.__wrapped__), name)

    def __instancecheck__(self, instance):
        return isinstance(instance, self.__wrapped__)

    def __subclasscheck__(self, cls):
        return issubclass(cls, self.__wrapped__)

    def __repr__(self):
        return repr(self.__wrapped__)


class _Refused:
    """A global tile code cannot hold: any use raises ``error``."""

    def __init__(self, error):
        object.__setattr__(self, "_error", error)

    def _raise(self, *args, **kwargs):
        error = object.__getattribute__(self, "_error")
        raise type(error)(error.message)

    __getattr__ = __call__ = __getitem__ = __setitem__ = __iter__ = __bool__ = _raise


def _raiser(error, name):
    def refuse(self, *args):
        raise error(type(self))
    refuse.__name__ = name
    return refuse


def _not_iterable(self):
    raise TileTypeError(f"'{type(self).__name__}' object is not iterable")


def _no_attribute(self, name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise rules.no_attribute(type(self), name)


# what a tile class has in place of a dunder its dataclass lacks: cuTile's errors
_MISSING_DUNDERS = {
    rules.CALL: _raiser(rules.cannot_call, rules.CALL),
    rules.GETITEM: _raiser(rules.not_subscriptable, rules.GETITEM),
    rules.SETITEM: _raiser(lambda cls: rules.not_subscriptable(cls, assignment=True),
                           rules.SETITEM),
}


class Dataclasses:
    """The tile classes of one launch; ``tile_value(function)`` gives a function of user
    code re-bound to tile semantics."""

    def __init__(self, tile_value):
        self._tile_value = tile_value
        self._classes = {}
        self.module = types.ModuleType(dataclasses.__name__, dataclasses.__doc__)
        self.module.__dict__.update({name: value for name, value in vars(dataclasses).items()
                                     if not name.startswith("__")})
        self.module.replace = self.replace

    def value(self, value):
        """What a global or captured ``value`` that concerns dataclasses is in interpreted
        tile code (the ``dataclasses`` module, ``replace``, a dataclass or an instance of
        one), or None for any other value."""
        if value is dataclasses:
            return self.module
        if value is dataclasses.replace:
            return self.replace
        if rules.is_dataclass_class(value):
            return TileDataclass(value, self.tile_class)
        if rules.is_dataclass_instance(value):
            try:
                rules.check_instance(value)
            except TileTypeError as error:
                return _Refused(error)
            return self._instance(value)
        return None

    def replace(self, obj=None, /, *args, **changes):
        """``dataclasses.replace`` in tile code: an instance of a frozen dataclass with the
        given fields changed (``TileTypeError`` for a field the class does not have)."""
        if not rules.is_dataclass_instance(obj):
            raise TileTypeError("dataclasses.replace() needs an instance of a frozen "
                                "dataclass")
        if args:
            raise TileTypeError("dataclasses.replace() takes the instance and the changed "
                                "fields as keyword arguments")
        cls = original_class(type(obj))
        rules.check_construction(cls)
        rules.check_replacement(cls, changes)
        return self.tile_class(cls)(**{**{name: getattr(obj, name)
                                          for name in rules.field_names(cls)}, **changes})

    def _instance(self, obj):
        """``obj`` as an instance of its tile class, its fields converted too."""
        cls = type(obj)
        tile_class = self.tile_class(cls)
        if tile_class is cls:
            return obj
        converted = object.__new__(tile_class)
        if hasattr(obj, "__dict__"):
            converted.__dict__.update(obj.__dict__)
        for name in rules.field_names(cls):
            object.__setattr__(converted, name, self.converted(getattr(obj, name), True))
        return converted

    def converted(self, value, field=False):
        """``value`` (a ``static_eval`` result, or a ``field`` of an instance made outside
        tile code) with the instances in it made instances of their tile classes, and in
        fields numbers made loosely typed constants, as tile code's literals are."""
        if isinstance(value, tuple):
            items = tuple(self.converted(item, field) for item in value)
            same = all(a is b for a, b in zip(items, value))
            return value if same else tuple(items)
        if rules.is_dataclass_instance(value):
            return self._instance(rules.check_instance(value))
        return loose(value) if field and not isinstance(value, enum.Enum) else value

    def tile_class(self, cls):
        """The tile class of dataclass ``cls`` (see the module's docstring)."""
        cls = original_class(cls)
        if cls in self._classes:
            return self._classes[cls]
        try:
            tile_class = type(cls)(cls.__name__, (cls,), {
                "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__, _ORIGINAL: cls,
                "__dataclass_fields__": cls.__dataclass_fields__,
                "__dataclass_params__": cls.__dataclass_params__})
        except Exception:  # noqa: BLE001 - a class that refuses subclasses runs as it is
            self._classes[cls] = cls
            return cls
        # kept before its functions are re-bound: they may read instances of the class
        self._classes[cls] = tile_class
        if rules.class_attribute(cls, "__getattr__") is dataclasses.MISSING:
            tile_class.__getattr__ = _no_attribute
        for name, function in _MISSING_DUNDERS.items():
            if rules.class_attribute(cls, name) is dataclasses.MISSING:
                setattr(tile_class, name, function)
        if rules.class_attribute(cls, rules.GETITEM) is dataclasses.MISSING and \
                rules.class_attribute(cls, "__iter__") is dataclasses.MISSING:
            tile_class.__iter__ = _not_iterable  # Python would iterate by __getitem__
        for name in _user_attributes(cls):
            setattr(tile_class, name, self._rebound(rules.class_attribute(cls, name)))
        return tile_class

    def _rebound(self, attribute):
        """A function, property, static or class method of a dataclass, its functions
        re-bound to tile semantics."""
        if isinstance(attribute, property):
            return property(*(None if f is None else self._tile_value(f)
                              for f in (attribute.fget, attribute.fset, attribute.fdel)),
                            attribute.__doc__)
        if isinstance(attribute, (staticmethod, classmethod)):
            return type(attribute)(self._tile_value(attribute.__func__))
        return self._tile_value(attribute)


def _user_attributes(cls):
    """The names of the functions, properties, static and class methods the user wrote in
    ``cls`` and its bases (not those ``@dataclass`` generated)."""
    names = []
    for name in sorted({name for klass in cls.__mro__[:-1] for name in vars(klass)}):
        value = rules.class_attribute(cls, name)
        function = value.fget if isinstance(value, property) else \
            value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if isinstance(function, types.FunctionType) and \
                function.__code__.co_filename != "<string>":
            names.append(name)
    return names
