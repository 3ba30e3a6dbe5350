"""``gather`` and ``scatter``: element-wise loads and stores at index tiles, with masks,
padding, bounds checks, broadcasting indices and implicit casts.

Outputs are views into larger buffers filled with NaN (or a sentinel integer): unwritten
elements and writes outside the view both show.
"""

import math

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import guarded, guards_untouched


def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        values = rng.integers(1, 100, shape)
        return values.astype(dtype)
    return rng.uniform(0.5, 4.0, shape).astype(dtype)


# -- copies ---------------------------------------------------------------------------------
@ct.kernel
def copy_1d(x, y, TILE: ct.Constant[int]):
    indices = ct.arange(TILE, dtype=np.int64) + ct.bid(0) * TILE
    ct.scatter(y, indices, ct.gather(x, indices))


@pytest.mark.parametrize("x_dtype,y_dtype", [(np.float32, np.float32), (np.int8, np.int32),
                                             (np.bool_, np.float32), (np.float16, np.float64),
                                             (np.uint16, np.uint64), (np.bool_, np.bool_)])
def test_copy_1d_with_a_partial_last_tile(run_kernel, rng, x_dtype, y_dtype):
    x = random_values(rng, 100, x_dtype)
    fill = np.nan if np.dtype(y_dtype).kind == "f" else (False if y_dtype == np.bool_ else 77)
    buffer, y = guarded((100,), y_dtype, fill)
    if y_dtype == np.bool_:
        x = ~x  # every element written differs from the fill
    run_kernel(copy_1d, (4,), (x, y, 32))
    np.testing.assert_array_equal(y, x.astype(y_dtype))
    assert guards_untouched(buffer, (100,), fill)


@ct.kernel
def copy_2d(x, y, TM: ct.Constant[int], TN: ct.Constant[int]):
    rows = ct.arange(TM, dtype=ct.int32) + ct.bid(0) * TM
    cols = ct.arange(TN, dtype=ct.int16) + ct.bid(1) * TN
    t = ct.gather(x, (rows[:, None], cols))
    ct.scatter(y, (rows[:, None], cols), t)


@ct.kernel
def transpose_2d(x, y, T: ct.Constant[int]):
    rows = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T
    cols = ct.arange(T, dtype=ct.int32) + ct.bid(1) * T
    t = ct.gather(x, (rows[:, None], cols))
    ct.scatter(y, (cols, rows[:, None]), t)


def test_copy_2d_with_broadcast_indices(run_kernel, rng):
    x = random_values(rng, (40, 50), np.float32)
    buffer, y = guarded((40, 50), np.float32)
    run_kernel(copy_2d, (3, 4), (x, y, 16, 16))
    np.testing.assert_array_equal(y, x)
    assert guards_untouched(buffer, (40, 50))


def test_transpose_through_scatter(run_kernel, rng):
    x = random_values(rng, (24, 40), np.float32)
    buffer, y = guarded((40, 24), np.float32)
    run_kernel(transpose_2d, (3, 5), (x, y, 8))
    np.testing.assert_array_equal(y, x.T)
    assert guards_untouched(buffer, (40, 24))


@ct.kernel
def scalar_copy(x, y, i):
    ct.scatter(y, i, ct.gather(x, i) + 1.0)


@pytest.mark.parametrize("i", [0, 3, 9, 10, -1])
def test_scalar_indices_give_a_0d_tile(run_kernel, rng, i):
    x = random_values(rng, 10, np.float32)
    buffer, y = guarded((10,), np.float32)
    run_kernel(scalar_copy, (1,), (x, y, i))
    expected = np.full(10, np.nan, np.float32)
    if 0 <= i < 10:
        expected[i] = x[i] + 1.0
    np.testing.assert_array_equal(y, expected)
    assert guards_untouched(buffer, (10,))


# -- padding, masks, bounds -----------------------------------------------------------------
@ct.kernel
def gather_padded(x, y, PAD: ct.Constant):
    ind = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, ind, ct.gather(x, ind, padding_value=PAD))


