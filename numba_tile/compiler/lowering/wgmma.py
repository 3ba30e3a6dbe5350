"""``ct.mma`` on Hopper (sm_90a): ``wgmma.mma_async``, operands read by the tensor cores
straight from shared memory.

Four warps (a warpgroup) issue one ``wgmma`` on a 64-row slice of the result together. The
block's warps split M in slices of 16 rows, as the ``mma.sync`` accumulator layout
:func:`~numba_tile.layouts.mma_accumulator` with all warps along M lays them out: warp ``w``
holds rows ``16 w + 16 W i`` (``W`` warps, ``i`` counting the row slices it repeats over),
so warpgroup ``g`` works on the 64-row slices starting at ``64 g + 16 W i``, each a few
``wgmma`` of ``N <= 256`` columns and 16 of depth. A thread's registers of one slice are
that of ``wgmma``'s result fragment in order.

The operands are in shared memory in the swizzles both the tensor memory accelerator and
``wgmma`` know (:func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`): A is K-major
(rows of K: 64 bytes, or a multiple of 128), B is N-major (rows of N, a multiple of 128
bytes: the "transposed" B of ``wgmma``), except for tfloat32 and 8-bit inputs, which
``wgmma`` reads K-major only: the float32 tiles of a pipelined load are rounded in their
stages (unless the TMA rounded them as it copied), and a product whose B is N-major there
runs as ``C^T = B^T A^T``, B^T read into registers
(:func:`~numba_tile.compiler.planning.products.swapped`); float8 and 8-bit integer
products run as ``wgmma`` where a pipelined load gives B transposed (an ``(N, K)`` array
loaded with ``order=(1, 0)``, as cuBLASLt takes 8-bit B), else as ``mma.sync``. A matrix
descriptor gives the tensor cores each operand's start and strides. Writes by threads
(``st.shared``, ``cp.async``) become visible to them through ``fence.proxy.async`` and a
barrier. Which products run so, and the layout of their results, is planned in
:mod:`~numba_tile.compiler.planning.products`.
"""

from llvmlite import ir
from numba.cuda import nvvmutils

from ... import dtypes as d
from ...layouts import mma_accumulator
from ..compile_state import current
from ..planning.products import STEP_BYTES, k_major_b, lifted, staged_transposed, swapped, \
    wgmma_instruction
from ..planning.staged_loads import StagedTileType
from . import asm
from .mma_sync import operand_pointers, promotes
from .narrow_floats import from_float32
from .tiles import I32, I64, barrier, fence_async_proxy, make_tile, move_tile, \
    swizzled_offset, thread_ids

F32 = ir.FloatType()
I16 = ir.IntType(16)

PROMOTED_COLUMNS = 128  # the largest N of a float8 product whose sums the threads add
SWIZZLE_128B, SWIZZLE_64B = 1, 2  # the descriptor's layout types
ATOM_BYTES = 1024  # eight rows of 128 bytes: where the swizzle pattern repeats


