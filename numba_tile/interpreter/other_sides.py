"""What the side of a run-time ``if`` that did not run gives a variable, where the
interpreter can know it without running that side: cuTile types both sides of the ``if``
before the kernel runs, so a value of another type there is its ``TileTypeError`` "Type of
`v` depends on path taken" whichever side runs (:mod:`.branch_joins` compares it with the
value of the side that ran).

The value of a side is the expression of its last assignment to the variable (``v =
EXPR``), computed again where the sides meet (:func:`thunk`) where that has no effect:
constants, names the ``if`` does not set, operators, and calls of tile operations that
write nothing (``ct.sum(t)``, ``t.astype(ct.float16)``, ``ct.load(x, ...)``: a load only
reads), which :func:`pure_call` checks when it runs. Where the side's last assignment is a
nested ``if`` (an ``elif``), each of its sides is computed so, and its own join checked
first (:func:`.branch_joins.nested`): ``y = 2.0`` on one and ``y = ct.float16`` on the other
is the error even where the outer side that ran sets ``y = 1``, as compiled.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     t = ct.load(x, (0,), (4,))
...     if ct.bid(0) == 0:
...         v = None
...     else:
...         v = ct.sum(t)  # a float32 scalar, on the side that does not run
...     if v is None:
...         ct.store(x, (0,), t)
>>> ct.launch(0, (1,), k, (np.zeros(4, np.float32),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of `v` depends on path taken: Tile[float32,()] (on one ...
...
"""

import ast
import copy

from .. import dtypes as d
from ..host.tile import Tile
from ..source.static_expressions import EFFECTS

PURE_CALL_NAME = "__numba_tile_pure_call"
NESTED_NAME = "__numba_tile_nested"
# tile operations with an effect that only read memory: computing them again changes nothing
_READS = frozenset({"load", "gather", "load_advanced_indexing", "load_offset", "num_tiles"})


class NotComputed(Exception):
    """The other side's value cannot be computed here (a call with an effect)."""


class PathMismatch(Exception):
    """A nested ``if`` of the other side gives the variable two types: ``message``, cuTile's
    error, is that of the whole ``if``."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


def pure_call(function, *args, **kwargs):
    """``function(*args, **kwargs)`` where ``function`` is a tile operation that writes
    nothing (nor calls a function of the kernel), a tile's method or a dtype; else
    :class:`NotComputed`."""
    arguments = list(args) + list(kwargs.values())
    name = getattr(function, "__name__", None)
    if getattr(function, "__tile_op__", None) is not None and \
            (name not in EFFECTS or name in _READS) and not any(callable(a) and not
                                                                isinstance(a, d.DType)
                                                                for a in arguments):
        return function(*args, **kwargs)
    if isinstance(getattr(function, "__self__", None), Tile) or isinstance(function, d.DType):
        return function(*args, **kwargs)
    raise NotComputed(name)


# (the function behind NESTED_NAME is :func:`.branch_joins.nested`: it joins as they do)
GLOBALS = {PURE_CALL_NAME: pure_call}

# what an expression may be made of to be computed again where the sides meet: constants,
# names the ``if`` does not set, operators and calls (checked by pure_call when they run)
_PURE = (ast.Constant, ast.Name, ast.Load, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Compare,
         ast.Attribute, ast.unaryop, ast.operator, ast.boolop, ast.cmpop, ast.Call, ast.keyword,
         ast.Tuple)


def _lambda(body):
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                              defaults=[])
    return ast.Lambda(args=arguments, body=body)


class _Calls(ast.NodeTransformer):
    """``f(a, k=b)`` becomes ``__numba_tile_pure_call(f, a, k=b)``."""

    def visit_Call(self, node):
        self.generic_visit(node)
        return ast.Call(func=ast.Name(id=PURE_CALL_NAME, ctx=ast.Load()),
                        args=[node.func] + node.args, keywords=node.keywords)


def thunk(expression, changed):
    """``lambda: EXPRESSION`` where the expression can be computed again where the sides meet
    (made of :data:`_PURE` nodes, reading no name in ``changed``, its calls made through
    :func:`pure_call`), else the constant ``None``."""
    if expression is None or not all(isinstance(n, _PURE) for n in ast.walk(expression)) or \
            any(isinstance(n, ast.Name) and n.id in changed for n in ast.walk(expression)) or \
            any(isinstance(n, ast.Starred) or isinstance(n, ast.keyword) and n.arg is None
                for n in ast.walk(expression)):
        return ast.Constant(None)
    return _lambda(_Calls().visit(copy.deepcopy(expression)))


def _last(statements, name, assigned):
    return next((s for s in reversed(statements) if name in assigned([s])), None)


def _goes_on(statements):
    return not statements or not isinstance(
        statements[-1], (ast.Return, ast.Raise, ast.Break, ast.Continue))


def side_thunk(statements, name, changed, assigned):
    """``lambda: VALUE``, the value a side (``statements``) gives variable ``name`` at its
    end, computed as :func:`thunk` says; where its last assignment to it is a nested ``if``
    whose sides both go on and set it, :func:`.branch_joins.nested` of their values. The
    constant ``None`` where it cannot be computed. ``assigned``: the names a list of
    statements assigns."""
    last = _last(statements, name, assigned)
    if isinstance(last, ast.Assign) and len(last.targets) == 1 and \
            isinstance(last.targets[0], ast.Name):
        return thunk(last.value, changed)
    if isinstance(last, ast.If) and all(_goes_on(s) and name in assigned(s)
                                        for s in (last.body, last.orelse)):
        sides = [side_thunk(s, name, changed, assigned) for s in (last.body, last.orelse)]
        if not any(isinstance(s, ast.Constant) for s in sides):
            return _lambda(ast.Call(func=ast.Name(id=NESTED_NAME, ctx=ast.Load()),
                                    args=[ast.Constant(name)] + sides, keywords=[]))
    return ast.Constant(None)


def cheap(expression):
    """Whether an expression is cheap to compute again: names, attributes, constants (no
    arithmetic on tiles, no call)."""
    return expression is not None and all(
        isinstance(n, (ast.Constant, ast.Name, ast.Load, ast.Attribute, ast.UnaryOp,
                       ast.unaryop)) for n in ast.walk(expression))


def side_cheap(statements, name, assigned):
    """Whether the value a side gives variable ``name`` is cheap to compute again
    (:func:`cheap`; a nested ``if``'s where both of its sides' are)."""
    last = _last(statements, name, assigned)
    if isinstance(last, ast.Assign) and len(last.targets) == 1 and \
            isinstance(last.targets[0], ast.Name):
        return cheap(last.value)
    return isinstance(last, ast.If) and all(
        _goes_on(s) and name in assigned(s) and side_cheap(s, name, assigned)
        for s in (last.body, last.orelse))
