"""Loads, stores, array views, tiled views and the grid queries (spec sections 2 and 3).

Every kernel is started through the ``run_kernel`` fixture and checked against NumPy. Output
arrays are poisoned (NaN or a value that differs from the expected one everywhere) before the
launch, so elements a kernel fails to write, or writes where it should not, show up.
"""

import re

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from numba_tile.dtypes import to_dtype
from conftest import relative_error

PM = ct.PaddingMode


# -- helpers ----------------------------------------------------------------------------------
def random_array(rng, shape, dtype):
    """Random non-zero data of ``dtype`` (NumPy or ml_dtypes), spanning the integer range."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        return np.where(values == 0, dtype.type(1), values).astype(dtype)
    values = rng.uniform(0.25, 4.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return values.astype(dtype)


def poisoned_like(expected):
    """An array shaped like ``expected`` that differs from it in every element."""
    if expected.dtype.kind in "biu":
        return ~expected
    return np.full(expected.shape, np.nan, expected.dtype)


def poisoned(shape, dtype=np.float32):
    """An output of NaNs (of -99 for an integer dtype, which holds no NaN)."""
    return np.full(shape, -99 if np.dtype(dtype).kind in "iu" else np.nan, dtype)


def assert_same(actual, expected):
    """Exact equality; integers compared in their own dtype, floats in float64."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
    else:
        assert relative_error(actual, expected) == 0.0


def assert_padding(y, rows, cols, value):
    """Everything of ``y`` outside ``[:rows, :cols]`` is exactly the padding ``value``
    (sign of zero included)."""
    pad = np.concatenate([y[rows:, :].ravel(), y[:rows, cols:].ravel()]).astype(np.float64)
    expected = np.full(pad.shape, value)
    assert relative_error(pad, expected) == 0.0
    finite = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(pad[finite]), np.signbit(expected[finite]))


def grid_for(shape, tile):
    return tuple(ct.cdiv(n, t) for n, t in zip(shape, tile))


# -- kernels ----------------------------------------------------------------------------------
def block_index(ndim):
    """The tile index of this block for an array of rank ``ndim`` (a plain helper)."""
    if ndim == 1:
        return (ct.bid(0),)
    if ndim == 2:
        return (ct.bid(0), ct.bid(1))
    return (ct.bid(0), ct.bid(1), ct.bid(2))


@ct.kernel
def copy_kernel(x, y, TILE: ct.Constant):
    idx = block_index(x.ndim)
    ct.store(y, idx, ct.load(x, idx, TILE))


@ct.kernel
def copy_int_index_kernel(x, y, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(y, i, ct.load(x, i, TILE))


@ct.kernel
def scalar_copy_kernel(x, y):
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, (i, j), shape=())
    ct.static_assert(t.ndim == 0)
    ct.store(y, (i, j), t * 2)


@ct.kernel
def padded_load_kernel(x, y, TILE: ct.Constant, MODE: ct.Constant):
    idx = (ct.bid(0), ct.bid(1))
    ct.store(y, idx, ct.load(x, idx, TILE, padding_mode=MODE))


@ct.kernel
def scaled_copy_kernel(x, y, TILE: ct.Constant):
    idx = (ct.bid(0), ct.bid(1))
    ct.store(y, idx, ct.load(x, idx, TILE) * 2)


@ct.kernel
def transpose_load_kernel(x, y, TM: ct.Constant[int], TN: ct.Constant[int],
                          ORDER: ct.Constant):
    i, j = ct.bid(0), ct.bid(1)
    # tile (i, j) of x, (TM, TN), read transposed: t[p, q] = x[i*TM + q, j*TN + p]
    t = ct.load(x, (j, i), shape=(TN, TM), order=ORDER)
    ct.static_assert(t.shape == (TN, TM))
    ct.store(y, (j, i), t)


@ct.kernel
def transpose_store_kernel(x, y, TM: ct.Constant[int], TN: ct.Constant[int],
                           ORDER: ct.Constant):
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, (i, j), shape=(TM, TN))
    ct.store(y, (i, j), t, order=ORDER)


@ct.kernel
def permuted_load_kernel(x, y, TILE: ct.Constant, ORDER: ct.Constant):
    idx = (ct.bid(0), ct.bid(1), ct.bid(2))
    ct.store(y, idx, ct.load(x, idx, TILE, order=ORDER, padding_mode=ct.PaddingMode.ZERO))


@ct.kernel
def permuted_store_kernel(x, y, TILE: ct.Constant, ORDER: ct.Constant):
    idx = (ct.bid(0), ct.bid(1), ct.bid(2))
    ct.store(y, idx, ct.load(x, idx, TILE), order=ORDER)


