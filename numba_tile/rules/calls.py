"""Calls that tile code may not make, with cuTile's words: Python builtins that have no meaning
on the GPU (``eval``, ``open``, ``input``...) and the creation of instances of classes other
than frozen dataclasses (``Foo()``). Both are ``TileTypeError`` where the call is; reading a
constant attribute of such a class (``Config.BLOCK``) is allowed.

>>> from numba_tile.rules.calls import check_call
>>> check_call(eval)
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: eval() is not supported in device code
>>> class Foo:
...     pass
>>> check_call(Foo)
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Creating instances of type "Foo" is not supported in device code
"""

import builtins
import dataclasses
import enum

from ..errors import TileTypeError

#: builtins that tile code cannot call: they read or change the host process (files, the
#: console, the interpreter's namespaces, objects' identities and attributes)
REFUSED_BUILTINS = frozenset({
    "eval", "exec", "compile", "open", "input", "breakpoint", "help", "globals", "locals",
    "vars", "dir", "__import__", "exit", "quit", "id", "setattr", "delattr", "memoryview",
    "bytearray", "bytes", "object", "super", "property", "staticmethod", "classmethod",
    "aiter", "anext"})


def refused_builtin(value):
    """The name of ``value`` where it is a refused builtin, else None."""
    return next((name for name in REFUSED_BUILTINS
                 if getattr(builtins, name, None) is value), None)


def builtin_error(name):
    """cuTile's ``TileTypeError`` for a call of the builtin ``name``."""
    return TileTypeError(f"{name}() is not supported in device code")


def is_plain_class(value):
    """A class tile code cannot make instances of: one of the user's, neither a dataclass
    (:mod:`.dataclasses` has their rules), an enum (its members are constants) nor a named
    tuple (a tuple)."""
    return isinstance(value, type) and not dataclasses.is_dataclass(value) and \
        not issubclass(value, (enum.Enum, BaseException, tuple)) and \
        value.__module__ not in ("builtins", "numba_tile") and \
        not value.__module__.startswith(("numba_tile.", "numpy", "torch", "numba"))


def call_error(value):
    """cuTile's ``TileTypeError`` for a call of ``value`` in tile code, or None where the
    call is not refused by these rules."""
    name = refused_builtin(value)
    if name is not None:
        return builtin_error(name)
    if is_plain_class(value):
        return TileTypeError(f'Creating instances of type "{value.__name__}" is not supported '
                             f'in device code')
    return None


def check_call(value):
    """Raise :func:`call_error` of ``value``, if any."""
    error = call_error(value)
    if error is not None:
        raise error


#: what :func:`recursion_key` gives for an argument known only at run time
RUN_TIME = "<run-time>"


def recursion_key(values):
    """What identifies a call of a helper for recursion: its arguments' compile-time
    values, :data:`RUN_TIME` for each one known only at run time (the executors pass that
    marker themselves), an array by its dtype and rank, a function by its code. A helper
    called inside itself with the key of a call it is in never ends at compile time (the
    compiler inlines the same code again): cuTile's ``TileRecursionError``, in both
    executors, whatever the run-time values.

    >>> from numba_tile.rules.calls import RUN_TIME, recursion_key
    >>> recursion_key((RUN_TIME, 3)) == recursion_key((RUN_TIME, 3))
    True
    >>> recursion_key((RUN_TIME, 3)) == recursion_key((RUN_TIME, 2))
    False
    """
    return tuple(_argument_key(value) for value in values)


def _argument_key(value):
    if isinstance(value, tuple):
        return tuple(_argument_key(item) for item in value)
    if getattr(value, "is_tile_array", False):
        return ("array", value.dtype, value.ndim)
    code = getattr(getattr(value, "py_func", value), "__code__", None)
    if code is not None:
        return ("function", code)
    try:
        hash(value)
    except TypeError:
        return ("value", repr(value))
    return ("value", type(value).__name__, value)
