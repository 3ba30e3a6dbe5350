"""Pipelined k-loops inside another loop: persistent kernels, where one block loops over
tiles of the output and runs the k-loop again for each, and k-loops of varying lengths run
one after the other. The stages and the phases of their barriers go on from one run of the
k-loop to the next.

Values are compared with NumPy in float64; outputs are poisoned and guarded.
"""

import math
import re

import numpy as np
import pytest

import numba_tile as ct
from conftest import guarded, guards_untouched, relative_error


@ct.kernel(num_stages=3)
def persistent_matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                      TK: ct.Constant[int], GROUP: ct.Constant[int]):
    """``C = A @ B``: each block takes every ``num_blocks``-th tile of ``C``, in groups of
    ``GROUP`` rows of tiles, and runs the k-loop for it."""
    tiles_m, tiles_n = ct.cdiv(A.shape[0], TM), ct.cdiv(B.shape[1], TN)
    k_tiles = ct.cdiv(A.shape[1], TK)
    for tile in range(ct.bid(0), tiles_m * tiles_n, ct.num_blocks(0)):
        group = tile // (GROUP * tiles_n)
        rows = min(tiles_m - group * GROUP, GROUP)
        bm = group * GROUP + tile % rows
        bn = tile % (GROUP * tiles_n) // rows
        acc = ct.zeros((TM, TN), ct.float32)
        for k in range(k_tiles):
            acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
        ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel(num_stages=3)
def triangular_products(A, B, C, TM: ct.Constant[int], TK: ct.Constant[int]):
    """Row block ``i`` of ``C`` is ``A[i] @ B[:k]`` over the first ``i + 1`` k-tiles only
    (each k-loop run has a length of its own, one of them none), for each of the blocks'
    column tiles in turn; ``A`` is read transposed."""
    bm = ct.bid(0)
    for bn in range(ct.cdiv(C.shape[1], TM)):
        acc = ct.zeros((TM, TM), ct.float32)
        for k in range(bm):
            a = ct.load(A, (bm, k), (TM, TK), order=(1, 0))
            acc = ct.mma(a, ct.load(B, (k, bn), (TK, TM)), acc)
        ct.store(C, (bm, bn), acc)


@ct.kernel
def triangular_float8_products(A, BT, C, TM: ct.Constant[int], TK: ct.Constant[int]):
    """:func:`triangular_products` of float8 inputs, B given as ``B^T`` (rows of K) and read
    transposed: on Hopper ``wgmma`` fed by the TMA, each call's sums added in float32."""
    bm = ct.bid(0)
    for bn in range(ct.cdiv(C.shape[1], TM)):
        acc = ct.zeros((TM, TM), ct.float32)
        for k in range(bm):
            b = ct.load(BT, (k, bn), (TK, TM), order=(1, 0))
            acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), b, acc)
        ct.store(C, (bm, bn), acc)


