"""Whether a read of a variable before any assignment (in the order of the source) is one
that an earlier iteration of a loop around it may have set: cuTile's ``TileTypeError`` "Use
of potentially undefined variable" rather than its ``TileSyntaxError`` "Undefined variable"
(:func:`numba_tile.compiler.error_translation.as_tile_error` asks, where Numba finds the
read). A loop over ``ct.static_iter`` is unrolled before cuTile looks, so it carries nothing.

>>> import ast
>>> from numba_tile.source.loop_reads import set_by_a_loop_around
>>> tree = ast.parse("for i in range(2):\\n    f(acc)\\n    acc = 1\\nf(other)\\n")
>>> set_by_a_loop_around(tree, 2, "acc"), set_by_a_loop_around(tree, 4, "other")
(True, False)
"""

import ast
import linecache


def _is_static_iter(loop):
    called = loop.iter.func if isinstance(loop, ast.For) and \
        isinstance(loop.iter, ast.Call) else None
    return getattr(called, "attr", getattr(called, "id", None)) == "static_iter"


def _assigns(statements, name):
    """True where the statements store ``name`` (nested functions aside: their own scope)."""
    work = list(statements)
    while work:
        node = work.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                             ast.ClassDef)):
            continue
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        work.extend(ast.iter_child_nodes(node))
    return False


def set_by_a_loop_around(tree, line, name):
    """True where a loop of ``tree`` (a parsed module) around line ``line`` sets ``name``
    (a ``for`` loop's iterable, read once before any iteration, is not around: the
    iterations start in its body).

    >>> import ast
    >>> from numba_tile.source.loop_reads import set_by_a_loop_around
    >>> set_by_a_loop_around(ast.parse("for i in range(n):\\n    n = 3\\n"), 1, "n")
    False
    """
    for node in ast.walk(tree):
        first = node.body[0].lineno if isinstance(node, ast.For) else getattr(node, "lineno", 0)
        if isinstance(node, (ast.For, ast.While)) and not _is_static_iter(node) and \
                first <= line <= (node.end_lineno or node.lineno) and \
                _assigns(node.body + node.orelse, name):
            return True
    return False


def read_in_a_loop_that_sets_it(filename, line, name):
    """:func:`set_by_a_loop_around` for the source file ``filename`` (False where it cannot
    be read or parsed)."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return False
    return set_by_a_loop_around(tree, line, name)
