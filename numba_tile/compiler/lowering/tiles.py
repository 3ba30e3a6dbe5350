"""How a tile lives in a thread block, and the moves every lowering shares.

A tile is held by the thread block as its layout says: thread ``tid`` has lane ``tid % 32``
and warp ``tid // 32``, and register ``r`` of that thread holds the element at
``layout.apply(r, lane, warp)``. Coordinates are the XOR of the lane and warp basis vectors
(run time) with the register's (compile time), so every register index is a constant and
fragments stay in registers. This module has the thread geometry, the packing of registers
into a tile value, warp shuffles, the kernel's shared-memory scratch buffer and the general
layout conversion through it.
"""

import functools
import math

from llvmlite import ir
from numba.core import cgutils, types
from numba.cuda import nvvmutils

from ...errors import TileUnsupportedFeatureError
from ...layouts import broadcast_projection, register_sources
from ..compile_state import SHARED_ALIGNMENT, FewerStages, current
from . import asm
from .arithmetic import storage_type

I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
FULL_MASK = I32(0xFFFFFFFF)
# the named barrier of the tile code's warps where a producer warp runs beside them (0 is
# the whole block's)
CONSUMER_BARRIER = 1


# -- thread geometry ------------------------------------------------------------------------
def thread_ids(builder):
    tid = nvvmutils.call_sreg(builder, "tid.x")
    return builder.and_(tid, I32(31)), builder.lshr(tid, I32(5))


def thread_coordinates(builder, layout):
    """This thread's base coordinates in a tile of ``layout`` (lane and warp bits applied)."""
    lane, warp = thread_ids(builder)
    coords = [I32(0)] * len(layout.shape)
    for value, vectors in ((lane, layout.bases["lane"]), (warp, layout.bases["warp"])):
        for bit, vector in enumerate(vectors):
            if not any(vector):
                continue
            flag = builder.and_(builder.lshr(value, I32(bit)), I32(1))
            for axis, component in enumerate(vector):
                if component:
                    coords[axis] = builder.xor(coords[axis], builder.mul(flag, I32(component)))
    return coords


def is_replica_leader(builder, layout):
    """True in the one thread of each group that holds the same elements (replicated bits 0),
    so that side effects such as stores happen once."""
    tid = nvvmutils.call_sreg(builder, "tid.x")
    mask = 0
    for bit in layout.replicated_bits("lane"):
        mask |= 1 << bit
    for bit in layout.replicated_bits("warp"):
        mask |= 1 << (bit + 5)
    if not mask:
        return cgutils.true_bit
    return builder.icmp_unsigned("==", builder.and_(tid, I32(mask)), I32(0))


def register_coordinates(builder, base, layout, register):
    constant = layout.apply(register=register)
    return [builder.xor(b, I32(c)) if c else b for b, c in zip(base, constant)]


def make_tile(context, builder, tile_type, values):
    """The tile value of ``values``, one a register. Registers that hold the same element
    (replicated register bits, as in the ``(m, 1)`` result of a reduction with ``keepdims``
    kept in its input's layout) all take the first one's value, so that the work done on
    the others is dead and a loop-carried tile of such a layout keeps one value an
    element: an online softmax's running maximum costs one ``exp2`` a row, not one a
    register."""
    values = list(values)
    for register, first in first_holders(tile_type.layout):
        values[register] = values[first]
    return context.make_tuple(builder, types.UniTuple(tile_type.element, tile_type.registers),
                              values)


@functools.lru_cache(maxsize=1024)
def first_holders(layout):
    """``(register, first register holding its element)`` of each register that repeats an
    earlier one of ``layout``."""
    seen, found = {}, []
    for register in range(layout.in_sizes["register"]):
        first = seen.setdefault(layout.apply(register=register), register)
        if first != register:
            found.append((register, first))
    return tuple(found)


def tile_registers(builder, tile_type, value):
    return [builder.extract_value(value, r) for r in range(tile_type.registers)]