@ct.kernel
def store_scalar_kernel(y, v, i, j):
    ct.store(y, (i, j), v)


@ct.kernel
def store_literal_kernel(y):
    ct.store(y, (1,), 3.5)


@ct.kernel
def attributes_kernel(x, out):
    ct.static_assert(x.ndim == 2)
    ct.static_assert(x.dtype == ct.float32)
    ct.static_assert(x.shape[0].dtype == ct.int32)
    ct.static_assert(x.strides[1].dtype == ct.int32)
    # ndim and dtype are constants: usable as a tile shape and a dtype argument
    ones = ct.full((x.ndim * 2,), 1, x.dtype)
    ct.static_assert(ones.shape == (4,))
    ct.store(out, (0,), x.shape[0])
    ct.store(out, (1,), x.shape[1])
    ct.store(out, (2,), x.strides[0])
    ct.store(out, (3,), x.strides[1])
    ct.store(out, (4,), x.ndim)


@ct.kernel
def int64_attributes_kernel(x: ct.IndexedWithInt64, out):
    ct.static_assert(x.shape[0].dtype == ct.int64)
    ct.store(out, (0,), x.shape[0])


@ct.kernel
def shape_from_array_kernel(x):
    ct.load(x, (0,), (x.shape[0],))


@ct.kernel
def slice_seed_kernel(x):
    sub = x.slice(axis=0, start=1, stop=3)
    print(ct.load(sub, (0, 0), shape=(2, 4)))


@ct.kernel
def slice_dynamic_seed_kernel(x, offset, length):
    sub = x.slice(axis=0, start=offset, stop=offset + length)
    print(ct.load(sub, (0,), shape=(4,)))
    print(ct.load(sub, (1,), shape=(4,)))


@ct.kernel
def slice_copy_kernel(x, y, AXIS: ct.Constant[int], start, stop, TILE: ct.Constant):
    sub_x = x.slice(AXIS, start, stop)
    sub_y = y.slice(AXIS, start, stop)
    t = ct.load(sub_x, (0, 0), TILE, padding_mode=ct.PaddingMode.NAN)
    ct.store(sub_y, (0, 0), t)


@ct.kernel
def slice_shape_kernel(x, out, start, stop):
    sub = x.slice(-1, start, stop)
    ct.store(out, (0,), sub.shape[0])
    ct.store(out, (1,), sub.shape[1])


@ct.kernel
def tiled_view_seed_kernel(x):
    tv = x.tiled_view((2, 4))
    print(tv.load((0, 0)))
    print(tv.load((1, 0)))
    # traversal_steps=(1, 4): advance 1 row per step, tiles overlap
    tv2 = x.tiled_view((2, 4), traversal_steps=(1, 4))
    print(tv2.load((0, 0)))
    print(tv2.load((1, 0)))


@ct.kernel
def tiled_view_properties_kernel(x, out):
    tv = x.tiled_view((4, 8))
    ct.static_assert(tv.tile_shape == (4, 8))
    ct.static_assert(tv.dtype == x.dtype)
    tv2 = x.tiled_view((2, 4), traversal_steps=(1, 8))
    ct.static_assert(tv2.traversal_steps == (1, 8))
    ct.store(out, (0,), tv.num_tiles(0))
    ct.store(out, (1,), tv.num_tiles(1))


@ct.kernel
def tiled_view_copy_kernel(x, y, TILE: ct.Constant, MODE: ct.Constant):
    src = x.tiled_view(TILE, padding_mode=MODE)
    dst = y.tiled_view(TILE)
    idx = (ct.bid(0), ct.bid(1))
    dst.store(idx, src.load(idx))


@ct.kernel
def tiled_view_steps_kernel(x, y, TILE: ct.Constant[int], STEP: ct.Constant[int],
                            count):
    src = x.tiled_view((TILE,), traversal_steps=(STEP,), padding_mode=ct.PaddingMode.NAN)
    dst = y.tiled_view((TILE,))
    ct.store(count, (0,), src.num_tiles(0))
    k = ct.bid(0)
    dst.store((k,), src.load((k,)))


@ct.kernel
def num_tiles_kernel(x, out, SHAPE: ct.Constant, ORDER: ct.Constant):
    ct.store(out, (0,), ct.num_tiles(x, 0, SHAPE, ORDER))
    ct.store(out, (1,), ct.num_tiles(x, 1, SHAPE, order=ORDER))
    ct.store(out, (2,), ct.num_tiles(x, axis=-1, shape=SHAPE, order=ORDER))


