"""The benchmark's cases (issues 3 and 4): what is computed, on which sizes, by whom, and the
goal.

A :class:`~numba_tile.bench.case_types.Case` knows how to draw its random inputs, compute the
float64 reference, count the bytes it must move (each input read once, each output written
once) and start each implementation: the numba_tile kernel, PyTorch and Triton. Each
implementation has a list of parameter sets (tile sizes, rows per block, warps); the first is
its default, and the others are tried only in full runs, where the fastest correct one is
reported. The cases of
:mod:`~numba_tile.bench.memory_cases`, :mod:`~numba_tile.bench.scaled_cases` and
:mod:`~numba_tile.bench.eight_bit_cases` join these in :func:`all_cases`.

Tolerances, on ``||out - ref|| / ||ref||`` against a float64 reference computed from the
same inputs: float32 outputs ``1e-5`` (float32 arithmetic lands near 1e-7), float16 outputs
``1e-3`` (rounding a result to float16 alone gives about 3e-4), bfloat16 outputs ``1e-2``
(3 bits fewer), float32 products in tfloat32 ``2e-3`` (operands rounded to 11 bits).
Compute-bound cases (matrix products, attention) also count their floating-point
operations: TFLOPS. NaN never passes, and
outputs are filled with NaN before the checked run, so an element left unwritten fails.

>>> from numba_tile.bench import cases
>>> [case.name for case in cases.all_cases()][:6]
['vector_add_f32', 'vector_add_f16', 'softmax_f32', 'softmax_f16', 'layer_norm_f16', 'row_sum_f32']
>>> [case.name for case in cases.all_cases()][6:9]
['cumsum_f32', 'scan_f32', 'matmul_f16_4096']
>>> case = cases.all_cases()[2]
>>> case.title, case.bytes_moved, case.tolerance
('row softmax, 8192 x 4096, float32', 268435456, 1e-05)
"""

import re

from . import kernels, references
from .case_types import Case, Implementation, Target, launching, returning, writing
from .documented_attention import documented_attention_launch
from .eight_bit_cases import eight_bit_cases
from .memory_cases import memory_cases
from .optional import torch
from .scaled_cases import scaled_cases

# float32 matrix products in tfloat32 (10 bits of mantissa in the operands)
TF32_TOLERANCE = 2e-3
_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
LAYER_NORM_EPS = 1e-5


def vector_add_case(dtype, n):
    """``c = a + b`` on ``n`` elements of ``dtype``.

    >>> from numba_tile.bench.cases import vector_add_case
    >>> vector_add_case("float32", 1 << 27).bytes_moved == 3 * 4 * 2**27
    True
    """
    def make_inputs(torch, generator):
        return tuple(_random(torch, (n,), dtype, generator) for _ in range(2))

    return Case(
        name=f"vector_add_{_SHORT[dtype]}", title=f"vector add, {_count(n)} elements, {dtype}",
        dtype=dtype, bytes_moved=3 * n * _ITEMSIZE[dtype], make_inputs=make_inputs,
        reference=lambda a, b: a.double() + b.double(),
        implementations=(
            Implementation("numba_tile", launching(kernels.vector_add_launch, _like_first),
                           ({"tile": 1024}, {"tile": 2048}, {"tile": 2048, "num_warps": 8},
                            {"tile": 4096, "num_warps": 8})),
            Implementation("torch", returning(references.torch_vector_add)),
            Implementation("triton", writing(references.triton_vector_add, _like_first),
                           ({"block": 1024, "num_warps": 4}, {"block": 2048, "num_warps": 4},
                            {"block": 2048, "num_warps": 8}, {"block": 4096, "num_warps": 8})),
        ),
        target=Target(0.95, "torch"))


