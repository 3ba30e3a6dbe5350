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
from numba_tile.compiler.error_translation import as_tile_error, without_symbols
from bad_inputs import BadInput, arrays, check, module_file, statement_kernel

X = arrays(np.float32, np.float32)  # (x, out)
I32 = arrays(np.int32, np.int32)
STORAGE = r"is not supported: \w+ is a storage dtype without arithmetic; convert it with " \
    r"astype\(ct\.float32\) first"
NOT_OPERAND = r"Expected a tile or a scalar for {} operand, got {}"
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


def idx():
    return ct.arange(4, dtype=ct.int32)


def square(x):
    return ct.reshape(load(x), (2, 2))


# -- arithmetic on the storage dtypes (tfloat32, float8, float4): a TileTypeError -------------
def storage(name, statement, op, dtype="float8_e4m3fn"):
    return BadInput(name, statement_kernel(statement), X, ct.TileTypeError,
                    rf"{op} of a {dtype} tile of shape \(4,\) {STORAGE}", "lambda")


STORAGE_CASES = [
    storage("f8_add", lambda x, out: e4(x) + e4(x), r"'\+' \(add\)"),
    storage("f8_sub", lambda x, out: e4(x) - e4(x), r"'-' \(sub\)"),
    storage("f8_mul", lambda x, out: e4(x) * e4(x), r"'\*' \(mul\)"),
    storage("f8_truediv", lambda x, out: e4(x) / e4(x), r"'/' \(truediv\)"),
    storage("f8_floordiv", lambda x, out: e4(x) // e4(x), r"'//' \(floordiv\)"),
    storage("f8_mod", lambda x, out: e4(x) % e4(x), r"'%' \(mod\)"),
    storage("f8_pow", lambda x, out: e4(x) ** e4(x), r"'\*\*' \(pow\)"),
    storage("f8_negative", lambda x, out: -e4(x), r"'-' \(negative\)"),
    storage("f8_abs", lambda x, out: abs(e4(x)), r"abs\(\)"),
    storage("f8_less", lambda x, out: e4(x) < e4(x), r"'<' \(less\)"),
    storage("f8_equal", lambda x, out: e4(x) == e4(x), r"'==' \(equal\)"),
    storage("f8_maximum", lambda x, out: ct.maximum(e4(x), e4(x)), r"maximum\(\)"),
    storage("f8_minimum", lambda x, out: ct.minimum(e4(x), e4(x)), r"minimum\(\)"),
    storage("f8_exp", lambda x, out: ct.exp(e4(x)), r"exp\(\)"),
    storage("f8_sqrt", lambda x, out: ct.sqrt(e4(x)), r"sqrt\(\)"),
    storage("f8_sin", lambda x, out: ct.sin(e4(x)), r"sin\(\)"),
    storage("f8_floor", lambda x, out: ct.floor(e4(x)), r"floor\(\)"),
    storage("f8_isnan", lambda x, out: ct.isnan(e4(x)), r"isnan\(\)"),
    storage("f8_atan2", lambda x, out: ct.atan2(e4(x), e4(x)), r"atan2\(\)"),
    storage("f8_add_function", lambda x, out: ct.add(e4(x), e4(x)), r"'\+' \(add\)"),
    storage("f8_math_exp", lambda x, out: math.exp(e4(x)), r"exp\(\)"),
    storage("e5m2_add", lambda x, out: e5(x) + e5(x), r"'\+' \(add\)", "float8_e5m2"),
    storage("e5m2_greater_equal", lambda x, out: e5(x) >= e5(x), r"'>=' \(greater_equal\)",
            "float8_e5m2"),
    storage("e5m2_log", lambda x, out: ct.log(e5(x)), r"log\(\)", "float8_e5m2"),
    storage("e8m0_add", lambda x, out: e8(x) + e8(x), r"'\+' \(add\)", "float8_e8m0fnu"),
    storage("e8m0_mul", lambda x, out: e8(x) * e8(x), r"'\*' \(mul\)", "float8_e8m0fnu"),
    storage("f4_add", lambda x, out: f4(x) + f4(x), r"'\+' \(add\)", "float4_e2m1fn"),
    storage("f4_negative", lambda x, out: -f4(x), r"'-' \(negative\)", "float4_e2m1fn"),
    storage("tf32_add", lambda x, out: tf32(x) + tf32(x), r"'\+' \(add\)", "tfloat32"),
    storage("tf32_greater", lambda x, out: tf32(x) > tf32(x), r"'>' \(greater\)", "tfloat32"),
    BadInput("f8_constants_add", statement_kernel(
        lambda x, out: ct.float8_e4m3fn(1.0) + ct.float8_e4m3fn(2.0)), X, ct.TileTypeError,
        rf"'\+' \(add\) of a float8_e4m3fn scalar {STORAGE}", "lambda"),
    storage("f8_loose_constant", lambda x, out: e4(x) + 1.0, r"'\+' \(add\)"),
    storage("f8_add_function_constant", lambda x, out: ct.store(out, (0,), ct.add(e4(x), 1)),
            r"'\+' \(add\)"),
    BadInput("f8_sum", statement_kernel(lambda x, out: ct.sum(e4(x))), X, ct.TileTypeError,
             r"sum\(\) of float8_e4m3fn tile of shape \(4,\): float8_e4m3fn is not an arithmetic",
             "lambda"),
    BadInput("f8_cumsum", statement_kernel(lambda x, out: ct.cumsum(e5(x))), X,
             ct.TileTypeError, r"Non-arithmetic dtype float8_e5m2 is unsupported by cumsum",
             "lambda"),
]


# -- bitcast: bool_ has no bit pattern of its own to share --------------------------------------
def bitcasts(name, statement, source, target):
    return BadInput(name, statement_kernel(statement), X, ct.TileTypeError,
                    rf"bitcast\(\) cannot reinterpret {source} as {target}: bool_ has no bit "
                    rf"pattern to share", "lambda")


BITCAST_CASES = [
    bitcasts("bitcast_uint8_to_bool", lambda x, out: ct.bitcast(load(x).astype(ct.uint8),
                                                                ct.bool_), "uint8", "bool_"),
    bitcasts("bitcast_int8_to_bool", lambda x, out: ct.bitcast(load(x).astype(ct.int8),
                                                               ct.bool_), "int8", "bool_"),
    bitcasts("bitcast_bool_to_uint8", lambda x, out: ct.bitcast(load(x) > 1, ct.uint8),
             "bool_", "uint8"),
    bitcasts("bitcast_float32_to_bool", lambda x, out: ct.bitcast(load(x), ct.bool_),
             "float32", "bool_"),
    bitcasts("bitcast_bool_to_float8", lambda x, out: ct.bitcast(load(x) > 1, ct.float8_e5m2),
             "bool_", "float8_e5m2"),
]


# -- range of what is no integer -------------------------------------------------------------------
RANGE = r"range\(\) needs integer bounds \(integer constants or scalars\), got "


@ct.kernel
def range_of_float(x, out):
    for i in range(2.5):
        pass


@ct.kernel
def range_of_none(x, out):
    for i in range(None):
        pass


@ct.kernel
def range_of_string(x, out):
    for i in range(0, "8"):
        pass


@ct.kernel
def range_of_tile(x, out):
    for i in range(load(x)):
        pass


@ct.kernel
def range_of_float_scalar(x, out):
    for i in range(ct.sum(load(x))):
        pass


@ct.kernel
def range_of_array(x, out):
    for i in range(x):
        pass


@ct.kernel
def range_of_float_stop(x, out):
    for i in range(0, 8.0, 2):
        pass


@ct.kernel
def range_of_float_step(x, out):
    for i in range(0, 4, 0.5):
        pass


@ct.kernel
def range_of_tuple(x, out):
    for i in range((1, 2)):
        pass


@ct.kernel
def range_of_bool(x, out):
    for i in range(True):
        pass


@ct.kernel
def range_of_dtype(x, out):
    for i in range(ct.float32):
        pass


@ct.kernel
def range_of_four(x, out):
    for i in range(0, 8, 1, 1):
        pass


@ct.kernel
def range_of_nothing(x, out):
    for i in range():
        pass


def ranges(name, kernel, got):
    return BadInput(name, kernel, X, ct.TileTypeError, RANGE + got, "range(")


RANGE_CASES = [
    ranges("range_float", range_of_float, "constant 2.5"),
    ranges("range_none", range_of_none, "NoneType None"),
    ranges("range_string", range_of_string, "str '8'"),
    ranges("range_tile", range_of_tile, r"float32 tile of shape \(4,\)"),
    ranges("range_float_scalar", range_of_float_scalar, "run-time float32 scalar"),
    ranges("range_array", range_of_array, "1-d float32 array"),
    ranges("range_float_stop", range_of_float_stop, "constant 8.0"),
    ranges("range_float_step", range_of_float_step, "constant 0.5"),
    ranges("range_tuple", range_of_tuple, r"tuple Tuple\[Tile\[int32,\(\)\],Tile\[int32,\(\)\]\]"),
    ranges("range_bool", range_of_bool, "constant True"),
    ranges("range_dtype", range_of_dtype, "DType float32"),
    BadInput("range_four_bounds", range_of_four, X, ct.TileTypeError,
             r"range\(\) takes 1 to 3 integer bounds, got 4", "range("),
    BadInput("range_no_bounds", range_of_nothing, X, ct.TileTypeError,
             r"range\(\) takes 1 to 3 integer bounds, got 0", "range("),
]


# -- ops given None, a string, an array, a tuple or a dtype where a tile goes ------------------
def operand(name, statement, message, args=X):
    return BadInput(name, statement_kernel(statement), args, ct.TileTypeError, message, "lambda")


OPERAND_CASES = [
    operand("where_none_condition", lambda x, out: ct.where(None, load(x), load(x)),
            NOT_OPERAND.format("the condition", "NoneType None").replace("for the condition "
                                                                          "operand", "for the "
                                                                          "condition")),
    operand("where_string_condition", lambda x, out: ct.where("a", load(x), load(x)),
            r"Expected a tile or a scalar for the condition, got str 'a'"),
    operand("where_array_condition", lambda x, out: ct.where(x, load(x), load(x)),
            r"Expected a tile or a scalar for the condition, got 1-d float32 array"),
    operand("where_dtype_condition", lambda x, out: ct.where(ct.int32, load(x), load(x)),
            r"Expected a tile or a scalar for the condition, got DType int32"),
    operand("where_string_value", lambda x, out: ct.where(load(x) > 1, load(x), "a"),
            r"Expected a tile or a scalar for operand, got str 'a'"),
    operand("where_array_value", lambda x, out: ct.where(load(x) > 1, load(x), x),
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("where_array_first_value", lambda x, out: ct.where(load(x) > 1, x, load(x)),
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("where_none_value", lambda x, out: ct.where(load(x) > 1, load(x), None),
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("where_tuple_value", lambda x, out: ct.where(load(x) > 1, (load(x), load(x)), 0),
            r"Expected a tile or a scalar for operand, got tuple Tuple\[Tile\[float32,\(4,\)\],"),
    operand("where_dtype_value", lambda x, out: ct.where(load(x) > 1, load(x), ct.float32),
            r"Expected a tile or a scalar for operand, got DType float32"),
    operand("exp_none", lambda x, out: ct.exp(None),
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("exp_string", lambda x, out: ct.exp("a"),
            r"Expected a tile or a scalar for operand, got str 'a'"),
    operand("exp_array", lambda x, out: ct.exp(x),
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("negative_tuple", lambda x, out: ct.negative((load(x), load(x))),
            r"Expected a tile or a scalar for operand, got tuple Tuple\["),
    operand("abs_dtype", lambda x, out: ct.abs(ct.float32),
            r"Expected a tile or a scalar for operand, got DType float32"),
    operand("isnan_array", lambda x, out: ct.isnan(x),
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("floor_none", lambda x, out: ct.floor(None),
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("sqrt_string", lambda x, out: ct.sqrt("a"),
            r"Expected a tile or a scalar for operand, got str 'a'"),
    operand("astype_none", lambda x, out: ct.astype(None, ct.float16),
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("astype_array", lambda x, out: ct.astype(x, ct.float16),
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("add_none", lambda x, out: ct.add(load(x), None),
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("add_none_first", lambda x, out: ct.add(None, load(x)),
            r"Expected a tile or a scalar for the left operand, got NoneType None"),
    operand("add_constant_and_none", lambda x, out: ct.add(1, None),
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("mul_array", lambda x, out: ct.mul(x, load(x)),
            r"Expected a tile or a scalar for the left operand, got 1-d float32 array"),
    operand("plus_tuple", lambda x, out: load(x) + (1, 2),
            r"Expected a tile or a scalar for the right operand, got tuple Tuple\[Tile\[int32"),
    operand("maximum_array", lambda x, out: ct.maximum(load(x), x),
            r"Expected a tile or a scalar for the right operand, got 1-d float32 array"),
    operand("builtin_min_none", lambda x, out: min(load(x), None),
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("builtin_max_array", lambda x, out: max(load(x), x),
            r"Expected a tile or a scalar for the right operand, got 1-d float32 array"),
    operand("builtin_min_string_first", lambda x, out: min("a", load(x)),
            r"Expected a tile or a scalar for the left operand, got str 'a'"),
    operand("pow_tuple", lambda x, out: ct.pow(load(x), (load(x), load(x))),
            r"Expected a tile or a scalar for the right operand, got tuple Tuple\["),
    operand("bitwise_and_none", lambda x, out: ct.bitwise_and(load(x).astype(ct.int32), None),
            r"Expected a tile or a scalar for the right operand, got NoneType None"),
    operand("cdiv_none", lambda x, out: ct.cdiv(None, 2),
            r"Expected a tile or a scalar for operand, got NoneType None"),
    operand("cdiv_array", lambda x, out: ct.cdiv(x, 2),
            r"Expected a tile or a scalar for operand, got 1-d float32 array"),
    operand("matmul_none", lambda x, out: ct.matmul(None, square(x)),
            r"Expected a tile or a scalar, got NoneType None"),
    operand("matmul_string", lambda x, out: ct.matmul(square(x), "a"),
            r"Expected a tile or a scalar, got str 'a'"),
    operand("matmul_array", lambda x, out: ct.matmul(square(x), x),
            r"Expected a tile or a scalar, got 1-d float32 array"),
    operand("cat_none", lambda x, out: ct.cat((None, load(x)), 0),
            r"Invalid argument #1 of cat\(\): Expected a tile, but given value has type None"),
    operand("cat_array", lambda x, out: ct.cat((load(x), x), 0),
            r"Invalid argument #1 of cat\(\): Expected a tile, but given value has type "
            r"Array\[float32"),
    operand("cat_not_a_tuple", lambda x, out: ct.cat(load(x), 0),
            r"cat\(\) needs a tuple of two tiles, got float32 tile of shape \(4,\)"),
    operand("cat_three", lambda x, out: ct.cat((load(x), load(x), load(x)), 0),
            r"cat\(\) needs a tuple of two tiles, got tuple Tuple\["),
    operand("store_array", lambda x, out: ct.store(out, (0,), x),
            r"Expected a tile or a scalar, got 1-d float32 array"),
    operand("store_none", lambda x, out: ct.store(out, (0,), None),
            r"Expected a tile or a scalar, got NoneType None"),
    operand("store_string", lambda x, out: ct.store(out, (0,), "a"),
            r"Expected a tile or a scalar, got str 'a'"),
    operand("store_tuple", lambda x, out: ct.store(out, (0,), (load(x), load(x))),
            r"Expected a tile or a scalar, got tuple Tuple\[Tile\[float32,\(4,\)\]"),
    operand("store_dtype", lambda x, out: ct.store(out, (0,), ct.float32),
            r"Expected a tile or a scalar, got DType float32"),
    operand("scatter_array", lambda x, out: ct.scatter(out, idx(), x),
            r"The value of scatter\(\) must be a tile or a scalar, got 1-d float32 array"),
    operand("scatter_string", lambda x, out: ct.scatter(out, idx(), "a"),
            r"The value of scatter\(\) must be a tile or a scalar, got str 'a'"),
    operand("scatter_none", lambda x, out: ct.scatter(out, idx(), None),
            r"The value of scatter\(\) must be a tile or a scalar, got NoneType None"),
    operand("atomic_add_array", lambda x, out: ct.atomic_add(out, idx(), x),
            r"The update of atomic_add\(\) must be a tile or a scalar, got 1-d float32 array"),
    operand("atomic_max_none", lambda x, out: ct.atomic_max(out, idx(), None),
            r"The update of atomic_max\(\) must be a tile or a scalar, got NoneType None", I32),
    operand("assert_none", lambda x, out: ct.assert_(None),
            r"ct.assert_\(\) needs a tile or scalar condition, got NoneType None"),
    operand("assert_string", lambda x, out: ct.assert_("a"),
            r"ct.assert_\(\) needs a tile or scalar condition, got str 'a'"),
    operand("assert_array", lambda x, out: ct.assert_(x),
            r"ct.assert_\(\) needs a tile or scalar condition, got 1-d float32 array"),
    operand("assert_tuple", lambda x, out: ct.assert_((load(x), load(x))),
            r"ct.assert_\(\) needs a tile or scalar condition, got tuple Tuple\["),
    operand("assert_dtype", lambda x, out: ct.assert_(ct.float32),
            r"ct.assert_\(\) needs a tile or scalar condition, got DType float32"),
]


# -- calls whose arguments do not bind to the op's parameters ---------------------------------
def unbound(name, statement, op, problem):
    return BadInput(name, statement_kernel(statement), X, ct.TileTypeError,
                    UNBOUND.format(op, problem), "lambda")


BOGUS = "got an unexpected keyword argument 'bogus'"
TOO_MANY = "too many positional arguments"

BINDING_CASES = [
    unbound("load_bogus", lambda x, out: ct.load(x, (0,), (4,), bogus=1), "load", BOGUS),
    unbound("store_bogus", lambda x, out: ct.store(out, (0,), load(x), bogus=1), "store",
            BOGUS),
    unbound("where_bogus", lambda x, out: ct.where(load(x) > 1, 0, 1, bogus=1), "where", BOGUS),
    unbound("add_bogus", lambda x, out: ct.add(load(x), 1, bogus=1), "add", BOGUS),
    unbound("exp_bogus", lambda x, out: ct.exp(load(x), bogus=1), "exp", BOGUS),
    unbound("sum_bogus", lambda x, out: ct.sum(load(x), bogus=1), "sum", BOGUS),
    unbound("argmax_bogus", lambda x, out: ct.argmax(load(x), bogus=1), "argmax", BOGUS),
    unbound("cumsum_bogus", lambda x, out: ct.cumsum(load(x), bogus=1), "cumsum", BOGUS),
    unbound("reshape_bogus", lambda x, out: ct.reshape(load(x), (4,), bogus=1), "reshape",
            BOGUS),
    unbound("astype_bogus", lambda x, out: ct.astype(load(x), ct.int32, bogus=1), "astype",
            BOGUS),
    unbound("bitcast_bogus", lambda x, out: ct.bitcast(load(x), ct.int32, bogus=1), "bitcast",
            BOGUS),
    unbound("full_bogus", lambda x, out: ct.full((4,), 0, ct.float32, bogus=1), "full", BOGUS),
    unbound("bid_bogus", lambda x, out: ct.bid(0, bogus=1), "bid", BOGUS),
    unbound("gather_bogus", lambda x, out: ct.gather(x, idx(), bogus=1), "gather", BOGUS),
    unbound("scatter_bogus", lambda x, out: ct.scatter(out, idx(), 1.0, bogus=1), "scatter",
            BOGUS),
    unbound("atomic_add_bogus", lambda x, out: ct.atomic_add(out, idx(), 1.0, bogus=1),
            "atomic_add", BOGUS),
    unbound("cat_bogus", lambda x, out: ct.cat((load(x), load(x)), 0, bogus=1), "cat", BOGUS),
    unbound("matmul_bogus", lambda x, out: ct.matmul(square(x), square(x), bogus=1), "matmul",
            BOGUS),
    unbound("num_tiles_bogus", lambda x, out: ct.num_tiles(x, 0, (4,), bogus=1), "num_tiles",
            BOGUS),
    unbound("cdiv_bogus", lambda x, out: ct.cdiv(load(x), 2, bogus=1), "cdiv", BOGUS),
    unbound("printf_bogus", lambda x, out: ct.printf("%f", load(x), bogus=1), "printf", BOGUS),
    unbound("load_too_many", lambda x, out: ct.load(x, (0,), (4,), "C", 1, 2), "load",
            TOO_MANY),
    unbound("exp_too_many", lambda x, out: ct.exp(load(x), 1), "exp", TOO_MANY),
    unbound("sum_keepdims_by_position", lambda x, out: ct.sum(load(x), 0, True), "sum",
            TOO_MANY),
    unbound("where_too_many", lambda x, out: ct.where(load(x) > 1, 0, 1, 2), "where", TOO_MANY),
    unbound("bid_too_many", lambda x, out: ct.bid(0, 1), "bid", TOO_MANY),
    unbound("load_missing_shape", lambda x, out: ct.load(x, (0,)), "load",
            "missing a required argument: 'shape'"),
    unbound("full_missing_dtype", lambda x, out: ct.full((4,), 0), "full",
            "missing a required argument: 'dtype'"),
    unbound("arange_missing_dtype", lambda x, out: ct.arange(4), "arange",
            "missing a required argument: 'dtype'"),
    unbound("where_missing", lambda x, out: ct.where(load(x) > 1, 0), "where",
            "missing a required argument: 'y'"),
    unbound("bid_missing", lambda x, out: ct.bid(), "bid",
            "missing a required argument: 'axis'"),
    unbound("reshape_positional_by_keyword", lambda x, out: ct.reshape(x=load(x), shape=(4,)),
            "reshape", "'x' parameter is positional only, but was passed as a keyword"),
    unbound("tile_reshape_bogus", lambda x, out: load(x).reshape((4,), bogus=1), "reshape",
            BOGUS),
    unbound("tile_astype_bogus", lambda x, out: load(x).astype(ct.int32, bogus=1), "astype",
            BOGUS),
    unbound("tile_astype_missing", lambda x, out: load(x).astype(), "astype",
            "missing a required argument: 'dtype'"),
    unbound("tile_item_too_many", lambda x, out: ct.sum(load(x)).item(1), "item", TOO_MANY),
    unbound("tile_transpose_bogus", lambda x, out: square(x).transpose(bogus=1), "transpose",
            BOGUS),
    unbound("array_slice_bogus", lambda x, out: x.slice(0, 0, 2, bogus=1), "slice", BOGUS),
    unbound("array_tiled_view_bogus", lambda x, out: x.tiled_view((4,), bogus=1), "tiled_view",
            BOGUS),
    unbound("array_raw_memory_too_many", lambda x, out: x.get_raw_memory(1), "get_raw_memory",
            TOO_MANY),
    unbound("view_load_bogus", lambda x, out: x.tiled_view((4,)).load((0,), bogus=1), "load",
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


BINDING_CASES += [
    BadInput("assert_bogus", assert_bogus, X, ct.TileTypeError,
             UNBOUND.format("assert_", BOGUS), "ct.assert_("),
    BadInput("assert_too_many", assert_three, X, ct.TileTypeError,
             UNBOUND.format("assert_", TOO_MANY), "ct.assert_("),
    BadInput("print_bogus", print_bogus, X, ct.TileTypeError,
             UNBOUND.format("print", BOGUS), "ct.print("),
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
    return t


def helper_with_global(t):
    global COUNTER
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
