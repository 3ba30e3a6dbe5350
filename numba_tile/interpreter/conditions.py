"""The truth of values in interpreted tile code. The conditions of ``if``, ``while``,
``assert`` and ``x if c else y`` are checked where they are written: each test becomes a
call that refuses a tile of more than one element (it has no truth value) and returns the
value itself, so the error marks the condition, as the compiler's does, not the whole
statement (Python takes the truth of a test in the statement's own instruction). ``not t``
of such a tile is elementwise, as in cuTile.

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
NOT_NAME = "__numba_tile_not"


def condition(value):
    """``value``, a condition, after checking that it has a truth value: a tile of one
    element (or anything that is no tile)."""
    if isinstance(value, Tile):
        value.require_scalar("a condition")
    return value


def logical_not(value):
    """``not value``: of a tile of several elements, element by element (``value == 0``),
    as cuTile takes it; of anything else, Python's."""
    if isinstance(value, Tile) and value.ndim:
        return value == 0
    return not value


GLOBALS = {CONDITION_NAME: condition, NOT_NAME: logical_not}


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

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        call = ast.Call(func=ast.Name(NOT_NAME, ast.Load()), args=[node.operand], keywords=[])
        return ast.copy_location(call, node)


def rewrite(node):
    """Check each condition of the function (syntax tree ``node``) where it is written."""
    _Rewriter().visit(node)
    ast.fix_missing_locations(node)
