"""Numeric literals in interpreted tile code behave as scalars: ``a = 0; a.dtype`` is int32.

A step of the interpreter's source rewrite (:mod:`.rewrites`): every int/float literal of a
function is replaced by a reference to a :class:`~numba_tile.host.scalars.LooseInt` or
:class:`~numba_tile.host.scalars.LooseFloat` constant in the function's table of literals,
which the rewritten function gets as globals: Python numbers that also carry ``dtype``,
``shape`` and ``ndim`` (seed 000, "Tiles and Scalars"). Arithmetic among them keeps the type,
so folded constants carry a dtype too. Where the source is not available (a kernel made with
``exec``), literals stay plain Python numbers.

>>> import ast
>>> from numba_tile.interpreter.literals import rewrite
>>> tree = ast.parse("def k():\\n    return 2 * 1.5")
>>> table = {}
>>> rewrite(tree.body[0], "lit_", table)
True
>>> ast.unparse(tree.body[0].body[0]), table
('return lit_0 * lit_1', {'lit_0': 2, 'lit_1': 1.5})
"""

import ast
import itertools

from ..host.scalars import loose


class _LiteralRewriter(ast.NodeTransformer):
    """Replace int/float literals by names bound to Loose constants in ``table``."""

    def __init__(self, prefix, table):
        self.prefix = prefix
        self.table = table
        self.counter = itertools.count()

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return node
        name = f"{self.prefix}{next(self.counter)}"
        self.table[name] = loose(value)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    def visit_JoinedStr(self, node):  # f-string parts are strings; their format specs too
        node.values = [self.visit(v) if isinstance(v, ast.FormattedValue) else v
                       for v in node.values]
        return node

    def visit_FormattedValue(self, node):
        node.value = self.visit(node.value)
        return node


def rewrite(function_node, prefix, table):
    """Replace the int/float literals of a function's syntax tree (nested functions too) by
    names starting with ``prefix``, bound to their loosely typed constants in ``table``.
    Returns True."""
    _LiteralRewriter(prefix, table).visit(function_node)
    return True