@ct.kernel
def grid_kernel(visits, blocks):
    idx = (ct.bid(0), ct.bid(1), ct.bid(2))
    ct.store(visits, idx, ct.load(visits, idx, shape=()) + 1)
    ct.store(blocks, (0,), ct.num_blocks(0))
    ct.store(blocks, (1,), ct.num_blocks(1))
    ct.store(blocks, (2,), ct.num_blocks(2))


@ct.kernel
def cdiv_kernel(x, y, n, out):
    ct.static_assert(ct.cdiv(10, 4) == 3)
    ct.store(out, (0,), ct.cdiv(n, 4))
    ct.store(y, (0,), ct.cdiv(ct.load(x, (0,), (8,)), 3))


@ct.kernel
def bad_load_kernel(x, CASE: ct.Constant[str]):
    if CASE == "non_power_of_two":
        ct.load(x, (0, 0), (3, 4))
    elif CASE == "shape_rank":
        ct.load(x, (0, 0), (4,))
    elif CASE == "index_rank":
        ct.load(x, (0,), (4, 4))
    elif CASE == "float_index":
        ct.load(x, (1.0, 0), (4, 4))
    elif CASE == "nan_padding":
        ct.load(x, (0, 0), (4, 4), padding_mode=ct.PaddingMode.NAN)
    elif CASE == "inf_padding":
        ct.load(x, (0, 0), (4, 4), padding_mode=ct.PaddingMode.POS_INF)
    elif CASE == "store_rank":
        ct.store(x, (0, 0), ct.full((4,), 1, x.dtype))
    elif CASE == "bid_axis":
        ct.bid(3)


@ct.kernel
def runtime_shape_kernel(x, n):
    ct.load(x, (0,), (n,))


@ct.kernel
def runtime_float_index_kernel(x, f):
    ct.load(x, (f,), (4,))


# -- load / store round trips -----------------------------------------------------------------
DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, ml_dtypes.bfloat16, np.bool_]
RANK_CASES = [((16,), (8,)), ((8, 16), (4, 8)), ((4, 4, 8), (2, 4, 4))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape,tile", RANK_CASES, ids=["1d", "2d", "3d"])
def test_copy_dtypes_and_ranks(run_kernel, rng, dtype, shape, tile):
    x = random_array(rng, shape, dtype)
    y = poisoned_like(x)
    run_kernel(copy_kernel, grid_for(shape, tile), (x, y, tile))
    assert_same(y, x)


@pytest.mark.parametrize("shape,tile", [((10, 20), (4, 8)), ((5, 7, 3), (2, 4, 2)),
                                        ((13,), (4,))], ids=["2d", "3d", "1d"])
def test_copy_partial_tiles(run_kernel, rng, shape, tile):
    x = random_array(rng, shape, np.float32)
    y = poisoned_like(x)
    run_kernel(copy_kernel, grid_for(shape, tile), (x, y, tile))
    assert_same(y, x)


@pytest.mark.parametrize("kernel", [copy_int_index_kernel, copy_kernel],
                         ids=["int_index", "tuple_index"])
def test_int_shape_and_int_index_for_1d(run_kernel, rng, kernel):
    x = random_array(rng, (16,), np.int32)
    y = poisoned_like(x)
    run_kernel(kernel, (4,), (x, y, 4))  # the shape is the int 4, not (4,)
    assert_same(y, x)


def test_scalar_load_shape_empty(run_kernel, rng):
    x = random_array(rng, (3, 5), np.float32)
    y = poisoned_like(x)
    run_kernel(scalar_copy_kernel, (3, 5), (x, y))
    assert_same(y, x * 2)


# -- padding and out-of-bounds stores ---------------------------------------------------------
PADDING_VALUES = [(PM.ZERO, 0.0), (PM.NEG_ZERO, -0.0), (PM.NAN, np.nan),
                  (PM.POS_INF, np.inf), (PM.NEG_INF, -np.inf)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, ml_dtypes.bfloat16],
                         ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("mode,value", PADDING_VALUES, ids=[m.name for m, _ in PADDING_VALUES])
def test_padding_modes(run_kernel, rng, dtype, mode, value):
    x = random_array(rng, (10, 20), dtype)
    y = np.full((12, 24), 7.0, dtype)  # a padded copy: 3 x 3 tiles of 4 x 8
    run_kernel(padded_load_kernel, (3, 3), (x, y, (4, 8), mode))
    assert_same(y[:10, :20], x)
    assert_padding(y, 10, 20, value)


def test_padding_undetermined_in_bounds_part(run_kernel, rng):
    x = random_array(rng, (10, 20), np.float32)
    y = np.full((12, 24), 7.0, np.float32)
    run_kernel(padded_load_kernel, (3, 3), (x, y, (4, 8), PM.UNDETERMINED))
    assert_same(y[:10, :20], x)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64], ids=lambda t: np.dtype(t).name)
