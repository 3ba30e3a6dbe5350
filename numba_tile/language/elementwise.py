"""Elementwise ops: arithmetic, bitwise, comparisons, unary math, ``where`` and ``astype``.

All binary ops broadcast (NumPy rules) and promote (the seed's table). Two loosely typed
constants fold into a constant; a typed operand makes the result typed. The tile operators
(``a + b``, ``-a``, ``divmod(a, b)``) and ``astype`` methods that call them are attached
here too.
"""

import math

import numpy as np

from .. import dtypes as d
from ..enums import RoundingMode
from ..errors import TileTypeError, TileValueError
from ..host.context import check_run_time, tile_op, unchecked
from ..host.conversion import convert, flush_subnormals, round_float, wide_type
from ..host.scalars import LooseScalar, loose
from ..host.tile import Tile, make_constant, tile_argument, values_as
from ..rules import elementwise as rules, operators
from ..rules.core import as_operand, dtype_argument, is_python_number
from .tile_methods import tile_method

# Two constants fold with Python's operators and math; tiles compute with NumPy
_FOLD = {**{name: function for function, name in operators.BINARY_OPERATORS.items()},
         "atan2": math.atan2, "copysign": math.copysign, "fmod": math.fmod,
         "minimum": min, "maximum": max}
_NUMPY = {**{op.name: op.numpy for op in operators.OPERATORS},
          "atan2": np.arctan2, "copysign": np.copysign, "fmod": np.fmod}


def _fold(op, x, y):
    """Constant arithmetic on two loosely typed constants (unbounded ints, doubles)."""
    if op.startswith("bitwise") and (isinstance(x, float) or isinstance(y, float)):
        raise TileTypeError(f"{rules.op_label(op)} needs integer constants, got {x!r} and {y!r}")
    try:
        result = _FOLD[op](x, y)
    except ZeroDivisionError as error:
        raise rules.constant_division_error(error, op, x, y) from None
    if isinstance(result, bool) and op not in rules.COMPARISONS and op not in rules.BITWISE:
        result = int(result)
    return loose(result)


def _integer_pow(a, b):
    """Integer power with C semantics for negative exponents (0 unless the base is +-1)."""
    negative = b < 0
    with np.errstate(all="ignore"):
        positive = np.power(a, np.where(negative, 0, b).astype(a.dtype))
    one = np.ones_like(a)
    odd = (np.abs(b.astype(np.int64)) % 2) == 1
    special = np.where(a == 1, one, np.where(a == -1 if a.dtype.kind == "i" else False,
                                             np.where(odd, -one, one), np.zeros_like(a)))
    return np.where(negative, special, positive)


def order_zeros(op, a, b, out):
    """``out`` (``minimum``/``maximum`` of float arrays ``a`` and ``b``) with -0.0 counted
    below +0.0 where both operands are zeros, as IEEE 754-2019 and the GPU's ``min``/``max``
    do (NumPy returns either zero).

    >>> import numpy as np
    >>> from numba_tile.language.elementwise import order_zeros
    >>> a, b = np.array([0.0, -0.0]), np.array([-0.0, 0.0])
    >>> order_zeros("maximum", a, b, np.fmax(a, b)), order_zeros("minimum", a, b, np.fmin(a, b))
    (array([0., 0.]), array([-0., -0.]))
    """
    both_zero = (a == 0) & (b == 0)
    if not np.any(both_zero):
        return out
    negative = np.signbit(a) & np.signbit(b) if op == "maximum" else \
        np.signbit(a) | np.signbit(b)
    return np.where(both_zero, np.where(negative, -0.0, 0.0), out)