@pytest.mark.parametrize("pad", [7, 7.5, math.inf, -math.inf])
def test_padding_constant(run_kernel, pad):
    x = np.arange(100, 106, dtype=np.float32)
    y = np.full(8, np.nan, np.float32)
    run_kernel(gather_padded, (1,), (x, y, pad))
    np.testing.assert_array_equal(y, [100, 101, 102, 103, 104, 105, pad, pad])


@ct.kernel
def gather_padded_by_a_tile(x, y):
    ind = ct.arange(8, dtype=ct.int32).reshape((4, 2)).transpose()
    padding = ct.arange(4, dtype=ct.int32).astype(ct.float32)
    ct.scatter(y, ind, ct.gather(x, ind, padding_value=padding))


def test_padding_tile_broadcast_to_the_indices(run_kernel):
    x = np.arange(100, 105, dtype=np.float32)
    y = np.full(8, np.nan, np.float32)
    run_kernel(gather_padded_by_a_tile, (1,), (x, y))
    np.testing.assert_array_equal(y, [100, 101, 102, 103, 104, 2, 3, 3])


@ct.kernel
def masked_copy(x, y, m):
    i = ct.arange(8, dtype=ct.uint8)
    keep = ct.gather(m, i)
    t = ct.gather(x, i, mask=keep, padding_value=-1.0, check_bounds=False)
    ct.scatter(y, i, t, mask=i < 6)


def test_masks_of_gather_and_scatter(run_kernel, rng):
    x = random_values(rng, 8, np.float32)
    m = rng.random(8) < 0.5
    y = np.full(8, np.nan, np.float32)
    run_kernel(masked_copy, (1,), (x, y, m))
    expected = np.where(m, x, -1.0).astype(np.float32)
    expected[6:] = np.nan
    np.testing.assert_array_equal(y, expected)


@ct.kernel
def gather_at(x, y, idx):
    i = ct.arange(8, dtype=ct.int32)
    j = ct.gather(idx, i)
    ct.scatter(y, i, ct.gather(x, j, padding_value=-5.0))


@pytest.mark.parametrize("index_dtype", [np.int64, np.uint64, np.int16, np.uint32])
def test_indices_outside_the_array_read_padding(run_kernel, rng, index_dtype):
    x = random_values(rng, 10, np.float32)
    raw = [3, 9, 10, -1, 2 ** 40, -(2 ** 40), 0, 2 ** 31 + 2]
    info = np.iinfo(index_dtype)
    idx = np.array([v for v in raw], dtype=object)
    idx = np.array([v % (int(info.max) + 1) if info.min == 0 else
                    max(min(v, int(info.max)), int(info.min)) for v in idx], dtype=index_dtype)
    y = np.full(8, np.nan, np.float32)
    run_kernel(gather_at, (1,), (x, y, idx))
    expected = [x[int(v)] if 0 <= int(v) < 10 else -5.0 for v in idx]
    np.testing.assert_array_equal(y, np.array(expected, np.float32))


@ct.kernel
def scatter_to(y, idx):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, ct.gather(idx, i), ct.astype(i, ct.float32) + 1.0)


def test_scatter_skips_indices_outside_the_array(run_kernel):
    buffer, y = guarded((6,), np.float32)
    idx = np.array([5, 6, -1, 0, 2 ** 40, -(2 ** 40), 2, 7], np.int64)
    run_kernel(scatter_to, (1,), (y, idx))
    np.testing.assert_array_equal(y, [4, np.nan, 7, np.nan, np.nan, 1])
    assert guards_untouched(buffer, (6,))


def test_scatter_of_repeated_indices_stores_one_of_the_values(run_kernel):
    y = np.full(3, np.nan, np.float32)
    run_kernel(scatter_to, (1,), (y, np.full(8, 1, np.int32)))
    assert np.isnan(y[0]) and np.isnan(y[2]) and y[1] in np.arange(1, 9)


