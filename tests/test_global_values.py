"""Globals and captured values that tile code reads are constants, as in cuTile: a number, a
tuple, a dtype reads as its value, while an array (any library's) is cuTile's
``TileTypeError`` "Cannot create constant from value of type numpy.ndarray." at the read, in
every mode. Arrays reach tile code only as kernel arguments."""

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