def _compute_binary(op, a, b, operand, result, rounding_mode, flush_to_zero, propagate_nan):
    with np.errstate(all="ignore"):
        if op in rules.COMPARISONS:
            if operand.is_float:
                a, b = a.astype(np.float64), b.astype(np.float64)
            return _NUMPY[op](a, b)
        if op in rules.MINMAX:
            if operand.is_float:
                fn = {("minimum", False): np.fmin, ("minimum", True): np.minimum,
                      ("maximum", False): np.fmax, ("maximum", True): np.maximum}
                wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
                if flush_to_zero:
                    wide_a = flush_subnormals(wide_a, result)
                    wide_b = flush_subnormals(wide_b, result)
                out = fn[(op, bool(propagate_nan))](wide_a, wide_b)
                return round_float(order_zeros(op, wide_a, wide_b, out), result)
            return (np.minimum if op == "minimum" else np.maximum)(a, b)
        if result.is_float:
            wide = wide_type(result, rounding_mode)
            wide_a, wide_b = a.astype(wide), b.astype(wide)
            if flush_to_zero:
                wide_a, wide_b = flush_subnormals(wide_a, result), flush_subnormals(wide_b, result)
            if op == "floordiv":  # cuTile's: the quotient in the result dtype, floored
                return np.floor(round_float(wide_a / wide_b, result))
            out = round_float(_NUMPY[op](wide_a, wide_b), result, rounding_mode)
            return flush_subnormals(out, result) if flush_to_zero else out
        if op == "pow":
            return _integer_pow(a, b)
        if op in ("floordiv", "mod"):
            # integer division by zero is undefined on the GPU; NumPy's 0 keeps it quiet here
            return _NUMPY[op](a, b)
        if op in rules.SHIFTS:
            bits = operand.bitwidth
            shift = b.astype(np.int64)
            out = _NUMPY[op](a, np.clip(shift, 0, bits - 1).astype(a.dtype))
            too_far = (shift >= bits) | (shift < 0)
            if op == "bitwise_rshift" and operand.is_signed:
                return np.where(too_far, np.where(a < 0, -1, 0).astype(a.dtype), out)
            return np.where(too_far, np.zeros_like(a), out)
        return _NUMPY[op](a, b)


def binary(op, x, y, *, rounding_mode=None, flush_to_zero=False, propagate_nan=False):
    """Apply a binary elementwise op by name with broadcasting and promotion."""
    if is_python_number(x) and is_python_number(y):
        return _fold(op, x, y)
    xo, yo = as_operand(x, "the left operand"), as_operand(y, "the right operand")
    spec, operand = rules.binary(op, xo, yo)
    rules.check_flags(op, flush_to_zero=flush_to_zero, propagate_nan=propagate_nan)
    rules.check_float_options(op, spec.dtype, rounding_mode, flush_to_zero)
    a, b = values_as(xo, operand), values_as(yo, operand)
    out = _compute_binary(op, a, b, operand, spec.dtype, rounding_mode, flush_to_zero,
                          propagate_nan)
    return Tile(spec.dtype, np.broadcast_to(out, spec.shape), spec.constant)


def _binary_op(op, doc_example, extra_doc=""):
    def fn(x, y, /, *, rounding_mode=None, flush_to_zero=False):
        return binary(op, x, y, rounding_mode=rounding_mode, flush_to_zero=flush_to_zero)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = _doc(op, extra_doc, doc_example)
    return tile_op(fn)


def _doc(op, summary, example):
    return f"""{summary}

    Operands broadcast together and promote to their common dtype (the seed's table).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     x = ct.arange(4, dtype=ct.int32) + 1
    ...     print({example[0]})
    >>> ct.launch(0, (1,), show, ())
    {example[1]}
    """


add = _binary_op("add", ("ct.add(x, 2)", "[3, 4, 5, 6]"), "``x + y``.")
sub = _binary_op("sub", ("ct.sub(x, 1)", "[0, 1, 2, 3]"), "``x - y``.")
mul = _binary_op("mul", ("ct.mul(x, x)", "[1, 4, 9, 16]"), "``x * y``.")
truediv = _binary_op("truediv", ("ct.truediv(x, 2)", "[0.5, 1.0, 1.5, 2.0]"),
                     "``x / y``; integer operands give float32 (cuTile's default float type).")


def _plain_binary(op, summary, example, *, minmax=False):
    if minmax:
        def fn(x, y, /, *, flush_to_zero=False, propagate_nan=False):
            return binary(op, x, y, flush_to_zero=flush_to_zero, propagate_nan=propagate_nan)
    elif op == "atan2":  # (cuTile's names of its operands)
        def fn(x1, x2, /):
            return binary(op, x1, x2)
    else:
        def fn(x, y, /):
            return binary(op, x, y)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = _doc(op, summary, example)
    return tile_op(fn)


floordiv = _plain_binary("floordiv", "``x // y``, rounding toward negative infinity.",
                         ("ct.floordiv(x, 3)", "[0, 0, 1, 1]"))
mod = _plain_binary("mod", "``x % y``, with the sign of ``y`` (Python's rule).",
                    ("ct.mod(x, 3)", "[1, 2, 0, 1]"))
@tile_op
def divmod(x, y, /):
    """``(x // y, x % y)``, as Python's ``divmod`` (which works on tiles too).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     q, r = ct.divmod(ct.arange(4, dtype=ct.int32) + 5, 3)
    ...     print(q, r)
    >>> ct.launch(0, (1,), show, ())
    [1, 2, 2, 2] [2, 0, 1, 2]
    """
    rules.check_divmod(x, y)
    return floordiv.__tile_op__(x, y), mod.__tile_op__(x, y)


