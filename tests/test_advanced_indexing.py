"""``load_advanced_indexing`` / ``store_advanced_indexing`` with ``ct.Slice``: rows (or
columns, or planes) chosen by an index tile, contiguous slices along the other axes, padding
and bounds as ``load`` and ``store``.

Outputs are views into larger buffers filled with a sentinel: unwritten elements and writes
outside the view both show.
"""

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct

from test_gather_scatter import guarded, guards_untouched, random_values


def expected_rows(x, rows, start, length, padding=0):
    """``x[rows, start:start + length]`` with ``padding`` where outside ``x``."""
    out = np.full((len(rows), length), padding, x.dtype)
    for i, row in enumerate(rows):
        for j in range(length):
            if 0 <= row < x.shape[0] and 0 <= start + j < x.shape[1]:
                out[i, j] = x[row, start + j]
    return out


# -- rows of a table --------------------------------------------------------------------------
@ct.kernel
def gather_rows(x, rows, y, col_start, ROWS: ct.Constant[int], COLS: ct.Constant[int]):
    index = ct.load(rows, (ct.bid(0),), shape=(ROWS,))
    tile = ct.load_advanced_indexing(x, (index, ct.Slice(col_start, COLS)),
                                     padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, (ct.bid(0), 0), tile)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                   np.uint64, np.bool_, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint16])
def test_gather_rows_of_any_dtype(run_kernel, rng, dtype, index_dtype):
    x = random_values(rng, (50, 24), dtype)
    rows = rng.permutation(50)[:32].astype(index_dtype)
    fill = np.array(77).astype(dtype) if np.dtype(dtype).kind != "f" else np.nan
    buffer, y = guarded((32, 16), dtype, fill)
    run_kernel(gather_rows, (4,), (x, rows, y, 4, 8, 16))
    np.testing.assert_array_equal(y, x[rows.astype(np.int64), 4:20])
    assert guards_untouched(buffer, (32, 16), fill)


@pytest.mark.parametrize("col_start", [0, 3, 13, 20, -2])
def test_out_of_bounds_rows_and_columns_take_zero(run_kernel, rng, col_start):
    x = rng.uniform(0.5, 4.0, (20, 24)).astype(np.float32)
    rows = np.array([3, 19, 20, -1, 7, 1000, 0, 2**31 - 1], np.int32)
    buffer, y = guarded((8, 8), np.float32)
    run_kernel(gather_rows, (1,), (x, rows, y, col_start, 8, 8))
    np.testing.assert_array_equal(y, expected_rows(x, rows, col_start, 8))
    assert guards_untouched(buffer, (8, 8))


@ct.kernel
def gather_with_padding(x, y, mode: ct.Constant[ct.PaddingMode]):
    rows = ct.arange(4, dtype=ct.int32) + 2
    ct.store(y, (0, 0), ct.load_advanced_indexing(x, (rows, ct.Slice(2, 4)),
                                                  padding_mode=mode))


@pytest.mark.parametrize("mode,value", [(ct.PaddingMode.NAN, np.nan),
                                        (ct.PaddingMode.NEG_INF, -np.inf),
                                        (ct.PaddingMode.POS_INF, np.inf),
                                        (ct.PaddingMode.ZERO, 0.0)])
def test_padding_modes(run_kernel, rng, mode, value):
    x = rng.uniform(0.5, 4.0, (4, 5)).astype(np.float32)
    y = np.full((4, 4), 9.0, np.float32)
    run_kernel(gather_with_padding, (1,), (x, y, mode))
    np.testing.assert_array_equal(y, expected_rows(x, [2, 3, 4, 5], 2, 4, value))


# -- the sparse axis anywhere -----------------------------------------------------------------
@ct.kernel
def gather_columns(x, cols, y, ROWS: ct.Constant[int], COLS: ct.Constant[int]):
    index = ct.load(cols, (0,), shape=(COLS,))
    ct.store(y, (0, 0), ct.load_advanced_indexing(x, (ct.Slice(ct.bid(0) * 0 + 1, ROWS),
                                                      index)))


def test_sparse_last_axis(run_kernel, rng):
    x = rng.uniform(0.5, 4.0, (20, 30)).astype(np.float64)
    cols = rng.permutation(30)[:16].astype(np.int64)
    buffer, y = guarded((8, 16), np.float64)
    run_kernel(gather_columns, (1,), (x, cols, y, 8, 16))
    np.testing.assert_array_equal(y, x[1:9][:, cols])
    assert guards_untouched(buffer, (8, 16))


@ct.kernel
def planes_3d(x, y, planes, start):
    index = ct.load(planes, (0,), shape=(4,))
    tile = ct.load_advanced_indexing(x, (ct.Slice(start, 2), index, ct.Slice(0, 8)))
    ct.store_advanced_indexing(y, (ct.Slice(start, 2), index, ct.Slice(0, 8)), tile * 2)


