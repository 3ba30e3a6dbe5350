"""The device code of the tensor memory accelerator's copies (sm_90): ``mbarrier`` objects
made, arrived at and waited for, and the copy of a box started by one thread, with the map
the plan gave it (:mod:`~numba_tile.compiler.planning.tma`)."""

from llvmlite import ir
from numba.cuda import nvvmutils

from ..compile_state import current
from . import asm
from .tiles import I32, I64


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
