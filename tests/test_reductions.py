"""Reductions: sum, prod, max, min, argmax, argmin (API.md section 3, "Reductions and scans").

Every kernel loads a whole tile from ``x``, reduces it and stores the result into ``out``; the
result is compared with NumPy (computed in float64, or exactly for integers). Inside the kernel
``ct.static_assert`` checks the result's dtype and shape.
"""

import functools

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float16, np.float32, np.float64, ml_dtypes.bfloat16]
ALL_DTYPES = INT_DTYPES + FLOAT_DTYPES
# Relative error allowed for sum/prod (the result is rounded to the input dtype).
TOLERANCE = {np.dtype(np.float16): 5e-3, np.dtype(ml_dtypes.bfloat16): 3e-2,
             np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}

OPS = ["sum", "prod", "max", "min", "argmax", "argmin"]
ARG_OPS = ["argmax", "argmin"]
VALUE_OPS = ["sum", "prod", "max", "min"]

AXIS_CASES = [
    ((16,), None), ((16,), 0), ((16,), -1), ((16,), (0,)),
    ((4, 8), None), ((4, 8), 0), ((4, 8), 1), ((4, 8), -1), ((4, 8), -2), ((4, 8), (1,)),
    ((4, 8), (0, 1)), ((4, 8), (-1, 0)),
    ((2, 4, 8), None), ((2, 4, 8), 0), ((2, 4, 8), 1), ((2, 4, 8), 2), ((2, 4, 8), -1),
    ((2, 4, 8), -3), ((2, 4, 8), (0, 2)), ((2, 4, 8), (1, 2)), ((2, 4, 8), (-1, 0)),
    ((2, 4, 8), (0, 1, 2)),
]
INT_AXIS_CASES = [c for c in AXIS_CASES if not isinstance(c[1], tuple)]
TUPLE_AXIS_CASES = [c for c in AXIS_CASES if isinstance(c[1], tuple)]


def is_float(dtype):
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == np.dtype(ml_dtypes.bfloat16)


def ct_dtype(dtype):
    return {np.dtype(ml_dtypes.bfloat16): ct.bfloat16}.get(np.dtype(dtype)) or \
        getattr(ct, np.dtype(dtype).name)


# -- kernels --------------------------------------------------------------------------------
@functools.cache
def reduce_kernel(op_name):
    op = getattr(ct, op_name)

    @ct.kernel
    def kernel(x, out, SHAPE: ct.Constant, IN_INDEX: ct.Constant, OUT_INDEX: ct.Constant,
               AXIS: ct.Constant, KEEPDIMS: ct.Constant[bool], RESULT_SHAPE: ct.Constant,
               RESULT_DTYPE: ct.Constant):
        t = ct.load(x, index=IN_INDEX, shape=SHAPE)
        r = op(t, axis=AXIS, keepdims=KEEPDIMS)
        ct.static_assert(r.dtype == RESULT_DTYPE, "wrong result dtype")
        ct.static_assert(r.shape == RESULT_SHAPE, "wrong result shape")
        ct.store(out, index=OUT_INDEX, tile=r)

    return kernel


@functools.cache
def nan_kernel(op_name):
    op = getattr(ct, op_name)

    @ct.kernel
    def kernel(x, out, SHAPE: ct.Constant, IN_INDEX: ct.Constant, OUT_INDEX: ct.Constant,
               AXIS: ct.Constant, PROPAGATE: ct.Constant[bool]):
        t = ct.load(x, index=IN_INDEX, shape=SHAPE)
        ct.store(out, index=OUT_INDEX, tile=op(t, axis=AXIS, propagate_nan=PROPAGATE))

    return kernel


# -- host helpers ---------------------------------------------------------------------------
def normalized_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in items))


def result_shape(shape, axis, keepdims):
    axes = normalized_axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def poisoned(shape, dtype):
    """An output array (at least 1-d) filled with NaN or an integer sentinel."""
    shape = shape or (1,)
    if is_float(dtype):
        return np.full(shape, np.nan, dtype)
    return np.full(shape, np.iinfo(dtype).max, dtype)  # no test result reaches it


