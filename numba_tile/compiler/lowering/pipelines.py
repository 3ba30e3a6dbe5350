"""Lowering of the calls of pipelined loads: the copies of each stage are started ahead
(:mod:`~numba_tile.compiler.lowering.async_copies`), waited for, and the tiles read from
their stage (see :mod:`~numba_tile.compiler.planning.staged_loads`)."""

from llvmlite import ir
from numba.core import types
from numba.core.typing import signature
from numba.cuda import cgutils, nvvmutils

from ... import dtypes as d
from ...language import shapes
from ..abstract import constant_of
from ..compile_state import current
from ..intrinsics import pipeline_advance, pipeline_begin, pipeline_distance, pipeline_end, \
    pipeline_issue, pipeline_last, pipeline_prepare, pipeline_produce, pipeline_producer, \
    pipeline_tile, pipeline_wait, resident_produce, resident_release, resident_tile, \
    staged_as_tfloat32, staged_reshape
from ..planning.staged_loads import PipelineType, StagedTileType, grouped_loads
from ..typing.pipelines import plain_load_signature
from . import arithmetic, asm, tma
from .async_copies import issue_copies
from .registry import lower
from .staged_loads import barrier_pointer, stage_of, stage_pointer, staged_to_registers
from .tiles import I32, barrier, block_barrier, fence_async_proxy, make_tile


def _loads(sig, args, start):
    types_, values = list(sig.args[start:]), list(args[start:])
    return grouped_loads(types_), grouped_loads(values)


def _as_bool(context, builder, numba_type, value):
    return context.cast(builder, value, numba_type, types.boolean)


def _produced(pipeline):
    """True where a producer warp issues the pipeline's copies
    (:mod:`~numba_tile.compiler.frontend.producer_warp`)."""
    compilation = current()
    return bool(compilation.producer_warps) and \
        compilation.producer_pipeline == pipeline.pipeline_id


def _produced_residents():
    """The resident tiles (PipelineTypes) whose copies the producer warp starts."""
    compilation = current()
    if not compilation.producer_warps:
        return []
    return [compilation.pipelines[i] for i in sorted(compilation.produced_residents)
            if compilation.pipelines.get(i) is not None and
            compilation.pipelines[i].tensor_maps]


def _runs_counted(builder):
    """A counter of the runs that reach this call, 0 at the kernel's start (each call of
    a resident's copy or wait counts its own: the barriers' phases follow it)."""
    with builder.goto_entry_block():
        counter = builder.alloca(I32)
        builder.store(I32(0), counter)
    run = builder.load(counter)
    builder.store(builder.add(run, I32(1)), counter)
    return run


@lower(pipeline_prepare, types.VarArg(types.Any))
def lower_pipeline_prepare(context, builder, sig, args):
    # (typed by then: the pipeline was planned where its pipeline_begin was typed)
    pipeline = current().pipelines.get(constant_of(sig.args[0]))
    for position in range(1, len(args), 2):  # the items of list arguments, for the copies
        current().list_items[constant_of(sig.args[position])] = [
            builder.extract_value(args[position + 1], item)
            for item in range(sig.args[position + 1].count)]
    if pipeline is not None and pipeline.tensor_maps and not _produced(pipeline):
        # the stages' barriers, ready before the first copy; made once, since making one
        # again is only allowed after invalidating it, and a loop may not have run
        tma.init_barriers(builder, [barrier_pointer(builder, pipeline, I32(stage))
                                    for stage in range(pipeline.stages)])
        barrier(builder)
    return context.get_dummy_value()


@lower(pipeline_begin, types.VarArg(types.Any))
def lower_pipeline_begin(context, builder, sig, args):
    pipeline = sig.return_type
    if pipeline.pipelined and pipeline.pipeline_id in current().pipelines_run_again and \
            not _produced(pipeline):
        # a run after another: the last one's products were waited for by their warpgroups
        # (pipeline_end), its copies past its end zero-filled stages (cp.async): once all of
        # them are done, the stages are free for this run's first copies (a producer warp
        # waits for each stage's "free" barrier instead, over all runs)
        if not pipeline.tensor_maps:
            asm.emit(builder, asm.cp_async_wait(0))
        barrier(builder)
    return context.get_dummy_value()


@lower(pipeline_distance, types.Any)
def lower_pipeline_distance(context, builder, sig, args):
    return I32(sig.args[0].distance)


@lower(pipeline_issue, types.VarArg(types.Any))
def lower_pipeline_issue(context, builder, sig, args):
    pipeline, ahead = sig.args[0], sig.args[1].literal_value
    if pipeline.pipelined and ahead < pipeline.distance and not _produced(pipeline):
        first = context.cast(builder, args[3], sig.args[3], types.int32)
        load_types, load_values = _loads(sig, args, 4)
        issue_copies(context, builder, pipeline, builder.add(first, I32(ahead)),
                     _as_bool(context, builder, sig.args[2], args[2]), load_types,
                     load_values)
    return context.get_dummy_value()


