"""No access outside an array: run-time ``Array.slice`` bounds are checked, tile origins
never wrap around in 32-bit arithmetic, and 64-bit indices are used whole.

Every kernel writes into a view of a larger buffer filled with NaN: the elements around the
view (its guards) must stay NaN, and elements of the view that should not be written too.
Tile indices whose first element lies ``2**32`` elements (or any multiple) away from the
array are the ones a 32-bit origin would wrap onto the array's first elements.
"""

import numpy as np
import pytest

import numba_tile as ct
from conftest import GUARD, guarded
from numba_tile.rules.memory import SLICE_BOUNDS


def assert_only(buffer, view, expected):
    """The view holds ``expected`` (NaN where nothing may be written), the guards NaN."""
    outside = np.ones(buffer.shape, bool)
    outside[tuple(slice(GUARD, GUARD + n) for n in view.shape)] = False
    assert np.isnan(buffer[outside]).all(), "a write outside the array"
    np.testing.assert_array_equal(view, expected)


def untouched(shape):
    return np.full(shape, np.nan, np.float32)


# -- Array.slice --------------------------------------------------------------------------------
@ct.kernel
def store_into_slice(b, start, stop):
    ct.store(b.slice(0, start, stop), (0,), ct.full((8,), 1.0, ct.float32))


@ct.kernel
def store_into_constant_slice(b, START: ct.Constant[int], STOP: ct.Constant[int]):
    ct.store(b.slice(0, START, STOP), (0,), ct.full((8,), 1.0, ct.float32))


@pytest.mark.parametrize("start,stop", [(2, 6), (0, 10), (3, 3), (9, 10)])
def test_slice_inside_writes_only_the_slice(run_kernel, start, stop):
    buffer, b = guarded((10,))
    run_kernel(store_into_slice, (1,), (b, start, stop))
    expected = untouched(10)
    expected[start:min(stop, start + 8)] = 1.0
    assert_only(buffer, b, expected)


@pytest.mark.parametrize("start,stop", [(5, 20), (0, 11), (6, 2), (-2, 4), (10, 10),
                                        (-(2 ** 31), 4)],
                         ids=["past_end", "one_past_end", "negative_length",
                              "start_before", "start_at_end", "start_far_before"])
def test_slice_out_of_bounds_stops_the_kernel(run_kernel, start, stop):
    """The interpreter raises TileValueError; the GPU stops with a device assertion that
    names the rule (and writes nothing: the child process's memory is gone with it)."""
    buffer, b = guarded((10,))
    run_kernel.expect_assertion_failure(
        store_into_slice, (1,), (b, start, stop),
        f"slice(start, stop) is out of bounds for axis 0: {SLICE_BOUNDS}",
        error=ct.TileValueError, match=r"is out of bounds for axis 0 of length 10")
    assert_only(buffer, b, untouched(10))


def test_slice_of_an_empty_array(run_kernel):
    buffer, b = guarded((0,))
    run_kernel(store_into_slice, (1,), (b, 0, 0))
    assert_only(buffer, b, untouched(0))


@pytest.mark.parametrize("start,stop,message", [
    (6, 2, "Slice stop must be greater than or equal to start"),
    (-2, 4, "Slice start must be non-negative"), (0, -4, "Slice stop must be non-negative")])
def test_constant_slice_out_of_bounds_is_rejected_before_running(run_kernel, start, stop,
                                                                  message):
    """cuTile's TileTypeError, in its words, for constant bounds (the length is known only
    when the kernel runs: a TileValueError then)."""
    buffer, b = guarded((10,))
    with pytest.raises(ct.TileTypeError, match=f"^{message}"):
        run_kernel(store_into_constant_slice, (1,), (b, start, stop))
    assert_only(buffer, b, untouched(10))


# -- tile origins ---------------------------------------------------------------------------
@ct.kernel
def store_tile_at(b, i, TILE: ct.Constant[int]):
    ct.store(b, (i,), ct.full((TILE,), 1.0, ct.float32))


@ct.kernel
def store_tile_at_int64(b, i: ct.ScalarInt64, TILE: ct.Constant[int]):
    ct.store(b, (i,), ct.full((TILE,), 1.0, ct.float32))


@ct.kernel
def store_element_at_int64(b, i: ct.ScalarInt64):
    ct.store(b, (i,), 1.0)


@ct.kernel
def load_tile_at_int64(a, out, i: ct.ScalarInt64):
    t = ct.load(a, (i,), (16,), padding_mode=ct.PaddingMode.NEG_INF)
    ct.store(out, (0,), t)


@ct.kernel
def store_view_tile_at(b, i, j):
    view = b.tiled_view((4, 8))
    view.store((i, j), ct.full((4, 8), 1.0, ct.float32))


INT32_ORIGINS = [(2 ** 28, 16), (2 ** 27, 32), (-(2 ** 28), 16), (2 ** 31 - 1, 16),
                 (-(2 ** 31), 16), (-1, 16), (2 ** 31 - 1, 2)]


