"""Matrix products: ct.mma (every supported input/accumulator pair, 2-d and batched 3-d, the
k-loop matmul pattern), ct.matmul and ``@`` with promotion (API.md section 3, "Matrix").

Results are compared with NumPy in float64 (exactly for integers).
"""

import functools
import re

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import gpu_present, relative_error
from numba_tile.bench import kernels as bench_kernels

NP = {ct.float16: np.float16, ct.float32: np.float32, ct.float64: np.float64,
      ct.bfloat16: ml_dtypes.bfloat16, ct.tfloat32: np.float32, ct.int8: np.int8,
      ct.int16: np.int16, ct.int32: np.int32, ct.int64: np.int64, ct.uint8: np.uint8,
      ct.uint16: np.uint16, ct.float8_e4m3fn: ml_dtypes.float8_e4m3fn,
      ct.float8_e5m2: ml_dtypes.float8_e5m2}

# (operand dtype, accumulator dtype, relative tolerance); tf32 operands are f32 arrays
# converted with .astype(ct.tfloat32) in the kernel, so their tolerance is tf32's.
MMA_PAIRS = [
    (ct.float16, ct.float16, 1e-2), (ct.float16, ct.float32, 1e-5),
    (ct.bfloat16, ct.float32, 1e-5), (ct.tfloat32, ct.float32, 5e-3),
    (ct.float32, ct.float32, 1e-5), (ct.float64, ct.float64, 1e-12),
    (ct.int8, ct.int32, 0), (ct.uint8, ct.int32, 0),
    (ct.float8_e4m3fn, ct.float16, 1e-2), (ct.float8_e4m3fn, ct.float32, 1e-5),
    (ct.float8_e5m2, ct.float16, 1e-2), (ct.float8_e5m2, ct.float32, 1e-5),
]


def random_matrix(rng, shape, dtype):
    """Random non-zero values representable in ``dtype`` (as an array of its NumPy type)."""
    np_dtype = np.dtype(NP[dtype])
    sign = rng.choice([-1, 1], size=shape)
    if np_dtype.kind == "u":
        return rng.integers(1, 17, size=shape).astype(np_dtype)
    if np_dtype.kind == "i":
        largest = 8 if np_dtype.itemsize <= 2 else 999
        return (sign * rng.integers(1, largest + 1, size=shape)).astype(np_dtype)
    return (sign * rng.uniform(0.25, 1.0, size=shape)).astype(np_dtype)


def poisoned(shape, np_dtype):
    if np.dtype(np_dtype).kind in "iu":
        return np.full(shape, 0x5A, np_dtype)
    return np.full(shape, np.nan, np_dtype)


def wide(x):
    return x.astype(np.float64) if np.dtype(x.dtype).kind not in "iu" else x.astype(np.int64)


def check(actual, expected, tolerance):
    if tolerance == 0:
        np.testing.assert_array_equal(actual.astype(np.int64), expected)
    else:
        assert relative_error(actual, expected) <= tolerance


# -- mma on whole tiles ---------------------------------------------------------------------
@functools.cache
def mma_kernel():
    @ct.kernel
    def kernel(a, b, c, out, A_SHAPE: ct.Constant, B_SHAPE: ct.Constant,
               C_SHAPE: ct.Constant, ZERO: ct.Constant, A_DTYPE: ct.Constant,
               B_DTYPE: ct.Constant):
        x = ct.load(a, ZERO, A_SHAPE).astype(A_DTYPE)
        y = ct.load(b, ZERO, B_SHAPE).astype(B_DTYPE)
        acc = ct.load(c, ZERO, C_SHAPE)
        r = ct.mma(x, y, acc)
        ct.static_assert(r.dtype == acc.dtype, "mma must keep the accumulator's dtype")
        ct.static_assert(r.shape == C_SHAPE, "wrong result shape")
        ct.store(out, ZERO, r)

    return kernel


def run_mma(run_kernel, a, b, c, a_dtype, b_dtype):
    out = poisoned(c.shape, c.dtype)
    run_kernel(mma_kernel(), (1,), (a, b, c, out, a.shape, b.shape, c.shape, (0,) * a.ndim,
                                    a_dtype, b_dtype))
    return out


# small shapes (the general path), then shapes that split into the tensor-core steps of
# every dtype (m16n8k16, m16n8k8 for tfloat32, m16n8k32 for 1-byte inputs, m8n8k4 for
# float64), 2-d and batched
MMA_SHAPES = [((8, 16), (16, 4)), ((16, 32), (32, 16)), ((2, 8, 16), (2, 16, 4)),
              ((4, 4, 8), (4, 8, 2)), ((1, 2), (2, 1)), ((32, 64), (64, 32)),
              ((2, 32, 64), (2, 64, 16)), ((4, 16, 32), (4, 32, 8))]


@pytest.mark.parametrize("a_shape,b_shape", MMA_SHAPES, ids=str)
@pytest.mark.parametrize("in_dtype,acc_dtype,tolerance", MMA_PAIRS,
                         ids=[f"{i}->{a}" for i, a, _ in MMA_PAIRS])
def test_mma_supported_pairs(run_kernel, rng, in_dtype, acc_dtype, tolerance, a_shape,
                             b_shape):
    a = random_matrix(rng, a_shape, in_dtype)
    b = random_matrix(rng, b_shape, in_dtype)
    c = random_matrix(rng, a_shape[:-1] + b_shape[-1:], acc_dtype)
    actual = run_mma(run_kernel, a, b, c, in_dtype, in_dtype)
    check(actual, np.matmul(wide(a), wide(b)) + wide(c), tolerance)


@pytest.mark.parametrize("a_shape,b_shape", MMA_SHAPES, ids=str)
@pytest.mark.parametrize("a_dtype,b_dtype", [(ct.int8, ct.uint8), (ct.uint8, ct.int8)],
                         ids=str)
def test_mma_of_int8_with_uint8(run_kernel, rng, a_dtype, b_dtype, a_shape, b_shape):
    """cuTile's one pair of two dtypes: int8 with uint8 into int32, exact (``mma.sync``
    ``s32.s8.u8`` on tensor cores), the operands not promoted: their whole ranges (a uint8
    above 127 is not read as negative, nor an int8 below 0 as large)."""
    def full_range(shape, dtype):
        info = np.iinfo(NP[dtype])
        return rng.integers(info.min, info.max + 1, size=shape).astype(NP[dtype])
    a, b = full_range(a_shape, a_dtype), full_range(b_shape, b_dtype)
    c = random_matrix(rng, a_shape[:-1] + b_shape[-1:], ct.int32)
    actual = run_mma(run_kernel, a, b, c, a_dtype, b_dtype)
    check(actual, np.matmul(wide(a), wide(b)) + wide(c), 0)


@pytest.mark.parametrize("a_dtype,b_dtype,kind", [(ct.int8, ct.uint8, "s32.s8.u8.s32"),
                                                  (ct.uint8, ct.int8, "s32.u8.s8.s32")], ids=str)
def test_mma_of_int8_with_uint8_runs_on_tensor_cores(a_dtype, b_dtype, kind):
    a, b = np.zeros((32, 64), NP[a_dtype]), np.zeros((64, 32), NP[b_dtype])
    c = np.zeros((32, 32), np.int32)
    ptx = ct.compile(mma_kernel(), (a, b, c, c, a.shape, b.shape, c.shape, (0, 0), a_dtype,
                                    b_dtype), arch="sm_80").ptx
    assert f"mma.sync.aligned.m16n8k32.row.col.{kind}" in ptx


