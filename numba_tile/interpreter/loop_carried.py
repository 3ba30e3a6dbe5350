"""Loop-carried variables of interpreted tile code take a concrete dtype, as compiled code's
do: a variable holding a loosely typed constant before a ``for`` or ``while`` loop that
assigns it is a run-time scalar of the constant's own dtype (int32, int64 or uint64 by value,
float32, bool) on entry to the loop, at the start of each iteration and after the loop. The
compiler gets this from joining the variable's types at the loop's head (``j = 0; j += 1``
is an int32 counter); cuTile does the same.

The interpreter's source rewrite (:mod:`.literals`) calls :func:`rewrite`. For a variable
``j`` assigned in a loop's body the loop is preceded by ``__numba_tile_carried_j =
__numba_tile_bound("j", locals())`` (whether ``j`` is bound before the loop) and each of the
three points does ``if __numba_tile_carried_j: j = __numba_tile_carried(j)``. Loops over
``ct.static_iter`` are unrolled by the compiler, so their variables carry nothing.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     j = 0
...     for i in range(3):
...         j += 1
...     ct.scatter(x, 0, ct.int8(1) + j)  # j is int32: int8 + int32 is int32
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int16),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: scatter() value: cannot implicitly cast int32 to the array's ...
...
"""

import ast
import builtins
import enum

import numpy as np

from .. import dtypes as d
from ..promotion import loose_concrete_dtype
from ..static_expressions import ITER_NAME
from .tile import Tile

CARRIED_NAME = "__numba_tile_carried"
BOUND_NAME = "__numba_tile_bound"
LOCALS_NAME = "__numba_tile_locals"
_FLAG = "__numba_tile_carried_"


def carried(value):
    """``value`` as a loop carries it: a loosely typed number becomes a run-time scalar of
    its own dtype (``TileValueError`` for an integer no dtype holds); others are unchanged."""
    if isinstance(value, bool):
        return Tile(d.bool_, np.array(value), constant=False)
    if isinstance(value, (int, float)) and not isinstance(value, (enum.Enum, np.generic)):
        dtype = loose_concrete_dtype(value)  # (a loosely typed constant is an int or float)
        return Tile(dtype, np.array(value).astype(dtype.storage), constant=False)
    return value


def bound(name, variables):
    """True where ``name`` holds a value before the loop (``variables``: its ``locals()``)."""
    return name in variables


GLOBALS = {CARRIED_NAME: carried, BOUND_NAME: bound, LOCALS_NAME: builtins.locals}


def _assigned(statements):
    """The names the statements assign, nested loops and branches included (not those of
    nested functions or comprehensions, which have scopes of their own)."""
    names = []

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                node.id not in names and not node.id.startswith("__numba_tile"):
            names.append(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)
    for statement in statements:
        visit(statement)
    return names


def _is_static_iter(loop):
    return isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and \
        isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == ITER_NAME


def _name(identifier, ctx=ast.Load):
    return ast.Name(id=identifier, ctx=ctx())


def _materialize(names):
    """``if flag_j: j = carried(j)`` for each name."""
    return [ast.If(test=_name(_FLAG + n), body=[ast.Assign(
        targets=[_name(n, ast.Store)],
        value=ast.Call(func=_name(CARRIED_NAME), args=[_name(n)], keywords=[]))], orelse=[])
        for n in names]


class _Rewriter(ast.NodeTransformer):
    def _loop(self, node):
        self.generic_visit(node)
        if _is_static_iter(node):
            return node
        names = _assigned(node.body + node.orelse)
        if not names:
            return node
        flags = [ast.Assign(targets=[_name(_FLAG + n, ast.Store)], value=ast.Call(
            func=_name(BOUND_NAME), args=[ast.Constant(n), ast.Call(
                func=_name(LOCALS_NAME), args=[], keywords=[])], keywords=[]))
            for n in names]
        node.body = _materialize(names) + node.body
        statements = flags + _materialize(names) + [node] + _materialize(names)
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    visit_For = visit_While = _loop


def rewrite(function_node):
    """Materialize the loop-carried variables of a function's syntax tree (see the module's
    docstring). Returns True."""
    _Rewriter().visit(function_node)
    ast.fix_missing_locations(function_node)
    return True
