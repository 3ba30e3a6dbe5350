"""Bad inputs a second, independent catalogue found after the first (issue 52): calls of
what is no function, builtins given too few arguments or None, attribute assignments,
``match`` (refused as cuTile refuses it), conditions on tiles of
several elements (marked at the condition in both executors; ``not t`` is elementwise, as in
cuTile: tests/test_elementwise.py), unpacking a tile, constants of
no tile-code value (bytes, complex), a dtype constructor given an int no dtype holds, and a
``range`` that counts down. Each fails
alike in the interpreter and in ``ct.compile(arch="sm_90")`` (tests/bad_inputs.py).
"""

import numpy as np
import pytest

import numba_tile as ct
import kernels_with_asserts
from bad_inputs import BadInput, arrays, check, interpret, module_file, statement_kernel
from kernels_with_asserts import assert_on_a_tile

TTE, TVE, TSE = ct.TileTypeError, ct.TileValueError, ct.TileSyntaxError
F32 = arrays(np.float32, np.float32)
CONDITION = r"^Expected a scalar value, but given value has type a tile of shape \(4,\): it " \
    r"cannot be used as a condition; only scalars \(0-d tiles\) can$"


def tile(x):
    """A loaded tile of the first 4 elements of ``x`` (a helper: not the failing line)."""
    return ct.load(x, (0,), (4,))


def pair(a, b):
    return a + b


CASES = []


def case(name, kernel, error, message, line, args=F32):
    CASES.append(BadInput(name, kernel, args, error, message, line))


# -- what is no function, called ---------------------------------------------------------------
case("array_ndim_called", statement_kernel(lambda x, out: x.ndim()), TTE,
     r"^Cannot call an object of type int$", "x.ndim()")
case("tile_shape_called", statement_kernel(lambda x, out: tile(x).shape()), TTE,
     r"^Cannot call an object of type tuple$", "tile(x).shape()")
case("tile_dunder_dict", statement_kernel(lambda x, out: tile(x).__dict__), TTE,
     r"^Tile has no attribute '__dict__'$", "tile(x).__dict__")

# -- builtins given too few arguments, or None ---------------------------------------------
case("max_of_nothing", statement_kernel(lambda x, out: max()), TTE,
     r"^max\(\) takes at least 1 argument, got 0$", "max()")
case("min_of_nothing", statement_kernel(lambda x, out: min()), TTE,
     r"^min\(\) takes at least 1 argument, got 0$", "min()")
case("int_of_none", statement_kernel(lambda x, out: int(None)), TTE,
     r"^int\(\) of None is not supported in tile code$", "int(None)")
case("float_of_none", statement_kernel(lambda x, out: float(None)), TTE,
     r"^float\(\) of None is not supported in tile code$", "float(None)")
case("len_of_none", statement_kernel(lambda x, out: len(None)), TTE,
     r"^len\(\) of None is not supported in tile code$", "len(None)")
case("pow_with_a_modulus", statement_kernel(lambda x, out: pow(tile(x), 2, 3)), TTE,
     r"^pow\(\) with a modulus \(a third argument\) is not supported on tiles", "pow(tile(x)")
case("divmod_of_one", statement_kernel(lambda x, out: ct.divmod(tile(x))), TTE,
     r"^Invalid call of divmod\(\): missing a required argument: 'y'", "ct.divmod(tile(x))")


# -- statements cuTile refuses ---------------------------------------------------------------
@ct.kernel
def assigns_an_attribute_of_a_tile(x, out):
    t = tile(x)
    t.foo = 1
    ct.store(out, (0,), t)


@ct.kernel
def assigns_the_shape_of_an_array(x, out):
    x.shape = (2, 2)
    ct.store(out, (0,), tile(x))


@ct.kernel
def has_a_match_statement(x, out):
    t = tile(x)
    match 1:
        case 1:
            t = t + 1
    ct.store(out, (0,), t)


ASSIGNED = r"^Assigning an attribute is not supported in tile code"
case("tile_attribute_assigned", assigns_an_attribute_of_a_tile, TSE, ASSIGNED, "t.foo = 1")
case("array_shape_assigned", assigns_the_shape_of_an_array, TSE, ASSIGNED, "x.shape = (2, 2)")
case("match_statement", has_a_match_statement, TSE,
     r"^match statements are not supported in tile code", "match 1:")


# -- conditions on tiles of several elements: marked at the condition ------------------------
@ct.kernel
def if_on_a_tile(x, out):
    t = tile(x)
    if t > 1:
        t = t + 1
    ct.store(out, (0,), t)


@ct.kernel
def while_on_a_tile(x, out):
    t = tile(x)
    while t < 10:
        t = t + 1
    ct.store(out, (0,), t)


CONDITION_CASES = [
    BadInput("if_on_a_tile", if_on_a_tile, F32, TTE, CONDITION, "if t > 1:"),
    BadInput("while_on_a_tile", while_on_a_tile, F32, TTE, CONDITION, "while t < 10:"),
    BadInput("conditional_expression_on_a_tile", statement_kernel(
        lambda x, out: ct.store(out, (0,), tile(x) if tile(x) > 1 else tile(out))),
        F32, TTE, CONDITION, "tile(x) if tile(x) > 1"),
    BadInput("and_of_tiles", statement_kernel(
        lambda x, out: ct.store(out, (0,), tile(x) and tile(out))), F32, TTE, CONDITION,
        "tile(x) and tile(out)"),
]
# where each error's caret starts: the condition itself, as cuTile marks it
CONDITION_TEXT = {"if_on_a_tile": "t > 1", "while_on_a_tile": "t < 10",
                  "conditional_expression_on_a_tile": "tile(x) > 1",
                  "and_of_tiles": "tile(x) and"}


