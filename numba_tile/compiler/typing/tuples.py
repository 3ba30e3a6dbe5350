"""Typing of tuples by cuTile's rules (:mod:`numba_tile.rules.tuples`), which replace Numba's
own: ``len(t)`` is a constant; ``t[i]`` needs a constant index (a list argument,
:class:`~numba_tile.compiler.types.ListType`, also takes a run-time one); ``==``/``!=``
compare scalar elements and fold where the elements are constants, other comparisons are
errors; ``x in t`` tries the items in order; item assignment to tuples, tiles and arrays is
an error.

The lowering (:mod:`..lowering.tuples`) computes the run-time element equalities that the
rules name, by the ``==`` (or ``!=``) of the elements' own types.
"""

import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ...dtypes import DType
from ...errors import TileTypeError
from ...rules import tuples as rules
from ...rules.core import type_name
from ..abstract import operand
from ..types import ArrayType, ConstantType, FloatLiteral, ListType, TileType, TypedConstant
from .templates import registry

COMPARISONS = {operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
               operator.gt: ">", operator.ge: ">="}


class _TupleTemplate(AbstractTemplate):
    """What the templates of tuples share: tried before Numba's own (and before numba-cuda's
    overloads, which need a GPU), with literal arguments first."""

    tile_first = True
    prefer_literal = True
    metadata = {"target": "cuda"}


def type_at(numba_type, path):
    """The type of the element of nested tuple type ``numba_type`` at ``path``."""
    for index in path:
        numba_type = numba_type[index]
    return numba_type


class TupleLength(_TupleTemplate):
    """``len(t)`` of a tuple is a constant: its length is part of its type."""

    key = len

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], types.BaseTuple):
            return None
        return signature(types.IntegerLiteral(len(args[0])), *args)

    def get_impl_key(self, sig):
        return "numba_tile.tuple_constant"


registry.register_global(len)(TupleLength)


class TupleIndex(_TupleTemplate):
    """``t[i]`` of a tuple where ``i`` is not a constant integer (those are
    ``compile_time.TupleConstantIndex``'s) nor a constant slice: the rule's error. A list
    argument's run-time index is left to Numba's indexing of homogeneous tuples; a 0-d
    integer tile indexes it as its one element does (the cast of ``..lowering.tuples``)."""

    key = operator.getitem

    def generic(self, args, kws):
        if kws or len(args) != 2 or not isinstance(args[0], types.BaseTuple):
            return None
        container, index = args
        if isinstance(index, (types.IntegerLiteral, types.SliceLiteral)):
            return None
        listed = isinstance(container, ListType)
        if listed and isinstance(index, types.Integer):
            return None
        rules.check_index(operand(index), run_time=listed)
        if listed and isinstance(index, TileType):
            return signature(container.dtype, container, types.intp)
        return None


registry.register_global(operator.getitem)(TupleIndex)


def equality_types(context, key, left, right, equalities):
    """Check that each run-time equality of the elements of ``left`` and ``right`` (Numba
    types) is typed by ``key`` (``operator.eq`` or ``operator.ne``)."""
    for left_path, right_path in equalities:
        pair = (type_at(left, left_path), type_at(right, right_path))
        if context.resolve_function_type(key, pair, {}) is None:
            raise TileTypeError(f"Cannot compare {pair[0]} with {pair[1]}")


def _comparison_template(key, symbol):
    class Template(_TupleTemplate):

        def generic(self, args, kws):
            if kws or len(args) != 2 or not any(isinstance(a, types.BaseTuple) for a in args):
                return None
            found = rules.comparison(symbol, operand(args[0]), operand(args[1]))
            if isinstance(found, bool):
                return signature(types.BooleanLiteral(found), *args)
            equality_types(self.context, key, args[0], args[1], found)
            return signature(types.boolean, *args)

        def get_impl_key(self, sig):
            return f"numba_tile.tuple_{key.__name__}"

    Template.key = key
    Template.__name__ = f"Tuple_{key.__name__}"
    registry.register_global(key)(Template)


for _key, _symbol in COMPARISONS.items():
    _comparison_template(_key, _symbol)


class TupleContains(_TupleTemplate):
    """``x in t`` of a tuple: a constant where an item equals ``x`` as a constant (before any
    run-time one) or none can; else the run-time ``or`` of the other items' equalities."""

    key = operator.contains

    def generic(self, args, kws):
        if kws or len(args) != 2 or not isinstance(args[0], types.BaseTuple):
            return None
        container, needle = args
        found = rules.contains(operand(needle), operand(container))
        if isinstance(found, bool):
            return signature(types.BooleanLiteral(found), *args)
        for equalities in found:
            equality_types(self.context, operator.eq, needle, container, equalities)
        return signature(types.boolean, *args)

    def get_impl_key(self, sig):
        return "numba_tile.tuple_contains"


registry.register_global(operator.contains)(TupleContains)


class ImmutableSetItem(_TupleTemplate):
    """``t[i] = v`` of a tuple, a tile or an array: the rule's error."""

    key = operator.setitem

    def generic(self, args, kws):
        if kws or len(args) != 3:
            return None
        target = args[0]
        if isinstance(target, types.BaseTuple):
            raise rules.immutable_error(())
        if isinstance(target, (TileType, ArrayType)):
            raise rules.immutable_error(target)
        if isinstance(target, (types.NoneType, types.Number, types.Boolean, FloatLiteral,
                               TypedConstant)) or (isinstance(target, ConstantType) and
                                                   isinstance(target.value, DType)):
            raise rules.no_item_assignment(type_name(operand(target)))
        return None


registry.register_global(operator.setitem)(ImmutableSetItem)
