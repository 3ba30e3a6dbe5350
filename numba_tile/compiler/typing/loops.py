"""Typing of Python's loop builtins in tile code: ``range`` counts in int32, as in cuTile.

Numba types ``range(4)`` as a range of int64 (its integer literals are int64), so an int32 tile
accumulated with the loop index would become int64, or fail to unify with its int32 start.
In tile code the index is an int32 scalar unless a bound is a 64-bit integer scalar (a
``ct.ScalarInt64`` argument) or a constant that int32 cannot hold; the interpreter's ``range``
gives the same (:class:`numba_tile.host.loops.TileRange`).
"""

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ...errors import TileTypeError
from ...rules.loops import check_range_arguments, range_index_dtype
from ..abstract import RUN_TIME, constant_of, operand
from ..types import dtype_of_scalar
from .templates import registry


class Int32Range(AbstractTemplate):
    """``range(...)`` over int32 where its bounds allow (Numba's own template otherwise)."""

    key = range
    tile_first = True
    prefer_literal = True  # (a float or string bound named as the interpreter names it)

    def generic(self, args, kws):
        check_range_arguments([_rule_operand(arg) for arg in args], tuple(kws))
        if kws or not 1 <= len(args) <= 3:
            return None
        bounds = []
        for arg in args:
            if not isinstance(arg, types.Integer):
                return None
            value = constant_of(arg, RUN_TIME)
            bounds.append(int(value) if value is not RUN_TIME else dtype_of_scalar(arg))
        if range_index_dtype(bounds).bitwidth != 32:
            return None
        return signature(types.range_state32_type, *[types.int32] * len(args))


def _rule_operand(numba_type):
    try:
        return operand(numba_type)
    except TileTypeError:  # (a value the rules do not know: named by its Numba type)
        return numba_type


registry.register_global(range)(Int32Range)
