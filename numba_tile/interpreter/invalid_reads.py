"""A global or captured value that interpreted tile code reads and cannot hold (an array:
:mod:`numba_tile.rules.global_values`): cuTile's error where the compiler's typing reaches
the read.

The compiler types a function's statements in turn: both sides of an ``if`` on a run-time
condition, only the side taken of one on a constant
(:mod:`numba_tile.compiler.typing.global_reads`). Where a function reads such a value, the
interpreter's source rewrite (:mod:`.rewrites`) puts a raise of the error before the first
statement on the way to each such read that holds it or may return. The statements before it run,
so that their errors come first (a ``static_eval`` nested in another, a failing
``static_assert``), and the error is raised whichever way a run-time branch goes. An ``if``
on the way to the read passes its condition to :meth:`InvalidRead.condition` first: the
error where it is a run-time one; on a constant, the side taken runs, the raise in the side
that holds the read.

>>> import numpy as np, numba_tile as ct
>>> TABLE = np.zeros(4, np.float32)
>>> @ct.kernel
... def k(x):
...     ct.static_assert(x.ndim == 2, "a matrix")
...     if ct.bid(0) == 1:  # a run-time condition, false in block 0
...         ct.store(x, (0,), ct.load(TABLE, (0,), (4,)))
>>> ct.launch(0, (1,), k, (np.zeros(4, np.float32),))
Traceback (most recent call last):
...
numba_tile.errors.TileStaticAssertionError: Static assertion failed: a matrix
...
"""

import ast

from .branch_joins import joins

_PREFIX = "__numba_tile_invalid_read_"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def name_for(code, index):
    """The global name of the :class:`InvalidRead` of read ``index`` of a function's
    code."""
    return f"{_PREFIX}{abs(hash(code))}_{index}"


class InvalidRead:
    """What the calls the rewrite puts find under their name: the read's error."""

    def __init__(self, error):
        self.error = error

    def raise_error(self):
        raise type(self.error)(self.error.message, self.error.loc)

    def condition(self, value):
        """The condition of an ``if`` on the way to the read: the compiler types both sides
        of one known at run time only."""
        if joins(value):
            self.raise_error()
        return value


def rewrite(function_node, code, positions):
    """Put the raises of the reads of ``code`` at ``positions`` (each ``(line, column)``,
    the column None where unknown) in its function's syntax tree."""
    body = function_node.body
    for index, position in enumerate(positions):
        name = name_for(code, index)
        if _in(body, position):
            _put(body, position, name)
        else:  # (no statement holds it: raised first)
            body.insert(0, _raise(name, body[0]))


def _put(statements, position, name):
    """Put the raise in ``statements`` (a function's, or a side of an ``if`` on the way):
    before the first that holds the read or holds a ``return`` (a loop, a ``with``). An
    ``if`` that does checks its condition (:meth:`InvalidRead.condition`), and its sides
    get the raise the same way. (A ``return`` itself leaves the rest untyped: it runs on a
    constant's side, or a run-time condition on the way has raised already.)"""
    for at, statement in enumerate(statements):
        if isinstance(statement, ast.If) and not _holds(statement.test, position) and (
                _holds(statement, position) or _may_return(statement)):
            statement.test = ast.copy_location(_call(name, "condition", statement.test),
                                               statement.test)
            for side in (statement.body, statement.orelse):
                if _in(side, position) or any(map(_may_return, side)):
                    _put(side, position, name)
            if _holds(statement, position):
                return
        elif _holds(statement, position) or (_may_return(statement) and
                                             not isinstance(statement, ast.Return)):
            statements.insert(at, _raise(name, statement))
            return


def _raise(name, statement):
    return ast.copy_location(ast.Expr(_call(name, "raise_error")), statement)


def _call(name, method, *args):
    return ast.Call(func=ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr=method,
                                       ctx=ast.Load()), args=list(args), keywords=[])


def _holds(node, position):
    line, column = position
    if column is None:
        return node.lineno <= line <= node.end_lineno
    return (node.lineno, node.col_offset) <= (line, column) < (node.end_lineno,
                                                               node.end_col_offset)


def _in(statements, position):
    return any(_holds(statement, position) for statement in statements)


def _may_return(node):
    if isinstance(node, ast.Return):
        return True
    return not isinstance(node, _SCOPES) and any(
        _may_return(child) for child in ast.iter_child_nodes(node))
