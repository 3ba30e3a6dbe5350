"""``cumsum`` and ``cumprod``: every dtype, every axis, forward and reversed, long rows that
span lanes and warps, and the errors cuTile raises. Floats are compared with NumPy in
float64 by relative error; integers exactly (they wrap in their dtype).
"""

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error


@ct.kernel
def scan_2d(x, y, OP: ct.Constant[int], AXIS: ct.Constant[int], REVERSE: ct.Constant[bool],
            M: ct.Constant[int], N: ct.Constant[int]):
    t = ct.load(x, (ct.bid(0), 0), (M, N))
    if OP == 0:
        ct.store(y, (ct.bid(0), 0), ct.cumsum(t, axis=AXIS, reverse=REVERSE))
    else:
        ct.store(y, (ct.bid(0), 0), ct.cumprod(t, axis=AXIS, reverse=REVERSE))


def _expected(op, x, axis, reverse, dtype):
    values = np.flip(x, axis) if reverse else x
    if np.dtype(dtype).kind == "f" or dtype == ml_dtypes.bfloat16:
        values = values.astype(np.float64)
        out = np.cumsum(values, axis) if op == 0 else np.cumprod(values, axis)
    else:
        work = np.int32 if dtype == np.bool_ else dtype
        with np.errstate(over="ignore"):
            out = (np.cumsum if op == 0 else np.cumprod)(values.astype(work), axis, dtype=work)
    return np.flip(out, axis) if reverse else out


