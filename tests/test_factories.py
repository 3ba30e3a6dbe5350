"""Tile factories: arange, full, zeros, ones, astile (API.md section 3, "Factories").

Each kernel builds a tile with a factory and stores it; the result is compared with NumPy and
``ct.static_assert`` checks its shape and dtype inside the kernel.
"""

import functools

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error

BF16 = ml_dtypes.bfloat16
CT_TO_NP = {ct.int8: np.int8, ct.int16: np.int16, ct.int32: np.int32, ct.int64: np.int64,
            ct.uint8: np.uint8, ct.uint16: np.uint16, ct.uint32: np.uint32,
            ct.uint64: np.uint64, ct.float16: np.float16, ct.float32: np.float32,
            ct.float64: np.float64, ct.bfloat16: BF16}
DTYPES = list(CT_TO_NP)


def is_float(np_dtype):
    return np.dtype(np_dtype).kind == "f" or np.dtype(np_dtype) == np.dtype(BF16)


def poisoned(shape, np_dtype):
    shape = shape or (1,)
    if is_float(np_dtype):
        return np.full(shape, np.nan, np_dtype)
    return np.full(shape, 0x5A, np_dtype)


@functools.cache
def factory_kernel(fn):
    @ct.kernel
    def kernel(out, OUT_INDEX: ct.Constant, RESULT_SHAPE: ct.Constant,
               RESULT_DTYPE: ct.Constant):
        r = fn()
        ct.static_assert(r.shape == RESULT_SHAPE, "wrong result shape")
        ct.static_assert(r.dtype == RESULT_DTYPE, "wrong result dtype")
        ct.store(out, OUT_INDEX, r)

    return kernel


def run_factory(run_kernel, fn, shape, dtype):
    """Run ``fn()`` in a kernel; return its result as a NumPy array of ``shape``."""
    out = poisoned(shape, CT_TO_NP[dtype])
    run_kernel(factory_kernel(fn), (1,), (out, (0,) * out.ndim, shape, dtype))
    return out.reshape(shape)


def expected_values(values, dtype):
    """Exact values (float64 or Python ints) rounded once to ``dtype``."""
    np_dtype = CT_TO_NP[dtype]
    values = np.asarray(values, np.float64 if is_float(np_dtype) else np.int64)
    return values.astype(np_dtype)


def assert_equal_values(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual.astype(np.float64), expected.astype(np.float64))


# -- arange ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("size", [1, 2, 16, 64])
def test_arange_dtypes(run_kernel, dtype, size):
    actual = run_factory(run_kernel, lambda: ct.arange(size, dtype=dtype), (size,), dtype)
    assert_equal_values(actual, expected_values(np.arange(size), dtype))


ARANGE_CASES = [  # (size, dtype, start, step)
    (8, ct.int32, 5, 1), (8, ct.int32, -3, 1), (16, ct.int32, 2, 3), (8, ct.int64, 7, -2),
    (8, ct.int16, -100, 25), (4, ct.uint8, 200, 10), (8, ct.uint32, 1, 4),
    (8, ct.float32, 1, 0.5), (8, ct.float32, -1.25, 0.25), (16, ct.float32, 0.5, 2),
    (8, ct.float16, 3, 0.5), (8, ct.float64, 0.1, 0.1), (8, ct.bfloat16, -2, 0.75),
    (32, ct.float32, 0.0, 0.1),
]


@pytest.mark.parametrize("size,dtype,start,step", ARANGE_CASES, ids=str)
def test_arange_start_step(run_kernel, size, dtype, start, step):
    actual = run_factory(run_kernel, lambda: ct.arange(size, dtype=dtype, start=start,
                                                        step=step), (size,), dtype)
    if is_float(CT_TO_NP[dtype]):
        exact = start + step * np.arange(size, dtype=np.float64)
        assert relative_error(actual, exact) <= {ct.float16: 1e-3, ct.bfloat16: 8e-3}.get(
            dtype, 1e-6)
    else:
        assert_equal_values(actual, expected_values([start + step * i for i in range(size)],
                                                    dtype))


