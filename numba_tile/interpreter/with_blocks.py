"""``with`` blocks of interpreted tile code enter only generator-based context managers of
the user's code that keep cuTile's rules (:mod:`numba_tile.rules.context_managers`), as the
compiler, which inlines them, requires.

The interpreter's source rewrite (:mod:`.rewrites`) makes each ``with E as v:`` enter
``__numba_tile_with(E)``: :func:`checked_context_manager`, which returns ``E`` or raises the
Tile error. Python then runs the block as usual: the generator's code before its ``yield``
on entry, the code after it on leaving by any way.

>>> import contextlib, numpy as np, numba_tile as ct
>>> @contextlib.contextmanager
... def twice(x):
...     yield
...     yield
>>> @ct.kernel
... def k(x):
...     with twice(x):
...         pass
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: A generator-based context manager must have one `yield` ...
...
"""

import ast
import contextlib
import functools

from ..errors import TileTypeError
from ..host.tile import Tile
from ..rules.context_managers import (REFUSED_OPERATORS, context_manager_error,
                                      context_manager_name, not_a_context_manager,
                                      unsupported_operands)
from ..source.user_code import is_user_code

#: the global a ``with`` of interpreted tile code enters through
CHECK_NAME = "__numba_tile_with"


def check_with_items(function_node):
    """Make each ``with E as v`` of a function's syntax tree (nested functions too) enter
    ``__numba_tile_with(E)``; True if there was one."""
    changed = False
    for node in ast.walk(function_node):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                # (its source text names it in errors, as the compiler, which has no
                # value yet, does)
                item.context_expr = ast.copy_location(ast.Call(
                    func=ast.Name(id=CHECK_NAME, ctx=ast.Load()),
                    args=[item.context_expr, ast.Constant(ast.unparse(item.context_expr))],
                    keywords=[]), item.context_expr)
            changed = True
    return changed


def checked_context_manager(value, text):
    """What a ``with`` of interpreted tile code enters: ``value`` itself where it is a
    generator-based context manager of the user's code keeping the rules, else the Tile
    error."""
    if isinstance(value, contextlib._GeneratorContextManager) and not hasattr(value, "func"):
        raise TileTypeError("Context manager cannot be reused")  # (entered once already)
    generator = value.func if isinstance(value, contextlib._GeneratorContextManager) else None
    if generator is None or not is_user_code(generator):
        raise not_a_context_manager(text)
    error = context_manager_error(generator)
    if error is not None:
        raise error
    return value


class TileGeneratorContextManager(contextlib._GeneratorContextManager):
    """What calling a ``contextlib.contextmanager`` helper of tile code makes: a ``with``
    enters it as Python's; as a value it has cuTile's type name and no operators (cuTile's
    ``TileTypeError`` "Unsupported operand types for +: GeneratorContextManager[...] and
    Tile[int32,()]", as the compiler raises)."""

    def __init__(self, generator, rebound, args, kwargs):
        super().__init__(rebound, args, kwargs)
        self.tile_type_name = context_manager_name(generator, args, kwargs)

    def describe(self):
        return self.tile_type_name


def _refused(symbol, reflected):
    def operator_method(self, other):
        if isinstance(other, Tile):  # the tile's operator says what it cannot take
            return NotImplemented
        raise unsupported_operands(symbol, *((other, self) if reflected else (self, other)))
    return operator_method


for _op in REFUSED_OPERATORS:
    setattr(TileGeneratorContextManager, _op.dunder, _refused(_op.symbol, False))
    setattr(TileGeneratorContextManager, _op.reflected_dunder, _refused(_op.symbol, True))


def context_manager_function(generator, rebound):
    """The ``contextlib.contextmanager`` helper of generator function ``generator`` as tile
    code calls it: ``rebound`` (the generator re-bound as tile code) runs in a
    :class:`TileGeneratorContextManager`.

    >>> import contextlib, numpy as np, numba_tile as ct
    >>> @contextlib.contextmanager
    ... def scope(x):
    ...     yield
    >>> @ct.kernel
    ... def k(x):
    ...     cm = scope(x)
    ...     cm * 2
    >>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Unsupported operand types for *:
    GeneratorContextManager[<function scope at 0x...>, args=[Array[int32,(?,):(?,)]],
    kwargs={}] and Tile[int32,()]
    ...
    """
    @functools.wraps(generator)
    def make(*args, **kwargs):
        return TileGeneratorContextManager(generator, rebound, args, kwargs)
    return make
