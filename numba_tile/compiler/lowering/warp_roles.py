"""Lowering of the register hand-over between a producer warpgroup and the consumers
(:mod:`~numba_tile.compiler.frontend.producer_warp`).

Where the tile code runs on two warpgroups or more beside a producer warpgroup, the block is
a multiprocessor's only one, and each thread starts with the registers the file holds for
the block's threads: 168 for 384 threads, too few for the accumulators of a 128 x 128
attention block without spills. The producer needs few (it computes indices and starts
copies), so its threads give back all but 24 (``setmaxnreg.dec``) and the consumers take
them (``setmaxnreg.inc``, up to 240 a thread for two warpgroups):
:attr:`~numba_tile.compiler.compilation.Compilation.register_split`. ptxas honours these
only where it knows the registers at the start (the kernel's launch bounds give one block a
multiprocessor), where the two ways never join again (the producer's threads end with
``exit``), and where it compiles the whole program: the driver's compile of the PTX, not
nvJitLink's relocatable one (:func:`~numba_tile.compiler.whole_program.needs_whole_program`).
Elsewhere these lowerings emit nothing.
"""

from numba.cuda import nvvmutils

from ..compilation import current
from ..hardware import asm
from ..intrinsics import consumer_registers, producer_exit, producer_registers
from .registry import lower
from .tiles import I32


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