def softmax_case(dtype, shape):
    """Softmax of each row of a ``shape`` matrix of ``dtype``.

    >>> from numba_tile.bench.cases import softmax_case
    >>> softmax_case("float16", (8192, 4096)).name
    'softmax_f16'
    """
    def make_inputs(torch, generator):
        return (_random(torch, shape, dtype, generator),)

    def reference(x):
        return torch.softmax(x.double(), dim=1)

    return Case(
        name=f"softmax_{_SHORT[dtype]}", title=f"row softmax, {shape[0]} x {shape[1]}, {dtype}",
        dtype=dtype, bytes_moved=2 * shape[0] * shape[1] * _ITEMSIZE[dtype],
        make_inputs=make_inputs, reference=reference,
        implementations=(
            Implementation("numba_tile", launching(kernels.softmax_launch, _like_first),
                           _ROW_PARAMS),
            Implementation("torch", returning(references.torch_softmax)),
            Implementation("triton", writing(references.triton_softmax, _like_first),
                           _TRITON_ROW_PARAMS),
        ),
        target=Target(1.0, "triton", fallback_gbps=2400.0))


def layer_norm_case(dtype, shape, eps=LAYER_NORM_EPS):
    """Layer normalization (with weight and bias) of each row of a ``shape`` matrix.

    >>> from numba_tile.bench.cases import layer_norm_case
    >>> layer_norm_case("float16", (8192, 4096)).bytes_moved == 2 * 2 * 8192 * 4096 + 2 * 2 * 4096
    True
    """
    def make_inputs(torch, generator):
        weight = 1 + 0.5 * _random(torch, shape[1:], dtype, generator)
        bias = 0.5 * _random(torch, shape[1:], dtype, generator)
        return _random(torch, shape, dtype, generator), weight, bias

    def reference(x, weight, bias):
        x = x.double()
        mean = x.mean(dim=1, keepdim=True)
        variance = ((x - mean) ** 2).mean(dim=1, keepdim=True)
        return (x - mean) / (variance + eps).sqrt() * weight.double() + bias.double()

    itemsize = _ITEMSIZE[dtype]
    return Case(
        name=f"layer_norm_{_SHORT[dtype]}",
        title=f"layer norm, {shape[0]} x {shape[1]}, {dtype}, weight and bias, eps {eps:g}",
        dtype=dtype, bytes_moved=2 * shape[0] * shape[1] * itemsize + 2 * shape[1] * itemsize,
        make_inputs=make_inputs, reference=reference,
        implementations=(
            Implementation("numba_tile", launching(kernels.layer_norm_launch, _like_first,
                                                   eps=eps), _ROW_PARAMS),
            Implementation("torch", returning(references.torch_layer_norm, eps=eps)),
            Implementation("triton", writing(references.triton_layer_norm, _like_first,
                                             eps=eps), _TRITON_ROW_PARAMS),
        ),
        target=Target(1.0, "triton", fallback_gbps=2400.0))


def row_sum_case(dtype, shape):
    """The float32 sum of each row of a ``shape`` matrix.

    >>> from numba_tile.bench.cases import row_sum_case
    >>> row_sum_case("float32", (8192, 4096)).target
    Target(fraction=0.85, of='copy', fallback_gbps=None)
    """
    def make_inputs(torch, generator):
        return (_random(torch, shape, dtype, generator),)

    return Case(
        name=f"row_sum_{_SHORT[dtype]}", title=f"row sum, {shape[0]} x {shape[1]}, {dtype}",
        dtype=dtype, bytes_moved=shape[0] * shape[1] * _ITEMSIZE[dtype] + shape[0] * 4,
        make_inputs=make_inputs, reference=lambda x: x.double().sum(dim=1),
        implementations=(
            Implementation("numba_tile", launching(kernels.row_sum_launch, _row_vector),
                           ({"rows": 1}, {"rows": 2, "num_warps": 8},
                            {"rows": 4, "tile_n": 1024}, {"rows": 8, "tile_n": 512})),
            Implementation("torch", returning(references.torch_row_sum)),
            Implementation("triton", writing(references.triton_row_sum, _row_vector),
                           ({"rows": 1, "num_warps": 4}, {"rows": 2, "num_warps": 8},
                            {"rows": 4, "block_n": 1024, "num_warps": 4},
                            {"rows": 8, "block_n": 512, "num_warps": 4})),
        ),
        target=Target(0.85, "copy"))


