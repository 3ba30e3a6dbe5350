"""The kernel option ``warp_specialize``: on sm_90 a producer warp, added to the block,
starts the TMA copies of a pipelined loop's loads while the kernel's own warps (the
consumers) only wait for their stages and tell the producer, by an ``mbarrier`` arrival,
when they are done with one; their barriers become named barriers of the consumers alone.

Values are compared with NumPy in float64 (interpreter, compile and GPU modes: the
interpreter takes the option and ignores it); outputs are poisoned and guarded. The compile
checks read the PTX of sm_90 and sm_80. (A loop with a ``continue``, two ends of an
iteration that each free a stage, is in ``test_loop_exit_waits.py``, with and without the
option.)
"""

import re

import numpy as np
import pytest

import numba_tile as ct
from conftest import GUARD, gpu_of_compute_capability_9, guarded, guards_untouched, \
    relative_error


@ct.kernel(num_stages=3, warp_specialize=True)
def scaled_matmul(A, B, S, C, TM: ct.Constant[int], TN: ct.Constant[int],
                  TK: ct.Constant[int]):
    """``C = sum(S) * (A @ B)``: the sum, before the loop, is a reduction across the
    block's warps (shared memory and barriers while the producer copies)."""
    bm, bn = ct.bid(0), ct.bid(1)
    scale = ct.sum(ct.load(S, (0,), (256,)))
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc * scale)


@ct.kernel(num_stages=3, warp_specialize=True)
def matmul_of_some_blocks(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                          TK: ct.Constant[int]):
    """``C = A @ B`` in the blocks of the first block row, 1 elsewhere: a way through the
    kernel skips the loop, so no producer warp (it would wait for consumers that never
    come)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 1, ct.float32)
    if bm == 0:
        acc = ct.zeros((TM, TN), ct.float32)
        for k in range(ct.cdiv(A.shape[1], TK)):
            acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@ct.kernel(num_stages=3, warp_specialize=True)
def matmul_with_a_joined_bound(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                               TK: ct.Constant[int]):
    """``C = A @ B``, the loop's bound a value two sides of an ``if`` give: not one plain
    computation, so the producer could not compute it again (no producer warp)."""
    bm, bn = ct.bid(0), ct.bid(1)
    if bn == 0:
        steps = ct.cdiv(A.shape[1], TK)
    else:
        steps = A.shape[1] // TK
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(steps):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@ct.kernel(num_stages=3, warp_specialize=True)
def two_matmuls(A, B, C, D, TM: ct.Constant[int], TN: ct.Constant[int],
                TK: ct.Constant[int]):
    """``C = A @ B`` and ``D = 2 A @ B`` in two loops: a producer warp serves one loop
    only, so the kernel gets none."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(D, (bm, bn), acc * 2)


@ct.kernel(num_stages=3, warp_specialize=True)
def matmul_of_doubled_steps(A, B, C, steps, TM: ct.Constant[int], TN: ct.Constant[int],
                            TK: ct.Constant[int]):
    """``C = A @ B`` over ``2 * steps`` k-steps, the parameter set again before the loop:
    the producer computes the bound the loop reads, not the parameter's first value."""
    bm, bn = ct.bid(0), ct.bid(1)
    steps = steps * 2
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(steps):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


def _inputs(rng, m, n, depth):
    a = rng.standard_normal((m, depth)).astype(np.float16)
    b = rng.standard_normal((depth, n)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


TM, TN, TK = 64, 64, 32


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 7])
def test_matmul_with_a_producer_warp(run_kernel, rng, steps):
    """1 to 7 iterations with 3 stages: fewer than the stages (the producer never waits),
    as many, and more (it waits for the consumers to free each stage)."""
    a, b, expected = _inputs(rng, 2 * TM, 2 * TN, steps * TK)
    s = rng.uniform(0.5, 1.5, 256).astype(np.float32)
    buffer, c = guarded((2 * TM, 2 * TN), np.float32)
    run_kernel(scaled_matmul, (2, 2), (a, b, s, c, TM, TN, TK))
    assert relative_error(c, expected * s.astype(np.float64).sum()) < 1e-5
    assert guards_untouched(buffer, c.shape)