# -- full, zeros, ones ----------------------------------------------------------------------
FULL_CASES = [  # (shape, value, dtype)
    ((4, 8), 3.5, ct.float32), ((16,), -7, ct.int8), ((2, 4, 8), 2, ct.uint16),
    ((4,), 1.5, ct.bfloat16), ((8,), 0.1, ct.float64), ((8,), 0.1, ct.float16),
    ((2, 2), -123456789, ct.int64), ((1,), 255, ct.uint8), ((8, 8), 2.0, ct.int32),
    ((4, 4), 7, ct.float32), ((32,), -1e20, ct.float32), ((), 42, ct.int32),
    ((), -0.5, ct.float16),
]


@pytest.mark.parametrize("shape,value,dtype", FULL_CASES, ids=str)
def test_full_constant(run_kernel, shape, value, dtype):
    actual = run_factory(run_kernel, lambda: ct.full(shape, value, dtype), shape, dtype)
    assert_equal_values(actual, expected_values(np.full(shape, value), dtype))


@pytest.mark.parametrize("shape", [(1,), (8,), (4, 8), (2, 2, 4), ()], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("factory,value", [(ct.zeros, 0), (ct.ones, 1)],
                         ids=["zeros", "ones"])
def test_zeros_ones(run_kernel, factory, value, dtype, shape):
    actual = run_factory(run_kernel, lambda: factory(shape, dtype), shape, dtype)
    assert_equal_values(actual, expected_values(np.full(shape, value), dtype))


@functools.cache
def runtime_full_kernel():
    @ct.kernel
    def kernel(out, value, SHAPE: ct.Constant, OUT_INDEX: ct.Constant,
               DTYPE: ct.Constant):
        r = ct.full(SHAPE, value, DTYPE)
        ct.static_assert(r.shape == SHAPE, "wrong result shape")
        ct.static_assert(r.dtype == DTYPE, "wrong result dtype")
        ct.store(out, OUT_INDEX, r)

    return kernel


@pytest.mark.parametrize("shape,value,dtype", [
    ((4, 8), 2.5, ct.float32), ((16,), -1.75, ct.float16), ((8,), 3.25, ct.float64),
    ((4,), 0.5, ct.bfloat16), ((2, 4), 7, ct.int32), ((8,), -9, ct.int8),
    ((8,), 300000, ct.int64), ((4, 4), 11, ct.uint16), ((8,), 5, ct.float32),
], ids=str)
def test_full_runtime_value(run_kernel, shape, value, dtype):
    """fill_value from a kernel argument: an int arrives as int32, a float as float32."""
    out = poisoned(shape, CT_TO_NP[dtype])
    run_kernel(runtime_full_kernel(), (1,), (out, value, shape, (0,) * out.ndim, dtype))
    assert_equal_values(out, expected_values(np.full(shape, value), dtype))


def test_full_runtime_values_per_block(run_kernel, rng):
    """Each block fills its tile from its own run-time value."""
    @ct.kernel
    def kernel(out, values):
        v = ct.load(values, (ct.bid(0),), ())
        ct.store(out, (ct.bid(0), 0), ct.full((1, 8), v * 2.0, ct.float32))

    values = rng.uniform(0.5, 2.0, size=4).astype(np.float32)
    out = np.full((4, 8), np.nan, np.float32)
    run_kernel(kernel, (4,), (out, values))
    np.testing.assert_array_equal(out, np.repeat(values[:, None] * 2, 8, axis=1))


@pytest.mark.parametrize("factory,size,dtype,value", [
    (lambda n, dt: ct.full(n, 2.5, dt), 8, ct.float32, 2.5),
    (lambda n, dt: ct.zeros(n, dt), 4, ct.int32, 0),
    (lambda n, dt: ct.ones(n, dt), 16, ct.float16, 1),
], ids=["full", "zeros", "ones"])
def test_int_shape_is_1d(run_kernel, factory, size, dtype, value):
    """``Shape = int | tuple[int, ...]``: an int shape makes a 1-d tile."""
    actual = run_factory(run_kernel, lambda: factory(size, dtype), (size,), dtype)
    assert_equal_values(actual, expected_values(np.full(size, value), dtype))


# -- astile ---------------------------------------------------------------------------------
ASTILE_CASES = [  # (value, dtype)
    (5, ct.int8), (-3, ct.int32), (2.5, ct.float32), (0.1, ct.float64), (7, ct.float16),
    (1.5, ct.bfloat16), (200, ct.uint8),
    ((1, 2, 3, 4), ct.int16), ((1.5, -2.5), ct.float32), (((1, 2), (3, 4)), ct.float32),
    (((1, -2), (3, -4)), ct.int64), ((((1, 2), (3, 4)), ((5, 6), (7, 8))), ct.int32),
    (((0.1, 0.2, 0.3, 0.4), (0.5, 0.6, 0.7, 0.8)), ct.float16), ((1, 2.5), ct.float64),
]


@pytest.mark.parametrize("value,dtype", ASTILE_CASES, ids=str)
def test_astile(run_kernel, value, dtype):
    shape = np.shape(value)
    actual = run_factory(run_kernel, lambda: ct.astile(value, dtype=dtype), shape, dtype)
    assert_equal_values(actual, expected_values(np.array(value), dtype))


# -- errors ---------------------------------------------------------------------------------
ERROR_CASES = [  # (a shape of other than positive powers of two: cuTile's TileTypeError)
    ("arange-6", lambda: ct.arange(6, dtype=ct.int32), ct.TileTypeError),
    ("arange-12", lambda: ct.arange(12, dtype=ct.float32), ct.TileTypeError),
    ("full-(3,4)", lambda: ct.full((3, 4), 1.0, ct.float32), ct.TileTypeError),
    ("full-(4,6)", lambda: ct.full((4, 6), 1, ct.int32), ct.TileTypeError),
    ("zeros-(4,6)", lambda: ct.zeros((4, 6), ct.float32), ct.TileTypeError),
    ("zeros-(0,)", lambda: ct.zeros((0,), ct.float32), ct.TileTypeError),
    ("ones-(5,)", lambda: ct.ones((5,), ct.int32), ct.TileTypeError),
    ("ones-(2,2,3)", lambda: ct.ones((2, 2, 3), ct.float16), ct.TileTypeError),
    ("astile-3-elements", lambda: ct.astile((1, 2, 3), dtype=ct.int32), ct.TileTypeError),
    ("full-dtype-string", lambda: ct.full((4,), 1, "foo"), ct.TileTypeError),
    ("full-tile-fill", lambda: ct.full((4,), ct.zeros((4,), ct.float32), ct.float32),
     ct.TileTypeError),
    ("full-300-int8", lambda: ct.full((4,), 300, ct.int8), ct.TileValueError),
    ("full--129-int8", lambda: ct.full((4,), -129, ct.int8), ct.TileValueError),
    ("full--1-uint8", lambda: ct.full((4,), -1, ct.uint8), ct.TileValueError),
    ("full-70000-int16", lambda: ct.full((2, 2), 70000, ct.int16), ct.TileValueError),
    ("astile-300-int8", lambda: ct.astile(300, dtype=ct.int8), ct.TileValueError),
    ("astile-tuple-256-uint8", lambda: ct.astile((1, 256), dtype=ct.uint8),
     ct.TileValueError),
    ("arange-start-200-int8", lambda: ct.arange(8, dtype=ct.int8, start=200),
     ct.TileValueError),
    ("arange-start--1-uint8", lambda: ct.arange(4, dtype=ct.uint8, start=-1),
     ct.TileValueError),
    ("astile-ragged", lambda: ct.astile(((1, 2), (3,)), dtype=ct.int32),
     (ct.TileTypeError, ct.TileValueError)),
    ("astile-ragged-2", lambda: ct.astile(((1, 2), 3), dtype=ct.int32),
     (ct.TileTypeError, ct.TileValueError)),
]


@pytest.mark.parametrize("name,fn,error", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_factory_errors(run_kernel, name, fn, error):
    with pytest.raises(error):
        run_kernel(error_kernel(fn), (1,), (np.zeros(1, np.float32),))


@functools.cache
def error_kernel(fn):
    @ct.kernel
    def kernel(out):  # valid for a tile of any shape and dtype
        ct.store(out, (0,), ct.sum(ct.astype(fn(), ct.float32)))

    return kernel


def test_error_kernel_control(run_kernel):
    out = np.full(1, np.nan, np.float32)
    run_kernel(error_kernel(lambda: ct.full((4,), 100, ct.int8)), (1,), (out,))
    assert out[0] == 400.0