def cumsum_case(dtype, shape, custom=False):
    """The running sum of each row of a ``shape`` matrix: with ``ct.cumsum``, or with
    ``ct.scan`` and a user's combining function (``custom``: no target, a measure of what
    the custom scan costs).

    >>> from numba_tile.bench.cases import cumsum_case
    >>> cumsum_case("float32", (8192, 4096)).bytes_moved == 2 * 8192 * 4096 * 4
    True
    >>> cumsum_case("float32", (8192, 1024), custom=True).name
    'scan_f32'
    """
    def make_inputs(torch, generator):
        return (_random(torch, shape, dtype, generator),)

    launch = kernels.row_scan_launch if custom else kernels.row_cumsum_launch
    what = "row scan (a + b)" if custom else "row cumsum"
    return Case(
        name=f"{'scan' if custom else 'cumsum'}_{_SHORT[dtype]}",
        title=f"{what}, {shape[0]} x {shape[1]}, {dtype}",
        dtype=dtype, bytes_moved=2 * shape[0] * shape[1] * _ITEMSIZE[dtype],
        make_inputs=make_inputs, reference=lambda x: x.double().cumsum(dim=1),
        implementations=(
            Implementation("numba_tile", launching(launch, _like_first),
                           ({"rows": 1}, {"rows": 1, "num_warps": 8},
                            {"rows": 2, "num_warps": 8}, {"rows": 1, "num_warps": 16})),
            Implementation("torch", returning(references.torch_cumsum)),
        ),
        target=None if custom else Target(0.8, "copy"))


def matmul_case(dtype, n, tf32=False):
    """``a @ b`` of two ``n x n`` matrices of ``dtype`` (``tf32``: float32 operands, products
    in tfloat32 on tensor cores), float32 accumulation, result in ``dtype``.

    >>> from numba_tile.bench.cases import matmul_case
    >>> case = matmul_case("float32", 4096, tf32=True)
    >>> case.name, case.flops == 2 * 4096 ** 3, case.tolerance
    ('matmul_tf32_4096', True, 0.002)
    """
    def make_inputs(torch, generator):
        return tuple(_random(torch, (n, n), dtype, generator) for _ in range(2))

    kind = "tf32" if tf32 else _SHORT[dtype]
    return Case(
        name=f"matmul_{kind}_{n}", title=f"matmul, {n} x {n} x {n}, {kind}",
        dtype=dtype, bytes_moved=3 * n * n * _ITEMSIZE[dtype], make_inputs=make_inputs,
        reference=lambda a, b: a.double() @ b.double(),
        implementations=(
            Implementation("numba_tile", launching(kernels.matmul_launch, _product_output,
                                                   tf32=tf32),
                           _TF32_TILES if tf32 else _PERSISTENT_MATMUL_TILES),
            Implementation("torch", returning(references.torch_matmul, tf32=tf32)),
            Implementation("triton", writing(references.triton_matmul, _product_output),
                           _TRITON_TF32_TILES if tf32 else _TRITON_MATMUL_TILES),
        ),
        target=Target(0.6 if tf32 else 0.75, "torch"), flops=2 * n ** 3,
        tolerance_override=TF32_TOLERANCE if tf32 else None)