def test_mma_int8_extremes_accumulate_exactly(run_kernel):
    a = np.full((4, 32), -128, np.int8)
    b = np.full((32, 4), -128, np.int8)
    c = np.full((4, 4), 7, np.int32)
    actual = run_mma(run_kernel, a, b, c, ct.int8, ct.int8)
    np.testing.assert_array_equal(actual, np.full((4, 4), 32 * 128 * 128 + 7))


def test_mma_tf32_operands_are_rounded(run_kernel):
    """1 + 2**-12 is not a tf32 value (10 mantissa bits): it rounds to 1."""
    a = np.full((4, 8), 1 + 2.0 ** -12, np.float32)
    b = np.full((8, 4), 1.0, np.float32)
    c = np.zeros((4, 4), np.float32) + 0.5
    actual = run_mma(run_kernel, a, b, c, ct.tfloat32, ct.tfloat32)
    np.testing.assert_array_equal(actual, np.full((4, 4), 8.5, np.float32))


# -- the k-loop matmul pattern of cuda.tile ---------------------------------------------------
@ct.kernel
def matmul_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
                  ACC_DTYPE: ct.Constant):
    bm = ct.bid(0)
    bn = ct.bid(1)
    acc = ct.full((TM, TN), 0, ACC_DTYPE)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel
def matmul_kernel_without_tma(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                              TK: ct.Constant[int], ACC_DTYPE: ct.Constant):
    """:func:`matmul_kernel` with the tensor memory accelerator refused: on sm_90 the loads
    are copied ahead by ``cp.async`` from every thread, as on earlier GPUs."""
    bm = ct.bid(0)
    bn = ct.bid(1)
    acc = ct.full((TM, TN), 0, ACC_DTYPE)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO, allow_tma=False)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO, allow_tma=False)
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@pytest.mark.parametrize("kernel", [matmul_kernel, matmul_kernel_without_tma],
                         ids=["tma", "threads"])
@pytest.mark.parametrize("in_dtype,acc_dtype,tolerance", [
    (ct.float16, ct.float32, 1e-5), (ct.bfloat16, ct.float32, 1e-5),
    (ct.float32, ct.float32, 1e-5), (ct.int8, ct.int32, 0), (ct.float64, ct.float64, 1e-12)],
    ids=str)
