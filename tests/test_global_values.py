"""Globals and captured values that tile code reads are constants, as in cuTile: a number, a
tuple, a dtype reads as its value, while an array (any library's) is cuTile's
``TileTypeError`` "Cannot create constant from value of type numpy.ndarray." at the read, in
every mode, in the order cuTile's typing finds errors: after those of the statements before
the read, whichever way a run-time branch goes, and not on the side of an ``if`` on a
constant that is not taken. Arrays reach tile code only as kernel arguments."""

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.rules.global_values import global_value_error, is_array, type_name

TILE = 8
SHAPE = (TILE,)
TABLE = np.arange(TILE, dtype=np.float32)
HOLDS_TABLE = (1, TABLE)


@ct.kernel
def reads_constants(x, out):
    ct.store(out, (0,), ct.load(x, (0,), SHAPE) + TILE)


def test_numbers_and_tuples_read_as_constants(run_kernel):
    x = np.ones(TILE, np.float32)
    out = np.zeros(TILE, np.float32)
    run_kernel(reads_constants, (1,), (x, out))
    np.testing.assert_array_equal(out, np.full(TILE, TILE + 1))


@ct.kernel
def reads_an_array(x, out):
    ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))


@ct.kernel
def reads_a_tuple_holding_an_array(x, out):
    first = HOLDS_TABLE[0]
    ct.store(out, (0,), ct.load(x, (0,), SHAPE) + first)


def _from_table(t):
    return t + ct.load(TABLE, (0,), SHAPE)


@ct.kernel
def helper_reads_an_array(x, out):
    ct.store(out, (0,), _from_table(ct.load(x, (0,), SHAPE)))


def _kernel_over(array):
    @ct.kernel
    def captures_an_array(x, out):
        ct.store(out, (0,), ct.load(array, (0,), SHAPE))
    return captures_an_array


@ct.kernel
def lambda_reads_an_array(x, out):
    read = lambda: ct.load(TABLE, (0,), SHAPE)  # noqa: E731
    ct.store(out, (0,), read())


@pytest.mark.parametrize("kernel,line", [
    (reads_an_array, "ct.load(TABLE, (0,), SHAPE))"),
    (reads_a_tuple_holding_an_array, "first = HOLDS_TABLE[0]"),
    (helper_reads_an_array, "return t + ct.load(TABLE, (0,), SHAPE)"),
    (_kernel_over(TABLE), "ct.load(array, (0,), SHAPE)"),
    (lambda_reads_an_array, "read = lambda: ct.load(TABLE, (0,), SHAPE)"),
], ids=["global", "tuple", "helper", "closure", "lambda"])
def test_an_array_read_as_a_global_is_a_type_error(run_kernel, kernel, line):
    x = np.ones(TILE, np.float32)
    with pytest.raises(ct.TileTypeError, match=r"Cannot create constant from value of type "
                                               r"numpy\.ndarray\.") as caught:
        run_kernel(kernel, (1,), (x, np.zeros(TILE, np.float32)))
    assert line in str(caught.value)


def _scatter_after(static_error):
    """A kernel whose first statement is ``static_error`` (a static error of cuTile's),
    the second a read of a captured array (as cuTile's conformance tests write it)."""
    if static_error == "static_eval":
        @ct.kernel
        def kernel(x):
            v = ct.static_eval(ct.static_eval(20))
            ct.scatter(y, (), v)
    else:
        @ct.kernel
        def kernel(x):
            v = ct.static_eval(ct.static_assert(20))
            ct.scatter(y, (), v)
    y = np.zeros((), dtype=np.int32)
    return kernel


@pytest.mark.parametrize("static_error", ["static_eval", "static_assert"])
def test_an_error_before_the_read_comes_first(run_kernel, static_error):
    # cuTile raises errors in the kernel's order: the read's comes after the statements' before
    with pytest.raises(ct.TileStaticEvalError, match=rf"{static_error}\(\) cannot be used "
                                                     rf"inside static_eval\(\)\."):
        run_kernel(_scatter_after(static_error), (1,), (np.zeros((), np.int32),))


@ct.kernel
def asserts_then_reads(x, out):
    ct.static_assert(x.ndim == 2, "a matrix")
    ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))