pow = _plain_binary("pow", "``x ** y``.", ("ct.pow(x, 2)", "[1, 4, 9, 16]"))
atan2 = _plain_binary("atan2", "The angle of the point ``(y=x1, x=x2)``, in the quadrant "
                      "their signs give; floating-point only.",
                      ("ct.atan2(x.astype(ct.float32), 1.0)",
                       "[0.785398, 1.10715, 1.24905, 1.32582]"))
minimum = _plain_binary("minimum", "Elementwise minimum; NaN loses unless ``propagate_nan``.",
                        ("ct.minimum(x, 2)", "[1, 2, 2, 2]"), minmax=True)
maximum = _plain_binary("maximum", "Elementwise maximum; NaN loses unless ``propagate_nan``.",
                        ("ct.maximum(x, 2)", "[2, 2, 3, 4]"), minmax=True)
bitwise_and = _plain_binary("bitwise_and", "``x & y`` (integers and bools).",
                            ("ct.bitwise_and(x, 6)", "[0, 2, 2, 4]"))
bitwise_or = _plain_binary("bitwise_or", "``x | y`` (integers and bools).",
                           ("ct.bitwise_or(x, 8)", "[9, 10, 11, 12]"))
bitwise_xor = _plain_binary("bitwise_xor", "``x ^ y`` (integers and bools).",
                            ("ct.bitwise_xor(x, 1)", "[0, 3, 2, 5]"))
bitwise_lshift = _plain_binary("bitwise_lshift", "``x << y`` (integers).",
                               ("ct.bitwise_lshift(x, 2)", "[4, 8, 12, 16]"))
bitwise_rshift = _plain_binary("bitwise_rshift", "``x >> y`` (integers; arithmetic for signed).",
                               ("ct.bitwise_rshift(x, 1)", "[0, 1, 1, 2]"))
greater = _plain_binary("greater", "``x > y`` as a ``bool_`` tile.",
                        ("ct.greater(x, 2)", "[0, 0, 1, 1]"))
greater_equal = _plain_binary("greater_equal", "``x >= y`` as a ``bool_`` tile.",
                              ("ct.greater_equal(x, 2)", "[0, 1, 1, 1]"))
less = _plain_binary("less", "``x < y`` as a ``bool_`` tile.",
                     ("ct.less(x, 2)", "[1, 0, 0, 0]"))
less_equal = _plain_binary("less_equal", "``x <= y`` as a ``bool_`` tile.",
                           ("ct.less_equal(x, 2)", "[1, 1, 0, 0]"))
equal = _plain_binary("equal", "``x == y`` as a ``bool_`` tile.",
                      ("ct.equal(x, 2)", "[0, 1, 0, 0]"))
not_equal = _plain_binary("not_equal", "``x != y`` as a ``bool_`` tile.",
                          ("ct.not_equal(x, 2)", "[1, 0, 1, 1]"))


# -- unary ops ------------------------------------------------------------------------------
_UNARY_NUMPY = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt, "rsqrt": lambda v: 1.0 / np.sqrt(v),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil,
}
_UNARY_FOLD = {
    "exp": math.exp, "exp2": lambda v: 2.0 ** v, "log": math.log, "log2": math.log2,
    "log10": math.log10, "log1p": math.log1p, "expm1": math.expm1, "sqrt": math.sqrt,
    "rsqrt": lambda v: 1.0 / math.sqrt(v), "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan, "sinh": math.sinh,
    "cosh": math.cosh, "tanh": math.tanh, "asinh": math.asinh, "acosh": math.acosh,
    "atanh": math.atanh, "floor": lambda v: float(math.floor(v)),
    "ceil": lambda v: float(math.ceil(v)),
    "isnan": lambda v: isinstance(v, float) and math.isnan(v),
    "isinf": lambda v: isinstance(v, float) and math.isinf(v),
    **{name: function for function, name in operators.UNARY_OPERATORS.items()},
}


