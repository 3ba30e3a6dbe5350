"""The Python that tile code does not take, found in a kernel's source before it runs or
compiles, so that both executors reject it alike (the interpreter would otherwise run it as
plain Python, the compiler fail inside Numba).

Rejected, with the kernel line: ``try``, ``yield`` (a generator kernel), ``import``,
``global``/``nonlocal``, ``del``, list/dict/set literals and comprehensions (tile code has
tuples), item assignment (tiles and tuples are immutable), and ``static_eval`` or
``static_assert`` other than called directly. The expressions inside them are plain Python,
run at compile time: they may use any of these.

>>> from numba_tile.rules.syntax import check_kernel_source
>>> def kernel(x):
...     del x
>>> check_kernel_source(kernel)
Traceback (most recent call last):
...
numba_tile.errors.TileSyntaxError: del is not supported in tile code
...
"""

import ast
import inspect
import textwrap

from ..errors import SourceLocation, TileSyntaxError, TileTypeError

_STATEMENTS = {
    ast.Try: "try/except is not supported in tile code",
    ast.Import: "import is not supported in tile code; import at module level",
    ast.ImportFrom: "import is not supported in tile code; import at module level",
    ast.Global: "global is not supported in tile code: kernels cannot assign module variables",
    ast.Nonlocal: "nonlocal is not supported in tile code",
    ast.Delete: "del is not supported in tile code",
    ast.List: "list literals are not supported in tile code; use a tuple",
    ast.ListComp: "list comprehensions are not supported in tile code; use a tuple",
    ast.Dict: "dict literals are not supported in tile code",
    ast.DictComp: "dict comprehensions are not supported in tile code",
    ast.Set: "set literals are not supported in tile code",
    ast.SetComp: "set comprehensions are not supported in tile code",
}
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = _STATEMENTS[ast.Try]


def check_kernel_source(fn):
    """Raise ``TileSyntaxError`` (``TileTypeError`` for item assignment) at the first
    construct of ``fn``'s source that tile code does not take; nothing where the source
    cannot be found."""
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return
    function = next((node for node in tree.body
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is None:
        return
    indent = len(lines[0]) - len(lines[0].lstrip())

    def where(node):
        line = first_line + node.lineno - 1
        end = node.end_col_offset + indent if node.end_lineno == node.lineno else None
        return SourceLocation(filename, line, node.col_offset + indent, end,
                              function=fn.__name__)

    found = []  # (line, column, error class, message, node): the first in the source wins
    called = set()  # the ``static_eval`` of each static_eval(...) call
    for node, in_kernel_scope in _walk(function.body, generator_scope=True):
        message = _STATEMENTS.get(type(node))
        if message is not None and not (isinstance(node, ast.List) and
                                        isinstance(node.ctx, ast.Store)):
            found.append((TileSyntaxError, message, node))
        if in_kernel_scope and isinstance(node, (ast.Yield, ast.YieldFrom)):
            found.append((TileSyntaxError, "A kernel cannot be a generator (yield)", node))
        if isinstance(node, ast.Await):
            found.append((TileSyntaxError, "await is not supported in tile code", node))
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        found.extend((TileTypeError, _ITEM_ASSIGNMENT, target) for target in targets
                     if isinstance(target, ast.Subscript))
        construct = _names_static_construct(node)
        if construct and id(node) not in called:
            found.append((TileSyntaxError, f"{construct}() must be used directly: "
                                           f"ct.{construct}(...)", node))
        if _is_static_eval_call(node):
            called.add(id(node.func))
    if found:
        error, message, node = min(found, key=lambda f: (f[2].lineno, f[2].col_offset))
        raise error(message, where(node))


_ITEM_ASSIGNMENT = ("Item assignment is not supported in tile code: tiles and tuples are "
                    "immutable (make a new one, or use ct.where or ct.insert)")


def _names_static_construct(node):
    """``"static_eval"``/``"static_assert"`` for a name or attribute of one, else None."""
    name = node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else None
    return name if name in ("static_eval", "static_assert") else None


def _is_static_eval_call(node):
    return isinstance(node, ast.Call) and _names_static_construct(node.func) is not None


def _walk(statements, generator_scope):
    """Every node below ``statements`` with whether it belongs to the kernel's own body
    (nested functions may be generators: ``contextlib.contextmanager`` helpers). The
    expression of a ``static_eval`` is plain Python, evaluated at compile time: not walked.
    The same holds for ``static_assert``'s condition and message. A node comes before its
    children."""
    pending = [(node, generator_scope) for node in reversed(statements)]
    while pending:
        node, scope = pending.pop()
        yield node, scope
        inner = scope and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
        children = [node.func] if _is_static_eval_call(node) else \
            list(ast.iter_child_nodes(node))
        pending.extend((child, inner) for child in reversed(children))
