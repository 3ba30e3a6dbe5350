"""A float8 product's sums carried from one iteration of its k-loop to the next.

Without ``use_fast_acc``, the sums of a float8 ``wgmma`` call are added to the float32
accumulator by the threads (:func:`~numba_tile.compiler.hardware.wgmma.promotes`): each
64-column block's products run into fresh registers, and a block's sums are added once the
next block's products have started. The last block of a call has no next block in that
call, so waiting for it there leaves the tensor cores idle while the threads add. In a
pipelined k-loop with one such product, its last block's sums are instead carried into the
next iteration and added there once that iteration's first block has started; the last
iteration of each run of the loop adds them at once.

What crosses the iteration is kept in stack slots of the kernel (LLVM promotes them to
registers): the carried sums, and whether the iteration is the first or last of the run,
which :func:`~numba_tile.compiler.intrinsics.pipeline_wait` stores at the iteration's start.
"""

from llvmlite import ir
from numba.core import cgutils

from ..compilation import current

F32 = ir.FloatType()
BIT = ir.IntType(1)


def carries(pipeline_id):
    """True where the one float8 product of pipeline ``pipeline_id`` carries its sums."""
    return pipeline_id in current().carried_promotions


def _slots(builder, key, make):
    """The stack slots ``key`` of the function being lowered (made once, in its entry)."""
    slots = current().promotion_slots
    key = (builder.function.name, *key)
    if key not in slots:
        slots[key] = make()
    return slots[key]


def store_place_in_run(builder, pipeline_id, first, last):
    """At the start of an iteration: whether it is the first (``first``, an i1) and the
    last (``last``) of this run of the loop."""
    first_slot, last_slot = _slots(builder, (pipeline_id, "place"), lambda: (
        cgutils.alloca_once(builder, BIT), cgutils.alloca_once(builder, BIT)))
    builder.store(first, first_slot)
    builder.store(last, last_slot)


def place_in_run(builder, pipeline_id):
    """``(first, last)`` of the iteration (i1 values; see :func:`store_place_in_run`)."""
    slots = _slots(builder, (pipeline_id, "place"), lambda: (
        cgutils.alloca_once(builder, BIT), cgutils.alloca_once(builder, BIT)))
    return tuple(builder.load(slot) for slot in slots)


def carried_in(builder, pipeline_id, count, first):
    """The ``count`` sums the previous iteration carried: zeros in the first iteration of a
    run (nothing was carried)."""
    slots = _carried_slots(builder, pipeline_id, count)
    zero = ir.Constant(F32, 0.0)
    return [builder.select(first, zero, builder.load(slot)) for slot in slots]


def carry_out(builder, pipeline_id, values):
    """Keep ``values``, sums still being computed, for the next iteration."""
    for slot, value in zip(_carried_slots(builder, pipeline_id, len(values)), values):
        builder.store(value, slot)


def _carried_slots(builder, pipeline_id, count):
    return _slots(builder, (pipeline_id, "sums", count),
                  lambda: [cgutils.alloca_once(builder, F32) for _ in range(count)])