# -- unpacking ---------------------------------------------------------------------------------
@ct.kernel
def unpacks_a_tile(x, out):
    a, b = ct.zeros((2,), ct.float32)
    ct.store(out, (0,), tile(x) + a)


@ct.kernel
def unpacks_three_into_two(x, out):
    a, b = (1, 2, 3)
    ct.store(out, (0,), tile(x) + a + b)


case("tile_unpacked", unpacks_a_tile, TTE, r"^Tiles cannot be iterated",
     "a, b = ct.zeros((2,), ct.float32)")
case("three_unpacked_into_two", unpacks_three_into_two, TVE,
     r"^Too many values to unpack \(expected 2, got 3\)$", "a, b = (1, 2, 3)")
case("tile_starred_into_a_call", statement_kernel(
    lambda x, out: ct.store(out, (0,), pair(*tile(x)))), TTE,
    r"^Expected a tuple after \*, got a float32 tile of shape \(4,\)$", "pair(*tile(x))")

# -- constants that are no value of tile code ------------------------------------------------
case("bytes_stored", statement_kernel(lambda x, out: ct.store(out, (0,), b"ab")), TTE,
     r"^Expected a tile or a scalar, got bytes b'ab'$", "b\"ab\"")
case("complex_operand", statement_kernel(lambda x, out: ct.store(out, (0,), tile(x) * 1j)),
     TTE, r"^Expected a tile or a scalar for the right operand, got complex 1j$",
     "tile(x) * 1j")
case("tile_as_a_dtype", statement_kernel(lambda x, out: ct.ones((4,), tile(x))), TTE,
     r'^Invalid argument "dtype" of ones\(\): Expected a dtype constant such as ct\.float32, '
     r'got float32 tile of shape \(4,\)$', "ct.ones((4,), tile(x))")

case("f_string_of_a_tile_stored", statement_kernel(
    lambda x, out: ct.store(out, (0,), f"{tile(x)}")), TTE,
    r"^Expected a tile or a scalar, got text of run-time values \(an f-string\)$",
    "f\"{tile(x)}\"")
case("print_to_a_file_in_a_lambda", statement_kernel(
    lambda x, out: (lambda: print(tile(x), file=None))()), TTE,
    r"^print\(\) in tile code takes sep= and end=, not file=$", "print(tile(x), file=None)")

# -- conversions: to a dtype that holds the value ---------------------------------------------
case("int64_of_two_to_the_64", statement_kernel(lambda x, out: ct.int64(2 ** 64)), TVE,
     r"^Integer constant 18446744073709551616 is out of range of any supported integer type",
     "ct.int64(2 ** 64)")

# -- loops -------------------------------------------------------------------------------------


@ct.kernel
def counts_down(x, out):
    t = tile(x)
    for i in range(8, 0, -1):
        t = t + 1
    ct.store(out, (0,), t)


case("range_counting_down", counts_down, TTE, r"^Step must be positive, got -1$",
     "range(8, 0, -1)")


# (its kernel's assert is in a module pytest does not rewrite)
ASSERT_CASE = BadInput("assert_on_a_tile", assert_on_a_tile, F32, TTE, CONDITION,
                       "assert t > 0")


@pytest.mark.parametrize("case", [c.param() for c in CASES + CONDITION_CASES])
def test_bad_input_fails_alike(case):
    check(case, module_file(__name__))


def test_an_assert_on_a_tile_fails_alike_at_its_condition():
    check(ASSERT_CASE, kernels_with_asserts.__file__)
    for run in (lambda: interpret(assert_on_a_tile, F32),
                lambda: ct.compile(assert_on_a_tile, F32, arch="sm_90")):
        with pytest.raises(TTE) as caught:
            run()
        loc = caught.value.loc
        assert loc.col == loc.source_line.index("t > 0"), loc


@pytest.mark.parametrize("case", [c.param() for c in CONDITION_CASES])
def test_a_condition_is_marked_where_it_is_written(case):
    for run in (lambda: interpret(case.kernel, case.args),
                lambda: ct.compile(case.kernel, case.args, arch="sm_90")):
        with pytest.raises(TTE) as caught:
            run()
        loc = caught.value.loc
        assert loc.col == loc.source_line.index(CONDITION_TEXT[case.name]), loc


# -- what is accepted alike, as cuTile accepts it ----------------------------------------------
@ct.kernel
def converts_constants(x, out):
    small = ct.int8(200)  # (the low bits, as cuTile truncates)
    ct.store(out, (0,), tile(x) + small + ct.uint8(-1))


@ct.kernel
def counts_down_at_compile_time(x, out):
    t = tile(x)
    for i in ct.static_iter(range(3, 0, -1)):
        t = t * 10 + i
    ct.store(out, (0,), t)


def test_truncating_constants_and_a_static_countdown_run_alike():
    x = arrays(np.float32)[0]
    for kernel, expected in ((converts_constants, x + (-56) + 255),
                             (counts_down_at_compile_time, ((x * 10 + 3) * 10 + 2) * 10 + 1)):
        out = np.full(4, np.nan, np.float32)
        interpret(kernel, (x, out))  # (a copy of out: run it directly to read the result)
        with ct.interpret():
            ct.launch(0, (1,), kernel, (x, out))
        np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64),
                                   rtol=1e-6)
        ct.compile(kernel, (x, out), arch="sm_90")