def test_a_static_assertion_before_the_read_comes_first(run_kernel):
    with pytest.raises(ct.TileStaticAssertionError, match="a matrix"):
        run_kernel(asserts_then_reads, (1,), (np.ones(TILE, np.float32),
                                              np.zeros(TILE, np.float32)))


@ct.kernel
def reads_then_asserts(x, out):
    ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))
    ct.static_assert(x.ndim == 2, "a matrix")


@ct.kernel
def reads_in_a_branch_not_taken(x, out):
    if ct.bid(0) == 7:  # a run-time condition: the compiler types both sides
        ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))
    ct.static_assert(x.ndim == 2, "a matrix")


@ct.kernel
def reads_on_the_constant_side_taken(x, out):
    if x.ndim == 1:
        ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))


@ct.kernel
def returns_before_the_read(x, out):
    if ct.bid(0) == 0:
        return
    ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))


@pytest.mark.parametrize("kernel", [reads_then_asserts, reads_in_a_branch_not_taken,
                                    reads_on_the_constant_side_taken, returns_before_the_read])
def test_the_read_is_an_error_wherever_the_compiler_types_it(run_kernel, kernel):
    # the read is typed in turn with the statements around it: its error before those of the
    # statements after it, whichever way a run-time branch goes (the interpreter raises it
    # though that block does not run the read)
    with pytest.raises(ct.TileTypeError, match=r"Cannot create constant from value of type "
                                               r"numpy\.ndarray\.") as caught:
        run_kernel(kernel, (1,), (np.ones(TILE, np.float32), np.zeros(TILE, np.float32)))
    assert "ct.load(TABLE, (0,), SHAPE))" in str(caught.value)


@ct.kernel
def reads_on_a_constant_side_not_taken(x, out):
    if x.ndim == 2:  # decided when the kernel compiles: this side is not typed
        ct.store(out, (0,), ct.load(TABLE, (0,), SHAPE))
    else:
        ct.store(out, (0,), ct.load(x, (0,), SHAPE) + 1)


def _plus_one_or_table(x):
    if x.ndim == 1:  # decided when the kernel compiles: what follows is not typed
        return ct.load(x, (0,), SHAPE) + 1
    return ct.load(TABLE, (0,), SHAPE)


@ct.kernel
def returns_on_a_constant_side_before_the_read(x, out):
    ct.store(out, (0,), _plus_one_or_table(x))


@pytest.mark.parametrize("kernel", [reads_on_a_constant_side_not_taken,
                                    returns_on_a_constant_side_before_the_read])
def test_a_read_the_compiler_does_not_type_is_no_error(run_kernel, kernel):
    out = np.zeros(TILE, np.float32)
    run_kernel(kernel, (1,), (np.ones(TILE, np.float32), out))
    np.testing.assert_array_equal(out, np.full(TILE, 2))


@ct.kernel
def static_eval_of_an_array(x, out):
    n = ct.static_eval(len(TABLE))  # a static expression is Python, run while compiling
    ct.store(out, (0,), ct.load(x, (0,), SHAPE) + n)


def test_a_static_expression_reads_a_global_array_as_python_does(run_kernel):
    out = np.zeros(TILE, np.float32)
    run_kernel(static_eval_of_an_array, (1,), (np.ones(TILE, np.float32), out))
    np.testing.assert_array_equal(out, np.full(TILE, TILE + 1))


class DLPackArray:  # what any array library hands to others
    def __dlpack__(self, stream=None):
        raise NotImplementedError


def test_array_values_and_type_names():
    assert type_name(np.zeros(2)) == "numpy.ndarray" and type_name([1]) == "list"
    assert type_name(DLPackArray()) == f"{__name__}.DLPackArray"
    assert is_array(DLPackArray()) and is_array(np.zeros(()))
    assert not is_array(ct.float32) and not is_array(np.float32) and not is_array(np)
    assert not is_array(np.float32(1)) and not is_array(DLPackArray)
    assert global_value_error((1, (2, ct.int8))) is None
    assert "DLPackArray" in str(global_value_error((1, (DLPackArray(),))))


def test_torch_tensors_are_named_as_cutile_names_them():
    torch = pytest.importorskip("torch")
    assert type_name(torch.zeros(2)) == "torch.Tensor"
    assert is_array(torch.zeros(2)) and not is_array(torch.float32)