@pytest.mark.parametrize("num_warps", [2, 8])
def test_producer_warp_beside_other_warp_counts(run_kernel, rng, num_warps):
    """Two warps (products by ``mma.sync``, reading their stages) and eight (two
    warpgroups); the consumers' barrier counts their threads."""
    a, b, expected = _inputs(rng, 2 * TM, 2 * TN, 5 * TK)
    s = rng.uniform(0.5, 1.5, 256).astype(np.float32)
    buffer, c = guarded((2 * TM, 2 * TN), np.float32)
    run_kernel(scaled_matmul.replace_hints(num_warps=num_warps), (2, 2),
               (a, b, s, c, TM, TN, TK))
    assert relative_error(c, expected * s.astype(np.float64).sum()) < 1e-5
    assert guards_untouched(buffer, c.shape)


def test_two_pipelined_loops(run_kernel, rng):
    a, b, expected = _inputs(rng, 2 * TM, 2 * TN, 4 * TK)
    buffer, c = guarded((2 * TM, 2 * TN), np.float32)
    other_buffer, d = guarded((2 * TM, 2 * TN), np.float32)
    run_kernel(two_matmuls, (2, 2), (a, b, c, d, TM, TN, TK))
    assert relative_error(c, expected) < 1e-5 and relative_error(d, 2 * expected) < 1e-5
    assert guards_untouched(buffer, c.shape) and guards_untouched(other_buffer, d.shape)


