"""Elementwise ops (spec/API.md section 3) in kernels, checked against NumPy in float64.

Every kernel works on (4, 8) tiles of (8, 8) arrays over a grid of two blocks, so block ``b``
computes rows ``4b .. 4b+3``. Output arrays are poisoned first (NaN for floats, a sentinel for
integers) so that elements a kernel forgot to write show up. Integer and bool results must
match the reference exactly; floating-point results are compared by relative error
(``conftest.relative_error``) with a tolerance of a few units of the result dtype's epsilon.
Result dtypes are checked inside the kernels with ``ct.static_assert``, which works in every
execution mode.
"""

import fractions
import functools
import math
import os

import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error

RM = ct.RoundingMode
SIGNED = [ct.int8, ct.int16, ct.int32, ct.int64]
UNSIGNED = [ct.uint8, ct.uint16, ct.uint32, ct.uint64]
INTS = SIGNED + UNSIGNED
FLOATS = [ct.float16, ct.float32, ct.float64, ct.bfloat16]
NUMERIC = INTS + FLOATS
SHAPE = (8, 8)  # arrays: two (4, 8) tiles along axis 0
TILE = (4, 8)
GRID = (2,)
EPS = {ct.float16: 2.0**-10, ct.bfloat16: 2.0**-7, ct.float32: 2.0**-23, ct.float64: 2.0**-52}
TOL = {dtype: 4 * eps for dtype, eps in EPS.items()}
APPROX_TOL = 2.0**-10  # documented accuracy class of RoundingMode.APPROX functions on the GPU


# -- kernels ---------------------------------------------------------------------------------
def load_block(a):
    """This block's (4, 8) tile of an (8, 8) array."""
    return ct.load(a, index=(ct.bid(0), 0), shape=TILE)


@functools.cache
def unary_kernel(fn):
    @ct.kernel
    def kernel(x, out, RESULT: ct.Constant):
        r = fn(load_block(x))
        ct.static_assert(r.dtype == RESULT, "unexpected result dtype")
        ct.store(out, index=(ct.bid(0), 0), tile=r)
    return kernel


@functools.cache
def binary_kernel(fn):
    @ct.kernel
    def kernel(x, y, out, RESULT: ct.Constant):
        r = fn(load_block(x), load_block(y))
        ct.static_assert(r.dtype == RESULT, "unexpected result dtype")
        ct.static_assert(r.shape == TILE, "unexpected result shape")
        ct.store(out, index=(ct.bid(0), 0), tile=r)
    return kernel


@functools.cache
def broadcast_kernel(fn):
    """fn(column tile (4, 1), row tile (8,)) must broadcast to (4, 8)."""
    @ct.kernel
    def kernel(col, row, out, RESULT: ct.Constant):
        c = ct.load(col, index=(ct.bid(0), 0), shape=(4, 1))
        r = ct.load(row, index=(0,), shape=(8,))
        t = fn(c, r)
        ct.static_assert(t.dtype == RESULT, "unexpected result dtype")
        ct.static_assert(t.shape == (4, 8), "unexpected result shape")
        ct.store(out, index=(ct.bid(0), 0), tile=t)
    return kernel


@functools.cache
def scalar_kernel(fn):
    """fn(tile (4, 8), run-time 0-d tile loaded from s[1])."""
    @ct.kernel
    def kernel(x, s, out, RESULT: ct.Constant):
        v = ct.load(s, index=(1,), shape=())
        ct.static_assert(v.shape == (), "a shape=() load is a scalar")
        t = fn(load_block(x), v)
        ct.static_assert(t.dtype == RESULT, "unexpected result dtype")
        ct.store(out, index=(ct.bid(0), 0), tile=t)
    return kernel


@ct.kernel
def where_kernel(c, x, y, out, RESULT: ct.Constant):
    r = ct.where(load_block(c), load_block(x), load_block(y))
    ct.static_assert(r.dtype == RESULT, "unexpected result dtype")
    ct.store(out, index=(ct.bid(0), 0), tile=r)


@ct.kernel
def divmod_kernel(x, y, q, r):
    quotient, remainder = divmod(load_block(x), load_block(y))
    ct.store(q, index=(ct.bid(0), 0), tile=quotient)
    ct.store(r, index=(ct.bid(0), 0), tile=remainder)


# -- data ------------------------------------------------------------------------------------
def npdt(dtype):
    return np.dtype(dtype.numpy)


def int_limit(dtype):
    """Largest magnitude used for integer inputs: float64 represents everything exactly."""
    return min(int(np.iinfo(npdt(dtype)).max), 2**50)


def rand(rng, dtype, low, high, *, signed=True, shape=SHAPE):
    """Random nonzero values of ``dtype`` with magnitude in [low, high], random signs."""
    if dtype is ct.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.is_integral:
        mag = rng.integers(low, min(high, int(np.iinfo(npdt(dtype)).max)), size=shape,
                           endpoint=True)
    else:
        mag = rng.uniform(low, high, size=shape)
    if signed and dtype.is_signed:
        mag = mag * rng.choice([-1, 1], size=shape)
    return mag.astype(npdt(dtype))


def rand_bits(rng, dtype, shape=SHAPE):
    """Random nonzero integers over the dtype's whole range (bool: random)."""
    if dtype is ct.bool_:
        return rand(rng, dtype, 0, 1)
    info = np.iinfo(npdt(dtype))
    v = rng.integers(info.min, info.max, size=shape, dtype=npdt(dtype), endpoint=True)
    return np.where(v == 0, npdt(dtype).type(1), v)


def poisoned(dtype, shape=SHAPE):
    """An output array full of a value no result here has; bool results go to int8 arrays."""
    if dtype is ct.bool_:
        dtype = ct.int8
    if dtype.is_float:
        return np.full(shape, np.nan, npdt(dtype))
    return np.full(shape, np.iinfo(npdt(dtype)).max - 3, npdt(dtype))


def f64(a):
    return np.asarray(a).astype(np.float64)


def check(out, expected, dtype, tol=None):
    """Exact for integer/bool results, relative error within ``tol`` for float results."""
    if dtype.is_float:
        err = relative_error(out, expected)
        limit = TOL[dtype] if tol is None else tol
        assert err <= limit, f"relative error {err:.3g} > {limit:.3g}"
    else:
        expected = np.asarray(expected)
        if expected.dtype == bool:
            expected = expected.astype(np.int8)
        np.testing.assert_array_equal(out, expected)


