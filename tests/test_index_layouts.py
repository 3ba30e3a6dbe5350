"""Index tiles (``ct.arange`` and what is computed from it) made in the layout of the op that
reads them (``numba_tile.compiler.frontend.index_layouts``): results are those of NumPy in every mode,
and a mask over a product's accumulator makes no trip through shared memory."""

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.compiler.types import TileType
from numba_tile.compiler.typing.templates import merged_layout
from numba_tile.layouts import blocked
from test_matrix import check, poisoned, random_matrix


def block_product(a, b, bm, bn, TM, TN, TK):
    """Block ``(bm, bn)`` of ``a @ b`` in float32 (a helper: inlined into the kernels)."""
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(TM, TK))):
        acc = ct.mma(ct.load(a, (bm, k), (TM, TK)), ct.load(b, (k, bn), (TK, TN)), acc)
    return acc


@ct.kernel
def masked_product(a, b, out, TM: ct.Constant[int], TN: ct.Constant[int],
                   TK: ct.Constant[int], SHIFT: ct.Constant[int]):
    """``a @ b`` where column <= row + SHIFT, else -1 (a causal mask's shape)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = block_product(a, b, bm, bn, TM, TN, TK)
    rows = bm * TM + ct.arange(TM, dtype=ct.int32)[:, None]
    columns = bn * TN + ct.arange(TN, dtype=ct.int32)[None, :]
    ct.store(out, (bm, bn), ct.where(columns <= rows + SHIFT, acc, -1.0))


@ct.kernel
def masked_product_with_rows(a, b, out, row_sums, TM: ct.Constant[int],
                             TN: ct.Constant[int], TK: ct.Constant[int],
                             SHIFT: ct.Constant[int]):
    """:func:`masked_product`, its row indices also summed into ``row_sums`` (a second
    reader: they stay in their own layout)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = block_product(a, b, bm, bn, TM, TN, TK)
    rows = bm * TM + ct.arange(TM, dtype=ct.int32)[:, None]
    columns = bn * TN + ct.arange(TN, dtype=ct.int32)[None, :]
    ct.store(out, (bm, bn), ct.where(columns <= rows + SHIFT, acc, -1.0))
    ct.store(row_sums, (bm, bn), ct.sum(rows + columns, axis=1, keepdims=True))


