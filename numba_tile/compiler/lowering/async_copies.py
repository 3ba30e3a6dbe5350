"""The copies of a pipeline's stage (planned in
:mod:`~numba_tile.compiler.planning.staged_loads`): ``cp.async`` of 16 bytes from every
thread, into the swizzled layout, or on sm_90 the tensor memory accelerator's copies started
by one thread (:mod:`.tma`), which complete on the stage's ``mbarrier``."""

import math

from numba.cuda import nvvmutils

from ..compile_state import current
from ..planning.staged_loads import COPY_BYTES
from ..planning.tma import boxes
from . import asm, tma
from .memory import ArrayView, shifted, tile_indices, tile_origin
from .staged_loads import barrier_pointer, stage_of, stage_pointer
from .tiles import I32, I64, swizzled_offset


def issue_copies(context, builder, pipeline, iteration, valid, load_types, load_values,
                 issuer=None):
    """Start the copies of one iteration's tiles into its stage, as one group; ``issuer``
    (TMA copies): true in the thread that starts them (thread 0 where None)."""
    if pipeline.tensor_maps:
        return _issue_bulk(context, builder, pipeline, iteration, valid, load_types,
                           load_values, issuer)
    tid = nvvmutils.call_sreg(builder, "tid.x")
    threads = 32 * current().num_warps
    for which, ((array_type, index_type, *_), (array, index, *_)) in enumerate(
            zip(load_types, load_values)):
        dtype, shape, transposed = pipeline.tiles[which]
        view, shape, origin = _as_stored(context, builder, array_type, array, index_type,
                                         index, shape, transposed)
        rows, columns = shape[-2:]
        stage = stage_pointer(builder, pipeline, iteration, which)
        per_copy = COPY_BYTES // dtype.itemsize
        copies_per_row = columns // per_copy
        total = rows * copies_per_row
        row_bytes = columns * dtype.itemsize
        rows_per_round = threads // copies_per_row if threads % copies_per_row == 0 else 0
        # rounds of copies a whole number of swizzle atoms apart: the same place in the
        # pattern, so each round only adds constants to the first round's addresses
        steady = rows_per_round and (rows_per_round * min(row_bytes, 128)) % 1024 == 0 \
            and total % threads == 0
        if steady:
            _copy_rounds(builder, view, origin, stage, tid, copies_per_row, per_copy,
                         (rows, columns), dtype.itemsize, valid, rows_per_round,
                         total // threads)
            continue
        for first in range(0, total, threads):
            copy = builder.add(tid, I32(first))
            if total - first < threads:  # the last round: some threads have none
                with builder.if_then(builder.icmp_unsigned("<", copy, I32(total))):
                    _copy(builder, view, origin, stage, copy, copies_per_row, per_copy,
                          (rows, columns), dtype.itemsize, valid)
            else:
                _copy(builder, view, origin, stage, copy, copies_per_row, per_copy,
                      (rows, columns), dtype.itemsize, valid)
    asm.emit(builder, asm.CP_ASYNC_COMMIT)


def _issue_bulk(context, builder, pipeline, iteration, valid, load_types, load_values,
                issuer=None):
    """Start the TMA copies of one iteration's tiles into its stage (one thread alone),
    which complete on the stage's barrier; none past the loop's end."""
    stage_barrier = barrier_pointer(builder, pipeline, stage_of(builder, pipeline,
                                                                    iteration))
    issuer = tma.first_thread(builder) if issuer is None else issuer
    with builder.if_then(builder.and_(valid, issuer)):
        tma.expect_bytes(builder, stage_barrier, sum(
            math.prod(shape) * dtype.itemsize for dtype, shape, _ in pipeline.tiles))
        for which, ((array_type, index_type, *_), (array, index, *_)) in enumerate(
                zip(load_types, load_values)):
            dtype, shape, transposed = pipeline.tiles[which]
            # int32 coordinates, as the TMA takes (it copies only int32-indexed arrays)
            _, shape, origin = _as_stored(context, builder, array_type, array, index_type,
                                          index, shape, transposed)
            box_columns, _, count = boxes(dtype, shape)
            stage = stage_pointer(builder, pipeline, iteration, which)
            for box in range(count):  # 128-byte columns, one after the other
                coordinates = [builder.add(origin[-1], I32(box * box_columns)), origin[-2],
                               *reversed(origin[:-2])]
                target = builder.gep(stage, [I32(box * shape[-2] * box_columns *
                                                 dtype.itemsize)])
                tma.copy_box(builder, pipeline.tensor_maps[which], target, coordinates,
                             stage_barrier, array)


def _as_stored(context, builder, array_type, array, index_type, index, shape, transposed):
    """``(view, shape, origin)`` of a tile as the array holds it, which is how it is copied:
    a transposed tile's last two axes swapped. The origin is found in the tile's own axes
    (each saturated against its own axis' length), then swapped."""
    ndim = len(shape)
    order = tuple(range(ndim))
    tile_order = order[:-2] + (ndim - 1, ndim - 2) if transposed else order
    origin = tile_origin(builder, ArrayView(context, builder, array_type, array, tile_order),
                         tile_indices(context, builder, index_type, index), shape, shape)
    if transposed:
        shape = shape[:-2] + (shape[-1], shape[-2])
        origin = origin[:-2] + [origin[-1], origin[-2]]
    return ArrayView(context, builder, array_type, array, order), shape, origin


def _copy(builder, view, origin, stage, copy, copies_per_row, per_copy, shape, itemsize,
          valid):
    """One 16-byte ``cp.async``: zero-filled where the row or columns lie outside the array
    (aligned arrays: a copy is wholly inside or outside) or the iteration is past the end."""
    row = builder.udiv(copy, I32(copies_per_row))
    column = builder.mul(builder.urem(copy, I32(copies_per_row)), I32(per_copy))
    pointer, inside = view.element(builder, origin[:-2] + [shifted(builder, origin[-2], row),
                                                           shifted(builder, origin[-1], column)])
    offset = builder.mul(swizzled_offset(builder, row, column, shape, itemsize), I32(itemsize))
    _cp_async(builder, builder.gep(stage, [offset]), pointer, builder.and_(inside, valid),
              view.data)


def _copy_rounds(builder, view, origin, stage, tid, copies_per_row, per_copy, shape,
                 itemsize, valid, rows_per_round, rounds):
    """A thread's copies of a tile, one a round, ``rows_per_round`` rows apart: the first
    round's addresses plus constants (and the row's bounds check) for the others."""
    row = builder.udiv(tid, I32(copies_per_row))
    column = builder.mul(builder.urem(tid, I32(copies_per_row)), I32(per_copy))
    first_row = shifted(builder, origin[-2], row)
    pointer, inside = view.element(builder, origin[:-2] + [first_row,
                                                           shifted(builder, origin[-1], column)])
    # every axis but the rows: in bounds for all rounds
    others = origin[:-2] + [view.coordinate(0), shifted(builder, origin[-1], column)]
    _, others_inside = view.element(builder, others)
    others_inside = builder.and_(others_inside, valid)
    row_length = view.shape[-2]
    stride = view.strides[-2]
    step = builder.mul(builder.sext(stride, I64), I64(rows_per_round))
    offset = builder.mul(swizzled_offset(builder, row, column, shape, itemsize), I32(itemsize))
    target = builder.gep(stage, [offset])
    rows, columns = shape
    target_step = rows_per_round * (128 if columns * itemsize % 128 == 0 else
                                    columns * itemsize)
    for round_ in range(rounds):
        if round_:
            pointer = builder.gep(pointer, [step])
            target = builder.gep(target, [I32(target_step)])
            first_row = shifted(builder, first_row, I32(rows_per_round))
            inside = builder.and_(others_inside,
                                  builder.icmp_unsigned("<", first_row, row_length))
        else:
            inside = builder.and_(inside, valid)
        _cp_async(builder, target, pointer, inside, view.data)


def _cp_async(builder, target, source, inside, fallback):
    """``cp.async`` of 16 bytes from ``source`` to ``target`` (shared), or 16 zeros where
    not ``inside`` (reading nothing, from ``fallback``, a valid address)."""
    source = builder.select(inside, source, fallback)
    size = builder.select(inside, I32(COPY_BYTES), I32(0))
    asm.emit(builder, asm.cp_async(COPY_BYTES), [builder.ptrtoint(target, I32),
                                              builder.ptrtoint(source, I64), size])