def unary(op, x, *, rounding_mode=None, flush_to_zero=False):
    """Apply a unary elementwise op by name."""
    if is_python_number(x):
        if op == "bitwise_not" and isinstance(x, float):
            raise TileTypeError(f"{rules.op_label(op)} needs an integer, got {x!r}")
        try:
            return loose(_UNARY_FOLD[op](x))
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            raise TileValueError(f"{op}({x!r}) in a constant expression: {exc}") from None
    xo = as_operand(x)
    spec = rules.unary(op, xo)
    rules.check_flags(op, flush_to_zero=flush_to_zero)
    rules.check_float_options(op, spec.dtype, rounding_mode, flush_to_zero)
    values = values_as(xo, rules.unary_operand_dtype(op, xo.dtype))
    with np.errstate(all="ignore"):
        if op in _UNARY_NUMPY:
            wide = values.astype(wide_type(spec.dtype, rounding_mode))
            if flush_to_zero:
                wide = flush_subnormals(wide, spec.dtype)
            out = round_float(_UNARY_NUMPY[op](wide), spec.dtype, rounding_mode)
            if flush_to_zero:
                out = flush_subnormals(out, spec.dtype)
        elif op in ("isnan", "isinf"):
            fn = np.isnan if op == "isnan" else np.isinf
            out = fn(values.astype(np.float64)) if xo.dtype.is_float else np.zeros(
                values.shape, bool)
        elif op in ("negative", "abs"):
            out = _NUMPY[op](values) if not xo.dtype.is_float else round_float(
                _NUMPY[op](values.astype(np.float64)), spec.dtype)
        else:  # bitwise_not
            out = _NUMPY[op](values)
    return Tile(spec.dtype, out, spec.constant)


def _unary_op(op, summary, example, *, options=("rounding_mode", "flush_to_zero")):
    if options == ("rounding_mode", "flush_to_zero"):
        def fn(x, /, *, rounding_mode=None, flush_to_zero=False):
            return unary(op, x, rounding_mode=rounding_mode, flush_to_zero=flush_to_zero)
    elif options == ("rounding_mode",):
        def fn(x, /, *, rounding_mode=None):
            return unary(op, x, rounding_mode=rounding_mode)
    elif options == ("flush_to_zero",):
        def fn(x, /, *, flush_to_zero=False):
            return unary(op, x, flush_to_zero=flush_to_zero)
    else:
        def fn(x, /):
            return unary(op, x)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"""{summary}

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     x = ct.arange(4, dtype=ct.float32) * 0.5
    ...     print({example[0]})
    >>> ct.launch(0, (1,), show, ())
    {example[1]}
    """
    return tile_op(fn)


exp = _unary_op("exp", "``e ** x`` (floating-point).", ("ct.exp(x)", "[1.0, 1.64872, 2.71828, 4.48169]"),
                options=("rounding_mode",))
exp2 = _unary_op("exp2", "``2 ** x`` (floating-point).", ("ct.exp2(x)", "[1.0, 1.41421, 2.0, 2.82843]"),
                 options=("flush_to_zero",))
log = _unary_op("log", "Natural logarithm (floating-point).", ("ct.log(x + 1.0)", "[0.0, 0.405465, 0.693147, 0.916291]"),
                options=())
log2 = _unary_op("log2", "Base-2 logarithm (floating-point).", ("ct.log2(x + 1.0)", "[0.0, 0.584962, 1.0, 1.32193]"),
                 options=())
sqrt = _unary_op("sqrt", "Square root (floating-point).", ("ct.sqrt(x)", "[0.0, 0.707107, 1.0, 1.22474]"))
rsqrt = _unary_op("rsqrt", "``1 / sqrt(x)`` (floating-point).", ("ct.rsqrt(x + 1.0)", "[1.0, 0.816497, 0.707107, 0.632456]"),
                  options=("flush_to_zero",))
sin = _unary_op("sin", "Sine (floating-point).", ("ct.sin(x)", "[0.0, 0.479426, 0.841471, 0.997495]"), options=())
cos = _unary_op("cos", "Cosine (floating-point).", ("ct.cos(x)", "[1.0, 0.877583, 0.540302, 0.0707372]"), options=())
tan = _unary_op("tan", "Tangent (floating-point).", ("ct.tan(x)", "[0.0, 0.546302, 1.55741, 14.1014]"), options=())
sinh = _unary_op("sinh", "Hyperbolic sine (floating-point).", ("ct.sinh(x)", "[0.0, 0.521095, 1.1752, 2.12928]"), options=())
cosh = _unary_op("cosh", "Hyperbolic cosine (floating-point).", ("ct.cosh(x)", "[1.0, 1.12763, 1.54308, 2.35241]"), options=())
tanh = _unary_op("tanh", "Hyperbolic tangent (floating-point).", ("ct.tanh(x)", "[0.0, 0.462117, 0.761594, 0.905148]"),
                 options=("rounding_mode",))