def random_input(rng, op, shape, dtype):
    """Random non-zero values chosen so that no integer result overflows ``dtype``."""
    size = int(np.prod(shape))
    signed = is_float(dtype) or np.dtype(dtype).kind == "i"
    sign = rng.choice([-1, 1], size=shape) if signed else np.ones(shape, np.int64)
    if is_float(dtype):
        low, high = (0.75, 1.25) if op == "prod" else (0.25, 1.0)
        return (sign * rng.uniform(low, high, size=shape)).astype(dtype)
    if op == "prod":  # +-1 everywhere, six 2s: every partial product fits in 7 bits
        magnitude = np.ones(size, np.int64)
        magnitude[rng.choice(size, 6, replace=False)] = 2
        return (sign * magnitude.reshape(shape)).astype(dtype)
    if op == "sum":
        largest = max(1, min(5, int(np.iinfo(dtype).max) // size))
    else:
        largest = 50
    return (sign * rng.integers(1, largest + 1, size=shape)).astype(dtype)


def arg_reduce(op, x, axis, keepdims, nan_first=False):
    """argmax/argmin as the row-major index within the reduced axes (first occurrence).

    NaN is ignored, or with ``nan_first`` the first NaN wins (NumPy's argmax/argmin).
    """
    axes = normalized_axes(axis, x.ndim)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x.astype(np.float64), kept + list(axes))
    flat = moved.reshape(moved.shape[:len(kept)] + (-1,))
    if nan_first:
        fn = np.argmax if op == "argmax" else np.argmin
    else:
        fn = np.nanargmax if op == "argmax" else np.nanargmin
    index = fn(flat, axis=-1).astype(np.int32)
    return index.reshape(result_shape(x.shape, axis, keepdims))


def expected_reduction(op, x, axis, keepdims):
    if op in ARG_OPS:
        return arg_reduce(op, x, axis, keepdims)
    axes = normalized_axes(axis, x.ndim)
    wide = x.astype(np.float64 if is_float(x.dtype) else np.int64)
    fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
    result = fn(wide, axis=axes, keepdims=keepdims)
    if not is_float(x.dtype):
        info = np.iinfo(x.dtype)
        assert np.all((result >= info.min) & (result <= info.max)), "test input overflows"
    return result


def run_reduction(run_kernel, op, x, axis, keepdims, out_dtype=None):
    shape = result_shape(x.shape, axis, keepdims)
    out_dtype = out_dtype or (np.int32 if op in ARG_OPS else x.dtype)
    out = poisoned(shape, out_dtype)
    result_dtype = ct.int32 if op in ARG_OPS else ct_dtype(x.dtype)
    run_kernel(reduce_kernel(op), (1,), (x, out, x.shape, (0,) * x.ndim, (0,) * out.ndim,
                                         axis, keepdims, shape, result_dtype))
    return out.reshape(shape)


def check(op, actual, expected, dtype):
    if op in ("sum", "prod") and is_float(dtype):
        assert relative_error(actual, expected) <= TOLERANCE[np.dtype(dtype)]
    else:  # integers, max/min and indices are exact
        np.testing.assert_array_equal(actual.astype(np.float64), expected)


# -- tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,axis", [((4, 8), 1), ((2, 4, 8), None), ((32,), 0)])
def test_reduction_dtypes(run_kernel, rng, op, dtype, shape, axis):
    x = random_input(rng, op, shape, dtype)
    actual = run_reduction(run_kernel, op, x, axis, False)
    check(op, actual, expected_reduction(op, x, axis, False), dtype)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape,axis", AXIS_CASES, ids=str)
@pytest.mark.parametrize("op", VALUE_OPS)
def test_reduction_axes(run_kernel, rng, op, shape, axis, dtype, keepdims):
    x = random_input(rng, op, shape, dtype)
    actual = run_reduction(run_kernel, op, x, axis, keepdims)
    check(op, actual, expected_reduction(op, x, axis, keepdims), dtype)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape,axis", INT_AXIS_CASES, ids=str)
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_reduction_axes(run_kernel, rng, op, shape, axis, dtype, keepdims):
    x = random_input(rng, op, shape, dtype)
    actual = run_reduction(run_kernel, op, x, axis, keepdims)
    check(op, actual, arg_reduce(op, x, axis, keepdims), dtype)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape,axis", TUPLE_AXIS_CASES, ids=str)
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_reduction_tuple_axes(run_kernel, rng, op, shape, axis, keepdims):
    """With several axes, the index is row-major within the reduced axes."""
    x = random_input(rng, op, shape, np.float32)
    actual = run_reduction(run_kernel, op, x, axis, keepdims)
    check(op, actual, arg_reduce(op, x, axis, keepdims), np.float32)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float16, np.float32])
