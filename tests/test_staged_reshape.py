"""Kernels written as cuTile's documentation teaches: matrices read as ``(1, 1, m, k)`` boxes
of 4-d arrays and reshaped (they stay in their pipeline stage), reshapes that only drop or
add axes of length 1 (they move nothing), and warps left to the compiler (chosen from the
products' accumulators).

Values are compared with NumPy in float64; outputs are poisoned and guarded.
"""

import math
import re

import numpy as np
import pytest

import numba_tile as ct
from conftest import gpu_of_compute_capability_9, guarded, guards_untouched, relative_error
from numba_tile.bench.documented_attention import attention_as_documented, \
    documented_attention_launch


@ct.kernel(num_stages=3)
def batched_matmul_4d(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                      TK: ct.Constant[int], TRANSPOSED_B: ct.Constant[bool]):
    """``C[b, h] = A[b, h] @ B[b, h]`` (``B[b, h].T`` where ``TRANSPOSED_B``) in boxes of the
    4-d arrays reshaped to matrices, both reshape spellings."""
    bm, bn = ct.bid(0), ct.bid(1)
    b, h = ct.bid(2) // A.shape[1], ct.bid(2) % A.shape[1]
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[3], TK)):
        a = ct.load(A, (b, h, bm, k), (1, 1, TM, TK)).reshape((TM, TK))
        if TRANSPOSED_B:
            y = ct.load(B, (b, h, k, bn), (1, 1, TK, TN), order=(0, 1, 3, 2))
        else:
            y = ct.load(B, (b, h, k, bn), (1, 1, TK, TN))
        acc = ct.mma(a, ct.reshape(y, (TK, TN)), acc)
    ct.store(C, (b, h, bm, bn), acc.reshape((1, 1, TM, TN)))