class _KMajor:
    """Where a K-major operand of ``k``-deep rows of ``itemsize``-byte elements lies in
    shared memory: rows of 128 bytes or more are cut into 128-byte columns stored one after
    the other (128-byte swizzle); rows of 64 bytes are stored whole (64-byte swizzle, eight
    rows of 64 bytes to an atom)."""

    def __init__(self, k, itemsize):
        self.itemsize = itemsize
        self.row_bytes = min(k * itemsize, 128)
        self.swizzle, self.atom = (SWIZZLE_128B, ATOM_BYTES) if self.row_bytes == 128 else \
            (SWIZZLE_64B, ATOM_BYTES // 2)
        self.row_elements = self.row_bytes // itemsize

    def offset(self, row, column, rows):
        """The byte offset of ``(row, column)`` (a step's first column) in an operand of
        ``rows`` rows."""
        return (column // self.row_elements) * rows * self.row_bytes + \
            row * self.row_bytes + (column % self.row_elements) * self.itemsize

    def descriptor(self, builder, start, offset):
        """The matrix descriptor of the step that starts ``offset`` bytes past the address
        whose start field is ``start`` (:func:`_descriptor_start`)."""
        return _descriptor(builder, start, offset, 16, self.atom, self.swizzle)


def _done(context, builder, x_type, y_type, result, registers, deferred):
    """The result of a product's ``wgmma``s once committed: waited for at once, or, where
    its operands stay in their pipeline's stage until the next iteration's copies start
    (after a barrier), once the next product has started (the loop ends by waiting for it),
    or not here where ``deferred``. Otherwise the operands' shared memory may be written
    again once the barrier that follows passes."""
    asm.emit(builder, asm.WGMMA_COMMIT)
    if not deferred:
        asm.emit(builder, asm.wgmma_wait(1 if _runs_on(x_type, y_type) else 0))
    return make_tile(context, builder, result, registers)


def _runs_on(x_type, y_type):
    """True where the product of ``x_type`` and ``y_type`` runs on into the next iteration
    (operands of one pipeline whose products do, see
    :mod:`~numba_tile.compiler.frontend.products_in_flight`)."""
    return isinstance(x_type, StagedTileType) and isinstance(y_type, StagedTileType) \
        and x_type.pipeline_id == y_type.pipeline_id \
        and x_type.pipeline_id in current().products_in_flight


def lower_wgmma(context, builder, found, x_type, x, y_type, y, acc_type, acc, result,
                deferred=False, fast_accumulation=False):
    """The accumulator registers of ``mma(x, y, acc)`` by ``wgmma``; ``deferred`` (a
    product of :mod:`~numba_tile.compiler.frontend.deferred_products`): not waited for
    where it can run on; ``fast_accumulation``: ``use_fast_acc`` (see :func:`promotes`)."""
    if acc_type.layout != result.layout:
        acc = move_tile(context, builder, acc_type, acc, result.with_dtype(acc_type.dtype))
    if swapped(x_type, y_type):
        return _lower_swapped(context, builder, x_type, x, y_type, y, acc_type, acc, result,
                              deferred)
    transposed = k_major_b(x_type, y_type)
    a_words = _registers_as_a(builder, x_type, x, result.num_warps)
    if x_type.dtype.itemsize == 4:
        a_pointer, b_pointer = _tfloat32_operands(context, builder, x_type, x, y_type, y)
    elif a_words is not None:  # A stays in registers: only B goes to shared memory
        b_pointer, = operand_pointers(context, builder, [(y_type, y)], async_proxy=True)
        a_pointer = b_pointer  # (not read)
    else:
        a_pointer, b_pointer = operand_pointers(context, builder, [(x_type, x), (y_type, y)],
                                                async_proxy=True)
    # an operand from registers is read from the scratch buffer, which the next op may
    # write: such a product is waited for at once
    deferred = deferred and isinstance(y_type, StagedTileType) and (
        a_words is not None or isinstance(x_type, StagedTileType))
    promoted = promotes(x_type, fast_accumulation)  # (then waited for, and added, at once)
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    warps = result.num_warps
    itemsize = x_type.dtype.itemsize
    # a wgmma's N; where promoted, at most 128: the call's sums of one 64 x 128 block (64
    # registers beside the accumulators) are added while the other warpgroup's products
    # run (see _block_sums_start). (64 columns took twice the wgmma instructions, each
    # reading its rows of A from shared memory again: 6 to 13% slower on the H100 for
    # float8 at 8192^3, whose wgmma were bound by those reads.)
    columns = min(n, PROMOTED_COLUMNS if promoted else 256)
    step_elements = STEP_BYTES // itemsize
    k_major = _KMajor(k, itemsize)
    b_row_elements = 128 // itemsize
    _, warp = thread_ids(builder)
    group = builder.lshr(warp, I32(2))
    a_base = builder.ptrtoint(a_pointer, I32)
    b_start = _descriptor_start(builder, builder.ptrtoint(b_pointer, I32))
    registers = [builder.extract_value(acc, r) for r in range(result.registers)]
    # where promoted: one warpgroup adds a block's sums while its next block's products
    # run (nobody else's products keep the tensor cores busy meanwhile: float8 128 x 128 x
    # 128 tiles of 4 warps ran at 893-899 TFLOPS on the H100 so, though they spill, and at
    # 850 otherwise); several add each block's before their next block runs, which needs
    # half the registers for sums
    overlapped = promoted and warps == 4
    last_sums = pending = None  # a block's sums: added; not yet added (overlapped)
    per_slice = n // 2  # a thread's registers of one 64-row slice
    asm.emit(builder, asm.WGMMA_FENCE)
    for i in range(m // (16 * warps)):
        row0 = builder.add(builder.mul(group, I32(64)), I32(16 * warps * i))
        a_start = _descriptor_start(builder, builder.add(
            a_base, builder.mul(row0, I32(k_major.row_bytes))))
        for chunk in range(n // columns):
            first = i * per_slice + chunk * (columns // 2)
            fragment = registers[first:first + columns // 2]
            keep_first = I32(1)
            if promoted:  # the block's own sums: its first step does not add (scale-d 0)
                if first:  # (registers that the threads used: a fence before wgmma's use)
                    asm.emit(builder, asm.WGMMA_FENCE)
                fragment, keep_first = _block_sums_start(builder, last_sums, len(fragment))
            for step in range(k // step_elements):
                # A: the step's 32 bytes in its column block of M rows
                column = step * step_elements
                if a_words is not None:
                    a_operand = a_words[i][step]
                else:
                    a_operand = k_major.descriptor(builder, a_start,
                                                   k_major.offset(0, column, m))
                if transposed:  # B^T, K-major as A: the chunk's rows of N
                    b_descriptor = k_major.descriptor(
                        builder, b_start, k_major.offset(chunk * columns, column, n))
                else:  # B: 16 rows of 128 bytes in each 64-column block (k * 128 bytes apart)
                    b_descriptor = _descriptor(
                        builder, b_start,
                        (chunk * columns // b_row_elements) * k * 128 + column * 128,
                        k * 128, ATOM_BYTES, SWIZZLE_128B)
                fragment = _wgmma(builder, wgmma_instruction(x_type, y_type, acc_type, columns),
                                  fragment, a_operand, b_descriptor, itemsize, transposed,
                                  keep_first if step == 0 else I32(1))
            if promoted:  # one group a block
                asm.emit(builder, asm.WGMMA_COMMIT)
                if not overlapped:
                    registers = _promoted(builder, registers, first, fragment, 0)
                    last_sums = fragment
                    continue
                if pending:  # the last block's, while this block's products run
                    registers = _promoted(builder, registers, *pending, 1)
                pending = first, fragment
            else:
                registers[first:first + columns // 2] = fragment
    if promoted:
        if pending:
            registers = _promoted(builder, registers, *pending, 0)
        return make_tile(context, builder, result, registers)
    return _done(context, builder, x_type, y_type, result, registers, deferred)


def _lower_swapped(context, builder, x_type, x, y_type, y, acc_type, acc, result, deferred):
    """``mma(x, y, acc)`` of tfloat32 tiles as ``C^T = B^T A^T`` (see
    :func:`~numba_tile.compiler.planning.products.swapped`):
    for each 64-row slice of C^T (64 columns of B) and each 8-deep step, a thread's four
    elements of B^T (rows g and g + 8 of its warp's 16, columns t and t + 4: ``g = lane /
    4``, ``t = lane % 4``) are read from B's stage and rounded, all before the products
    start; A^T is A's stage as it landed (rounded in place first unless the TMA rounded
    it)."""
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    warps = result.num_warps
    if _runs_on(x_type, y_type):
        # the last iteration's product may still read its B^T from registers, which this
        # one's are about to take: ptxas does not keep them apart across the loop's back
        # edge (wrong sums on the H100 without this wait)
        asm.emit(builder, asm.wgmma_wait(0))
    a_pointer, _ = _tfloat32_operands(context, builder, x_type, x, y_type, y)
    columns = min(m, 256)  # the wgmma's N: columns of C^T, rows of C
    k_major = _KMajor(k, 4)
    lane, warp = thread_ids(builder)
    group, in_group = builder.lshr(warp, I32(2)), builder.and_(warp, I32(3))
    g, t = builder.lshr(lane, I32(2)), builder.and_(lane, I32(3))
    round_b = y_type.stored is not d.tfloat32
    slices, steps = n // (16 * warps), k // 8
    words = []  # [slice][step]: the four words of B^T
    for i in range(slices):
        row = builder.add(builder.add(builder.mul(group, I32(64)), I32(16 * warps * i)),
                          builder.add(builder.mul(in_group, I32(16)), g))
        words.append([])
        for step in range(steps):
            found = []
            for row_offset, column_offset in ((0, 0), (8, 0), (0, 4), (8, 4)):
                # B^T[r][c] is B[c][r]: row c of B's stage, column r
                index = swizzled_offset(builder, builder.add(t, I32(8 * step + column_offset)),
                                        builder.add(row, I32(row_offset)), (k, n), 4)
                address = builder.bitcast(builder.gep(y, [builder.mul(index, I32(4))]),
                                          F32.as_pointer(3))
                value = builder.load(address)
                if round_b:
                    value = from_float32(builder, value, d.tfloat32)
                found.append(builder.bitcast(value, I32))
            words[i].append(found)
    a_start = _descriptor_start(builder, builder.ptrtoint(a_pointer, I32))
    registers = [builder.extract_value(acc, r) for r in range(result.registers)]
    per_slice = m // 2  # a thread's registers of one 64-row slice of C^T
    asm.emit(builder, asm.WGMMA_FENCE)
    for i in range(slices):
        for chunk in range(m // columns):
            first = i * per_slice + chunk * (columns // 2)
            fragment = registers[first:first + columns // 2]
            for step in range(steps):
                column = step * 8
                # A^T as wgmma's B: the chunk's rows of A, K-major
                b_descriptor = k_major.descriptor(builder, a_start,
                                                  k_major.offset(chunk * columns, column, m))
                fragment = _wgmma(builder, wgmma_instruction(x_type, y_type, acc_type),
                                  fragment, words[i][step], b_descriptor, 4, True)
            registers[first:first + columns // 2] = fragment
    return _done(context, builder, x_type, y_type, result, registers, deferred)


def _tfloat32_operands(context, builder, x_type, x, y_type, y):
    """Byte pointers to the tfloat32 operands in their stages that ``wgmma`` reads from
    there, K-major: A, and a B that came transposed (a swapped product reads B through
    registers: :func:`_lower_swapped`). Each is rounded in place, each thread rounding whole
    16-byte chunks, unless the TMA rounded it as it copied (``stored`` tfloat32); a fence
    and a barrier then make the rounded values visible to the tensor cores."""
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    threads = 32 * x_type.num_warps
    vector = ir.VectorType(F32, 4)
    tid = nvvmutils.call_sreg(builder, "tid.x")

    def round_in_place(pointer, rows):
        """Every 16-byte chunk of a K-major operand of ``rows`` rows rounded in place."""
        for first in range(0, rows * k // 4, threads):
            index = builder.add(tid, I32(first))
            offset = swizzled_offset(builder, builder.udiv(index, I32(k // 4)),
                                     builder.mul(builder.urem(index, I32(k // 4)), I32(4)),
                                     (rows, k), 4)
            place = builder.bitcast(builder.gep(pointer, [builder.mul(offset, I32(4))]),
                                    vector.as_pointer(3))
            values = builder.load(place)
            builder.store(_vector(builder, [
                from_float32(builder, builder.extract_element(values, I32(i)), d.tfloat32)
                for i in range(4)]), place)

    rounded = False
    for tile_type, pointer, rows in ((x_type, x, m), (y_type, y, n)):
        if tile_type.stored is not d.tfloat32 and (tile_type is x_type or
                                                   staged_transposed(y_type)):
            round_in_place(pointer, rows)
            rounded = True
    if rounded:
        fence_async_proxy(builder)
        barrier(builder)
    return x, y


def _vector(builder, values):
    """The float32 ``values`` as one vector."""
    out = ir.Constant(ir.VectorType(F32, len(values)), ir.Undefined)
    for i, value in enumerate(values):
        out = builder.insert_element(out, value, I32(i))
    return out


def _descriptor_start(builder, address):
    """The start field of a ``wgmma`` matrix descriptor (14 bits, in 16-byte units) of the
    shared-memory byte ``address`` (an i32): computed once an operand, each step's
    descriptor adds a constant to it (:func:`_descriptor`)."""
    return builder.lshr(builder.and_(address, I32(0x3FFFF)), I32(4))


def _descriptor(builder, start, offset, leading_bytes, stride_bytes, swizzle):
    """A ``wgmma`` matrix descriptor of the operand ``offset`` bytes (a multiple of 16) past
    the address whose start field is ``start``: the field plus ``offset / 16`` (shared
    memory ends below 256 KiB, so the field never carries into the next one), the leading
    and stride byte offsets (in 16-byte units) and the swizzle mode. One addition a step
    where computing each step's field from its address took three instructions, which
    every ``wgmma`` of a loop paid."""
    if offset:
        start = builder.add(start, I32(offset >> 4))
    constant = ((leading_bytes >> 4) << 16) | ((stride_bytes >> 4) << 32) | (swizzle << 62)
    return builder.or_(builder.zext(start, I64), I64(constant))


def _registers_as_a(builder, x_type, x, warps):
    """A's fragments straight from its registers, where it is held as ``wgmma`` wants A in
    registers: 2-byte elements in the layout of a ``wgmma`` result (the probabilities of
    attention, products' results cast to float16). For each 64-row slice and each 16-deep
    step, the four 32-bit words of a thread: rows g and g + 8, columns 2t and 2t + 8 (two
    elements each), which are registers 8 s .. 8 s + 7 of the slice's result fragment.
    None where A goes through shared memory."""
    if isinstance(x_type, StagedTileType) or x_type.dtype.itemsize != 2:
        return None
    m, k = x_type.shape[-2:]
    if k > 256 or k % 16 or x_type.layout != lifted(mma_accumulator((m, k), warps, 1),
                                                    x_type.shape):
        return None
    values = [builder.extract_value(x, r) for r in range(x_type.registers)]

    def word(first):
        low, high = (v if isinstance(v.type, ir.IntType) else builder.bitcast(v, I16)
                     for v in values[first:first + 2])
        return builder.or_(builder.zext(low, I32), builder.shl(builder.zext(high, I32),
                                                               I32(16)))
    per_slice = k // 2
    return [[[word(i * per_slice + 8 * step + 2 * e) for e in range(4)]
             for step in range(k // 16)] for i in range(m // (16 * warps))]


def _block_sums_start(builder, last_sums, count):
    """The accumulator operands of a promoted block's first ``wgmma`` and the predicate that
    keeps them: zeros and 0 for a call's first block; for a later one, the registers of the
    last block's sums (the threads have added them: :func:`_promoted`) and a predicate that
    is 0 only at run time. ptxas then sees the block's products read those registers, so it
    runs them after the additions that read them: told 0, it started them before, with both
    blocks' sums live (64 registers each beside 128 accumulators: float8 128 x 256 tiles
    spilled, and ran at 620 TFLOPS on the H100 where they now run at 1376)."""
    if last_sums is None:
        return [F32(0.0)] * count, I32(0)
    return list(last_sums), asm.emit(builder, asm.ZERO_UNKNOWN_TO_PTXAS, (), I32)


def _promoted(builder, registers, first, sums, running):
    """The accumulator ``registers`` with a block's ``sums`` (from register ``first`` on)
    added in float32 once at most ``running`` product groups still run: the wait and the
    additions are one statement (:func:`.asm.wgmma_wait_and_add`)."""
    count = len(sums)
    added = asm.emit(builder, asm.wgmma_wait_and_add(running, count),
                     registers[first:first + count] + list(sums),
                     F32 if count == 1 else ir.LiteralStructType([F32] * count))
    registers = list(registers)
    registers[first:first + count] = [added] if count == 1 else [
        builder.extract_value(added, i) for i in range(count)]
    return registers


def _wgmma(builder, text, fragment, a_operand, b_descriptor, itemsize, k_major_b,
           keep=I32(1)):
    """One ``wgmma`` adding to ``fragment`` (``keep``, an i32, 0: replacing it): A K-major (a
    descriptor, or four registers), B K-major or N-major (2-byte inputs only: their
    instruction says which, tfloat32's has no such operand), scales 1."""
    count = len(fragment)
    in_registers = isinstance(a_operand, list)
    a_registers = a_operand if in_registers else [a_operand]
    instruction = asm.wgmma(text, count, len(a_registers) if in_registers else 0, itemsize,
                            k_major_b, ".s32." in text)
    out = asm.emit(builder, instruction, a_registers + [b_descriptor, keep] +
                   fragment,
                   ir.LiteralStructType([fragment[0].type] * count))
    return [builder.extract_value(out, i) for i in range(count)]
