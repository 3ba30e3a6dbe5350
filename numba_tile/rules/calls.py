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
import inspect

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


def signature_text(name, signature):
    """How a message shows the parameters of op ``name``: their names, with the ``/`` and
    ``*`` markers of its signature, without the defaults (enum reprs are long).

    >>> import inspect
    >>> from numba_tile.rules.calls import signature_text
    >>> signature_text("sum", inspect.signature(lambda x, /, axis=None, *, keepdims=False: 0))
    'sum(x, /, axis, *, keepdims)'
    """
    plain = signature.replace(parameters=[p.replace(default=inspect.Parameter.empty)
                                          for p in signature.parameters.values()])
    return f"{name}{plain}"


def bind_arguments(name, signature, args, kwargs, method=False):
    """The arguments of a call of op ``name`` bound to its ``signature``
    (``inspect.BoundArguments``); where they do not bind (an unknown keyword, one argument
    too many or missing, a positional-only parameter passed by keyword), cuTile's
    ``TileTypeError``, the same in both executors, naming the parameters. For a ``method``
    (of tiles, arrays, views: ``signature`` without ``self``) the names alone are shown, as
    each executor marks their kinds its own way.

    >>> import inspect
    >>> from numba_tile.rules.calls import bind_arguments
    >>> bind_arguments("cdiv", inspect.signature(lambda x, y, /: 0), (1,), {"z": 2})
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid call of cdiv(): missing a required argument: 'y'; ...
    """
    try:
        return signature.bind(*args, **kwargs)
    except TypeError as error:
        shown = signature
        if method:
            shown = signature.replace(parameters=[
                p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for p in signature.parameters.values()])
        raise TileTypeError(f"Invalid call of {name}(): {error}; its parameters are "
                            f"{signature_text(name, shown)}") from None
