"""Which IR values are plain computations: those that a copy may run again, elsewhere or
ahead of time (the pipelining pass copies a loop's load indices ahead of the loop, a
producer warp computes a loop's range and indices again, see :mod:`.pipelining` and
:mod:`.producer_warp`).

>>> from numba.cuda.core import ir
>>> from numba_tile.compiler.frontend.plain_computations import is_pure
>>> is_pure(None, ir.Const(3, ir.Loc("k.py", 1)))
True
"""

import builtins

from numba.cuda.core import ir

from ...language import memory
from .device_output import callee

# calls an argument computation may make (copies of it run ahead of the loop's iteration)
PURE_CALLS = (memory.bid, memory.num_blocks, memory.cdiv, memory.num_tiles, builtins.min,
              builtins.max, builtins.abs, builtins.int, builtins.len)
# (not ``getitem``: with an index computed from the loop variable, the copies for
# iterations past the end would index past the end of the sequence)
PURE_EXPRESSIONS = ("build_tuple", "binop", "inplace_binop", "unary", "getattr",
                    "static_getitem", "cast")


def is_pure(func_ir, value, calls=PURE_CALLS, expressions=PURE_EXPRESSIONS):
    """True where ``value`` (an IR value) is a plain computation that a copy may run
    again: a constant, a global, a variable, one of ``expressions`` or a call of one of
    ``calls``."""
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
        return True
    if not isinstance(value, ir.Expr):
        return False
    if value.op in expressions:
        return True
    if value.op == "call":
        function = callee(func_ir, value)
        return any(function is f for f in calls) and not value.vararg
    return False