def test_matmul_with_a_parameter_set_again(run_kernel, rng):
    a, b, expected = _inputs(rng, 2 * TM, 2 * TN, 6 * TK)
    buffer, c = guarded((2 * TM, 2 * TN), np.float32)
    run_kernel(matmul_of_doubled_steps, (2, 2), (a, b, c, 3, TM, TN, TK))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def test_matmul_with_a_joined_bound(run_kernel, rng):
    a, b, expected = _inputs(rng, 2 * TM, 2 * TN, 5 * TK)
    buffer, c = guarded((2 * TM, 2 * TN), np.float32)
    run_kernel(matmul_with_a_joined_bound, (2, 2), (a, b, c, TM, TN, TK))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def test_matmul_where_a_way_skips_the_loop(run_kernel, rng):
    a, b, expected = _inputs(rng, 2 * TM, 2 * TN, 4 * TK)
    expected[TM:] = 1
    buffer, c = guarded((2 * TM, 2 * TN), np.float32)
    run_kernel(matmul_of_some_blocks, (2, 2), (a, b, c, TM, TN, TK))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def _reference_attention(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        seq = q.shape[-2]
        scores = np.where(np.tril(np.ones((seq, seq), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ v


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("tile_m, num_warps", [(64, 4), (128, 8), (256, 16)])
def test_attention_with_a_producer_warp(run_kernel, rng, causal, head_dim, tile_m,
                                        num_warps):
    """One consumer warpgroup beside a producer warp, and two or four beside a producer
    warpgroup (which gives them its registers on sm_90, and with which they take turns
    between their products: four in a ring)."""
    from numba_tile.bench.kernels import attention_launch
    q, k, v = (rng.standard_normal((1, 2, 256, head_dim)).astype(np.float16)
               for _ in range(3))
    buffer, out = _rows_guarded(np.full, q.shape)
    kernel, grid, args = attention_launch(q, k, v, out, causal=causal, tile_m=tile_m,
                                          tile_n=64, num_warps=num_warps, num_stages=3,
                                          warp_specialize=True)
    run_kernel(kernel, grid, args)
    assert relative_error(out, _reference_attention(q, k, v, causal)) < 2e-3
    assert np.isnan(buffer[:GUARD]).all() and np.isnan(buffer[-GUARD:]).all()


def _rows_guarded(full, shape, **device):
    """``(buffer, out)``: ``out`` of ``shape`` (float16, contiguous, so that the launcher's
    reshape to rows is a view) between ``GUARD`` rows of NaN, all NaN; ``full`` is
    ``np.full`` or ``torch.full``."""
    rows = int(np.prod(shape[:-1]))
    buffer = full((rows + 2 * GUARD, shape[-1]), float("nan"), dtype=_float16(full), **device)
    return buffer, buffer[GUARD:GUARD + rows].reshape(shape)


def _float16(full):
    return np.float16 if full is np.full else __import__("torch").float16


def _compiled(kernel, arch, depth=4 * TK):
    a = np.zeros((2 * TM, depth), np.float16)
    b = np.zeros((depth, 2 * TN), np.float16)
    args = (a, b, np.zeros((2 * TM, 2 * TN), np.float32), TM, TN, TK)
    if kernel.fn is scaled_matmul.fn:
        args = args[:2] + (np.zeros(256, np.float32),) + args[2:]
    if kernel is two_matmuls:
        args = args[:3] + (args[2].copy(),) + args[3:]
    return ct.compile(kernel, args, arch=arch)


def test_the_block_gets_a_producer_warp_on_sm_90():
    """One warp more than the kernel's 4; the consumers' barriers name barrier 1 and count
    their 128 threads; each tells the producer when a stage is free."""
    compiled = _compiled(scaled_matmul, "sm_90")
    assert compiled.num_warps == 5
    ptx = compiled.ptx
    assert "setmaxnreg" not in ptx and compiled.cubin is not None
    assert "barrier.sync 1, 128;" in ptx.replace("\t", " ").replace("  ", " ")
    assert "mbarrier.arrive.shared::cta.b64" in ptx
    assert ".maxntid 160, 1, 1" in ptx


def _lines(ptx):
    return [" ".join(line.split()) for line in ptx.splitlines()]


@pytest.mark.parametrize("num_warps, consumer_registers", [(8, 240), (16, 112)])
def test_two_warpgroups_or_more_get_a_producer_warpgroup(num_warps, consumer_registers):
    """The producer is a warpgroup that keeps 24 registers a thread and ends its three
    warps that start no copies; the consumers take the rest (8 warps: 168 a thread at the
    start, 240 after; 16 warps: 96, then 112). The way of each ends apart (``exit``), the
    block is the multiprocessor's only one, and the driver compiles the PTX (on the GPU,
    ``test_the_driver_honours_the_register_split`` checks that ptxas takes the split)."""
    compiled = _compiled(scaled_matmul.replace_hints(num_warps=num_warps), "sm_90")
    assert compiled.num_warps == num_warps + 4 and compiled.cubin is None
    lines = _lines(compiled.ptx)
    threads = 32 * (num_warps + 4)
    assert f".maxntid {threads}, 1, 1" in lines and ".minnctapersm 1" in lines
    assert lines.count(f"setmaxnreg.inc.sync.aligned.u32 {consumer_registers};") == 1
    assert lines.count("setmaxnreg.dec.sync.aligned.u32 24;") == 1
    assert lines.count("exit;") == 2  # the three idle warps, then the copying one
    assert f"barrier.sync 1, {32 * num_warps};" in lines


def test_a_producer_warp_where_the_kernel_asks_for_two_blocks_a_multiprocessor():
    """Two blocks share the registers: the producer stays one warp, its registers kept."""
    kernel = scaled_matmul.replace_hints(num_warps=8, occupancy=2)
    compiled = _compiled(kernel, "sm_90")
    assert compiled.num_warps == 9 and "setmaxnreg" not in compiled.ptx


@pytest.mark.parametrize("kernel", [matmul_of_some_blocks, matmul_with_a_joined_bound,
                                    two_matmuls])
def test_no_producer_warp_where_the_loop_cannot_have_one(kernel):
    compiled = _compiled(kernel, "sm_90")
    assert compiled.num_warps == 4
    assert "mbarrier.arrive.shared" not in compiled.ptx


def test_no_producer_warp_without_the_tma():
    """On sm_80 the copies are every thread's ``cp.async``: the option changes nothing."""
    assert _compiled(scaled_matmul, "sm_80").num_warps == 4


def _persistent_matmul(c, blocks, num_warps, a, b):
    from numba_tile.bench.kernels import matmul_launch
    kernel, grid, args = matmul_launch(a, b, c, tile_m=TM, tile_n=TN, tile_k=TK,
                                       num_warps=num_warps, num_stages=3,
                                       persistent_blocks=blocks)
    return kernel.replace_hints(warp_specialize=True), grid, args


def test_a_loop_run_again_gets_a_producer_warp():
    """The k-loop of a persistent matmul runs once a tile of C: the producer warp runs the
    loop over the block's tiles too, and counts its iterations over all of them, as the
    consumers count theirs (the phases of the stages' barriers follow that count)."""
    a = np.zeros((2 * TM, 4 * TK), np.float16)  # (values do not matter to a compile)
    b = np.zeros((4 * TK, 2 * TN), np.float16)
    kernel, _, args = _persistent_matmul(np.zeros((2 * TM, 2 * TN), np.float32), 2, 4, a, b)
    compiled = ct.compile(kernel, args, arch="sm_90")
    assert compiled.num_warps == 5
    assert "mbarrier.arrive.shared::cta.b64" in compiled.ptx


@pytest.mark.parametrize("blocks", [1, 4, 6])
@pytest.mark.parametrize("num_warps", [4, 8])
def test_persistent_matmul_with_a_producer_warp(run_kernel, rng, blocks, num_warps):
    """Six tiles of C, 5 k-steps each with 3 stages, taken in turn by one block, by four
    (one or two tiles each) and by six; one consumer warpgroup and two."""
    a, b, expected = _inputs(rng, 3 * TM, 2 * TN, 5 * TK)
    buffer, c = guarded((3 * TM, 2 * TN), np.float32)
    run_kernel(*_persistent_matmul(c, blocks, num_warps, a, b))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


@ct.kernel(num_stages=3, warp_specialize=True)
def persistent_matmul_of_some_rows(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                                   TK: ct.Constant[int]):
    """``C = A @ B`` in the tiles of even tile rows, 1 elsewhere, each block taking tiles in
    turn: a tile that skips the k-loop would leave the producer filling stages nobody
    reads, so no producer warp."""
    tiles_n = ct.cdiv(C.shape[1], TN)
    for tile in range(ct.bid(0), ct.cdiv(C.shape[0], TM) * tiles_n, ct.num_blocks(0)):
        bm, bn = tile // tiles_n, tile % tiles_n
        acc = ct.full((TM, TN), 1, ct.float32)
        if bm % 2 == 0:
            acc = ct.zeros((TM, TN), ct.float32)
            for k in range(ct.cdiv(A.shape[1], TK)):
                acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)),
                             acc)
        ct.store(C, (bm, bn), acc)


def test_persistent_matmul_where_a_tile_skips_the_loop(run_kernel, rng):
    a, b, expected = _inputs(rng, 3 * TM, 2 * TN, 4 * TK)
    expected[TM:2 * TM] = 1
    buffer, c = guarded((3 * TM, 2 * TN), np.float32)
    run_kernel(persistent_matmul_of_some_rows, (4,), (a, b, c, TM, TN, TK))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)
    assert ct.compile(persistent_matmul_of_some_rows, (a, b, c, TM, TN, TK),
                      arch="sm_90").num_warps == 4


