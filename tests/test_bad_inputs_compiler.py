"""Bad inputs that reached users as internal errors of the compiler (issue 52): arithmetic on
the storage dtypes (NVVM's invalid IR), bitcasts of bool_, ``range`` of what is no integer,
ops given None, a string, an array, a tuple or a dtype where a tile goes, calls whose
arguments do not bind, ``try`` in a helper, ``with`` on what is no context manager. Each
fails alike in the interpreter and in ``ct.compile`` (tests/bad_inputs.py)."""

import contextlib
import math

import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_tile as ct
from numba_tile.compiler.error_translation import as_tile_error, kernel_location, \
    without_symbols
from bad_inputs import BadInput, arrays, check, module_file, statement_kernel

X = arrays(np.float32, np.float32)  # (x, out)
I32 = arrays(np.int32, np.int32)
STORAGE = r"is not supported: \w+ is a storage dtype without arithmetic; convert it with " \
    r"astype\(ct\.float32\) first"
UNBOUND = r"Invalid call of {}\(\): {}; its parameters are "


def load(x):
    return ct.load(x, (0,), (4,))


def e4(x):
    return load(x).astype(ct.float8_e4m3fn)


def e5(x):
    return load(x).astype(ct.float8_e5m2)


def e8(x):
    return load(x).astype(ct.float8_e8m0fnu)


def f4(x):
    return load(x).astype(ct.float4_e2m1fn)


def tf32(x):
    return load(x).astype(ct.tfloat32)


def u8(x):
    return load(x).astype(ct.uint8)


def i8(x):
    return load(x).astype(ct.int8)


def idx():
    return ct.arange(4, dtype=ct.int32)


def square(x):
    return ct.reshape(load(x), (2, 2))


# -- arithmetic on the storage dtypes (tfloat32, float8, float4): a TileTypeError -------------
def storage(name, kernel, op, dtype="float8_e4m3fn"):
    return BadInput(name, kernel, X, ct.TileTypeError,
                    rf"{op} of a {dtype} tile of shape \(4,\) {STORAGE}", "lambda")


