"""How each ``ct.mma`` runs on tensor cores, decided while typing (its result's layout is
part of its type) and followed by the lowering: ``mma.sync.aligned``
(:mod:`~numba_tile.compiler.lowering.mma_sync`) or, on sm_90, ``wgmma.mma_async``
(:mod:`~numba_tile.compiler.lowering.wgmma`), or neither (the general product of
:mod:`~numba_tile.compiler.lowering.matrix`).

``mma.sync`` takes ``m16n8k16`` steps for float16 and bfloat16, ``m16n8k8`` for tfloat32,
``m16n8k32`` for int8, uint8 and float8 (sm_89 and later), ``m8n8k4`` for float64. A product
qualifies when its operands are 2-d, or 3-d with a power-of-two batch (one product per batch
element), the input/accumulator pair is one of :data:`_MMA_SYNC_KINDS`, and its shape splits
into the instruction's steps. Its result then lives in the accumulator fragment layout
(:func:`~numba_tile.layouts.mma_accumulator`): the block's warps split M and N, and each
warp holds the 16 x 8 fragments (8 x 8 for float64) of its part, four registers each (two);
batch elements follow one another in the registers. A loop-carried accumulator takes that
layout once, before the loop. Float8 products need a GPU with float8 tensor cores
(``TileUnsupportedFeatureError`` before sm_89).

On sm_90 the products ``wgmma`` can run (:func:`runs_as_wgmma`) run so instead: four warps
(a warpgroup) issue one ``wgmma`` on a 64-row slice of the result, the block's warps split
M, and the operands are read from shared memory in the swizzles that the tensor memory
accelerator and ``wgmma`` know (A K-major, B N-major, but for tfloat32 and 8-bit inputs,
which ``wgmma`` reads K-major only: see :func:`swapped` and :func:`k_major_b`).

The plan depends on the GPU being compiled for (set by the compiler):

>>> import numba_tile as ct
>>> from numba_tile.compiler.types import TileType
>>> from numba_tile.compiler.planning.products import plan
>>> from numba_tile.compiler.compile_state import CompileState, compiling
>>> x = TileType(ct.float16, (64, 32), 4); y = TileType(ct.float16, (32, 64), 4)
>>> acc = TileType(ct.float32, (64, 64), 4)
>>> with compiling(CompileState(target=(8, 0))):
...     p = plan(x, y, acc)
>>> p.warps_m, p.warps_n, p.instruction
(2, 2, 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')
>>> with compiling(CompileState(target=(9, 0))):
...     plan(x, y, acc).instruction
'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16'
"""

from collections import namedtuple

from ... import dtypes as d
from ...errors import TileUnsupportedFeatureError
from ...layouts import LinearLayout, mma_accumulator
from ...rules.matrix import mma_operand_shapes
from ..compile_state import current
from ..types import TileType
from .staged_loads import StagedTileType

# float8 tensor cores came with compute capability 8.9 (Ada)
FLOAT8_CC = (8, 9)

Plan = namedtuple("Plan", "warps_m warps_n layout instruction")

# (input dtype, accumulator dtype) -> (the PTX types of d, a, b, c; the compute capability
# the instruction needs). float8 into float16 runs with a float32 accumulator, rounded to
# float16 once per product (as the interpreter does), never per step.
_MMA_SYNC_KINDS = {
    (d.float16, d.float32): ("f32.f16.f16.f32", (8, 0)),
    (d.float16, d.float16): ("f16.f16.f16.f16", (8, 0)),
    (d.bfloat16, d.float32): ("f32.bf16.bf16.f32", (8, 0)),
    (d.tfloat32, d.float32): ("f32.tf32.tf32.f32", (8, 0)),
    (d.float64, d.float64): ("f64.f64.f64.f64", (8, 0)),
    (d.int8, d.int32): ("s32.s8.s8.s32", (8, 0)),
    (d.uint8, d.int32): ("s32.u8.u8.s32", (8, 0)),
    (d.float8_e4m3fn, d.float32): ("f32.e4m3.e4m3.f32", FLOAT8_CC),
    (d.float8_e4m3fn, d.float16): ("f32.e4m3.e4m3.f32", FLOAT8_CC),
    (d.float8_e5m2, d.float32): ("f32.e5m2.e5m2.f32", FLOAT8_CC),
    (d.float8_e5m2, d.float16): ("f32.e5m2.e5m2.f32", FLOAT8_CC),
}