@ct.kernel(num_stages=3, warp_specialize=True)
def persistent_products_of_resident_rows(A, B, C, TM: ct.Constant[int],
                                         TN: ct.Constant[int], TK: ct.Constant[int]):
    """``C = A @ (B_0 + B_1 + ... + B_0)`` for the ``TK``-row blocks ``B_k`` of ``B``, a
    block taking the row tiles of ``C`` in turn: the tile of ``A`` is read by the loop's
    products and by one after the loop, so the producer must not refill it when the loop
    is left; the consumers copy it themselves."""
    for bm in range(ct.bid(0), ct.cdiv(C.shape[0], TM), ct.num_blocks(0)):
        a = ct.load(A, (bm, 0), (TM, TK))
        acc = ct.zeros((TM, TN), ct.float32)
        for k in range(ct.cdiv(B.shape[0], TK)):
            acc = ct.mma(a, ct.load(B, (k, 0), (TK, TN)), acc)
        acc = ct.mma(a, ct.load(B, (0, 0), (TK, TN)), acc)
        ct.store(C, (bm, 0), acc)


def test_a_resident_read_after_the_loop_is_not_the_producers(run_kernel, rng):
    a = rng.standard_normal((3 * TM, TK)).astype(np.float16)
    b = rng.standard_normal((4 * TK, TN)).astype(np.float16)
    blocks = b.astype(np.float64).reshape(4, TK, TN)
    expected = a.astype(np.float64) @ (blocks.sum(axis=0) + blocks[0])
    buffer, c = guarded((3 * TM, TN), np.float32)
    run_kernel(persistent_products_of_resident_rows, (2,), (a, b, c, TM, TN, TK))
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)
    compiled = ct.compile(persistent_products_of_resident_rows, (a, b, c, TM, TN, TK),
                          arch="sm_90")
    # the producer's one TMA copy is of B's tiles in the loop
    assert compiled.num_warps == 5 and compiled.ptx.count("cp.async.bulk.tensor") == 1


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("tile_m, num_warps", [(64, 4), (128, 8)])
@pytest.mark.parametrize("blocks", [1, 3])
def test_persistent_attention_with_a_producer_warp(run_kernel, rng, causal, tile_m,
                                                   num_warps, blocks):
    """Blocks that take the row blocks of every head in turn (fewer blocks than row
    blocks: some take more than others): the producer loads the keys and values of a
    block's next rows while its consumers finish the last ones."""
    from numba_tile.bench.kernels import attention_launch
    q, k, v = (rng.standard_normal((1, 2, 256, 64)).astype(np.float16) for _ in range(3))
    buffer, out = _rows_guarded(np.full, q.shape)
    kernel, grid, args = attention_launch(q, k, v, out, causal=causal, tile_m=tile_m,
                                          tile_n=64, num_warps=num_warps, num_stages=3,
                                          warp_specialize=True, persistent_blocks=blocks)
    assert grid == (blocks,)
    run_kernel(kernel, grid, args)
    assert relative_error(out, _reference_attention(q, k, v, causal)) < 2e-3
    assert np.isnan(buffer[:GUARD]).all() and np.isnan(buffer[-GUARD:]).all()