def batched_matmul_case(dtype, batch, n):
    """``a[i] @ b[i]`` for ``batch`` pairs of ``n x n`` matrices.

    >>> from numba_tile.bench.cases import batched_matmul_case
    >>> batched_matmul_case("float16", 32, 1024).title
    'batched matmul, 32 x 1024 x 1024 x 1024, float16'
    """
    def make_inputs(torch, generator):
        return tuple(_random(torch, (batch, n, n), dtype, generator) for _ in range(2))

    return Case(
        name=f"bmm_{_SHORT[dtype]}", title=f"batched matmul, {batch} x {n} x {n} x {n}, {dtype}",
        dtype=dtype, bytes_moved=3 * batch * n * n * _ITEMSIZE[dtype], make_inputs=make_inputs,
        reference=lambda a, b: a.double() @ b.double(),
        implementations=(
            Implementation("numba_tile", launching(kernels.batched_matmul_launch,
                                                   _product_output), _MATMUL_TILES),
            Implementation("torch", returning(references.torch_matmul)),
            Implementation("triton", writing(references.triton_matmul, _product_output),
                           _TRITON_MATMUL_TILES),
        ),
        target=Target(0.75, "torch"), flops=2 * batch * n ** 3)


def attention_case(dtype, shape, causal, documented=False):
    """Flash-attention forward on ``shape = (batch, heads, seq, head_dim)`` queries, keys
    and values, scale ``1 / sqrt(head_dim)``, ``causal`` or not. ``documented``: the
    kernel written as cuTile's documentation teaches
    (:mod:`~numba_tile.bench.documented_attention`), unchanged, against sdpa alone.

    >>> from numba_tile.bench.cases import attention_case
    >>> case = attention_case("float16", (4, 16, 4096, 64), causal=True)
    >>> case.name, case.flops == 4 * 4 * 16 * 4096 ** 2 * 64 // 2
    ('attention_f16_d64_causal', True)
    >>> attention_case("float16", (4, 16, 4096, 128), False, documented=True).name
    'attention_documented_f16_d128'
    """
    batch, heads, seq, head_dim = shape

    def make_inputs(torch, generator):
        return tuple(_random(torch, shape, dtype, generator) for _ in range(3))

    def reference(q, k, v):
        out = torch.empty(shape, dtype=torch.float64, device=q.device)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
        for b in range(batch):  # a batch at a time: the float64 scores are large
            scores = q[b].double() @ k[b].double().transpose(-1, -2) / head_dim ** 0.5
            if causal:
                scores = scores.masked_fill(~mask, float("-inf"))
            out[b] = torch.softmax(scores, dim=-1) @ v[b].double()
        return out

    flops = 4 * batch * heads * seq * seq * head_dim // (2 if causal else 1)
    sdpa = Implementation("torch", returning(references.torch_attention, causal=causal))
    if documented:
        implementations = (Implementation(
            "numba_tile", launching(documented_attention_launch, _like_first, causal=causal),
            _DOCUMENTED_ATTENTION_TILES), sdpa)
    else:
        implementations = (
            Implementation("numba_tile", launching(kernels.attention_launch, _like_first,
                                                   causal=causal),
                           attention_tiles(head_dim)),
            sdpa,
            Implementation("triton", writing(references.triton_attention, _like_first,
                                             causal=causal), _TRITON_ATTENTION_TILES))
    return Case(
        name=f"attention_{'documented_' if documented else ''}{_SHORT[dtype]}_d{head_dim}"
             + ("_causal" if causal else ""),
        title=f"attention forward, {batch} x {heads} heads x {seq} x {head_dim}, {dtype}"
              + (", causal" if causal else "")
              + (", written as cuTile's documentation teaches" if documented else ""),
        dtype=dtype, bytes_moved=4 * batch * heads * seq * head_dim * _ITEMSIZE[dtype],
        make_inputs=make_inputs, reference=reference, implementations=implementations,
        target=Target(0.9 if documented else 0.7, "torch"), flops=flops)


def attention_tiles(head_dim):
    """The variants of the tuned attention kernel the benchmark tries (with and without the
    causal mask).

    >>> from numba_tile.bench.cases import attention_tiles
    >>> len(attention_tiles(64)), len(attention_tiles(128))
    (3, 6)
    """
    return _ATTENTION_TILES[head_dim]


