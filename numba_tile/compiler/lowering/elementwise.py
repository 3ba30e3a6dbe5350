"""Lowering of the elementwise ops (on tiles and run-time scalars), ``where`` and ``astype``.

Operands are broadcast to the result register by register (through shared memory when their
layout does not line up with the result's), converted to the op's operand dtype, and each
register is computed by :mod:`~numba_tile.compiler.lowering.arithmetic`. A result without tile operands is one scalar.
"""

import inspect
import math
import operator

from numba.core import types
from numba.core.typing import signature

from ... import dtypes as d
from ...enums import RoundingMode
from ...language import elementwise
from ...rules import elementwise as elementwise_rules
from ...rules.core import not_a_scalar, operand_dtype as dtype_of_operand
from ..abstract import constant_of, operand
from ..types import ConstantType, FloatLiteral, TileType, TypedConstant, dtype_of_scalar
from ..typing.elementwise import implementation_of, infer_binary
from . import arithmetic
from .constants import folded_constant
from .registry import registry
from .tiles import make_tile, move_tile

lower = registry.lower


def value_dtype(numba_type):
    """The tile dtype of a value of ``numba_type`` as lowered (literals are lowered as their
    Python type: int64, float64, bool)."""
    if isinstance(numba_type, (TileType, TypedConstant)):
        return numba_type.dtype
    if isinstance(numba_type, FloatLiteral):
        return d.float64
    if isinstance(numba_type, types.BooleanLiteral):
        return d.bool_
    if isinstance(numba_type, types.IntegerLiteral):
        return d.int64
    return dtype_of_scalar(numba_type)


def operand_values(context, builder, numba_type, value, result_type, dtype):
    """Per-register storage values of an operand converted to ``dtype`` and broadcast to the
    result (one value when the result is a scalar)."""
    if isinstance(numba_type, types.Literal):  # static operands may arrive as Python values
        value = arithmetic.constant(value_dtype(numba_type), numba_type.literal_value)
    if not isinstance(numba_type, TileType):
        scalar = arithmetic.convert(context, builder, value, value_dtype(numba_type), dtype)
        return [scalar] * (result_type.registers if isinstance(result_type, TileType) else 1)
    if math.prod(numba_type.shape) == 1:  # one element, which every thread holds
        element = arithmetic.convert(context, builder, builder.extract_value(value, 0),
                                     numba_type.dtype, dtype)
        return [element] * (result_type.registers if isinstance(result_type, TileType) else 1)
    if numba_type.layout != result_type.layout:
        moved_type = TileType(numba_type.dtype, result_type.shape, result_type.num_warps,
                              result_type.layout)
        value = move_tile(context, builder, numba_type, value, moved_type)
        numba_type = moved_type
    return [arithmetic.convert(context, builder, builder.extract_value(value, r),
                               numba_type.dtype, dtype)
            for r in range(result_type.registers)]


def pack(context, builder, result_type, values):
    """A tile of ``result_type`` from its registers, or the one value of a scalar result."""
    if isinstance(result_type, TileType):
        return make_tile(context, builder, result_type, values)
    return values[0]


def _parameter_names(function):
    stub = getattr(function, "__tile_op__", None)
    if stub is None:
        return ("x", "y")
    return tuple(inspect.signature(stub).parameters)


def options_of(function, sig):
    """The float options of a call from the constant argument types of its signature."""
    values = dict(zip(_parameter_names(function), sig.args))

    def option(name, default):
        value = constant_of(values.get(name, types.Omitted(default)), default)
        return default if value is None and default is not None else value

    return arithmetic.Options(option("rounding_mode", None), bool(option("flush_to_zero", False)),
                              bool(option("propagate_nan", False)))


def _result_dtype(numba_type):
    return numba_type.dtype if isinstance(numba_type, TileType) else dtype_of_scalar(numba_type)


def _folded(context, builder, result_type):
    return folded_constant(context, builder, signature(result_type), ())


def _lower_binary(op, function):
    def lower_binary(context, builder, sig, args):
        result_type = sig.return_type
        if isinstance(result_type, types.Literal):
            return _folded(context, builder, result_type)
        x_type, y_type = sig.args[0], sig.args[1]
        _, operand_dtype = elementwise_rules.binary(op, operand(x_type), operand(y_type))
        options = options_of(function, sig)
        result_dtype = _result_dtype(result_type)
        xs = operand_values(context, builder, x_type, args[0], result_type, operand_dtype)
        ys = operand_values(context, builder, y_type, args[1], result_type, operand_dtype)
        values = [arithmetic.binary(context, builder, op, operand_dtype, result_dtype, a, b,
                                    options) for a, b in zip(xs, ys)]
        return pack(context, builder, result_type, values)
    return lower_binary


def _lower_unary(op, function):
    def lower_unary(context, builder, sig, args):
        result_type = sig.return_type
        if isinstance(result_type, types.Literal):
            return _folded(context, builder, result_type)
        x_type = sig.args[0]
        dtype = elementwise_rules.unary_operand_dtype(op, value_dtype(x_type) if isinstance(
            x_type, TileType) else dtype_of_operand(operand(x_type)))
        options = options_of(function, sig)
        result_dtype = _result_dtype(result_type)
        xs = operand_values(context, builder, x_type, args[0], result_type, dtype)
        values = [arithmetic.unary(context, builder, op, dtype, result_dtype, x, options)
                  for x in xs]
        return pack(context, builder, result_type, values)
    return lower_unary


