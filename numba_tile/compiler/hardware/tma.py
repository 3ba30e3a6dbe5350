"""Copies by the tensor memory accelerator (TMA) on sm_90: one thread starts the copy of a
whole tile, which lands in shared memory swizzled, and an ``mbarrier`` tells the block when
its bytes are there.

A pipelined load (:mod:`~numba_tile.compiler.hardware.staged_loads`) whose array is a kernel parameter, on a GPU of
compute capability 9.0, is copied this way rather than by ``cp.async`` from every thread: the
threads issue no copies and compute no addresses, and waiting for a stage costs no barrier.
What the hardware copies is described by a *tensor map* (128 bytes: the array's address,
extents and strides, the box of one copy, the swizzle), which only the host can make: the
compile lists the maps it needs (:class:`TensorMapSpec`, one per array parameter and box) and
declares each as an extra kernel parameter, ``.param .align 64 .b8 numba_tile_tensor_map_<i>
[128]``, after the kernel's own (:func:`declare_tensor_map_parameters`); the launch encodes
them (:mod:`numba_tile.tensor_maps`) and passes them there. The copies read the map through
its address in the parameter space.

The tile's layout in its stage is :func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`'s, which
is the TMA's own: rows of a multiple of 128 bytes are copied as boxes of 128-byte columns
(128-byte swizzle), one after the other; rows of 64 or 32 bytes as one box with the swizzle of
that width; rows of 16 bytes unswizzled. Outside the array the TMA writes zeros (zero
padding).
"""

import re

from llvmlite import ir
from numba.cuda import nvvmutils

from ..compile_state import current
from ..lowering.tiles import I32, I64
from . import asm

PARAMETER_PREFIX = asm.TENSOR_MAP_PARAMETER
MAP_BYTES, MAP_ALIGNMENT = 128, 64
MAX_BOX = 256  # elements along one axis of a box
SWIZZLE_SPAN = 128  # bytes: the widest swizzle, and the widest box row it allows


class TensorMapSpec(tuple):
    """What the launch needs to make one tensor map: ``(parameter, ndim, itemsize,
    box_columns, box_rows, swizzle_bytes, tfloat32)``: the kernel parameter (an array; for
    an item of a list parameter, ``(parameter, item)``), its rank and element size, the
    box (``box_columns`` elements of ``box_rows`` rows, one matrix deep), the swizzle (0,
    32, 64 or 128) and whether the copy rounds float32 elements to tfloat32 (to nearest,
    ties to even, as ``astype`` does). A plain tuple, so that compiled kernels pickle.

    >>> from numba_tile.compiler.hardware.tma import TensorMapSpec
    >>> TensorMapSpec((0, 2, 2, 64, 128, 128, False)).box_bytes
    16384
    """

    __slots__ = ()

    parameter = property(lambda self: self[0])
    ndim = property(lambda self: self[1])
    itemsize = property(lambda self: self[2])
    box_columns = property(lambda self: self[3])
    box_rows = property(lambda self: self[4])
    swizzle = property(lambda self: self[5])
    tfloat32 = property(lambda self: self[6])

    @property
    def box_bytes(self):
        return self.box_columns * self.box_rows * self.itemsize


def boxes(dtype, stored_shape):
    """``(box columns, swizzle bytes, boxes)`` of a tile of ``stored_shape`` (its rows as
    the array holds them), or None where the TMA cannot copy it into the swizzled layout:
    rows of 16, 32, 64 bytes or a multiple of 128, at most :data:`MAX_BOX` rows."""
    rows, columns = stored_shape[-2:]
    row_bytes = columns * dtype.itemsize
    if not 1 <= rows <= MAX_BOX:
        return None
    if row_bytes % SWIZZLE_SPAN == 0:
        return SWIZZLE_SPAN // dtype.itemsize, SWIZZLE_SPAN, row_bytes // SWIZZLE_SPAN
    if row_bytes in (16, 32, 64):
        return columns, 0 if row_bytes == 16 else row_bytes, 1
    return None


def tensor_map_slots(parameter, ndim, dtype, stored_shape, tfloat32=False):
    """:func:`tensor_map_slot` of an array parameter; of a list parameter (``parameter`` is
    ``(parameter, number of items)``), the tuple of its items' slots."""
    if isinstance(parameter, int):
        return tensor_map_slot(parameter, ndim, dtype, stored_shape, tfloat32)
    number, items = parameter
    return tuple(tensor_map_slot((number, item), ndim, dtype, stored_shape, tfloat32)
                 for item in range(items))


def tensor_map_slot(parameter, ndim, dtype, stored_shape, tfloat32=False):
    """The slot (parameter number after the kernel's own) of the map that copies tiles of
    ``stored_shape`` from array parameter ``parameter`` (or item ``item`` of list parameter
    ``number``, for ``parameter`` ``(number, item)``), rounding them to ``tfloat32`` or not,
    added to the compilation's maps on first use."""
    box_columns, swizzle, _ = boxes(dtype, stored_shape)
    spec = TensorMapSpec((parameter, ndim, dtype.itemsize, box_columns, stored_shape[-2],
                          swizzle, bool(tfloat32)))
    return current().tensor_map_slot(spec)