def test_zero_padding_on_integers(run_kernel, rng, dtype):
    x = random_array(rng, (10, 20), dtype)
    y = np.full((12, 24), 7, dtype)
    run_kernel(padded_load_kernel, (3, 3), (x, y, (4, 8), PM.ZERO))
    assert_same(y[:10, :20], x)
    assert not y[10:, :].any() and not y[:10, 20:].any()


def test_store_drops_out_of_bounds_elements(run_kernel, rng):
    x = random_array(rng, (10, 20), np.float32)
    buffer = poisoned((16, 32))
    y = buffer[:10, :20]  # a view: a store past its end would land in the buffer
    run_kernel(scaled_copy_kernel, (3, 3), (x, y, (4, 8)))
    assert_same(buffer[:10, :20], x * 2)
    assert np.isnan(buffer[10:, :]).all() and np.isnan(buffer[:, 20:]).all()


def test_store_drops_out_of_bounds_1d(run_kernel, rng):
    x = random_array(rng, (13,), np.float32)
    buffer = poisoned((20,))
    run_kernel(copy_kernel, (4,), (x, buffer[:13], (4,)))
    assert_same(buffer[:13], x)
    assert np.isnan(buffer[13:]).all()


# -- order ------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", ["F", (1, 0)], ids=["F", "tuple"])
@pytest.mark.parametrize("shape", [(8, 16), (10, 20)], ids=["full", "partial"])
def test_load_with_order_reads_transpose(run_kernel, rng, order, shape):
    tm, tn = 4, 8
    x = random_array(rng, shape, np.float32)
    y = poisoned((shape[1], shape[0]))
    run_kernel(transpose_load_kernel, grid_for(shape, (tm, tn)), (x, y, tm, tn, order))
    assert_same(y, np.ascontiguousarray(x.T))


@pytest.mark.parametrize("order", ["F", (1, 0)], ids=["F", "tuple"])
@pytest.mark.parametrize("shape", [(8, 16), (10, 20)], ids=["full", "partial"])
def test_store_with_order_writes_transpose(run_kernel, rng, order, shape):
    tm, tn = 4, 8
    x = random_array(rng, shape, np.float32)
    buffer = poisoned((shape[1] + 3, shape[0] + 5))
    y = buffer[:shape[1], :shape[0]]
    run_kernel(transpose_store_kernel, grid_for(shape, (tm, tn)), (x, y, tm, tn, order))
    assert_same(buffer[:shape[1], :shape[0]], np.ascontiguousarray(x.T))
    assert np.isnan(buffer[shape[1]:, :]).all() and np.isnan(buffer[:, shape[0]:]).all()


@pytest.mark.parametrize("order", [(2, 0, 1), (1, 2, 0), "F"], ids=str)
def test_3d_order_permutation(run_kernel, rng, order):
    perm = (2, 1, 0) if order == "F" else order
    x = random_array(rng, (3, 5, 6), np.float32)
    expected = np.ascontiguousarray(np.transpose(x, perm))  # the array's axes, permuted
    tile = (4, 2, 4)
    y = poisoned_like(expected)
    run_kernel(permuted_load_kernel, grid_for(expected.shape, tile), (x, y, tile, order))
    assert_same(y, expected)
    # and back: a store with the same order undoes it
    z = poisoned_like(x)
    run_kernel(permuted_store_kernel, grid_for(expected.shape, tile), (expected, z, tile, order))
    assert_same(z, x)


# -- scalar stores and dtype conversion -------------------------------------------------------
def test_store_scalar_writes_one_element(run_kernel):
    y = poisoned((4, 6))
    run_kernel(store_scalar_kernel, (1,), (y, 2.5, 2, 3))
    expected = poisoned((4, 6))
    expected[2, 3] = 2.5
    assert_same(y, expected)


def test_store_literal_scalar(run_kernel):
    y = poisoned((4,), np.float64)
    run_kernel(store_literal_kernel, (1,), (y,))
    expected = poisoned((4,), np.float64)
    expected[1] = 3.5
    assert_same(y, expected)


