"""Pipelined loads: the tiles that feed ``mma`` in a loop, copied ahead into a ring of stages.

:mod:`~numba_tile.compiler.frontend.pipelining` rewrites a loop whose ``ct.load`` results only feed ``ct.mma`` into calls
of the functions below; this module types and lowers them. Before the loop,
:func:`pipeline_issue` starts the copies of the first ``stages - 1`` iterations' tiles; in
iteration ``i``, :func:`pipeline_wait` waits for iteration ``i``'s copies,
:func:`pipeline_tile` gives its tiles, which stay in shared memory (:class:`StagedTileType`)
for ``mma`` to read (``ldmatrix``, ``wgmma``), and once the products are started
:func:`pipeline_advance` starts the copies of iteration ``i + stages - 1`` into the stage
that iteration ``i - 1`` used: the tensor cores work while the copies are issued. The copies are
``cp.async`` of 16 bytes (zero-filled outside the array: zero padding), into the swizzled
layout of :func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`; one barrier a step makes every
thread's copies visible and tells that the stage about to be refilled is no longer read. On
sm_90 the tiles of arrays that are kernel parameters are copied by the tensor memory
accelerator instead (:mod:`~numba_tile.compiler.hardware.tma`): thread 0 starts a stage's copies, each stage's
``mbarrier`` tells when they landed, and one barrier a step tells that a stage is free.

Pipelining applies to tiles of one matrix (2-d, or 3-d with one batch) of arrays specialized as
aligned (see
:func:`~numba_tile.compiler.types.is_aligned`: then each 16-byte copy lies wholly inside or
outside the array), with zero or undetermined padding, on GPUs with ``cp.async`` (compute
capability 8.0 and later). Elsewhere :func:`pipeline_tile` is a plain ``ct.load``.

The rings live at the end of the kernel's dynamic shared memory: its start holds the scratch
buffer every other op shares, whose size is only known once the kernel is lowered, so a ring
is found from the end (``%dynamic_smem_size``), and the launch asks for both
(:attr:`~numba_tile.compiler.compilation.SharedMemoryPlan.dynamic_bytes`).
"""

import math

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.core.typing import signature
from numba.cuda import nvvmutils
from numba.cuda.core import ir as numba_ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.models import register_model
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...enums import PaddingMode
from ...language import matrix
from ...rules.memory import normalize_order
from ..lowering import arithmetic
from . import tma
from ..typing.memory import infer_load
from ..typing.templates import registry
from ..abstract import constant_of
from ..lowering.registry import lower
from ..compilation import SHARED_ALIGNMENT, aligned_to_stage, current
from ..lowering.tiles import I32, I64, barrier, fence_async_proxy, load_shared, make_tile, \
    register_coordinates, shared_base, swizzled_offset, thread_coordinates
from ..types import ArrayType, TileType, storage_scalar_type

I8_SHARED = ir.IntType(8).as_pointer(3)
MAX_STAGES = 8
COPY_BYTES = 16  # one cp.async
BARRIER_BYTES = 8  # one mbarrier


# -- what the rewritten loop calls (never called in Python) -------------------------------------
def pipeline_begin(pipeline_id, *loads):
    """The pipeline of a loop: ``loads`` are ``(array, index, shape, padding_mode, order)``
    of each pipelined load, flattened."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def pipeline_distance(pipeline):
    """How many iterations ahead loads are issued: ``stages - 1``, 0 when not pipelined."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def pipeline_issue(pipeline, ahead, valid, *loads):
    """Before the loop: start the copies of iteration ``ahead`` (a constant) into its stage,
    if ``ahead`` is below the distance; ``valid`` is false past the loop's last iteration."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def pipeline_wait(pipeline, iteration):
    """At the start of iteration ``iteration``: wait until its tiles have landed."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def pipeline_advance(pipeline, iteration, valid, *loads):
    """At the end of iteration ``iteration``, once its products are started: start the
    copies ``distance`` iterations ahead (``loads`` hold their indices) into the stage the
    previous iteration used."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def pipeline_tile(pipeline, which, iteration, array, index, shape, padding_mode, order):
    """Load ``which`` of iteration ``iteration``: a tile in its stage, or a plain load."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def resident_tile(resident_id, array, index, shape, padding_mode, order):
    """A load, before a loop, of a tile that only feeds ``mma`` (such as the queries of
    attention, the same in every iteration): copied once into a buffer of its own in
    shared memory, where the products read it, or a plain load."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def staged_as_tfloat32(tile):
    """``tile.astype(ct.tfloat32)`` of a pipelined load: a float32 tile stays in its stage,
    rounded to tfloat32 where ``mma`` reads it."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


