"""``raise ct.static_exception(EXPR)`` raises at compile time where the typed kernel reaches
it: the typing of its call (:class:`~numba_tile.compiler.typing.static_expressions
.StaticRaiseTemplate`) makes the error and keeps it, and this pass raises the first one
in a block that can run. Numba types both sides of an ``if`` whose condition a typed
constant decides (``t.dtype != ct.float32`` of a tile), so raising while typing would
raise on the side not taken.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     t = ct.load(x, (0,), (4,))
...     if t.dtype != ct.float32:
...         raise ct.static_exception(TypeError(f"needs float32, got {t.dtype}"))
...     ct.store(x, (0,), t * 2)
>>> _ = ct.compile(k, (np.ones(4, np.float32),), arch="sm_90")
>>> ct.compile(k, (np.ones(4, np.float16),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.StaticException: Exception was raised at compile time (TypeError: needs float32, got float16)
...
"""

from numba.core import types
from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ..compile_state import current
from ..typing.static_expressions import compiled_static_raise
from .contract import TYPED, tile_pass
from .defined_variables import feasible_blocks
from .device_output import source_location


def reached_static_exception(func_ir, typemap, calltypes):
    """The error of the first ``raise ct.static_exception`` in a block that can run (in
    the order of the blocks), or None."""
    for label in sorted(feasible_blocks(func_ir, typemap)):
        for statement in func_ir.blocks[label].body:
            call = getattr(statement, "value", None)
            if not (isinstance(call, ir.Expr) and call.op == "call"):
                continue
            function = typemap.get(call.func.name)
            if getattr(function, "typing_key", None) is not compiled_static_raise:
                continue
            signature = calltypes[call]
            key = signature.args[0]
            if not isinstance(key, types.IntegerLiteral):
                continue
            error = current().static_values.get((key.literal_value, tuple(signature.args[1:])))
            if error is not None:
                if getattr(error, "loc", None) is None:
                    error.loc = source_location(statement.loc)
                return error
    return None


@tile_pass("raise the static exceptions the kernel reaches", needs=(TYPED,))
@register_pass(mutates_CFG=False, analysis_only=True)
class RaiseStaticExceptions(FunctionPass):
    """The compiler pass raising :func:`reached_static_exception`."""

    _name = "numba_tile_raise_static_exceptions"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        error = reached_static_exception(state.func_ir, state.typemap, state.calltypes)
        if error is not None:
            raise error
        return False