@pytest.mark.parametrize("src,dst", [(np.float16, np.float32), (np.float32, np.float64),
                                     (ml_dtypes.bfloat16, np.float32), (np.int16, np.float32),
                                     (np.int8, np.int32)],
                         ids=lambda t: np.dtype(t).name)
def test_store_converts_to_array_dtype(run_kernel, rng, src, dst):
    """A store widens implicitly where the promotion of the two dtypes is the array's."""
    x = random_array(rng, (8, 16), src)
    y = poisoned((8, 16), dst)
    run_kernel(copy_kernel, (2, 2), (x, y, (4, 8)))
    assert_same(y, x.astype(dst))


@pytest.mark.parametrize("src,dst", [(np.float32, np.float16), (np.float64, np.float32),
                                     (np.float32, ml_dtypes.bfloat16), (np.float32, np.int32),
                                     (np.int32, np.int16)],
                         ids=lambda t: np.dtype(t).name)
def test_a_narrowing_store_needs_astype(run_kernel, rng, src, dst):
    """As cuTile: a store converts implicitly only where nothing is lost (the promotion of the
    tile's dtype and the array's is the array's); else its TileTypeError."""
    x = random_array(rng, (8, 16), src)
    y = poisoned((8, 16), dst)
    with pytest.raises(ct.TileTypeError, match=f"Stored tile is incompatible with array's "
                                               f"dtype: cannot implicitly cast "
                                               f"{to_dtype(src).name} to {to_dtype(dst).name}"):
        run_kernel(copy_kernel, (2, 2), (x, y, (4, 8)))


# -- strided views ----------------------------------------------------------------------------
def test_strided_views_as_arguments(run_kernel, rng):
    base = random_array(rng, (20, 30), np.float32)
    x = base[::2, 1::3]  # (10, 10), non-contiguous
    out_base = poisoned((20, 30))
    y = out_base[::2, 1::3]
    run_kernel(scaled_copy_kernel, (3, 2), (x, y, (4, 8)))
    expected = poisoned((20, 30))
    expected[::2, 1::3] = x * 2
    assert_same(out_base, expected)


def test_transposed_view_as_arguments(run_kernel, rng):
    x = random_array(rng, (16, 8), np.float32)
    out_base = poisoned((16, 8))
    run_kernel(scaled_copy_kernel, (2, 2), (x.T, out_base.T, (4, 8)))
    assert_same(out_base, x * 2)


