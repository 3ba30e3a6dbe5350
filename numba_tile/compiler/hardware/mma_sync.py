"""``ct.mma`` on tensor cores with ``mma.sync.aligned``: ``m16n8k16`` for float16 and
bfloat16, ``m16n8k8`` for tfloat32, ``m16n8k32`` for int8, uint8 and float8 (sm_89 and later),
``m8n8k4`` for float64.

A product qualifies when its operands are 2-d, or 3-d with a power-of-two batch (one product
per batch element), the input/accumulator pair is one of :data:`_KINDS`, and its shape splits
into the instruction's steps. Its result then lives in the accumulator fragment layout
(:func:`~numba_tile.layouts.mma_accumulator`): the block's warps split M and N, and each
warp holds the 16 x 8 fragments (8 x 8 for float64) of its part, four registers each (two);
batch elements follow one another in the registers. A loop-carried accumulator takes that
layout once, before the loop.

The operands go through shared memory, with 16-byte chunks swizzled (see
:func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`) so that the fragment reads are free of bank
conflicts (operands that a pipelined load left there, :mod:`~numba_tile.compiler.hardware.staged_loads`, are read in
place): ``ldmatrix.x4`` reads a step of A (its 16 rows of 32 bytes), ``ldmatrix.x2.trans`` one
of B for 2-byte inputs; B of other sizes, and float64's A, are read element by element. One
``mma.sync`` per fragment and step follows. Other products use :mod:`~numba_tile.compiler.lowering.matrix`'s general
path (exact, any shape and pair), except that float8 products need a GPU with float8 tensor
cores (``TileUnsupportedFeatureError`` before sm_89).

On sm_90, :mod:`~numba_tile.compiler.hardware.wgmma` runs the products it can (``wgmma``) instead. The plan
depends on the GPU being compiled for (set by the compiler):

>>> import numba_tile as ct
>>> from numba_tile.compiler.types import TileType
>>> from numba_tile.compiler.hardware.mma_sync import plan
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
from llvmlite import ir

from ... import dtypes as d
from ...errors import TileUnsupportedFeatureError
from ...layouts import LinearLayout, mma_accumulator
from ...rules.matrix import mma_operand_shapes
from ..compile_state import current
from ..lowering import arithmetic
from ..lowering.tiles import I32, I8, gather_to_shared, make_tile, move_tile, swizzled_offset, \
    thread_ids
from ..types import TileType
from . import asm, wgmma
from .staged_loads import StagedTileType

F32 = ir.FloatType()
F64 = ir.DoubleType()
I16 = ir.IntType(16)

# float8 tensor cores came with compute capability 8.9 (Ada)
FLOAT8_CC = (8, 9)

Plan = namedtuple("Plan", "warps_m warps_n layout instruction")

# (input dtype, accumulator dtype) -> (the PTX types of d, a, b, c; the compute capability
# the instruction needs). float8 into float16 runs with a float32 accumulator, rounded to
# float16 once per product (as the interpreter does), never per step.
_KINDS = {
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
    kind, needs = _KINDS.get((x_type.dtype, acc_type.dtype), (None, None))
    if kind is None or current().target < needs or not _batched_matrices(x_type, y_type) or \
            y_type.dtype is not x_type.dtype:
        return None
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    shape = acc_type.shape
    if wgmma.applies(x_type, y_type, acc_type):
        warps = acc_type.num_warps
        layout = wgmma.swapped_layout(m, n, warps) if wgmma.swapped(x_type, y_type) else \
            mma_accumulator((m, n), warps, 1)
        return Plan(warps, 1, _lifted(layout, shape),
                    wgmma.instruction(x_type, y_type, acc_type))
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
    layout = _lifted(_with_idle_warps(mma_accumulator((m, n), warps_m, warps_n, step_m),
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


def _lifted(layout, shape):
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


def result_type(x_type, y_type, acc_type):
    """The type of ``mma(x, y, acc)``: the accumulator's, in the fragment layout where the
    product runs on tensor cores."""
    check_target(x_type)
    found = plan(x_type, y_type, acc_type)
    if found is None:
        return acc_type
    return TileType(acc_type.dtype, acc_type.shape, acc_type.num_warps, found.layout)


def lower_mma(context, builder, found, x_type, x, y_type, y, acc_type, acc, result):
    """The accumulator registers of ``mma(x, y, acc)`` by ``mma.sync``."""
    if acc_type.layout != result.layout:
        acc = move_tile(context, builder, acc_type, acc, result.with_dtype(acc_type.dtype))
    a_pointers, b_pointers = operand_pointers(context, builder, [(x_type, x), (y_type, y)])
    dtype = x_type.dtype
    step_m, step_n, step_k = fragment_shape(dtype)
    per_fragment = step_m * step_n // 32  # accumulator registers of a lane
    k = x_type.shape[-1]
    lane, warp = thread_ids(builder)
    group, quad = builder.lshr(lane, I32(2)), builder.and_(lane, I32(3))
    warp_m = builder.and_(warp, I32(found.warps_m - 1))
    warp_n = builder.and_(builder.lshr(warp, I32(found.warps_m.bit_length() - 1)),
                          I32(found.warps_n - 1))
    # ldmatrix: lane t gives the address of row t % 8 of matrix t // 8
    row_in = builder.and_(lane, I32(7))
    matrix_index = builder.lshr(lane, I32(3))
    a_row = builder.add(builder.mul(warp_m, I32(step_m)), row_in)
    if step_m == 16:  # matrices 1 and 3 of A are its rows 8 to 15
        a_row = builder.add(a_row, builder.mul(builder.and_(matrix_index, I32(1)), I32(8)))
    # matrices 2 and 3 of A start 16 bytes to the right
    a_col = builder.mul(builder.lshr(matrix_index, I32(1)), I32(16 // dtype.itemsize))
    b_row = builder.add(row_in, builder.mul(builder.and_(matrix_index, I32(1)), I32(8)))
    b_col = builder.mul(warp_n, I32(step_n))
    # a transposed B: lane t's row of B^T is column b_col + t % 8 of B, at K 8 (t // 8 % 2)
    b_n_in_block = builder.add(b_col, row_in)
    b_k_in_block = builder.mul(builder.and_(matrix_index, I32(1)), I32(8))
    layout = result.layout
    # (batch element, first row, first column) of each fragment the lane holds
    fragments = [(layout.apply(register=per_fragment * f) if result.ndim == 3 else
                  (0, *layout.apply(register=per_fragment * f)))
                 for f in range(result.registers // per_fragment)]
    registers = [builder.extract_value(acc, r) for r in range(result.registers)]
    kind = found.instruction.rsplit(".", 4)[1]  # the PTX type of d
    if kind == "f32" and acc_type.dtype is not d.float32:  # float8 into float16
        registers = [arithmetic.convert(context, builder, r, acc_type.dtype, d.float32)
                     for r in registers]

    def element(pointer, row, column, tile_type, value_type):
        """The place of the tile's ``(row, column)`` (of a staged tile: stored transposed,
        or not)."""
        shape = tile_type.shape[-2:]
        if getattr(tile_type, "transposed", False):
            row, column, shape = column, row, tile_type.stored_shape[-2:]
        index = swizzled_offset(builder, row, column, shape, tile_type.dtype.itemsize)
        place = builder.gep(pointer, [builder.mul(index, I32(tile_type.dtype.itemsize))])
        return builder.bitcast(place, value_type.as_pointer(3))

    def rounded(words, tile_type):
        """Fragment registers of tfloat32 operands that wait in their stage as float32,
        rounded to tfloat32 (the tensor cores would drop the low bits instead)."""
        if getattr(tile_type, "stored", dtype) is dtype:
            return words
        return [builder.bitcast(arithmetic.convert(context, builder, builder.bitcast(w, F32),
                                                   d.float32, dtype), I32) for w in words]

    def matrix(pointer, tile_type, batch):
        """The byte pointer to batch element ``batch`` of an operand (staged tiles are one
        matrix)."""
        rows, columns = tile_type.shape[-2:]
        return builder.gep(pointer, [I32(batch * rows * columns * tile_type.dtype.itemsize)])

    def a_fragment(batch, row0, step):
        a_pointer = matrix(a_pointers, x_type, batch)
        if dtype is d.float64:  # a0 is (m, k) = (g, t) of the step
            row = builder.add(builder.mul(warp_m, I32(step_m)), builder.add(group, I32(row0)))
            return [_load_shared(builder, element(a_pointer, row, builder.add(quad, I32(step)),
                                                  x_type, F64))]
        pointer = element(a_pointer, builder.add(a_row, I32(row0)),
                          builder.add(a_col, I32(step)), x_type, I8)
        return rounded(_ldmatrix(builder, "x4", builder.ptrtoint(pointer, ir.IntType(64))),
                       x_type)

    def b_fragment(batch, col0, step):
        b_pointer = matrix(b_pointers, y_type, batch)
        column = builder.add(builder.add(b_col, I32(col0)), group)
        if dtype.itemsize == 2 and getattr(y_type, "transposed", False):
            # B^T in its stage, rows of K: lane t gives row t % 8 (of N) of the 8 x 8 block
            # of B^T at K step + 8 (t // 8 % 2), read as it lies
            pointer = element(b_pointer, builder.add(b_k_in_block, I32(step)),
                              builder.add(b_n_in_block, I32(col0)), y_type, I8)
            return _ldmatrix(builder, "x2", builder.ptrtoint(pointer, ir.IntType(64)))
        if dtype.itemsize == 2:
            pointer = element(b_pointer, builder.add(b_row, I32(step)),
                              builder.add(b_col, I32(col0)), y_type, I8)
            return _ldmatrix(builder, "x2.trans", builder.ptrtoint(pointer, ir.IntType(64)))
        # ldmatrix.trans moves 2-byte elements: B of other sizes is read element by element
        if dtype is d.float64:  # b0 is (k, n) = (t, g) of the step
            return [_load_shared(builder, element(b_pointer, builder.add(quad, I32(step)),
                                                  column, y_type, F64))]
        if dtype.itemsize == 4:  # tfloat32: b0, b1 are (t, g) and (t + 4, g)
            return rounded([_load_shared(builder, element(
                b_pointer, builder.add(quad, I32(step + e)), column, y_type, I32))
                for e in (0, 4)], y_type)
        # 1-byte inputs: b0 holds (4t .. 4t + 3, g), b1 the same 16 rows further down
        words = []
        for extra in (0, 16):
            first = builder.add(builder.mul(quad, I32(4)), I32(step + extra))
            word = I32(0)
            for byte in range(4):
                value = _load_shared(builder, element(b_pointer, builder.add(first, I32(byte)),
                                                      column, y_type, I8))
                word = builder.or_(word, builder.shl(value, I32(8 * byte)))
            words.append(word)
        return words

    for step in range(0, k, step_k):
        a_cache, b_cache = {}, {}
        for f, (batch, row0, col0) in enumerate(fragments):
            if (batch, row0) not in a_cache:
                a_cache[batch, row0] = a_fragment(batch, row0, step)
            if (batch, col0) not in b_cache:
                b_cache[batch, col0] = b_fragment(batch, col0, step)
            c = slice(per_fragment * f, per_fragment * (f + 1))
            registers[c] = _mma(builder, found.instruction, kind, a_cache[batch, row0],
                                b_cache[batch, col0], registers[c])
    if kind == "f32" and acc_type.dtype is not d.float32:
        registers = [arithmetic.convert(context, builder, r, d.float32, acc_type.dtype)
                     for r in registers]
    return make_tile(context, builder, result, registers)


def operand_pointers(context, builder, operands, async_proxy=False):
    """Byte pointers to each ``(type, value)`` operand's swizzled copy in shared memory: a
    staged tile is there already; tiles in registers are written to the scratch buffer
    (visible to the tensor cores' own reads, ``wgmma``, with ``async_proxy``)."""
    in_registers = [(t, v) for t, v in operands if not isinstance(t, StagedTileType)]
    written = iter(gather_to_shared(context, builder, in_registers, swizzle=True,
                                    async_proxy=async_proxy) if in_registers else ())
    return [value if isinstance(tile_type, StagedTileType) else
            builder.bitcast(next(written), I8.as_pointer(3)) for tile_type, value in operands]


def _ldmatrix(builder, shape, address):
    """``ldmatrix.sync.aligned.m8n8.<shape>.shared.b16``: the registers of 2 or 4 8 x 8
    matrices of 2-byte elements (each register two elements of one row, or of one column with
    ``.trans``)."""
    count = 4 if shape.startswith("x4") else 2
    # it reads shared memory: without the side effect and the memory clobber, LLVM would be
    # free to move it above the barrier that follows the stores it must see
    out = asm.emit(builder, asm.ldmatrix(shape), [address], ir.LiteralStructType([I32] * count))
    return [builder.extract_value(out, i) for i in range(count)]


def _load_shared(builder, pointer):
    """One element from shared memory (a byte comes zero-extended to 32 bits). As with
    ``ldmatrix``, the read is kept in program order: LLVM would otherwise hoist the reads
    of every k-step above the first product, far more registers than there are."""
    element = pointer.type.pointee
    ptx, result, letter = {8: ("u8", I32, "r"), 32: ("b32", I32, "r"),
                           64: ("f64", F64, "d")}[element.width if isinstance(
                               element, ir.IntType) else 64]
    address = builder.ptrtoint(pointer, ir.IntType(64))
    return asm.emit(builder, asm.load_shared(ptx, letter), [address], result)


def _mma(builder, instruction, kind, a, b, c):
    """One ``mma.sync``: the lane's accumulator values of one fragment in, and out. ``kind``
    is the PTX type of the accumulator: ``f32``, ``s32``, ``f64`` or ``f16`` (whose values
    travel two to a register)."""
    if kind == "f16":
        packed = [builder.or_(builder.zext(c[i], I32), builder.shl(builder.zext(c[i + 1], I32),
                                                                   I32(16))) for i in (0, 2)]
        words = _mma_asm(builder, instruction, a, b, packed, I32, "r")
        return [builder.trunc(words[0], I16), builder.trunc(builder.lshr(words[0], I32(16)), I16),
                builder.trunc(words[1], I16), builder.trunc(builder.lshr(words[1], I32(16)), I16)]
    value_type, letter = {"f32": (F32, "f"), "s32": (I32, "r"), "f64": (F64, "d")}[kind]
    return _mma_asm(builder, instruction, a, b, list(c), value_type, letter)


def _mma_asm(builder, instruction, a, b, c, value_type, letter):
    """The inline assembly of one ``mma.sync`` with accumulator registers ``c`` of
    ``value_type`` (constraint ``letter``); the results, as many as ``c``."""
    out = asm.emit(builder, asm.mma_sync(instruction, len(a), len(b), len(c), letter), a + b + c,
                   ir.LiteralStructType([value_type] * len(c)))
    return [builder.extract_value(out, i) for i in range(len(c))]
