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
import types
import typing

from ..errors import TileTypeError
from ..source.user_code import is_user_code

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


def is_annotation(value):
    """A kernel parameter annotation of numba_tile (``ct.Constant``, ``ct.ScalarInt64``,
    ``ct.ArrayAnnotation``...), which means something only in a kernel's signature."""
    if typing.get_origin(value) is typing.Annotated:
        return True
    owner = value if isinstance(value, type) else type(value)
    return getattr(owner, "__module__", None) == "numba_tile.annotations"


#: the libraries whose functions tile code may name: numba_tile's own, those it gives tile
#: semantics (``math``, Python's builtins and operators) or rules of their own (NumPy's
#: functions, dataclasses, enums, context managers, ``functools.partial``)
TILE_AWARE_MODULES = frozenset({"numba_tile", "builtins", "math", "operator", "numpy",
                                "dataclasses", "enum", "typing", "contextlib", "functools",
                                "_operator", "_functools", "abc"})


def library_function(value):
    """``module.name`` of a function of a library that tile code cannot call
    (``time.time``, ``random.random``, ``os.getpid``: they run on the host), or None.

    >>> import time, math
    >>> from numba_tile.rules.calls import library_function
    >>> library_function(time.time), library_function(math.sqrt)
    ('time.time', None)
    """
    if not isinstance(value, (types.FunctionType, types.BuiltinFunctionType,
                              types.MethodType)):
        return None
    owner = getattr(value, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):
        module = getattr(value, "__module__", None) or ""
    else:  # a method of a library's object (random.random: of its Random instance)
        module = (owner if isinstance(owner, type) else type(owner)).__module__ or ""
        if isinstance(value, types.MethodType) and is_user_code(value.__func__):
            return None
    if not module or module.partition(".")[0] in TILE_AWARE_MODULES:
        return None
    if isinstance(value, types.FunctionType) and (
            is_user_code(value) or hasattr(value, "__numba_tile_function__")):
        return None
    wrapped = getattr(value, "__wrapped__", None)  # a decorator's wrapper of the user's
    while wrapped is not None:  # (a contextlib.contextmanager helper: its own rules)
        if is_user_code(wrapped):
            return None
        wrapped = getattr(wrapped, "__wrapped__", None)
    return f"{module}.{value.__name__}"


def is_kernel(value):
    """A tile kernel (a ``@ct.kernel`` function), which tile code may not call."""
    return not isinstance(value, type) and getattr(value, "is_tile_kernel", False) is True


def call_error(value):
    """cuTile's ``TileTypeError`` for a call of ``value`` in tile code, or None where the
    call is not refused by these rules: a refused builtin, an instance of a plain class, a
    parameter annotation (``ct.Constant(4)``), another kernel (a kernel is started with
    ``ct.launch``, not called).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.calls import call_error
    >>> print(call_error(ct.Constant))
    ct.Constant is a kernel parameter annotation (n: ct.Constant[int]); it cannot be ...
    """
    name = refused_builtin(value)
    if name is not None:
        return builtin_error(name)
    if is_kernel(value):
        return TileTypeError(f"Tile kernel '{value.__name__}' cannot be called from tile "
                             f"code; a kernel is started with ct.launch(). Move the code both "
                             f"kernels share into a helper function and call that")
    if is_annotation(value):
        name = f"ct.{value.__name__}" if isinstance(value, type) else repr(value)
        return TileTypeError(f"{name} is a kernel parameter annotation (n: "
                             f"ct.Constant[int]); it cannot be called in tile code")
    if is_plain_class(value):
        return TileTypeError(f'Creating instances of type "{value.__name__}" is not supported '
                             f'in device code')
    name = library_function(value)
    if name is not None:
        return TileTypeError(f"{name}() is not supported in device code: tile code calls tile "
                             f"operations (ct.*), math functions and its own helper functions")
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
        # (Python 3.12 says "a required keyword-only argument": one text on every Python)
        reason = str(error).replace("required keyword-only argument", "required argument")
        raise TileTypeError(f"Invalid call of {name}(): {reason}; its parameters are "
                            f"{signature_text(name, shown)}") from None


def numpy_call_error():
    """The ``TileTypeError`` of a NumPy function (``np.exp``, ``np.sum``...) given a tile or
    an array in tile code: NumPy runs on the host, tile code has the ct ops.

    >>> from numba_tile.rules.calls import numpy_call_error
    >>> print(numpy_call_error())
    NumPy functions cannot take tiles or arrays in tile code; use the ct ops (ct.exp, ...
    """
    return TileTypeError("NumPy functions cannot take tiles or arrays in tile code; use the ct "
                         "ops (ct.exp, ct.sum, ct.where, ...)")


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
