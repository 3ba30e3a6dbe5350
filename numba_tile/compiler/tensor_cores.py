"""``ct.mma`` on tensor cores: ``mma.sync.aligned.m16n8k16`` for float16 and bfloat16,
``m16n8k8`` for tfloat32.

A product qualifies when it is one matrix (2-d, or 3-d with a batch of one), its inputs are
float16 (float32 or float16 accumulator), bfloat16 or tfloat32 (float32 accumulator), and its
shape splits into 16 x 8 x 16 steps (16 x 8 x 8 for tfloat32). Its result then lives in the
accumulator fragment layout (:func:`~numba_tile.layouts.mma_accumulator`): the
block's warps split M and N, and each warp holds the 16 x 8 fragments of its part, four
registers each. A loop-carried accumulator takes that layout once, before the loop.

The operands go through shared memory, with 16-byte chunks swizzled (see
:func:`~numba_tile.compiler.tiles.swizzled_offset`) so that the fragment reads are free of bank
conflicts (operands that a pipelined load left there, :mod:`.staged_loads`, are read in place): ``ldmatrix.x4`` reads a 16 x 16 step of A, ``ldmatrix.x2.trans`` one of B, and one
``mma.sync`` per fragment and step follows. Other products use :mod:`.lower_matrix`'s general path.

On sm_90, :mod:`.warpgroup_mma` runs the products it can (``wgmma``) instead. The plan
depends on the GPU being compiled for (set by the compiler):

>>> import numba_tile as ct
>>> from numba_tile.compiler.types import TileType
>>> from numba_tile.compiler.tensor_cores import plan
>>> from numba_tile.compiler.tiles import TARGET
>>> x = TileType(ct.float16, (64, 32), 4); y = TileType(ct.float16, (32, 64), 4)
>>> acc = TileType(ct.float32, (64, 64), 4)
>>> TARGET["cc"] = (8, 0)
>>> p = plan(x, y, acc)
>>> p.warps_m, p.warps_n, p.instruction
(2, 2, 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')
>>> TARGET["cc"] = (9, 0)
>>> plan(x, y, acc).instruction
'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16'
"""

from collections import namedtuple

from llvmlite import ir

from .. import dtypes as d
from ..layouts import LinearLayout, mma_accumulator
from . import arithmetic, warpgroup_mma
from .tiles import I32, I8, gather_to_shared, make_tile, move_tile, swizzled_offset, \
    thread_ids
from .types import TileType

F32 = ir.FloatType()
I16 = ir.IntType(16)

Plan = namedtuple("Plan", "warps_m warps_n layout instruction")

# (input dtype, accumulator dtype) -> the PTX types of d, a, b, c
_KINDS = {
    (d.float16, d.float32): "f32.f16.f16.f32",
    (d.float16, d.float16): "f16.f16.f16.f16",
    (d.bfloat16, d.float32): "f32.bf16.bf16.f32",
    (d.tfloat32, d.float32): "f32.tf32.tf32.f32",
}


def _depth(dtype):
    """The k of one ``mma.sync`` step: 16 for 2-byte inputs, 8 for tfloat32."""
    return 32 // dtype.itemsize


