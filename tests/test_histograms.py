"""``ct.histogram`` (a numba_tile extension): counts against ``np.bincount`` for integer dtypes
of every width and signedness, 1-d and 2-d tiles, values outside the bins (negative, past
the last bin, uint64 values past int64), tiles held by several threads (small tiles in many
warps), a block histogram summed over a loop and merged into global counts with
``atomic_add``, and the errors of its rule.
"""

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.bench.memory_kernels import block_histogram_launch


@ct.kernel
def counts_of(x, out, M: ct.Constant[int], N: ct.Constant[int], BINS: ct.Constant[int]):
    t = ct.load(x, (ct.bid(0), 0), (M, N))
    ct.store(out, (ct.bid(0), 0), ct.reshape(ct.histogram(t, BINS), (1, BINS)))


def _expected(x, bins):
    flat = x.ravel()
    inside = flat[(flat >= 0) & (flat < bins)].astype(np.int64)
    return np.bincount(inside, minlength=bins)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int16, np.uint32,
                                   np.int64, np.uint64])
@pytest.mark.parametrize("shape,bins,warps", [((4, 64), 64, 4), ((1, 8), 16, 8),
                                              ((32, 128), 4096, 4), ((2, 2), 2, 1)])
def test_counts_of_every_integer_dtype(run_kernel, rng, dtype, shape, bins, warps):
    info = np.iinfo(dtype)
    # a third of the values outside the bins: below 0 (or wrapped, unsigned), past the end
    values = rng.integers(max(info.min, -bins // 2), min(info.max, bins + bins // 2),
                          (3,) + shape, dtype=np.int64).astype(dtype)
    if dtype == np.uint64:
        values[0, 0, 0] = np.uint64(2**64 - 1)  # no int64 holds it: not counted
    out = np.full((3, bins), -7, np.int32)
    x = values.reshape(3 * shape[0], shape[1])
    run_kernel(counts_of.replace_hints(num_warps=warps), (3,), (x, out, *shape, bins))
    for block in range(3):
        np.testing.assert_array_equal(out[block], _expected(values[block], bins))


def test_block_histograms_merged_with_atomic_add(run_kernel, rng):
    """The benchmark's kernel: each block counts 4 tiles of 256 values into one block
    histogram, adds it to the counts with one atomic per bin; the last tile is partial."""
    values = rng.integers(0, 256, 3000).astype(np.int32)
    counts = np.zeros(256, np.int32)
    run_kernel(*block_histogram_launch(values, counts, block=256, tiles=4))
    np.testing.assert_array_equal(counts, np.bincount(values, minlength=256))


@ct.kernel
def refused(x, out, WHICH: ct.Constant[int]):
    t = ct.load(x, (0,), (8,))
    if WHICH == 0:
        r = ct.histogram(t.astype(ct.float32), 8)
    elif WHICH == 1:
        r = ct.histogram(t, 6)
    elif WHICH == 2:
        r = ct.histogram(t, 2**15)
    elif WHICH == 3:
        r = ct.histogram(t > 0, 8)
    else:
        r = ct.histogram(t, x.shape[0])
    ct.store(out, (0,), r)


@pytest.mark.parametrize("which,error,match", [
    (0, ct.TileTypeError, "Expected a tile of integers, got float32"),
    (1, ct.TileTypeError, 'Invalid argument "bins" of histogram.*not a power of two'),
    (2, ct.TileTypeError, "At most 16384 bins are supported, got 32768"),
    (3, ct.TileTypeError, "Expected a tile of integers, got bool"),
    (4, ct.TileTypeError, 'Invalid argument "bins" of histogram.*not constant'),
])
def test_errors(run_kernel, which, error, match):
    with pytest.raises(error, match=match):
        run_kernel(refused, (1,), (np.arange(8, dtype=np.int32), np.zeros(8, np.int32),
                                   which))