def all_cases(quick=False):
    """The cases of issue 3, in order; ``quick`` shrinks the sizes (2**24 elements, 1024 rows)
    for a smoke run.

    >>> from numba_tile.bench.cases import all_cases
    >>> [case.title for case in all_cases(quick=True)][:1]
    ['vector add, 2**24 elements, float32']
    """
    n, rows = (1 << 24, 1024) if quick else (1 << 27, 8192)
    sizes, seq = ((1024,), 1024) if quick else ((4096, 8192), 4096)
    return [vector_add_case("float32", n), vector_add_case("float16", n),
            softmax_case("float32", (rows, 4096)), softmax_case("float16", (rows, 4096)),
            layer_norm_case("float16", (rows, 4096)), row_sum_case("float32", (rows, 4096)),
            cumsum_case("float32", (rows, 4096)),
            cumsum_case("float32", (rows, 1024), custom=True)] + [
        matmul_case(dtype, size, tf32=dtype == "float32")
        for dtype in ("float16", "bfloat16", "float32") for size in sizes] + [
        batched_matmul_case("float16", 8 if quick else 32, 1024)] + [
        attention_case("float16", (1 if quick else 4, 16, seq, head_dim), causal, documented)
        for documented in (False, True) for head_dim in (64, 128)
        for causal in (False, True)] + memory_cases(quick) + \
        scaled_cases(quick) + eight_bit_cases(quick)


def select(cases, names):
    """The cases named in ``names``: a case's full name (``softmax_f16``) or a start of it
    up to an underscore (``softmax``: both dtypes; ``matmul_f16``: both sizes). An unknown
    name is a ``ValueError`` listing the names.

    >>> from numba_tile.bench.cases import all_cases, select
    >>> [case.name for case in select(all_cases(), ["softmax", "row_sum_f32"])]
    ['softmax_f32', 'softmax_f16', 'row_sum_f32']
    >>> [case.name for case in select(all_cases(), ["matmul_f16"])]
    ['matmul_f16_4096', 'matmul_f16_8192']
    >>> select(all_cases(), ["transpose"])
    Traceback (most recent call last):
    ...
    ValueError: unknown case 'transpose'; the cases are vector_add_f32, ..., row_sum_f32, ...
    (or an operation: vector_add, ..., mma_scaled)
    """
    operations = list(dict.fromkeys(re.split(r"_(?:f|bf|tf|i)\d", case.name)[0]
                                    for case in cases))

    def chosen(case, name):  # the name, or a start of it ending at an underscore
        return case.name == name or case.name.startswith(name + "_")
    for name in names:
        if not any(chosen(case, name) for case in cases):
            raise ValueError(f"unknown case {name!r}; the cases are "
                             f"{', '.join(case.name for case in cases)} (or an operation: "
                             f"{', '.join(operations)})")
    return [case for case in cases if any(chosen(case, name) for name in names)]


_MATMUL_TILES = (
    {"tile_m": 128, "tile_n": 256, "tile_k": 64, "num_warps": 8},
    {"tile_m": 128, "tile_n": 256, "tile_k": 64, "num_warps": 8, "num_stages": 4},
    {"tile_m": 256, "tile_n": 128, "tile_k": 64, "num_warps": 8, "num_stages": 2},
    {"tile_m": 128, "tile_n": 128, "tile_k": 64, "num_warps": 4, "num_stages": 3},
    {"tile_m": 128, "tile_n": 128, "tile_k": 32, "num_warps": 4})
# and a persistent kernel: a block per multiprocessor looping over the tiles of C
_PERSISTENT_MATMUL_TILES = _MATMUL_TILES + (
    {"tile_m": 128, "tile_n": 256, "tile_k": 64, "num_warps": 8, "num_stages": 4,
     "persistent_blocks": "multiprocessors"},)
_TF32_TILES = ({"tile_m": 128, "tile_n": 256, "tile_k": 32, "num_warps": 8, "num_stages": 3},
               {"tile_m": 256, "tile_n": 128, "tile_k": 32, "num_warps": 8},
               {"tile_m": 128, "tile_n": 128, "tile_k": 16, "num_warps": 4})