@pytest.mark.parametrize("shape,axis", [((32,), None), ((4, 8), 1), ((4, 8), 0),
                                         ((2, 4, 8), None), ((2, 4, 8), -1)], ids=str)
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_reduction_ties_pick_first(run_kernel, rng, op, shape, axis, dtype):
    x = rng.integers(1, 4, size=shape).astype(dtype)  # only three values: many ties
    actual = run_reduction(run_kernel, op, x, axis, False)
    np.testing.assert_array_equal(actual, arg_reduce(op, x, axis, False))


def test_argmax_first_of_equal_maxima_explicit(run_kernel):
    x = np.array([[1, 7, 3, 7], [7, 7, 7, 7], [2, 1, 2, 1], [5, 0, 6, 6]], np.float32)
    np.testing.assert_array_equal(run_reduction(run_kernel, "argmax", x, 1, False),
                                  [1, 0, 0, 2])
    np.testing.assert_array_equal(run_reduction(run_kernel, "argmin", x, 1, False),
                                  [0, 0, 1, 1])


def nan_input(rng, shape, dtype):
    """Random values with NaNs in about a fifth of the places; row 0 and column 0 have none,
    so no slice is all NaN and some slices along each axis are NaN-free."""
    x = rng.choice([-1, 1], size=shape) * rng.uniform(0.25, 1.0, size=shape)
    x[rng.random(shape) < 0.2] = np.nan
    x[0, :] = rng.uniform(-1.0, -0.5, size=shape[1])
    x[:, 0] = rng.uniform(0.5, 1.0, size=shape[0])
    assert np.isnan(x).any(axis=0).any() and np.isnan(x).any(axis=1).any()
    return x.astype(dtype)


def run_nan(run_kernel, op, x, axis, propagate):
    shape = result_shape(x.shape, axis, False)
    out = poisoned(shape, np.int32 if op in ARG_OPS else x.dtype)
    run_kernel(nan_kernel(op), (1,), (x, out, x.shape, (0,) * x.ndim, (0,) * out.ndim, axis,
                                      propagate))
    return out.reshape(shape)


@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_nan(run_kernel, rng, op, axis, dtype, propagate):
    x = nan_input(rng, (8, 8), dtype)
    actual = run_nan(run_kernel, op, x, axis, propagate)
    if propagate:
        fn = np.max if op == "max" else np.min
    else:
        fn = np.nanmax if op == "max" else np.nanmin
    expected = fn(x.astype(np.float64), axis=axis)
    np.testing.assert_array_equal(actual.astype(np.float64), expected)


@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_reduction_nan(run_kernel, rng, op, axis, dtype, propagate):
    """NaN is ignored by default; with propagate_nan the (first) NaN is the result."""
    x = nan_input(rng, (8, 8), dtype)
    actual = run_nan(run_kernel, op, x, axis, propagate)
    np.testing.assert_array_equal(actual, arg_reduce(op, x, axis, False, nan_first=propagate))


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_reduction_of_bool_counts_in_int32(run_kernel, rng, op):
    """cuTile reduces a bool tile as int32: ``sum`` counts the true elements."""
    reduce = getattr(ct, op)

    @ct.kernel
    def kernel(x, out):
        t = ct.load(x, (0, 0), (4, 8)) > 0.0
        r = reduce(t, 1)
        ct.static_assert(r.dtype == ct.int32)
        ct.store(out, (0,), r)

    x = rng.standard_normal((4, 8)).astype(np.float32)
    x[2] = -1.0  # (a row of no true element)
    out = np.full(4, -7, np.int32)
    run_kernel(kernel, (1,), (x, out))
    expected = getattr(np, op)((x > 0).astype(np.int32), axis=1)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("axis, error", [
    (2, ct.TileTypeError), (-3, ct.TileTypeError), (5, ct.TileTypeError),
    ((0, 2), ct.TileTypeError),  # out of range: cuTile's TileTypeError
    ((0, 0), ct.TileValueError), ((1, -1), ct.TileValueError)])  # repeated
