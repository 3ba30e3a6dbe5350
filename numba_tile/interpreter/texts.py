"""F-strings of run-time values in interpreted tile code: text the compiler cannot know the
characters of (its text is a recipe printed on the device), so that where an op meets one
(``ct.store(out, (0,), f"{t}")``) both executors describe it alike, not by the characters
the interpreter happens to have.

Each ``f"..."`` becomes ``__numba_tile_text(__numba_tile_text_begin(), f"...")`` with each
formatted value passed through ``__numba_tile_text_value``: the text is a :class:`RunTimeText`
where a value was a tile or a run-time scalar, else the plain string (a constant, as the
compiler folds it).

>>> import ast
>>> from numba_tile.interpreter.texts import rewrite
>>> tree = ast.parse('f"t={t}"')
>>> rewrite(tree)
>>> ast.unparse(tree)
"__numba_tile_text(__numba_tile_text_begin(), f't={__numba_tile_text_value(t)}')"
"""
import ast

from ..host import context
from ..host.tile import Tile
from ..rules.formatting import RUN_TIME_TEXT

TEXT_NAME = "__numba_tile_text"
BEGIN_NAME = "__numba_tile_text_begin"
VALUE_NAME = "__numba_tile_text_value"


class RunTimeText(str):
    """Text that holds run-time values, described as the compiler describes its text
    (:data:`~numba_tile.rules.formatting.RUN_TIME_TEXT`)."""

    __slots__ = ()

    def describe(self):
        return RUN_TIME_TEXT


def _stack():
    """The f-strings the running block is evaluating (nested ones inside), innermost last."""
    return context.current().open_texts


def begin():
    """Start an f-string's evaluation (its values are evaluated next)."""
    _stack().append(False)


def value(item):
    """A formatted value of the f-string being evaluated, noted where it is run-time."""
    if isinstance(item, Tile) and not item.is_compile_time:
        _stack()[-1] = True
    return item


def text(_, formatted):
    """The evaluated f-string: a :class:`RunTimeText` where it holds a run-time value."""
    run_time = _stack().pop()
    return RunTimeText(formatted) if run_time else formatted


GLOBALS = {TEXT_NAME: text, BEGIN_NAME: begin, VALUE_NAME: value}


def _call(name, *args):
    return ast.Call(func=ast.Name(name, ast.Load()), args=list(args), keywords=[])


class _Rewriter(ast.NodeTransformer):
    def visit_FormattedValue(self, node):
        # (a format spec, f"{x:{w}}", stays the f-string part Python requires)
        value = self.visit(node.value)
        node.value = ast.copy_location(_call(VALUE_NAME, value), value)
        return node

    def visit_JoinedStr(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call(TEXT_NAME, _call(BEGIN_NAME), node), node)


def rewrite(node):
    """Mark the f-strings of run-time values in the function (syntax tree ``node``)."""
    _Rewriter().visit(node)
    ast.fix_missing_locations(node)