@ct.kernel(num_stages=3)
def matmul_2d(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    """:func:`batched_matmul_4d` on one matrix held as a 2-d array."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@pytest.mark.parametrize("transposed_b", [False, True])
def test_products_of_reshaped_4d_boxes(run_kernel, rng, transposed_b):
    batch, heads, m, n, k = 2, 3, 128, 64, 96
    a = rng.uniform(-1, 1, (batch, heads, m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (batch, heads, k, n)).astype(np.float16)
    held = np.ascontiguousarray(b.transpose(0, 1, 3, 2)) if transposed_b else b
    buffer, c = guarded((batch, heads, m, n), np.float32)
    run_kernel(batched_matmul_4d, (m // 64, n // 32, batch * heads),
               (a, held, c, 64, 32, 32, transposed_b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def _counts(ptx, *patterns):
    return [len(re.findall(pattern, ptx)) for pattern in patterns]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_reshaped_boxes_stay_in_their_stage(arch):
    """The 4-d kernel's products read their stages as the 2-d one's do: no operand goes
    through registers and the scratch buffer; on sm_90 the TMA copies 4-d boxes."""
    a4, b4, c4 = (np.zeros((2, 3, 128, 128), np.float16), np.zeros((2, 3, 128, 128), np.float16),
                  np.zeros((2, 3, 128, 128), np.float32))
    four = ct.compile(batched_matmul_4d, (a4, b4, c4, 64, 64, 32, False), arch=arch).ptx
    two = ct.compile(matmul_2d, (a4[0, 0], b4[0, 0], c4[0, 0], 64, 64, 32), arch=arch).ptx
    patterns = (r"\bld\.shared", r"\bst\.shared", r"\bbar\.sync", r"\bldmatrix",
                r"\bwgmma\.mma_async", r"\bcp\.async\.cg")
    assert _counts(four, *patterns) == _counts(two, *patterns)
    if arch == "sm_90":
        assert "cp.async.bulk.tensor.4d" in four and "cp.async.bulk.tensor.2d" in two


@ct.kernel
def squeeze_and_expand(X, Y, Z):
    """A ``(1, 64, 32)`` box reshaped to ``(64, 32)`` and stored; the same reshaped to
    ``(1, 1, 64, 32)`` and stored into a 4-d array."""
    x = ct.load(X, (0, 0, 0), (1, 64, 32))
    ct.store(Y, (0, 0), x.reshape((64, 32)) * 2)
    ct.store(Z, (0, 0, 0, 0), ct.reshape(x + 1, (1, 1, 64, 32)))


def test_unit_axis_reshapes(run_kernel, rng):
    x = rng.uniform(-4, 4, (1, 64, 32)).astype(np.float32)
    y_buffer, y = guarded((64, 32), np.float32)
    z_buffer, z = guarded((1, 1, 64, 32), np.float32)
    run_kernel(squeeze_and_expand, (1,), (x, y, z))
    assert np.array_equal(y, x[0] * 2) and np.array_equal(z, (x + 1)[None])
    assert guards_untouched(y_buffer, y.shape) and guards_untouched(z_buffer, z.shape)


def test_unit_axis_reshapes_move_nothing():
    """Dropping or adding axes of length 1 keeps each element in its register: no pass
    through shared memory."""
    x = np.zeros((1, 64, 32), np.float32)
    ptx = ct.compile(squeeze_and_expand, (x, x[0], x[None]), arch="sm_90").ptx
    assert _counts(ptx, r"\bst\.shared", r"\bbar\.sync") == [0, 0]


def _attention_reference(q, k, v, causal):
    scores = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2)
    scores /= math.sqrt(q.shape[-1])
    if causal:
        seq = q.shape[2]
        scores = np.where(np.tril(np.ones((seq, seq), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ v.astype(np.float64)


@pytest.mark.parametrize("hints", [{}, {"warp_specialize": True, "num_stages": 2}], ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_as_documented(run_kernel, rng, causal, hints):
    q, k, v = (rng.uniform(-2, 2, (1, 2, 128, 64)).astype(np.float16) for _ in range(3))
    buffer, out = guarded(q.shape, np.float16)
    kernel, grid, args = documented_attention_launch(q, k, v, out, causal=causal, tile_m=64,
                                                     tile_n=32)
    run_kernel(kernel.replace_hints(**hints) if hints else kernel, grid, args)
    # float16 probabilities and output, the approximate exponential and division
    assert relative_error(out, _attention_reference(q, k, v, causal)) < 2e-3
    assert guards_untouched(buffer, out.shape)


@pytest.mark.parametrize("tile_m, tile_n, head_dim", [(64, 64, 64), (128, 128, 128)])
def test_filled_tiles_stay_constants_beside_a_producer(tile_m, tile_n, head_dim):
    """With a producer warp the consumers' start leaves the kernel's entry block; it is
    still lowered before the loop it leads to, so the running maximum, sum and accumulator,
    filled before an ``if`` of constants, are constants in the layout the loop carries them
    in: nothing of 32 bits goes through shared memory (the 128 x 128 accumulator went
    through 64 KiB of it, which cost the ring a stage)."""
    q = np.zeros((1, 2, 256, head_dim), np.float16)
    args = documented_attention_launch(q, q, q, q.copy(), tile_m=tile_m, tile_n=tile_n)[2]
    kernel = attention_as_documented.replace_hints(occupancy=1, warp_specialize=True,
                                                   num_stages=2)
    ptx = ct.compile(kernel, args, arch="sm_90").ptx
    assert "mbarrier.arrive.shared::cta.b64" in ptx  # the consumers free stages: a producer
    assert "st.shared.u32" not in ptx and "st.shared.f32" not in ptx


def test_warps_chosen_from_the_products():
    """A kernel that gives no ``num_warps`` gets 8 where its accumulators would take more
    than 64 registers a thread in 4 warps and have 128 rows or more, else 4; a kernel that
    gives them keeps them."""
    q = np.zeros((1, 2, 256, 128), np.float16)

    def warps(kernel, tile_m, tile_n):
        args = documented_attention_launch(q, q, q, q, tile_m=tile_m, tile_n=tile_n)[2]
        return ct.compile(kernel, args, arch="sm_90").num_warps
    assert warps(attention_as_documented, 128, 64) == 8  # 96 registers a thread in 4 warps
    assert warps(attention_as_documented, 64, 64) == 4  # 64 rows: one warpgroup's
    assert warps(attention_as_documented.replace_hints(num_warps=4), 128, 64) == 4
    x = np.zeros((1, 64, 32), np.float32)
    assert ct.compile(squeeze_and_expand, (x, x[0], x[None]), arch="sm_90").num_warps == 4


@ct.function
def _row_block(pid=None):
    """The row block ``pid``, by default the block's own: a helper whose branch on its
    ``None`` default is decided when compiling."""
    if pid is None:
        pid = ct.bid(0)
    return pid


@ct.kernel
def wide_product_with_helper(A, B, C):
    """A 128 x 128 float32 accumulator (8 warps chosen: the kernel is compiled again) in a
    kernel that calls a helper with a ``None`` default."""
    bm = _row_block()
    acc = ct.zeros((128, 128), ct.float32)
    for k in range(ct.cdiv(A.shape[1], 32)):
        acc = ct.mma(ct.load(A, (bm, k), (128, 32)), ct.load(B, (k, 0), (32, 128)), acc)
    ct.store(C, (_row_block(bm), 0), acc)


def test_kernel_compiled_again_for_its_warps_decides_the_same_branches(run_kernel, rng):
    """The compile run again with the warps chosen sees the helper as the first one did
    (it used to reuse numba-cuda's flags, left without the SSA form by the first compile's
    inlining, and failed: "Type of `pid` depends on path taken")."""
    a = rng.uniform(-1, 1, (256, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 128)).astype(np.float16)
    buffer, c = guarded((256, 128), np.float32)
    run_kernel(wide_product_with_helper, (2,), (a, b, c))
    assert relative_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5
    assert guards_untouched(buffer, c.shape)
    assert ct.compile(wide_product_with_helper, (a, b, c), arch="sm_90").num_warps == 8


@pytest.mark.parametrize("causal", [False, True])
def test_documented_attention_benchmark_variants_do_not_spill(causal):
    """Where a producer warpgroup hands its registers to the consumers (128 x 128 tiles),
    only the driver's compile honours the split: its report, on a GPU of sm_90, is the
    kernel's own (nvJitLink's, without one, is of a kernel that ignores ``setmaxnreg``)."""
    from numba_tile.bench.cases import _DOCUMENTED_ATTENTION_TILES
    q = np.zeros((4, 16, 4096, 128), np.float16)
    for tiles in _DOCUMENTED_ATTENTION_TILES:
        kernel, _, args = documented_attention_launch(q, q, q, q, causal=causal, **tiles)
        compiled = ct.compile(kernel, args, arch="sm_90")
        split = "setmaxnreg" in compiled.ptx
        assert split == (tiles["tile_n"] == 128), tiles
        if split and not gpu_of_compute_capability_9():
            continue
        assert (compiled.cubin is not None or split) and compiled.spill_bytes == 0, tiles


@ct.kernel(num_stages=2)
def product_of_flat_rows(A, B_ROWS, C, TM: ct.Constant[int], TN: ct.Constant[int],
                         TK: ct.Constant[int]):
    """``C = A @ B`` where row ``k`` of ``B_ROWS`` holds rows ``k * TK`` to ``(k + 1) * TK``
    of ``B`` one after the other: a reshape that is not only of unit axes, which cannot
    stay in the stage."""
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(A.shape[1] // TK):
        b = ct.load(B_ROWS, (k, 0), (1, TK * TN)).reshape((TK, TN))
        acc = ct.mma(ct.load(A, (ct.bid(0), k), (TM, TK)), b, acc)
    ct.store(C, (ct.bid(0), 0), acc)


def test_other_reshapes_of_pipelined_loads(run_kernel, rng):
    m, k, n = 64, 64, 32
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    buffer, c = guarded((m, n), np.float32)
    run_kernel(product_of_flat_rows, (m // 32,), (a, b.reshape(k // 16, 16 * n), c, 32, n, 16))
    assert relative_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5
    assert guards_untouched(buffer, c.shape)
