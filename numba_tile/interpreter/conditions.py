"""The conditions of ``if``, ``while``, ``assert`` and ``x if c else y`` checked where they
are written: each test becomes a call that refuses a tile of more than one element (it has
no truth value) and returns the value itself, so the error marks the condition, as the
compiler's does, not the whole statement (Python takes the truth of a test in the
statement's own instruction).

>>> import ast
>>> from numba_tile.interpreter.conditions import rewrite
>>> tree = ast.parse("if t > 1:\\n    pass")
>>> rewrite(tree)
>>> ast.unparse(tree.body[0].test)
'__numba_tile_condition(t > 1)'
"""
import ast

from ..host.tile import Tile

CONDITION_NAME = "__numba_tile_condition"


def condition(value):
    """``value``, a condition, after checking that it has a truth value: a tile of one
    element (or anything that is no tile)."""
    if isinstance(value, Tile):
        value.require_scalar("a condition")
    return value


GLOBALS = {CONDITION_NAME: condition}


def _checked(test):
    if isinstance(test, ast.Constant):  # (while True: stays one, for the loop's exits)
        return test
    call = ast.Call(func=ast.Name(CONDITION_NAME, ast.Load()), args=[test], keywords=[])
    return ast.copy_location(call, test)


class _Rewriter(ast.NodeTransformer):
    def _test(self, node):
        self.generic_visit(node)
        node.test = _checked(node.test)
        return node

    visit_If = visit_While = visit_Assert = visit_IfExp = _test


def rewrite(node):
    """Check each condition of the function (syntax tree ``node``) where it is written."""
    _Rewriter().visit(node)
    ast.fix_missing_locations(node)