def test_three_axes_load_and_store(run_kernel, rng):
    x = rng.uniform(0.5, 4.0, (3, 9, 8)).astype(np.float32)
    planes = np.array([8, 0, 5, 2], np.int32)
    buffer, y = guarded((3, 9, 8), np.float32)
    run_kernel(planes_3d, (1,), (x, y, planes, 1))
    expected = np.full((3, 9, 8), np.nan, np.float32)
    expected[1:3][:, planes] = x[1:3][:, planes] * 2
    np.testing.assert_array_equal(y, expected)
    assert guards_untouched(buffer, (3, 9, 8))


# -- stores -----------------------------------------------------------------------------------
@ct.kernel
def scatter_rows(y, rows, col_start, ROWS: ct.Constant[int], COLS: ct.Constant[int]):
    index = ct.load(rows, (0,), shape=(ROWS,))
    tile = ct.astype(ct.arange(ROWS * COLS, dtype=ct.int32), y.dtype).reshape((ROWS, COLS))
    ct.store_advanced_indexing(y, (index, ct.Slice(col_start, COLS)), tile + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float16])
@pytest.mark.parametrize("col_start", [0, 5, -3])
def test_store_rows_skips_elements_outside(run_kernel, dtype, col_start):
    rows = np.array([4, 0, 9, -1, 2, 7, 12, 1], np.int64)
    fill = np.nan if np.dtype(dtype).kind == "f" else np.array(-7).astype(dtype)
    buffer, y = guarded((10, 8), dtype, fill)
    run_kernel(scatter_rows, (1,), (y, rows, col_start, 8, 8))
    expected = np.full((10, 8), fill, dtype)
    values = np.arange(1, 65).reshape(8, 8)
    for i, row in enumerate(rows):
        for j in range(8):
            if 0 <= row < 10 and 0 <= col_start + j < 8:
                expected[row, col_start + j] = values[i, j]
    np.testing.assert_array_equal(y, expected)
    assert guards_untouched(buffer, (10, 8), fill)


@ct.kernel
def store_scalar(y):
    rows = ct.arange(4, dtype=ct.int32) * 2 + 1
    ct.store_advanced_indexing(y, (rows, ct.Slice(1, 2)), 5)


def test_store_a_scalar(run_kernel):
    buffer, y = guarded((8, 4), np.int32, -1)
    run_kernel(store_scalar, (1,), (y,))
    expected = np.full((8, 4), -1, np.int32)
    expected[1::2, 1:3] = 5
    np.testing.assert_array_equal(y, expected)
    assert guards_untouched(buffer, (8, 4), -1)


# -- errors -----------------------------------------------------------------------------------
@ct.kernel
def two_sparse_axes(x):
    i = ct.arange(4, dtype=ct.int32)
    ct.load_advanced_indexing(x, (i, i))


@ct.kernel
def no_sparse_axis(x):
    ct.store_advanced_indexing(x, (ct.Slice(0, 4), ct.Slice(0, 4)), 1.0)


@ct.kernel
def sparse_2d(x):
    ct.load_advanced_indexing(x, (ct.zeros((4, 4), ct.int32), ct.Slice(0, 4)))


@ct.kernel
def float_sparse(x):
    ct.load_advanced_indexing(x, (ct.zeros((4,), ct.float32), ct.Slice(0, 4)))


@ct.kernel
def wrong_rank(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32),))


@ct.kernel
def slice_of_three(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(0, 3)))


@ct.kernel
def run_time_length(x, n):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(0, n)))


@ct.kernel
def float_start(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(1.5, 4)))


@ct.kernel
def tile_of_another_shape(x):
    ct.store_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(0, 4)),
                               ct.zeros((4, 2), ct.float32))


@ct.kernel
def nan_padding_of_ints(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(0, 4)),
                              padding_mode=ct.PaddingMode.NAN)


F = np.zeros((8, 8), np.float32)


@pytest.mark.parametrize("kernel,args,error,message", [
    (two_sparse_axes, (F,), ct.TileTypeError, "exactly one index must be a 1D integer Tile"),
    (no_sparse_axis, (F,), ct.TileTypeError, "exactly one index must be a 1D integer Tile"),
    (sparse_2d, (F,), ct.TileTypeError, "1D"),
    (float_sparse, (F,), ct.TileTypeError, "1D integer"),
    (wrong_rank, (F,), ct.TileTypeError, "does not match array rank"),
    (slice_of_three, (F,), ct.TileTypeError, "power of two"),
    (run_time_length, (F, 4), ct.TileTypeError, "compile-time constant"),
    (float_start, (F,), ct.TileTypeError, "integer scalar"),
    (tile_of_another_shape, (F,), ct.TileTypeError, r"indices give shape \(4, 4\)"),
    (nan_padding_of_ints, (np.zeros((8, 8), np.int32),), ct.TileValueError,
     "needs a floating-point array"),
], ids=["two_sparse", "no_sparse", "sparse_2d", "float_sparse", "rank", "length", "run_time",
        "float_start", "shape", "nan_ints"])
def test_errors(run_kernel, kernel, args, error, message):
    with pytest.raises(error, match=message):
        run_kernel(kernel, (1,), args)