def _inputs(rng, op, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) < (0.5 if op == 0 else 0.95)
    if np.dtype(dtype).kind in "iu":
        low = 0 if np.dtype(dtype).kind == "u" else -3
        return rng.integers(low, 4, shape).astype(dtype)
    if op == 1:  # products of values near 1 stay representable
        return rng.uniform(0.9, 1.1, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize("op", [0, 1], ids=["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int32, np.int8, np.uint16, np.int64, np.bool_])
@pytest.mark.parametrize("axis,reverse", [(1, False), (1, True), (0, False), (-2, True)])
def test_scans_of_every_dtype_along_every_axis(run_kernel, rng, op, dtype, axis, reverse):
    shape = (16, 64)
    x = _inputs(rng, op, (32, 64), dtype)
    out_dtype = np.int32 if dtype == np.bool_ else dtype
    y = np.full((32, 64), 77, out_dtype)
    run_kernel(scan_2d, (2,), (x, y, op, axis, reverse, *shape))
    expected = np.concatenate([_expected(op, x[i:i + 16], axis, reverse, dtype)
                               for i in (0, 16)])
    if np.dtype(out_dtype).kind in "iu":
        np.testing.assert_array_equal(y, expected.astype(out_dtype))
    else:
        tolerance = {np.float16: 2e-3, ml_dtypes.bfloat16: 1e-2}.get(dtype, 1e-6)
        assert relative_error(y, expected) < tolerance


@ct.kernel
def directed_cumsum(x, y, MODE: ct.Constant[ct.RoundingMode]):
    ct.store(y, (0,), ct.cumsum(ct.load(x, (0,), (64,)), rounding_mode=MODE))


@pytest.mark.parametrize("mode", [ct.RoundingMode.RZ, ct.RoundingMode.RM, ct.RoundingMode.RP])
def test_directed_rounding_rounds_the_exact_running_sums(run_kernel, rng, mode):
    """Accumulated in float64, each output rounded once in the mode: below the exact sums
    for RM, above them for RP, towards zero for RZ."""
    x = rng.uniform(-1, 1, 64).astype(np.float32)
    y = np.full(64, np.nan, np.float32)
    run_kernel(directed_cumsum, (1,), (x, y, mode))
    exact = np.cumsum(x.astype(np.float64))
    low, high = y.astype(np.float64) <= exact, y.astype(np.float64) >= exact
    assert {ct.RoundingMode.RM: low, ct.RoundingMode.RP: high,
            ct.RoundingMode.RZ: np.where(exact > 0, low, high)}[mode].all()
    assert relative_error(y, exact) < 1e-6


@ct.kernel
def row_cumsum(x, y, N: ct.Constant[int]):
    t = ct.load(x, (ct.bid(0), 0), (1, N))
    ct.store(y, (ct.bid(0), 0), ct.cumsum(t, axis=1))


@pytest.mark.parametrize("n", [4096, 256, 8])
def test_long_rows_span_lanes_and_warps(run_kernel, rng, n):
    x = rng.uniform(-1, 1, (3, n)).astype(np.float32)
    y = np.full((3, n), np.nan, np.float32)
    run_kernel(row_cumsum, (3,), (x, y, n))
    assert relative_error(y, np.cumsum(x.astype(np.float64), axis=1)) < 1e-5


@ct.kernel
def scan_3d(x, y):
    t = ct.load(x, (0, 0, 0), (4, 8, 16))
    ct.store(y, (0, 0, 0), ct.cumsum(t, axis=1) + ct.cumprod(t, axis=2, reverse=True))


def test_three_dimensional_tiles(run_kernel, rng):
    x = rng.integers(-2, 3, (4, 8, 16)).astype(np.int64)
    y = np.zeros_like(x)
    run_kernel(scan_3d, (1,), (x, y))
    expected = np.cumsum(x, axis=1) + np.flip(np.cumprod(np.flip(x, 2), axis=2), 2)
    np.testing.assert_array_equal(y, expected)


@ct.kernel
def scan_of_a_product(a, b, y):
    c = ct.mma(ct.load(a, (0, 0), (32, 16)), ct.load(b, (0, 0), (16, 32)),
               ct.zeros((32, 32), ct.float32))
    ct.store(y, (0, 0), ct.cumsum(c, axis=0))


def test_a_tile_in_a_tensor_core_layout(run_kernel, rng):
    a = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    y = np.full((32, 32), np.nan, np.float32)
    run_kernel(scan_of_a_product, (1,), (a, b, y))
    expected = np.cumsum(a.astype(np.float64) @ b.astype(np.float64), axis=0)
    assert relative_error(y, expected) < 1e-5


@ct.kernel
def float8_cumsum(x):
    ct.cumsum(ct.load(x, (0,), (16,)), axis=0)


@ct.kernel
def axis_out_of_range(x):
    ct.cumsum(ct.load(x, (0,), (16,)), axis=1)


@ct.kernel
def run_time_reverse(x, flag):
    ct.cumsum(ct.load(x, (0,), (16,)), axis=0, reverse=flag)


@ct.kernel
def approximate_scan(x):
    ct.cumsum(ct.load(x, (0,), (16,)), rounding_mode=ct.RoundingMode.APPROX)


@ct.kernel
def flushed_half_scan(x):
    ct.cumprod(ct.load(x, (0,), (16,)), flush_to_zero=True)


@ct.kernel
def rounded_integer_scan(x):
    ct.cumsum(ct.load(x, (0,), (16,)), rounding_mode=ct.RoundingMode.RZ)


@pytest.mark.parametrize("kernel,args,error,match", [
    (approximate_scan, (np.zeros(16, np.float32),), ct.TileTypeError,
     "Rounding mode approx is not supported"),
    (flushed_half_scan, (np.zeros(16, np.float16),), ct.TileTypeError,
     "Flush to zero can only be used for float32 type"),
    (rounded_integer_scan, (np.zeros(16, np.int32),), ct.TileTypeError,
     "Rounding mode can only be used for unrestricted float types, but got int32"),
    (float8_cumsum, (np.zeros(16, ml_dtypes.float8_e4m3fn),), ct.TileTypeError,
     "Non-arithmetic dtype float8_e4m3fn is unsupported"),
    (axis_out_of_range, (np.zeros(16, np.float32),), ct.TileTypeError, "out of range"),
    (run_time_reverse, (np.zeros(16, np.float32), True), ct.TileTypeError, "reverse"),
], ids=["approx", "flush_f16", "rounded_ints", "float8", "axis", "reverse"])
def test_errors(run_kernel, kernel, args, error, match):
    with pytest.raises(error, match=match):
        run_kernel(kernel, (1,), args)