def declare_tensor_map_parameters(ptx, entry, count):
    """``ptx`` with ``count`` tensor-map parameters added after the kernel's own.

    >>> from numba_tile.compiler.hardware.tma import declare_tensor_map_parameters
    >>> print(declare_tensor_map_parameters(".visible .entry k(\\n\\t.param .u64 k_0\\n)\\n{",
    ...                                     "k", 1))
    .visible .entry k(
    	.param .u64 k_0,
    	.param .align 64 .b8 numba_tile_tensor_map_0[128]
    )
    {
    """
    if not count:
        return ptx
    match = re.search(rf"\.entry\s+{re.escape(entry)}\s*\(([^)]*)\)", ptx)
    if match is None:
        raise RuntimeError(f"kernel {entry} not found in its PTX")
    own = match.group(1).rstrip()
    added = ",\n".join(f"\t.param .align {MAP_ALIGNMENT} .b8 {PARAMETER_PREFIX}{i}"
                       f"[{MAP_BYTES}]" for i in range(count))
    parameters = f"{own},\n{added}\n" if own.strip() else f"\n{added}\n"
    return ptx[:match.start(1)] + parameters + ptx[match.end(1):]


# -- device code --------------------------------------------------------------------------
def _shared_address(builder, pointer):
    return builder.ptrtoint(pointer, I32)


def init_barriers(builder, barriers, arrivals=()):
    """Thread 0 makes each ``mbarrier`` (shared-memory pointers) wait for one arrival (the
    thread that starts a stage's copies) and its bytes, or for its count in ``arrivals``
    (one a barrier, 1 where missing); then the block may use them."""
    with builder.if_then(first_thread(builder)):
        for i, pointer in enumerate(barriers):
            count = arrivals[i] if i < len(arrivals) else 1
            if count == 1:
                asm.emit(builder, asm.MBARRIER_INIT, [_shared_address(builder, pointer)])
            else:
                asm.emit(builder, asm.MBARRIER_INIT_COUNT,
                         [_shared_address(builder, pointer), I32(count)])
        # the initialization visible to the asynchronous proxy (the TMA's completions)
        asm.emit(builder, asm.MBARRIER_INIT_FENCE)


def expect_bytes(builder, barrier, nbytes):
    """This thread arrives at ``barrier``, which will then wait for ``nbytes`` more bytes."""
    asm.emit(builder, asm.MBARRIER_EXPECT_BYTES, [_shared_address(builder, barrier),
                                                  I32(nbytes)])


def copy_box(builder, slot, target, coordinates, barrier, array=None):
    """Start the TMA copy of the box of map ``slot`` at element ``coordinates`` (int32,
    innermost axis first) into ``target`` (shared memory), completing on ``barrier``.
    ``slot`` a tuple: the maps of a list parameter's items; the copy takes the map of the
    item whose fields (address, extents, strides) all equal those of ``array`` (its LLVM
    value), in a branch that names that map as a constant."""
    operands = [_shared_address(builder, target), _shared_address(builder, barrier),
                *coordinates]
    if isinstance(slot, int):
        asm.emit(builder, asm.tensor_copy(slot, len(coordinates)), operands)
        return
    compilation = current()
    items = compilation.list_items[compilation.tensor_maps[slot[0]][0][0]]
    _copy_of_item(builder, list(zip(slot, items)), array, operands, len(coordinates))


def _copy_of_item(builder, candidates, array, operands, ndim):
    """The copy with the map of the first of ``candidates`` (``(slot, item)`` pairs) whose
    item ``array`` is, else of the last."""
    (slot, item), rest = candidates[0], candidates[1:]
    if not rest:
        asm.emit(builder, asm.tensor_copy(slot, ndim), operands)
        return
    same = None
    for mine, theirs in zip(_scalars(builder, array), _scalars(builder, item)):
        equal = builder.icmp_unsigned("==", mine, theirs)
        same = equal if same is None else builder.and_(same, equal)
    with builder.if_else(same) as (this_item, another_item):
        with this_item:
            asm.emit(builder, asm.tensor_copy(slot, ndim), operands)
        with another_item:
            _copy_of_item(builder, rest, array, operands, ndim)


def _scalars(builder, value):
    """The scalar fields of an array's value (its address as an integer, its extents and
    strides), in order."""
    if isinstance(value.type, ir.PointerType):
        return [builder.ptrtoint(value, I64)]
    if isinstance(value.type, (ir.LiteralStructType, ir.ArrayType)):
        count = len(value.type.elements) if isinstance(value.type, ir.LiteralStructType) \
            else value.type.count
        return [scalar for field in range(count)
                for scalar in _scalars(builder, builder.extract_value(value, field))]
    return [value]


def wait_barrier(builder, barrier, parity):
    """Wait until ``barrier`` completes the phase of ``parity`` (int32 0 or 1): the bytes of
    that phase's copies are then visible to the waiting thread."""
    function = builder.function
    waiting = function.append_basic_block("tma_wait")
    done = function.append_basic_block("tma_waited")
    builder.branch(waiting)
    builder.position_at_end(waiting)
    ready = asm.emit(builder, asm.MBARRIER_TRY_WAIT, [_shared_address(builder, barrier),
                                                      parity], I32)
    builder.cbranch(builder.icmp_unsigned("!=", ready, I32(0)), done, waiting)
    builder.position_at_end(done)


def arrive(builder, barrier):
    """This thread arrives at ``barrier`` (its shared-memory writes and reads before it are
    then over for whoever waits for the phase)."""
    asm.emit(builder, asm.MBARRIER_ARRIVE, [_shared_address(builder, barrier)])


def first_thread(builder):
    """True in thread 0 of the block."""
    return builder.icmp_unsigned("==", nvvmutils.call_sreg(builder, "tid.x"), I32(0))

