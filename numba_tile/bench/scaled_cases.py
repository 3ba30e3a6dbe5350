"""The block-scaled product case of the benchmark: ``mma_scaled`` of float8_e4m3fn matrices
with float8_e8m0fnu scales (one per 32 elements along K), next to PyTorch dequantizing the
operands to bfloat16 (exact) and multiplying them with ``torch.matmul`` (cuBLAS), in one
run. The output is bfloat16; the bytes moved are the operands, their scales and the output,
once each.

>>> from numba_tile.bench import scaled_cases
>>> case = scaled_cases.scaled_matmul_case(8192)
>>> case.name, case.flops == 2 * 8192 ** 3
('mma_scaled_f8', True)
"""

import numba_tile as ct
from .case_types import Case, Implementation, launching, returning
from .kernels import _grouped_tile, _with_warps
from .optional import torch

BLOCK = 32  # elements along K that share one scale


@ct.kernel
def scaled_matmul(A, A_scale, B, B_scale, C, TM: ct.Constant[int], TN: ct.Constant[int],
                  TK: ct.Constant[int], GROUP: ct.Constant[int]):
    """``C = (A * A_scale) @ (B * B_scale)``, each scale repeated over 32 elements along K,
    one ``TM x TN`` tile of ``C`` per block (grouped order), float32 accumulation."""
    bm, bn = _grouped_tile(ct.bid(0), ct.cdiv(A.shape[0], TM), ct.cdiv(B.shape[1], TN), GROUP)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        a_scale = ct.load(A_scale, (bm, k), (TM, TK // 32))
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        b_scale = ct.load(B_scale, (k, bn), (TK // 32, TN))
        acc = ct.mma_scaled(a, a_scale, b, b_scale, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


def scaled_matmul_launch(a, a_scale, b, b_scale, c, *, tile_m=128, tile_n=128, tile_k=64,
                         num_warps=None, num_stages=None, group=8):
    """``(kernel, grid, args)`` computing ``c`` with :func:`scaled_matmul`.

    >>> import ml_dtypes, numpy as np, numba_tile as ct
    >>> from numba_tile.bench.scaled_cases import scaled_matmul_launch
    >>> a = np.ones((16, 32), ml_dtypes.float8_e4m3fn); b = np.ones((32, 16), a.dtype)
    >>> scale = np.full((16, 1), 2.0, ml_dtypes.float8_e8m0fnu)
    >>> c = np.full((16, 16), np.nan, np.float32)
    >>> kernel, grid, args = scaled_matmul_launch(a, scale, b, scale.T.copy(), c, tile_m=16,
    ...                                           tile_n=16, tile_k=32)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> float(c[0, 0])
    128.0
    """
    grid = (ct.cdiv(a.shape[0], tile_m) * ct.cdiv(b.shape[1], tile_n),)
    return (_with_warps(scaled_matmul, num_warps, num_stages=num_stages), grid,
            (a, a_scale, b, b_scale, c, tile_m, tile_n, tile_k, group))


def dequantized(values, scale, axis):
    """``values * scale`` (the scale repeated over its blocks along ``axis``), in bfloat16:
    exact for float8 values and power-of-two scales."""
    repeated = torch.repeat_interleave(scale.float(), BLOCK, dim=axis)
    return (values.float() * repeated).to(torch.bfloat16)


def torch_dequantized_matmul(a, a_scale, b, b_scale):
    """PyTorch's way without block-scaled tensor cores: dequantize both operands to bfloat16,
    then ``torch.matmul`` (cuBLAS)."""
    return torch.matmul(dequantized(a, a_scale, 1), dequantized(b, b_scale, 0))


def scaled_matmul_case(n):
    """An ``n x n x n`` block-scaled product of float8_e4m3fn matrices."""
    def make_inputs(torch, generator):
        a = torch.randn((n, n), generator=generator, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn((n, n), generator=generator, device="cuda").to(torch.float8_e4m3fn)
        # powers of two from 2**-4 to 2**4
        scales = [(2.0 ** torch.randint(-4, 5, shape, generator=generator, device="cuda")
                   ).to(torch.float8_e8m0fnu) for shape in ((n, n // BLOCK), (n // BLOCK, n))]
        return a, scales[0], b, scales[1]

    def reference(a, a_scale, b, b_scale):
        return dequantized(a, a_scale, 1).double() @ \
            dequantized(b, b_scale, 0).double()

    def output(torch, inputs):
        return torch.full((n, n), float("nan"), dtype=torch.bfloat16, device="cuda")

    return Case(
        name="mma_scaled_f8", title=f"mma_scaled, {n} x {n} x {n}, float8_e4m3fn with "
                                    f"float8_e8m0fnu scales per 32",
        dtype="bfloat16", bytes_moved=2 * n * n + 2 * n * n // BLOCK + 2 * n * n,
        make_inputs=make_inputs, reference=reference,
        implementations=(
            # (sets that do not spill: the scales take registers beside the accumulators)
            Implementation("numba_tile", launching(scaled_matmul_launch, output), (
                {"tile_m": 128, "tile_n": 128, "tile_k": 64, "num_warps": 8},
                {"tile_m": 128, "tile_n": 256, "tile_k": 32, "num_warps": 8},
                {"tile_m": 128, "tile_n": 128, "tile_k": 32, "num_warps": 8})),
            Implementation("torch", returning(torch_dequantized_matmul)),
        ),
        target=None, flops=2 * n ** 3)


def scaled_cases(quick=False):
    """The case at 8192 (1024 for a smoke run)."""
    return [scaled_matmul_case(1024 if quick else 8192)]