def pipeline_end(pipeline, last):
    """At the end of each iteration: after the ``last`` one, the products still running on
    the pipeline's tiles are waited for."""
    raise NotImplementedError("pipelines only exist in compiled tile code")


# -- types ------------------------------------------------------------------------------------
class PipelineType(types.Type):
    """A loop's pipeline: the tiles it stages (``(dtype, shape, transposed)`` each: a
    transposed tile is held as the array's rows give it, see :class:`StagedTileType`), the
    number of stages (0: not pipelined) and where its ring ends, counted from the end of
    shared memory. ``tensor_maps`` (the slot of each tile's map, see :mod:`~numba_tile.compiler.hardware.tma`)
    where the TMA copies the tiles, None where ``cp.async`` does; the TMA's stages complete
    on ``mbarrier`` objects after the stages. Its run-time value is empty."""

    def __init__(self, pipeline_id, tiles, stages, ring_end, tensor_maps=None, rounded=()):
        self.pipeline_id, self.tiles, self.stages, self.ring_end = \
            pipeline_id, tuple(tiles), stages, ring_end
        self.tensor_maps = tuple(tensor_maps) if tensor_maps else None
        # for each float32 tile, True where the TMA rounds it to tfloat32 as it copies
        self.rounded = tuple(rounded) if self.tensor_maps else (False,) * len(self.tiles)
        offsets, offset = [], 0
        for dtype, shape, _ in self.tiles:
            offsets.append(offset)
            offset += aligned_to_stage(math.prod(shape) * dtype.itemsize)
        self.offsets, self.stage_bytes = tuple(offsets), offset
        copies = f", TMA maps {self.tensor_maps}, rounded {self.rounded}" \
            if self.tensor_maps else ""
        super().__init__(name=f"Pipeline#{pipeline_id}({stages} stages, {self.tiles}, "
                              f"ring ends {ring_end} bytes from the end{copies})")

    @property
    def ring_bytes(self):
        """The stages, then (TMA) a block of their barriers."""
        barriers = aligned_to_stage(BARRIER_BYTES * self.stages) if self.tensor_maps else 0
        return self.stages * self.stage_bytes + barriers

    @property
    def pipelined(self):
        return self.stages > 1

    @property
    def distance(self):
        """How many iterations ahead the copies run: ``stages - 1``, 0 when not
        pipelined."""
        return self.stages - 1 if self.pipelined else 0


class StagedTileType(types.Type):
    """A tile that a pipelined load left in its shared-memory stage, swizzled (see
    :func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`); ``mma`` reads it from there. Its
    run-time value is the shared-memory address of its first byte. A tfloat32 tile may hold
    float32 elements (``stored``), rounded by whoever reads them. A ``transposed`` tile (of a
    load with ``order=(1, 0)``) is stored as its transpose, :attr:`stored_shape`: the rows
    of the array, as they were copied."""

    def __init__(self, dtype, shape, num_warps, pipeline_id, stored=None, transposed=False):
        self.dtype, self.shape, self.num_warps = dtype, tuple(shape), num_warps
        self.pipeline_id, self.transposed = pipeline_id, transposed
        # the dtype of the stage's elements: float32 for a tfloat32 tile rounded on reading
        self.stored = stored or dtype
        kept = "" if self.stored is dtype else f", stored as {self.stored}"
        kept += ", transposed" if transposed else ""
        super().__init__(name=f"StagedTile({dtype}, {self.shape}, warps={num_warps}, "
                              f"pipeline#{pipeline_id}{kept})")

    @property
    def stored_shape(self):
        """The shape of the matrix in the stage: the tile's, or its transpose."""
        if not self.transposed:
            return self.shape
        return self.shape[:-2] + (self.shape[-1], self.shape[-2])

    @property
    def ndim(self):
        return len(self.shape)

    def as_tile(self):
        """The same tile in registers, in the layout a load gives it."""
        return TileType(self.dtype, self.shape, self.num_warps)

    def describe(self):
        return f"{self.dtype} tile of shape {self.shape}"


