"""Tiles past :data:`numba_tile.rules.core.MAX_TILE_ELEMENTS` elements are rejected with
``TileValueError`` when the kernel is typed, in both executors, whichever op makes them: the
compiler would otherwise run for minutes on them (each thread holds its share in registers).
Each case must fail fast: the tile is never built.
"""

import time

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.rules.core import MAX_TILE_ELEMENTS


@ct.kernel
def load_huge(x):
    ct.store(x, (0,), ct.load(x, (0,), (2 ** 24,)))


@ct.kernel
def full_huge(x):
    ct.store(x, (0, 0), ct.full((2 ** 15, 2 ** 15), 1.0, ct.float32))


@ct.kernel
def broadcast_huge(x):
    a = ct.arange(2 ** 12, dtype=ct.float32)
    ct.store(x, (0, 0), a[:, None] + a[None, :])


@ct.kernel
def cat_past_the_limit(x, N: ct.Constant[int]):
    a = ct.zeros((N,), ct.float32)
    ct.store(x, (0,), ct.cat((a, a), 0))


@ct.kernel
def at_the_limit(x, N: ct.Constant[int]):
    ct.store(x, (0,), ct.load(x, (0,), (N,)) * 2.0)


@pytest.mark.parametrize("kernel,args", [
    (load_huge, (np.zeros(16, np.float32),)),
    (full_huge, (np.zeros((4, 4), np.float32),)),
    (broadcast_huge, (np.zeros((4, 4), np.float32),)),
    (cat_past_the_limit, (np.zeros(16, np.float32), MAX_TILE_ELEMENTS)),
], ids=["load", "full", "broadcast", "cat"])
def test_tiles_past_the_limit_are_rejected_fast(run_kernel, kernel, args):
    start = time.monotonic()
    with pytest.raises(ct.TileValueError, match=f"a tile may have at most {MAX_TILE_ELEMENTS}"):
        run_kernel(kernel, (1,), args)
    assert time.monotonic() - start < 30


def test_a_tile_at_the_limit_is_fine(run_kernel, rng):
    x = rng.uniform(-1, 1, MAX_TILE_ELEMENTS).astype(np.float32)
    expected = x * 2
    run_kernel(at_the_limit, (1,), (x, MAX_TILE_ELEMENTS))
    np.testing.assert_array_equal(x, expected)
