"""Linear layouts (numba_tile.layouts), checked by brute force over every location."""

import itertools

import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error
from numba_tile.layouts import (LinearLayout, blocked, broadcast_projection, conversion_kind,
                                mma_accumulator, register_sources)

SHAPES = [(1,), (4,), (128,), (1024,), (2, 4), (8, 64), (64, 64), (16, 256), (4, 8, 16)]


def _coverage(layout):
    counts = {}
    for _, coords in layout.locations():
        counts[coords] = counts.get(coords, 0) + 1
    return counts


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8])
def test_blocked_covers_the_tile_evenly(shape, num_warps, element_bytes):
    layout = blocked(shape, num_warps=num_warps, element_bytes=element_bytes)
    counts = _coverage(layout)
    every = set(itertools.product(*(range(n) for n in shape)))
    assert set(counts) == every
    assert len(set(counts.values())) == 1, "every element is held equally often"
    assert layout.is_surjective()
    threads = 32 * num_warps
    total = 1
    for n in shape:
        total *= n
    if total >= threads * layout.in_sizes["register"]:
        assert set(counts.values()) == {1}, "a large tile is not replicated"


@pytest.mark.parametrize("shape,element_bytes,run", [((8, 64), 4, 4), ((8, 64), 2, 8),
                                                      ((4, 256), 1, 16), ((64, 2), 4, 2),
                                                      ((512,), 8, 2)])
def test_blocked_gives_each_thread_a_contiguous_vector(shape, element_bytes, run):
    layout = blocked(shape, num_warps=4, element_bytes=element_bytes)
    for lane, warp in [(0, 0), (5, 1), (31, 3)]:
        coords = [layout.apply(r, lane, warp) for r in range(run)]
        assert all(c[:-1] == coords[0][:-1] for c in coords)
        assert [c[-1] for c in coords] == list(range(coords[0][-1], coords[0][-1] + run))
        assert coords[0][-1] % run == 0, "aligned to the vector width"


@pytest.mark.parametrize("shape,warps", [
    (shape, warps) for shape in [(16, 8), (64, 64), (128, 256)]
    for warps in [(1, 1), (2, 2), (4, 1)]
    if shape[0] >= 16 * warps[0] and shape[1] >= 8 * warps[1]])
def test_mma_accumulator_matches_the_ptx_fragment(shape, warps):
    layout = mma_accumulator(shape, *warps)
    assert set(_coverage(layout).values()) == {1}
    for lane in range(32):
        group, thread_in_group = lane // 4, lane % 4
        # the first 16x8 block of warp 0: c0..c3 of the PTX ISA's m16n8 accumulator figure
        expected = [(group, 2 * thread_in_group), (group, 2 * thread_in_group + 1),
                    (group + 8, 2 * thread_in_group), (group + 8, 2 * thread_in_group + 1)]
        assert [layout.apply(r, lane, 0) for r in range(4)] == expected


def test_slice_drops_a_coordinate_and_replicates():
    layout = blocked((8, 64), num_warps=4, element_bytes=4)
    row = layout.slice(1)
    assert row.shape == (8,)
    for (register, lane, warp), coords in layout.locations():
        assert row.apply(register, lane, warp) == coords[:1]
    assert row.replicated_bits("lane") == [0, 1, 2, 3]


def test_permute_and_expand_dims():
    layout = blocked((4, 8, 16), num_warps=2, element_bytes=4)
    permuted = layout.permute((2, 0, 1))
    expanded = layout.expand_dims(1)
    for (register, lane, warp), (a, b, c) in layout.locations():
        assert permuted.apply(register, lane, warp) == (c, a, b)
        assert expanded.apply(register, lane, warp) == (a, 0, b, c)


@pytest.mark.parametrize("coords", [(0, 0), (3, 17), (7, 63), (5, 40)])
def test_owner_of_inverts_apply(coords):
    layout = blocked((8, 64), num_warps=4, element_bytes=4)
    assert layout.apply(*layout.owner_of(coords)) == coords


def test_conversion_kinds():
    base = LinearLayout((4, 32), {"register": [(0, 1), (1, 0)], "lane": [(0, 2), (0, 4),
                                  (0, 8), (0, 16), (2, 0)], "warp": []})
    swapped_registers = LinearLayout((4, 32), {"register": [(1, 0), (0, 1)],
                                               "lane": base.bases["lane"], "warp": []})
    swapped_lanes = LinearLayout((4, 32), {"register": base.bases["register"],
                                           "lane": [(2, 0)] + base.bases["lane"][:4],
                                           "warp": []})
    assert conversion_kind(base, base) == "none"
    assert conversion_kind(base, swapped_registers) == "registers"
    assert conversion_kind(base, swapped_lanes) == "shuffle"
    two_warps = blocked((64, 64), num_warps=4, element_bytes=4)
    assert conversion_kind(two_warps, mma_accumulator((64, 64), 2, 2)) == "shared"


