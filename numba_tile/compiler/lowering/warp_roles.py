"""Lowering of the register hand-over between a producer warpgroup and the consumers
(:mod:`~numba_tile.compiler.frontend.producer_warp`).

Where the tile code runs on two warpgroups or more beside a producer warpgroup, the block is
a multiprocessor's only one, and each thread starts with the registers the file holds for
the block's threads: 168 for 384 threads, too few for the accumulators of a 128 x 128
attention block without spills. The producer needs few (it computes indices and starts
copies), so its threads give back all but 24 (``setmaxnreg.dec``) and the consumers take
them (``setmaxnreg.inc``, up to 240 a thread for two warpgroups):
:attr:`~numba_tile.compiler.compile_state.CompileState.register_split`. ptxas honours these
only where it knows the registers at the start (the kernel's launch bounds give one block a
multiprocessor), where the two ways never join again (the producer's threads end with
``exit``), and where it compiles the whole program: the driver's compile of the PTX, not
nvJitLink's relocatable one (:func:`~numba_tile.compiler.whole_program.needs_whole_program`).
Elsewhere these lowerings emit nothing.

The consumer warpgroups' turns (:mod:`~numba_tile.compiler.frontend.warpgroup_turns`) are
named barriers of two warpgroups each: warpgroup ``i`` waits for its turn at barrier
``FIRST_TURN_BARRIER + i``, and gives the turn at the next warpgroup's (the last gives the
first's), arriving without waiting. They too exist only beside a producer warpgroup.
"""

from numba.cuda import nvvmutils

from ..compile_state import current
from ..intrinsics import consumer_registers, consumer_turn_give, consumer_turn_take, \
    consumer_turns_begin, consumer_turns_end, producer_exit, producer_registers
from . import asm
from .registry import lower
from .tiles import CONSUMER_BARRIER, I32

FIRST_TURN_BARRIER = CONSUMER_BARRIER + 1  # (0: the block's; 16 in all)
WARPGROUP = 128  # threads


def _end_thread(builder):
    """``exit``: the thread ends. The block after it has no way in, so the code lowered
    next (the producer's ``return``) is dead and no way joins the consumers'."""
    asm.emit(builder, asm.THREAD_EXIT)
    builder.unreachable()
    builder.position_at_end(builder.append_basic_block("after_exit"))


@lower(producer_registers)
def lower_producer_registers(context, builder, sig, args):
    compilation = current()
    split = compilation.register_split
    if split is not None:
        asm.emit(builder, asm.set_max_registers("dec", split[0]))
        # the first warp starts the copies (pipeline_produce's issuer); the others are done
        first = I32(32 * (compilation.num_warps + 1))
        with builder.if_then(builder.icmp_unsigned(
                ">=", nvvmutils.call_sreg(builder, "tid.x"), first)):
            _end_thread(builder)
    return context.get_dummy_value()


@lower(consumer_registers)
def lower_consumer_registers(context, builder, sig, args):
    split = current().register_split
    if split is not None:
        asm.emit(builder, asm.set_max_registers("inc", split[1]))
    return context.get_dummy_value()


@lower(producer_exit)
def lower_producer_exit(context, builder, sig, args):
    if current().register_split is not None:
        _end_thread(builder)
    return context.get_dummy_value()


def _turns(builder):
    """``(this warpgroup, the number of consumer warpgroups)`` where the consumers take
    turns (beside a producer warpgroup), else None."""
    compilation = current()
    if compilation.register_split is None:
        return None
    tid = nvvmutils.call_sreg(builder, "tid.x")
    return builder.udiv(tid, I32(WARPGROUP)), compilation.num_warps * 32 // WARPGROUP


def _at_barrier(builder, instruction, group):
    """``instruction`` (wait or arrive) at the named barrier of warpgroup ``group`` (an
    i32), which counts the threads of two warpgroups: the one that waits there for its
    turn, the one before it that gives it."""
    barrier = builder.add(I32(FIRST_TURN_BARRIER), group)
    asm.emit(builder, instruction, [barrier, I32(2 * WARPGROUP)])


@lower(consumer_turns_begin)
def lower_consumer_turns_begin(context, builder, sig, args):
    turns = _turns(builder)
    if turns is not None:
        group, groups = turns
        with builder.if_then(builder.icmp_unsigned("==", group, I32(groups - 1))):
            _at_barrier(builder, asm.NAMED_BARRIER_ARRIVE, I32(0))
    return context.get_dummy_value()


@lower(consumer_turn_take)
def lower_consumer_turn_take(context, builder, sig, args):
    turns = _turns(builder)
    if turns is not None:
        _at_barrier(builder, asm.NAMED_BARRIER_SYNC, turns[0])
    return context.get_dummy_value()


@lower(consumer_turn_give)
def lower_consumer_turn_give(context, builder, sig, args):
    turns = _turns(builder)
    if turns is not None:
        group, groups = turns
        _at_barrier(builder, asm.NAMED_BARRIER_ARRIVE,
                    builder.urem(builder.add(group, I32(1)), I32(groups)))
    return context.get_dummy_value()


@lower(consumer_turns_end)
def lower_consumer_turns_end(context, builder, sig, args):
    turns = _turns(builder)
    if turns is not None:
        with builder.if_then(builder.icmp_unsigned("==", turns[0], I32(0))):
            _at_barrier(builder, asm.NAMED_BARRIER_SYNC, I32(0))
    return context.get_dummy_value()