_TRITON_MATMUL_TILES = (
    {"block_m": 128, "block_n": 256, "block_k": 64, "num_warps": 8, "num_stages": 3},
    {"block_m": 128, "block_n": 128, "block_k": 64, "num_warps": 4, "num_stages": 4},
    {"block_m": 128, "block_n": 128, "block_k": 64, "num_warps": 8, "num_stages": 3},
    {"block_m": 256, "block_n": 128, "block_k": 64, "num_warps": 8, "num_stages": 3})
_TRITON_TF32_TILES = (
    {"block_m": 128, "block_n": 128, "block_k": 32, "num_warps": 4, "num_stages": 3},
    {"block_m": 128, "block_n": 256, "block_k": 32, "num_warps": 8, "num_stages": 3})
_ATTENTION_TILES = {
    64: ({"tile_m": 128, "tile_n": 64, "num_warps": 8},
         {"tile_m": 128, "tile_n": 64, "num_warps": 8, "occupancy": 2},
         {"tile_m": 128, "tile_n": 64, "num_warps": 8, "pipelined": True}),
    128: ({"tile_m": 128, "tile_n": 64, "num_warps": 8, "pipelined": True},
          {"tile_m": 128, "tile_n": 64, "num_warps": 8, "num_stages": 3},
          {"tile_m": 128, "tile_n": 64, "num_warps": 8},
          {"tile_m": 128, "tile_n": 128, "num_warps": 8, "num_stages": 3,
           "warp_specialize": False},
          # a producer warpgroup that hands its registers to the two consumer warpgroups
          # (what these tiles get without the option: three stages, two warpgroups)
          {"tile_m": 128, "tile_n": 128, "num_warps": 8, "num_stages": 3,
           "warp_specialize": True},
          # the same as a persistent kernel: its producer loads a block's next rows while
          # the consumers finish the last ones
          {"tile_m": 128, "tile_n": 128, "num_warps": 8, "num_stages": 3,
           "warp_specialize": True, "persistent_blocks": "multiprocessors"})}
# tile sizes only: the kernel's options are its own (occupancy=2, warps and stages chosen;
# 128 x 128 tiles at head dim 128 leave room for one block a multiprocessor, so the hint
# does not halve their registers)
_DOCUMENTED_ATTENTION_TILES = ({"tile_m": 128, "tile_n": 64}, {"tile_m": 64, "tile_n": 64},
                               {"tile_m": 128, "tile_n": 128})
_TRITON_ATTENTION_TILES = (
    {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 3},
    {"block_m": 128, "block_n": 64, "num_warps": 8, "num_stages": 3},
    {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 3})
_ROW_PARAMS = ({"rows": 1}, {"rows": 1, "num_warps": 8}, {"rows": 2, "num_warps": 8},
               {"rows": 4, "num_warps": 16})
_TRITON_ROW_PARAMS = ({"num_warps": 8}, {"num_warps": 4}, {"num_warps": 16})


def _count(n):
    """``2**k`` for powers of two, else the number."""
    return f"2**{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def _random(torch, shape, dtype, generator):
    """Standard normal values (never zeros: they hide unwritten outputs) on the GPU."""
    return torch.randn(shape, generator=generator, device="cuda",
                       dtype=getattr(torch, dtype))


def _like_first(torch, inputs):
    """A NaN-filled output shaped like the first input."""
    return torch.full_like(inputs[0], float("nan"))


def _product_output(torch, inputs):
    """A NaN-filled output for ``inputs[0] @ inputs[1]`` (2-d or batched)."""
    a, b = inputs[:2]
    return torch.full((*a.shape[:-1], b.shape[-1]), float("nan"), dtype=a.dtype,
                      device="cuda")


def _row_vector(torch, inputs):
    """A NaN-filled float32 output with one element per row of the first input."""
    return torch.full(inputs[0].shape[:1], float("nan"), dtype=torch.float32, device="cuda")
