"""The tensor-core products still running when a pipelined k-loop ends are waited for on
the loop's way out alone: the loop leaves through a block of its own after its last
iteration, so that ptxas sees every way out pass the wait. (A wait inside the loop under a
test of its own made ptxas add a wait for every product at the end of every iteration, its
C7517 note; one where the way that skips the loop joins made it serialize the products.)

Values are compared with NumPy in float64; outputs are poisoned and guarded.
"""

import warnings

import numpy as np
import pytest

import numba_tile as ct
from conftest import guarded, guards_untouched, relative_error


@ct.kernel(num_stages=3)
def matmul_then_last_k(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                       TK: ct.Constant[int]):
    """``C = A @ B + k``, ``k`` the loop variable's value after the loop (its last)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc + k)


@ct.kernel(num_stages=3)
def scaled_matmul_after_static_iter(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                                    TK: ct.Constant[int]):
    """``C = 3 A @ B``, the scale summed by a ``static_iter`` loop before the k-loop (the
    kernel is then in SSA form when the k-loop is pipelined: the wait stays inside it)."""
    bm, bn = ct.bid(0), ct.bid(1)
    scale = 0.0
    for step in ct.static_iter((1.0, 2.0)):
        scale = scale + step
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc * scale)


def _inputs(rng, m, n, depth):
    a = rng.standard_normal((m, depth)).astype(np.float16)
    b = rng.standard_normal((depth, n)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("depth", [32, 64, 96, 160])
def test_loop_variable_after_the_loop_keeps_its_last_value(run_kernel, rng, depth):
    """1 to 5 iterations: the way out that skips the loop's test still leaves ``k`` at the
    last iteration's value, and every product waited for."""
    tm, tn, tk = 64, 64, 32
    a, b, expected = _inputs(rng, 2 * tm, 2 * tn, depth)
    buffer, c = guarded((2 * tm, 2 * tn), np.float32)
    run_kernel(matmul_then_last_k, (2, 2), (a, b, c, tm, tn, tk))
    assert relative_error(c, expected + (depth // tk - 1)) < 1e-5
    assert guards_untouched(buffer, c.shape)


def test_k_loop_after_static_iter_waits_inside_the_loop(run_kernel, rng):
    tm, tn, tk = 64, 64, 32
    a, b, expected = _inputs(rng, 2 * tm, tn, 4 * tk)
    buffer, c = guarded((2 * tm, tn), np.float32)
    run_kernel(scaled_matmul_after_static_iter, (2, 1), (a, b, c, tm, tn, tk))
    assert relative_error(c, 3 * expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def _k_loop_kernels():
    """``(name, kernel, args)`` of the benchmark's pipelined kernels whose products run on
    into the next iteration."""
    from numba_tile.bench.kernels import attention_launch, matmul_launch
    a = np.zeros((512, 512), np.float16)
    found = []
    for warps, tiles in ((4, (128, 128, 64)), (8, (128, 256, 64))):
        kernel, _, args = matmul_launch(a, a, a.copy(), tile_m=tiles[0], tile_n=tiles[1],
                                        tile_k=tiles[2], num_warps=warps)
        found.append((f"matmul {warps} warps", kernel, args))
    kernel, _, args = matmul_launch(a, a, a.copy(), tile_m=128, tile_n=128, tile_k=64,
                                    num_warps=8, persistent_blocks=4)
    found.append(("persistent matmul", kernel, args))
    q = np.zeros((1, 2, 512, 128), np.float16)
    for pipelined in (False, True):
        kernel, _, args = attention_launch(q, q, q, q.copy(), tile_m=128, tile_n=64,
                                           num_warps=8, pipelined=pipelined)
        found.append((f"attention pipelined={pipelined}", kernel, args))
    return found


@pytest.mark.parametrize("case", range(5))
def test_products_are_not_waited_for_in_every_iteration(case):
    """ptxas adds no wait of its own (C7517) and serializes no product in the benchmark's
    matmul and attention kernels on sm_90; the kernel waits for all products (count 0)
    once, after its loop's last iteration."""
    name, kernel, args = _k_loop_kernels()[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = ct.compile(kernel, args, arch="sm_90")
    assert not [w for w in caught if "serialized" in str(w.message)], name
    if not compiled.info_log:
        pytest.skip("no nvJitLink here: ptxas's notes cannot be read")
    assert "C7517" not in compiled.info_log, name
    assert "wgmma.wait_group.sync.aligned 0;" in compiled.ptx, name


def test_tfloat32_products_wait_for_the_last_before_reading_b():
    """A tfloat32 product runs as ``C^T = B^T A^T`` with B^T read from its stage into
    registers: ptxas does not keep the next iteration's B^T out of the registers the last
    product may still read, so each iteration waits for it (count 0) before the reads
    (without this wait the H100 summed wrong values)."""
    from numba_tile.bench.kernels import matmul_launch
    a = np.zeros((256, 96), np.float32)
    kernel, _, args = matmul_launch(a, a.T.copy(), np.zeros((256, 256), np.float32),
                                    tile_m=128, tile_n=128, tile_k=32, num_warps=4,
                                    tf32=True)
    ptx = ct.compile(kernel, args, arch="sm_90").ptx
    loop = ptx[ptx.index("mbarrier.try_wait"):]
    first_product = loop.index("wgmma.mma_async")
    before = loop[:first_product]
    assert "wgmma.wait_group.sync.aligned 0;" in before
    assert before.rindex("wgmma.wait_group.sync.aligned 0;") < before.rindex("ld.shared")


@ct.kernel(num_stages=3)
def matmul_skipping_odd_extras(A, B, C, E, TM: ct.Constant[int], TN: ct.Constant[int],
                               TK: ct.Constant[int]):
    """``C = A @ B`` and ``E`` the sum of the even k-steps' indices: a ``continue`` after
    the product gives the loop two ends of an iteration."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    extra = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
        if k % 2 == 1:
            continue
        extra = extra + k
    ct.store(C, (bm, bn), acc)
    ct.store(E, (bm, bn), extra)


@pytest.mark.parametrize("kernel", [
    matmul_skipping_odd_extras,
    # a producer warp (see test_warp_specialize.py): each end of an iteration frees a stage
    matmul_skipping_odd_extras.replace_hints(warp_specialize=True)],
    ids=["block barrier", "producer warp"])
def test_k_loop_with_two_ends_of_an_iteration(run_kernel, rng, kernel):
    tm, tn, tk = 64, 64, 32
    a, b, expected = _inputs(rng, 2 * tm, tn, 5 * tk)
    buffer, c = guarded((2 * tm, tn), np.float32)
    extra_buffer, extra = guarded((2 * tm, tn), np.float32)
    run_kernel(kernel, (2, 1), (a, b, c, extra, tm, tn, tk))
    assert relative_error(c, expected) < 1e-5
    assert np.array_equal(extra, np.full((2 * tm, tn), 0 + 2 + 4, np.float32))
    assert guards_untouched(buffer, c.shape) and guards_untouched(extra_buffer, extra.shape)
