"""``with`` in tile code: the context manager is a generator function decorated with
``contextlib.contextmanager``, whose code before its ``yield`` runs on entering the block and
whose code after it runs on leaving, by the end of the block, ``break``, ``continue`` or
``return`` alike (cuTile's rule; tile code has no exceptions).

The generator must have exactly one reachable ``yield`` (code after a ``break``,
``continue`` or ``return`` of its statement list is dead and does not count), outside loops
and conditionals (inside ``with`` blocks of its own is fine), and must not ``return``.
:func:`context_manager_error` finds what breaks these rules in the generator's source, for
both executors: the interpreter checks each context manager a ``with`` of tile code enters
(:mod:`numba_tile.interpreter.with_blocks`), the compiler each one it inlines
(:mod:`numba_tile.compiler.frontend.with_blocks`).

>>> import contextlib
>>> from numba_tile.rules.context_managers import context_manager_error, generator_function
>>> @contextlib.contextmanager
... def twice():
...     yield
...     yield
>>> context_manager_error(generator_function(twice)).message
'A generator-based context manager must have one `yield` statement, found 2 (twice)'
"""

import ast
import contextlib

from ..errors import TileSyntaxError, TileTypeError
from .core import type_name
from .operators import OPERATORS
from .syntax import _parsed

_HELPER_CODE = contextlib.contextmanager(lambda: (yield)).__code__  # contextlib's wrapper


def generator_function(value):
    """The generator function of a ``contextlib.contextmanager``-decorated function (a bound
    method's too), or None for anything else."""
    function = getattr(value, "__func__", value)
    if getattr(function, "__code__", None) is not _HELPER_CODE:
        return None
    return function.__closure__[function.__code__.co_freevars.index("func")].cell_contents


def live_statements(statements):
    """``statements`` without those after a ``break``, ``continue``, ``return`` or
    ``raise`` (never reached), recursively into the blocks of each statement."""
    live = []
    for statement in statements:
        live.append(_live_children(statement))
        if isinstance(statement, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
            break
    return live


def _live_children(statement):
    for field in ("body", "orelse", "finalbody"):
        block = getattr(statement, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt) and \
                not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                           ast.ClassDef)):
            setattr(statement, field, live_statements(block))
    return statement


def _own_nodes(statements):
    """The nodes of a function body outside the functions and classes defined in it, each
    with the statement nesting it is in (the tuple of enclosing compound statements)."""
    pending = [(node, ()) for node in reversed(statements)]
    while pending:
        node, nesting = pending.pop()
        yield node, nesting
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                             ast.ClassDef)):
            continue
        inner = nesting + (node,) if isinstance(node, ast.stmt) else nesting
        pending.extend((child, inner) for child in reversed(list(ast.iter_child_nodes(node))))


class GeneratorSource:
    """The parsed source of a context manager's generator function: ``function`` (its
    ``ast.FunctionDef``, dead code removed), ``where(node)`` (a node's location) and
    ``yield_statement`` (the ``ast.Expr`` statement of its one ``yield``)."""

    def __init__(self, function, where, yield_statement):
        self.function, self.where, self.yield_statement = function, where, yield_statement


_CACHE = {}  # code -> GeneratorSource, TileError or None (parsed once per process)


def generator_source(generator):
    """:class:`GeneratorSource` of ``generator`` (a fresh syntax tree each call); raises
    the error of :func:`context_manager_error`; None where the source cannot be found."""
    code = generator.__code__
    if code not in _CACHE:
        _CACHE[code] = _analysed(generator)
    found = _CACHE[code]
    if isinstance(found, Exception):
        raise type(found)(found.message, found.loc)
    if found is None:
        return None
    parsed = _parsed(generator)  # a tree of its own, for the caller to change
    function = parsed[0]
    function.body = live_statements(function.body)
    statement = next(node for node, _ in _own_nodes(function.body)
                     if isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield))
    return GeneratorSource(function, parsed[1], statement)


def context_manager_error(generator):
    """The Tile error of what generator function ``generator`` may not do as a context
    manager of tile code (see the module's docstring), or None."""
    try:
        generator_source(generator)
    except (TileSyntaxError, TileTypeError) as error:
        return error
    return None


def _analysed(generator):
    parsed = _parsed(generator)
    if parsed is None:
        return None
    function, where = parsed
    name = generator.__name__
    for node, _ in _own_nodes(function.body):
        if isinstance(node, ast.Return):
            return TileSyntaxError(f"Returning from a generator-based context manager is not "
                                   f"supported ({name})", where(node))
    yields = [(node, nesting) for node, nesting in _own_nodes(live_statements(function.body))
              if isinstance(node, (ast.Yield, ast.YieldFrom))]
    if not yields:
        return TileTypeError(f"The generator-based context manager {name} has no reachable "
                             f"`yield` statement", where(function))
    if len(yields) > 1:
        return TileTypeError(f"A generator-based context manager must have one `yield` "
                             f"statement, found {len(yields)} ({name})", where(yields[1][0]))
    node, nesting = yields[0]
    if isinstance(node, ast.YieldFrom) or not nesting or \
            not isinstance(nesting[-1], ast.Expr) or \
            any(not isinstance(n, (ast.With, ast.AsyncWith)) for n in nesting[:-1]):
        return TileTypeError(f"The `yield` of a generator-based context manager must be a "
                             f"statement of its own, outside of loops and conditional "
                             f"statements ({name})", where(node))
    return True


def not_a_context_manager(expression, loc=None):
    """The error of a ``with`` on anything but a generator-based context manager of the
    user's code, naming the ``with``'s expression by its source text (the compiler meets it
    before it has a value).

    >>> from numba_tile.rules.context_managers import not_a_context_manager
    >>> not_a_context_manager("x").message
    'A with block of tile code needs a generator-based context manager (a generator ...`x`'
    """
    return TileTypeError(f"A with block of tile code needs a generator-based context manager "
                         f"(a generator function of yours decorated with "
                         f"@contextlib.contextmanager), got `{expression}`", loc)


# -- context managers as values ---------------------------------------------------------------
def context_manager_name(generator, args, kwargs):
    """cuTile's name of the type of what calling a ``contextlib.contextmanager`` helper
    makes outside a ``with`` (its generator function and the types of its arguments, rule
    operands).

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.context_managers import context_manager_name
    >>> def cm(x, n):
    ...     yield
    >>> context_manager_name(cm, (None,), {"n": Loose(3)})  # doctest: +ELLIPSIS
    'GeneratorContextManager[<function cm at 0x...>, args=[None], kwargs={n: Tile[int32,()]}]'
    """
    shown_kwargs = ", ".join(f"{name}: {type_name(value)}" for name, value in kwargs.items())
    return (f"GeneratorContextManager[{generator!r}, args=[{', '.join(map(type_name, args))}],"
            f" kwargs={{{shown_kwargs}}}]")


#: the binary operators a context manager made outside ``with`` refuses (all but the
#: comparisons, which Python answers for any object by identity or swaps)
REFUSED_OPERATORS = tuple(op for op in OPERATORS if op.reflected_dunder)


def unsupported_operands(symbol, left, right):
    """cuTile's ``TileTypeError`` for ``left <symbol> right`` where an operand has no such
    operator (a context manager); ``left`` and ``right`` are rule operands."""
    return TileTypeError(f"Unsupported operand types for {symbol}: {type_name(left)} and "
                         f"{type_name(right)}")