# -- Array attributes -------------------------------------------------------------------------
def test_array_attributes(run_kernel, rng):
    base = random_array(rng, (20, 30), np.float32)
    x = base[::2, 1::3]
    out = np.full(5, -1, np.int32)
    run_kernel(attributes_kernel, (1,), (x, out))
    expected = [*x.shape, *(s // x.itemsize for s in x.strides), x.ndim]
    np.testing.assert_array_equal(out, expected)


def test_indexed_with_int64_shape_dtype(run_kernel):
    out = np.full(1, -1, np.int64)
    run_kernel(int64_attributes_kernel, (1,), (np.ones((6, 3), np.float32), out))
    assert out[0] == 6


def test_array_shape_is_not_a_constant(run_kernel):
    with pytest.raises(ct.TileTypeError, match="not constant"):
        run_kernel(shape_from_array_kernel, (1,), (np.ones(8, np.float32),))


# -- Array.slice --------------------------------------------------------------------------------
def test_slice_seed_example(run_kernel, capfd):
    x = np.arange(16).reshape(4, 4)
    run_kernel(slice_seed_kernel, (1,), (x,))
    assert capfd.readouterr().out == "[[4, 5, 6, 7], [8, 9, 10, 11]]\n"


def test_slice_dynamic_seed_example(run_kernel, capfd):
    x = np.arange(16)
    run_kernel(slice_dynamic_seed_kernel, (1,), (x, 8, 8))
    assert capfd.readouterr().out == "[8, 9, 10, 11]\n[12, 13, 14, 15]\n"


@pytest.mark.parametrize("axis,start,stop", [(0, 2, 5), (1, 3, 9), (-1, 1, 4), (-2, 0, 7)])
def test_slice_load_store(run_kernel, rng, axis, start, stop):
    x = random_array(rng, (7, 10), np.float32)
    y = np.full((7, 10), 9.0, np.float32)  # not NaN: the NaN padding must not land here
    tile = (8, 16)  # larger than the slice: the part past the slice's end is padding
    run_kernel(slice_copy_kernel, (1,), (x, y, axis, start, stop, tile))
    key = [slice(None)] * 2
    key[axis] = slice(start, stop)
    expected = np.full((7, 10), 9.0, np.float32)
    expected[tuple(key)] = x[tuple(key)]  # nothing past the slice read or written
    assert_same(y, expected)


def test_slice_shape(run_kernel):
    out = np.full(2, -1, np.int32)
    run_kernel(slice_shape_kernel, (1,), (np.ones((3, 10), np.float32), out, 2, 7))
    np.testing.assert_array_equal(out, [3, 5])


# -- tiled views ------------------------------------------------------------------------------
def test_tiled_view_seed_example(run_kernel, capfd):
    x = np.arange(16).reshape(4, 4)
    run_kernel(tiled_view_seed_kernel, (1,), (x,))
    assert capfd.readouterr().out == ("[[0, 1, 2, 3], [4, 5, 6, 7]]\n"
                                       "[[8, 9, 10, 11], [12, 13, 14, 15]]\n"
                                       "[[0, 1, 2, 3], [4, 5, 6, 7]]\n"
                                       "[[4, 5, 6, 7], [8, 9, 10, 11]]\n")


def test_tiled_view_properties(run_kernel):
    out = np.full(2, -1, np.int32)
    run_kernel(tiled_view_properties_kernel, (1,), (np.ones((10, 20), np.float32), out))
    np.testing.assert_array_equal(out, [ct.cdiv(10, 4), ct.cdiv(20, 8)])


@pytest.mark.parametrize("mode,value", PADDING_VALUES, ids=[m.name for m, _ in PADDING_VALUES])
def test_tiled_view_load_store_partial(run_kernel, rng, mode, value):
    x = random_array(rng, (10, 20), np.float32)
    y = np.full((12, 24), 7.0, np.float32)
    run_kernel(tiled_view_copy_kernel, (3, 3), (x, y, (4, 8), mode))
    assert_same(y[:10, :20], x)
    assert_padding(y, 10, 20, value)


def test_tiled_view_store_drops_out_of_bounds(run_kernel, rng):
    x = random_array(rng, (12, 24), np.float32)
    buffer = poisoned((16, 32))
    run_kernel(tiled_view_copy_kernel, (3, 3), (x, buffer[:10, :20], (4, 8), PM.ZERO))
    assert_same(buffer[:10, :20], x[:10, :20])
    assert np.isnan(buffer[10:, :]).all() and np.isnan(buffer[:, 20:]).all()


@pytest.mark.parametrize("length,tile,step", [(16, 2, 4), (15, 4, 6), (16, 4, 4)],
                         ids=["gaps", "gaps_partial", "no_steps"])
def test_tiled_view_gapped_traversal(run_kernel, rng, length, tile, step):
    x = random_array(rng, (length,), np.float32)
    origins = list(range(0, length, step))
    y = poisoned((len(origins) * tile,))
    count = np.full(1, -1, np.int32)
    run_kernel(tiled_view_steps_kernel, (len(origins),), (x, y, tile, step, count))
    padded = np.concatenate([x, np.full(tile, np.nan, np.float32)])
    expected = np.concatenate([padded[o:o + tile] for o in origins])
    assert_same(y, expected)
    assert count[0] == len(origins)


def test_tiled_view_overlapping_traversal(run_kernel, rng):
    x = random_array(rng, (8,), np.float32)
    y = poisoned((4 * 4,))
    run_kernel(tiled_view_steps_kernel, (4,), (x, y, 4, 1, np.full(1, -1, np.int32)))
    expected = np.concatenate([x[k:k + 4] for k in range(4)])
    assert_same(y, expected)


# -- grid queries -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape,order", [((10, 20), "C"), ((10, 20), "F"), ((10, 20), (1, 0)),
                                         ((16, 8), "C")], ids=str)
def test_num_tiles(run_kernel, shape, order):
    tile = (4, 8)
    out = np.full(3, -1, np.int32)
    run_kernel(num_tiles_kernel, (1,), (np.ones(shape, np.float32), out, tile, order))
    view = shape if order == "C" else shape[::-1]
    expected = [ct.cdiv(view[0], tile[0]), ct.cdiv(view[1], tile[1]),
                ct.cdiv(view[1], tile[1])]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("grid", [(5,), (3, 4), (2, 3, 4), (1, 1, 1)], ids=str)
def test_bid_and_num_blocks(run_kernel, grid):
    grid3 = grid + (1,) * (3 - len(grid))
    visits = np.full(grid3, 7, np.int32)
    blocks = np.full(3, -1, np.int32)
    run_kernel(grid_kernel, grid, (visits, blocks))
    np.testing.assert_array_equal(visits, np.full(grid3, 8, np.int32))
    np.testing.assert_array_equal(blocks, grid3)


