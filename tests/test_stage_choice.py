"""How many stages a pipelined loop gets where the kernel gives no ``num_stages``, and what
the ``occupancy`` hint bounds.

The stages first fill the shared memory (at most four); where an op then finds too little
left for its scratch buffer, the kernel is compiled again with stages that leave a quarter
of it. The ``occupancy`` hint bounds the registers only for as many blocks as the shared
memory lets a multiprocessor hold. Values are compared with NumPy in float64 on poisoned,
guarded outputs; the compile checks read what ``ct.compile`` reports for sm_90.
"""

import re

import numpy as np
import pytest

import numba_tile as ct
from conftest import guarded, guards_untouched, relative_error
from numba_tile.bench.documented_attention import attention_as_documented, \
    documented_attention_launch


@ct.kernel
def matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@ct.kernel
def matmul_transposed(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                      TK: ct.Constant[int]):
    """``C = (A @ B).T``: the transpose of the float32 accumulator goes through 64 KiB of
    shared memory after the loop."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bn, bm), ct.transpose(acc))


TILE = 128  # a stage: a 128 x 128 tile of A and one of B, float16, 64 KiB


def _stages(compiled):
    """The ring's stages: each has the barrier its copies complete, and where a producer
    warpgroup refills it (three stages or fewer, two warpgroups), one the consumers free."""
    barriers = compiled.ptx.count("mbarrier.init")
    return barriers // 2 if "setmaxnreg" in compiled.ptx else barriers


def _compiled(kernel):
    a = np.zeros((2 * TILE, 4 * TILE), np.float16)
    b = np.zeros((4 * TILE, 2 * TILE), np.float16)
    return ct.compile(kernel, (a, b, np.zeros((2 * TILE, 2 * TILE), np.float32),
                               TILE, TILE, TILE), arch="sm_90")


def test_stages_fill_the_shared_memory():
    """Three 64 KiB stages fit in the 227 KiB of a block on sm_90; leaving a quarter for
    the scratch buffer gave two. The product's loop has one product, so no producer
    warpgroup comes with the full ring (its two warpgroups would take no turns)."""
    compiled = _compiled(matmul)
    assert _stages(compiled) == 3
    assert compiled.num_warps == 8 and "setmaxnreg" not in compiled.ptx


def test_an_op_that_needs_the_room_gets_fewer_stages():
    """The transpose needs 64 KiB besides the ring: compiled again with two stages, not
    refused; with ``num_stages=3`` asked for, the error says what to change."""
    assert _stages(_compiled(matmul_transposed)) == 2
    with pytest.raises(ct.TileUnsupportedFeatureError, match="fewer num_stages leave more"):
        _compiled(matmul_transposed.replace_hints(num_stages=3))


@pytest.mark.parametrize("kernel", [matmul, matmul_transposed])
def test_products_with_the_stages_chosen(run_kernel, rng, kernel):
    a = rng.standard_normal((2 * TILE, 4 * TILE)).astype(np.float16)
    b = rng.standard_normal((4 * TILE, 2 * TILE)).astype(np.float16)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    if kernel is matmul_transposed:
        expected = expected.T
    buffer, c = guarded(expected.shape, np.float32)
    run_kernel(kernel, (2, 2), (a, b, c, TILE, TILE, TILE))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def _documented(tile_n, head_dim):
    q = np.zeros((1, 2, 256, head_dim), np.float16)
    args = documented_attention_launch(q, q, q, q.copy(), tile_m=128, tile_n=tile_n)[2]
    compiled = ct.compile(attention_as_documented, args, arch="sm_90")
    return compiled, int(re.search(r"\.minnctapersm (\d+)", compiled.ptx)[1])


def test_occupancy_bounds_registers_only_for_blocks_that_fit():
    """The documented attention kernel asks for two blocks a multiprocessor. At head dim 64
    two fit (100 KiB of shared memory each): the hint stands. With 128 x 128 tiles at head
    dim 128 one block takes 226 KiB: the registers are not cut to half the file, where the
    kernel spilled 3 KiB a thread."""
    compiled, blocks = _documented(64, 64)
    assert blocks == 2 and compiled.shared_bytes <= 113 * 1024
    compiled, blocks = _documented(128, 128)
    assert blocks == 1 and compiled.shared_bytes > 114 * 1024
    assert compiled.spill_bytes == 0 and compiled.registers > 128
