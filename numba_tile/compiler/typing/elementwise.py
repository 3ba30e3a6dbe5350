"""Typing of the elementwise ops: Python operators and ``math`` functions on tiles and
run-time scalars, the public elementwise functions, ``min``/``max``, ``where``, ``astype``,
``divmod``, and ``int()``/``float()``/``bool()`` of tiles and constants."""

import inspect
import math
import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...enums import RoundingMode
from ...errors import TileTypeError
from ...language import tile_math
from ...host.tile import make_constant
from ...language import elementwise
from ...rules import elementwise as elementwise_rules
from ...rules.calls import bind_arguments
from ...rules.core import as_operand, check_dtype_call, describe, dtype_argument, not_a_tile
from ...promotion import truncated
from ...rules.operators import BINARY_OPERATORS, INPLACE_OPERATORS, UNARY_OPERATORS
from ...rules.objects import conversion_error
from ..abstract import constant_of, operand
from ..constant_folding import FOLDABLE, is_wide_integer, literal_type
from ..types import ArrayType, ConstantType, FloatLiteral, TileType, TypedConstant, \
    dtype_of_scalar, scalar_type, storage_scalar_type
from .templates import constant_value, folded_type, register_template, float_options, is_constant, \
    is_scalar, registry, result_tile


def _check_flags(op, values):
    elementwise_rules.check_flags(op, **{name: operand(values[name]) for name in (
        "flush_to_zero", "propagate_nan") if name in values})


def infer_binary(op, public=False):
    """The typing of binary op ``op``: of its public function (``ct.add``: ``public``), or
    of its operator, which a value with operators of its own (a context manager's) may
    answer instead where no tile, run-time scalar or array takes part."""
    def takes_part(a):
        return isinstance(a, (TileType, ArrayType)) or is_scalar(a) and (
            public or not is_constant(a))

    def infer(values):
        # (atan2's operands are x1 and x2, as in cuTile's signature)
        x, y = values.get("x", values.get("x1")), values.get("y", values.get("x2"))
        if not all(isinstance(a, TileType) or is_scalar(a) for a in (x, y)):
            if any(takes_part(a) for a in (x, y)):
                # a tile with something else (a string...): the interpreter's TileTypeError
                tiles = any(isinstance(a, TileType) for a in (x, y))
                for a, what in ((x, "the left operand"), (y, "the right operand")):
                    if not (isinstance(a, TileType) or is_scalar(a)):
                        if isinstance(a, ConstantType) and not (tiles or public):
                            return None  # (an object's own operators say, a context manager's)
                        as_operand(operand(a), what)
            return None
        spec, _ = elementwise_rules.binary(op, operand(x), operand(y))
        _check_flags(op, values)
        float_options(op, values, spec.dtype)
        if is_constant(x) and is_constant(y):  # folded as the interpreter does
            return folded_type(elementwise.binary(op, constant_value(x), constant_value(y)))
        return result_tile(spec.dtype, (x, y))
    return infer


def infer_unary(op):
    def infer(values):
        x = values["x"]
        if not (isinstance(x, TileType) or is_scalar(x)):
            as_operand(operand(x))  # an array, None...: the interpreter's TileTypeError
            return None
        spec = elementwise_rules.unary(op, operand(x))
        _check_flags(op, values)
        float_options(op, values, spec.dtype)
        if is_constant(x):
            return folded_type(elementwise.unary(op, constant_value(x)))
        return result_tile(spec.dtype, (x,))
    return infer


# Python operators on tiles (and on run-time scalars, where tile semantics replace Numba's)
# are implemented by the public function of the same op (rules.operators: BINARY_OPERATORS,
# INPLACE_OPERATORS, UNARY_OPERATORS)
MATH_UNARY = {getattr(math, name): op for name, op in tile_math.UNARY.items()
              if hasattr(math, name)}
MATH_UNARY[math.log] = "log"  # the one-argument form (the interpreter's math.log takes both)
MATH_BINARY = {getattr(math, name): op for name, op in tile_math.BINARY.items()}
# ops without a public function of their own: the lowering is keyed by these names
PRIVATE_OPS = {}


def implementation_of(op):
    """The function whose lowering implements elementwise ``op`` (the public function, or a
    private key for ops that only ``math`` reaches)."""
    fn = getattr(elementwise, op, None)
    if fn is not None and hasattr(fn, "__tile_op__"):
        return fn
    return PRIVATE_OPS.setdefault(op, f"numba_tile.{op}")


