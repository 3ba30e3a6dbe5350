"""``**kwargs`` of a tile helper: a dictionary of the call's extra keyword arguments, read
with constant keys (``kwargs["foo"]``, ``kwargs.get("foo")``, ``"foo" in kwargs``), compared
(``kwargs == {"foo": 1}`` in ``static_assert``) and forwarded (``f(3, **kwargs)``), as in cuTile.

The keys are known when the kernel compiles: a missing key is a ``TileTypeError`` in both
executors. The interpreter gives a helper's ``**kwargs`` as a :class:`KeywordArguments`
(its source rewrite, :mod:`numba_tile.interpreter.rewrites`, converts it on entry); the
compiler types it as a record of the values (:mod:`numba_tile.compiler.typing.keywords`).

>>> import numba_tile as ct, numpy as np
>>> def scaled(t, **kwargs):
...     return t * kwargs.get("scale", 1) + kwargs["shift"]
>>> @ct.kernel
... def k(x):
...     ct.scatter(x, 0, scaled(ct.gather(x, 0), shift=2, scale=10))
>>> x = np.ones(1, np.int32)
>>> ct.launch(0, (1,), k, (x,))
>>> x
array([12], dtype=int32)
"""

import ast

from ..errors import TileTypeError

#: the global that converts a helper's ``**kwargs`` on entry in interpreted code
CONVERT_NAME = "__numba_tile_keyword_arguments"


def missing_key(key):
    """The error of reading a key the keyword arguments do not have."""
    return TileTypeError(f"Key {key!r} not found in dictionary")


class KeywordArguments(dict):
    """The ``**kwargs`` of an interpreted helper: a ``dict`` whose missing keys are
    :func:`missing_key` errors."""

    def __missing__(self, key):
        raise missing_key(key)


def convert_on_entry(function_node):
    """Make each function of ``function_node`` (an ``ast.FunctionDef``; nested ones too)
    that takes ``**kwargs`` begin with ``kwargs = <CONVERT_NAME>(kwargs)``; True if any does
    (lambdas cannot: theirs stay plain dictionaries)."""
    changed = False
    for node in ast.walk(function_node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.kwarg:
            name = node.args.kwarg.arg
            convert = ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())],
                value=ast.Call(func=ast.Name(id=CONVERT_NAME, ctx=ast.Load()),
                               args=[ast.Name(id=name, ctx=ast.Load())], keywords=[]))
            node.body.insert(0, ast.copy_location(convert, node.body[0]))
            changed = True
    return changed