def test_float8_k_loops_of_varying_lengths(run_kernel, rng):
    import ml_dtypes
    tm = tk = 64
    m, n = 4 * tm, 3 * tm  # runs of 0 to 3 iterations, three runs a block
    a = rng.standard_normal((m, m)).astype(ml_dtypes.float8_e4m3fn)
    bt = rng.standard_normal((n, m)).astype(ml_dtypes.float8_e4m3fn)
    buffer, c = guarded((m, n), np.float32)
    run_kernel(triangular_float8_products, (m // tm,), (a, bt, c, tm, tk))
    expected = np.zeros((m, n))
    for i in range(m // tm):
        rows, depth = slice(i * tm, (i + 1) * tm), i * tk
        expected[rows] = a[rows, :depth].astype(np.float64) @ bt[:, :depth].astype(
            np.float64).T
    # (Hopper's float8 tensor cores sum one call's products in fewer bits than float32)
    assert relative_error(c, expected) < 5e-4
    assert guards_untouched(buffer, c.shape)


@ct.kernel
def persistent_attention(Q, K, V, Out, qk_scale, SEQ: ct.Constant[int], TM: ct.Constant[int],
                         TN: ct.Constant[int], D: ct.Constant[int]):
    """Flash attention with a block looping over row blocks of every head (``Q, K, V, Out``
    are ``(heads * SEQ, D)``): each row block's queries are staged once in the outer loop,
    and the keys and values of the inner loop are pipelined, run after run."""
    for tile in range(ct.bid(0), Q.shape[0] // TM, ct.num_blocks(0)):
        first_key = tile // (SEQ // TM) * (SEQ // TN)
        q = ct.load(Q, (tile, 0), (TM, D))
        m_i = ct.full((TM, 1), -math.inf, ct.float32)
        l_i = ct.zeros((TM, 1), ct.float32)
        acc = ct.zeros((TM, D), ct.float32)
        for j in range(SEQ // TN):
            k_t = ct.load(K, (0, first_key + j), (D, TN), order=(1, 0))
            scores = ct.mma(q, k_t, ct.zeros((TM, TN), ct.float32))
            m_new = ct.maximum(m_i, ct.max(scores, axis=1, keepdims=True) * qk_scale)
            p = ct.exp2(scores * qk_scale - m_new)
            alpha = ct.exp2(m_i - m_new)
            l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
            v = ct.load(V, (first_key + j, 0), (TN, D))
            acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
            m_i = m_new
        out = ct.truediv(acc, l_i, rounding_mode=ct.RoundingMode.FULL)  # (no slow path)
        ct.store(Out, (tile, 0), out.astype(Out.dtype))


def test_persistent_attention(run_kernel, rng):
    heads, seq, d = 2, 128, 64
    q, k, v = (rng.uniform(-2, 2, (heads * seq, d)).astype(np.float16) for _ in range(3))
    buffer, out = guarded(q.shape, np.float16)
    # 3 blocks for the 4 row blocks of 64 (one block runs two), 4 key blocks each
    run_kernel(persistent_attention, (3,), (q, k, v, out, math.log2(math.e) / math.sqrt(d),
                                            seq, 64, 32, d))
    expected = np.empty(q.shape)
    for h in range(heads):
        rows = slice(h * seq, (h + 1) * seq)
        scores = q[rows].astype(np.float64) @ k[rows].astype(np.float64).T / math.sqrt(d)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        expected[rows] = weights / weights.sum(-1, keepdims=True) @ v[rows].astype(np.float64)
    # (float16 probabilities and output)
    assert relative_error(out, expected) < 2e-3
    assert guards_untouched(buffer, out.shape)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_persistent_matmul(run_kernel, rng, dtype):
    m, n, k = 192, 160, 224  # tiles past the edges (of m and n), 7 k-tiles a run
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    buffer, c = guarded((m, n), np.float32)
    # 3 blocks for 12 tiles: each runs its k-loop 4 times
    run_kernel(persistent_matmul, (3,), (a, b, c, 64, 32, 32, 2))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    # float32 operands: products in tfloat32
    assert relative_error(c, expected) < (1e-5 if dtype is np.float16 else 2e-3)
    assert guards_untouched(buffer, c.shape)


def test_k_loops_of_varying_lengths(run_kernel, rng):
    tm, tk = 32, 32
    m, n = 4 * tm, 3 * tm
    a = rng.uniform(-1, 1, (m, m)).astype(np.float16)  # read as A^T: rows of K
    b = rng.uniform(-1, 1, (m, n)).astype(np.float16)
    buffer, c = guarded((m, n), np.float32)
    run_kernel(triangular_products, (m // tm,), (a, b, c, tm, tk))
    expected = np.zeros((m, n))
    for i in range(m // tm):
        rows, depth = slice(i * tm, (i + 1) * tm), i * tk
        expected[rows] = a[:depth, rows].T.astype(np.float64) @ b[:depth].astype(np.float64)
    assert relative_error(c, expected) < 1e-5
    assert guards_untouched(buffer, c.shape)


def _inner_loop(ptx):
    """The PTX of the innermost loop that issues products (from the label its back edge
    jumps to)."""
    lines = ptx.splitlines()
    products = [i for i, line in enumerate(lines) if re.search(r"\b(wgmma\.mma_async|mma\.sync)",
                                                               line)]
    for i in range(products[-1], len(lines)):
        jump = re.search(r"\bbra(?:\.uni)?\s+(\$\w+);", lines[i])
        if jump:
            start = next((j for j in range(len(lines)) if lines[j].startswith(jump.group(1) + ":")),
                         None)
            if start is not None and start <= products[0] <= i:
                return "\n".join(lines[start:i + 1])
    raise AssertionError("no loop around the products")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_persistent_k_loop_is_pipelined(arch):
    """The k-loop inside the loop over tiles copies ahead as a lone k-loop does: the TMA on
    sm_90 (with barrier waits, no block barrier but the one freeing a stage), cp.async on
    sm_80."""
    a = np.zeros((256, 256), np.float16)
    ptx = ct.compile(persistent_matmul, (a, a, a, 64, 64, 64, 2), arch=arch).ptx
    if arch == "sm_90":
        assert "cp.async.bulk.tensor.2d" in ptx and "wgmma.mma_async" in ptx
        assert len(re.findall(r"\bmbarrier\.init", ptx)) == 3  # once, one per stage
    else:
        assert "cp.async.cg" in ptx and "ldmatrix" in ptx
