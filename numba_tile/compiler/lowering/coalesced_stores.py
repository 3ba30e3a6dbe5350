"""Stores of tiles whose registers hold short runs of a row, rearranged through shared memory.

A matrix product leaves its result in the tensor cores' accumulator layout: a thread holds
pairs of neighbours in a row, so a direct store writes 4 or 8 bytes at a time, 16-byte
pieces of eight rows per warp instruction, each behind its own bounds check. Written into
shared memory first and read back as 16-byte vectors along rows, the same tile leaves in
full-width, coalesced stores: a warp writes whole rows. This costs two barriers and one
pass through shared memory, and saves 8% of a 4096^3 float16 matrix product on an H100.

The buffer is the kernel's scratch memory. Its rows are padded by 16 bytes, so that the
pairs that the eight row groups of a warp write land in different banks. Where the whole
tile does not fit next to the rings of pipelined loads, it goes in column blocks, one after
the other, each as wide as fits.
"""

from llvmlite import ir
from numba.cuda import nvvmutils

from ..compile_state import current
from .memory import shifted, vector_groups
from .predicated_stores import store_where
from .tiles import I32, barrier, register_coordinates, scratch, shared_base, thread_coordinates

VECTOR_BYTES = 16
ROW_PADDING = 16
SMALLEST_BLOCK_BYTES = 128  # narrower column blocks: a warp would write less than a line


def column_block(tile_type, element_bytes, aligned, origin_step, after_rings=False):
    """The width (columns) of the blocks a store of ``tile_type`` goes through shared memory
    in, or None where it stores directly: its registers already hold 16-byte runs, the array
    is not specialized as aligned (vectors could straddle its end), a thread would get no
    whole vector, a register group is replicated or split across blocks, or no block fits
    (in the scratch buffer, or ``after_rings`` in the stages too: see
    :mod:`~numba_tile.compiler.frontend.freed_rings`)."""
    layout = tile_type.layout
    shape = tile_type.shape
    if len(shape) < 2 or any(n != 1 for n in shape[:-2]) or not aligned:
        return None
    rows, columns = shape[-2:]
    per_vector = VECTOR_BYTES // element_bytes
    threads = 32 * tile_type.num_warps
    width = vector_groups(layout, element_bytes)[0][1]
    if width * element_bytes >= VECTOR_BYTES or columns % per_vector or \
            origin_step % per_vector or rows * columns * element_bytes < threads * VECTOR_BYTES:
        return None
    registers = layout.in_sizes["register"]
    if layout.replicated_bits("lane") or layout.replicated_bits("warp") or \
            len({layout.apply(register=r) for r in range(registers)}) != registers:
        return None
    # a thread's own column bits must stay inside a block: then a register's block is known
    # when compiling (the XOR with them changes no higher bit)
    thread_columns = max((v[-1] for dim in ("lane", "warp") for v in layout.bases[dim]),
                         default=0)
    # the scratch buffer beside the rings first; where no block fits there and no ring is
    # used again, the idle stages
    compilation = current()
    budgets = [compilation.shared.available]
    if after_rings:
        budgets.append(compilation.shared_after_rings())
    for budget in budgets:
        block = columns
        while rows * (block * element_bytes + ROW_PADDING) > budget and \
                block * element_bytes > SMALLEST_BLOCK_BYTES:
            block //= 2
        if rows * (block * element_bytes + ROW_PADDING) <= budget and thread_columns < block:
            return block
    return None


def _buffer(builder, nbytes, after_rings):
    """The store's buffer of ``nbytes``: the scratch buffer where it has room beside the
    rings, else (``after_rings``) the start of the dynamic shared memory, over the idle
    stages (the launch's size then stays as it is)."""
    compilation = current()
    if after_rings and nbytes > compilation.shared.available:
        return shared_base(builder)
    return scratch(builder, ir.IntType(8), nbytes)


def store_through_shared(builder, view, origin, tile_type, converted, element_bytes, block,
                         after_rings=False):
    """Store the tile (``converted``: its registers as stored in memory) whose first element
    is at ``origin`` of ``view`` through shared memory, ``block`` columns at a time (see the
    module's docstring; ``after_rings`` as for :func:`column_block`). Every thread of the
    block must call it."""
    layout = tile_type.layout
    rows, columns = tile_type.shape[-2:]
    threads = 32 * tile_type.num_warps
    row_bytes = block * element_bytes + ROW_PADDING
    buffer = _buffer(builder, rows * row_bytes, after_rings)
    element = converted[0].type
    base = thread_coordinates(builder, layout)
    tid = nvvmutils.call_sreg(builder, "tid.x")
    vectors_per_row = block * element_bytes // VECTOR_BYTES
    total = rows * vectors_per_row
    word_vector = ir.VectorType(I32, VECTOR_BYTES // 4)
    for start in range(0, columns, block):
        barrier(builder)  # the buffer's earlier readers are done
        for first, width in vector_groups(layout, element_bytes):
            if layout.apply(register=first)[-1] // block != start // block:
                continue
            coords = register_coordinates(builder, base, layout, first)
            column = builder.sub(coords[-1], I32(start))
            offset = builder.add(builder.mul(coords[-2], I32(row_bytes)),
                                 builder.mul(column, I32(element_bytes)))
            run = ir.VectorType(element, width)
            vector = ir.Constant(run, None)
            for i in range(width):
                vector = builder.insert_element(vector, converted[first + i], I32(i))
            builder.store(vector, builder.bitcast(builder.gep(buffer, [offset]),
                                                  run.as_pointer(3)),
                          align=width * element_bytes)
        barrier(builder)
        # every read first, then the stores: the reads' latencies overlap
        reads = []
        for first in range(0, total, threads):
            index = builder.add(tid, I32(first))
            row = builder.udiv(index, I32(vectors_per_row))
            column = builder.mul(builder.urem(index, I32(vectors_per_row)),
                                 I32(VECTOR_BYTES // element_bytes))
            # a thread past the end (last round) reads a valid place and stores nothing
            kept_row = builder.urem(row, I32(rows)) if total % threads else row
            offset = builder.add(builder.mul(kept_row, I32(row_bytes)),
                                 builder.mul(column, I32(element_bytes)))
            words = builder.load(builder.bitcast(builder.gep(buffer, [offset]),
                                                 word_vector.as_pointer(3)),
                                 align=VECTOR_BYTES)
            reads.append((index, row, column, words))
        for index, row, column, words in reads:
            indices = origin[:-2] + [shifted(builder, origin[-2], row), shifted(
                builder, origin[-1], builder.add(column, I32(start)))]
            pointer, inside = view.element(builder, indices)
            if total % threads:
                inside = builder.and_(inside, builder.icmp_unsigned("<", index, I32(total)))
            store_where(builder, words, builder.bitcast(
                pointer, word_vector.as_pointer(pointer.type.addrspace)), inside, VECTOR_BYTES)
