"""Running a static expression (a ``static_eval``, a ``static_assert``, a ``static_iter``
iterable, a tuple comprehension's ``if``) and cuTile's rules for the value it gives, shared by
both executors.

The source rewrite (:mod:`numba_tile.source.static_expressions`) compiled each expression
as a lambda of the local variables it reads; :func:`evaluate` calls it with the values each
executor has for them (the interpreter's tiles, the compiler's compile-time values), inside
the executor's static context, where tile operations refuse or defer. An exception the
expression raises becomes a ``TileStaticEvalError``; a function the kernel defined cannot be
called there.

>>> from numba_tile.rules.static_evaluation import check_condition
>>> check_condition(3 > 2, lambda value: False)
True
"""

import enum
import types

import numpy as np

from .. import dtypes as d
from ..errors import StaticException, TileStaticAssertionError, TileStaticEvalError, \
    TileSyntaxError, TileTypeError
from ..source.static_expressions import AsGlobal, AsTileCode, expression
from . import dataclasses as dataclass_rules
from .global_values import simt_intrinsic_error

#: The most items a ``static_iter`` iterable may give (cuTile's limit).
MAX_ITERATIONS = 1000


class _LocalFunction:
    """A function defined inside the kernel, as ``static_eval`` sees it: not callable.
    ``function``: the function value it stands for (a closure made when the kernel ran),
    which the expression's result holds where it holds this (``static_iter((f, g))``)."""

    def __init__(self, name, function=None):
        self.name, self.function = name, function

    def __call__(self, *args, **kwargs):
        raise local_function_error(self.name)


def local_function_error(name):
    """The error of a call of function ``name``, defined inside the kernel, in a static
    expression."""
    return TileStaticEvalError(f"{name}() is defined inside the kernel and cannot be called "
                               f"inside static_eval()")


def evaluate(key, values, namespace, static_context, finish=None, made_inside=None):
    """The value of expression ``key`` for the values of its local variables, with global
    and closure names from ``namespace``; run inside ``static_context`` (which makes tile
    operations refuse or defer). ``finish(value)``, run there too, gives the result.
    ``made_inside(value)``: the name of a function value that the kernel made (a closure, a
    lambda: not callable here, as cuTile's closures are not), else None."""
    found = expression(key)
    if found.problem is not None:
        raise found.problem[0](found.problem[1])
    scope = dict(namespace)
    for name in found.local_functions:
        scope[name] = _LocalFunction(name)
    if made_inside is not None:
        values = [_local_function(v, made_inside) for v in values]
    function = types.FunctionType(found.code, scope)
    with static_context(found.construct):
        try:
            result = _made_functions(function(*values))
            if found.construct == "static_eval":  # a dataclass instance must be frozen
                dataclass_rules.check_values(result)
                simt = simt_intrinsic_error(result)
                if simt is not None:  # (cuda.threadIdx: tile code cannot hold it either)
                    raise simt
            if found.construct == "static_assert":  # the message as run-time values show
                condition, message = result
                return condition, None if message is None else str(message)
            if found.construct == "static_exception" and not isinstance(result,
                                                                          BaseException):
                raise TypeError(f"'{type(result).__name__}' is not derived from "
                                f"'BaseException'")
            return result if finish is None else finish(result)
        except (TileStaticEvalError, TileSyntaxError, AsTileCode, AsGlobal):
            raise
        except Exception as error:
            if type(error).__module__.startswith("numba_tile"):
                raise
            where = "static_exception() expression" if found.construct == \
                "static_exception" else f"{found.construct}()"
            raise StaticException(f"Exception was raised inside {where} "
                                  f"({exception_text(error)})") from error


