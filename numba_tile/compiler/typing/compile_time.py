"""Typing of what tile code computes while compiling: ``static_assert``, ``ensure_constant``,
``static_eval``, comparisons of constants (dtypes, ``Constant[str]`` parameters, enum members,
which are not ordered), enum members made from their values (``Color(0)``), and tuples whose
entries stay constants (concatenation, ``tuple()``, constant indexing, ``reversed``)."""

import operator

from numba.core import types
from numba.core.typing import signature
from numba.core.typing.typeof import typeof
from numba.cuda.typing.templates import AbstractTemplate

from ...enums import enum_call_arity_message
from ...errors import TileTypeError, TileStaticAssertionError
from ...language import debugging
from ...rules import enums as enum_rules
from ...rules import operators as operator_rules
from ...rules.objects import check_index_in_range
from ..abstract import RUN_TIME, RuntimeScalar, constant_of, operand
from ..types import ConstantType
from .templates import compile_time_value, constant_value, register_template, registry


def infer_static_assert(values):
    condition = compile_time_value(values["condition"], "static_assert()")
    if isinstance(condition, RuntimeScalar):
        raise TileTypeError(f"static_assert() needs a compile-time constant condition, got a "
                            f"{condition.describe()}")
    if not condition:
        message = constant_value(values["message"])
        raise TileStaticAssertionError(message if message is not None
                                       else "Static assertion failed")
    return types.none


def _is_constant(value):
    return isinstance(value, (types.Literal, ConstantType, types.Omitted)) or (
        isinstance(value, types.BaseTuple) and all(isinstance(v, types.Literal) for v in value))


def infer_ensure_constant(values):
    value = values["value"]
    if not _is_constant(value):
        raise debugging.not_constant_error(operand(value))
    return value


def infer_static_eval(values):
    """``static_eval`` of a kernel without source (there is no expression to run)."""
    value = values["expr"]
    if not _is_constant(value):
        raise TileTypeError(f"static_eval() needs a compile-time constant, got a run-time "
                            f"{value}")
    return value


register_template(debugging.static_assert, infer_static_assert)
register_template(debugging.ensure_constant, infer_ensure_constant)
register_template(debugging.static_eval, infer_static_eval)


class _FoldedComparison(AbstractTemplate):
    """A comparison that folds to a constant bool where :meth:`folded` gives one, tried
    before Numba's templates and numba-cuda's overloads (which need a GPU)."""

    prefer_literal = True
    tile_first = True
    metadata = {"target": "cuda"}
    symbol = None

    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        result = self.folded(*args)
        return None if result is None else signature(types.BooleanLiteral(result), *args)


class _ConstantComparison(_FoldedComparison):
    """``a.dtype == ct.float32``, ``MODE == "causal"`` (a ``Constant[str]`` parameter),
    ``"foo" < "bar"``; enum members are not ordered (the rule's error; members of an
    ``IntEnum`` are ints, folded as constants)."""

    def folded(self, left, right):
        constants = isinstance(left, ConstantType) or isinstance(right, ConstantType)
        if constants:
            enum_rules.check_comparison(self.symbol, constant_of(left, None),
                                        constant_of(right, None))
        kinds = (ConstantType, types.StringLiteral)
        if not (isinstance(left, kinds) and isinstance(right, kinds)) or (
                constants and self.symbol not in ("==", "!=")):  # (strings are ordered)
            return None
        return bool(self.key(constant_of(left), constant_of(right)))


class _IdentityComparison(_FoldedComparison):
    """``x is None``, ``flag is True``: the rule's error for a tile, a run-time scalar or an
    array compared with anything but None; constants fold."""

    def folded(self, left, right):
        operator_rules.check_identity(self.symbol, _identity_operand(left),
                                      _identity_operand(right))
        values = constant_of(left, RUN_TIME), constant_of(right, RUN_TIME)
        if any(value is RUN_TIME for value in values):
            return None
        return self.key(*values)


def _identity_operand(numba_type):
    """The rule operand of a type that has one; the type itself for the rest (a function,
    an object of the user's), which the rule leaves to Python's identity."""
    try:
        return operand(numba_type)
    except TileTypeError:
        return numba_type


for _key, _symbol, _kind in (
        (operator.eq, "==", _ConstantComparison), (operator.ne, "!=", _ConstantComparison),
        (operator.lt, "<", _ConstantComparison), (operator.le, "<=", _ConstantComparison),
        (operator.gt, ">", _ConstantComparison), (operator.ge, ">=", _ConstantComparison),
        (operator.is_, "is", _IdentityComparison),
        (operator.is_not, "is not", _IdentityComparison)):
    registry.register_global(_key)(type(f"{_kind.__name__[1:]}_{_key.__name__}", (_kind,),
                                        {"key": _key, "symbol": _symbol}))


def type_enum_call(enum_class, args, kws):
    """The signature of ``Color(0)`` in tile code: the member of a constant value, itself a
    constant (an ``IntEnum`` member is Numba's, an int at run time); the rule's errors for
    other values."""
    if kws or len(args) != 1:
        raise TileTypeError(enum_call_arity_message(enum_class))
    member = enum_rules.member(enum_class, operand(args[0]))
    result = typeof(member) if isinstance(member, int) else ConstantType(member)
    return signature(result, *args)


class TupleConcatenation(AbstractTemplate):
    """``a + b`` of tuples keeps constant entries constant (``f(t, *axes)`` is compiled as
    ``(t,) + axes``, and the axes must stay compile-time constants)."""

    key = operator.add
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 2 or not all(isinstance(a, types.BaseTuple) for a in args):
            return None
        return signature(types.BaseTuple.from_types(tuple(args[0]) + tuple(args[1])), *args)


registry.register_global(operator.add)(TupleConcatenation)


class TupleExtension(TupleConcatenation):
    """``parts += (t,)``: tuples are immutable, so this is ``parts = parts + (t,)``."""

    key = operator.iadd


registry.register_global(operator.iadd)(TupleExtension)


class TupleOfTuple(AbstractTemplate):
    """``tuple(t)`` of a tuple is ``t`` itself, constant entries included (``f(x, *axes)`` is
    compiled as ``(x,) + tuple(axes)``)."""

    key = tuple
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], types.BaseTuple):
            return None
        return signature(args[0], *args)

    def get_impl_key(self, sig):
        return "numba_tile.same_value"


registry.register_global(tuple)(TupleOfTuple)


class TupleConstantIndex(AbstractTemplate):
    """``t[i]`` of a tuple at a constant index (a ``ct.static_iter`` loop variable) is its
    entry, whatever the entries' types."""

    key = operator.getitem
    tile_first = True
    prefer_literal = True
    metadata = {"target": "cuda"}  # before numba-cuda's overloads, which need a GPU

    def generic(self, args, kws):
        if kws or len(args) != 2 or not isinstance(args[0], types.BaseTuple) or \
                not isinstance(args[1], types.IntegerLiteral):
            return None
        index = args[1].literal_value
        check_index_in_range(index, len(args[0]))
        return signature(args[0][index], *args)

    def get_impl_key(self, sig):
        return "numba_tile.tuple_item"


registry.register_global(operator.getitem)(TupleConstantIndex)


class ReversedTuple(AbstractTemplate):
    """``reversed(t)`` of a tuple is the reversed tuple, constant entries included
    (``tuple(reversed(t.shape))``)."""

    key = reversed
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], types.BaseTuple):
            return None
        return signature(types.BaseTuple.from_types(tuple(args[0])[::-1]), *args)

    def get_impl_key(self, sig):
        return "numba_tile.reversed_tuple"


registry.register_global(reversed)(ReversedTuple)