@ct.kernel
def unchecked_copy(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, check_bounds=False), check_bounds=False)


def test_unchecked_copy_inside_the_array(run_kernel, rng):
    x = random_values(rng, 8, np.float32)
    y = np.full(8, np.nan, np.float32)
    run_kernel(unchecked_copy, (1,), (x, y))
    np.testing.assert_array_equal(y, x)


@ct.kernel
def embedding_rows(table, rows, out, D: ct.Constant[int]):
    r = ct.gather(rows, ct.arange(16, dtype=ct.int32))
    cols = ct.arange(D, dtype=ct.int32)
    t = ct.gather(table, (r[:, None], cols))
    ct.store(out, (0, 0), t)


def test_embedding_lookup(run_kernel, rng):
    table = random_values(rng, (50, 32), np.float16)
    rows = rng.integers(0, 50, 16).astype(np.int64)
    out = np.full((16, 32), np.nan, np.float16)
    run_kernel(embedding_rows, (1,), (table, rows, out, 32))
    np.testing.assert_array_equal(out, table[rows])


# -- errors ---------------------------------------------------------------------------------
@ct.kernel
def integer_mask(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, mask=i))


@ct.kernel
def mask_of_another_shape(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, mask=ct.arange(4, dtype=ct.int32) > 0))


@ct.kernel
def narrowing_scatter(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i))


@ct.kernel
def float_indices(x, y):
    i = ct.arange(8, dtype=ct.float32)
    ct.scatter(y, 0, ct.gather(x, i))


@ct.kernel
def one_index_for_two_axes(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, (i,)))


@ct.kernel
def padding_out_of_range(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, padding_value=128))


@pytest.mark.parametrize("kernel,args,error,message", [
    (integer_mask, (np.zeros(8, np.float32),) * 2, ct.TileTypeError, "boolean"),
    (mask_of_another_shape, (np.zeros(8, np.float32),) * 2, ct.TileTypeError,
     "not broadcastable"),
    (narrowing_scatter, (np.zeros(8, np.float32), np.zeros(8, np.float16)), ct.TileTypeError,
     "cannot implicitly cast float32"),
    (float_indices, (np.zeros(8, np.float32),) * 2, ct.TileTypeError, "must be integer"),
    (one_index_for_two_axes, (np.zeros((8, 8), np.float32), np.zeros(8, np.float32)),
     ct.TileTypeError, "needs 2 indices"),
    (padding_out_of_range, (np.zeros(8, np.int8), np.zeros(8, np.int8)), ct.TileValueError,
     "128 is out of range"),
], ids=["integer_mask", "mask_shape", "narrowing", "float_indices", "index_count",
        "padding_range"])
def test_errors(run_kernel, kernel, args, error, message):
    with pytest.raises(error, match=message):
        run_kernel(kernel, (1,), args)


@ct.kernel
def gather_scalar_of_any_dtype(x, y):
    ct.scatter(y, (), ct.gather(x, ()))


@pytest.mark.parametrize("dtype", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
                                   ml_dtypes.bfloat16, np.bool_])
def test_default_padding_suits_every_dtype(run_kernel, dtype):
    """The default padding value 0 is accepted for arrays of dtypes without arithmetic
    promotion (float8) and for bools."""
    x = np.array(1, np.float32).astype(dtype)
    y = np.array(0, np.float32).astype(dtype)
    run_kernel(gather_scalar_of_any_dtype, (1,), (x, y))
    assert y.astype(np.float32) == 1.0


@ct.kernel
def gather_float8_padded(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, padding_value=-math.inf))


def test_float8_padding_constant(run_kernel):
    x = np.arange(1, 7, dtype=np.float32).astype(ml_dtypes.float8_e5m2)
    y = np.zeros(8, ml_dtypes.float8_e5m2)
    run_kernel(gather_float8_padded, (1,), (x, y))
    np.testing.assert_array_equal(y.astype(np.float32), [1, 2, 3, 4, 5, 6, -np.inf, -np.inf])