def exception_text(error):
    """How cuTile names an exception in its messages: ``ValueError: text`` (its type alone
    where it has no text)."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def static_exception_of(error):
    """cuTile's ``StaticException`` for ``error``, the value of ``raise
    ct.static_exception(EXPR)``'s expression (raised at compile time where the kernel
    reaches the ``raise``).

    >>> from numba_tile.rules.static_evaluation import static_exception_of
    >>> print(static_exception_of(ValueError("no")))
    Exception was raised at compile time (ValueError: no)
    """
    return StaticException(f"Exception was raised at compile time ({exception_text(error)})")


def raise_static_exception(error):
    """Raise :func:`static_exception_of` ``error``.

    >>> from numba_tile.rules.static_evaluation import raise_static_exception
    >>> raise_static_exception(KeyError("k"))
    Traceback (most recent call last):
    ...
    numba_tile.errors.StaticException: Exception was raised at compile time (KeyError: 'k')
    """
    raise static_exception_of(error)


def _local_function(value, made_inside):
    name = made_inside(value)
    return value if name is None else _LocalFunction(name, value)


def _made_functions(value):
    """A result with the functions the kernel made in place of their stand-ins."""
    if isinstance(value, _LocalFunction) and value.function is not None:
        return value.function
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_made_functions(v) for v in value)
    return value


def check_assertion(condition, message, is_run_time):
    """What ``static_assert`` does with its evaluated condition and message:
    ``TileTypeError`` for a condition that is no constant bool (``is_run_time(value)`` says
    whether it is a run-time value), ``TileStaticAssertionError`` where it is false."""
    if is_run_time(condition):
        raise TileTypeError("static_assert() condition must be a compile-time constant")
    if getattr(condition, "is_constant", False) and condition.ndim == 0:
        condition = condition.constant_value()  # a comparison of typed constants
    if not isinstance(condition, (bool, np.bool_)):
        raise TileTypeError(f"static_assert() condition must be a boolean, got {condition!r}")
    if not condition:
        text = "" if message is None else str(message)
        raise TileStaticAssertionError("Static assertion failed" + (f": {text}" if text else ""))


def iteration_items(iterable, is_run_time, is_tile_value):
    """The items of a ``static_iter`` iterable, as a tuple: ``TileTypeError`` if it cannot
    be iterated, ``TileStaticEvalError`` past :data:`MAX_ITERATIONS` items (an endless
    iterator stops there) or for an item tile code cannot hold. ``is_run_time(value)``
    says whether a value is known only when the kernel runs (not iterable at compile
    time), ``is_tile_value(value)`` whether it is a value of tile code (a tile, an
    array...): valid items, as constants and tuples of valid items are.

    >>> from numba_tile.rules.static_evaluation import iteration_items
    >>> iteration_items(enumerate("ab"), lambda v: False, lambda v: False)
    ((0, 'a'), (1, 'b'))
    >>> iteration_items(([1, 2],), lambda v: False, lambda v: False)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileStaticEvalError: Invalid item #0 of static_iter() iterable: ...
    """
    if is_run_time(iterable):  # (its value is not known when the kernel compiles)
        raise TileTypeError(f"Invalid static_iter() iterable: '{_type_name(iterable)}' "
                            f"object is not iterable")
    try:
        iterator = iter(iterable)
    except TypeError:
        raise TileTypeError(f"Invalid static_iter() iterable: '{_type_name(iterable)}' "
                            f"object is not iterable") from None
    items = []
    for item in iterator:
        if len(items) == MAX_ITERATIONS:
            raise TileStaticEvalError(f"Maximum number of iterations ({MAX_ITERATIONS}) has "
                                      f"been reached while unpacking the static_iter() "
                                      f"iterable")
        invalid = _invalid_part(item, is_tile_value)
        if invalid is not None:
            raise TileStaticEvalError(f"Invalid item #{len(items)} of static_iter() iterable: "
                                      f"Cannot create constant from value of type "
                                      f"{_type_name(invalid)}.")
        items.append(item)
    return tuple(items)


def _type_name(value):
    """The Python type's name of a value (a loosely typed constant is an int or a float, a
    compiler's run-time value names the interpreter's type)."""
    named = getattr(value, "__tile_type_name__", None)
    if named is not None:
        return named
    for python_type in (bool, int, float):
        if isinstance(value, python_type):
            return python_type.__name__
    return type(value).__name__


def _invalid_part(value, is_tile_value):
    """The part of a ``static_iter`` item tile code cannot hold, or None."""
    if isinstance(value, tuple):
        return next((p for p in (_invalid_part(v, is_tile_value) for v in value)
                     if p is not None), None)
    if value is None or isinstance(value, (bool, int, float, str, d.DType, enum.Enum)) or \
            is_tile_value(value) or d.dtype_spelling(value) is not None:
        return None
    if callable(value) and not isinstance(value, np.generic):
        return None  # a function: tile code calls it
    return value


def check_condition(value, is_run_time):
    """What a tuple comprehension's ``if`` gives: the constant condition as a bool;
    ``TileTypeError`` where it is known only at run time (cuTile's rule: the tuple's length
    is known when the kernel compiles)."""
    if is_run_time(value):
        raise TileTypeError("Tuple comprehension if-conditions must be statically known")
    if getattr(value, "is_constant", False) and value.ndim == 0:
        value = value.constant_value()  # a typed constant
    return bool(value)
