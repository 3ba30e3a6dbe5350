"""The builtins of tile code in the interpreter: ``min``, ``max``, ``int``, ``float``,
``bool``, ``abs``, ``divmod`` and ``range`` with tile semantics, the builtins that do not apply
to tiles or arrays checking their arguments (:mod:`numba_tile.rules.objects`), and those tile
code may not call refused with cuTile's error. The kernel's globals take
:data:`TILE_BUILTINS` as their ``__builtins__``
(:class:`~numba_tile.interpreter.runner.TileGlobals`).

>>> from numba_tile.interpreter.tile_builtins import TILE_BUILTINS
>>> TILE_BUILTINS["max"](1, 3)
3
"""
import builtins

from .. import dtypes as d
from ..host.loops import TileRange
from ..host.scalars import loose
from ..host.tile import Tile
from ..language import debugging, elementwise
from ..rules import calls, objects
from ..rules.dataclasses import is_dataclass_instance


def _fold_minmax(name, args):
    items = args[0] if len(args) == 1 else args
    items = tuple(items)
    if not any(isinstance(v, Tile) for v in items):
        return loose(getattr(builtins, name)(items))
    op = elementwise.minimum if name == "min" else elementwise.maximum
    result = items[0]
    for v in items[1:]:
        result = op.__tile_op__(result, v)
    return result


def _tile_min(*args, **kwargs):
    _check_builtin("min", args)
    return builtins.min(*args, **kwargs) if kwargs else _fold_minmax("min", args)


def _tile_max(*args, **kwargs):
    _check_builtin("max", args)
    return builtins.max(*args, **kwargs) if kwargs else _fold_minmax("max", args)


def _kind(value):
    """The kind of a value of tile code (:mod:`numba_tile.rules.objects`), ``"None"`` or
    ``"str"`` for those, or None."""
    if value is None or isinstance(value, str):
        return "None" if value is None else "str"
    if is_dataclass_instance(value):
        return objects.DATACLASS_KIND + type(value).__name__
    return getattr(type(value), "object_kind", None)


def _check_builtin(name, args):
    """cuTile's error of builtin ``name`` applied to ``args`` where it does not apply to
    them (``len(x)`` of an array, ``float(x)``, ``sum(t)``)."""
    error = objects.builtin_call_error(name, [_kind(a) for a in args])
    if error is not None:
        raise error


def _checked(name, python):
    """The builtin ``python`` that first checks its arguments (:func:`_check_builtin`)."""
    def checked(*args, **kwargs):
        _check_builtin(name, args)
        return python(*args, **kwargs)
    checked.__name__ = name
    return checked


def _converter(name, dtype):
    python = getattr(builtins, name)

    def convert(value=0, *rest):
        _check_builtin(name, (value, *rest))
        if isinstance(value, Tile) and value.is_compile_time and not rest:
            value = value.constant_value()  # a constant: a loosely typed one, as compiled
        elif isinstance(value, Tile) and not rest:
            return elementwise.astype.__tile_op__(value, dtype)
        try:
            converted = python(value, *rest)
        except (ValueError, OverflowError):  # int("abc"), int(inf): cuTile's error
            raise objects.conversion_error(name, value) from None
        return loose(converted) if name != "bool" else converted
    convert.__name__ = name
    return convert


def _tile_divmod(x, y):
    _check_builtin("divmod", (x, y))
    if isinstance(x, Tile) or isinstance(y, Tile):
        return elementwise.divmod.__tile_op__(x, y)
    return tuple(loose(v) for v in builtins.divmod(x, y))


def _tile_abs(x):
    """``abs`` in tile code: of a number, Python's; of anything else, ``ct.abs`` (whose rule
    refuses None or a string as the compiler does); of an array or a list argument,
    cuTile's error for the builtin (:func:`_check_builtin`)."""
    _check_builtin("abs", (x,))
    if isinstance(x, (bool, int, float)) and not isinstance(x, Tile):
        return loose(builtins.abs(x))
    return elementwise.abs.__tile_op__(x)


def _refused(name):
    """A stand-in for the builtin ``name``, which tile code cannot call: cuTile's error when
    called."""
    def refused(*args, **kwargs):
        raise calls.builtin_error(name)
    refused.__name__ = name
    return refused


class RefusedClass:
    """What tile code may not call (:func:`numba_tile.rules.calls.call_error`): a class of
    the user's, whose constant attributes can be read (``Config.BLOCK``) and ``isinstance``
    works; a parameter annotation; another kernel. Calling it is cuTile's error."""

    def __init__(self, cls):
        self.__dict__["_numba_tile_class"] = cls

    def __getattr__(self, name):
        value = getattr(self.__dict__["_numba_tile_class"], name)
        # (a class's function: datetime.datetime.now, refused where called)
        return RefusedClass(value) if calls.library_function(value) is not None else value

    def __getitem__(self, item):  # ct.Constant[int]: itself an annotation
        value = self.__dict__["_numba_tile_class"][item]
        return RefusedClass(value) if calls.call_error(value) is not None else value

    def __call__(self, *args, **kwargs):
        raise calls.call_error(self.__dict__["_numba_tile_class"])

    def __instancecheck__(self, instance):
        return isinstance(instance, self.__dict__["_numba_tile_class"])

    def __subclasscheck__(self, subclass):
        return issubclass(subclass, self.__dict__["_numba_tile_class"])


TILE_BUILTINS = dict(vars(builtins))
# (classes stay classes, for isinstance: a tile-code object fails in their constructors)
TILE_BUILTINS.update((name, _checked(name, getattr(builtins, name)))
                     for name in objects.BUILTINS
                     if not isinstance(getattr(builtins, name), type))
TILE_BUILTINS.update(min=_tile_min, max=_tile_max, divmod=_tile_divmod, range=TileRange,
                     print=debugging.print,
                     int=_converter("int", d.int32),
                     float=_converter("float", d.float32), bool=_converter("bool", d.bool_))
# (print is ct.print, whose keywords are the compiler's: sep=, end= and flush=)
TILE_BUILTINS.update(abs=_tile_abs, print=debugging.print)
TILE_BUILTINS.update((name, _refused(name)) for name in calls.REFUSED_BUILTINS
                     if hasattr(builtins, name))