def _operator_template(function, op, infer, arity, *, as_float=False):
    """``x <op> y`` (or ``math.f(x)``) where an operand is a tile or a run-time scalar.

    These templates come before Numba's own (``tile_first``), so that ``bid + 1`` is an
    int32 as in the tile model, not Numba's int64; constant operands are folded earlier.
    """
    names = ("x", "y")[:arity]

    class Template(AbstractTemplate):
        key = function
        prefer_literal = True
        tile_first = True

        def generic(self, args, kws):
            if kws or len(args) != arity:
                return None
            if all(is_constant(a) for a in args) and as_float:
                folded = getattr(tile_math.tile_math, function.__name__)(
                    *[constant_value(a) for a in args])
                return signature(folded_type(folded), *args)
            if all(is_constant(a) for a in args) and not any(
                    isinstance(a, TypedConstant) for a in args):
                return None  # folded by the typing context (typed constants fold below)
            # a run-time value with what is none (None, an array): the rule says which
            # operand is wrong, as the interpreter does; so does a math function of one
            run_time = any(isinstance(a, TileType) or (is_scalar(a) and not is_constant(a))
                           or (isinstance(a, ArrayType) and op not in elementwise_rules.COMPARISONS)
                           for a in args)
            if not (run_time or as_float or arity == 1) and not all(is_scalar(a) for a in args):
                return None
            if as_float:  # math functions take integer arguments as float32 (C's rule)
                args = tuple(_as_float_type(a) for a in args)
            result = infer(dict(zip(names, args)))
            return None if result is None else signature(result, *args)

        def get_impl_key(self, sig):
            return implementation_of(op)

    Template.__name__ = f"Tile_operator_{op}"
    registry.register_global(function)(Template)


def _as_float_type(numba_type):
    if isinstance(numba_type, TileType) and not numba_type.dtype.is_float:
        return numba_type.with_dtype(d.float32)
    if is_scalar(numba_type) and not isinstance(numba_type, FloatLiteral) and \
            not isinstance(numba_type, TileType):
        dtype = dtype_of_scalar(numba_type)
        if dtype is None or not dtype.is_float:
            return types.float32
    return numba_type


for _function, _op in {**BINARY_OPERATORS, **INPLACE_OPERATORS}.items():
    _operator_template(_function, _op, infer_binary(_op), 2)
for _function, _op in UNARY_OPERATORS.items():
    _operator_template(_function, _op, infer_unary(_op), 1)
for _function, _op in MATH_UNARY.items():
    _operator_template(_function, _op, infer_unary(_op), 1, as_float=True)
for _function, _op in MATH_BINARY.items():
    _operator_template(_function, _op, infer_binary(_op), 2, as_float=True)

for _op in elementwise_rules.BINARY_OPS:
    if hasattr(elementwise, _op):
        register_template(getattr(elementwise, _op), infer_binary(_op, public=True))
for _op in elementwise_rules.UNARY_OPS:
    if hasattr(elementwise, _op):
        register_template(getattr(elementwise, _op), infer_unary(_op))


def _minmax_template(function, op):
    """Builtin ``min``/``max`` of two or more tiles or run-time scalars."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if not kws and len(args) >= 2 and all(is_constant(a) for a in args):
                return signature(folded_type(function(*[constant_value(a) for a in args])), *args)
            if kws or len(args) < 2:
                return None
            if not all(isinstance(a, TileType) or is_scalar(a) for a in args) and \
                    not any(isinstance(a, TileType) for a in args):
                return None  # (with a tile, the chain below says which operand is wrong)
            if not any(isinstance(a, TileType) for a in args) and len(args) != 2:
                return None
            result = args[0]
            for other in args[1:]:
                result = infer_binary(op)({"x": result, "y": other})
            return signature(result, *args)

        def get_impl_key(self, sig):
            if isinstance(sig.return_type, types.Literal):
                return "numba_tile.folded"
            return f"numba_tile.builtin_{function.__name__}"

    registry.register_global(function)(Template)


_minmax_template(min, "minimum")
_minmax_template(max, "maximum")


def infer_where(values):
    cond, x, y = values["cond"], values["x"], values["y"]
    spec, _ = elementwise_rules.where(operand(cond), operand(x), operand(y))
    return result_tile(spec.dtype, (cond, x, y))


register_template(elementwise.where, infer_where)


def infer_astype(values):
    x, dtype = values["x"], constant_value(values["dtype"])
    dtype = dtype_argument(dtype, "astype")
    rounding_mode = constant_value(values.get("rounding_mode", types.Omitted(None)))
    if rounding_mode is not None and not isinstance(rounding_mode, RoundingMode):
        raise TileTypeError(f"rounding_mode must be a ct.RoundingMode, got {rounding_mode!r}")
    if not (isinstance(x, TileType) or is_scalar(x)):
        raise not_a_tile("astype", operand(x))
    spec = elementwise_rules.astype(operand(x), dtype, rounding_mode)
    if isinstance(x, TileType):
        storage_scalar_type(spec.dtype)  # the compiler must have the dtype
        return x.with_dtype(spec.dtype)
    return scalar_type(spec.dtype)


register_template(elementwise.astype, infer_astype)


class DivmodTemplate(AbstractTemplate):
    """Builtin ``divmod`` of tiles: ``(x // y, x % y)``."""

    key = divmod
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        # (the key, a Python function, is bound to the instance: the class's is not)
        if type(self).key is elementwise.divmod:  # ct.divmod(t): its parameters' error
            bind_arguments("divmod", inspect.signature(elementwise.divmod), args, kws)
        if kws or len(args) != 2 or not any(isinstance(a, TileType) for a in args):
            return None
        values = {"x": args[0], "y": args[1]}
        elementwise_rules.check_divmod(operand(args[0]), operand(args[1]))
        return signature(types.Tuple([infer_binary("floordiv")(values),
                                      infer_binary("mod")(values)]), *args)

    def get_impl_key(self, sig):
        return "numba_tile.divmod"


registry.register_global(divmod)(DivmodTemplate)
registry.register_global(elementwise.divmod)(type("Tile_divmod", (DivmodTemplate,),
                                                  {"key": elementwise.divmod}))


class LogicalNotTemplate(AbstractTemplate):
    """``not t`` of a tile of several elements: elementwise, ``t == 0``, as cuTile takes it
    (a 0-d tile or run-time scalar is a truth value: Numba's)."""

    key = operator.not_
    tile_first = True

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], TileType) or not args[0].shape:
            return None
        return signature(infer_binary("equal")({"x": args[0], "y": types.literal(0)}), *args)


