"""The interpreter and the compiler decide alike: each program below is rejected with the
same error class (and message) by both, or accepted by both with the same result."""

import numpy as np
import pytest

import numba_tile as ct


@ct.kernel
def extract_outside(x):
    t = ct.load(x, (0,), (8,))
    ct.store(x, (0,), ct.extract(t, (5,), (2,)))


@ct.kernel
def insert_outside(x):
    t = ct.load(x, (0,), (8,))
    ct.store(x, (0,), ct.insert(t, (4,), ct.zeros((2,), ct.float32)))


@ct.kernel
def full_out_of_range(x):
    ct.store(x, (0,), ct.full((4,), 1e20, ct.int32))


@ct.kernel
def arange_start_out_of_range(x):
    ct.store(x, (0,), ct.arange(4, dtype=ct.int8, start=300.0))


@ct.kernel
def huge_integer_constant(x):
    t = ct.load(x, (0,), (4,))
    ct.store(x, (0,), t + 2 ** 100)


@ct.kernel
def float_bitwise_or(x):
    t = ct.load(x, (0,), (4,))
    ct.store(x, (0,), 2.0 | t)


@ct.kernel
def float_bitwise_xor_reflected(x):
    t = ct.load(x, (0,), (4,))
    ct.store(x, (0,), 1.5 ^ t)


@ct.kernel
def store_a_tuple(x):
    t = ct.load(x, (0,), (8,))
    ct.store(x, (0,), (t, t))


@pytest.mark.parametrize("kernel,dtype,error,message", [
    (store_a_tuple, np.float32, ct.TileTypeError, "Expected a tile or a scalar, got tuple"),
    (extract_outside, np.float32, ct.TileTypeError,
     r"Index 5 out of bounds at dimension #0: valid range is \[0, 4\) in tile space \(input "
     r"shape \(8,\), result shape \(2,\)\)"),
    (insert_outside, np.float32, ct.TileTypeError,
     r"Index 4 out of bounds at dimension #0: valid range is \[0, 4\) in tile space \(input "
     r"shape \(8,\), value shape \(2,\)\)"),
    (full_out_of_range, np.int32, ct.TileValueError,
     "Integer constant 100000000000000000000 is out of range of int32"),
    (arange_start_out_of_range, np.int8, ct.TileValueError,
     "Integer constant 300 is out of range of int8"),
    (huge_integer_constant, np.int32, ct.TileValueError,
     "Integer constant 1267650600228229401496703205376 is out of range"),
    (float_bitwise_or, np.int32, ct.TileTypeError,
     r"^Bitwise operations require integers or booleans"),
    (float_bitwise_xor_reflected, np.int32, ct.TileTypeError,
     r"^Bitwise operations require integers or booleans"),
], ids=lambda v: getattr(v, "__name__", None))
def test_both_executors_reject(run_kernel, kernel, dtype, error, message):
    with pytest.raises(error, match=message):
        run_kernel(kernel, (1,), (np.zeros(8, dtype),))


@ct.kernel
def cast_through(x, dt, mode):
    t = ct.load(x, (0,), (8,), padding_mode=mode)
    ct.store(x, (0,), ct.astype(ct.astype(t, dt), x.dtype))


@pytest.mark.parametrize("dtype", [ct.int16, np.int16, np.dtype("int16")], ids=str)
def test_a_dtype_and_an_enum_as_plain_arguments(run_kernel, dtype):
    x = np.arange(6, dtype=np.float32) + 0.5
    run_kernel(cast_through, (1,), (x, dtype, ct.PaddingMode.ZERO))
    np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32))