@ct.kernel
def unmasked_product(a, b, out, TM: ct.Constant[int], TN: ct.Constant[int],
                     TK: ct.Constant[int], SHIFT: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = block_product(a, b, bm, bn, TM, TN, TK)
    ct.store(out, (bm, bn), acc + SHIFT)


def _masked_reference(a, b, shift):
    product = a.astype(np.float64) @ b.astype(np.float64)
    rows, columns = np.indices(product.shape)
    return np.where(columns <= rows + shift, product, -1.0)


TILES = [((128, 128, 64), (64, 64, 32), 4), ((128, 128, 64), (128, 64, 32), 8)]


@pytest.mark.parametrize("shape,tiles,num_warps", TILES, ids=str)
@pytest.mark.parametrize("shift", [0, -3])
def test_mask_over_a_product(run_kernel, rng, shape, tiles, num_warps, shift):
    (m, n, k), (tm, tn, tk) = shape, tiles
    a, b = random_matrix(rng, (m, k), ct.float16), random_matrix(rng, (k, n), ct.float16)
    out = poisoned((m, n), np.float32)
    run_kernel(masked_product.replace_hints(num_warps=num_warps), (m // tm, n // tn),
               (a, b, out, tm, tn, tk, shift))
    check(out, _masked_reference(a, b, shift), 1e-5)


@pytest.mark.parametrize("shape,tiles,num_warps", TILES, ids=str)
def test_index_tiles_read_twice_keep_their_values(run_kernel, rng, shape, tiles, num_warps):
    (m, n, k), (tm, tn, tk) = shape, tiles
    a, b = random_matrix(rng, (m, k), ct.float16), random_matrix(rng, (k, n), ct.float16)
    out = poisoned((m, n), np.float32)
    sums = np.full((m, n // tn), -7, np.int32)
    run_kernel(masked_product_with_rows.replace_hints(num_warps=num_warps),
               (m // tm, n // tn), (a, b, out, sums, tm, tn, tk, 1))
    check(out, _masked_reference(a, b, 1), 1e-5)
    rows, blocks = np.indices(sums.shape)
    expected = tn * rows + sum(blocks * tn + c for c in range(tn))
    np.testing.assert_array_equal(sums, expected)


def _barriers(kernel, num_warps, tiles, arch="sm_90"):
    a = np.zeros((128, 128), np.float16)
    compiled = ct.compile(kernel.replace_hints(num_warps=num_warps),
                          (a, a, np.zeros((128, 128), np.float32), *tiles, 0), arch=arch)
    return compiled.ptx.count("bar.sync")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("shape,tiles,num_warps", TILES, ids=str)
def test_mask_over_a_product_moves_nothing_through_shared_memory(arch, shape, tiles,
                                                                 num_warps):
    """The mask is computed in the accumulator's layout: the kernel has the barriers of the
    one without it (those of the pipelined loads and the store), no more."""
    assert _barriers(masked_product, num_warps, tiles, arch) == \
        _barriers(unmasked_product, num_warps, tiles, arch)
    # the check can fail: with a second reader the indices keep their layout and move
    a = np.zeros((128, 128), np.float16)
    second = ct.compile(masked_product_with_rows.replace_hints(num_warps=num_warps),
                        (a, a, np.zeros((128, 128), np.float32),
                         np.zeros((128, 128 // tiles[1]), np.int32), *tiles, 0), arch=arch)
    assert second.ptx.count("bar.sync") > _barriers(unmasked_product, num_warps, tiles, arch)


@pytest.mark.parametrize("pipelined,head_dim", [(True, 128), (False, 64)])
def test_causal_attention_masks_in_registers(pipelined, head_dim):
    """The causal attention kernels have the barriers of the non-causal ones; the plain one
    at head dimension 64 fits two blocks an SM (it had 166 registers when its mask went
    through shared memory)."""
    from numba_tile.bench.kernels import attention_launch
    q = np.zeros((1, 2, 512, head_dim), np.float16)
    barriers = []
    for causal in (False, True):
        kernel, grid, args = attention_launch(q, q, q, q.copy(), causal=causal, tile_m=128,
                                              tile_n=64, num_warps=8, pipelined=pipelined)
        compiled = ct.compile(kernel, args, arch="sm_90")
        barriers.append(compiled.ptx.count("bar.sync"))
    assert barriers[0] == barriers[1]
    assert compiled.spill_bytes == 0
    if not pipelined:
        assert compiled.registers <= 128


def test_merged_layout_needs_agreeing_slices():
    """Slices of one layout merge back into it; slices of two different ones do not."""
    full = blocked((32, 16), num_warps=4, element_bytes=4)
    other = blocked((32, 16), num_warps=4, element_bytes=2)
    rows = TileType(ct.int32, (32, 1), 4, full.collapse((1,)))
    assert merged_layout((32, 16), [rows, TileType(ct.int32, (16,), 4,
                                                   full.collapse((0,)).slice(0))]) == full
    mixed = [rows, TileType(ct.int32, (1, 16), 4, other.collapse((0,)))]
    assert merged_layout((32, 16), mixed) is None
    # default layouts of (32, 1) and (1, 16): too few locations for 512 elements
    assert merged_layout((32, 16), [TileType(ct.int32, (32, 1), 4),
                                    TileType(ct.int32, (1, 16), 4)]) is None


def test_a_failed_second_typing_keeps_the_first(monkeypatch):
    """Should typing the kernel again fail, the pass puts the kernel back as it was: it
    compiles, with the mask moved through shared memory as before the pass existed."""
    from numba_tile.compiler import compile_state
    from numba_tile.compiler.frontend import index_layouts

    class Unreadable(dict):
        def __getitem__(self, key):
            raise KeyError(key)

    class LayoutsLost:
        """The compilation in progress, but the layouts asked for cannot be read back."""

        def __init__(self, compiling):
            self.compiling, self.index_layouts = compiling, Unreadable()

        def __getattr__(self, name):
            return getattr(self.compiling, name)
    monkeypatch.setattr(index_layouts, "current", lambda: LayoutsLost(compile_state.current()))
    a = np.zeros((128, 128), np.float16)
    args = (a, a, np.zeros((128, 128), np.float32), 64, 64, 32, 5)  # a SHIFT no test uses
    compiled = ct.compile(masked_product.replace_hints(num_warps=4), args, arch="sm_90")
    assert compiled.ptx.count("bar.sync") > _barriers(unmasked_product, 4, (64, 64, 32))