def test_cdiv_on_host():
    assert [ct.cdiv(10, 4), ct.cdiv(8, 4), ct.cdiv(1, 4), ct.cdiv(9, 1)] == [3, 2, 1, 9]


def test_cdiv_in_kernel(run_kernel, rng):
    x = rng.integers(1, 1000, size=8).astype(np.int32)
    y = np.full(8, -1, np.int32)
    out = np.full(1, -1, np.int32)
    run_kernel(cdiv_kernel, (1,), (x, y, 13, out))
    assert out[0] == 4
    np.testing.assert_array_equal(y, (x + 2) // 3)


# -- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("case,error", [
    ("non_power_of_two", ct.TileTypeError),  # (cuTile's classes)
    ("shape_rank", ct.TileTypeError),
    ("index_rank", ct.TileTypeError),
    ("float_index", ct.TileTypeError),
    ("nan_padding", ct.TileValueError),
    ("inf_padding", ct.TileValueError),
    ("store_rank", ct.TileValueError),
    ("bid_axis", ct.TileTypeError),
])
def test_memory_errors(run_kernel, case, error):
    x = np.ones((8, 8), np.int32)
    with pytest.raises(error):
        run_kernel(bad_load_kernel, (1,), (x, case))


def test_runtime_shape_is_rejected(run_kernel):
    with pytest.raises(ct.TileTypeError, match="not constant"):
        run_kernel(runtime_shape_kernel, (1,), (np.ones(8, np.float32), 4))


def test_runtime_float_index_is_rejected(run_kernel):
    with pytest.raises(ct.TileTypeError):
        run_kernel(runtime_float_index_kernel, (1,), (np.ones(8, np.float32), 1.0))


# -- alignment specialization -----------------------------------------------------------------
@ct.kernel
def padded_copy_kernel(x, y, TILE: ct.Constant, PADDING: ct.Constant):
    """``y = x + 1`` tile by tile; elements of ``y`` outside the array stay unwritten."""
    idx = (ct.bid(0), ct.bid(1))
    ct.store(y, idx, ct.load(x, idx, TILE, padding_mode=PADDING) + 1)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
@pytest.mark.parametrize("offset,columns", [(0, 64), (1, 64), (0, 60), (8, 48)])
def test_aligned_and_unaligned_arrays(run_kernel, rng, dtype, offset, columns):
    """Arrays whose rows are whole 16-byte vectors at 16-byte boundaries compile a variant
    without per-vector checks; views off those boundaries, and rows of other lengths, take
    the checked path. Both give the same values, partial tiles included."""
    base = (rng.standard_normal(10 * columns + offset) * 8).astype(dtype)
    x = base[offset:].reshape(10, columns)
    y_base = np.full(10 * columns + offset, 7, dtype)
    y = y_base[offset:].reshape(10, columns)
    tile = (4, 32)
    padding = ct.PaddingMode.NEG_INF if dtype != np.int8 else ct.PaddingMode.ZERO
    run_kernel(padded_copy_kernel, grid_for(x.shape, tile), (x, y, tile, padding))
    np.testing.assert_array_equal(y, (x.astype(np.float64) + 1).astype(dtype))
    assert (y_base[:offset] == 7).all(), "nothing written before the view"


def test_aligned_arrays_compile_without_element_fallback():
    x = np.zeros((16, 64), np.float16)
    aligned = ct.compile(copy_kernel, (x, x, (4, 64)))
    unaligned = ct.compile(copy_kernel, (x[:, 1:], x[:, 1:], (4, 64)))
    assert "aligned" in aligned.name and "aligned" not in unaligned.name
    assert re.search(r"ld\.global\.v4", aligned.ptx) and re.search(r"st\.global\.v4",
                                                                    aligned.ptx)
    assert not re.search(r"ld\.global\.u16", aligned.ptx), "no element-by-element path"
    assert re.search(r"ld\.global\.u16", unaligned.ptx)


@ct.kernel
def scaled_or_copied(x, y, scale, TILE: ct.Constant[int]):
    tile = ct.load(x, (ct.bid(0),), (TILE,))
    if scale > 0:  # a run-time scalar: the branch is taken or not on the device
        tile = tile * scale
    ct.store(y, (ct.bid(0),), tile)