@lower(pipeline_wait, types.Any, types.Any)
def lower_pipeline_wait(context, builder, sig, args):
    pipeline = sig.args[0]
    if pipeline.tensor_maps:
        # the stage's barrier completes once per use of the stage: phases 0, 1, 0, ...
        iteration = context.cast(builder, args[1], sig.args[1], types.int32)
        parity = builder.and_(builder.udiv(iteration, I32(pipeline.stages)), I32(1))
        tma.wait_barrier(builder, barrier_pointer(
            builder, pipeline, stage_of(builder, pipeline, iteration)), parity)
    elif pipeline.pipelined:
        # distance + iteration groups were started: this iteration's is done once at most
        # distance - 1 younger ones are pending
        asm.emit(builder, asm.cp_async_wait(pipeline.distance - 1))
        if current().target >= (9, 0):  # wgmma reads shared memory through the async proxy
            fence_async_proxy(builder)
        # every thread's copies visible; every read of the previous iteration's stage over
        barrier(builder)
    return context.get_dummy_value()


@lower(pipeline_advance, types.VarArg(types.Any))
def lower_pipeline_advance(context, builder, sig, args):
    pipeline = sig.args[0]
    if not pipeline.pipelined:
        return context.get_dummy_value()
    iteration = context.cast(builder, args[1], sig.args[1], types.int32)
    if _produced(pipeline):
        _release_previous(builder, pipeline, iteration)
        return context.get_dummy_value()
    if pipeline.pipeline_id in current().products_in_flight or pipeline.tensor_maps:
        # each warpgroup has waited for its product of the previous iteration (all but the
        # latest), or every thread has read its tiles (the TMA's wait has no barrier): once
        # all have, that stage is free
        barrier(builder)
    ahead = builder.add(iteration, I32(pipeline.distance))
    load_types, load_values = _loads(sig, args, 3)
    issue_copies(context, builder, pipeline, ahead, _as_bool(context, builder, sig.args[2], args[2]),
           load_types, load_values)
    return context.get_dummy_value()


def _release_previous(builder, pipeline, iteration):
    """Every thread tells the producer warp that it is done with the stage of the
    iteration before ``iteration``: where the producer would refill it without one (see
    lower_pipeline_advance), its products of that iteration have been waited for, and its
    reads are over. (An arrival from every thread, where the stage's barrier counts them
    all: one thread's a warp, after the warp's threads meet, measured slower.)"""
    with builder.if_then(builder.icmp_signed(">", iteration, I32(0))):
        stage = stage_of(builder, pipeline, builder.sub(iteration, I32(1)))
        tma.arrive(builder, barrier_pointer(builder, pipeline, stage, free=True))


@lower(pipeline_producer, types.Any)
def lower_pipeline_producer(context, builder, sig, args):
    compilation = current()
    pipeline = compilation.pipelines.get(constant_of(sig.args[0]))
    if pipeline is None or not _produced(pipeline):
        return cgutils.false_bit
    # a stage's copies land: one arrival (the producer's, with the bytes); a stage is
    # free: one from each thread of the tile code (the same for a resident's buffer)
    filled, freed = [], []
    for staged in [pipeline] + _produced_residents():
        for stage in range(staged.stages):
            filled.append(barrier_pointer(builder, staged, I32(stage)))
            freed.append(barrier_pointer(builder, staged, I32(stage), free=True))
    tma.init_barriers(builder, filled + freed,
                      [1] * len(filled) + [32 * compilation.num_warps] * len(freed))
    block_barrier(builder)  # the producer's too: it is the last barrier it comes to
    return builder.icmp_unsigned(">=", nvvmutils.call_sreg(builder, "tid.x"),
                                 I32(32 * compilation.num_warps))


@lower(pipeline_produce, types.VarArg(types.Any))
def lower_pipeline_produce(context, builder, sig, args):
    pipeline = sig.args[0]
    if not _produced(pipeline):
        return context.get_dummy_value()
    iteration = context.cast(builder, args[1], sig.args[1], types.int32)
    load_types, load_values = _loads(sig, args, 2)
    _copy_when_free(context, builder, pipeline, iteration, load_types, load_values)
    return context.get_dummy_value()


def _copy_when_free(context, builder, pipeline, iteration, load_types, load_values):
    """In the producer warp: wait until the consumers are done with the stage of
    ``iteration`` (its last use, ``iteration - stages``), then start its copies from the
    producer's first thread."""
    stage = stage_of(builder, pipeline, iteration)
    with builder.if_then(builder.icmp_signed(">=", iteration, I32(pipeline.stages))):
        # the stage's last use, iteration - stages, is the phase (iteration / stages - 1)
        # of its "free" barrier
        parity = builder.and_(builder.add(builder.udiv(iteration, I32(pipeline.stages)),
                                          I32(1)), I32(1))
        tma.wait_barrier(builder, barrier_pointer(builder, pipeline, stage, free=True),
                         parity)
    issuer = builder.icmp_unsigned("==", nvvmutils.call_sreg(builder, "tid.x"),
                                   I32(32 * current().num_warps))
    issue_copies(context, builder, pipeline, iteration, cgutils.true_bit, load_types,
                 load_values, issuer)