@pytest.mark.parametrize("persistent_blocks", [None, 4])
def test_the_producer_copies_the_queries_too(persistent_blocks):
    """On sm_90 the producer warpgroup copies each row block's queries into their buffer
    with the TMA, as it copies the keys and values (two boxes of 64 columns each: six
    copies), a run of the key loop at a time; none are the threads' ``cp.async``, none
    written into shared memory from registers at every product (typing meets the ring of
    the keys and values first in the persistent kernel). The consumers release the
    buffer once the loop is left: an arrival beside the one that frees a stage."""
    ptx = _attention_ptx(tile_m=128, tile_n=128, num_warps=8, num_stages=3,
                         warp_specialize=True, persistent_blocks=persistent_blocks)
    assert ptx.count("cp.async.bulk.tensor") == 6
    assert "cp.async.cg" not in ptx and "st.shared.v4" not in ptx
    assert ptx.count("mbarrier.arrive.shared::cta.b64") == 2


def test_queries_of_a_kernel_without_a_producer_are_copied_by_its_threads():
    ptx = _attention_ptx(tile_m=128, tile_n=128, num_warps=8, num_stages=3,
                         warp_specialize=False)
    assert "cp.async.cg" in ptx and "mbarrier.arrive.shared::cta.b64" not in ptx