@pytest.mark.parametrize("index,tile", INT32_ORIGINS)
def test_far_tile_writes_nothing(run_kernel, index, tile):
    buffer, b = guarded((10,))
    run_kernel(store_tile_at, (1,), (b, index, tile))
    assert_only(buffer, b, untouched(10))


@pytest.mark.parametrize("index,tile,written", [(0, 16, slice(0, 10)), (1, 8, slice(8, 10)),
                                                (2, 4, slice(8, 10))])
def test_near_tile_writes_its_part(run_kernel, index, tile, written):
    buffer, b = guarded((10,))
    run_kernel(store_tile_at, (1,), (b, index, tile))
    expected = untouched(10)
    expected[written] = 1.0
    assert_only(buffer, b, expected)


@pytest.mark.parametrize("index", [2 ** 32, 2 ** 32 + 3, 2 ** 40, -(2 ** 40), 2 ** 62,
                                   2 ** 63 - 1, -(2 ** 63)])
@pytest.mark.parametrize("tile", [1, 16])
def test_int64_index_is_used_whole(run_kernel, index, tile):
    buffer, b = guarded((10,))
    run_kernel(store_tile_at_int64, (1,), (b, index, tile))
    assert_only(buffer, b, untouched(10))


@pytest.mark.parametrize("index,written", [(2 ** 32 + 2, None), (-(2 ** 32) + 2, None),
                                           (2, 2), (9, 9), (10, None), (-1, None)])
def test_element_store_at_int64_index(run_kernel, index, written):
    buffer, b = guarded((10,))
    run_kernel(store_element_at_int64, (1,), (b, index))
    expected = untouched(10)
    if written is not None:
        expected[written] = 1.0
    assert_only(buffer, b, expected)


@pytest.mark.parametrize("index", [0, 2 ** 28, 3 * 2 ** 28, -(2 ** 28)])
def test_far_load_reads_padding(run_kernel, rng, index):
    a = rng.uniform(1.0, 2.0, 10).astype(np.float32)
    out = np.full(16, np.nan, np.float32)
    run_kernel(load_tile_at_int64, (1,), (a, out, index))
    expected = np.full(16, -np.inf, np.float32)
    if index == 0:
        expected[:10] = a
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("i,j", [(2 ** 30, 0), (0, 2 ** 29), (-(2 ** 30), 1),
                                 (2 ** 31 - 1, 2 ** 31 - 1)])
def test_far_tiled_view_tile_writes_nothing(run_kernel, i, j):
    buffer, b = guarded((10, 20))
    run_kernel(store_view_tile_at, (1,), (b, i, j))
    assert_only(buffer, b, untouched((10, 20)))


def test_last_tiled_view_tile_writes_its_part(run_kernel):
    buffer, b = guarded((10, 20))
    run_kernel(store_view_tile_at, (1,), (b, 2, 2))
    expected = untouched((10, 20))
    expected[8:10, 16:20] = 1.0
    assert_only(buffer, b, expected)


# -- the copies of a pipelined loop -----------------------------------------------------------
@ct.kernel
def matmul_rows_at(a, b, out, i):
    """A product whose loads a K loop pipelines (cp.async or the TMA): the row tile of ``a``
    at run-time index ``i``."""
    acc = ct.zeros((64, 64), ct.float32)
    for k in range(ct.num_tiles(a, 1, (64, 32))):
        x = ct.load(a, (i, k), (64, 32), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, (k, 0), (32, 64), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(x, y, acc)
    ct.store(out, (0, 0), acc)


@ct.kernel
def matmul_rows_at_int64(a: ct.IndexedWithInt64, b: ct.IndexedWithInt64, out, i):
    acc = ct.zeros((64, 64), ct.float32)
    for k in range(ct.num_tiles(a, 1, (64, 32))):
        x = ct.load(a, (i, k), (64, 32), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, (k, 0), (32, 64), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(x, y, acc)
    ct.store(out, (0, 0), acc)


@pytest.mark.parametrize("kernel", [matmul_rows_at, matmul_rows_at_int64],
                         ids=["int32_indexed", "int64_indexed"])
@pytest.mark.parametrize("index", [0, 2 ** 26, -(2 ** 26), 2 ** 31 - 1])
def test_pipelined_loads_of_a_far_tile_read_padding(run_kernel, rng, kernel, index):
    a = rng.uniform(-1.0, 1.0, (64, 128)).astype(np.float16)
    b = rng.uniform(-1.0, 1.0, (128, 64)).astype(np.float16)
    out = np.full((64, 64), np.nan, np.float32)
    run_kernel(kernel, (1,), (a, b, out, index))
    if index == 0:
        expected = a.astype(np.float64) @ b.astype(np.float64)
        error = np.abs(out - expected).max() / np.abs(expected).max()
        assert error < 1e-2, error
    else:  # the rows of a 2**32 elements away are outside: zero padding
        np.testing.assert_array_equal(out, np.zeros((64, 64), np.float32))
