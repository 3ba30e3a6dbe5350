"""Lowering of the tuple operations typed in :mod:`..typing.tuples`: constants where the typing
folded them, else the run-time element equalities the rules name
(:mod:`numba_tile.rules.tuples`), each by the ``==``/``!=`` of its elements' own types,
joined with ``and``/``or``."""

import operator

from numba.core import types

from ...rules import tuples as rules
from ..abstract import operand
from ..types import TileType, dtype_of_scalar
from ..typing.tuples import COMPARISONS
from . import arithmetic
from .registry import lower, registry


@lower("numba_tile.tuple_constant", types.Any)
def lower_constant(context, builder, sig, args):
    return context.get_constant(types.unliteral(sig.return_type),
                                sig.return_type.literal_value)


@registry.lower_cast(TileType, types.Integer)
def cast_tile_to_index(context, builder, fromty, toty, value):
    """A 0-d integer tile as the run-time index of a list argument (``arrays[bid]``, typed
    by ``..typing.tuples.TupleIndex``): every register holds its one element."""
    if fromty.shape != ():
        raise NotImplementedError(f"cast from {fromty} to {toty}")
    return arithmetic.convert(context, builder, builder.extract_value(value, 0), fromty.dtype,
                              dtype_of_scalar(toty))


def _element(builder, numba_type, value, path):
    for index in path:
        value = builder.extract_value(value, index)
        numba_type = numba_type[index]
    return numba_type, value


def _joined(context, builder, key, equalities, left, right, join):
    """The ``key`` (``operator.eq``/``ne``) of each pair of elements at the paths
    ``equalities`` of ``left`` and ``right`` (``(type, value)`` pairs), joined by ``join``."""
    typing = context.typing_context
    function = typing.resolve_value_type(key)
    result = None
    for left_path, right_path in equalities:
        left_type, left_value = _element(builder, *left, left_path)
        right_type, right_value = _element(builder, *right, right_path)
        sig = function.get_call_type(typing, (left_type, right_type), {})
        value = context.get_function(function, sig)(builder, (left_value, right_value))
        value = context.cast(builder, value, sig.return_type, types.boolean)
        result = value if result is None else join(result, value)
    return result


def _comparison_lowering(key):
    symbol = COMPARISONS[key]

    def lower_comparison(context, builder, sig, args):
        if isinstance(sig.return_type, types.BooleanLiteral):
            return context.get_constant(types.boolean, sig.return_type.literal_value)
        equalities = rules.comparison(symbol, *[operand(t) for t in sig.args])
        join = builder.and_ if key is operator.eq else builder.or_
        return _joined(context, builder, key, equalities, (sig.args[0], args[0]),
                       (sig.args[1], args[1]), join)
    return lower_comparison


for _key in COMPARISONS:
    lower(f"numba_tile.tuple_{_key.__name__}", types.Any, types.Any)(_comparison_lowering(_key))


@lower("numba_tile.tuple_contains", types.BaseTuple, types.Any)
def lower_contains(context, builder, sig, args):
    if isinstance(sig.return_type, types.BooleanLiteral):
        return context.get_constant(types.boolean, sig.return_type.literal_value)
    (container_type, needle_type), (container, needle) = sig.args, args
    found = None
    for equalities in rules.contains(operand(needle_type), operand(container_type)):
        equal = _joined(context, builder, operator.eq, equalities, (needle_type, needle),
                        (container_type, container), builder.and_)
        found = equal if found is None else builder.or_(found, equal)
    return found