@pytest.mark.parametrize("options, producer", [
    # two warpgroups, three stages filling the shared memory: a producer warpgroup
    ({"tile_n": 128, "num_warps": 8, "num_stages": 3}, True),
    ({"tile_n": 128, "num_warps": 8}, True),  # (the three stages chosen)
    ({"tile_n": 128, "num_warps": 8, "num_stages": 3, "warp_specialize": False}, False),
    ({"tile_n": 64, "num_warps": 8, "num_stages": 4}, False),  # four stages
    ({"tile_n": 128, "num_warps": 4, "num_stages": 3}, False),  # one warpgroup
    ({"tile_n": 64, "num_warps": 8, "num_stages": 3}, False),  # room for a fourth stage
    ({"tile_n": 64, "num_warps": 8, "num_stages": 2}, False),  # room for a second block
    ({"tile_n": 64, "num_warps": 8, "pipelined": True}, False),  # no turns (two loops)
], ids=str)
def test_a_producer_warpgroup_where_the_option_is_left_unset(options, producer):
    """Without ``warp_specialize`` a kernel gets a producer warpgroup (its consumers taking
    most of its registers) where its two warpgroups or more would take turns between the
    two products of a loop whose ring fills the shared memory in three stages or fewer;
    elsewhere its PTX is what ``warp_specialize=False`` gives."""
    from numba_tile.bench.kernels import attention_launch
    q = np.zeros((1, 2, 1024, 128), np.float16)
    kernel, _, args = attention_launch(q, q, q, q.copy(), tile_m=128, **options)
    compiled = ct.compile(kernel, args, arch="sm_90")
    warps = options["num_warps"]
    assert compiled.num_warps == (warps + 4 if producer else warps)
    assert ("setmaxnreg" in compiled.ptx) == producer
    if not producer:
        unset = {k: v for k, v in options.items() if k != "warp_specialize"}
        plain = _attention_ptx(**unset, warp_specialize=False)
        assert _without_names(compiled.ptx) == _without_names(plain)


def test_a_producer_warpgroup_where_an_occupancy_hint_cannot_be_met():
    """``warp_specialize=True`` beside ``occupancy=2`` where the rings leave room for one
    block only (the documented attention kernel, 128 x 128 tiles at head dim 128): the
    producer is a warpgroup, as without the hint, not a single warp."""
    from numba_tile.bench.documented_attention import documented_attention_launch
    q = np.zeros((1, 2, 1024, 128), np.float16)
    kernel, _, args = documented_attention_launch(q, q, q, q.copy(), tile_m=128, tile_n=128)
    compiled = ct.compile(kernel.replace_hints(warp_specialize=True), args, arch="sm_90")
    assert compiled.num_warps == 12 and "setmaxnreg" in compiled.ptx
    assert ".minnctapersm 1" in compiled.ptx


def _without_names(ptx):
    """The PTX without the kernel's mangled name (it counts the compiles of a function)."""
    return re.sub(r"B\d+v\d+B", "BvB", ptx)


def _attention_ptx(**options):
    from numba_tile.bench.kernels import attention_launch
    q = np.zeros((1, 2, 1024, 128), np.float16)  # (values do not matter to a compile)
    kernel, _, args = attention_launch(q, q, q, q.copy(), **options)
    return ct.compile(kernel, args, arch="sm_90").ptx