# int8 beside uint8 (cuTile mixes them; no other pair): (x dtype, y dtype, accumulator
# dtype) -> as _MMA_SYNC_KINDS
_MIXED_MMA_SYNC_KINDS = {(d.int8, d.uint8, d.int32): ("s32.s8.u8.s32", (8, 0)),
                         (d.uint8, d.int8, d.int32): ("s32.u8.s8.s32", (8, 0))}

# (input dtype, accumulator dtype) -> the PTX types of d, a, b
_WGMMA_KINDS = {(d.float16, d.float32): "f32.f16.f16",
                (d.bfloat16, d.float32): "f32.bf16.bf16",
                (d.tfloat32, d.float32): "f32.tf32.tf32",
                (d.float8_e4m3fn, d.float32): "f32.e4m3.e4m3",
                (d.float8_e5m2, d.float32): "f32.e5m2.e5m2",
                (d.int8, d.int32): "s32.s8.s8", (d.uint8, d.int32): "s32.u8.u8"}
STEP_BYTES = 32  # the depth of one wgmma: 16 two-byte or 8 four-byte elements


def fragment_shape(dtype):
    """``(m, n, k)`` of one ``mma.sync`` step for inputs of ``dtype``: 16 x 8 x 16 for 2-byte
    inputs, 16 x 8 x 8 for tfloat32, 16 x 8 x 32 for 1-byte ones, 8 x 8 x 4 for float64."""
    if dtype is d.float64:
        return 8, 8, 4
    return 16, 8, 32 // dtype.itemsize


def batch_broadcast(x_type, y_type):
    """The types of ``mma``'s operands with their batch axes broadcast
    (:func:`~numba_tile.rules.matrix.mma_operand_shapes`): the operands every lowering of
    the product works on. An operand in a pipelined load's stages is not broadcast yet."""
    x_shape, y_shape = mma_operand_shapes(x_type.shape, y_type.shape)

    def full(tile_type, shape):
        if tuple(tile_type.shape) == shape:
            return tile_type
        if isinstance(tile_type, StagedTileType):
            raise TileUnsupportedFeatureError(
                "mma() of a pipelined load's tile broadcast along the batch axis is not "
                "compiled yet; load it as a 3-d tile of the batch's size")
        return TileType(tile_type.dtype, shape, tile_type.num_warps)
    return full(x_type, x_shape), full(y_type, y_shape)


