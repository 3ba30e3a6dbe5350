"""A helper that returns a value from inside a loop and can also reach its end (where it
returns ``None``) returns values of two types on two paths: cuTile's ``TileTypeError``
"Type of return value depends on path taken", as compiled code raises it
(:mod:`numba_tile.compiler.typing.joins`). The interpreter runs one path: where the path it
runs returns a value from the loop, that value is checked against the ``None`` of the
other (the other way round, the loop's value is never computed: the one-path difference
docs/compatibility describes).

The interpreter's source rewrite (:mod:`.rewrites`) calls :func:`rewrite`: in a function
whose body can reach its end, each ``return VALUE`` inside a loop (not a ``static_iter``
loop, whose body may not return) becomes ``return __numba_tile_loop_return(VALUE)``.

>>> import numpy as np, numba_tile as ct
>>> def first_above(t, limit):
...     for i in range(4):
...         if i > limit:
...             return i
>>> @ct.kernel
... def k(x):
...     ct.scatter(x, 0, first_above(ct.gather(x, 0), 1))
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of return value depends on path taken: None (on one path) vs. Tile[int32,()] (on another)
...
"""

import ast

from ..errors import TileTypeError
from ..rules.core import type_name
from ..source.comprehensions import static_construct

LOOP_RETURN_NAME = "__numba_tile_loop_return"


def loop_return(value):
    """``value``, returned from inside a loop of a function that can also return ``None``
    (by reaching its end): the error where it is not ``None``."""
    if value is not None:
        raise TileTypeError(f"Type of return value depends on path taken: None (on one path) "
                            f"vs. {type_name(value)} (on another)")
    return value


GLOBALS = {LOOP_RETURN_NAME: loop_return}


def _ends(statements):
    """Whether running ``statements`` never reaches their end (a ``return`` or ``raise``
    last, or an ``if`` whose two sides both end)."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    return False


def _loop_returns(statements, in_loop=False):
    """The ``return VALUE`` statements inside loops of the function's own body."""
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and in_loop and node.value is not None:
            yield node
        loop = isinstance(node, (ast.For, ast.While)) and not (
            isinstance(node, ast.For) and static_construct(node.iter) == "static_iter")
        for field in ("body", "orelse", "handlers", "finalbody"):
            yield from _loop_returns(getattr(node, field, []), in_loop or loop)


def rewrite(function_node):
    """Check the values returned from inside loops (see the module's docstring)."""
    if _ends(function_node.body):
        return
    for node in _loop_returns(function_node.body):
        node.value = ast.copy_location(ast.Call(func=ast.Name(id=LOOP_RETURN_NAME,
                                                              ctx=ast.Load()),
                                                args=[node.value], keywords=[]), node.value)
