"""Linear layouts (numba_tile.layouts), checked by brute force over every location."""

import itertools

import pytest

from numba_tile.layouts import LinearLayout, blocked, conversion_kind, mma_accumulator

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


def test_invalid_layouts_are_refused():
    with pytest.raises(ValueError):
        LinearLayout((3,), {})
    with pytest.raises(ValueError):
        LinearLayout((4,), {"register": [(4,)]})
    with pytest.raises(ValueError):
        mma_accumulator((16, 8), 2, 1)
