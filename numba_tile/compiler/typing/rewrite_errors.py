"""Errors a source rewrite of the compiler found (a ``with`` on a context manager that
breaks cuTile's rules, :mod:`~numba_tile.compiler.frontend.with_blocks`) are raised where the
code is typed, not when it is rewritten: the rewrite leaves ``compiled_rewrite_error(i)`` in
place of the code, and typing it raises error ``i`` of the compilation. Code the kernel does
not reach (a branch on a constant) raises nothing, as in the interpreter, which raises such
errors when it runs the code."""

from numba.core import types
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...errors import TileTypeError
from ...promotion import Loose
from ...rules.core import is_tile_or_scalar
from ..abstract import operand
from ..compile_state import current
from .templates import registry


def compiled_rewrite_error(index):
    """Where a source rewrite found an error: raised when typed (never called)."""


@registry.register_global(compiled_rewrite_error)
class RewriteErrorTemplate(AbstractTemplate):
    prefer_literal = True  # the index

    def generic(self, args, kws):
        if not isinstance(args[0], types.IntegerLiteral):
            return None
        error = current().rewrite_errors[args[0].literal_value]
        if len(args) == 2 and _never_a_context_manager(args[1]):
            error = error.refused  # (a with block's context manager, known now by its type)
        raise type(error)(error.message, error.loc)


def _never_a_context_manager(numba_type):
    """True for the type of a value of tile code that no ``with`` enters: None, a constant,
    a string, a dtype, a tuple, a tile or scalar, an array (the interpreter's error then);
    False for anything else (a context manager held in a variable: what the compiler
    lacks)."""
    try:
        value = operand(numba_type)
    except TileTypeError:
        return False
    return value is None or isinstance(value, (Loose, str, tuple, d.DType)) or \
        is_tile_or_scalar(value) or getattr(value, "is_tile_array", False)
