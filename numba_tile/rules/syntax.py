"""The Python that tile code does not take, found in a kernel's source before it runs or
compiles, so that both executors reject it alike (the interpreter would otherwise run it as
plain Python, the compiler fail inside Numba).

Rejected, with the kernel line: ``try``, ``yield`` (a generator kernel), ``import``,
``global``/``nonlocal``, ``del``, ``:=``, list/dict/set literals and comprehensions (tile code
has tuples), generator expressions other than tuple comprehensions over ``ct.static_iter``,
``static_eval`` or ``static_assert`` other than called directly, ``static_iter`` other than as
the iterable of a ``for`` (whose body may not ``break`` or ``continue``), and ``return``
inside a ``for`` loop (also in the helpers the kernel calls, :func:`helper_source_error`).
The expressions inside them are plain Python, run at compile time: they may use any of
these. (Item assignment depends on the type assigned to: see :mod:`numba_tile.rules.tuples`.)

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
import textwrap

from ..errors import SourceLocation, TileSyntaxError, TileTypeError
from .core import describe
from .formatting import check_print_options
from .operators import BOOL_INVERT
from ..source.comprehensions import binding_problem, is_tuple_comprehension, static_construct
from ..source.source_code import lambda_function, source_lines
from ..source.static_iter_uses import static_iter_problems

#: what tile code says of coroutines: a kernel runs to its end in each block, nothing awaits
_ASYNC = "async functions, await, async for and async with are not supported in tile code"

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
    ast.NamedExpr: "Unsupported syntax: assignment expressions (:=) are not supported in "
                   "tile code",
    ast.AsyncFunctionDef: _ASYNC,
    ast.AsyncFor: _ASYNC,
    ast.AsyncWith: _ASYNC,
    ast.Await: _ASYNC,
    ast.GeneratorExp: "generator expressions are not supported in tile code; a tuple "
                      "comprehension iterates with ct.static_iter: "
                      "tuple(... for x in ct.static_iter(...))",
    ast.ClassDef: "class definitions are not supported in tile code; define the class at "
                  "module level",
}
# (a compiled kernel cannot raise at run time: it would drop the exception silently)
_RAISE = "Raised exception must be wrapped in static_exception(): raise " \
    "ct.static_exception(EXC) raises at compile time; ct.assert_ checks at run time"
_RAISE_FROM = "'raise from' syntax is not supported"
_STATIC_EXCEPTION_ALONE = "static_exception() is only allowed after `raise`, e.g. `raise " \
    "static_exception(ValueError('Error'))`"
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = _STATEMENTS[ast.Try]
_STATEMENTS[ast.Match] = "match statements are not supported in tile code; use if and elif"
#: what tile code says of ``a, *b = t`` (cuTile's words first)
_STARRED_ASSIGNMENT = "Unsupported syntax: starred assignment (a, *b = ...) is not " \
    "supported in tile code; index the tuple"
#: what tile code says of an assignment to an attribute (t.foo = 1, x.shape = ...)
_ATTRIBUTE_ASSIGNMENT = "Assigning an attribute is not supported in tile code: tiles, " \
    "arrays and the other objects of tile code are immutable"


def check_kernel_source(fn):
    """Raise ``TileSyntaxError`` at the first construct of ``fn``'s source that tile code
    does not take; nothing where the source cannot be found."""
    try:
        lines, first_line = source_lines(fn)
        filename = fn.__code__.co_filename
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

    if isinstance(function, ast.AsyncFunctionDef):  # (its body would run as Python's)
        raise TileSyntaxError(_ASYNC_KERNEL, where(function))
    found = _problems(function, kernel=True)
    arguments = function.args
    for node in (*arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
        if node is not None:  # (a launch passes its arguments by position)
            found.append((TileSyntaxError, _NOT_POSITIONAL, node))
    if found:
        error, message, node = min(found, key=lambda f: (f[2].lineno, f[2].col_offset))
        raise error(message, where(node))


_RETURN_VALUE = "Tile kernels cannot return values"
_NOT_POSITIONAL = "A tile kernel's parameters must be positional (a launch passes arguments " \
    "by position): *args, **kwargs and keyword-only parameters are not supported"


def _problems(function, kernel, generator=False):
    """``(error class, message, node)`` of each construct of ``function`` (an AST) that tile
    code does not take: a kernel's, or a helper's (which may return a value, and may be a
    generator where it is a context manager's, ``generator``)."""
    found = [problem[:3] for problem in static_iter_problems(function.body)]
    found += [(TileSyntaxError, message, node)
              for message, node in _unsupported_constructs(function.body)]
    called = set()  # the ``static_eval`` of each static_eval(...) call
    for node, in_kernel_scope in _walk(function.body, generator_scope=True):
        if is_tuple_comprehension(node):
            unbound = binding_problem(node)
            if unbound is not None:
                found.append((TileSyntaxError, f"Undefined variable {unbound.id} used", unbound))
        if in_kernel_scope and not generator and isinstance(node, (ast.Yield, ast.YieldFrom)):
            found.append((TileSyntaxError, "A kernel cannot be a generator (yield)" if kernel
                          else "A helper of tile code cannot be a generator (yield) unless "
                               "it is a @contextlib.contextmanager", node))
        if kernel and in_kernel_scope and isinstance(node, ast.Return) and \
                node.value is not None and not (isinstance(node.value, ast.Constant) and
                                                node.value.value is None):
            found.append((TileSyntaxError, _RETURN_VALUE, node))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and \
                isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            # a string formatted with %: Python compiles "%s %s" % (a, b) into an f-string,
            # so the error is found here, as the interpreter raises it for a run-time %
            found.append((TileTypeError, f"Expected a tile or a scalar for the left operand, "
                                         f"got {describe(node.left.value)}", node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert) and \
                isinstance(node.operand, ast.Constant) and \
                isinstance(node.operand.value, bool):
            # (Python folds ~True to the int -2 before anything runs: found here)
            found.append((TileTypeError, BOOL_INVERT, node))
        if isinstance(node, ast.Call) and _names_print(node.func):
            # (a lambda's print is inlined where Numba rejects its keywords: found here, as
            # the interpreter's print finds it)
            try:
                check_print_options([k.arg for k in node.keywords
                                     if k.arg not in (None, "sep", "end")])
            except TileTypeError as error:
                found.append((TileTypeError, error.message, node))
        construct = _names_static_construct(node)
        if construct and id(node) not in called:
            found.append((TileSyntaxError, f"{construct}() must be used directly: "
                                           f"ct.{construct}(...)", node))
        if _is_static_eval_call(node):
            called.add(id(node.func))
    return found


def _unsupported_constructs(statements):
    """``(message, node)`` of each construct below ``statements`` that tile code does not
    take (:data:`_STATEMENTS`), nested functions' included, in walking order."""
    comprehensions = set()  # the generator expressions of tuple comprehensions
    raised = set()  # the static_exception calls that a raise raises (walked after it)
    for node, _ in _walk(statements, generator_scope=True):
        message = _STATEMENTS.get(type(node))
        if message is not None and not (isinstance(node, ast.List) and
                                        isinstance(node.ctx, ast.Store)) and \
                id(node) not in comprehensions:
            yield message, node
        if isinstance(node, ast.Raise):
            if static_construct(node.exc) == "static_exception":
                raised.add(id(node.exc))
            if node.cause is not None:
                yield _RAISE_FROM, node.cause
            elif id(node.exc) not in raised:
                yield _RAISE, node
        if static_construct(node) == "static_exception" and id(node) not in raised:
            yield _STATIC_EXCEPTION_ALONE, node
        if isinstance(node, (ast.For, ast.While)) and node.orelse:
            yield f"'{'for' if isinstance(node, ast.For) else 'while'}-else' is not supported", \
                node
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield _ATTRIBUTE_ASSIGNMENT, node
        if isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Store):
            yield _STARRED_ASSIGNMENT, node
        if isinstance(node, ast.FormattedValue):
            if node.conversion != -1:
                yield "f-string: !r, !s, !a conversions are not supported", node
            if node.format_spec is not None and any(
                    isinstance(part, ast.FormattedValue) for part in node.format_spec.values):
                yield "f-string: format spec must be a literal string", node
        if is_tuple_comprehension(node):
            comprehensions.add(id(node.args[0]))


def _names_print(node):
    """Whether ``node`` names ``print`` or ``ct.print``."""
    return isinstance(node, ast.Name) and node.id == "print" or \
        isinstance(node, ast.Attribute) and node.attr == "print"


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
    The same holds for ``static_assert``'s condition and message and ``static_iter``'s
    iterable. A node comes before its children."""
    pending = [(node, generator_scope) for node in reversed(statements)]
    while pending:
        node, scope = pending.pop()
        yield node, scope
        inner = scope and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
        children = [node.func] if static_construct(node) else \
            list(ast.iter_child_nodes(node))
        pending.extend((child, inner) for child in reversed(children))


def _parsed(fn):
    """``(function node, where)`` of ``fn``'s source, ``where(node)`` the
    ``SourceLocation`` of a node of it; None where the source cannot be found."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    if code.co_name == "<lambda>":  # (its node has the line numbers of its file)
        function = lambda_function(code)
        if function is None:
            return None
        return function, lambda node: SourceLocation(
            code.co_filename, node.lineno, node.col_offset,
            node.end_col_offset if node.end_lineno == node.lineno else None,
            function=fn.__name__)
    try:  # (of the code: a functools.wraps wrapper's own source, not what it wraps)
        lines, first_line = source_lines(code)
        filename = code.co_filename
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    function = next((node for node in tree.body
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is None:
        return None
    indent = len(lines[0]) - len(lines[0].lstrip())

    def where(node):
        line = first_line + node.lineno - 1
        end = node.end_col_offset + indent if node.end_lineno == node.lineno else None
        return SourceLocation(filename, line, node.col_offset + indent, end,
                              function=fn.__name__)
    return function, where


_HELPER_ERRORS = {}  # (code, generator) -> (error class, message, location) or None


def helper_source_error(fn, generator=False):
    """The Tile error of what helper ``fn`` may not do in tile code (what a kernel may not:
    ``return`` inside a ``for`` loop, ``global``, ``class``, ``raise``..., but it may return
    a value, and be a generator where it is a context manager's, ``generator``), or None;
    both executors raise it where tile code calls ``fn``, not where it is only referenced.

    >>> from numba_tile.rules.syntax import helper_source_error
    >>> def first_positive(xs):
    ...     for x in xs:
    ...         if x > 0:
    ...             return x
    ...     else:
    ...         return 0
    >>> print(helper_source_error(first_positive))
    'for-else' is not supported
    ...
    """
    key = (fn.__code__, generator)
    if key not in _HELPER_ERRORS:
        parsed = _parsed(fn)
        found = _problems(parsed[0], kernel=False, generator=generator) + [
            (TileSyntaxError, _ASYNC, node) for node in _async_nodes(parsed[0])] \
            if parsed is not None else []
        first = min(found, key=lambda f: (f[2].lineno, f[2].col_offset)) if found else None
        _HELPER_ERRORS[key] = first and (first[0], first[1], parsed[1](first[2]))
    if _HELPER_ERRORS[key] is None:
        return None
    error, message, loc = _HELPER_ERRORS[key]
    return error(message, loc)


_ASYNC_KERNEL = "A kernel cannot be an async function (async def): " + _ASYNC


def _async_nodes(function):
    """The ``async`` constructs of a helper's function node: itself where it is ``async
    def``, and those inside it."""
    return [node for node in ast.walk(function)
            if isinstance(node, (ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith, ast.Await))]


class MissingAttributeError(TileTypeError, AttributeError):
    """cuTile's ``TileTypeError`` for an attribute a module of tile code lacks; an
    ``AttributeError`` too, so that ``hasattr`` and ``getattr(m, name, default)`` work."""


def missing_attribute_error(module_name, name):
    """The error of reading an attribute a module of tile code lacks (``ct.abracadabra``),
    in both executors.

    >>> from numba_tile.rules.syntax import missing_attribute_error
    >>> print(missing_attribute_error("numba_tile", "abracadabra"))
    Module 'numba_tile' has no attribute 'abracadabra'
    """
    return MissingAttributeError(f"Module '{module_name}' has no attribute '{name}'")