@pytest.mark.parametrize("causal", [False, True])
def test_consumer_warpgroups_take_turns_between_their_products(causal):
    """Attention with a producer warpgroup: each consumer warpgroup starts ``Q K^T``, waits
    at its named barrier for its turn, waits for the product, computes the softmax, gives
    the next warpgroup its turn and starts ``P V``. The last warpgroup gives the first turn
    before the loop, the first takes the last one after it, so the barriers balance."""
    ptx = _attention_ptx(tile_m=128, tile_n=128, num_warps=8, num_stages=3,
                         warp_specialize=True, causal=causal)
    turns = re.findall(r"bar\.(sync|arrive) %r\d+, %r\d+;", ptx)
    assert turns == ["arrive", "sync", "arrive", "sync"]
    # the order of the products' steps and the turns in the loop
    events = re.findall(r"wgmma\.(commit_group|wait_group|mma_async)|bar\.(sync|arrive) %r",
                        ptx)
    events = [product or turn for product, turn in events]
    take = events.index("sync")
    assert events[take - 1:take + 2] == ["commit_group", "sync", "wait_group"]
    give = events.index("arrive", take)
    assert events[give + 1] == "mma_async"  # just before P V starts


@pytest.mark.parametrize("options", [
    {"tile_n": 64, "num_warps": 8, "pipelined": True, "warp_specialize": True},
    {"tile_n": 64, "num_warps": 4, "num_stages": 3, "warp_specialize": True},
    {"tile_n": 64, "num_warps": 8, "num_stages": 3, "warp_specialize": False}], ids=str)
def test_no_turns_where_they_would_hold_nothing(options):
    """No turns: in FlashAttention-3's two-loop form (``P V`` of the last block starts
    before the scores are read), beside a producer warp (one consumer warpgroup), and
    without a producer."""
    ptx = _attention_ptx(tile_m=128, **options)
    assert not re.findall(r"bar\.(sync|arrive) %r\d+", ptx)


def test_the_option_takes_a_bool():
    with pytest.raises(ValueError, match="warp_specialize must be True, False or None"):
        ct.kernel(warp_specialize=1)(scaled_matmul.fn)


@pytest.mark.skipif(not gpu_of_compute_capability_9(), reason="needs a GPU of sm_90")
@pytest.mark.parametrize("pipelined, tile_n, num_stages", [(False, 128, 3), (True, 64, 4)])
def test_the_driver_honours_the_register_split(pipelined, tile_n, num_stages):
    """The head-dim-128 attention kernels of the benchmark with a producer warpgroup: the
    driver's compile takes the split (none of ptxas's notes that it ignored setmaxnreg) and
    spills nothing, where nvJitLink's compile of the pipelined one, which ignores
    setmaxnreg (168 registers a thread), spills 80 bytes. Values against float64, on a
    poisoned, guarded output."""
    import torch
    from numba_tile.bench.kernels import attention_launch
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((1, 4, 512, 128)).astype(np.float16) for _ in range(3))
    buffer, out = _rows_guarded(torch.full, q.shape, device="cuda")
    kernel, grid, args = attention_launch(*(torch.from_numpy(x).cuda() for x in (q, k, v)),
                                          out, tile_m=128, tile_n=tile_n, num_warps=8,
                                          num_stages=num_stages, pipelined=pipelined,
                                          warp_specialize=True)
    compiled = ct.compile(kernel, args, arch="sm_90")
    assert compiled.cubin is None and "(the driver's compile)" in compiled.info_log
    assert "setmaxnreg" not in compiled.info_log  # (C7504, C7507, C7508 name it)
    assert compiled.registers == 168 and compiled.spill_bytes == 0
    ct.launch(torch.cuda.current_stream(), grid, kernel, args)
    result = buffer.cpu().numpy()
    assert relative_error(result[GUARD:-GUARD].reshape(q.shape),
                          _reference_attention(q, k, v, False)) < 2e-3
    assert np.isnan(result[:GUARD]).all() and np.isnan(result[-GUARD:]).all()
