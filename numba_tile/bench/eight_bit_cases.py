"""The 8-bit matrix product cases of the benchmark: float8_e4m3fn into float32 (result in
bfloat16) next to ``torch._scaled_mm`` (cuBLASLt) with unit scales, both with their default
float32 additions (``matmul_f8``) and both with the tensor cores' fast accumulation
(``matmul_f8_fast``: ``use_fast_acc=True``, ``use_fast_accum=True``), and int8 into int32
next to ``torch._int_mm``, in one run. Both libraries take B "column-major" (its transpose ``bt``,
``(N, K)``, rows of K contiguous), which is how Hopper's ``wgmma`` reads 8-bit B; the kernel
loads ``bt`` with ``order=(1, 0)``. The bytes moved are the operands and the result, once
each.

>>> from numba_tile.bench import eight_bit_cases
>>> [case.name for case in eight_bit_cases.eight_bit_cases(quick=True)]
['matmul_f8_1024', 'matmul_f8_fast_1024', 'matmul_i8_1024']
"""

import numba_tile as ct
from .case_types import Case, Implementation, Target, launching, returning
from .kernels import _grouped_tile, _with_warps
from .optional import torch


@ct.kernel
def matmul_k_major(A, BT, C, TM: ct.Constant[int], TN: ct.Constant[int],
                   TK: ct.Constant[int], GROUP: ct.Constant[int], FAST: ct.Constant[bool]):
    """``C = A @ BT^T``, one ``TM x TN`` tile of ``C`` per block (grouped order), float32
    accumulation for floats (``FAST``: ``use_fast_acc``), int32 for integers."""
    bm, bn = _grouped_tile(ct.bid(0), ct.cdiv(A.shape[0], TM), ct.cdiv(BT.shape[0], TN),
                            GROUP)
    acc = ct.full((TM, TN), 0, ct.int32 if A.dtype.is_integral else ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(BT, (k, bn), (TK, TN), order=(1, 0), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc, use_fast_acc=FAST)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


def matmul_k_major_launch(a, bt, c, *, tile_m=128, tile_n=128, tile_k=128, num_warps=None,
                          num_stages=None, group=8, fast=False, warp_specialize=None):
    """``(kernel, grid, args)`` computing ``c = a @ bt.T`` with :func:`matmul_k_major`.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.eight_bit_cases import matmul_k_major_launch
    >>> a = np.ones((16, 32), np.int8); bt = np.full((16, 32), 2, np.int8)
    >>> c = np.zeros((16, 16), np.int32)
    >>> kernel, grid, args = matmul_k_major_launch(a, bt, c, tile_m=16, tile_n=16, tile_k=32)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> int(c[3, 5])
    64
    """
    grid = (ct.cdiv(a.shape[0], tile_m) * ct.cdiv(bt.shape[0], tile_n),)
    return (_with_warps(matmul_k_major, num_warps, num_stages=num_stages,
                        warp_specialize=warp_specialize), grid,
            (a, bt, c, tile_m, tile_n, tile_k, group, fast))


def torch_scaled_mm(a, bt, fast=False):
    """cuBLASLt's float8 product (unit scales), bfloat16 result."""
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                            use_fast_accum=fast)


def torch_int_mm(a, bt):
    """cuBLASLt's int8 product, int32 result."""
    return torch._int_mm(a, bt.t())


_INT8_TILES = ({"tile_m": 128, "tile_n": 256, "tile_k": 128, "num_warps": 8},
               {"tile_m": 128, "tile_n": 128, "tile_k": 128, "num_warps": 4},
               {"tile_m": 128, "tile_n": 256, "tile_k": 64, "num_warps": 8},
               {"tile_m": 256, "tile_n": 128, "tile_k": 128, "num_warps": 8})
# float8 sums added per call in float32 (``use_fast_acc`` off, as ``torch._scaled_mm``'s
# default) need 64 registers a thread for a block's sums beside the accumulator: with a
# producer warpgroup (240 registers for each of two consumer warpgroups) 128 x 256 tiles fit,
# 128 accumulators a thread, each warpgroup adding its sums while the other's products run;
# they read A and B from L2 a quarter less often than 128 x 128 tiles, which 8192^3 needs
_FLOAT8_TILES = ({"tile_m": 128, "tile_n": 256, "tile_k": 128, "num_warps": 8,
                  "num_stages": 4, "warp_specialize": True},
                 {"tile_m": 128, "tile_n": 128, "tile_k": 128, "num_warps": 8,
                  "num_stages": 5, "warp_specialize": True},
                 {"tile_m": 128, "tile_n": 128, "tile_k": 256, "num_warps": 8,
                  "num_stages": 3})


def eight_bit_case(kind, n):
    """An ``n x n x n`` product of ``kind`` ``"f8"`` (float8_e4m3fn, bfloat16 result),
    ``"f8_fast"`` (the same with fast accumulation) or ``"i8"`` (int8, int32 result)."""
    floats = kind.startswith("f8")
    fast = kind == "f8_fast"

    def make_inputs(torch, generator):
        if floats:
            return tuple(torch.randn((n, n), generator=generator, device="cuda")
                         .to(torch.float8_e4m3fn) for _ in range(2))
        return tuple(torch.randint(-128, 128, (n, n), generator=generator, device="cuda",
                                   dtype=torch.int8) for _ in range(2))

    def reference(a, bt):
        return a.double() @ bt.double().t()

    def output(torch, inputs):
        return torch.full((n, n), float("nan"), dtype=torch.bfloat16, device="cuda") \
            if floats else torch.full((n, n), -1, dtype=torch.int32, device="cuda")

    reference_name = "torch._scaled_mm" if floats else "torch._int_mm"
    return Case(
        name=f"matmul_{kind}_{n}",
        title=f"matmul, {n} x {n} x {n}, {'float8_e4m3fn' if floats else 'int8'} "
              f"(B K-major{', fast accumulation' if fast else ''}), next to {reference_name}",
        dtype="bfloat16" if floats else "int32", bytes_moved=2 * n * n + n * n * (
            2 if floats else 4),
        make_inputs=make_inputs, reference=reference,
        implementations=(
            Implementation("numba_tile", launching(matmul_k_major_launch, output, fast=fast),
                           _FLOAT8_TILES if floats and not fast else _INT8_TILES),
            Implementation("torch", returning(torch_scaled_mm, fast=fast) if floats
                           else returning(torch_int_mm)),
        ),
        target=Target(0.9, "torch"), flops=2 * n ** 3,
        tolerance_override=None if floats else 1e-12)


def eight_bit_cases(quick=False):
    """The float8 (twice) and int8 cases at 8192 (1024 for a smoke run)."""
    n = 1024 if quick else 8192
    return [eight_bit_case("f8", n), eight_bit_case("f8_fast", n), eight_bit_case("i8", n)]