@lower(pipeline_last, types.Any)
def lower_pipeline_last(context, builder, sig, args):
    # the test the loop's header makes next (the iterator's count of values left): where
    # the iteration goes on, LLVM knows the header's test true and leaves it out, so that
    # the loop's one way out is through pipeline_end
    iterator = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    left = builder.load(iterator.count)
    return builder.icmp_signed("<=", left, left.type(0))


@lower(pipeline_end, types.Any, types.Any)
def lower_pipeline_end(context, builder, sig, args):
    # best on the loop's way out alone: a wait where the way that skips the loop joins it
    # would make ptxas serialize every wgmma, and one that ptxas cannot tell is on every way
    # out (inside the loop, under a test) makes it wait for the products in every iteration
    # (on the way out, ``last`` is the constant True: LLVM drops the test)
    if sig.args[0].pipeline_id in current().products_in_flight:
        with builder.if_then(_as_bool(context, builder, sig.args[1], args[1]), likely=False):
            asm.emit(builder, asm.wgmma_wait(0))
    return context.get_dummy_value()


@lower(pipeline_tile, types.VarArg(types.Any))
def lower_pipeline_tile(context, builder, sig, args):
    pipeline, which = sig.args[0], sig.args[1].literal_value
    if pipeline.pipelined:
        iteration = context.cast(builder, args[2], sig.args[2], types.int32)
        return stage_pointer(builder, pipeline, iteration, which)
    load_sig, load = plain_load_signature(*sig.args[3:])
    implementation = context.get_function(load, load_sig)
    order = context.get_dummy_value() if isinstance(sig.args[7], types.NoneType) else args[7]
    return implementation(builder, list(args[3:6]) + [order, args[6]])


@lower(resident_tile, types.VarArg(types.Any))
def lower_resident_tile(context, builder, sig, args):
    if not isinstance(sig.return_type, StagedTileType):
        load_sig, load = plain_load_signature(*sig.args[1:])
        implementation = context.get_function(load, load_sig)
        order = context.get_dummy_value() if isinstance(sig.args[5], types.NoneType) else \
            args[5]
        return implementation(builder, list(args[1:4]) + [order, args[4]])
    resident = current().pipelines[sig.return_type.pipeline_id]
    if resident in _produced_residents():
        # the producer warp's copy of this run: the barrier's phases 0, 1, 0, ...
        parity = builder.and_(_runs_counted(builder), I32(1))
        tma.wait_barrier(builder, barrier_pointer(builder, resident, I32(0)), parity)
        return stage_pointer(builder, resident, I32(0), 0)
    if resident.tensor_maps:  # no producer warp after all: the threads' cp.async copies
        resident = PipelineType(resident.pipeline_id, resident.tiles, 1, resident.ring_end)
    # (run again, as in an outer loop: the products of the last run have read the buffer)
    barrier(builder)
    issue_copies(context, builder, resident, I32(0), ir.Constant(ir.IntType(1), 1),
           [tuple(sig.args[1:])], [tuple(args[1:])])
    # copies of pipelines issued before this one may be pending: wait for all
    asm.emit(builder, asm.cp_async_wait(0))
    if current().target >= (9, 0):
        fence_async_proxy(builder)
    barrier(builder)
    return stage_pointer(builder, resident, I32(0), 0)


@lower(resident_produce, types.VarArg(types.Any))
def lower_resident_produce(context, builder, sig, args):
    resident = current().pipelines.get(constant_of(sig.args[0]))
    if resident not in _produced_residents():
        return context.get_dummy_value()
    # its one stage, used once a run: released by the consumers after the last run's
    _copy_when_free(context, builder, resident, _runs_counted(builder),
                    [tuple(sig.args[1:])], [tuple(args[1:])])
    return context.get_dummy_value()


@lower(resident_release, types.Any)
def lower_resident_release(context, builder, sig, args):
    resident = current().pipelines.get(constant_of(sig.args[0]))
    if resident in _produced_residents():
        # every thread's reads of the buffer are over (its products waited for)
        tma.arrive(builder, barrier_pointer(builder, resident, I32(0), free=True))
    return context.get_dummy_value()


@lower(staged_as_tfloat32, types.Any)
def lower_staged_as_tfloat32(context, builder, sig, args):
    (tile_type,), (value,) = sig.args, args
    if isinstance(sig.return_type, StagedTileType):
        return value  # the same stage: rounded when read
    if isinstance(tile_type, StagedTileType):
        tile_type, value = staged_to_registers(context, builder, tile_type, value)
    return make_tile(context, builder, sig.return_type, [
        arithmetic.convert(context, builder, builder.extract_value(value, r), tile_type.dtype,
                           d.tfloat32) for r in range(tile_type.registers)])


@lower(staged_reshape, types.Any, types.Any)
def lower_staged_reshape(context, builder, sig, args):
    (tile_type, shape_type), (value, shape) = sig.args, args
    if isinstance(sig.return_type, StagedTileType):
        return value  # the same stage
    if isinstance(tile_type, StagedTileType):
        tile_type, value = staged_to_registers(context, builder, tile_type, value)
    reshape = context.get_function(shapes.reshape, signature(sig.return_type, tile_type,
                                                             shape_type))
    return reshape(builder, [value, shape])
