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
    "aiter", "anext",
    # containers tile code does not have (it has tuples): their literals are refused too
    # (numba_tile.rules.syntax), and ``f(**dict(a=1))`` would build one
    "dict", "list", "set", "frozenset"})


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


def numpy_call_error():
    """The ``TileTypeError`` of a NumPy function (``np.exp``, ``np.sum``...) given a tile or
    an array in tile code: NumPy runs on the host, tile code has the ct ops.

    >>> from numba_tile.rules.calls import numpy_call_error
    >>> print(numpy_call_error())
    NumPy functions cannot take tiles or arrays in tile code; use the ct ops (ct.exp, ...
    """
    return TileTypeError("NumPy functions cannot take tiles or arrays in tile code; use the ct "
                         "ops (ct.exp, ct.sum, ct.where, ...)")


def binding_error(op, error):
    """The ``TileTypeError`` of a call of tile op ``op`` whose arguments do not bind to its
    signature (``error``: the ``TypeError`` of ``inspect.Signature.bind``), in both executors.

    >>> import inspect
    >>> from numba_tile.rules.calls import binding_error
    >>> try:
    ...     inspect.signature(lambda x, /, *, axis=0: x).bind(1, keepdims=True)
    ... except TypeError as error:
    ...     print(binding_error("sum", error))
    sum() got an unexpected keyword argument 'keepdims'
    """
    return TileTypeError(f"{op}() {error}")


def call_binding_error(fn, args, kwargs):
    """:func:`binding_error` of calling ``fn`` with ``args`` and ``kwargs``, or None where
    they bind."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as error:
        return binding_error(fn.__name__, error)
    return None