k_f8_add = statement_kernel(lambda x, out: e4(x) + e4(x))
k_f8_and = statement_kernel(lambda x, out: e4(x) & e4(x))
k_f8_invert = statement_kernel(lambda x, out: ~e4(x))
k_e5m2_tanh = statement_kernel(lambda x, out: ct.tanh(e5(x)))
k_tf32_exp2 = statement_kernel(lambda x, out: ct.exp2(tf32(x)))
k_f8_where_then_add = statement_kernel(lambda x, out: ct.where(load(x) > 1, e4(x), e4(x)) + e4(x))
k_f8_sub = statement_kernel(lambda x, out: e4(x) - e4(x))
k_f8_mul = statement_kernel(lambda x, out: e4(x) * e4(x))
k_f8_truediv = statement_kernel(lambda x, out: e4(x) / e4(x))
k_f8_floordiv = statement_kernel(lambda x, out: e4(x) // e4(x))
k_f8_mod = statement_kernel(lambda x, out: e4(x) % e4(x))
k_f8_pow = statement_kernel(lambda x, out: e4(x) ** e4(x))
k_f8_negative = statement_kernel(lambda x, out: -e4(x))
k_f8_abs = statement_kernel(lambda x, out: abs(e4(x)))
k_f8_less = statement_kernel(lambda x, out: e4(x) < e4(x))
k_f8_equal = statement_kernel(lambda x, out: e4(x) == e4(x))
k_f8_maximum = statement_kernel(lambda x, out: ct.maximum(e4(x), e4(x)))
k_f8_minimum = statement_kernel(lambda x, out: ct.minimum(e4(x), e4(x)))
k_f8_exp = statement_kernel(lambda x, out: ct.exp(e4(x)))
k_f8_sqrt = statement_kernel(lambda x, out: ct.sqrt(e4(x)))
k_f8_sin = statement_kernel(lambda x, out: ct.sin(e4(x)))
k_f8_floor = statement_kernel(lambda x, out: ct.floor(e4(x)))
k_f8_isnan = statement_kernel(lambda x, out: ct.isnan(e4(x)))
k_f8_atan2 = statement_kernel(lambda x, out: ct.atan2(e4(x), e4(x)))
k_f8_add_function = statement_kernel(lambda x, out: ct.add(e4(x), e4(x)))
k_f8_math_exp = statement_kernel(lambda x, out: math.exp(e4(x)))
k_e5m2_add = statement_kernel(lambda x, out: e5(x) + e5(x))
k_e5m2_greater_equal = statement_kernel(lambda x, out: e5(x) >= e5(x))
k_e5m2_log = statement_kernel(lambda x, out: ct.log(e5(x)))
k_e8m0_add = statement_kernel(lambda x, out: e8(x) + e8(x))
k_e8m0_mul = statement_kernel(lambda x, out: e8(x) * e8(x))
k_f4_add = statement_kernel(lambda x, out: f4(x) + f4(x))
k_f4_negative = statement_kernel(lambda x, out: -f4(x))
k_tf32_add = statement_kernel(lambda x, out: tf32(x) + tf32(x))
k_tf32_greater = statement_kernel(lambda x, out: tf32(x) > tf32(x))
k_f8_constants_add = statement_kernel(lambda x, out: ct.float8_e4m3fn(1.0) + ct.float8_e4m3fn(2.0))
k_f8_loose_constant = statement_kernel(lambda x, out: e4(x) + 1.0)
k_f8_add_function_constant = statement_kernel(lambda x, out: ct.store(out, (0,), ct.add(e4(x), 1)))
k_f8_sum = statement_kernel(lambda x, out: ct.sum(e4(x)))
k_f8_cumsum = statement_kernel(lambda x, out: ct.cumsum(e5(x)))
k_f8_argmax = statement_kernel(lambda x, out: ct.argmax(e4(x)))
k_f4_prod = statement_kernel(lambda x, out: ct.prod(f4(x)))

STORAGE_CASES = [
    storage("f8_add", k_f8_add, r"'\+' \(add\)"),
    storage("f8_bitwise_and", k_f8_and, r"'&' \(bitwise_and\)"),
    storage("f8_invert", k_f8_invert, r"'~' \(bitwise_not\)"),
    storage("e5m2_tanh", k_e5m2_tanh, r"tanh\(\)", "float8_e5m2"),
    storage("tf32_exp2", k_tf32_exp2, r"exp2\(\)", "tfloat32"),
    storage("f8_where_then_add", k_f8_where_then_add, r"'\+' \(add\)"),
    storage("f8_sub", k_f8_sub, r"'-' \(sub\)"),
    storage("f8_mul", k_f8_mul, r"'\*' \(mul\)"),
    storage("f8_truediv", k_f8_truediv, r"'/' \(truediv\)"),
    storage("f8_floordiv", k_f8_floordiv, r"'//' \(floordiv\)"),
    storage("f8_mod", k_f8_mod, r"'%' \(mod\)"),
    storage("f8_pow", k_f8_pow, r"'\*\*' \(pow\)"),
    storage("f8_negative", k_f8_negative, r"'-' \(negative\)"),
    storage("f8_abs", k_f8_abs, r"abs\(\)"),
    storage("f8_less", k_f8_less, r"'<' \(less\)"),
    storage("f8_equal", k_f8_equal, r"'==' \(equal\)"),
    storage("f8_maximum", k_f8_maximum, r"maximum\(\)"),
    storage("f8_minimum", k_f8_minimum, r"minimum\(\)"),
    storage("f8_exp", k_f8_exp, r"exp\(\)"),
    storage("f8_sqrt", k_f8_sqrt, r"sqrt\(\)"),
    storage("f8_sin", k_f8_sin, r"sin\(\)"),
    storage("f8_floor", k_f8_floor, r"floor\(\)"),
    storage("f8_isnan", k_f8_isnan, r"isnan\(\)"),
    storage("f8_atan2", k_f8_atan2, r"atan2\(\)"),
    storage("f8_add_function", k_f8_add_function, r"'\+' \(add\)"),
    storage("f8_math_exp", k_f8_math_exp, r"exp\(\)"),
    storage("e5m2_add", k_e5m2_add, r"'\+' \(add\)", "float8_e5m2"),
    storage("e5m2_greater_equal", k_e5m2_greater_equal, r"'>=' \(greater_equal\)",
            "float8_e5m2"),
    storage("e5m2_log", k_e5m2_log, r"log\(\)", "float8_e5m2"),
    storage("e8m0_add", k_e8m0_add, r"'\+' \(add\)", "float8_e8m0fnu"),
    storage("e8m0_mul", k_e8m0_mul, r"'\*' \(mul\)", "float8_e8m0fnu"),
    storage("f4_add", k_f4_add, r"'\+' \(add\)", "float4_e2m1fn"),
    storage("f4_negative", k_f4_negative, r"'-' \(negative\)", "float4_e2m1fn"),
    storage("tf32_add", k_tf32_add, r"'\+' \(add\)", "tfloat32"),
    storage("tf32_greater", k_tf32_greater, r"'>' \(greater\)", "tfloat32"),
    BadInput("f8_constants_add", k_f8_constants_add, X, ct.TileTypeError,
             rf"'\+' \(add\) of a float8_e4m3fn scalar {STORAGE}", "lambda"),
    storage("f8_loose_constant", k_f8_loose_constant, r"'\+' \(add\)"),
    storage("f8_add_function_constant", k_f8_add_function_constant,
            r"'\+' \(add\)"),
    BadInput("f8_sum", k_f8_sum, X, ct.TileTypeError,
             r"Non-arithmetic dtype float8_e4m3fn is unsupported for reduction: sum\(\) of "
             r"float8_e4m3fn tile of shape \(4,\)",
             "lambda"),
    BadInput("f8_cumsum", k_f8_cumsum, X,
             ct.TileTypeError, r"Non-arithmetic dtype float8_e5m2 is unsupported for prefix scans: cumsum",
             "lambda"),
    BadInput("f8_argmax", k_f8_argmax, X, ct.TileTypeError,
             r"Non-arithmetic dtype float8_e4m3fn is unsupported for reduction: argmax\(\) of "
             r"float8_e4m3fn tile of shape \(4,\)", "lambda"),
    BadInput("f4_prod", k_f4_prod, X, ct.TileTypeError,
             r"Non-arithmetic dtype float4_e2m1fn is unsupported for reduction: prod\(\) of "
             r"float4_e2m1fn tile of shape \(4,\)", "lambda"),
]


# -- bitcast: bool_ has no bit pattern of its own to share --------------------------------------
def bitcasts(name, kernel, source, target):
    return BadInput(name, kernel, X, ct.TileTypeError,
                    rf"bitcast\(\) cannot reinterpret {source} as {target}: bool_ has no bit "
                    rf"pattern to share", "lambda")


k_bitcast_uint8_to_bool = statement_kernel(lambda x, out: ct.bitcast(u8(x), ct.bool_))
k_bitcast_int8_to_bool = statement_kernel(lambda x, out: ct.bitcast(i8(x), ct.bool_))
k_bitcast_bool_to_uint8 = statement_kernel(lambda x, out: ct.bitcast(load(x) > 1, ct.uint8))
k_bitcast_float32_to_bool = statement_kernel(lambda x, out: ct.bitcast(load(x), ct.bool_))
k_bitcast_bool_to_float8 = statement_kernel(lambda x, out: ct.bitcast(load(x) > 1, ct.float8_e5m2))

BITCAST_CASES = [
    bitcasts("bitcast_uint8_to_bool", k_bitcast_uint8_to_bool, "uint8", "bool_"),
    bitcasts("bitcast_int8_to_bool", k_bitcast_int8_to_bool, "int8", "bool_"),
    bitcasts("bitcast_bool_to_uint8", k_bitcast_bool_to_uint8,
             "bool_", "uint8"),
    bitcasts("bitcast_float32_to_bool", k_bitcast_float32_to_bool,
             "float32", "bool_"),
    bitcasts("bitcast_bool_to_float8", k_bitcast_bool_to_float8,
             "bool_", "float8_e5m2"),
]


# -- range of what is no integer -------------------------------------------------------------------
RANGE_COUNT = r"Invalid number of arguments: "
ASSERT = r"Invalid argument #1 of assert_\(\): Expected a tile, but given value has type "
RANGE = r"Invalid argument #{} of range\(\): Expected an integer scalar, but given value has type "


@ct.kernel
def range_of_float(x, out):
    for i in range(2.5): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_none(x, out):
    for i in range(None): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_string(x, out):
    for i in range(0, "8"): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_tile(x, out):
    for i in range(load(x)): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_float_scalar(x, out):
    for i in range(ct.sum(load(x))): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_array(x, out):
    for i in range(x): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_float_stop(x, out):
    for i in range(0, 8.0, 2): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_float_step(x, out):
    for i in range(0, 4, 0.5): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_tuple(x, out):
    for i in range((1, 2)): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_bool(x, out):
    for i in range(True): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_dtype(x, out):
    for i in range(ct.float32): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_four(x, out):
    for i in range(0, 8, 1, 1): pass  # noqa: E701 (the statement on one line)


@ct.kernel
def range_of_nothing(x, out):
    for i in range(): pass  # noqa: E701 (the statement on one line)


def ranges(name, kernel, got, position=1):
    return BadInput(name, kernel, X, ct.TileTypeError, RANGE.format(position) + got, "range(")


RANGE_CASES = [
    ranges("range_float", range_of_float, r"Tile\[float32,\(\)\]$"),
    ranges("range_none", range_of_none, r"None$"),
    ranges("range_string", range_of_string, r"str$", position=2),
    ranges("range_tile", range_of_tile, r"Tile\[float32,\(4,\)\]$"),
    ranges("range_float_scalar", range_of_float_scalar, r"Tile\[float32,\(\)\]$"),
    ranges("range_array", range_of_array, r"Array\[float32,\(\?,\):\(\?,\)\]$"),
    ranges("range_float_stop", range_of_float_stop, r"Tile\[float32,\(\)\]$", position=2),
    ranges("range_float_step", range_of_float_step, r"Tile\[float32,\(\)\]$", position=3),
    ranges("range_tuple", range_of_tuple, r"Tuple\[Tile\[int32,\(\)\],Tile\[int32,\(\)\]\]$"),
    ranges("range_bool", range_of_bool, r"Tile\[bool_,\(\)\]$"),
    ranges("range_dtype", range_of_dtype, r"DTypeSpec\(dtype=<DType 'float32'>\)$"),
    BadInput("range_four_bounds", range_of_four, X, ct.TileTypeError,
             RANGE_COUNT + "4", "range("),
    BadInput("range_no_bounds", range_of_nothing, X, ct.TileTypeError,
             RANGE_COUNT + "0", "range("),
]


# -- ops given None, a string, an array, a tuple or a dtype where a tile goes ------------------
def operand(name, kernel, message, args=X):
    return BadInput(name, kernel, args, ct.TileTypeError, message, "lambda")


k_where_none_condition = statement_kernel(lambda x, out: ct.where(None, load(x), load(x)))
k_where_string_condition = statement_kernel(lambda x, out: ct.where("a", load(x), load(x)))
k_where_array_condition = statement_kernel(lambda x, out: ct.where(x, load(x), load(x)))
k_where_dtype_condition = statement_kernel(lambda x, out: ct.where(ct.int32, load(x), load(x)))
k_where_string_value = statement_kernel(lambda x, out: ct.where(load(x) > 1, load(x), "a"))
k_where_array_value = statement_kernel(lambda x, out: ct.where(load(x) > 1, load(x), x))
k_where_array_first_value = statement_kernel(lambda x, out: ct.where(load(x) > 1, x, load(x)))
k_where_none_value = statement_kernel(lambda x, out: ct.where(load(x) > 1, load(x), None))
k_where_tuple_value = statement_kernel(lambda x, out: ct.where(load(x) > 1, (load(x), load(x)), 0))
k_where_dtype_value = statement_kernel(lambda x, out: ct.where(load(x) > 1, load(x), ct.float32))
k_exp_none = statement_kernel(lambda x, out: ct.exp(None))
k_exp_string = statement_kernel(lambda x, out: ct.exp("a"))
k_exp_array = statement_kernel(lambda x, out: ct.exp(x))
k_negative_tuple = statement_kernel(lambda x, out: ct.negative((load(x), load(x))))
k_abs_dtype = statement_kernel(lambda x, out: ct.abs(ct.float32))
k_isnan_array = statement_kernel(lambda x, out: ct.isnan(x))
k_floor_none = statement_kernel(lambda x, out: ct.floor(None))
k_sqrt_string = statement_kernel(lambda x, out: ct.sqrt("a"))
k_astype_none = statement_kernel(lambda x, out: ct.astype(None, ct.float16))
k_astype_array = statement_kernel(lambda x, out: ct.astype(x, ct.float16))
k_add_none = statement_kernel(lambda x, out: ct.add(load(x), None))
k_add_none_first = statement_kernel(lambda x, out: ct.add(None, load(x)))
k_add_constant_and_none = statement_kernel(lambda x, out: ct.add(1, None))
k_mul_array = statement_kernel(lambda x, out: ct.mul(x, load(x)))
k_plus_tuple = statement_kernel(lambda x, out: load(x) + (1, 2))
k_maximum_array = statement_kernel(lambda x, out: ct.maximum(load(x), x))
k_builtin_min_none = statement_kernel(lambda x, out: min(load(x), None))
k_builtin_max_array = statement_kernel(lambda x, out: max(load(x), x))
k_builtin_min_string_first = statement_kernel(lambda x, out: min("a", load(x)))
k_pow_tuple = statement_kernel(lambda x, out: ct.pow(load(x), (load(x), load(x))))
k_bitwise_and_none = statement_kernel(lambda x, out: ct.bitwise_and(load(x).astype(ct.int32), None))
k_cdiv_none = statement_kernel(lambda x, out: ct.cdiv(None, 2))
k_cdiv_array = statement_kernel(lambda x, out: ct.cdiv(x, 2))
k_matmul_none = statement_kernel(lambda x, out: ct.matmul(None, square(x)))
k_matmul_string = statement_kernel(lambda x, out: ct.matmul(square(x), "a"))
k_matmul_array = statement_kernel(lambda x, out: ct.matmul(square(x), x))
k_cat_none = statement_kernel(lambda x, out: ct.cat((None, load(x)), 0))
k_cat_array = statement_kernel(lambda x, out: ct.cat((load(x), x), 0))
k_cat_not_a_tuple = statement_kernel(lambda x, out: ct.cat(load(x), 0))
k_cat_three = statement_kernel(lambda x, out: ct.cat((load(x), load(x), load(x)), 0))
k_store_array = statement_kernel(lambda x, out: ct.store(out, (0,), x))
k_store_none = statement_kernel(lambda x, out: ct.store(out, (0,), None))
k_store_string = statement_kernel(lambda x, out: ct.store(out, (0,), "a"))
k_store_tuple = statement_kernel(lambda x, out: ct.store(out, (0,), (load(x), load(x))))
k_store_dtype = statement_kernel(lambda x, out: ct.store(out, (0,), ct.float32))
k_scatter_array = statement_kernel(lambda x, out: ct.scatter(out, idx(), x))
k_scatter_string = statement_kernel(lambda x, out: ct.scatter(out, idx(), "a"))
k_scatter_none = statement_kernel(lambda x, out: ct.scatter(out, idx(), None))
k_atomic_add_array = statement_kernel(lambda x, out: ct.atomic_add(out, idx(), x))
k_atomic_max_none = statement_kernel(lambda x, out: ct.atomic_max(out, idx(), None))
k_assert_none = statement_kernel(lambda x, out: ct.assert_(None))
k_assert_string = statement_kernel(lambda x, out: ct.assert_("a"))
k_assert_array = statement_kernel(lambda x, out: ct.assert_(x))
k_assert_tuple = statement_kernel(lambda x, out: ct.assert_((load(x), load(x))))
k_assert_dtype = statement_kernel(lambda x, out: ct.assert_(ct.float32))
k_assume_divisible_none = statement_kernel(lambda x, out: ct.assume_divisible_by(None, 4))
k_assume_divisible_array = statement_kernel(lambda x, out: ct.assume_divisible_by(x, 4))
k_extract_none_index = statement_kernel(lambda x, out: ct.extract(load(x), (None,), (2,)))
k_extract_string_index = statement_kernel(lambda x, out: ct.extract(load(x), ("a",), (2,)))
k_index_string = statement_kernel(lambda x, out: load(x)["a"])
k_index_array = statement_kernel(lambda x, out: load(x)[x])
k_index_integer = statement_kernel(lambda x, out: load(x)[0])
k_float32_of_array = statement_kernel(lambda x, out: ct.float32(x))
k_int8_of_string = statement_kernel(lambda x, out: ct.int8("a"))
k_reduce_none = statement_kernel(lambda x, out: ct.reduce(load(x), 0, None, 0))
k_scan_constant = statement_kernel(lambda x, out: ct.scan(load(x), 0, 3, 0))
k_abs_array = statement_kernel(lambda x, out: abs(x))
k_abs_none = statement_kernel(lambda x, out: abs(None))
k_math_exp_none = statement_kernel(lambda x, out: math.exp(None))
k_math_sqrt_array = statement_kernel(lambda x, out: math.sqrt(x))
k_scalar_plus_none = statement_kernel(lambda x, out: ct.bid(0) + None)
k_scalar_times_array = statement_kernel(lambda x, out: ct.bid(0) * x)
k_negative_of_array = statement_kernel(lambda x, out: -x)

OPERAND_CASES = [
    operand("where_none_condition", k_where_none_condition,
            r"Expected a tile or a scalar for the condition, got NoneType None"),
    operand("where_string_condition", k_where_string_condition,
            r"Expected a tile or a scalar for the condition, got str 'a'"),
    operand("where_array_condition", k_where_array_condition,
            r"Expected a tile or a scalar for the condition, got 1-d float32 array"),
    operand("where_dtype_condition", k_where_dtype_condition,
            r"Expected a tile or a scalar for the condition, got DType int32"),
    operand("where_string_value", k_where_string_value,
            r"Expected a tile or a scalar for operand, got str 'a'"),
    operand("where_array_value", k_where_array_value,
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("where_array_first_value", k_where_array_first_value,
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("where_none_value", k_where_none_value,
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("where_tuple_value", k_where_tuple_value,
            r"Expected a tile or a scalar for operand, got tuple Tuple\[Tile\[float32,\(4,\)\],"),
    operand("where_dtype_value", k_where_dtype_value,
            r"Expected a tile or a scalar for operand, got DType float32"),
    operand("exp_none", k_exp_none,
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("exp_string", k_exp_string,
            r"Expected a tile or a scalar for operand, got str 'a'"),
    operand("exp_array", k_exp_array,
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("negative_tuple", k_negative_tuple,
            r"Expected a tile or a scalar for operand, got tuple Tuple\["),
    operand("abs_dtype", k_abs_dtype,
            r"Expected a tile or a scalar for operand, got DType float32"),
    operand("isnan_array", k_isnan_array,
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("floor_none", k_floor_none,
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("sqrt_string", k_sqrt_string,
            r"Expected a tile or a scalar for operand, got str 'a'"),
    operand("astype_of_none", k_astype_none,
            r"Invalid argument #1 of astype\(\): Expected a tile, but given value has type None"),
    operand("astype_array", k_astype_array,
            r"Invalid argument #1 of astype\(\): Expected a tile, but given value has type "
            r"Array\[float32"),
    operand("add_none", k_add_none,
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("add_none_first", k_add_none_first,
            r"Expected a tile or a scalar for the left operand, got NoneType None"),
    operand("add_constant_and_none", k_add_constant_and_none,
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("mul_array", k_mul_array,
            r"Expected a tile or a scalar for the left operand, got 1-d float32 array"),
    operand("plus_tuple", k_plus_tuple,
            r"Expected a tile or a scalar for the right operand, got tuple \(1, 2\)"),
    operand("maximum_array", k_maximum_array,
            r"Expected a tile or a scalar for the right operand, got 1-d float32 array"),
    operand("builtin_min_none", k_builtin_min_none,
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("builtin_max_array", k_builtin_max_array,
            r"max\(\) of an Array is not supported in tile code; it is memory, not values"),
    operand("builtin_min_string_first", k_builtin_min_string_first,
            r"Expected a tile or a scalar for the left operand, got str 'a'"),
    operand("pow_tuple", k_pow_tuple,
            r"Expected a tile or a scalar for the right operand, got tuple Tuple\["),
    operand("bitwise_and_none", k_bitwise_and_none,
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("cdiv_none", k_cdiv_none,
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("cdiv_array", k_cdiv_array,
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("matmul_none", k_matmul_none,
            r"Invalid argument #1 of matmul\(\): Expected a tile, but given value has type None"),
    operand("matmul_string", k_matmul_string,
            r"Invalid argument #2 of matmul\(\): Expected a tile, but given value has type str"),
    operand("matmul_array", k_matmul_array,
            r"Invalid argument #2 of matmul\(\): Expected a tile, but given value has type "
            r"Array\[float32"),
    operand("cat_none", k_cat_none,
            r"Invalid argument #1 of cat\(\): Expected a tile, but given value has type None"),
    operand("cat_array", k_cat_array,
            r"Invalid argument #1 of cat\(\): Expected a tile, but given value has type "
            r"Array\[float32"),
    operand("cat_not_a_tuple", k_cat_not_a_tuple,
            r"cat\(\) needs a tuple of two tiles, got float32 tile of shape \(4,\)"),
    operand("cat_three", k_cat_three,
            r"cat\(\) supports at most 2 tiles, got 3"),
    operand("store_array", k_store_array,
            r"Expected a tile or a scalar, got 1-d float32 array"),
    operand("store_none", k_store_none,
            r"Expected a tile or a scalar, got NoneType None"),
    operand("store_string", k_store_string,
            r"Expected a tile or a scalar, got str 'a'"),
    operand("store_tuple", k_store_tuple,
            r"Expected a tile or a scalar, got tuple Tuple\[Tile\[float32,\(4,\)\]"),
    operand("store_dtype", k_store_dtype,
            r"Expected a tile or a scalar, got DType float32"),
    operand("scatter_array", k_scatter_array,
            r"The value of scatter\(\) must be a tile or a scalar, got 1-d float32 array"),
    operand("scatter_string", k_scatter_string,
            r"The value of scatter\(\) must be a tile or a scalar, got str 'a'"),
    operand("scatter_none", k_scatter_none,
            r"The value of scatter\(\) must be a tile or a scalar, got NoneType None"),
    operand("atomic_add_array", k_atomic_add_array,
            r"The update of atomic_add\(\) must be a tile or a scalar, got 1-d float32 array"),
    operand("atomic_max_none", k_atomic_max_none,
            r"The update of atomic_max\(\) must be a tile or a scalar, got NoneType None", I32),
    operand("assert_none", k_assert_none,
            ASSERT + r"None"),
    operand("assert_string", k_assert_string,
            ASSERT + r"str"),
    operand("assert_array", k_assert_array,
            ASSERT + r"Array\[float32"),
    operand("assert_tuple", k_assert_tuple,
            ASSERT + r"Tuple\["),
    operand("assert_dtype", k_assert_dtype,
            ASSERT + r"DTypeSpec\(dtype=<DType 'float32'>\)"),
    operand("assume_divisible_none", k_assume_divisible_none,
            r"assume_divisible_by\(\) needs an integer scalar, got NoneType None"),
    operand("assume_divisible_array", k_assume_divisible_array,
            r"assume_divisible_by\(\) needs an integer scalar, got 1-d float32 array"),
    operand("extract_none_index", k_extract_none_index,
            r'Invalid argument "index" of extract\(\): Expected a tuple of signed integers or '
            r"a single signed integer scalar, but item #0 has type None"),
    operand("extract_string_index", k_extract_string_index,
            r'Invalid argument "index" of extract\(\): Expected a tuple of signed integers or '
            r"a single signed integer scalar, but item #0 has type str"),
    operand("index_string", k_index_string,
            r"instead. Tiles can only be indexed with ':', None and '...' \(to add axes\), got "
            r"str 'a'"),
    operand("index_array", k_index_array,
            r"Tiles can only be indexed with ':', None and '...' \(to add axes\), got 1-d "
            r"float32 array"),
    operand("index_integer", k_index_integer,
            r"Tiles can only be indexed with ':', None and '...' \(to add axes\), got "
            r"constant 0; use ct.extract for sub-tiles"),
    operand("float32_of_array", k_float32_of_array,
            r"float32\(\) needs a number, a scalar or a tile, got 1-d float32 array"),
    operand("int8_of_string", k_int8_of_string,
            r"int8\(\) needs a number, a scalar or a tile, got str 'a'"),
    operand("reduce_none_function", k_reduce_none,
            r"func of reduce\(\) must be a function of two tiles, got NoneType None"),
    operand("scan_constant_function", k_scan_constant,
            r"func of scan\(\) must be a function of two tiles, got constant 3"),
    operand("abs_array", k_abs_array,
            r"abs\(\) of an Array is not supported in tile code; it is memory, not values"),
    operand("abs_none", k_abs_none, r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("math_exp_none", k_math_exp_none,
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("math_sqrt_array", k_math_sqrt_array,
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("scalar_plus_none", k_scalar_plus_none,
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("scalar_times_array", k_scalar_times_array,
            r"Expected a tile or a scalar for the right operand, got 1-d float32 array"),
    operand("negative_of_array", k_negative_of_array,
            r"Operator '-' is not supported on an Array: it is memory, not values"),
]


# -- calls whose arguments do not bind to the op's parameters ---------------------------------
def unbound(name, kernel, op, problem):
    return BadInput(name, kernel, X, ct.TileTypeError,
                    UNBOUND.format(op, problem), "lambda")


BOGUS = "got an unexpected keyword argument 'bogus'"
TOO_MANY = "too many positional arguments"

k_mma_bogus = statement_kernel(lambda x, out: ct.mma(square(x), square(x), square(x), bogus=1))
k_arange_start_positional = statement_kernel(lambda x, out: ct.arange(4, ct.int32))
k_histogram_bogus = statement_kernel(lambda x, out: ct.histogram(idx(), 4, bogus=1))
k_load_bogus = statement_kernel(lambda x, out: ct.load(x, (0,), (4,), bogus=1))
k_store_bogus = statement_kernel(lambda x, out: ct.store(out, (0,), load(x), bogus=1))
k_where_bogus = statement_kernel(lambda x, out: ct.where(load(x) > 1, 0, 1, bogus=1))
k_add_bogus = statement_kernel(lambda x, out: ct.add(load(x), 1, bogus=1))
k_exp_bogus = statement_kernel(lambda x, out: ct.exp(load(x), bogus=1))
k_sum_bogus = statement_kernel(lambda x, out: ct.sum(load(x), bogus=1))
k_argmax_bogus = statement_kernel(lambda x, out: ct.argmax(load(x), bogus=1))
k_cumsum_bogus = statement_kernel(lambda x, out: ct.cumsum(load(x), bogus=1))
k_reshape_bogus = statement_kernel(lambda x, out: ct.reshape(load(x), (4,), bogus=1))
k_astype_bogus = statement_kernel(lambda x, out: ct.astype(load(x), ct.int32, bogus=1))
k_bitcast_bogus = statement_kernel(lambda x, out: ct.bitcast(load(x), ct.int32, bogus=1))
k_full_bogus = statement_kernel(lambda x, out: ct.full((4,), 0, ct.float32, bogus=1))
k_bid_bogus = statement_kernel(lambda x, out: ct.bid(0, bogus=1))
k_gather_bogus = statement_kernel(lambda x, out: ct.gather(x, idx(), bogus=1))
k_scatter_bogus = statement_kernel(lambda x, out: ct.scatter(out, idx(), 1.0, bogus=1))
k_atomic_add_bogus = statement_kernel(lambda x, out: ct.atomic_add(out, idx(), 1.0, bogus=1))
k_cat_bogus = statement_kernel(lambda x, out: ct.cat((load(x), load(x)), 0, bogus=1))
k_matmul_bogus = statement_kernel(lambda x, out: ct.matmul(square(x), square(x), bogus=1))
k_num_tiles_bogus = statement_kernel(lambda x, out: ct.num_tiles(x, 0, (4,), bogus=1))
k_cdiv_bogus = statement_kernel(lambda x, out: ct.cdiv(load(x), 2, bogus=1))
k_printf_bogus = statement_kernel(lambda x, out: ct.printf("%f", load(x), bogus=1))
k_load_too_many = statement_kernel(lambda x, out: ct.load(x, (0,), (4,), "C", 1, 2))
k_exp_too_many = statement_kernel(lambda x, out: ct.exp(load(x), 1))
k_sum_keepdims_by_position = statement_kernel(lambda x, out: ct.sum(load(x), 0, True))
k_where_too_many = statement_kernel(lambda x, out: ct.where(load(x) > 1, 0, 1, 2))
k_bid_too_many = statement_kernel(lambda x, out: ct.bid(0, 1))
k_load_missing_shape = statement_kernel(lambda x, out: ct.load(x, (0,)))
k_full_missing_dtype = statement_kernel(lambda x, out: ct.full((4,), 0))
k_arange_missing_dtype = statement_kernel(lambda x, out: ct.arange(4))
k_where_missing = statement_kernel(lambda x, out: ct.where(load(x) > 1, 0))
k_bid_missing = statement_kernel(lambda x, out: ct.bid())
k_reshape_positional_by_keyword = statement_kernel(lambda x, out: ct.reshape(x=load(x), shape=(4,)))
k_tile_reshape_bogus = statement_kernel(lambda x, out: load(x).reshape((4,), bogus=1))
k_tile_astype_bogus = statement_kernel(lambda x, out: load(x).astype(ct.int32, bogus=1))
k_tile_astype_missing = statement_kernel(lambda x, out: load(x).astype())
k_tile_item_too_many = statement_kernel(lambda x, out: ct.sum(load(x)).item(1))
k_tile_transpose_bogus = statement_kernel(lambda x, out: square(x).transpose(bogus=1))
k_array_slice_bogus = statement_kernel(lambda x, out: x.slice(0, 0, 2, bogus=1))
k_array_tiled_view_bogus = statement_kernel(lambda x, out: x.tiled_view((4,), bogus=1))
k_array_raw_memory_too_many = statement_kernel(lambda x, out: x.get_raw_memory(1))
k_view_load_bogus = statement_kernel(lambda x, out: x.tiled_view((4,)).load((0,), bogus=1))

BINDING_CASES = [
    unbound("load_bogus", k_load_bogus, "load", BOGUS),
    unbound("mma_bogus", k_mma_bogus, "mma", BOGUS),
    unbound("arange_dtype_by_position", k_arange_start_positional, "arange", TOO_MANY),
    unbound("histogram_bogus", k_histogram_bogus, "histogram", BOGUS),
    unbound("store_bogus", k_store_bogus, "store",
            BOGUS),
    unbound("where_bogus", k_where_bogus, "where", BOGUS),
    unbound("add_bogus", k_add_bogus, "add", BOGUS),
    unbound("exp_bogus", k_exp_bogus, "exp", BOGUS),
    unbound("sum_bogus", k_sum_bogus, "sum", BOGUS),
    unbound("argmax_bogus", k_argmax_bogus, "argmax", BOGUS),
    unbound("cumsum_bogus", k_cumsum_bogus, "cumsum", BOGUS),
    unbound("reshape_bogus", k_reshape_bogus, "reshape",
            BOGUS),
    unbound("astype_bogus", k_astype_bogus, "astype",
            BOGUS),
    unbound("bitcast_bogus", k_bitcast_bogus, "bitcast",
            BOGUS),
    unbound("full_bogus", k_full_bogus, "full", BOGUS),
    unbound("bid_bogus", k_bid_bogus, "bid", BOGUS),
    unbound("gather_bogus", k_gather_bogus, "gather", BOGUS),
    unbound("scatter_bogus", k_scatter_bogus, "scatter",
            BOGUS),
    unbound("atomic_add_bogus", k_atomic_add_bogus,
            "atomic_add", BOGUS),
    unbound("cat_bogus", k_cat_bogus, "cat", BOGUS),
    unbound("matmul_bogus", k_matmul_bogus, "matmul",
            BOGUS),
    unbound("num_tiles_bogus", k_num_tiles_bogus, "num_tiles",
            BOGUS),
    unbound("cdiv_bogus", k_cdiv_bogus, "cdiv", BOGUS),
    unbound("printf_bogus", k_printf_bogus, "printf", BOGUS),
    unbound("load_too_many", k_load_too_many, "load",
            TOO_MANY),
    unbound("exp_too_many", k_exp_too_many, "exp", TOO_MANY),
    unbound("sum_keepdims_by_position", k_sum_keepdims_by_position, "sum",
            TOO_MANY),
    unbound("where_too_many", k_where_too_many, "where", TOO_MANY),
    unbound("bid_too_many", k_bid_too_many, "bid", TOO_MANY),
    unbound("load_missing_shape", k_load_missing_shape, "load",
            "missing a required argument: 'shape'"),
    unbound("full_missing_dtype", k_full_missing_dtype, "full",
            "missing a required argument: 'dtype'"),
    unbound("arange_missing_dtype", k_arange_missing_dtype, "arange",
            "missing a required argument: 'dtype'"),
    unbound("where_missing", k_where_missing, "where",
            "missing a required argument: 'y'"),
    unbound("bid_missing", k_bid_missing, "bid",
            "missing a required argument: 'axis'"),
    unbound("reshape_positional_by_keyword", k_reshape_positional_by_keyword,
            "reshape", "'x' parameter is positional only, but was passed as a keyword"),
    unbound("tile_reshape_bogus", k_tile_reshape_bogus, "reshape",
            BOGUS),
    unbound("tile_astype_bogus", k_tile_astype_bogus, "astype",
            BOGUS),
    unbound("tile_astype_missing", k_tile_astype_missing, "astype",
            "missing a required argument: 'dtype'"),
    unbound("tile_item_too_many", k_tile_item_too_many, "item", TOO_MANY),
    unbound("tile_transpose_bogus", k_tile_transpose_bogus, "transpose",
            BOGUS),
    unbound("array_slice_bogus", k_array_slice_bogus, "slice", BOGUS),
    unbound("array_tiled_view_bogus", k_array_tiled_view_bogus, "tiled_view",
            BOGUS),
    unbound("array_raw_memory_too_many", k_array_raw_memory_too_many, "get_raw_memory",
            TOO_MANY),
    unbound("view_load_bogus", k_view_load_bogus, "load",
            BOGUS),
]


@ct.kernel
def assert_bogus(x, out):
    ct.assert_(load(x) > 0, bogus=1)


@ct.kernel
def assert_three(x, out):
    ct.assert_(load(x) > 0, "m", 1)


@ct.kernel
def print_bogus(x, out):
    ct.print(load(x), bogus=1)


@ct.kernel
def print_to_file(x, out):
    print(load(x), file=None)


BINDING_CASES += [
    BadInput("assert_bogus", assert_bogus, X, ct.TileTypeError,
             UNBOUND.format("assert_", BOGUS), "ct.assert_("),
    BadInput("assert_too_many", assert_three, X, ct.TileTypeError,
             UNBOUND.format("assert_", TOO_MANY), "ct.assert_("),
    BadInput("print_bogus", print_bogus, X, ct.TileTypeError,
             r"print\(\) in tile code takes sep= and end=, not bogus=", "ct.print("),
    BadInput("builtin_print_to_file", print_to_file, X, ct.TileTypeError,
             r"print\(\) in tile code takes sep= and end=, not file=", "print("),
]


# -- try (and what else a kernel may not hold) in a helper it calls ------------------------------
def helper_with_try(t):
    try:
        return t + 1
    except Exception:
        return t


def helper_with_try_finally(t):
    try:
        return t + 1
    finally:
        pass


def helper_calling_helper_with_try(t):
    return helper_with_try(t)


def helper_with_nested_try(t):
    def inner(u):
        try:
            return u
        except ValueError:
            return u
    return inner(t)


def helper_with_import(t):
    import math as m
    return t * m.pi


def helper_with_del(t):
    u = t
    del u
    return t


def helper_with_list(t):
    pair = [t, t]
    return pair[0]


def helper_with_global(t):
    global COUNTER
    COUNTER = t
    return t


@ct.kernel
def kernel_with_nested_try(x, out):
    def inner(u):
        try:
            return u
        except ValueError:
            return u
    ct.store(out, (0,), inner(load(x)))


def helper_call(helper):
    return statement_kernel(lambda x, out: ct.store(out, (0,), helper(load(x))))


HELPER_CASES = [
    BadInput("try_in_helper", helper_call(helper_with_try), X, ct.TileSyntaxError,
             r"try/except is not supported in tile code", "    try:"),
    BadInput("try_finally_in_helper", helper_call(helper_with_try_finally), X,
             ct.TileSyntaxError, r"try/except is not supported in tile code", "    try:"),
    BadInput("try_in_helper_of_helper", helper_call(helper_calling_helper_with_try), X,
             ct.TileSyntaxError, r"try/except is not supported in tile code", "    try:"),
    BadInput("try_in_helper_nested_function", helper_call(helper_with_nested_try), X,
             ct.TileSyntaxError, r"try/except is not supported in tile code", "        try:"),
    BadInput("try_in_kernel_nested_function", kernel_with_nested_try, X, ct.TileSyntaxError,
             r"try/except is not supported in tile code", "        try:"),
    BadInput("import_in_helper", helper_call(helper_with_import), X, ct.TileSyntaxError,
             r"import is not supported in tile code", "import math as m"),
    BadInput("del_in_helper", helper_call(helper_with_del), X, ct.TileSyntaxError,
             r"del is not supported in tile code", "del u"),
    BadInput("list_in_helper", helper_call(helper_with_list), X, ct.TileSyntaxError,
             r"list literals are not supported in tile code", "pair = [t, t]"),
    BadInput("global_in_helper", helper_call(helper_with_global), X, ct.TileSyntaxError,
             r"global is not supported in tile code", "global COUNTER"),
]


# -- with on what is no generator-based context manager --------------------------------------
class Manager:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@contextlib.contextmanager
def managed():
    yield


@ct.kernel
def with_class_alias(x, out):
    c = Manager
    with c():
        pass


@ct.kernel
def with_class(x, out):
    with Manager():
        pass


@ct.kernel
def with_array(x, out):
    with x:
        pass


@ct.kernel
def with_none(x, out):
    with None:
        pass


@ct.kernel
def with_tile(x, out):
    with load(x):
        pass


@ct.kernel
def with_op(x, out):
    with ct.bid(0):
        pass


@ct.kernel
def with_constant_alias(x, out):
    c = 3
    with c:
        pass


@ct.kernel
def with_refused_builtin(x, out):
    with eval("1"):
        pass


@ct.kernel
def with_manager_alias(x, out):
    c = managed
    with c():
        ct.store(out, (0,), load(x))


NOT_A_MANAGER = r"A with block of tile code needs a generator-based context manager .*got `{}`"

WITH_CASES = [
    BadInput("with_class_in_variable", with_class_alias, X, ct.TileTypeError,
             r'Creating instances of type "Manager" is not supported in device code', "with c()"),
    BadInput("with_class", with_class, X, ct.TileTypeError,
             r'Creating instances of type "Manager" is not supported in device code',
             "with Manager()"),
    BadInput("with_array", with_array, X, ct.TileTypeError, NOT_A_MANAGER.format("x"),
             "with x:"),
    BadInput("with_none", with_none, X, ct.TileTypeError, NOT_A_MANAGER.format("None"),
             "with None:"),
    BadInput("with_tile", with_tile, X, ct.TileTypeError, NOT_A_MANAGER.format(r"load\(x\)"),
             "with load(x):"),
    BadInput("with_op", with_op, X, ct.TileTypeError, NOT_A_MANAGER.format(r"ct.bid\(0\)"),
             "with ct.bid(0):"),
    BadInput("with_constant_in_variable", with_constant_alias, X, ct.TileTypeError,
             NOT_A_MANAGER.format("c"), "with c:"),
    BadInput("with_refused_builtin", with_refused_builtin, X, ct.TileTypeError,
             r"eval\(\) is not supported in device code", "with eval("),
]

CASES = (STORAGE_CASES + BITCAST_CASES + RANGE_CASES + OPERAND_CASES + BINDING_CASES +
         HELPER_CASES + WITH_CASES)


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_fails_alike(case):
    check(case, module_file(__name__))


def test_a_context_manager_in_a_variable_runs_in_both():
    """``c = managed; with c():`` is a context manager of the user's: both executors run it
    (the compiler follows the variable to the function)."""
    x, out = arrays(np.float32, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), with_manager_alias, (x, out))
    np.testing.assert_array_equal(out, x)
    ct.compile(with_manager_alias, (x, out), arch="sm_90")


def test_compile_errors_name_the_kernel_not_its_symbol():
    """What Numba calls the kernel (``_ZN6cudapy...``, ``cudapy::...``) never reaches a
    message: the kernel's name does."""
    assert without_symbols("in '_ZN6cudapy8__main__10my_kernel_241B2v1E'",
                           with_array) == "in 'with_array'"
    assert without_symbols("cudapy::__main__::my_kernel$241 failed", with_array) == \
        "with_array failed"
    compiled = ct.compile(with_manager_alias, arrays(np.float32, np.float32), arch="sm_90")
    assert "with_manager_alias" in repr(compiled) and "_ZN" not in repr(compiled)


def test_a_numba_error_without_a_location_takes_the_line_its_message_shows():
    """"cannot compile this yet: No implementation..." errors name the kernel line that
    Numba's message shows (Numba gives them no location of their own)."""
    line = with_none.fn.__code__.co_firstlineno + 2
    error = TypingError(
        f"No implementation of function Function(<function exp at 0x1>) found for signature:"
        f"\n >>> exp(none)\n\nFile \"{__file__}\", line {line}:\n    with None:\n    ^\n")
    tile_error = as_tile_error(error)
    assert isinstance(tile_error, ct.TileUnsupportedFeatureError)
    assert tile_error.loc is not None and tile_error.loc.filename == __file__
    assert tile_error.loc.line == line and "with None" in tile_error.loc.source_line


def test_a_compile_error_without_a_line_names_the_kernel():
    """An error of the whole kernel (one NVVM finds in its IR) has no line of its own: it
    names the kernel's ``def`` line."""
    loc = kernel_location(with_none.fn)
    assert loc.filename == __file__ and loc.source_line.strip() == "def with_none(x, out):"
    assert loc.function == "with_none"