def shuffle_xor(builder, value, lane_mask):
    """``shfl.sync.bfly``: the ``value`` of lane ``lane ^ lane_mask`` (any scalar type; the
    hardware moves 32-bit words)."""
    fn = builder.module.declare_intrinsic(
        "llvm.nvvm.shfl.sync.bfly.i32", fnty=ir.FunctionType(I32, [I32, I32, I32, I32]))

    def move(word):
        return builder.call(fn, [FULL_MASK, word, I32(lane_mask), I32(0x1F)])

    if isinstance(value.type, ir.IntType):
        as_int = value
    else:
        as_int = builder.bitcast(value, ir.IntType(64 if isinstance(value.type, ir.DoubleType)
                                                   else 32))
    width = as_int.type.width
    if width <= 32:
        moved = move(builder.zext(as_int, I32) if width < 32 else as_int)
        moved = builder.trunc(moved, as_int.type) if width < 32 else moved
    else:
        low = move(builder.trunc(as_int, I32))
        high = move(builder.trunc(builder.lshr(as_int, I64(32)), I32))
        moved = builder.or_(builder.zext(low, I64), builder.shl(builder.zext(high, I64),
                                                                I64(32)))
    return moved if isinstance(value.type, ir.IntType) else builder.bitcast(moved, value.type)


SCRATCH_NAME = "numba_tile_scratch"


