"""Errors a source rewrite of the compiler found (a ``with`` on a context manager that
breaks cuTile's rules, :mod:`~numba_tile.compiler.frontend.with_blocks`) are raised where the
code is typed, not when it is rewritten: the rewrite leaves ``compiled_rewrite_error(i)`` in
place of the code, and typing it raises error ``i`` of the compilation. Code the kernel does
not reach (a branch on a constant) raises nothing, as in the interpreter, which raises such
errors when it runs the code."""

from numba.core import types
from numba.cuda.typing.templates import AbstractTemplate

from ...errors import TileTypeError
from ..abstract import operand
from ..compile_state import current
from .context_manager_values import GeneratorContextManagerType
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
        if len(args) == 2 and not isinstance(args[1], GeneratorContextManagerType):
            # a with block's context manager, known now by its type
            try:
                operand(args[1])
            except TileTypeError:  # no value of tile code: what the compiler lacks
                pass
            else:  # an array, a tile, None...: never a context manager
                error = error.refused
        raise type(error)(error.message, error.loc)