for _op in elementwise_rules.BINARY_OPS:
    _function = implementation_of(_op)
    lower(_function, types.Any, types.Any, types.VarArg(types.Any))(
        _lower_binary(_op, _function))
for _op in elementwise_rules.UNARY_OPS:
    _function = implementation_of(_op)
    lower(_function, types.Any, types.VarArg(types.Any))(_lower_unary(_op, _function))


@lower(operator.not_, TileType)
def lower_logical_not(context, builder, sig, args):
    """``not t`` of a tile of several elements: ``t == 0``, element by element."""
    zero = types.literal(0)
    return _lower_binary("equal", None)(
        context, builder, signature(sig.return_type, sig.args[0], zero),
        (args[0], context.get_constant(types.intp, 0)))


def _lower_minmax(op):
    """Builtin ``min``/``max`` of several operands: pairwise, left to right."""
    binary = _lower_binary(op, None)

    def lower_minmax(context, builder, sig, args):
        value, value_type = args[0], sig.args[0]
        for other, other_type in zip(args[1:], sig.args[1:]):
            step_type = infer_binary(op)({"x": value_type, "y": other_type})
            value = binary(context, builder, signature(step_type, value_type, other_type),
                           (value, other))
            value_type = step_type
        return value
    return lower_minmax


lower("numba_tile.builtin_min", types.VarArg(types.Any))(_lower_minmax("minimum"))
lower("numba_tile.builtin_max", types.VarArg(types.Any))(_lower_minmax("maximum"))


@lower(elementwise.where, types.Any, types.Any, types.Any)
def lower_where(context, builder, sig, args):
    result_type = sig.return_type
    dtype = _result_dtype(result_type)
    conditions = operand_values(context, builder, sig.args[0], args[0], result_type, d.bool_)
    xs = operand_values(context, builder, sig.args[1], args[1], result_type, dtype)
    ys = operand_values(context, builder, sig.args[2], args[2], result_type, dtype)
    values = [builder.select(c, x, y) for c, x, y in zip(conditions, xs, ys)]
    return pack(context, builder, result_type, values)


def _lower_astype(context, builder, sig, args):
    x_type, result_type = sig.args[0], sig.return_type
    mode = constant_of(sig.args[2], None) if len(sig.args) > 2 else None
    if mode is not None and not isinstance(mode, RoundingMode):
        mode = None
    source = value_dtype(x_type)
    if isinstance(x_type, types.Literal):
        args = (arithmetic.constant(source, x_type.literal_value),) + tuple(args[1:])
    if isinstance(x_type, TileType):
        registers = [builder.extract_value(args[0], r) for r in range(x_type.registers)]
    else:
        registers = [args[0]]
    values = [arithmetic.convert(context, builder, v, source, _result_dtype(result_type), mode)
              for v in registers]
    return pack(context, builder, result_type, values)


lower(elementwise.astype, types.Any, types.Any, types.VarArg(types.Any))(_lower_astype)


@lower(ConstantType)
@lower(ConstantType, types.Any)
def lower_dtype_call(context, builder, sig, args):
    """``ct.int16(5)`` and ``ct.int16()`` (zero) are constants; ``ct.float16(t)`` converts
    like ``astype``."""
    if isinstance(sig.return_type, TypedConstant):
        return arithmetic.constant(sig.return_type.dtype, sig.return_type.literal_value)
    return _lower_astype(context, builder, sig, args)


lower("tile.astype", TileType, types.VarArg(types.Any))(_lower_astype)
lower("tile.astype", types.Any, types.VarArg(types.Any))(_lower_astype)
for _dtype in (d.int32, d.float32, d.bool_):
    lower(f"numba_tile.convert_to_{_dtype.name}", types.Any)(_lower_astype)


@registry.lower_cast(TileType, TileType)
def cast_tile(context, builder, fromty, toty, value):
    """A tile to another dtype (``math`` functions take integer tiles as float32) or another
    layout (a variable that holds tiles of two layouts, such as a loop-carried accumulator,
    takes one of them: :meth:`TileType.unify`)."""
    if fromty.shape != toty.shape:
        raise NotImplementedError(f"cast from {fromty} to {toty}")
    if fromty.layout != toty.layout:
        value = move_tile(context, builder, fromty, value, toty.with_dtype(fromty.dtype))
    values = [arithmetic.convert(context, builder, builder.extract_value(value, r),
                                 fromty.dtype, toty.dtype) for r in range(toty.registers)]
    return make_tile(context, builder, toty, values)



@registry.lower_cast(TileType, types.Boolean)
def cast_tile_to_condition(context, builder, fromty, toty, value):
    """A 0-d tile as the condition of ``if``/``while`` (``if ct.sum(t) > 0:``): every
    register holds its one element. Other tiles have no truth value, as in the interpreter."""
    if fromty.shape != ():
        raise not_a_scalar(fromty.shape, "a condition")
    return arithmetic.convert(context, builder, builder.extract_value(value, 0), fromty.dtype,
                              d.bool_)