def _element_bytes(llvm_type):
    if isinstance(llvm_type, ir.IntType):
        return max(1, llvm_type.width // 8)
    return 8 if isinstance(llvm_type, ir.DoubleType) else 4


def scratch_regions(builder, regions, alignment=16):
    """The kernel's shared-memory scratch buffer, cut into back-to-back arrays: one pointer
    per ``(llvm element type, count)`` of ``regions``, each aligned to ``alignment`` bytes
    (16: vectors; :data:`SHARED_ALIGNMENT`: swizzled operands of tensor cores).

    One dynamic shared-memory array serves every conversion and reduction of a kernel: each
    use starts with a barrier and finishes its reads before the next barrier, so they can all
    start at offset 0. The launch asks for the largest size any use needs.
    """
    offsets, nbytes = [], 0
    for element_type, count in regions:
        nbytes = -(-nbytes // alignment) * alignment
        offsets.append(nbytes)
        nbytes += count * _element_bytes(element_type)
    nbytes = -(-nbytes // 16) * 16  # 16-byte vectors
    compilation = current()
    plan = compilation.shared
    if nbytes > plan.available and compilation.stages_past_quarter:
        raise FewerStages()  # the stages filled what this op needs: fewer leave it
    if nbytes > plan.available:
        rings = f" besides the {plan.ring_bytes} bytes of pipelined loads (fewer " \
            f"num_stages leave more)" if plan.ring_bytes else ""
        raise TileUnsupportedFeatureError(
            f"This op needs {nbytes} bytes of shared memory; the target GPU gives a block at "
            f"most {plan.available}{rings}")
    plan.use_scratch(nbytes)
    base = shared_base(builder)
    pointers = []
    for (element_type, _), offset in zip(regions, offsets):
        start = builder.gep(base, [I32(offset)]) if offset else base
        storage = ir.IntType(8) if element_type == ir.IntType(1) else element_type
        pointers.append(builder.bitcast(start, storage.as_pointer(3)))
    return pointers


def shared_base(builder):
    """The start of the kernel's dynamic shared memory (an ``i8`` pointer in the shared
    address space): the scratch buffer at its start, the rings of pipelined loads
    (:mod:`~numba_tile.compiler.planning.staged_loads`) at its end."""
    module = builder.module
    try:
        variable = module.get_global(SCRATCH_NAME)
    except KeyError:
        variable = ir.GlobalVariable(module, ir.ArrayType(ir.IntType(8), 0), SCRATCH_NAME,
                                     addrspace=3)
        variable.linkage = "external"
        variable.align = SHARED_ALIGNMENT
    return builder.bitcast(variable, ir.IntType(8).as_pointer(3))


def scratch(builder, element_type, count):
    """The scratch buffer as one array of ``count`` elements (see :func:`scratch_regions`)."""
    return scratch_regions(builder, [(element_type, count)])[0]


def store_shared(builder, value, pointer):
    """Store to scratch (bools are bytes there)."""
    if value.type == ir.IntType(1):
        value = builder.zext(value, ir.IntType(8))
    builder.store(value, pointer)


def load_shared(builder, pointer, llvm_type):
    value = builder.load(pointer)
    if llvm_type == ir.IntType(1):
        return builder.trunc(value, llvm_type)
    return value


def barrier(builder):
    """Wait until every thread of the block's tile code has come here: the whole block, or
    where a producer warp issues copies (:mod:`~numba_tile.compiler.frontend.producer_warp`)
    the other warps, on a barrier of their own (the producer never comes to one)."""
    compilation = current()
    if compilation.producer_warps:
        fn = builder.module.declare_intrinsic("llvm.nvvm.barrier.sync.cnt", fnty=ir.FunctionType(
            ir.VoidType(), [I32, I32]))
        builder.call(fn, [I32(CONSUMER_BARRIER), I32(32 * compilation.num_warps)])
        return
    block_barrier(builder)


def block_barrier(builder):
    """Wait until every thread of the block has come here."""
    fn = builder.module.declare_intrinsic("llvm.nvvm.barrier0", fnty=ir.FunctionType(
        ir.VoidType(), []))
    builder.call(fn, [])


# -- layout conversions -----------------------------------------------------------------------
def linear_offset(builder, coords, shape):
    """Row-major linear offset (int32) of run-time coordinates in ``shape``."""
    offset = I32(0)
    for c, n in zip(coords, shape):
        offset = builder.add(builder.mul(offset, I32(n)), c)
    return offset


def broadcast_source(src_shape, dst_shape):
    """Source coordinates of a destination element when broadcasting ``src_shape``."""
    lead = len(dst_shape) - len(src_shape)

    def source(builder, coords):
        return [I32(0) if n == 1 else c for c, n in zip(coords[lead:], src_shape)]
    return source


def relayout(context, builder, src_type, value, dst_type, source_of):
    """Move a tile to another layout (and shape) through shared memory.

    Every thread writes its distinct registers at their row-major place in a buffer of the
    source tile; after a barrier, each thread reads the elements its destination registers
    hold: ``source_of(builder, dst_coords)`` gives the source coordinates to read.
    """
    element = context.get_value_type(src_type.element)
    size = 1
    for n in src_type.shape:
        size *= n
    buffer = scratch(builder, element, size)
    barrier(builder)  # an earlier use of the buffer (in a loop) must be finished
    src_base = thread_coordinates(builder, src_type.layout)
    seen = set()
    for register in range(src_type.registers):
        constant = src_type.layout.apply(register=register)
        if constant in seen:
            continue
        seen.add(constant)
        coords = register_coordinates(builder, src_base, src_type.layout, register)
        slot = builder.gep(buffer, [linear_offset(builder, coords, src_type.shape)])
        store_shared(builder, builder.extract_value(value, register), slot)
    barrier(builder)
    dst_base = thread_coordinates(builder, dst_type.layout)
    values = []
    for register in range(dst_type.registers):
        coords = register_coordinates(builder, dst_base, dst_type.layout, register)
        slot = builder.gep(buffer, [linear_offset(builder, source_of(builder, coords),
                                            src_type.shape)])
        values.append(load_shared(builder, slot, element))
    return make_tile(context, builder, dst_type, values)


def swizzled_offset(builder, row, column, shape, itemsize):
    """The element offset of ``(row, column)`` of a 2-d tile of ``shape`` stored swizzled, so
    that eight rows read at one column (``ldmatrix``, 16 bytes a row) hit eight different
    16-byte bank groups. These are the swizzles of the tensor memory accelerator and
    ``wgmma``:

    * rows of a multiple of 128 bytes are cut into columns of 128 bytes stored one after
      the other (each ``rows x 128`` bytes); the eight 16-byte chunks of each 128-byte line
      are permuted by XOR with the line's number modulo 8 (the 128-byte swizzle: with a
      multiple of 8 rows, row ``r``'s number ``r % 8``; with fewer rows, as the TMA writes
      them, the line's place in the stage, whose start is 1024-byte aligned);
    * rows of 64 or 32 bytes are stored one after the other, their 4 or 2 chunks permuted
      by XOR with the number of the 128-byte line they are in (the 64- and 32-byte
      swizzles); rows of 16 bytes are not swizzled.

    A 16-byte chunk stays whole either way, so vector copies of 16 bytes keep working.
    """
    rows, columns = shape
    row_bytes = columns * itemsize
    per_chunk = 16 // itemsize
    chunk_shift = per_chunk.bit_length() - 1
    if row_bytes % 128 == 0:
        per_line = 128 // itemsize
        block = builder.udiv(column, I32(per_line))
        within = builder.urem(column, I32(per_line))
        line = row if rows % 8 == 0 else builder.add(builder.mul(block, I32(rows)), row)
        chunk_bits = builder.shl(builder.and_(line, I32(7)), I32(chunk_shift))
        return builder.add(builder.add(builder.mul(block, I32(rows * per_line)),
                                       builder.mul(row, I32(per_line))),
                           builder.xor(within, chunk_bits))
    index = builder.add(builder.mul(row, I32(columns)), column)
    chunks = row_bytes // 16  # in a row: 4, 2 or 1
    if chunks <= 1:
        return index
    rows_per_line = 128 // row_bytes
    line = builder.udiv(row, I32(rows_per_line))
    return builder.xor(index, builder.shl(builder.and_(line, I32(chunks - 1)),
                                          I32(chunk_shift)))


def gather_to_shared(context, builder, tiles, swizzle=False, async_proxy=False):
    """Write whole tiles row-major into the scratch buffer, for reads of any element by any
    thread: ``tiles`` is a list of ``(tile type, value)``; returns one pointer per tile (bools
    are bytes there). Ends with a barrier, after which every element can be read. With
    ``swizzle`` (2-d tiles, or 3-d ones: a batch of matrices one after the other), element
    ``(r, c)`` of a matrix is at :func:`swizzled_offset`, each tile
    aligned to :data:`SHARED_ALIGNMENT`; with ``async_proxy`` the writes are made visible to
    the asynchronous proxy (``wgmma`` reads) too."""
    pointers = scratch_regions(builder, [
        (ir.IntType(1) if tile_type.dtype.is_bool else context.get_value_type(tile_type.element),
         math.prod(tile_type.shape)) for tile_type, _ in tiles],
        alignment=SHARED_ALIGNMENT if swizzle else 16)
    barrier(builder)  # an earlier use of the scratch buffer must be finished
    for (tile_type, value), pointer in zip(tiles, pointers):
        base = thread_coordinates(builder, tile_type.layout)
        run = 1 if tile_type.dtype.is_bool else _register_run(tile_type)
        seen = set()
        for register in range(0, tile_type.registers, run):
            constant = tile_type.layout.apply(register=register)
            if constant in seen:
                continue
            seen.add(constant)
            coords = register_coordinates(builder, base, tile_type.layout, register)
            if swizzle:  # 16-byte chunks stay whole: vectors too
                rows, columns = tile_type.shape[-2:]
                index = swizzled_offset(builder, coords[-2], coords[-1], (rows, columns),
                                        tile_type.dtype.itemsize)
                if len(coords) == 3:  # one swizzled matrix after the other
                    index = builder.add(index, builder.mul(coords[0], I32(rows * columns)))
            else:
                index = linear_offset(builder, coords, tile_type.shape)
            slot = builder.gep(pointer, [index])
            if run == 1:
                store_shared(builder, builder.extract_value(value, register), slot)
                continue
            # a run of registers that are consecutive elements: one vector store
            element = slot.type.pointee
            vector = ir.Constant(ir.VectorType(element, run), ir.Undefined)
            for i in range(run):
                vector = builder.insert_element(vector, builder.extract_value(
                    value, register + i), I32(i))
            target = builder.bitcast(slot, ir.VectorType(element, run).as_pointer(3))
            builder.store(vector, target).align = run * _element_bytes(element)
    if async_proxy:
        fence_async_proxy(builder)
    barrier(builder)
    return pointers


def fence_async_proxy(builder):
    """``fence.proxy.async.shared::cta``: this thread's shared-memory writes become visible
    to the asynchronous proxy (``wgmma``, the tensor memory accelerator); a barrier after it
    covers the whole block."""
    asm.emit(builder, asm.FENCE_ASYNC_PROXY)


def _register_run(tile_type):
    """How many registers from each multiple of it hold consecutive elements along the last
    axis (at most 16 bytes): register bit ``i`` steps that axis by ``2 ** i``."""
    layout, rank = tile_type.layout, len(tile_type.shape)
    if rank == 0:
        return 1
    step = (0,) * (rank - 1)
    run, limit = 1, max(1, 16 // _element_bytes(arithmetic_storage(tile_type)))
    for bit, vector in enumerate(layout.bases["register"]):
        if vector != step + (1 << bit,) or 2 * run > limit:
            break
        run *= 2
    return run


def arithmetic_storage(tile_type):
    return storage_type(tile_type.dtype)


def uniform_constant(builder, value, registers):
    """The constant every register of the tile ``value`` holds, or None where that is not
    plain to see. A filled tile (``ct.zeros``, ``ct.full`` with a constant) is a chain of
    ``insertvalue`` of one constant; Numba may have stored it to its variable's slot and
    loaded it back (in this block, or anywhere where the slot is stored once)."""
    seen = set()
    while isinstance(value, ir.LoadInstr) and id(value) not in seen:
        seen.add(id(value))
        pointer, stored = value.operands[0], None
        for instruction in builder.block.instructions:
            if isinstance(instruction, ir.StoreInstr) and instruction.operands[1] is pointer:
                stored = instruction.operands[0]
            if instruction is value:
                break
        if stored is None:  # stored once in the whole function: that is what it holds
            # (besides the zeros Numba gives every variable's slot on entry)
            entry = builder.function.blocks[0]
            stores = [i.operands[0] for block in builder.function.blocks
                      for i in block.instructions
                      if isinstance(i, ir.StoreInstr) and i.operands[1] is pointer and not (
                          block is entry and isinstance(i.operands[0], ir.Constant))]
            if len(stores) != 1:
                return None
            stored = stores[0]
        value = stored
    found, indices = None, set()
    while isinstance(value, ir.InsertValue):
        element = value.operands[1]
        if not _made_of_constants(element) or (found is not None and element is not found
                                               and str(element) != str(found)):
            return None
        found = element
        indices.add(tuple(value.indices))
        value = value.operands[0]
    if len(indices) != registers or not (isinstance(value, ir.Constant)):
        return None
    return found


def _made_of_constants(value, depth=4):
    """True for a constant, or casts and arithmetic of constants (not yet folded): the same
    value in every thread."""
    if isinstance(value, ir.Constant):
        return True
    if depth and isinstance(value, (ir.CastInstr, ir.Instruction)) and not isinstance(
            value, (ir.LoadInstr, ir.CallInstr, ir.PhiInstr, ir.AllocaInstr)):
        return bool(value.operands) and all(_made_of_constants(v, depth - 1)
                                            for v in value.operands)
    return False


def move_tile(context, builder, src_type, value, dst_type):
    """The tile ``value`` of ``src_type`` broadcast to the shape and layout of ``dst_type``
    (whose dtype must be the source's). Where every thread already holds the elements its
    destination registers need, this only renames registers; a tile of one constant (a
    filled accumulator) is that constant in any layout; otherwise the elements go through
    shared memory (:func:`relayout`)."""
    constant = uniform_constant(builder, value, src_type.registers)
    if constant is not None:
        return make_tile(context, builder, dst_type, [constant] * dst_type.registers)
    sources = register_sources(src_type.layout, dst_type.layout,
                               broadcast_projection(src_type.shape, dst_type.shape))
    if sources is not None:
        return make_tile(context, builder, dst_type,
                         [builder.extract_value(value, s) for s in sources])
    return relayout(context, builder, src_type, value, dst_type,
                    broadcast_source(src_type.shape, dst_type.shape))