register_model(PipelineType)(models.OpaqueModel)


@register_model(StagedTileType)
class StagedTileModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, I8_SHARED)


# -- typing -------------------------------------------------------------------------------------
def runs_on(x_type, y_type, acc_type, pipelines):
    """The id of the pipeline whose stages both operands of ``mma(x, y, acc)`` are in, where
    the product (a ``wgmma``) may run on while the iteration's copies start (until the next
    iteration's product is started), else None. ``pipelines``: the compilation's, by id."""
    from .mma_sync import plan
    if not (isinstance(x_type, StagedTileType) and isinstance(y_type, StagedTileType) and
            x_type.pipeline_id == y_type.pipeline_id) or x_type.transposed:
        return None  # (a transposed A is read into registers and written to scratch)
    pipeline = pipelines.get(x_type.pipeline_id)
    if pipeline is None or not pipeline.pipelined:
        return None
    found = plan(x_type, y_type, acc_type)
    if found is None or not found.instruction.startswith("wgmma"):
        return None
    return pipeline.pipeline_id


@register_pass(mutates_CFG=False, analysis_only=True)
class FindProductsInFlight(FunctionPass):
    """Once the kernel is typed, record in the compilation the pipelines whose products run
    on into the next iteration (:func:`runs_on`): the lowering of the pipeline's calls,
    which come before the product in the loop, waits accordingly."""

    _name = "numba_tile_find_products_in_flight"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        compilation = current()
        for block in state.func_ir.blocks.values():
            for statement in block.body:
                expr = statement.value if isinstance(statement, numba_ir.Assign) else None
                if not (isinstance(expr, numba_ir.Expr) and expr.op == "call") or getattr(
                        state.typemap.get(expr.func.name), "typing_key", None) is not matrix.mma:
                    continue
                found = runs_on(*state.calltypes[expr].args[:3], compilation.pipelines)
                if found is not None:
                    compilation.products_in_flight.add(found)
        return False


LOAD_ARGUMENTS = 5  # array, index, shape, padding_mode, order


def _grouped(loads):
    return [tuple(loads[i:i + LOAD_ARGUMENTS]) for i in range(0, len(loads), LOAD_ARGUMENTS)]


def _transposed(order, ndim):
    """True for a load's ``order`` that swaps the last two axes, False for the array's own
    order, None for any other (or one not known when compiling)."""
    order = constant_of(order, None) if not isinstance(order, types.NoneType) else "C"
    if order is None:
        return None
    order = normalize_order(order, ndim)
    identity = tuple(range(ndim))
    if order == identity:
        return False
    return True if order == identity[:-2] + (ndim - 1, ndim - 2) else None


def _stageable(array, shape, padding_mode, order):
    """``(dtype, shape, transposed)`` of the tile a load gives, where it can be copied
    ahead, else None."""
    mode = constant_of(padding_mode, None)
    shape = constant_of(shape, None)
    if not (isinstance(array, ArrayType) and array.aligned and array.ndim in (2, 3)
            and isinstance(shape, tuple) and len(shape) == array.ndim
            and all(n == 1 for n in shape[:-2])
            and mode in (None, PaddingMode.UNDETERMINED, PaddingMode.ZERO)):
        return None
    transposed = _transposed(order, array.ndim)
    if transposed is None:
        return None
    itemsize = array.dtype.itemsize
    # the rows as copied: the array's
    rows, columns = shape[-2:] if not transposed else shape[:-3:-1]
    # whole 16-byte copies; tile extents are powers of two
    if itemsize not in (1, 2, 4, 8) or columns * itemsize % COPY_BYTES or rows < 1:
        return None
    return array.dtype, shape, transposed