def test_matmul_of_partial_tiles_copied_ahead(run_kernel, rng, kernel, in_dtype, acc_dtype,
                                              tolerance):
    """Aligned arrays whose extents are not multiples of the tiles: the copies ahead (the
    TMA's on sm_90, or every thread's ``cp.async``) fill the parts of the edge tiles outside
    the arrays with zeros."""
    (m, n, k), (tm, tn, tk) = (200, 136, 80), (64, 64, 32)
    a = random_matrix(rng, (m, k), in_dtype)
    b = random_matrix(rng, (k, n), in_dtype)
    c = poisoned((m, n), NP[acc_dtype])
    run_kernel(kernel, (-(-m // tm), -(-n // tn)), (a, b, c, tm, tn, tk, acc_dtype))
    check(c, np.matmul(wide(a), wide(b)), tolerance)


@pytest.mark.parametrize("mnk,tiles", [((50, 37, 45), (16, 16, 16)),
                                       ((64, 64, 64), (32, 16, 8)),
                                       ((7, 9, 3), (8, 8, 16)),
                                       ((33, 17, 100), (16, 32, 32))], ids=str)
@pytest.mark.parametrize("in_dtype,acc_dtype,out_dtype,tolerance", [
    (ct.float16, ct.float32, ct.float16, 2e-3), (ct.float16, ct.float32, ct.float32, 1e-5),
    (ct.bfloat16, ct.float32, ct.bfloat16, 1e-2), (ct.float32, ct.float32, ct.float32, 1e-5),
    (ct.float64, ct.float64, ct.float64, 1e-12), (ct.int8, ct.int32, ct.int32, 0),
    (ct.uint8, ct.int32, ct.int32, 0), (ct.float16, ct.float16, ct.float16, 1e-2),
    (ct.float8_e4m3fn, ct.float32, ct.float32, 1e-5),
    (ct.float8_e5m2, ct.float16, ct.float16, 1e-2),
], ids=str)
def test_matmul_k_loop(run_kernel, rng, in_dtype, acc_dtype, out_dtype, tolerance, mnk,
                       tiles):
    (m, n, k), (tm, tn, tk) = mnk, tiles
    a = random_matrix(rng, (m, k), in_dtype)
    b = random_matrix(rng, (k, n), in_dtype)
    c = poisoned((m, n), NP[out_dtype])
    run_kernel(matmul_kernel, (-(-m // tm), -(-n // tn)), (a, b, c, tm, tn, tk, acc_dtype))
    check(c, np.matmul(wide(a), wide(b)), tolerance)


@ct.kernel
def k_range_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
                   start, stop, step, offset):
    """The k-loop over any range, its tile index computed in the loop: the pipelined loads
    (in compiled code) must follow it."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for i in range(start, stop, step):
        k = i + offset
        a = ct.load(A, (bm, k), (TM, TK))
        b = ct.load(B, (k, bn), (TK, TN))
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc)


@pytest.mark.parametrize("num_stages", [None, 2])
@pytest.mark.parametrize("start,stop,step,offset", [
    (0, 6, 1, 0), (1, 6, 2, 0), (5, -1, -1, 0), (0, 3, 1, 2), (0, 0, 1, 0), (0, 1, 1, 0),
    (4, 9, 1, 0)], ids=str)
def test_k_loop_over_any_range(run_kernel, rng, start, stop, step, offset, num_stages):
    """Iterations past the array read zeros (the last case runs off its end)."""
    (m, n, k), (tm, tn, tk) = (64, 64, 96), (32, 32, 16)
    a = random_matrix(rng, (m, k), ct.float16)
    b = random_matrix(rng, (k, n), ct.float16)
    c = poisoned((m, n), np.float32)
    kernel = k_range_kernel.replace_hints(num_stages=num_stages)
    run_kernel(kernel, (m // tm, n // tn), (a, b, c, tm, tn, tk, start, stop, step, offset))
    expected = np.zeros((m, n))
    for i in range(start, stop, step):
        tile = slice((i + offset) * tk, (i + offset + 1) * tk)
        expected += np.matmul(wide(a[:, tile]), wide(b[tile, :]))
    check(c, expected, 1e-5)


@pytest.mark.parametrize("mnk,tiles,num_warps", [
    ((128, 96, 64), (64, 32, 32), 4), ((256, 256, 96), (128, 128, 16), 4),
    ((100, 72, 40), (64, 64, 32), 8), ((200, 136, 72), (128, 128, 32), 4),
    ((136, 264, 48), (128, 256, 16), 8)], ids=str)
def test_tf32_matmul_k_loop(run_kernel, rng, mnk, tiles, num_warps):
    """float32 operands rounded to tfloat32 (tensor cores: mma.sync m16n8k8, or wgmma on
    sm_90 for the last two, partial tiles), float32 accumulation: the error is tfloat32's
    rounding of the operands."""
    from numba_tile.bench.kernels import matmul_launch
    (m, n, k), (tm, tn, tk) = mnk, tiles
    a = random_matrix(rng, (m, k), ct.float32)
    b = random_matrix(rng, (k, n), ct.float32)
    c = poisoned((m, n), np.float32)
    kernel, grid, args = matmul_launch(a, b, c, tile_m=tm, tile_n=tn, tile_k=tk,
                                       num_warps=num_warps, tf32=True)
    run_kernel(kernel, grid, args)
    exact = np.matmul(wide(a), wide(b))
    check(c, exact, 2e-3)
    # the operands were rounded (float32 arithmetic would land near 1e-7)
    assert relative_error(c, exact) > 1e-5


def _tfloat32_nearest_even(x):
    """float32 values rounded to tfloat32 (10 mantissa bits), to nearest, ties to even."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return rounded.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("tiles,num_warps", [((64, 64, 32), 4), ((128, 256, 32), 8)],
                         ids=str)
def test_tf32_operands_are_rounded_to_nearest_even(run_kernel, rng, tiles, num_warps):
    """``A @ I`` with ``.astype(ct.tfloat32)`` on both: each result is A's element rounded,
    exactly; half of them are ties (the 13 dropped bits 1000...0), which go to the even
    neighbour (on sm_90 the TMA rounds as it copies; elsewhere the kernel rounds)."""
    from numba_tile.bench.kernels import matmul_launch
    (tm, tn, tk), (m, k) = tiles, (160, 96)
    a = (rng.uniform(0.5, 4.0, (m, k)) * rng.choice([-1, 1], (m, k))).astype(np.float32)
    bits = a.view(np.uint32)
    ties = rng.random((m, k)) < 0.5
    bits[ties] = (bits[ties] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)
    identity = np.eye(k, dtype=np.float32)
    c = poisoned((m, k), np.float32)
    kernel, grid, args = matmul_launch(a, identity, c, tile_m=tm, tile_n=tn, tile_k=tk,
                                       num_warps=num_warps, tf32=True)
    run_kernel(kernel, grid, args)
    assert np.array_equal(c, _tfloat32_nearest_even(a))


@pytest.mark.parametrize("num_stages", [3, 4])
def test_wide_results_are_stored_through_shared_memory(run_kernel, rng, num_stages):
    """128 x 256 float16 results of a k-loop, partial at both edges, leave through shared
    memory: the whole tile with 3 stages, column blocks with 4 (no room for the whole)."""
    (m, n, k), (tm, tn, tk) = (200, 264, 128), (128, 256, 64)
    a = random_matrix(rng, (m, k), ct.float16)
    b = random_matrix(rng, (k, n), ct.float16)
    c = poisoned((m, n), np.float16)
    kernel = matmul_kernel.replace_hints(num_warps=8, num_stages=num_stages)
    run_kernel(kernel, (-(-m // tm), -(-n // tn)), (a, b, c, tm, tn, tk, ct.float32))
    check(c, np.matmul(wide(a), wide(b)), 2e-3)


@ct.kernel
def transposed_operands_kernel(A, B, C, K, TM: ct.Constant[int], TN: ct.Constant[int],
                               TK: ct.Constant[int], A_ORDER: ct.Constant,
                               B_ORDER: ct.Constant, ACC_DTYPE: ct.Constant):
    """The k-loop with A or B given transposed (``A^T`` is ``(K, M)``, ``B^T`` ``(N, K)``)
    and loaded with ``order=(1, 0)``: in compiled code the copies of the array's rows are
    pipelined and read transposed where they landed."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ACC_DTYPE)
    for k in range(ct.cdiv(K, TK)):
        a = ct.load(A, (bm, k), (TM, TK), order=A_ORDER, padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), order=B_ORDER, padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel
def transposed_tf32_kernel(A, BT, C, K, TM: ct.Constant[int], TN: ct.Constant[int],
                           TK: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.cdiv(K, TK)):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(BT, (k, bn), (TK, TN), order=(1, 0), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.astype(ct.tfloat32), b.astype(ct.tfloat32), acc)
    ct.store(C, (bm, bn), acc)


TRANSPOSED_ORDERS = [("C", (1, 0)), ((1, 0), "C"), ((1, 0), (1, 0))]


@pytest.mark.parametrize("orders", TRANSPOSED_ORDERS, ids=str)
@pytest.mark.parametrize("in_dtype,acc_dtype,tolerance,tiles", [
    (ct.float16, ct.float32, 1e-5, (64, 64, 32)), (ct.float16, ct.float32, 1e-5, (64, 64, 64)),
    (ct.bfloat16, ct.float32, 1e-5, (64, 32, 32)), (ct.int8, ct.int32, 0, (32, 32, 64)),
    (ct.float64, ct.float64, 1e-12, (32, 16, 16)), (ct.int8, ct.int32, 0, (64, 64, 128)),
    (ct.uint8, ct.int32, 0, (64, 128, 64)),
    # (Hopper's float8 tensor cores sum the products of one wgmma in fewer bits than
    # float32: about 1e-4, as cuBLASLt's float8 products)
    (ct.float8_e4m3fn, ct.float32, 5e-4, (64, 64, 64)),
    (ct.float8_e5m2, ct.float32, 5e-4, (64, 64, 128))], ids=str)
def test_k_loop_with_transposed_operands(run_kernel, rng, orders, in_dtype, acc_dtype,
                                         tolerance, tiles):
    """Partial tiles at every edge; on sm_90 float16 runs as wgmma with B read K-major, and
    so do float8 and 8-bit integers (64-row tiles of A, whose wgmma reads B K-major only)."""
    (m, n, k), (tm, tn, tk) = (100, 72, 160), tiles
    a = random_matrix(rng, (m, k), in_dtype)
    b = random_matrix(rng, (k, n), in_dtype)
    a_order, b_order = orders
    a_arg = a if a_order == "C" else a.T.copy()
    b_arg = b if b_order == "C" else b.T.copy()
    c = poisoned((m, n), NP[acc_dtype])
    run_kernel(transposed_operands_kernel, (-(-m // tm), -(-n // tn)),
               (a_arg, b_arg, c, k, tm, tn, tk, a_order, b_order, acc_dtype))
    check(c, np.matmul(wide(a), wide(b)), tolerance)


@ct.kernel
def k_major_b_kernel(A, BT, C, TM: ct.Constant[int], TN: ct.Constant[int],
                     TK: ct.Constant[int], ACC_DTYPE: ct.Constant, FAST: ct.Constant[bool]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ACC_DTYPE)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(BT, (k, bn), (TK, TN), order=(1, 0), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc, use_fast_acc=FAST)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@pytest.mark.parametrize("in_dtype,acc_dtype,kind,warps,fast", [
    (ct.float8_e4m3fn, ct.float32, "m64n128k32.f32.e4m3.e4m3", 8, False),
    (ct.float8_e5m2, ct.float32, "m64n128k32.f32.e5m2.e5m2", 8, False),
    (ct.float8_e4m3fn, ct.float32, "m64n128k32.f32.e4m3.e4m3", 4, True),
    (ct.int8, ct.int32, "m64n128k32.s32.s8.s8", 4, False),
    (ct.uint8, ct.int32, "m64n128k32.s32.u8.u8", 4, False)], ids=str)
def test_eight_bit_products_run_as_wgmma_without_spills(in_dtype, acc_dtype, kind, warps,
                                                        fast):
    """128 x 128 x 128 tiles of 8-bit inputs, B read K-major (an (N, K) array loaded with
    ``order=(1, 0)``): ``wgmma`` of depth 32 fed from the pipeline's stages, and no spills
    (the ``mma.sync`` path spilled at 128 x 128 x 64). A float8 product's sums are added to
    the accumulator in float32 by the threads after each call, in one ``wgmma`` 128 columns
    wide (8 warps: 64 accumulators a thread beside them), unless ``use_fast_acc``."""
    a, bt = np.zeros((512, 512), NP[in_dtype]), np.zeros((512, 512), NP[in_dtype])
    c = np.zeros((512, 512), NP[acc_dtype])
    compiled = ct.compile(k_major_b_kernel.replace_hints(num_warps=warps),
                          (a, bt, c, 128, 128, 128, acc_dtype, fast), arch="sm_90")
    assert f"wgmma.mma_async.sync.aligned.{kind}" in compiled.ptx
    assert "mma.sync" not in compiled.ptx
    assert ("add.f32" in compiled.ptx) == (in_dtype.is_float and not fast)
    if compiled.cubin is not None:
        assert compiled.spill_bytes == 0


@pytest.mark.parametrize("fast,tolerance,tile_n,hints", [
    (False, 2e-4, 128, {}), (True, 5e-3, 128, {}),
    (False, 2e-4, 128, {"num_warps": 4}),
    (False, 2e-4, 128, {"warp_specialize": True, "num_stages": 5}),
    (False, 2e-4, 256, {"warp_specialize": True, "num_stages": 4})], ids=str)
def test_float8_sums_are_added_in_float32_unless_fast(run_kernel, rng, fast, tolerance, tile_n,
                                                      hints):
    """K = 4096 of float8_e4m3fn: added in float32 after each call of 128 deep, the error is
    that of cuBLASLt's default (about 1.5e-4); Hopper's tensor cores keep fewer bits in the
    running sum (``use_fast_acc``: about 1e-3 over this K). The interpreter sums exactly.
    Also with one warpgroup (which adds a block's sums while its next block runs), and with
    a producer warpgroup (on sm_90), as the benchmark runs it, whose 128 x 256 tiles add
    each block's sums before the next block runs."""
    m, n, k = 128, tile_n, 4096
    a = rng.standard_normal((m, k)).astype(NP[ct.float8_e4m3fn])
    bt = rng.standard_normal((n, k)).astype(NP[ct.float8_e4m3fn])
    c = poisoned((m, n), np.float32)
    run_kernel(k_major_b_kernel.replace_hints(**{"num_warps": 8, **hints}), (1, 1),
               (a, bt, c, 128, tile_n, 128, ct.float32, fast))
    check(c, np.matmul(wide(a), wide(bt).T), tolerance)


@ct.kernel
def n_major_b_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
                     FAST: ct.Constant[bool]):
    """cuda.tile's batch matmul sample in two dimensions: B of shape (K, N) read as it lies,
    which float8 ``wgmma`` cannot read (``mma.sync`` runs it)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0.0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc, use_fast_acc=FAST)
    ct.store(C, (bm, bn), acc)


@pytest.mark.parametrize("fast,tolerance", [(False, 2e-4), (True, 5e-3)], ids=str)
def test_float8_mma_sync_sums_are_added_in_float32_unless_fast(run_kernel, rng, fast,
                                                               tolerance):
    """As on ``wgmma``: a float8 product on ``mma.sync`` adds each call's sums to the
    accumulator in float32 (K = 4096 in calls of 128), unless ``use_fast_acc``."""
    m, n, k = 64, 128, 4096
    a = rng.standard_normal((m, k)).astype(NP[ct.float8_e4m3fn])
    b = rng.standard_normal((k, n)).astype(NP[ct.float8_e4m3fn])
    c = poisoned((m, n), np.float32)
    run_kernel(n_major_b_kernel, (1, 1), (a, b, c, 64, 128, 128, fast))
    check(c, np.matmul(wide(a), wide(b)), tolerance)


@pytest.mark.parametrize("fast", [False, True], ids=str)
def test_float8_mma_sync_adds_each_calls_sums(fast):
    a, b = np.zeros((256, 256), NP[ct.float8_e4m3fn]), np.zeros((256, 256), NP[ct.float8_e4m3fn])
    ptx = ct.compile(n_major_b_kernel, (a, b, np.zeros((256, 256), np.float32), 64, 128, 128,
                                        fast), arch="sm_90").ptx
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in ptx
    assert "wgmma" not in ptx
    assert ("add.f32" in ptx) == (not fast)


def test_float8_sums_with_a_producer_warpgroup_are_added_128_columns_wide():
    """The benchmark's float8 kernel: 128 x 128 x 128 tiles, 8 warps and a producer
    warpgroup; each warpgroup's call is one ``wgmma`` 128 columns wide a step, its sums
    added in float32 by the threads."""
    a, bt = np.zeros((512, 512), NP[ct.float8_e4m3fn]), np.zeros((512, 512), NP[ct.float8_e4m3fn])
    c = np.zeros((512, 512), np.float32)
    kernel = k_major_b_kernel.replace_hints(num_warps=8, num_stages=5, warp_specialize=True)
    ptx = ct.compile(kernel, (a, bt, c, 128, 128, 128, ct.float32, False), arch="sm_90").ptx
    assert "setmaxnreg.inc.sync.aligned.u32 240" in ptx
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n128k32\.f32\.e4m3", ptx)) == 4
    assert "m64n64k32" not in ptx
    assert "add.f32" in ptx


@pytest.mark.parametrize("warps,tile_n,hints,waits", [
    (8, 256, {"warp_specialize": True, "num_stages": 4}, ["0", "0"]),
    (4, 128, {}, ["1", "0"])], ids=str)
def test_float8_blocks_add_their_sums_in_an_order_that_fits_the_registers(warps, tile_n,
                                                                          hints, waits):
    """A float8 product in blocks of 128 columns: each block's sums (64 registers a
    thread) are added by the threads, the wait and the additions in one statement. Several
    warpgroups (the benchmark's 128 x 256 tiles: 128 accumulators a thread) add each
    block's before their next block runs, which reads the sums' registers under a predicate
    ptxas cannot fold to 0 (told 0, ptxas ran the next block early, with both blocks' sums
    live, and spilled); one warpgroup adds a block's while its next block runs (faster,
    though its 128 x 128 tiles spill so)."""
    a, bt = np.zeros((512, 512), NP[ct.float8_e4m3fn]), np.zeros((512, 512), NP[ct.float8_e4m3fn])
    c = np.zeros((512, 512), np.float32)
    compiled = ct.compile(k_major_b_kernel.replace_hints(num_warps=warps, **hints),
                          (a, bt, c, 128, tile_n, 128, ct.float32, False), arch="sm_90")
    ptx = compiled.ptx
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n128k32\.f32\.e4m3", ptx)) == 8
    additions = re.findall(r"wgmma\.wait_group\.sync\.aligned (\d); add\.f32", ptx)
    assert additions == waits
    assert len(re.findall(r"add\.f32 %f\d+, %f\d+, %f\d+;", ptx)) == 128
    assert ptx.count("%dynamic_smem_size; shr.u32") == (1 if waits == ["0", "0"] else 0)
    if gpu_present() and warps == 8:  # (only the driver, which compiles it, can tell)
        assert compiled.spill_bytes == 0


def test_a_product_computes_each_descriptor_start_once():
    """``wgmma`` names each operand in shared memory by a matrix descriptor. A product
    computes the start field of each operand's descriptor once (a mask and a shift of its
    address) and each step adds a constant to it: the attention kernel's 16 ``wgmma`` an
    iteration (``Q K^T`` from Q's and K's stages, ``P V`` with P in registers) compute
    three, where every step computed its own (eight after LLVM merged some)."""
    q = np.zeros((1, 2, 1024, 128), np.float16)
    kernel, _, args = bench_kernels.attention_launch(q, q, q, q, tile_m=128, tile_n=128,
                                                     num_warps=8, num_stages=3)
    ptx = ct.compile(kernel, args, arch="sm_90").ptx
    assert len(re.findall(r"wgmma\.mma_async", ptx)) == 16
    assert len(re.findall(r"and\.b32\s+%r\d+, %r\d+, 262128;", ptx)) == 3


def test_use_fast_acc_is_for_float8_inputs(run_kernel):
    a, bt = np.ones((64, 64), np.float16), np.ones((64, 64), np.float16)
    with pytest.raises(ct.TileTypeError, match="use_fast_acc=True needs float8 inputs"):
        run_kernel(k_major_b_kernel, (1, 1), (a, bt, np.zeros((64, 64), np.float32), 64, 64,
                                              64, ct.float32, True))


def test_a_tf32_product_reads_b_where_it_landed():
    """tfloat32 products of a pipelined k-loop with B as the array holds it (rows of N): on
    sm_90 they run as ``C^T = B^T A^T``, B^T's fragments read by each thread from B's stage
    (``wgmma`` with A in registers; 64 rows of C^T, 256 columns: the 256 rows of the tile),
    so the k-loop has no transposed copy of B and no barrier for one: two barriers in the
    whole kernel beside the two of the result's way through shared memory (the idle
    stages), where transposing B took eight."""
    a = np.zeros((1024, 1024), np.float32)
    ptx = ct.compile(bench_kernels.matmul_tf32.replace_hints(num_warps=8),
                     (a, a, a, 256, 128, 32, 8), arch="sm_90").ptx
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n256k8\.f32\.tf32\.tf32\s+"
                     r"\{[^}]*\},\s*\{%r", ptx)
    through_shared = 2 if "ld.shared.v4" in ptx else 0
    assert len(re.findall(r"\bbar\.sync|\bbarrier\.sync", ptx)) <= 2 + through_shared


def test_tf32_k_loop_with_transposed_b(run_kernel, rng):
    """B^T's float32 rows rounded to tfloat32 in their stage (wgmma on sm_90: 64 x 64 x 32
    tiles, 4 warps)."""
    (m, n, k), (tm, tn, tk) = (100, 72, 96), (64, 64, 32)
    a = random_matrix(rng, (m, k), ct.float32)
    b = random_matrix(rng, (k, n), ct.float32)
    c = poisoned((m, n), np.float32)
    run_kernel(transposed_tf32_kernel, (-(-m // tm), -(-n // tn)),
               (a, b.T.copy(), c, k, tm, tn, tk))
    exact = np.matmul(wide(a), wide(b))
    check(c, exact, 2e-3)
    assert relative_error(c, exact) > 1e-5  # rounded to tfloat32


@ct.kernel
def chained_products_kernel(A, B, C, Out, TM: ct.Constant[int], K: ct.Constant[int],
                            N: ct.Constant[int], N2: ct.Constant[int]):
    """``(A B) C`` with the first product rounded to float16 in registers: on sm_90 the
    second ``wgmma`` reads it from there (A in registers)."""
    bm = ct.bid(0)
    a = ct.load(A, (bm, 0), (TM, K))
    b = ct.load(B, (0, 0), (K, N))
    c = ct.load(C, (0, 0), (N, N2))
    p = ct.mma(a, b, ct.full((TM, N), 0, ct.float32)).astype(ct.float16)
    ct.store(Out, (bm, 0), ct.mma(p, c, ct.full((TM, N2), 0, ct.float32)))


@pytest.mark.parametrize("tm,num_warps,n", [(64, 4, 64), (128, 8, 32), (128, 4, 128)], ids=str)
def test_product_of_a_product_in_registers(run_kernel, rng, tm, num_warps, n):
    # small integers: the first product is exact in float16 whatever the order of its sums
    a = rng.integers(-3, 4, (2 * tm, 64)).astype(np.float16)
    b = rng.integers(-3, 4, (64, n)).astype(np.float16)
    c = random_matrix(rng, (n, 32), ct.float16)
    out = poisoned((2 * tm, 32), np.float32)
    kernel = chained_products_kernel.replace_hints(num_warps=num_warps)
    run_kernel(kernel, (2,), (a, b, c, out, tm, 64, n, 32))
    check(out, (wide(a) @ wide(b)) @ wide(c), 1e-5)


@ct.kernel
def sample_matmul_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                         TK: ct.Constant[int]):
    """The matmul of cuda.tile's samples: float32 operands on tensor cores as tfloat32."""
    dtype = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@pytest.mark.parametrize("dtype,tolerance", [(ct.float16, 2e-3), (ct.bfloat16, 1e-2),
                                             (ct.float32, 2e-3)], ids=str)
def test_sample_matmul(run_kernel, rng, dtype, tolerance):
    """Partial tiles at every edge; float32 is rounded to tfloat32 (not exact)."""
    (m, n, k), (tm, tn, tk) = (100, 72, 96), (64, 64, 32)
    a, b = random_matrix(rng, (m, k), dtype), random_matrix(rng, (k, n), dtype)
    c = poisoned((m, n), NP[dtype])
    run_kernel(sample_matmul_kernel, (-(-m // tm), -(-n // tn)), (a, b, c, tm, tn, tk))
    exact = np.matmul(wide(a), wide(b))
    check(c, exact, tolerance)
    if dtype is ct.float32:
        assert relative_error(c, exact) > 1e-5  # rounded to tfloat32


@ct.kernel
def gathered_rows_matmul_kernel(parts, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                                TK: ct.Constant[int]):
    """cuda.tile's all-gather matmul sample: the rows of A come from a list of arrays, one
    picked at run time, whose dtype decides the operands' (a branch on a constant that the
    compiler decides before typing, as for an array argument)."""
    per_part = ct.cdiv(parts[0].shape[0], TM)
    bm, bn = ct.bid(0), ct.bid(1)
    part = parts[bm // per_part]
    dtype = ct.tfloat32 if part.dtype == ct.float32 else part.dtype
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(B, axis=0, shape=(TK, TN))):
        a = ct.load(part, (bm % per_part, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.astype(dtype), b.astype(dtype), acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel
def unpacked_pair_kernel(pair, out):
    """A branch on the dtype of an item of a tuple argument taken apart (``a, b = pair``)
    is decided before typing too."""
    a, b = pair
    if b.dtype == ct.float16:
        t = ct.load(b, (0,), (4,)).astype(ct.float32)
    else:
        t = ct.load(b, (0,), (4,)) + 1.0
    ct.store(out, (0,), t + ct.load(a, (0,), (4,)))


def test_a_branch_on_an_unpacked_items_dtype(run_kernel):
    a, b = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float16)
    out = poisoned((4,), np.float32)
    run_kernel(unpacked_pair_kernel, (1,), ((a, b), out))
    np.testing.assert_array_equal(out, 2 * a)


@pytest.mark.parametrize("dtype,tolerance", [(ct.float16, 2e-3), (ct.float32, 2e-3)], ids=str)
def test_operand_dtype_from_a_list_item(run_kernel, rng, dtype, tolerance):
    parts = [random_matrix(rng, (64, 96), dtype) for _ in range(3)]
    b = random_matrix(rng, (96, 64), dtype)
    c = poisoned((192, 64), NP[dtype])
    run_kernel(gathered_rows_matmul_kernel, (6, 2), (parts, b, c, 32, 32, 32))
    check(c, np.matmul(wide(np.concatenate(parts)), wide(b)), tolerance)


@ct.kernel
def loop_invariant_operand_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                                  TK: ct.Constant[int], J: ct.Constant[int],
                                  X_FIXED: ct.Constant[bool], ORDER: ct.Constant):
    """``sum_j A_j B_j`` where one operand is the same in every iteration (loaded before the
    loop, as attention's queries; with ``order=(1, 0)`` from its transpose): compiled, it is
    copied once into shared memory, where each product reads it."""
    bm = ct.bid(0)
    acc = ct.full((TM, TN), 0, ct.float32)
    if X_FIXED:
        fixed = ct.load(A, (bm, 0), (TM, TK), order=ORDER, padding_mode=ct.PaddingMode.ZERO)
        for j in range(J):
            b = ct.load(B, (0, j), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(fixed, b, acc)
    else:
        fixed = ct.load(B, (0, 0), (TK, TN), order=ORDER, padding_mode=ct.PaddingMode.ZERO)
        for j in range(J):
            a = ct.load(A, (bm, j), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, fixed, acc)
    ct.store(C, (bm, 0), acc)


@pytest.mark.parametrize("order", ["C", (1, 0)], ids=["rows", "transposed"])
@pytest.mark.parametrize("invariant", ["x", "y"])
@pytest.mark.parametrize("dtype,tiles", [(ct.float16, (64, 64, 64)), (ct.float16, (128, 64, 32)),
                                         (ct.bfloat16, (64, 32, 32))], ids=str)
def test_loop_invariant_operand(run_kernel, rng, order, invariant, dtype, tiles):
    """Partial tiles: M and the varying operand's extent are not multiples of the tiles."""
    tm, tn, tk = tiles
    m, extent, blocks = tm + 40, 3 * tn - 24 if invariant == "x" else 3 * tk - 8, 3
    if invariant == "x":
        a, b = random_matrix(rng, (m, tk), dtype), random_matrix(rng, (tk, extent), dtype)
        padded = np.zeros((tk, blocks * tn)); padded[:, :extent] = wide(b)
        expected = wide(a) @ padded.reshape(tk, blocks, tn).sum(axis=1)
        arguments = (a if order == "C" else a.T.copy(), b)
    else:
        a, b = random_matrix(rng, (m, extent), dtype), random_matrix(rng, (tk, tn), dtype)
        padded = np.zeros((m, blocks * tk)); padded[:, :extent] = wide(a)
        expected = padded.reshape(m, blocks, tk).sum(axis=1) @ wide(b)
        arguments = (a, b if order == "C" else b.T.copy())
    c = poisoned((m, tn), np.float32)
    run_kernel(loop_invariant_operand_kernel.replace_hints(num_warps=4), (-(-m // tm),),
               (*arguments, c, tm, tn, tk, blocks, invariant == "x", order))
    check(c, expected, 1e-5)


def _attention_reference(q, k, v, causal):
    scores = np.einsum("bhqd,bhkd->bhqk", wide(q), wide(k)) / np.sqrt(q.shape[-1])
    if causal:
        seq = q.shape[2]
        scores = np.where(np.tri(seq, dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", weights / weights.sum(axis=-1, keepdims=True),
                     wide(v))


@pytest.mark.parametrize("pipelined", [False, True], ids=["plain", "pipelined"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("head_dim,tile_m,num_warps", [(64, 64, 4), (128, 128, 8)], ids=str)
def test_flash_attention_forward(run_kernel, rng, causal, head_dim, tile_m, num_warps,
                                 pipelined):
    """The benchmark's flash-attention kernels (online softmax; K^T loaded transposed and
    pipelined, the probabilities fed to the second product from registers on sm_90; in
    the pipelined form, products waited for where first read, across the masking branch
    of the causal kernel)."""
    from numba_tile.bench.kernels import attention_launch
    q, k, v = (random_matrix(rng, (1, 2, 256, head_dim), ct.float16) / np.float16(4)
               for _ in range(3))
    out = np.full_like(q, np.nan)
    kernel, grid, args = attention_launch(q, k, v, out, causal=causal, tile_m=tile_m,
                                          tile_n=64, num_warps=num_warps,
                                          pipelined=pipelined)
    run_kernel(kernel, grid, args)
    check(out, _attention_reference(q, k, v, causal), 4e-3)


@pytest.mark.parametrize("persistent_blocks", [None, 3], ids=["block_per_rows", "persistent"])
def test_causal_attention_takes_every_head_once(run_kernel, rng, persistent_blocks):
    """A causal grid takes the heads a group of ``CAUSAL_GROUP_HEADS`` at a time, the last
    group short: with 2 x 5 heads (a group of 8, then one of 2) every row block of every
    head is computed, once (the output is NaN-poisoned). The persistent kernel, which keeps
    every head's longest rows first, covers them all too."""
    from numba_tile.bench.kernels import CAUSAL_GROUP_HEADS, attention_launch
    assert CAUSAL_GROUP_HEADS == 8  # the heads below make one full group and a short one
    q, k, v = (random_matrix(rng, (2, 5, 256, 64), ct.float16) / np.float16(4)
               for _ in range(3))
    out = np.full_like(q, np.nan)
    kernel, grid, args = attention_launch(q, k, v, out, causal=True, tile_m=64, tile_n=64,
                                          num_warps=4, persistent_blocks=persistent_blocks)
    assert grid == ((3,) if persistent_blocks else (40,))
    run_kernel(kernel, grid, args)
    check(out, _attention_reference(q, k, v, True), 4e-3)


# one batch element's tile per block: 3-d tiles with a batch of one (the benchmark's kernel)
batched_matmul_kernel = bench_kernels.batched_matmul


@pytest.mark.parametrize("shape,tiles,num_warps", [
    ((3, 64, 64, 96), (32, 32, 16), 4), ((2, 128, 256, 128), (128, 128, 64), 4),
    ((2, 96, 80, 40), (64, 64, 64), 8)], ids=str)
@pytest.mark.parametrize("in_dtype", [ct.float16, ct.bfloat16], ids=str)
def test_batched_matmul_k_loop(run_kernel, rng, shape, tiles, num_warps, in_dtype):
    (batch, m, n, k), (tm, tn, tk) = shape, tiles
    a = random_matrix(rng, (batch, m, k), in_dtype)
    b = random_matrix(rng, (batch, k, n), in_dtype)
    c = poisoned((batch, m, n), np.float32)
    kernel = batched_matmul_kernel.replace_hints(num_warps=num_warps)
    run_kernel(kernel, (-(-m // tm), -(-n // tn), batch), (a, b, c, tm, tn, tk))
    check(c, np.matmul(wide(a), wide(b)), 1e-5)


# -- errors of mma --------------------------------------------------------------------------
UNSUPPORTED = [  # (a dtype, b dtype, accumulator dtype)
    (ct.int8, ct.int8, ct.float32), (ct.float16, ct.bfloat16, ct.float32),
    (ct.bfloat16, ct.float16, ct.float32), (ct.bfloat16, ct.bfloat16, ct.bfloat16),
    (ct.float16, ct.float16, ct.float64), (ct.float32, ct.float32, ct.float16),
    (ct.float32, ct.float32, ct.float64), (ct.float64, ct.float64, ct.float32),
    (ct.int8, ct.int8, ct.int16), (ct.int8, ct.int8, ct.int64), (ct.uint8, ct.int8, ct.int16),
    (ct.int8, ct.uint8, ct.float32), (ct.int8, ct.int16, ct.int32),
    (ct.int16, ct.int16, ct.int32), (ct.int32, ct.int32, ct.int32),
    (ct.float8_e4m3fn, ct.float8_e5m2, ct.float32), (ct.tfloat32, ct.tfloat32, ct.float16),
    (ct.float16, ct.float32, ct.float32),
]


@pytest.mark.parametrize("a_dtype,b_dtype,acc_dtype", UNSUPPORTED, ids=str)
def test_mma_unsupported_pair_is_type_error(run_kernel, rng, a_dtype, b_dtype, acc_dtype):
    a = random_matrix(rng, (8, 16), a_dtype)
    b = random_matrix(rng, (16, 4), b_dtype)
    c = random_matrix(rng, (8, 4), acc_dtype)
    with pytest.raises(ct.TileTypeError):
        run_mma(run_kernel, a, b, c, a_dtype, b_dtype)


@pytest.mark.parametrize("a_shape,b_shape,c_shape", [
    ((8, 16), (8, 4), (8, 4)), ((8, 16), (32, 4), (8, 4)), ((8, 16), (16, 4), (8, 8)),
    ((8, 16), (16, 4), (4, 8)), ((2, 8, 16), (4, 16, 4), (2, 8, 4)),
    ((2, 8, 16), (2, 16, 4), (2, 8, 8)), ((2, 8, 16), (2, 8, 4), (2, 8, 4)),
], ids=str)
def test_mma_shape_mismatch_is_type_error(run_kernel, rng, a_shape, b_shape, c_shape):
    a = random_matrix(rng, a_shape, ct.float16)
    b = random_matrix(rng, b_shape, ct.float16)
    c = random_matrix(rng, c_shape, ct.float32)
    out = poisoned(c_shape, np.float32)
    with pytest.raises(ct.TileTypeError, match="Incompatible shapes|Expect acc shape"):
        run_kernel(mma_error_kernel(), (1,), (a, b, c, out, a_shape, b_shape, c_shape,
                                              (0,) * len(a_shape)))


@functools.cache
def mma_error_kernel():
    @ct.kernel
    def kernel(a, b, c, out, A_SHAPE: ct.Constant, B_SHAPE: ct.Constant, C_SHAPE: ct.Constant,
               ZERO: ct.Constant):
        x = ct.load(a, ZERO, A_SHAPE)
        y = ct.load(b, ZERO, B_SHAPE)
        acc = ct.load(c, ZERO, C_SHAPE)
        ct.store(out, ZERO, ct.mma(x, y, acc))

    return kernel


# -- matmul and @ ---------------------------------------------------------------------------
@functools.cache
def matmul_op_kernel(use_operator):
    @ct.kernel
    def kernel(a, b, out, A_SHAPE: ct.Constant, B_SHAPE: ct.Constant, A_INDEX: ct.Constant,
               B_INDEX: ct.Constant, OUT_INDEX: ct.Constant, RESULT_SHAPE: ct.Constant,
               RESULT_DTYPE: ct.Constant):
        x = ct.load(a, A_INDEX, A_SHAPE)
        y = ct.load(b, B_INDEX, B_SHAPE)
        r = x @ y if use_operator else ct.matmul(x, y)
        ct.static_assert(r.dtype == RESULT_DTYPE, "wrong result dtype")
        ct.static_assert(r.shape == RESULT_SHAPE, "wrong result shape")
        ct.store(out, OUT_INDEX, r)

    return kernel


def run_matmul(run_kernel, use_operator, a, b, result_dtype):
    expected = np.matmul(wide(a), wide(b))
    out = poisoned(expected.shape or (1,), NP[result_dtype])
    run_kernel(matmul_op_kernel(use_operator), (1,), (
        a, b, out, a.shape, b.shape, (0,) * a.ndim, (0,) * b.ndim, (0,) * out.ndim,
        expected.shape, result_dtype))
    return out.reshape(expected.shape), expected


MATMUL_DTYPES = [  # (a dtype, b dtype, promoted dtype, tolerance)
    (ct.int8, ct.int16, ct.int16, 0), (ct.int16, ct.int8, ct.int16, 0),
    (ct.float16, ct.float32, ct.float32, 1e-6), (ct.float32, ct.float16, ct.float32, 1e-6),
    (ct.int32, ct.int32, ct.int32, 0), (ct.float32, ct.float32, ct.float32, 1e-6),
    (ct.float16, ct.float16, ct.float16, 1e-2), (ct.bfloat16, ct.bfloat16, ct.bfloat16, 2e-2),
    (ct.bfloat16, ct.float32, ct.float32, 1e-6), (ct.float64, ct.float16, ct.float64, 1e-12),
    (ct.uint8, ct.uint16, ct.uint16, 0), (ct.int8, ct.float16, ct.float16, 1e-2),
    (ct.int32, ct.int64, ct.int64, 0), (ct.int8, ct.int8, ct.int8, 0),
    (ct.float64, ct.float64, ct.float64, 1e-12),
]
# the last two fit tensor cores (where the operands' dtype has a tensor-core product)
MATMUL_SHAPES = [((8, 16), (16, 4)), ((8,), (8, 4)), ((4, 8), (8,)), ((2, 4, 8), (2, 8, 4)),
                 ((32, 64), (64, 32)), ((2, 16, 32), (2, 32, 16))]


@pytest.mark.parametrize("use_operator", [False, True], ids=["matmul", "operator"])
@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("a_dtype,b_dtype,result_dtype,tolerance", MATMUL_DTYPES, ids=str)
def test_matmul_promotion(run_kernel, rng, a_dtype, b_dtype, result_dtype, tolerance, a_shape,
                          b_shape, use_operator):
    a = random_matrix(rng, a_shape, a_dtype)
    b = random_matrix(rng, b_shape, b_dtype)
    actual, expected = run_matmul(run_kernel, use_operator, a, b, result_dtype)
    if result_dtype.is_integral:  # integer results wrap around
        expected = expected.astype(NP[result_dtype]).astype(np.int64)
    check(actual, expected, tolerance)


@pytest.mark.parametrize("use_operator", [False, True], ids=["matmul", "operator"])
@pytest.mark.parametrize("a_dtype,b_dtype", [(ct.uint8, ct.int8), (ct.int16, ct.uint16),
                                             (ct.bfloat16, ct.float16)], ids=str)
def test_matmul_promotion_error_is_type_error(run_kernel, rng, a_dtype, b_dtype,
                                              use_operator):
    a = random_matrix(rng, (4, 8), a_dtype)
    b = random_matrix(rng, (8, 4), b_dtype)
    with pytest.raises(ct.TileTypeError):
        run_matmul(run_kernel, use_operator, a, b, ct.float32)


@pytest.mark.parametrize("use_operator", [False, True], ids=["matmul", "operator"])
@pytest.mark.parametrize("a_shape,b_shape", [((4, 8), (4, 8)), ((8,), (4, 8)),
                                             ((2, 4, 8), (4, 8, 4))], ids=str)
def test_matmul_shape_mismatch_is_type_error(run_kernel, rng, a_shape, b_shape,
                                              use_operator):
    a = random_matrix(rng, a_shape, ct.float32)
    b = random_matrix(rng, b_shape, ct.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(ct.TileTypeError, match="Incompatible shapes|Expect acc shape"):
        run_kernel(matmul_op_kernel(use_operator), (1,), (
            a, b, out, a_shape, b_shape, (0,) * a.ndim, (0,) * b.ndim, (0,), (64,), ct.float32))


# -- tensor cores -----------------------------------------------------------------------------
@pytest.mark.parametrize("num_warps", [4, 8])
@pytest.mark.parametrize("in_dtype,acc_dtype,tolerance", [
    (ct.float16, ct.float32, 1e-5), (ct.bfloat16, ct.float32, 1e-5),
    (ct.float16, ct.float16, 1e-2)], ids=str)
def test_matmul_large_tiles(run_kernel, rng, in_dtype, acc_dtype, tolerance, num_warps):
    """128 x 128 x 32 tiles: tensor cores (mma.sync) with a loop-carried accumulator in the
    fragment layout (filled with zeros, it takes that layout without moving data)."""
    m, n, k = 256, 128, 96
    a = random_matrix(rng, (m, k), in_dtype)
    b = random_matrix(rng, (k, n), in_dtype)
    out_dtype = ct.float32 if acc_dtype is ct.float32 else ct.float16
    c = poisoned((m, n), NP[out_dtype])
    kernel = matmul_kernel.replace_hints(num_warps=num_warps)
    run_kernel(kernel, (m // 128, n // 128), (a, b, c, 128, 128, 32, acc_dtype))
    check(c, np.matmul(wide(a), wide(b)), tolerance)


def test_mma_with_a_loaded_128x128_accumulator(run_kernel, rng):
    """A loaded accumulator moves into the fragment layout through shared memory: 64 KB for
    128 x 128 float32, beyond the 48 KB a kernel gets without asking (the launch opts in)."""
    a = random_matrix(rng, (128, 32), ct.float16)
    b = random_matrix(rng, (32, 128), ct.float16)
    c = random_matrix(rng, (128, 128), ct.float32)
    actual = run_mma(run_kernel, a, b, c, ct.float16, ct.float16)
    check(actual, np.matmul(wide(a), wide(b)) + wide(c), 1e-5)


# -- k-loops the pipelining must leave alone (or follow exactly) ------------------------------
@ct.kernel
def carried_index_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                         TK: ct.Constant[int]):
    """The tile index is carried from the previous iteration."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    j = -1
    for k in range(4):
        j = j + 1
        acc = ct.mma(ct.load(A, (bm, j), (TM, TK)), ct.load(B, (j, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@ct.kernel
def reassigned_index_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                            TK: ct.Constant[int]):
    """The loop variable is assigned again in the loop."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(4):
        k = 3 - k
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@ct.kernel
def looked_up_index_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                           TK: ct.Constant[int]):
    """The tile index is looked up by the loop variable (in a chain of conditions: a tuple
    takes no run-time index, as in cuTile)."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(4):
        j = 2 if k == 0 else (0 if k == 1 else (3 if k == 2 else 1))
        acc = ct.mma(ct.load(A, (bm, j), (TM, TK)), ct.load(B, (j, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


@ct.kernel
def some_iterations_kernel(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                           TK: ct.Constant[int]):
    """A product that only the even iterations run."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(4):
        a = ct.load(A, (bm, k), (TM, TK))
        b = ct.load(B, (k, bn), (TK, TN))
        if k % 2 == 0:
            acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc)


UNPIPELINED_K_LOOPS = {"carried": (carried_index_kernel, [0, 1, 2, 3]),
                      "reassigned": (reassigned_index_kernel, [3, 2, 1, 0]),
                      "looked_up": (looked_up_index_kernel, [2, 0, 3, 1]),
                      "some_iterations": (some_iterations_kernel, [0, 2])}


@pytest.mark.parametrize("kind", list(UNPIPELINED_K_LOOPS))
def test_k_loops_with_other_indices_stay_exact(run_kernel, rng, kind):
    (m, n, k), (tm, tn, tk) = (64, 64, 64), (32, 32, 16)
    a = random_matrix(rng, (m, k), ct.float16)
    b = random_matrix(rng, (k, n), ct.float16)
    c = poisoned((m, n), np.float32)
    kernel, tiles = UNPIPELINED_K_LOOPS[kind]
    run_kernel(kernel, (m // tm, n // tn), (a, b, c, tm, tn, tk))
    expected = sum(np.matmul(wide(a[:, t * tk:(t + 1) * tk]), wide(b[t * tk:(t + 1) * tk]))
                   for t in tiles)
    check(c, expected, 1e-5)


# -- batch broadcasting: a 2-d operand beside a 3-d one, or a batch of 1 ------------------------
@ct.kernel
def broadcast_mma_kernel(a, b, c, out, A_SHAPE: ct.Constant, B_SHAPE: ct.Constant,
                         C_SHAPE: ct.Constant, A_ZERO: ct.Constant, B_ZERO: ct.Constant,
                         C_ZERO: ct.Constant):
    x = ct.load(a, A_ZERO, A_SHAPE)
    y = ct.load(b, B_ZERO, B_SHAPE)
    r = ct.mma(x, y, ct.load(c, C_ZERO, C_SHAPE))
    ct.static_assert(r.shape == C_SHAPE, "the broadcast batch")
    ct.store(out, C_ZERO, r)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((2, 16, 16), (16, 8)), ((16, 16), (2, 16, 8)), ((1, 16, 32), (4, 32, 8)),
    ((4, 64, 32), (1, 32, 64)), ((2, 4, 8), (8, 2))], ids=str)
@pytest.mark.parametrize("in_dtype,acc_dtype,tolerance", [
    (ct.float16, ct.float32, 1e-5), (ct.float64, ct.float64, 1e-12), (ct.int8, ct.int32, 0)],
    ids=["f16", "f64", "i8"])
def test_mma_broadcasts_the_batch(run_kernel, rng, a_shape, b_shape, in_dtype, acc_dtype,
                                  tolerance):
    """cuTile's mma broadcasts all but the last two axes: ``(B, M, K) x (K, N)``,
    ``(M, K) x (B, K, N)`` and a batch of 1 beside a batch of ``B``."""
    a = random_matrix(rng, a_shape, in_dtype)
    b = random_matrix(rng, b_shape, in_dtype)
    c_shape = np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1])
    c = random_matrix(rng, c_shape, acc_dtype)
    out = poisoned(c_shape, c.dtype)
    run_kernel(broadcast_mma_kernel, (1,), (a, b, c, out, a_shape, b_shape, c_shape,
                                           (0,) * len(a_shape), (0,) * len(b_shape),
                                           (0,) * len(c_shape)))
    check(out, np.matmul(wide(a), wide(b)) + wide(c), tolerance)


def test_mma_batches_that_do_not_broadcast_are_a_type_error(run_kernel):
    a = np.ones((2, 16, 16), np.float16)
    b = np.ones((4, 16, 8), np.float16)
    c = np.zeros((4, 16, 8), np.float32)
    with pytest.raises(ct.TileTypeError, match="Incompatible shapes for matrix mul on tiles"):
        run_kernel(broadcast_mma_kernel, (1,), (a, b, c, c.copy(), a.shape, b.shape, c.shape,
                                               (0, 0, 0), (0, 0, 0), (0, 0, 0)))