_SOURCE_CASES = [
    # (source layout, destination layout, whether registers suffice)
    (blocked((128,), 4, 4), blocked((4, 128), 4, 4), True),  # a row against rows
    (blocked((64, 64), 4, 4).collapse((1,)), blocked((64, 64), 4, 4), True),  # keepdims
    (blocked((64, 64), 4, 4).slice(1), blocked((64, 64), 4, 4), False),  # lanes moved
    (blocked((1024,), 4, 2), blocked((1024,), 4, 4), False),  # runs of 8 against 4
    (blocked((8, 64), 4, 4), blocked((8, 64), 4, 4), True),
    (blocked((256,), 1, 4), blocked((2, 256), 1, 2), False),
]


@pytest.mark.parametrize("src,dst,free", _SOURCE_CASES)
def test_register_sources_rename_only_where_each_thread_holds_its_elements(src, dst, free):
    project = broadcast_projection(src.shape, dst.shape)
    sources = register_sources(src, dst, project)
    assert (sources is not None) == free
    if sources is None:
        return
    for (register, lane, warp), coords in dst.locations():  # brute force over every thread
        assert src.apply(sources[register], lane, warp) == project(coords)


def test_invalid_layouts_are_refused():
    with pytest.raises(ValueError):
        LinearLayout((3,), {})
    with pytest.raises(ValueError):
        LinearLayout((4,), {"register": [(4,)]})
    with pytest.raises(ValueError):
        mma_accumulator((16, 8), 2, 1)


# -- layouts in kernels -----------------------------------------------------------------------
@ct.kernel
def column_sums_kernel(x, out, ROWS: ct.Constant[int], N: ct.Constant[int]):
    """A loop-carried accumulator that starts in the default layout and is then assigned the
    layout of a reduction: the variable takes one layout."""
    total = ct.zeros((N,), ct.float32)
    for i in range(ct.cdiv(x.shape[0], ROWS)):
        rows = ct.load(x, index=(i, 0), shape=(ROWS, N), padding_mode=ct.PaddingMode.ZERO)
        total = ct.sum(rows.astype(ct.float32), axis=0) + total
    ct.store(out, index=(0,), tile=total)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_loop_carried_tile_changes_layout(run_kernel, rng, dtype):
    x = rng.standard_normal((40, 256)).astype(dtype)
    out = np.full(256, np.nan, np.float32)
    run_kernel(column_sums_kernel, (1,), (x, out, 16, 256))
    assert relative_error(out, x.astype(np.float64).sum(axis=0)) < 1e-5


@ct.kernel
def mixed_dtypes_kernel(h, f, w, out, ROWS: ct.Constant[int], N: ct.Constant[int]):
    """A float16 array makes runs of 8 elements a thread: tiles loaded from float32 arrays,
    1-d rows and ``arange`` must line up with them."""
    a = ct.load(h, index=(ct.bid(0), 0), shape=(ROWS, N))
    b = ct.load(f, index=(ct.bid(0), 0), shape=(ROWS, N))
    row = ct.load(w, index=(0,), shape=(N,))
    column = ct.arange(N, dtype=ct.int32)
    result = ct.where(column % 3 == 0, a * row, b + row) + ct.sum(b, axis=1, keepdims=True)
    ct.store(out, index=(ct.bid(0), 0), tile=result)


def test_tiles_of_different_runs_combine(run_kernel, rng):
    h = rng.standard_normal((8, 128)).astype(np.float16)
    f = rng.standard_normal((8, 128)).astype(np.float32)
    w = rng.standard_normal(128).astype(np.float32)
    out = np.full((8, 128), np.nan, np.float32)
    run_kernel(mixed_dtypes_kernel, (2,), (h, f, w, out, 4, 128))
    h64, f64, w64 = (v.astype(np.float64) for v in (h, f, w))
    expected = np.where(np.arange(128) % 3 == 0, h64 * w64, f64 + w64) + \
        f64.sum(axis=1, keepdims=True)
    assert relative_error(out, expected) < 1e-5