def launch(run_kernel, kernel, inputs, result_dtype, shape=SHAPE):
    out = poisoned(result_dtype, shape)
    run_kernel(kernel, GRID, (*inputs, out, result_dtype))
    return out


def cases(table):
    """pytest params named by their first field (a label)."""
    return [pytest.param(*row, id=row[0]) for row in table]


# -- op tables -------------------------------------------------------------------------------
ARITH = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "minimum", "maximum"]
COMPARISONS = ["greater", "greater_equal", "less", "less_equal", "equal", "not_equal"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]
SHIFTS = ["bitwise_lshift", "bitwise_rshift"]
FLOAT_REF = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.mod, "pow": np.power, "atan2": np.arctan2,
    "minimum": np.minimum, "maximum": np.maximum, "greater": np.greater,
    "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal,
    "equal": np.equal, "not_equal": np.not_equal,
}
INT_REF = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
           "bitwise_xor": np.bitwise_xor, "bitwise_lshift": np.left_shift,
           "bitwise_rshift": np.right_shift}


def binary_operands(op, dtype, rng):
    """Random nonzero (x, y) for ``op``: no overflow, exact float64 reference for integers."""
    if op in BITWISE:
        return rand_bits(rng, dtype), rand_bits(rng, dtype)
    if op in SHIFTS:
        return rand_bits(rng, dtype), rand(rng, dtype, 1, dtype.bitwidth - 1, signed=False)
    if dtype is ct.bool_:
        return rand(rng, dtype, 0, 1), rand(rng, dtype, 0, 1)
    if dtype.is_float:
        if op in ("floordiv", "mod"):
            return rand(rng, dtype, 0.5, 16), rand(rng, dtype, 0.5, 4)
        if op == "pow":
            return rand(rng, dtype, 0.5, 2, signed=False), rand(rng, dtype, 0.5, 3)
        x, y = rand(rng, dtype, 0.5, 4), rand(rng, dtype, 0.5, 4)
    else:
        m = int_limit(dtype)
        if op == "pow":
            return rand(rng, dtype, 1, 5), rand(rng, dtype, 1, 3, signed=False)
        xr, yr = {"add": ((1, m // 2),) * 2, "sub": ((1, m // 2),) * 2,
                  "mul": ((1, min(math.isqrt(m), 2**25)),) * 2,
                  "truediv": ((1, m), (1, min(m, 1000))), "floordiv": ((1, m), (1, min(m, 1000))),
                  "mod": ((1, m), (1, min(m, 1000)))}.get(op, ((1, m), (1, m)))
        x, y = rand(rng, dtype, *xr), rand(rng, dtype, *yr)
        if op == "sub" and not dtype.is_signed:
            x, y = np.maximum(x, y), np.minimum(x, y)
    if op in COMPARISONS:  # make some pairs equal
        y = np.where(rng.integers(0, 2, size=SHAPE).astype(bool), x, y)
    return x, y


def binary_result(op, dtype):
    if op in COMPARISONS:
        return ct.bool_
    if op == "truediv" and not dtype.is_float:
        return ct.float32  # (cuTile's default float type, whatever the integer's width)
    return dtype


def binary_expected(op, x, y):
    if op in INT_REF:
        return INT_REF[op](x, y.astype(x.dtype))
    if x.dtype == bool and op in COMPARISONS:
        return FLOAT_REF[op](x, y)
    with np.errstate(all="ignore"):
        if op == "floordiv" and not np.issubdtype(x.dtype, np.integer) and x.dtype != bool:
            # cuTile's: the quotient rounded to the operands' dtype, floored
            return np.floor((f64(x) / f64(y)).astype(x.dtype).astype(np.float64))
        return FLOAT_REF[op](f64(x), f64(y))


@pytest.mark.parametrize("dtype", [ct.float32, ct.float16, ct.bfloat16, ct.float64], ids=str)
def test_float_floor_division_floors_the_rounded_quotient(run_kernel, dtype):
    """As cuTile: ``x // y`` of floats is ``floor(x / y)`` with the quotient rounded to the
    dtype (``1.0 // 0.1`` is 10, where Python's and NumPy's is 9)."""
    x = np.asarray([1.0, 7.0, -7.0, 5.98] * 16, npdt(dtype)).reshape(SHAPE)
    y = np.asarray([0.1, 2.34, 2.34, 2.0] * 16, npdt(dtype)).reshape(SHAPE)
    out = launch(run_kernel, binary_kernel(lambda a, b: a // b), (x, y), dtype)
    expected = np.floor((f64(x) / f64(y)).astype(npdt(dtype)).astype(np.float64))
    np.testing.assert_array_equal(f64(out), expected)
    assert f64(out)[0, 0] == 10.0


def check_binary(run_kernel, rng, fn, op, dtype):
    """Run ``fn`` (an op or an operator lambda standing for ``op``) on random operands."""
    x, y = binary_operands(op, dtype, rng)
    result = binary_result(op, dtype)
    out = launch(run_kernel, binary_kernel(fn), (x, y), result)
    check(out, binary_expected(op, x, y), result)


# -- arithmetic, comparison and bitwise ops --------------------------------------------------
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("op", ARITH)
def test_arithmetic(run_kernel, rng, op, dtype):
    check_binary(run_kernel, rng, getattr(ct, op), op, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_atan2(run_kernel, rng, dtype):
    check_binary(run_kernel, rng, ct.atan2, "atan2", dtype)


@pytest.mark.parametrize("dtype", NUMERIC + [ct.bool_], ids=str)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison(run_kernel, rng, op, dtype):
    check_binary(run_kernel, rng, getattr(ct, op), op, dtype)


def _logical_not(t):
    return not t


@pytest.mark.parametrize("dtype", [ct.float32, ct.int32, ct.bool_], ids=str)
def test_not_of_a_tile_is_elementwise(run_kernel, rng, dtype):
    """``not t`` of a tile of several elements: ``t == 0``, element by element, as in
    cuTile (a condition on such a tile is an error)."""
    x = rand(rng, dtype, 0, 3)
    if dtype.is_float:
        x[::2, ::3] = 0  # (zeros to negate)
    out = launch(run_kernel, unary_kernel(_logical_not), (x,), ct.bool_)
    check(out, np.asarray(x) == 0, ct.bool_)


@pytest.mark.parametrize("dtype", [ct.float16, ct.float32, ct.bfloat16], ids=str)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison_with_nan(run_kernel, rng, op, dtype):
    x, y = rand(rng, dtype, 0.5, 4), rand(rng, dtype, 0.5, 4)
    x[0, :3] = np.nan
    y[5, 2:6] = np.nan
    out = launch(run_kernel, binary_kernel(getattr(ct, op)), (x, y), ct.bool_)
    check(out, binary_expected(op, x, y), ct.bool_)


@pytest.mark.parametrize("dtype", INTS + [ct.bool_], ids=str)
@pytest.mark.parametrize("op", BITWISE)
def test_bitwise(run_kernel, rng, op, dtype):
    check_binary(run_kernel, rng, getattr(ct, op), op, dtype)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("op", SHIFTS)
def test_shift(run_kernel, rng, op, dtype):
    """Signed right shifts are arithmetic; left shifts drop the bits shifted out."""
    check_binary(run_kernel, rng, getattr(ct, op), op, dtype)


@pytest.mark.parametrize("dtype", INTS + [ct.bool_], ids=str)
def test_bitwise_not(run_kernel, rng, dtype):
    x = rand_bits(rng, dtype)
    out = launch(run_kernel, unary_kernel(ct.bitwise_not), (x,), dtype)
    check(out, np.invert(x), dtype)


@pytest.mark.parametrize("propagate_nan", [False, True])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op", ["minimum", "maximum"])
def test_minmax_nan(run_kernel, rng, op, dtype, propagate_nan):
    """NaN loses against a number by default and wins with propagate_nan=True."""
    x, y = rand(rng, dtype, 0.5, 4), rand(rng, dtype, 0.5, 4)
    x[0, :4] = np.nan   # x NaN, y NaN and both NaN, in both blocks
    y[0, 2:6] = np.nan
    x[6, 1] = y[7, 3] = np.nan
    fn = {("minimum", False): np.fmin, ("maximum", False): np.fmax,
          ("minimum", True): np.minimum, ("maximum", True): np.maximum}[(op, propagate_nan)]
    kernel = binary_kernel(minmax_lambda(op, propagate_nan))
    out = launch(run_kernel, kernel, (x, y), dtype)
    check(out, fn(f64(x), f64(y)), dtype)


@functools.cache
def minmax_lambda(op, propagate_nan):
    op = getattr(ct, op)
    return lambda a, b: op(a, b, propagate_nan=propagate_nan)


# -- unary ops -------------------------------------------------------------------------------
UNARY = {  # op: (reference, input interval)
    "exp": (np.exp, (-4, 4)), "exp2": (np.exp2, (-4, 4)), "log": (np.log, (0.1, 10)),
    "log2": (np.log2, (0.1, 10)), "sqrt": (np.sqrt, (0.1, 10)),
    "rsqrt": (lambda v: 1 / np.sqrt(v), (0.1, 10)), "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)), "tan": (np.tan, (-1.4, 1.4)), "sinh": (np.sinh, (-3, 3)),
    "cosh": (np.cosh, (-3, 3)), "tanh": (np.tanh, (-3, 3)), "floor": (np.floor, (-10, 10)),
    "ceil": (np.ceil, (-10, 10)),
}


def interval(rng, dtype, low, high):
    v = rng.uniform(low, high, size=SHAPE)
    return np.where(np.abs(v) < 0.05, 0.5, v).astype(npdt(dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_math(run_kernel, rng, op, dtype):
    ref, (low, high) = UNARY[op]
    x = interval(rng, dtype, low, high)
    out = launch(run_kernel, unary_kernel(getattr(ct, op)), (x,), dtype)
    check(out, ref(f64(x)), dtype)


@pytest.mark.parametrize("op", ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos",
                                "tan", "sinh", "cosh", "tanh"])
@pytest.mark.parametrize("dtype", [ct.int32, ct.uint8, ct.int16, ct.int64, ct.bool_], ids=str)
def test_unary_math_of_integer_tile_computes_in_float32(run_kernel, rng, op, dtype):
    """As cuTile: integers and bools are converted to float32, its default float type,
    whatever their width."""
    ref, (low, high) = UNARY[op]
    x = rng.integers(max(math.ceil(low), 1), math.floor(high) + 1, SHAPE).astype(npdt(dtype))
    out = launch(run_kernel, unary_kernel(getattr(ct, op)), (x,), ct.float32)
    check(out, ref(f64(x.astype(np.float32))), ct.float32)


@pytest.mark.parametrize("op", ["floor", "ceil"])
@pytest.mark.parametrize("dtype,message", [(ct.int32, "Integer inputs are not supported"),
                                           (ct.bool_, "Boolean inputs are not supported")],
                         ids=str)
def test_floor_and_ceil_take_floats_alone(run_kernel, op, dtype, message):
    """As cuTile: floor and ceil of an integer or bool tile are errors, in its words."""
    x = np.ones(SHAPE, npdt(dtype))
    with pytest.raises(ct.TileTypeError, match=message):
        launch(run_kernel, unary_kernel(getattr(ct, op)), (x,), ct.float32)


def test_negative_of_a_bool_tile_is_an_int32(run_kernel, rng):
    """As cuTile: ``-t`` of a bool tile negates it as an int32 (True is -1)."""
    x = rng.integers(0, 2, SHAPE).astype(bool)
    out = launch(run_kernel, unary_kernel(ct.negative), (x,), ct.int32)
    check(out, -x.astype(np.int32), ct.int32)


@pytest.mark.parametrize("op,dtype", [(op, dtype) for op in ["abs", "negative"]
                                      for dtype in SIGNED + FLOATS + UNSIGNED * (op == "abs")],
                         ids=str)
def test_abs_negative(run_kernel, rng, op, dtype):
    """abs and negative (negating unsigned integers is left out: the spec does not say)."""
    x = rand(rng, dtype, 1, 4) if dtype.is_float else rand(rng, dtype, 1, int_limit(dtype))
    out = launch(run_kernel, unary_kernel(getattr(ct, op)), (x,), dtype)
    check(out, {"abs": np.abs, "negative": np.negative}[op](f64(x)), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_isnan(run_kernel, rng, dtype):
    x = rand(rng, dtype, 0.5, 4)
    x[0, ::3] = np.nan
    x[5, 1:4] = np.nan
    x[7, 7] = np.inf
    out = launch(run_kernel, unary_kernel(ct.isnan), (x,), ct.bool_)
    check(out, np.isnan(f64(x)), ct.bool_)


# -- Python operators ------------------------------------------------------------------------
OPERATORS = [  # (label, tile-code lambda, the op it stands for, dtypes)
    ("x + y", lambda a, b: a + b, "add", "num"), ("x - y", lambda a, b: a - b, "sub", "num"),
    ("x * y", lambda a, b: a * b, "mul", "num"),
    ("x / y", lambda a, b: a / b, "truediv", "num"),
    ("x // y", lambda a, b: a // b, "floordiv", "num"),
    ("x % y", lambda a, b: a % b, "mod", "num"), ("x ** y", lambda a, b: a ** b, "pow", "num"),
    ("x > y", lambda a, b: a > b, "greater", "num"),
    ("x >= y", lambda a, b: a >= b, "greater_equal", "num"),
    ("x < y", lambda a, b: a < b, "less", "num"),
    ("x <= y", lambda a, b: a <= b, "less_equal", "num"),
    ("x == y", lambda a, b: a == b, "equal", "num"),
    ("x != y", lambda a, b: a != b, "not_equal", "num"),
    ("min(x, y)", lambda a, b: min(a, b), "minimum", "num"),
    ("max(x, y)", lambda a, b: max(a, b), "maximum", "num"),
    ("x & y", lambda a, b: a & b, "bitwise_and", "int"),
    ("x | y", lambda a, b: a | b, "bitwise_or", "int"),
    ("x ^ y", lambda a, b: a ^ b, "bitwise_xor", "int"),
    ("x << y", lambda a, b: a << b, "bitwise_lshift", "int"),
    ("x >> y", lambda a, b: a >> b, "bitwise_rshift", "int"),
]
OPERATOR_DTYPES = {"num": [ct.int32, ct.uint16, ct.float32, ct.float16],
                   "int": [ct.int32, ct.uint8, ct.int64]}


@pytest.mark.parametrize("label,fn,op,dtype", [
    pytest.param(label, fn, op, dtype, id=f"{label}-{dtype}")
    for label, fn, op, kinds in OPERATORS for dtype in OPERATOR_DTYPES[kinds]])
def test_binary_operator(run_kernel, rng, label, fn, op, dtype):
    check_binary(run_kernel, rng, fn, op, dtype)


UNARY_OPERATORS = [  # (label, tile-code lambda, reference, dtypes)
    ("-x", lambda a: -a, np.negative, [ct.int8, ct.int32, ct.float32, ct.bfloat16]),
    ("abs(x)", lambda a: abs(a), np.abs, [ct.int16, ct.int64, ct.float16, ct.float64]),
    ("~x", lambda a: ~a, np.invert, [ct.int32, ct.uint16, ct.bool_]),
]


@pytest.mark.parametrize("label,fn,ref,dtype", [
    pytest.param(label, fn, ref, dtype, id=f"{label}-{dtype}")
    for label, fn, ref, dtypes in UNARY_OPERATORS for dtype in dtypes])
def test_unary_operator(run_kernel, rng, label, fn, ref, dtype):
    x = rand_bits(rng, dtype) if label == "~x" else (
        rand(rng, dtype, 0.5, 4) if dtype.is_float else rand(rng, dtype, 1, int_limit(dtype)))
    out = launch(run_kernel, unary_kernel(fn), (x,), dtype)
    check(out, ref(x) if label == "~x" else ref(f64(x)), dtype)


CONSTANT_OPERATORS = [  # (label, tile-code lambda, reference on float64, int32 result, float32)
    ("2 - x", lambda a: 2 - a, lambda x: 2 - x, ct.int32),
    ("3 * x", lambda a: 3 * a, lambda x: 3 * x, ct.int32),
    ("x ** 2", lambda a: a ** 2, lambda x: x ** 2, ct.int32),
    ("1 / x", lambda a: 1 / a, lambda x: 1 / x, ct.float32),
    ("100 // x", lambda a: 100 // a, lambda x: np.floor_divide(100, x), ct.int32),
    ("100 % x", lambda a: 100 % a, lambda x: np.mod(100, x), ct.int32),
    ("x > 3", lambda a: a > 3, lambda x: x > 3, ct.bool_),
    ("5 <= x", lambda a: 5 <= a, lambda x: 5 <= x, ct.bool_),
]


@pytest.mark.parametrize("dtype", [ct.int32, ct.float32], ids=str)
@pytest.mark.parametrize("label,fn,ref,int_result", cases(CONSTANT_OPERATORS))
def test_operator_with_constant(run_kernel, rng, label, fn, ref, int_result, dtype):
    """Loose constants on either side take the tile's dtype (or float32 for int / int)."""
    x = rand(rng, dtype, 1, 1000) if dtype.is_integral else rand(rng, dtype, 0.5, 8)
    result = dtype if int_result is ct.int32 else int_result
    out = launch(run_kernel, unary_kernel(fn), (x,), result)
    check(out, ref(f64(x)), result)


@pytest.mark.parametrize("dtype", [ct.int32, ct.int8], ids=str)
def test_divmod(run_kernel, rng, dtype):
    """divmod(x, y) is (x // y, x % y): floor division, remainder with the sign of y."""
    x, y = binary_operands("mod", dtype, rng)
    q, r = poisoned(dtype), poisoned(dtype)
    run_kernel(divmod_kernel, GRID, (x, y, q, r))
    check(q, np.floor_divide(f64(x), f64(y)), dtype)
    check(r, np.mod(f64(x), f64(y)), dtype)


def test_divmod_of_floats_is_refused(run_kernel, rng):
    """cuTile's divmod takes integers only (``//`` and ``%`` of floats remain)."""
    x, y = binary_operands("mod", ct.float32, rng)
    with pytest.raises(ct.TileTypeError, match=r"divmod\(\) is not implemented for floating "
                                               r"point values"):
        run_kernel(divmod_kernel, GRID, (x, y, poisoned(ct.float32), poisoned(ct.float32)))


# -- broadcasting and promotion --------------------------------------------------------------
BROADCAST_OPS = [("add", ct.add), ("x * y", lambda a, b: a * b), ("maximum", ct.maximum),
                 ("greater", ct.greater), ("where", lambda a, b: ct.where(a > b, a, b))]


@pytest.mark.parametrize("dtype", [ct.int16, ct.float32], ids=str)
@pytest.mark.parametrize("name,fn", cases(BROADCAST_OPS))
def test_broadcast_column_with_row(run_kernel, rng, name, fn, dtype):
    """(4, 1) with (8,) gives (4, 8), in both blocks."""
    col = rand(rng, dtype, 1, 100, shape=(8, 1))
    row = rand(rng, dtype, 1, 100, shape=(8,))
    a, b = np.broadcast_arrays(f64(col), f64(row))
    expected = {"add": a + b, "x * y": a * b, "maximum": np.maximum(a, b), "greater": a > b,
                "where": np.where(a > b, a, b)}[name]
    result = ct.bool_ if name == "greater" else dtype
    out = launch(run_kernel, broadcast_kernel(fn), (col, row), result)
    check(out, expected, result)


SCALAR_CASES = [  # (tile dtype, scalar dtype, result dtype): typed scalars follow the table
    (ct.int8, ct.int16, ct.int16), (ct.float16, ct.float32, ct.float32),
    (ct.int32, ct.float16, ct.float16), (ct.float32, ct.int64, ct.float32)]


@pytest.mark.parametrize("xd,sd,result", SCALAR_CASES, ids=str)
def test_broadcast_runtime_scalar(run_kernel, rng, xd, sd, result):
    x, s = rand(rng, xd, 1, 50), rand(rng, sd, 1, 50, shape=(4,))
    out = launch(run_kernel, scalar_kernel(lambda a, v: a + v), (x, s), result)
    check(out, f64(x) + f64(s[1]), result)


MIXED = [  # (x dtype, y dtype, common dtype) from the seed's table
    (ct.int8, ct.int16, ct.int16), (ct.int16, ct.int64, ct.int64),
    (ct.uint8, ct.uint32, ct.uint32), (ct.uint16, ct.uint64, ct.uint64),
    (ct.bool_, ct.int8, ct.int8), (ct.bool_, ct.uint16, ct.uint16),
    (ct.bool_, ct.float16, ct.float16), (ct.bool_, ct.bfloat16, ct.bfloat16),
    (ct.int8, ct.float16, ct.float16), (ct.int64, ct.float16, ct.float16),
    (ct.int64, ct.float32, ct.float32), (ct.uint32, ct.bfloat16, ct.bfloat16),
    (ct.uint64, ct.float64, ct.float64), (ct.float16, ct.float32, ct.float32),
    (ct.bfloat16, ct.float32, ct.float32), (ct.float16, ct.float64, ct.float64),
    (ct.bfloat16, ct.float64, ct.float64), (ct.int32, ct.int32, ct.int32),
]


@pytest.mark.parametrize("swap", [False, True], ids=["xy", "yx"])
@pytest.mark.parametrize("xd,yd,result", MIXED, ids=str)
@pytest.mark.parametrize("op", ["add", "mul"])
def test_promotion(run_kernel, rng, op, xd, yd, result, swap):
    x, y = rand(rng, xd, 1, 30), rand(rng, yd, 1, 30)
    if swap:
        x, y = y, x
    out = launch(run_kernel, binary_kernel(getattr(ct, op)), (x, y), result)
    check(out, FLOAT_REF[op](f64(x), f64(y)), result)


@pytest.mark.parametrize("dtype", [ct.int8, ct.int16, ct.int32, ct.uint8, ct.uint32], ids=str)
def test_integer_truediv_gives_float32(run_kernel, rng, dtype):
    """int / int is floating-point: float32 for integers up to 32 bits."""
    x, y = rand(rng, dtype, 1, 100), rand(rng, dtype, 1, 7)
    out = launch(run_kernel, binary_kernel(lambda a, b: a / b), (x, y), ct.float32)
    check(out, f64(x) / f64(y), ct.float32)


ERR_PAIRS = [(ct.uint8, ct.int8), (ct.int32, ct.uint32), (ct.uint64, ct.int64),
             (ct.uint16, ct.int8), (ct.float16, ct.bfloat16), (ct.tfloat32, ct.float32),
             (ct.float8_e4m3fn, ct.float16), (ct.float8_e5m2, ct.int32)]


@functools.cache
def converted_add(xd, yd):
    return lambda a, b: a.astype(xd) + b.astype(yd)


@pytest.mark.parametrize("swap", [False, True], ids=["xy", "yx"])
@pytest.mark.parametrize("xd,yd", ERR_PAIRS, ids=str)
def test_promotion_error(run_kernel, xd, yd, swap):
    if swap:
        xd, yd = yd, xd
    x = np.ones(SHAPE, np.float32)
    with pytest.raises(ct.TileTypeError):
        launch(run_kernel, binary_kernel(converted_add(xd, yd)), (x, x), ct.float32)


@pytest.mark.parametrize("fn", [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b,
                                lambda a, b: a << b, lambda a, b: a >> b,
                                lambda a, b: ~a, ct.bitwise_and, ct.bitwise_rshift],
                         ids=["&", "|", "^", "<<", ">>", "~", "bitwise_and", "bitwise_rshift"])
@pytest.mark.parametrize("dtype", [ct.float32, ct.float64], ids=str)
def test_bitwise_rejects_floats(run_kernel, fn, dtype):
    x = np.ones(SHAPE, npdt(dtype))
    with pytest.raises(ct.TileTypeError):
        launch(run_kernel, binary_kernel(fn), (x, x), dtype)


# -- loosely typed and strictly typed constants ----------------------------------------------
LOOSE = [  # (label, tile dtype, tile-code lambda, reference on float64, result dtype)
    ("int8 + 5", ct.int8, lambda t: t + 5, lambda x: x + 5, ct.int8),
    ("uint8 + 5", ct.uint8, lambda t: t + 5, lambda x: x + 5, ct.uint8),
    ("int16 + 1.5", ct.int16, lambda t: t + 1.5, lambda x: x + 1.5, ct.float32),
    ("int64 * 0.5", ct.int64, lambda t: t * 0.5, lambda x: x * 0.5, ct.float32),
    ("float16 + 1.5", ct.float16, lambda t: t + 1.5, lambda x: x + 1.5, ct.float16),
    ("bfloat16 * 2", ct.bfloat16, lambda t: t * 2, lambda x: x * 2, ct.bfloat16),
    ("float64 - 3", ct.float64, lambda t: t - 3, lambda x: x - 3, ct.float64),
    ("bool + 2", ct.bool_, lambda t: t + 2, lambda x: x + 2, ct.int32),
    ("bool + 1.5", ct.bool_, lambda t: t + 1.5, lambda x: x + 1.5, ct.float32),
    ("int64 + 2**40", ct.int64, lambda t: t + 2**40, lambda x: x + 2**40, ct.int64),
    ("uint64 + 2**40", ct.uint64, lambda t: t + 2**40, lambda x: x + 2**40, ct.uint64),
    ("int8 + (5 + 7)", ct.int8, lambda t: t + (5 + 7), lambda x: x + 12, ct.int8),
    ("int8 + folded big", ct.int8, lambda t: t + ((1 << 40) - (1 << 40) + 3), lambda x: x + 3,
     ct.int8),
    ("int16 + (5 + 3.0)", ct.int16, lambda t: t + (5 + 3.0), lambda x: x + 8, ct.float32),
    ("int8 + (int16(5) + 2)", ct.int8, lambda t: t + (ct.int16(5) + 2), lambda x: x + 7,
     ct.int16),
    ("float16 + float32(0.5)", ct.float16, lambda t: t + ct.float32(0.5), lambda x: x + 0.5,
     ct.float32),
    ("uint8 + uint16(300)", ct.uint8, lambda t: t + ct.uint16(300), lambda x: x + 300,
     ct.uint16),
]


@pytest.mark.parametrize("label,dtype,fn,ref,result", cases(LOOSE))
def test_constant_promotion(run_kernel, rng, label, dtype, fn, ref, result):
    """A loose constant takes the typed operand's dtype within one category (and must fit);
    a strictly typed constant (ct.int16(5)) promotes by the table like any tile."""
    x = rand(rng, dtype, 1, 50, signed=False)
    out = launch(run_kernel, unary_kernel(fn), (x,), result)
    check(out, ref(f64(x)), result)


@pytest.mark.parametrize("label,dtype,fn", cases([
    ("int8 + 300", ct.int8, lambda t: t + 300),
    ("int8 + (100 + 100)", ct.int8, lambda t: t + (100 + 100)),
    ("uint8 + (-1)", ct.uint8, lambda t: t + (-1)),
    ("int32 + 2**40", ct.int32, lambda t: t + 2**40),
    ("uint32 * 2**32", ct.uint32, lambda t: t * 2**32),
    ("int16(5) + 40000", ct.int16, lambda t: t + (ct.int16(5) + 40000)),
    ("int16 tile < 70000", ct.int16, lambda t: t < 70000),
]))
def test_constant_out_of_range(run_kernel, label, dtype, fn):
    x = np.ones(SHAPE, npdt(dtype))
    with pytest.raises(ct.TileValueError, match="out of range"):
        launch(run_kernel, unary_kernel(fn), (x,), dtype)


@ct.kernel
def constant_folding(x, out, N: ct.Constant[int]):
    c = 5 + 7
    f = 5 + 3.0
    n = (N + 2) * 3
    k = ct.int16(5) + 2
    ct.static_assert(c == 12, "5 + 7 folds to 12")
    ct.static_assert(f == 8.0, "5 + 3.0 folds to 8.0")
    ct.static_assert(n == 18, "(N + 2) * 3 folds")
    ct.static_assert(k.dtype == ct.int16, "ct.int16(5) + 2 is int16")
    ct.static_assert(k == 7, "ct.int16(5) + 2 is the constant 7")
    t = load_block(x) + c + n
    ct.static_assert(t.dtype == ct.int8, "loose constants keep the tile's dtype")
    ct.store(out, index=(ct.bid(0), 0), tile=t)


def test_constant_folding(run_kernel, rng):
    x = rand(rng, ct.int8, 1, 90)
    out = poisoned(ct.int8)
    run_kernel(constant_folding, GRID, (x, out, 4))
    check(out, f64(x) + 30, ct.int8)


@ct.kernel
def literal_dtype(out):
    a = 0
    ct.static_assert(a.dtype == ct.int32, "a literal 0 has dtype int32")
    ct.store(out, index=(ct.bid(0),), tile=ct.full((4,), a + 1, ct.int32))


def test_literal_has_dtype(run_kernel):
    """Seed 000: scalars are tiles; ``a = 0; a.dtype`` is int32 in tile code."""
    out = np.full(8, 123, np.int32)
    run_kernel(literal_dtype, GRID, (out,))
    np.testing.assert_array_equal(out, np.ones(8, np.int32))


# -- where -----------------------------------------------------------------------------------
WHERE = [  # (x dtype, y dtype, result dtype)
    (ct.float32, ct.float32, ct.float32), (ct.int8, ct.int8, ct.int8),
    (ct.uint16, ct.uint16, ct.uint16), (ct.bfloat16, ct.bfloat16, ct.bfloat16),
    (ct.bool_, ct.bool_, ct.bool_), (ct.int8, ct.int16, ct.int16),
    (ct.int32, ct.float16, ct.float16), (ct.float16, ct.float64, ct.float64)]


@pytest.mark.parametrize("xd,yd,result", WHERE, ids=str)
def test_where(run_kernel, rng, xd, yd, result):
    c = rand(rng, ct.bool_, 0, 1)
    x, y = rand(rng, xd, 1, 40), rand(rng, yd, 1, 40)
    out = launch(run_kernel, where_kernel, (c, x, y), result)
    check(out, np.where(c, f64(x), f64(y)) if result is not ct.bool_ else np.where(c, x, y),
          result)


@pytest.mark.parametrize("label,fn,ref,result", cases([
    ("where(x > 0, x, 0.0) f16", lambda a, b: ct.where(a > 0, a, 0.0),
     lambda x, y: np.where(x > 0, x, 0.0), ct.float16),
    ("where(x > y, x, -1)", lambda a, b: ct.where(a > b, a, -1),
     lambda x, y: np.where(x > y, x, -1), ct.float16),
    ("where(x < y, 2.5, y)", lambda a, b: ct.where(a < b, 2.5, b),
     lambda x, y: np.where(x < y, 2.5, y), ct.float16),
]))
def test_where_with_constants(run_kernel, rng, label, fn, ref, result):
    x, y = rand(rng, ct.float16, 0.5, 4), rand(rng, ct.float16, 0.5, 4)
    out = launch(run_kernel, binary_kernel(fn), (x, y), result)
    check(out, ref(f64(x), f64(y)), result)


# -- rounding modes and flush-to-zero --------------------------------------------------------
def correctly_rounded(approx, compare, mode):
    """The value of ``approx``'s dtype that rounds the exact result by ``mode``.

    ``approx`` is within an ulp of the exact value; ``compare(v)`` is the sign of
    ``v - exact``, computed exactly.
    """
    t = type(approx)
    s = compare(approx)
    if s == 0:
        return approx
    lo, hi = (np.nextafter(approx, t(-np.inf)), approx) if s > 0 else \
        (approx, np.nextafter(approx, t(np.inf)))
    assert compare(lo) < 0 < compare(hi)
    if mode is RM.RZ:
        return hi if hi <= 0 else lo
    return lo if mode is RM.RM else hi


def sign(v):
    return (v > 0) - (v < 0)


EXACT = {  # op: (NumPy in the dtype (IEEE, round to nearest), exact sign of v - result)
    "add": (np.add, lambda v, a, b: sign(v - (a + b))),
    "sub": (np.subtract, lambda v, a, b: sign(v - (a - b))),
    "mul": (np.multiply, lambda v, a, b: sign(v - a * b)),
    "truediv": (np.true_divide, lambda v, a, b: sign(v - a / b)),
    "sqrt": (lambda a, b: np.sqrt(a), lambda v, a, b: sign(v * v - a) if v >= 0 else -1),
}


@functools.cache
def rounding_lambda(op, mode, unary):
    fn = getattr(ct, op)
    if unary:
        return lambda a: fn(a, rounding_mode=mode)
    return lambda a, b: fn(a, b, rounding_mode=mode)


@pytest.mark.parametrize("dtype", [ct.float32, ct.float64], ids=str)
@pytest.mark.parametrize("mode", [RM.RN, RM.RZ, RM.RM, RM.RP], ids=lambda m: m.name)
@pytest.mark.parametrize("op", list(EXACT))
def test_rounding_mode(run_kernel, rng, op, mode, dtype):
    """Each element equals the exact result rounded by ``mode`` (checked with fractions)."""
    x = rand(rng, dtype, 0.5, 4, signed=op != "sqrt")
    y = rand(rng, dtype, 0.5, 4)
    nearest, compare = EXACT[op]
    if op == "sqrt":
        out = launch(run_kernel, unary_kernel(rounding_lambda(op, mode, True)), (x,), dtype)
    else:
        out = launch(run_kernel, binary_kernel(rounding_lambda(op, mode, False)), (x, y), dtype)
    rn = nearest(x, y)
    expected = np.array([
        correctly_rounded(r, lambda v: compare(fractions.Fraction(float(v)),
                                               fractions.Fraction(float(a)),
                                               fractions.Fraction(float(b))), mode)
        if mode is not RM.RN else r for r, a, b in zip(rn.flat, x.flat, y.flat)],
        npdt(dtype)).reshape(SHAPE)
    if mode is not RM.RN:
        assert np.any(expected != rn)  # the data exercises the rounding direction
    np.testing.assert_array_equal(out, expected)
    if mode is RM.RZ:
        assert np.all(np.abs(out) <= np.abs(rn))
    elif mode is RM.RM:
        assert np.all(out <= rn)
    elif mode is RM.RP:
        assert np.all(out >= rn)
    assert np.all(np.abs(f64(out) - f64(rn)) <= np.spacing(np.abs(rn)))  # within one ulp


@pytest.mark.parametrize("label,fn,ref,mode_tol", cases([
    ("truediv FULL", lambda a, b: ct.truediv(a, b, rounding_mode=RM.FULL), np.true_divide,
     TOL[ct.float32]),
    ("truediv APPROX", lambda a, b: ct.truediv(a, b, rounding_mode=RM.APPROX), np.true_divide,
     APPROX_TOL),
    ("exp APPROX", lambda a, b: ct.exp(a, rounding_mode=RM.APPROX), lambda x, y: np.exp(x),
     APPROX_TOL),
    ("tanh APPROX", lambda a, b: ct.tanh(a, rounding_mode=RM.APPROX), lambda x, y: np.tanh(x),
     APPROX_TOL),
    ("tanh FULL", lambda a, b: ct.tanh(a, rounding_mode=RM.FULL), lambda x, y: np.tanh(x),
     TOL[ct.float32]),
    ("sqrt RZ ftz", lambda a, b: ct.sqrt(abs(a), rounding_mode=RM.RZ, flush_to_zero=True),
     lambda x, y: np.sqrt(np.abs(x)), TOL[ct.float32]),
]))
def test_other_rounding_options(run_kernel, rng, label, fn, ref, mode_tol):
    x, y = rand(rng, ct.float32, 0.5, 4), rand(rng, ct.float32, 0.5, 4)
    out = launch(run_kernel, binary_kernel(fn), (x, y), ct.float32)
    check(out, ref(f64(x), f64(y)), ct.float32, tol=mode_tol)


def subnormal(rng, shape=SHAPE, signed=True):
    """Random float32 subnormals, 1e-40 .. 9e-40."""
    return rand(rng, ct.float64, 1e-40, 9e-40, signed=signed, shape=shape).astype(np.float32)


def flush(v):
    v = f64(v)
    return np.where(np.abs(v) < np.finfo(np.float32).tiny, np.copysign(0.0, v), v)


FTZ = {  # name: (op, operands(rng), reference on float64)
    "add": ("add", lambda r: (subnormal(r), subnormal(r)), np.add),
    "sub": ("sub", lambda r: (subnormal(r), subnormal(r)), np.subtract),
    "mul subnormal input": ("mul", lambda r: (subnormal(r), rand(r, ct.float32, 0.5, 4)),
                            np.multiply),
    "mul subnormal result": ("mul", lambda r: (rand(r, ct.float32, 1e-20, 3e-20),
                                               rand(r, ct.float32, 1e-20, 3e-20)), np.multiply),
    "truediv": ("truediv", lambda r: (subnormal(r), rand(r, ct.float32, 0.5, 4)), np.divide),
    "minimum": ("minimum", lambda r: (subnormal(r), rand(r, ct.float32, 0.5, 4, signed=False)),
                np.minimum),
    "maximum": ("maximum", lambda r: (subnormal(r), -rand(r, ct.float32, 0.5, 4, signed=False)),
                np.maximum),
    "sqrt": ("sqrt", lambda r: (subnormal(r, signed=False), None), np.sqrt),
    "rsqrt": ("rsqrt", lambda r: (subnormal(r, signed=False), None), lambda v: 1 / np.sqrt(v)),
    "exp2": ("exp2", lambda r: (-r.integers(127, 140, size=SHAPE).astype(np.float32), None),
             np.exp2),
    # normal results too (the compiled form with flushing is the hardware's own)
    "exp2 mixed": ("exp2", lambda r: (r.uniform(-140, 20, size=SHAPE).astype(np.float32),
                                      None), np.exp2),
}


@functools.cache
def ftz_lambda(op, ftz, unary):
    fn = getattr(ct, op)
    if unary:
        return lambda a: fn(a, flush_to_zero=ftz)
    return lambda a, b: fn(a, b, flush_to_zero=ftz)


@pytest.mark.parametrize("ftz", [False, True], ids=["keep", "ftz"])
@pytest.mark.parametrize("name", list(FTZ))
def test_flush_to_zero(run_kernel, rng, name, ftz):
    """flush_to_zero=True flushes float32 subnormal inputs and results to zero; the default
    keeps them."""
    op, operands, ref = FTZ[name]
    x, y = operands(rng)
    with np.errstate(all="ignore"):
        if y is None:
            out = launch(run_kernel, unary_kernel(ftz_lambda(op, ftz, True)), (x,), ct.float32)
            expected = ref(flush(x) if ftz else f64(x))
        else:
            out = launch(run_kernel, binary_kernel(ftz_lambda(op, ftz, False)), (x, y),
                         ct.float32)
            expected = ref(flush(x), flush(y)) if ftz else ref(f64(x), f64(y))
        expected = expected.astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    assert np.any(np.abs(expected) < tiny) or np.all(np.abs(x) < tiny)  # subnormals in play
    if ftz:
        expected = flush(expected)
    np.testing.assert_array_equal(out == 0, expected == 0)  # zeros are tiny in absolute terms
    check(out, expected, ct.float32)


# -- errors point at the kernel line ---------------------------------------------------------
@ct.kernel
def err_uint8_plus_int8(x, y, out):
    a = load_block(x)
    b = load_block(y)
    r = a + b  # error-here: uint8+int8
    ct.store(out, index=(ct.bid(0), 0), tile=r)


@ct.kernel
def err_int8_plus_300(x, y, out):
    a = load_block(x)
    r = a + 300  # error-here: int8+300
    ct.store(out, index=(ct.bid(0), 0), tile=r)


@ct.kernel
def err_int8_plus_minus_170(x, y, out):
    a = load_block(x)
    r = a + (-170)  # error-here: int8-170
    ct.store(out, index=(ct.bid(0), 0), tile=r)


@ct.kernel
def err_float_bitwise(x, y, out):
    a = load_block(x)
    b = load_block(y)
    r = a & b  # error-here: float&float
    ct.store(out, index=(ct.bid(0), 0), tile=r)


@ct.kernel
def err_exp_of_float_bitwise_not(x, y, out):
    a = load_block(x)
    r = ct.bitwise_not(a)  # error-here: ~float
    ct.store(out, index=(ct.bid(0), 0), tile=r)


ERRORS = [  # (kernel, marker, x dtype, y dtype, error, offending expression, message part)
    (err_uint8_plus_int8, "uint8+int8", ct.uint8, ct.int8, ct.TileTypeError, "a + b", None),
    (err_int8_plus_300, "int8+300", ct.int8, ct.int8, ct.TileValueError, "a + 300", "300"),
    (err_int8_plus_minus_170, "int8-170", ct.int8, ct.int8, ct.TileValueError, "a + (-170)",
     "Integer constant -170 is out of range of int8"),
    (err_float_bitwise, "float&float", ct.float32, ct.float32, ct.TileTypeError, "a & b", None),
    (err_exp_of_float_bitwise_not, "~float", ct.float32, ct.float32, ct.TileTypeError,
     "ct.bitwise_not(a)", None),
]


def marked_line(marker):
    """The line number of the one line of this file that ends with ``# error-here: marker``."""
    with open(__file__) as f:
        lines = [i for i, text in enumerate(f, 1)
                 if text.rstrip().endswith(f"# error-here: {marker}")]
    assert len(lines) == 1, marker
    return lines[0]


@pytest.mark.parametrize("kernel,marker,xd,yd,error,expr,message", ERRORS,
                         ids=[e[1] for e in ERRORS])
def test_error_location(run_kernel, kernel, marker, xd, yd, error, expr, message):
    """The error names this file and the offending kernel line, and shows it with a caret."""
    x, y = np.ones(SHAPE, npdt(xd)), np.ones(SHAPE, npdt(yd))
    with pytest.raises(error) as info:
        run_kernel(kernel, GRID, (x, y, np.zeros(SHAPE, np.float32)))
    err = info.value
    if message is not None:
        assert message in err.message
    line_no = marked_line(marker)
    assert err.loc is not None
    assert os.path.samefile(err.loc.filename, __file__)
    assert err.loc.line == line_no
    with open(__file__) as f:
        source = f.readlines()[line_no - 1].strip()
    text = str(err).splitlines()
    shown = [i for i, t in enumerate(text) if t.strip() == source]
    assert shown and shown[0] + 1 < len(text), f"source line not shown in:\n{err}"
    display, caret = text[shown[0]], text[shown[0] + 1]
    assert caret.strip() and set(caret.strip()) == {"^"}, f"no caret line in:\n{err}"
    start = display.index(expr)
    assert start <= caret.index("^") < start + len(expr), f"caret misplaced in:\n{err}"