def _stage_count(stage_bytes, extra_bytes=0):
    """The number of stages: the kernel's ``num_stages`` option, else as many as fit in
    three quarters of the GPU's shared memory (the rest for the scratch buffer), at most 4;
    fewer than 2 is no pipelining. ``extra_bytes``: what the ring needs besides its
    stages."""
    chosen = current().num_stages
    budget = current().shared.available - extra_bytes
    if chosen is not None:
        return chosen if chosen * stage_bytes <= budget else 0
    stages = min(4, (budget * 3 // 4) // stage_bytes)
    return stages if stages >= 2 else 0


def _tensor_map_copies(pipeline_id, tiles, loads):
    """``(parameter, ndim, dtype, stored shape, tfloat32)`` of each tile, where the TMA can
    copy the pipeline's tiles (sm_90, every array a kernel parameter that allows it, every
    tile a shape it copies into the swizzled layout), else None; ``tfloat32``: a float32
    tile only read as tfloat32, which the copy rounds."""
    compilation = current()
    sources = compilation.tensor_map_sources.get(pipeline_id)
    if compilation.target != (9, 0) or not sources or None in sources or \
            len(sources) != len(tiles):
        return None
    stored = [shape[:-2] + ((shape[-1], shape[-2]) if transposed else shape[-2:])
              for _, shape, transposed in tiles]
    if any(tma.boxes(dtype, shape) is None
           for (dtype, _, _), shape in zip(tiles, stored)):
        return None
    rounded = compilation.tensor_map_rounding.get(pipeline_id) or [False] * len(tiles)
    return [(parameter, array.ndim, dtype, shape, dtype is d.float32 and rounds)
            for parameter, (array, *_), (dtype, _, _), shape, rounds
            in zip(sources, loads, tiles, stored, rounded)]


def pipeline_type(pipeline_id, loads):
    """The pipeline of ``loads`` (``(array, index, shape, padding_mode)`` types each),
    planned (its ring reserved in the compilation's shared memory) when first typed."""
    compilation = current()
    if pipeline_id in compilation.pipelines:
        return compilation.pipelines[pipeline_id]
    tiles = [_stageable(array, shape, mode, order) for array, _, shape, mode, order in loads]
    stages, ring_end, maps, copies = 0, compilation.shared.ring_bytes, None, None
    if compilation.target >= (8, 0) and tiles and all(t is not None for t in tiles):
        stage_bytes = PipelineType(pipeline_id, tiles, 0, 0).stage_bytes
        copies = _tensor_map_copies(pipeline_id, tiles, loads)
        stages = _stage_count(stage_bytes, SHARED_ALIGNMENT if copies else 0)
        if stages > 1:
            maps = copies and [tma.tensor_map_slot(*copy) for copy in copies]
            ring_end = compilation.shared.reserve_ring(
                PipelineType(pipeline_id, tiles, stages, 0, maps).ring_bytes)
    found = PipelineType(pipeline_id, [t for t in tiles if t is not None] if stages else (),
                         stages, ring_end, maps, [copy[-1] for copy in copies or ()])
    compilation.pipelines[pipeline_id] = found
    return found


def resident_type(resident_id, load):
    """The one-stage "pipeline" of a loop-invariant operand (``load``: the types of
    ``(array, index, shape, padding_mode, order)``), or None where it stays a plain load:
    it cannot be copied ahead, or its buffer would take more than a quarter of the shared
    memory the rings have left."""
    compilation = current()
    if resident_id in compilation.pipelines:
        return compilation.pipelines[resident_id]
    tile = _stageable(*load[:1], *load[2:])
    found = None
    if compilation.target >= (8, 0) and tile is not None:
        nbytes = PipelineType(resident_id, [tile], 1, 0).stage_bytes
        if nbytes <= compilation.shared.available // 4:
            found = PipelineType(resident_id, [tile], 1,
                                 compilation.shared.reserve_ring(nbytes))
    compilation.pipelines[resident_id] = found
    return found


class _PipelineTemplate(AbstractTemplate):
    prefer_literal = True


@registry.register_global(pipeline_begin)
class PipelineBeginTemplate(_PipelineTemplate):
    key = pipeline_begin

    def generic(self, args, kws):
        pipeline_id = constant_of(args[0])
        return signature(pipeline_type(pipeline_id, _grouped(args[1:])), *args)


def _register_fixed_result(fn, result):
    """A template typing every call of ``fn`` as returning ``result``."""
    class Template(_PipelineTemplate):
        key = fn

        def generic(self, args, kws):
            return signature(result, *args)
    Template.__name__ = f"Pipeline_{fn.__name__}"
    registry.register_global(fn)(Template)


for _fn, _result in ((pipeline_distance, types.int32), (pipeline_wait, types.none),
                     (pipeline_advance, types.none), (pipeline_end, types.none)):
    _register_fixed_result(_fn, _result)


@registry.register_global(pipeline_issue)
class PipelineIssueTemplate(_PipelineTemplate):
    key = pipeline_issue

    def generic(self, args, kws):
        if not isinstance(args[1], types.IntegerLiteral):
            return None
        return signature(types.none, *args)


@registry.register_global(pipeline_tile)
class PipelineTileTemplate(_PipelineTemplate):
    key = pipeline_tile

    def generic(self, args, kws):
        pipeline, which, _, array, index, shape, mode, order = args
        if not isinstance(which, types.IntegerLiteral):
            return None
        if pipeline.pipelined:
            dtype, tile_shape, transposed = pipeline.tiles[which.literal_value]
            # (a tile the TMA rounded holds tfloat32 values, read only as such)
            result = StagedTileType(dtype, tile_shape, current().num_warps,
                                    pipeline.pipeline_id, transposed=transposed,
                                    stored=d.tfloat32 if pipeline.rounded[which.literal_value]
                                    else None)
        else:
            result = _plain_load_signature(array, index, shape, mode, order)[0].return_type
        return signature(result, *args)


@registry.register_global(resident_tile)
class ResidentTileTemplate(_PipelineTemplate):
    key = resident_tile

    def generic(self, args, kws):
        resident = resident_type(constant_of(args[0]), args[1:])
        if resident is None:
            result = _plain_load_signature(*args[1:])[0].return_type
        else:
            dtype, tile_shape, transposed = resident.tiles[0]
            result = StagedTileType(dtype, tile_shape, current().num_warps,
                                    resident.pipeline_id, transposed=transposed)
        return signature(result, *args)


@registry.register_global(staged_as_tfloat32)
class StagedAsTfloat32Template(_PipelineTemplate):
    key = staged_as_tfloat32

    def generic(self, args, kws):
        (tile,) = args
        if isinstance(tile, StagedTileType) and tile.dtype is d.float32:
            # rounded where read, unless the copy rounded it
            stored = d.tfloat32 if tile.stored is d.tfloat32 else d.float32
            return signature(StagedTileType(d.tfloat32, tile.shape, tile.num_warps,
                                            tile.pipeline_id, stored=stored,
                                            transposed=tile.transposed), tile)
        if isinstance(tile, StagedTileType):
            tile = tile.as_tile()
        if isinstance(tile, TileType):  # an astype of the tile in registers
            return signature(tile.with_dtype(d.tfloat32), *args)
        return None


def _plain_load_signature(array, index, shape, mode, order):
    from ...language import memory
    mode = types.Omitted(PaddingMode.UNDETERMINED) if isinstance(mode, types.NoneType) \
        else mode
    order = types.Omitted("C") if isinstance(order, types.NoneType) else order
    result = infer_load({"array": array, "index": index, "shape": shape,
                                      "order": order, "padding_mode": mode})
    return signature(result, array, index, shape, order, mode), memory.load


# -- lowering -----------------------------------------------------------------------------------
def _asm(builder, text, constraints="", args=(), result=ir.VoidType(), side_effect=True):
    return builder.asm(ir.FunctionType(result, [a.type for a in args]), text,
                       constraints, list(args), side_effect=side_effect)


def _ring_pointer(builder, pipeline):
    """The shared-memory address of the pipeline's first stage."""
    # the same in every thread and all along: no side effect, so it is read once
    size = _asm(builder, "mov.u32 $0, %dynamic_smem_size;", "=r", result=I32,
                side_effect=False)
    return builder.gep(shared_base(builder), [builder.sub(size, I32(pipeline.ring_end))])


def _stage_of(builder, pipeline, iteration):
    iteration = builder.trunc(iteration, I32) if iteration.type.width > 32 else iteration
    return builder.urem(iteration, I32(pipeline.stages))


def _stage_pointer(builder, pipeline, iteration, which):
    """The shared-memory address of load ``which`` in the stage of ``iteration``."""
    offset = builder.add(builder.mul(_stage_of(builder, pipeline, iteration),
                                     I32(pipeline.stage_bytes)), I32(pipeline.offsets[which]))
    return builder.gep(_ring_pointer(builder, pipeline), [offset])


def _barrier_pointer(builder, pipeline, stage):
    """The ``mbarrier`` of ``stage`` (a TMA pipeline's), after the stages."""
    offset = builder.add(I32(pipeline.stages * pipeline.stage_bytes),
                         builder.mul(stage, I32(BARRIER_BYTES)))
    return builder.gep(_ring_pointer(builder, pipeline), [offset])


def _issue(context, builder, pipeline, iteration, valid, load_types, load_values):
    """Start the copies of one iteration's tiles into its stage, as one group."""
    from ..lowering.memory import ArrayView, _tile_indices, tile_origin
    if pipeline.tensor_maps:
        return _issue_bulk(context, builder, pipeline, iteration, valid, load_types,
                           load_values)
    tid = nvvmutils.call_sreg(builder, "tid.x")
    threads = 32 * current().num_warps
    for which, ((array_type, index_type, *_), (array, index, *_)) in enumerate(
            zip(load_types, load_values)):
        dtype, shape, transposed = pipeline.tiles[which]
        view = ArrayView(context, builder, array_type, array, tuple(range(len(shape))))
        origin = tile_origin(builder, _tile_indices(context, builder, index_type, index),
                             shape)
        if transposed:  # copied as the array holds it: the tile's last two axes swapped
            shape = shape[:-2] + (shape[-1], shape[-2])
            origin = origin[:-2] + [origin[-1], origin[-2]]
        rows, columns = shape[-2:]
        stage = _stage_pointer(builder, pipeline, iteration, which)
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
    _asm(builder, "cp.async.commit_group;", "~{memory}")


def _issue_bulk(context, builder, pipeline, iteration, valid, load_types, load_values):
    """Start the TMA copies of one iteration's tiles into its stage (thread 0 alone), which
    complete on the stage's barrier; none past the loop's end."""
    from ..lowering.memory import _tile_indices, tile_origin
    barrier_pointer = _barrier_pointer(builder, pipeline, _stage_of(builder, pipeline,
                                                                    iteration))
    with builder.if_then(builder.and_(valid, tma.first_thread(builder))):
        tma.expect_bytes(builder, barrier_pointer, sum(
            math.prod(shape) * dtype.itemsize for dtype, shape, _ in pipeline.tiles))
        for which, ((_, index_type, *_), (_, index, *_)) in enumerate(
                zip(load_types, load_values)):
            dtype, shape, transposed = pipeline.tiles[which]
            origin = tile_origin(builder, _tile_indices(context, builder, index_type, index),
                                 shape)
            if transposed:  # copied as the array holds it: the tile's last two axes swapped
                shape = shape[:-2] + (shape[-1], shape[-2])
                origin = origin[:-2] + [origin[-1], origin[-2]]
            box_columns, _, count = tma.boxes(dtype, shape)
            stage = _stage_pointer(builder, pipeline, iteration, which)
            for box in range(count):  # 128-byte columns, one after the other
                coordinates = [builder.add(origin[-1], I32(box * box_columns)), origin[-2],
                               *reversed(origin[:-2])]
                target = builder.gep(stage, [I32(box * shape[-2] * box_columns *
                                                 dtype.itemsize)])
                tma.copy_box(builder, pipeline.tensor_maps[which], target,
                                     coordinates, barrier_pointer)


def _copy(builder, view, origin, stage, copy, copies_per_row, per_copy, shape, itemsize,
          valid):
    """One 16-byte ``cp.async``: zero-filled where the row or columns lie outside the array
    (aligned arrays: a copy is wholly inside or outside) or the iteration is past the end."""
    row = builder.udiv(copy, I32(copies_per_row))
    column = builder.mul(builder.urem(copy, I32(copies_per_row)), I32(per_copy))
    pointer, inside = view.element(builder, origin[:-2] + [builder.add(origin[-2], row),
                                                           builder.add(origin[-1], column)])
    offset = builder.mul(swizzled_offset(builder, row, column, shape, itemsize), I32(itemsize))
    _cp_async(builder, builder.gep(stage, [offset]), pointer, builder.and_(inside, valid),
              view.data)


def _copy_rounds(builder, view, origin, stage, tid, copies_per_row, per_copy, shape,
                 itemsize, valid, rows_per_round, rounds):
    """A thread's copies of a tile, one a round, ``rows_per_round`` rows apart: the first
    round's addresses plus constants (and the row's bounds check) for the others."""
    row = builder.udiv(tid, I32(copies_per_row))
    column = builder.mul(builder.urem(tid, I32(copies_per_row)), I32(per_copy))
    first_row = builder.add(origin[-2], row)
    pointer, inside = view.element(builder, origin[:-2] + [first_row,
                                                           builder.add(origin[-1], column)])
    # every axis but the rows: in bounds for all rounds
    others = origin[:-2] + [I32(0), builder.add(origin[-1], column)]
    _, others_inside = view.element(builder, others)
    others_inside = builder.and_(others_inside, valid)
    row_length = view.shape[-2]
    row_length = builder.trunc(row_length, I32) if row_length.type.width > 32 else row_length
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
            first_row = builder.add(first_row, I32(rows_per_round))
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
    _asm(builder, f"cp.async.cg.shared.global [$0], [$1], {COPY_BYTES}, $2;",
         "r,l,r,~{memory}", [builder.ptrtoint(target, I32), builder.ptrtoint(source, I64),
                             size])


def _loads(sig, args, start):
    types_, values = list(sig.args[start:]), list(args[start:])
    return _grouped(types_), _grouped(values)


def _as_bool(context, builder, numba_type, value):
    return context.cast(builder, value, numba_type, types.boolean)


@lower(pipeline_begin, types.VarArg(types.Any))
def lower_pipeline_begin(context, builder, sig, args):
    pipeline = sig.return_type
    if pipeline.tensor_maps:  # the stages' barriers, ready before the first copy
        tma.init_barriers(builder, [_barrier_pointer(builder, pipeline, I32(stage))
                                            for stage in range(pipeline.stages)])
        barrier(builder)
    return context.get_dummy_value()


@lower(pipeline_distance, types.Any)
def lower_pipeline_distance(context, builder, sig, args):
    return I32(sig.args[0].distance)


@lower(pipeline_issue, types.VarArg(types.Any))
def lower_pipeline_issue(context, builder, sig, args):
    pipeline, ahead = sig.args[0], sig.args[1].literal_value
    if pipeline.pipelined and ahead < pipeline.distance:
        load_types, load_values = _loads(sig, args, 3)
        _issue(context, builder, pipeline, I32(ahead),
               _as_bool(context, builder, sig.args[2], args[2]), load_types, load_values)
    return context.get_dummy_value()


@lower(pipeline_wait, types.Any, types.Any)
def lower_pipeline_wait(context, builder, sig, args):
    pipeline = sig.args[0]
    if pipeline.tensor_maps:
        # the stage's barrier completes once per use of the stage: phases 0, 1, 0, ...
        iteration = context.cast(builder, args[1], sig.args[1], types.int32)
        parity = builder.and_(builder.udiv(iteration, I32(pipeline.stages)), I32(1))
        tma.wait_barrier(builder, _barrier_pointer(
            builder, pipeline, _stage_of(builder, pipeline, iteration)), parity)
    elif pipeline.pipelined:
        # distance + iteration groups were started: this iteration's is done once at most
        # distance - 1 younger ones are pending
        _asm(builder, f"cp.async.wait_group {pipeline.distance - 1};", "~{memory}")
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
    if pipeline.pipeline_id in current().products_in_flight or pipeline.tensor_maps:
        # each warpgroup has waited for its product of the previous iteration (all but the
        # latest), or every thread has read its tiles (the TMA's wait has no barrier): once
        # all have, that stage is free
        barrier(builder)
    ahead = builder.add(iteration, I32(pipeline.distance))
    load_types, load_values = _loads(sig, args, 3)
    _issue(context, builder, pipeline, ahead, _as_bool(context, builder, sig.args[2], args[2]),
           load_types, load_values)
    return context.get_dummy_value()


@lower(pipeline_end, types.Any, types.Any)
def lower_pipeline_end(context, builder, sig, args):
    # inside the loop: waiting after it, where the path that skips the loop joins, would
    # make ptxas serialize every wgmma
    if sig.args[0].pipeline_id in current().products_in_flight:
        with builder.if_then(_as_bool(context, builder, sig.args[1], args[1]), likely=False):
            _asm(builder, "wgmma.wait_group.sync.aligned 0;", "~{memory}")
    return context.get_dummy_value()


@lower(pipeline_tile, types.VarArg(types.Any))
def lower_pipeline_tile(context, builder, sig, args):
    pipeline, which = sig.args[0], sig.args[1].literal_value
    if pipeline.pipelined:
        iteration = context.cast(builder, args[2], sig.args[2], types.int32)
        return _stage_pointer(builder, pipeline, iteration, which)
    load_sig, load = _plain_load_signature(*sig.args[3:])
    implementation = context.get_function(load, load_sig)
    order = context.get_dummy_value() if isinstance(sig.args[7], types.NoneType) else args[7]
    return implementation(builder, list(args[3:6]) + [order, args[6]])


@lower(resident_tile, types.VarArg(types.Any))
def lower_resident_tile(context, builder, sig, args):
    if not isinstance(sig.return_type, StagedTileType):
        load_sig, load = _plain_load_signature(*sig.args[1:])
        implementation = context.get_function(load, load_sig)
        order = context.get_dummy_value() if isinstance(sig.args[5], types.NoneType) else \
            args[5]
        return implementation(builder, list(args[1:4]) + [order, args[4]])
    resident = current().pipelines[sig.return_type.pipeline_id]
    # (run again, as in an outer loop: the products of the last run have read the buffer)
    barrier(builder)
    _issue(context, builder, resident, I32(0), ir.Constant(ir.IntType(1), 1),
           [tuple(sig.args[1:])], [tuple(args[1:])])
    # copies of pipelines issued before this one may be pending: wait for all
    _asm(builder, "cp.async.wait_group 0;", "~{memory}")
    if current().target >= (9, 0):
        fence_async_proxy(builder)
    barrier(builder)
    return _stage_pointer(builder, resident, I32(0), 0)


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


def staged_to_registers(context, builder, staged_type, pointer):
    """``(tile type, value)`` of a staged tile read into registers (for the ops that do not
    read shared memory themselves)."""
    tile_type = staged_type.as_tile()
    element = context.get_value_type(storage_scalar_type(staged_type.stored))
    typed = builder.bitcast(pointer, element.as_pointer(3))
    base = thread_coordinates(builder, tile_type.layout)
    values = []
    for register in range(tile_type.registers):
        row, column = register_coordinates(builder, base, tile_type.layout, register)[-2:]
        if staged_type.transposed:
            row, column = column, row
        index = swizzled_offset(builder, row, column, staged_type.stored_shape[-2:],
                                staged_type.dtype.itemsize)
        value = load_shared(builder, builder.gep(typed, [index]), element)
        values.append(arithmetic.convert(context, builder, value, staged_type.stored,
                                         staged_type.dtype))
    return tile_type, make_tile(context, builder, tile_type, values)