registry.register_global(operator.not_)(LogicalNotTemplate)


def _converter_template(function, dtype):
    """``int(x)``, ``float(x)`` and ``bool(x)`` of a tile or run-time scalar: ``astype`` to
    int32, float32 or bool_ (the tile model's types for Python's)."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if kws or len(args) != 1 or is_constant(args[0]) or not (
                    isinstance(args[0], TileType) or is_scalar(args[0])):
                return None
            result = infer_astype({"x": args[0], "dtype": ConstantType(dtype)})
            return signature(result, *args)

        def get_impl_key(self, sig):
            return f"numba_tile.convert_to_{dtype.name}"

    registry.register_global(function)(Template)


def _builtin_fold_template(function):
    """``int(2.5)``, ``abs(-3)`` ... of compile-time constants are constants."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if kws or not args or not all(is_constant(a) for a in args):
                return None
            values = [constant_value(a) for a in args]
            try:
                value = function(*values)
            except (ValueError, OverflowError):  # int("abc"), int(inf): as interpreted
                raise conversion_error(function.__name__, values[0]) from None
            except Exception:  # let Numba's typing report it
                return None
            return signature(folded_type(value), *args)

        def get_impl_key(self, sig):
            return "numba_tile.folded"

    registry.register_global(function)(Template)


def _wide_integer_fold_template(function):
    """``2**200 // 2**198``: an operator on ints no dtype holds (loosely typed constants,
    unbounded as they fold) is the constant it folds to, as ``fold_constants`` types it;
    here for the lowering, which looks the call up again."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if kws or not args or not all(is_constant(a) for a in args) or not any(
                    isinstance(a, ConstantType) and is_wide_integer(a.value) for a in args):
                return None
            try:
                value = function(*[constant_of(a) for a in args])
            except Exception:  # (division by zero...: as other folds, Numba's typing says)
                return None
            if not isinstance(value, (bool, int, float)):
                return None
            return signature(literal_type(value), *args)

    registry.register_global(function)(Template)


for _function in FOLDABLE:
    _wide_integer_fold_template(_function)
for _function in (int, float, bool, abs):
    _builtin_fold_template(_function)
# after the folds: a template that declines constants is retried with them unliteral
for _function, _dtype in ((int, d.int32), (float, d.float32), (bool, d.bool_)):
    _converter_template(_function, _dtype)


_NOT_A_CONSTANT = object()


def type_dtype_call(dtype, args, kws):
    """The signature of ``ct.int16(5)``: a strictly typed constant (checked and converted
    by the interpreter's rule); ``ct.float16(t)`` of a tile or run-time scalar is
    ``astype``."""
    check_dtype_call(dtype, len(args), tuple(kws))
    if not args:  # ct.float16(): zero, as in cuTile
        return signature(folded_type(make_constant(0, dtype)))
    (value,) = args
    constant = constant_of(value, _NOT_A_CONSTANT)
    if constant is not _NOT_A_CONSTANT:
        return signature(folded_type(make_constant(truncated(constant, dtype), dtype)), *args)
    if not (isinstance(value, TileType) or is_scalar(value)):
        raise TileTypeError(f"{dtype}() needs a number, a scalar or a tile, got "
                            f"{describe(operand(value))}")
    return signature(infer_astype({"x": value, "dtype": ConstantType(dtype)}), *args)
