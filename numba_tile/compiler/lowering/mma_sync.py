"""``ct.mma`` on tensor cores with ``mma.sync.aligned``, as
:mod:`~numba_tile.compiler.planning.products` planned it: the result in the accumulator
fragment layout, the block's warps splitting M and N.

The operands go through shared memory, with 16-byte chunks swizzled (see
:func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`) so that the fragment reads are
free of bank conflicts (operands that a pipelined load left there,
:mod:`~numba_tile.compiler.planning.staged_loads`, are read in place): ``ldmatrix.x4`` reads
a step of A (its 16 rows of 32 bytes), ``ldmatrix.x2.trans`` one of B for 2-byte inputs; B of
other sizes, and float64's A, are read element by element. One ``mma.sync`` per fragment and
step follows. Other products use :mod:`~numba_tile.compiler.lowering.matrix`'s general path
(exact, any shape and pair); on sm_90, :mod:`~numba_tile.compiler.lowering.wgmma` runs those
it can.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def product(a, b, c):
...     acc = ct.zeros((64, 64), ct.float32)
...     ct.store(c, (0, 0), ct.mma(ct.load(a, (0, 0), (64, 32)), ct.load(b, (0, 0), (32, 64)), acc))
>>> a, b = np.zeros((64, 32), np.float16), np.zeros((32, 64), np.float16)
>>> ptx = ct.compile(product, (a, b, np.zeros((64, 64), np.float32)), arch="sm_80").ptx
>>> "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx, "mma.sync.aligned.m16n8k16" in ptx
(True, True)
"""

from llvmlite import ir

from ... import dtypes as d
from ..planning.products import fragment_shape
from ..planning.staged_loads import StagedTileType
from . import arithmetic, asm
from .tiles import I32, I8, gather_to_shared, make_tile, move_tile, swizzled_offset, thread_ids

F32 = ir.FloatType()
F64 = ir.DoubleType()
I16 = ir.IntType(16)


def promotes(x_type, fast_accumulation):
    """True where a product's sums are added to the accumulator by the threads, in float32,
    after each call's tensor-core instructions: float8 inputs without ``use_fast_acc``
    (Hopper's tensor cores keep fewer bits in a float8 product's running sum: added there
    over K = 8192, the relative error is 2e-3; added per call of 64 or 128 deep, 1.5e-4, as
    cuBLASLt's default).

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.types import ArrayType
    >>> from numba_tile.compiler.lowering.mma_sync import promotes
    >>> promotes(ArrayType(ct.float8_e4m3fn, 2), False), promotes(ArrayType(ct.float16, 2), False)
    (True, False)
    """
    return x_type.dtype in (d.float8_e4m3fn, d.float8_e5m2) and not fast_accumulation


def lower_mma(context, builder, found, x_type, x, y_type, y, acc_type, acc, result,
              fast_accumulation=False):
    """The accumulator registers of ``mma(x, y, acc)`` by ``mma.sync`` (float8 products
    added to ``acc`` by the threads, see :func:`promotes`, unless ``fast_accumulation``)."""
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

    promoted = promotes(x_type, fast_accumulation) and kind == "f32"
    running = registers
    if promoted:  # the call's sums start at zero; the threads add them at the end
        registers = [ir.Constant(F32, 0.0)] * len(registers)
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
    if promoted:
        registers = [builder.fadd(r, s) for r, s in zip(running, registers)]
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