def plan(x_type, y_type, acc_type):
    """How ``mma(x, y, acc)`` runs on tensor cores, or None where it does not."""
    x_type, y_type = batch_broadcast(x_type, y_type)
    kind, needs = _MMA_SYNC_KINDS.get((x_type.dtype, acc_type.dtype), (None, None)) \
        if y_type.dtype is x_type.dtype else \
        _MIXED_MMA_SYNC_KINDS.get((x_type.dtype, y_type.dtype, acc_type.dtype), (None, None))
    if kind is None or current().target < needs or not _batched_matrices(x_type, y_type):
        return None
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    shape = acc_type.shape
    if runs_as_wgmma(x_type, y_type, acc_type):
        warps = acc_type.num_warps
        layout = swapped_layout(m, n, warps) if swapped(x_type, y_type) else \
            mma_accumulator((m, n), warps, 1)
        return Plan(warps, 1, lifted(layout, shape),
                    wgmma_instruction(x_type, y_type, acc_type))
    step_m, step_n, step_k = fragment_shape(x_type.dtype)
    if m % step_m or n % step_n or k % step_k:
        return None
    warps = acc_type.num_warps
    best = None
    for bits_m in range(warps.bit_length()):
        warps_m = 1 << bits_m
        warps_n = warps // warps_m
        # as many warps as the shape has fragments for; any others repeat their work
        while warps_n > 1 and n % (step_n * warps_n):
            warps_n //= 2
        if m % (step_m * warps_m) or warps_m * warps_n > warps:
            continue
        # prefer using every warp, then square parts of the result per warp
        score = (warps_m * warps_n, -abs((m // warps_m) - (n // warps_n)))
        if best is None or score > best[0]:
            best = (score, warps_m, warps_n)
    if best is None:
        return None
    _, warps_m, warps_n = best
    layout = lifted(_with_idle_warps(mma_accumulator((m, n), warps_m, warps_n, step_m),
                                     warps), shape)
    return Plan(warps_m, warps_n, layout,
                f"mma.sync.aligned.m{step_m}n{step_n}k{step_k}.row.col.{kind}")


# matmul on tensor cores: the accumulator of operands of each dtype (the result is rounded,
# or wrapped, to the operands' dtype once, at the end)
_MATMUL_ACCUMULATORS = {d.float16: d.float32, d.bfloat16: d.float32, d.float64: d.float64,
                        d.int8: d.int32, d.uint8: d.int32}


def matmul_accumulator(x_type, y_type, result_dtype):
    """The accumulator type with which ``matmul(x, y)`` (of ``result_dtype``) runs on tensor
    cores, where it does (operands of one dtype, which is the result's), else None."""
    accumulator = _MATMUL_ACCUMULATORS.get(x_type.dtype)
    if accumulator is None or y_type.dtype is not x_type.dtype or \
            result_dtype is not x_type.dtype or x_type.ndim != y_type.ndim:
        return None
    shape = x_type.shape[:-1] + y_type.shape[-1:]
    acc_type = TileType(accumulator, shape, x_type.num_warps)
    found = plan(x_type, y_type, acc_type)
    return None if found is None else TileType(accumulator, shape, x_type.num_warps,
                                               found.layout)


def check_target(x_type):
    """``TileUnsupportedFeatureError`` for a float8 product where the GPU compiled for has no
    float8 tensor cores (before compute capability 8.9)."""
    target = current().target
    if x_type.dtype.name.startswith("float8") and target < FLOAT8_CC:
        major, minor = target
        raise TileUnsupportedFeatureError(
            f"mma of {x_type.dtype.name} needs float8 tensor cores (compute capability "
            f"{FLOAT8_CC[0]}.{FLOAT8_CC[1]} or later); this kernel is compiled for "
            f"sm_{major}{minor}", needs=FLOAT8_CC)


def result_type(x_type, y_type, acc_type):
    """The type of ``mma(x, y, acc)``: the accumulator's, in the fragment layout where the
    product runs on tensor cores."""
    check_target(x_type)
    found = plan(x_type, y_type, acc_type)
    if found is None:
        return acc_type
    return TileType(acc_type.dtype, acc_type.shape, acc_type.num_warps, found.layout)


# -- wgmma ----------------------------------------------------------------------------------
def runs_as_wgmma(x_type, y_type, acc_type):
    """True where the product runs as ``wgmma`` (sm_90; float16/bfloat16, or tfloat32 tiles
    of a pipelined load, into float32; float8 into float32 and 8-bit integers into int32
    where B is K-major; whole warpgroups, shapes that fill its 64 x N x 32-byte steps
    and rows of 64 bytes or a multiple of 128 in shared memory)."""
    if current().target != (9, 0) or (x_type.dtype, acc_type.dtype) not in _WGMMA_KINDS or \
            not is_one_matrix(x_type, y_type) or y_type.dtype is not x_type.dtype:
        return False
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    warps = acc_type.num_warps
    itemsize = x_type.dtype.itemsize
    # the rows and columns of the wgmma's result: those of C, or of C^T (swapped)
    rows, columns = (n, m) if swapped(x_type, y_type) else (m, n)
    if not (warps % 4 == 0 and rows % (16 * warps) == 0 and
            (k * itemsize % 128 == 0 or k * itemsize == 64) and
            (columns <= 256 or columns % 256 == 0)):
        return False
    if swapped(x_type, y_type):  # every thread rounds the same number of chunks of A
        return m % 8 == 0 and k % 8 == 0 and (m * k // 4) % (32 * warps) == 0
    if x_type.dtype.itemsize == 4:
        # tiles of a pipelined load (float32 in their stages), B transposed there (else the
        # product is swapped): every thread rounds the same number of 16-byte chunks
        threads = 32 * warps
        return n % 8 == 0 and k % 16 == 0 and (m * k // 4) % threads == 0 and \
            (n * k // 4) % threads == 0 and not staged_transposed(x_type) and all(
                isinstance(t, StagedTileType) and t.stored in (d.float32, d.tfloat32)
                for t in (x_type, y_type))
    if itemsize == 1 and staged_transposed(x_type):  # (A^T: not read M-major)
        return False
    if staged_transposed(y_type):  # B^T in its stage: K-major, as A
        return n % 8 == 0
    # 1-byte inputs: wgmma reads B K-major only, which a pipelined load gives where it
    # reads B transposed (``order=(1, 0)`` of an (N, K) array); others run as mma.sync
    return itemsize == 2 and n * itemsize % 128 == 0


def swapped(x_type, y_type):
    """True where a tfloat32 product of two tiles of one pipelined load each, B N-major in
    its stage (rows of N, as the array holds them), runs as ``C^T = B^T A^T``: ``wgmma``
    reads tfloat32 operands K-major only, and so takes A^T (A's stage: rows of K) from
    shared memory, and B^T from registers, each thread reading its elements from B's stage
    (no transposed copy of B, no barrier). The result's layout is the wgmma fragment of C^T,
    transposed (:func:`swapped_layout`)."""
    return x_type.dtype.itemsize == 4 and all(
        isinstance(t, StagedTileType) and t.stored in (d.float32, d.tfloat32) and
        not staged_transposed(t) for t in (x_type, y_type))


def swapped_layout(m, n, warps):
    """The layout of C (``m x n``) that a swapped product (:func:`swapped`) leaves: the
    accumulator fragment of C^T (its rows over the warps), transposed."""
    return mma_accumulator((n, m), warps, 1).permute((1, 0))


def staged_transposed(tile_type):
    """True for a tile of a pipelined load stored transposed (``order=(1, 0)``)."""
    return getattr(tile_type, "transposed", False)


def k_major_b(x_type, y_type):
    """True where ``wgmma`` reads B K-major: 4-byte and 1-byte inputs, which it cannot read
    N-major (tfloat32's B transposed in its stage), or a B that a pipelined load left
    transposed."""
    return x_type.dtype.itemsize != 2 or staged_transposed(y_type)


def wgmma_instruction(x_type, y_type, acc_type, columns=256):
    """The ``wgmma`` instruction that computes the product (of C^T where it is
    :func:`swapped`) ``columns`` columns at a time at most."""
    n = min(x_type.shape[-2] if swapped(x_type, y_type) else y_type.shape[-1], columns)
    k = STEP_BYTES // x_type.dtype.itemsize
    kind = _WGMMA_KINDS[(x_type.dtype, acc_type.dtype)]
    return f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{kind}"


def is_one_matrix(x_type, y_type):
    """Both operands are one matrix each: 2-d, or 3-d with a batch of one (a block's slice
    of a batched product)."""
    return x_type.ndim == y_type.ndim and (x_type.ndim == 2 or (
        x_type.ndim == 3 and x_type.shape[0] == 1 and y_type.shape[0] == 1))


def _batched_matrices(x_type, y_type):
    """Both operands are 2-d, or 3-d with one batch extent, a power of two (each block's
    slice of a batched product): a matrix product per batch element."""
    if x_type.ndim != y_type.ndim or x_type.ndim not in (2, 3):
        return False
    batch = x_type.shape[0] if x_type.ndim == 3 else 1
    return batch == (y_type.shape[0] if y_type.ndim == 3 else 1) and batch & (batch - 1) == 0


def lifted(layout, shape):
    """A 2-d layout of one matrix as the layout of a tile of ``shape`` (2-d, or 3-d with
    a batch): each thread holds the same places of every batch element, in successive
    blocks of registers."""
    if len(shape) == 2:
        return layout
    bases = {dim: [(0,) + v for v in vectors] for dim, vectors in layout.bases.items()}
    batch = 1
    while batch < shape[0]:
        bases["register"].append((batch, 0, 0))
        batch <<= 1
    return LinearLayout(tuple(shape), bases)


def _with_idle_warps(layout, warps):
    """``layout`` over ``warps`` warps: warps beyond those it splits the tile over hold
    copies (their warp bits are zero vectors)."""
    bases = {dim: list(vectors) for dim, vectors in layout.bases.items()}
    while 1 << len(bases["warp"]) < warps:
        bases["warp"].append((0,) * len(layout.shape))
    return LinearLayout(layout.shape, bases)