def plan(x_type, y_type, acc_type):
    """How ``mma(x, y, acc)`` runs on tensor cores, or None where it does not."""
    kind = _KINDS.get((x_type.dtype, acc_type.dtype))
    if kind is None or not is_one_matrix(x_type, y_type) or y_type.dtype is not x_type.dtype:
        return None
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    rank = x_type.ndim
    if warpgroup_mma.applies(x_type, y_type, acc_type):
        warps = acc_type.num_warps
        return Plan(warps, 1, _lifted(mma_accumulator((m, n), warps, 1), rank),
                    warpgroup_mma.instruction(x_type, y_type, acc_type))
    if m % 16 or n % 8 or k % _depth(x_type.dtype):
        return None
    warps = acc_type.num_warps
    best = None
    for bits_m in range(warps.bit_length()):
        warps_m = 1 << bits_m
        warps_n = warps // warps_m
        # as many warps as the shape has fragments for; any others repeat their work
        while warps_n > 1 and n % (8 * warps_n):
            warps_n //= 2
        if m % (16 * warps_m) or warps_m * warps_n > warps:
            continue
        # prefer using every warp, then square parts of the result per warp
        score = (warps_m * warps_n, -abs((m // warps_m) - (n // warps_n)))
        if best is None or score > best[0]:
            best = (score, warps_m, warps_n)
    if best is None:
        return None
    _, warps_m, warps_n = best
    layout = _lifted(_with_idle_warps(mma_accumulator((m, n), warps_m, warps_n), warps), rank)
    return Plan(warps_m, warps_n, layout,
                f"mma.sync.aligned.m16n8k{_depth(x_type.dtype)}.row.col.{kind}")


def is_one_matrix(x_type, y_type):
    """Both operands are one matrix each: 2-d, or 3-d with a batch of one (a block's slice
    of a batched product)."""
    return x_type.ndim == y_type.ndim and (x_type.ndim == 2 or (
        x_type.ndim == 3 and x_type.shape[0] == 1 and y_type.shape[0] == 1))


def _lifted(layout, rank):
    """A 2-d layout as the layout of a ``(1, m, n)`` tile where ``rank`` is 3."""
    if rank == 2:
        return layout
    lead = (0,) * (rank - 2)
    return LinearLayout((1,) * (rank - 2) + layout.shape, {
        dim: [lead + v for v in vectors] for dim, vectors in layout.bases.items()})


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
    found = plan(x_type, y_type, acc_type)
    if found is None:
        return acc_type
    return TileType(acc_type.dtype, acc_type.shape, acc_type.num_warps, found.layout)


def lower_mma(context, builder, found, x_type, x, y_type, y, acc_type, acc, result):
    """The accumulator registers of ``mma(x, y, acc)`` by ``mma.sync``."""
    if acc_type.layout != result.layout:
        acc = move_tile(context, builder, acc_type, acc, result.with_dtype(acc_type.dtype))
    a_pointer, b_pointer = operand_pointers(context, builder, [(x_type, x), (y_type, y)])
    k = x_type.shape[-1]
    lane, warp = thread_ids(builder)
    warp_m = builder.and_(warp, I32(found.warps_m - 1))
    warp_n = builder.and_(builder.lshr(warp, I32(found.warps_m.bit_length() - 1)),
                          I32(found.warps_n - 1))
    # ldmatrix: lane t gives the address of row t % 8 of matrix t // 8
    row_in = builder.and_(lane, I32(7))
    matrix_index = builder.lshr(lane, I32(3))
    a_row = builder.add(builder.add(builder.mul(warp_m, I32(16)), row_in),
                        builder.mul(builder.and_(matrix_index, I32(1)), I32(8)))
    # matrices 2 and 3 of A start 16 bytes to the right (8 halves or 4 tfloat32)
    a_col = builder.mul(builder.lshr(matrix_index, I32(1)), I32(16 // x_type.dtype.itemsize))
    b_row = builder.add(row_in, builder.mul(builder.and_(matrix_index, I32(1)), I32(8)))
    b_col = builder.mul(warp_n, I32(8))
    layout = result.layout
    fragments = [layout.apply(register=4 * f)[-2:] for f in range(result.registers // 4)]
    registers = [builder.extract_value(acc, r) for r in range(result.registers)]
    half_accumulator = acc_type.dtype is d.float16

    def address(pointer, row, column, tile_type):
        itemsize = tile_type.dtype.itemsize
        index = swizzled_offset(builder, row, column, tile_type.shape[-2:], itemsize)
        return builder.ptrtoint(builder.gep(pointer, [builder.mul(index, I32(itemsize))]),
                                ir.IntType(64))

    def a_fragment(row0, step):
        pointer = address(a_pointer, builder.add(a_row, I32(row0)),
                          builder.add(a_col, I32(step)), x_type)
        return _ldmatrix(builder, "x4", pointer)

    def b_fragment(col0, step):
        if wide:  # tfloat32: b0, b1 are (k, n) = (t, g) and (t + 4, g) of the step
            group, quad = builder.lshr(lane, I32(2)), builder.and_(lane, I32(3))
            column = builder.add(builder.add(b_col, I32(col0)), group)
            words = []
            for extra in (0, 4):
                row = builder.add(quad, I32(step + extra))
                pointer = builder.inttoptr(address(b_pointer, row, column, y_type),
                                           I32.as_pointer(3))
                words.append(builder.load(pointer))
            return words
        pointer = address(b_pointer, builder.add(b_row, I32(step)),
                          builder.add(b_col, I32(col0)), y_type)
        return _ldmatrix(builder, "x2.trans", pointer)

    # ldmatrix.trans moves 2-byte elements: B of 4-byte ones is read element by element
    wide = x_type.dtype.itemsize == 4
    for step in range(0, k, _depth(x_type.dtype)):
        a_cache, b_cache = {}, {}
        for f, (row0, col0) in enumerate(fragments):
            if row0 not in a_cache:
                a_cache[row0] = a_fragment(row0, step)
            if col0 not in b_cache:
                b_cache[col0] = b_fragment(col0, step)
            c = registers[4 * f:4 * f + 4]
            registers[4 * f:4 * f + 4] = _mma(builder, found.instruction, a_cache[row0],
                                              b_cache[col0], c, half_accumulator)
    return make_tile(context, builder, result, registers)


def operand_pointers(context, builder, operands, async_proxy=False):
    """Byte pointers to each ``(type, value)`` operand's swizzled copy in shared memory: a
    staged tile is there already; tiles in registers are written to the scratch buffer
    (visible to the tensor cores' own reads, ``wgmma``, with ``async_proxy``)."""
    from .staged_loads import StagedTileType
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
    outputs = ",".join(f"${i}" for i in range(count))
    text = f"ldmatrix.sync.aligned.m8n8.{shape}.shared.b16 {{{outputs}}}, [${count}];"
    result_type = ir.LiteralStructType([I32] * count)
    # it reads shared memory: without the side effect and the memory clobber, LLVM would be
    # free to move it above the barrier that follows the stores it must see
    out = builder.asm(ir.FunctionType(result_type, [address.type]), text,
                      ",".join(["=r"] * count) + ",l,~{memory}", [address], side_effect=True)
    return [builder.extract_value(out, i) for i in range(count)]


def _mma(builder, instruction, a, b, c, half_accumulator):
    """One ``mma.sync``: four accumulator values in, four out."""
    if half_accumulator:  # c and d are two registers of two halves each
        packed = [builder.or_(builder.zext(c[i], I32), builder.shl(builder.zext(c[i + 1], I32),
                                                                   I32(16))) for i in (0, 2)]
        text = f"{instruction} {{$0,$1}}, {{$2,$3,$4,$5}}, {{$6,$7}}, {{$8,$9}};"
        out = arithmetic._asm(builder, ir.LiteralStructType([I32, I32]), text,
                              "=r,=r," + ",".join(["r"] * 8), a + b + packed)
        words = [builder.extract_value(out, i) for i in range(2)]
        return [builder.trunc(words[0], I16), builder.trunc(builder.lshr(words[0], I32(16)), I16),
                builder.trunc(words[1], I16), builder.trunc(builder.lshr(words[1], I32(16)), I16)]
    text = f"{instruction} {{$0,$1,$2,$3}}, {{$4,$5,$6,$7}}, {{$8,$9}}, {{$10,$11,$12,$13}};"
    out = arithmetic._asm(builder, ir.LiteralStructType([F32] * 4), text,
                          "=f,=f,=f,=f," + ",".join(["r"] * 6 + ["f"] * 4), a + b + list(c))
    return [builder.extract_value(out, i) for i in range(4)]