floor = _unary_op("floor", "Round down to an integral value (floating-point).", ("ct.floor(x)", "[0.0, 0.0, 1.0, 1.0]"), options=())
ceil = _unary_op("ceil", "Round up to an integral value (floating-point).", ("ct.ceil(x)", "[0.0, 1.0, 1.0, 2.0]"), options=())
abs = _unary_op("abs", "Absolute value.", ("ct.abs(x - 1.0)", "[1.0, 0.5, 0.0, 0.5]"), options=())
negative = _unary_op("negative", "``-x``.", ("ct.negative(x)", "[-0.0, -0.5, -1.0, -1.5]"), options=())
isnan = _unary_op("isnan", "True where ``x`` is NaN.", ("ct.isnan(x / 0.0)", "[1, 0, 0, 0]"), options=())
bitwise_not = _unary_op("bitwise_not", "``~x`` (integers and bools).",
                        ("ct.bitwise_not(x.astype(ct.int32))", "[-1, -1, -2, -2]"), options=())


@tile_op
def where(cond, x, y, /):
    """Choose ``x`` where ``cond`` is true, else ``y`` (broadcast; ``x`` and ``y`` promote).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     x = ct.arange(4, dtype=ct.float32)
    ...     print(ct.where(x > 1.0, x, -1.0))
    >>> ct.launch(0, (1,), show, ())
    [-1.0, -1.0, 2.0, 3.0]
    """
    co, xo, yo = as_operand(cond, "the condition"), as_operand(x), as_operand(y)
    spec, dtype = rules.where(co, xo, yo)
    out = np.where(values_as(co, d.bool_), values_as(xo, dtype), values_as(yo, dtype))
    return Tile(spec.dtype, np.broadcast_to(out, spec.shape), spec.constant)


@tile_op
def astype(x, dtype, /, *, rounding_mode=None):
    """Convert ``x`` to ``dtype``: float to int truncates and saturates, ints wrap.

    A loosely typed constant becomes a strictly typed one.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     x = ct.arange(4, dtype=ct.float32) * 1.5
    ...     print(ct.astype(x, ct.int8), x.astype(ct.float16))
    >>> ct.launch(0, (1,), show, ())
    [0, 1, 3, 4] [0.0, 1.5, 3.0, 4.5]
    """
    dtype = dtype_argument(dtype, "astype")
    if rounding_mode is not None and not isinstance(rounding_mode, RoundingMode):
        raise TileTypeError(f"rounding_mode must be a ct.RoundingMode, got {rounding_mode!r}")
    if is_python_number(x):
        return make_constant(x, dtype)
    xo = as_operand(tile_argument(x, "astype"))
    spec = rules.astype(xo, dtype, rounding_mode)
    return Tile(dtype, convert(xo.values, xo.dtype, dtype, rounding_mode), spec.constant)


# -- the tile methods of these ops ----------------------------------------------------------
@tile_method("astype")
def _tile_astype(self, dtype, *, rounding_mode=None):
    """Convert to another dtype (see :func:`numba_tile.astype`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(t.astype(ct.float16) / 2)
    >>> ct.launch(0, (1,), show, ())
    [[0.0, 0.5], [1.0, 1.5]]
    """
    return self._op(astype)(self, dtype, rounding_mode=rounding_mode)


@tile_method("astype", LooseScalar)
def _loose_astype(self, dtype):
    """The constant as a 0-d tile of ``dtype`` (as ``ct.astype``)."""
    return astype(self, dtype)


def _operator_method(operator, reflected=False):
    """A tile's method for ``operator`` (a :class:`~numba_tile.rules.operators.Operator`):
    its op, the tile on the right where ``reflected``; inside a ``static_iter`` iterable, a
    run-time operand has no value to compute with."""
    op = unchecked(globals()[operator.name])
    if operator.arity == 1:
        def method(self):
            if not self.is_compile_time:
                check_run_time(operator.name)
            return op(self)
        return method

    def method(self, other):
        if not (self.is_compile_time and (not isinstance(other, Tile) or
                                          other.is_compile_time)):
            check_run_time(operator.name)
        return op(other, self) if reflected else op(self, other)
    return method


for _operator in operators.OPERATORS:
    tile_method(_operator.dunder)(_operator_method(_operator))
    if _operator.reflected_dunder:
        tile_method(_operator.reflected_dunder)(_operator_method(_operator, reflected=True))


@tile_method("__divmod__")
def _tile_divmod(self, other):
    return self._op(floordiv)(self, other), self._op(mod)(self, other)


@tile_method("__rdivmod__")
def _tile_rdivmod(self, other):
    return self._op(floordiv)(other, self), self._op(mod)(other, self)


# the public ops, in the order of their definitions
__all__ = [_name for _name, _value in globals().items() if hasattr(_value, "__tile_op__")]