@pytest.mark.parametrize("op", OPS)
def test_bad_axis_is_an_error(run_kernel, op, axis, error):
    x = np.ones((4, 8), np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(error):
        run_kernel(reduce_kernel(op), (1,), (x, out, (4, 8), (0, 0), (0,), axis, False, (),
                                             ct.float32))


@functools.cache
def runtime_axis_kernel(op_name, constant):
    op = getattr(ct, op_name)

    def body(x, out, axis):
        t = ct.load(x, (0, 0), (4, 8))
        ct.store(out, (0,), op(t, axis=axis))

    if constant:
        def body_constant(x, out, axis: ct.Constant[int]):
            body(x, out, axis)
        return ct.kernel(body_constant)
    return ct.kernel(body)


@pytest.mark.parametrize("op", OPS)
def test_non_constant_axis_is_type_error(run_kernel, op):
    x = np.ones((4, 8), np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(runtime_axis_kernel(op, True), (1,), (x, out, 0))  # the control: a constant
    assert not np.isnan(out).any()
    with pytest.raises(ct.TileTypeError):
        run_kernel(runtime_axis_kernel(op, False), (1,), (x, out, 0))


# -- found by the differential fuzzer (tests/tile_programs.py) --------------------------------
@ct.kernel
def max_min_of_negated(x, out_max, out_min):
    t = -ct.load(x, index=(ct.bid(0),), shape=(8,))
    ct.store(out_max, index=(ct.bid(0),), tile=ct.max(t, keepdims=True))
    ct.store(out_min, index=(ct.bid(0),), tile=ct.min(t, keepdims=True))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_max_and_min_of_a_negated_integer_tile(run_kernel, dtype):
    """ptxas 13.0 drops the negation of one element of ``ct.max(-t)`` for int32 and narrower
    tiles on sm_90 (the compiler hides the negation from it)."""
    x = np.random.default_rng(0).integers(-20, 20, 64).astype(dtype)
    out_max, out_min = np.full(8, 99, dtype), np.full(8, 99, dtype)
    run_kernel(max_min_of_negated, (8,), (x, out_max, out_min))
    np.testing.assert_array_equal(out_max, (-x.reshape(8, 8)).max(1))
    np.testing.assert_array_equal(out_min, (-x.reshape(8, 8)).min(1))


@ct.kernel
def signed_zero_max_min(x, y, out):
    a = ct.load(x, index=(0,), shape=(4,))
    b = ct.load(y, index=(0,), shape=(4,))
    ct.store(out, index=(0, 0), tile=ct.reshape(ct.maximum(a, b), (1, 4)))
    ct.store(out, index=(1, 0), tile=ct.reshape(ct.minimum(a, b), (1, 4)))
    both = ct.reshape(ct.cat((ct.reshape(a, (4, 1)), ct.reshape(b, (4, 1))), 1), (4, 2))
    ct.store(out, index=(2, 0), tile=ct.reshape(ct.max(both, axis=1), (1, 4)))
    ct.store(out, index=(3, 0), tile=ct.reshape(ct.min(both, axis=1), (1, 4)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_minus_zero_is_below_plus_zero(run_kernel, dtype):
    """max/min of +0.0 and -0.0, elementwise and reduced, in either order: -0.0 counts below
    +0.0 (IEEE 754-2019; the GPU's min/max), so the sign of a zero result is defined."""
    x = np.array([0.0, -0.0, -0.0, 0.0], dtype)
    y = np.array([-0.0, 0.0, -0.0, 0.0], dtype)
    out = np.full((4, 4), 7.0, dtype)
    run_kernel(signed_zero_max_min, (1,), (x, y, out))
    assert (out == 0).all()
    maximum_negative = [False, False, True, False]
    minimum_negative = [True, True, True, False]
    np.testing.assert_array_equal(np.signbit(out.astype(np.float64)),
                                  [maximum_negative, minimum_negative,
                                   maximum_negative, minimum_negative])