@pytest.mark.parametrize("scale", [0, 3])
def test_branch_on_a_run_time_scalar(run_kernel, rng, scale):
    """A condition on a scalar argument stays a branch (the constant-branch pass leaves it)."""
    x = random_array(rng, (128,), np.float32)
    y = poisoned((128,))
    run_kernel(scaled_or_copied, (4,), (x, y, scale, 32))
    assert_same(y, x * np.float32(scale) if scale > 0 else x)


# -- assume_divisible_by -------------------------------------------------------------------------
@ct.kernel
def divisible_offsets(x, out, N: ct.Constant[int]):
    rows = ct.assume_divisible_by(x.shape[0], 8)
    step = ct.assume_divisible_by(N, 4)
    start = ct.assume_divisible_by(ct.bid(0) * 16, 16)
    t = ct.load(x, (start // 16,), (16,))
    ct.store(out, (ct.bid(0),), t + rows + step)


def test_assume_divisible_by_returns_its_value(run_kernel):
    x = np.arange(32, dtype=np.float32)
    out = np.full(32, np.nan, np.float32)
    run_kernel(divisible_offsets, (2,), (x, out, 12))
    np.testing.assert_array_equal(out, x + 32 + 12)


@ct.kernel
def divisible_by_a_float(x, out, N: ct.Constant[float]):
    step = ct.assume_divisible_by(N, 4)
    ct.store(out, (ct.bid(0),), ct.load(x, (ct.bid(0),), (16,)) + step)


# (a float given to a Constant[int] is refused by the call itself: the float case reaches
# assume_divisible_by through a Constant[float])
@pytest.mark.parametrize("kernel,value,message",
                         [(divisible_offsets, 13, "not divisible by 4"),
                          (divisible_by_a_float, 2.0, "needs an integer scalar")])
def test_assume_divisible_by_checks_what_it_can(run_kernel, kernel, value, message):
    x = np.arange(32, dtype=np.float32)
    error = ct.TileValueError if isinstance(value, int) else ct.TileTypeError
    with pytest.raises(error, match=message):
        run_kernel(kernel, (2,), (x, x.copy(), value))


@ct.kernel
def tiled_view_int_steps_kernel(x, y, count):
    # traversal_steps as one int for a 1-d array, of any size (3: no power of two)
    src = x.tiled_view(4, traversal_steps=3, padding_mode=ct.PaddingMode.ZERO)
    ct.static_assert(src.traversal_steps == (3,))
    ct.store(count, (0,), src.num_tiles(0))
    k = ct.bid(0)
    ct.store(y, (k,), src.load((k,)))


def test_traversal_steps_of_one_int_and_no_power_of_two(run_kernel, rng):
    """As cuTile: traversal_steps takes one int for a 1-d array and any positive step."""
    x = random_array(rng, (10,), np.float32)
    count = np.full(1, -1, np.int32)
    y = poisoned((3 * 4,))
    run_kernel(tiled_view_int_steps_kernel, (3,), (x, y, count))
    padded = np.concatenate([x, np.zeros(4, np.float32)])
    assert count[0] == 3
    assert_same(y, np.concatenate([padded[o:o + 4] for o in (0, 3, 6)]))


@ct.kernel
def tiled_view_bad_steps_kernel(x, STEPS: ct.Constant):
    x.tiled_view((2, 4), traversal_steps=STEPS)


@pytest.mark.parametrize("steps,message", [
    ((1,), r'Invalid argument "traversal_steps" of tiled_view\(\): Expected traversal_steps '
           r'length to be 2, got 1'),
    ((1, 0), r"Dimension #1 of traversal_steps \(1, 0\) is not positive"),
    ((-2, 4), r"Dimension #0 of traversal_steps \(-2, 4\) is not positive"),
    ((1.5, 4), r"Expected a tuple of integers, but element #0 has type"),
], ids=str)
def test_bad_traversal_steps_are_cutiles_type_errors(run_kernel, steps, message):
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(tiled_view_bad_steps_kernel, (1,),
                   (np.zeros((4, 8), np.float32), steps))


@ct.kernel
def tiled_view_narrowing_store_kernel(x, y):
    y.tiled_view((4, 8)).store((0, 0), ct.load(x, (0, 0), (4, 8)))


def test_a_narrowing_tiled_view_store_needs_astype(run_kernel, rng):
    """As cuTile: a tiled view's store converts implicitly only where nothing is lost."""
    x = random_array(rng, (4, 8), np.float32)
    with pytest.raises(ct.TileTypeError, match="Stored tile is incompatible with tiled view's "
                                               "dtype: cannot implicitly cast float32 to "
                                               "float16"):
        run_kernel(tiled_view_narrowing_store_kernel, (1,), (x, poisoned((4, 8), np.float16)))
