"""The plan of pipelined loads: the tiles that feed ``mma`` in a loop, copied ahead into a
ring of stages; their types, how many stages, where each ring lies and which copies fill it.

:mod:`~numba_tile.compiler.frontend.pipelining` rewrites a loop whose ``ct.load`` results
only feed ``ct.mma`` into calls of :mod:`~numba_tile.compiler.intrinsics`; typing
(:mod:`~numba_tile.compiler.typing.pipelines`) plans their pipeline here, when it first meets
it (:func:`pipeline_type`, :func:`resident_type`), and the lowering follows the plan
(:mod:`~numba_tile.compiler.lowering.pipelines`, the rings' addresses in
:mod:`~numba_tile.compiler.lowering.staged_loads`, the copies in
:mod:`~numba_tile.compiler.lowering.async_copies`). Before the loop, ``pipeline_issue``
starts the copies of the first ``stages - 1`` iterations' tiles; in iteration ``i``,
``pipeline_wait`` waits for iteration ``i``'s copies, ``pipeline_tile`` gives its tiles,
which stay in shared memory (:class:`StagedTileType`) for ``mma`` to read (``ldmatrix``,
``wgmma``), and once the products are started ``pipeline_advance`` starts the copies of
iteration ``i + stages - 1`` into the stage that iteration ``i - 1`` used: the tensor cores
work while the copies are issued. The copies are ``cp.async`` of 16 bytes (zero-filled
outside the array: zero padding), into the swizzled layout of
:func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`; one barrier a step makes every
thread's copies visible and tells that the stage about to be refilled is no longer read. On
sm_90 the tiles of arrays that are kernel parameters are copied by the tensor memory
accelerator instead (:mod:`~numba_tile.compiler.planning.tma`): thread 0 starts a stage's
copies, each stage's ``mbarrier`` tells when they landed, and one barrier a step tells that a
stage is free.

Pipelining applies to tiles of one matrix (2-d, or up to 5-d with every other axis of
length 1) of arrays specialized as aligned (see
:func:`~numba_tile.compiler.types.is_aligned`: then each 16-byte copy lies wholly inside or
outside the array), with zero or undetermined padding, on GPUs with ``cp.async`` (compute
capability 8.0 and later). Elsewhere ``pipeline_tile`` is a plain ``ct.load``.

The rings live at the end of the kernel's dynamic shared memory: its start holds the scratch
buffer every other op shares, whose size is only known once the kernel is lowered, so a ring
is found from the end (``%dynamic_smem_size``), and the launch asks for both
(:attr:`~numba_tile.compiler.compile_state.SharedMemoryPlan.dynamic_bytes`).

>>> import numba_tile as ct
>>> from numba_tile.compiler.planning.staged_loads import PipelineType
>>> ring = PipelineType(0, [(ct.float16, (64, 32), False), (ct.float16, (32, 64), False)], 3, 0)
>>> ring.stage_bytes, ring.ring_bytes, ring.distance
(8192, 24576, 2)
"""

import math

from numba.core import types

from ... import dtypes as d
from ...enums import PaddingMode
from ...rules.memory import normalize_order
from ..abstract import constant_of
from ..intrinsics import LOAD_FIELDS
from ..compile_state import SHARED_ALIGNMENT, FewerStages, aligned_to_stage, current
from ..types import ArrayType, TileType
from . import tma

MAX_STAGES = 8
MOST_STAGES = 4  # chosen where the kernel gives no num_stages
# left for the scratch buffer where the stages are chosen to fill the shared memory: a
# conversion that needs more makes the compile start again (FewerStages)
SCRATCH_FLOOR = 1024
MAX_RANK = 5  # the TMA's, and what the copies take: one matrix, leading axes of length 1
COPY_BYTES = 16  # one cp.async
BARRIER_BYTES = 8  # one mbarrier


# -- types ------------------------------------------------------------------------------------
class PipelineType(types.Type):
    """A loop's pipeline: the tiles it stages (``(dtype, shape, transposed)`` each: a
    transposed tile is held as the array's rows give it, see :class:`StagedTileType`), the
    number of stages (0: not pipelined) and where its ring ends, counted from the end of
    shared memory. ``tensor_maps`` (the slot of each tile's map, see
    :mod:`~numba_tile.compiler.planning.tma`) where the TMA copies the tiles, None where
    ``cp.async`` does; the TMA's stages complete on ``mbarrier`` objects after the stages.
    Its run-time value is empty."""

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
        """The stages, then (TMA) a block of their barriers: one a stage that completes
        when its copies land, then (for a producer warp) one that completes when the
        consumers are done with it."""
        barriers = aligned_to_stage(2 * BARRIER_BYTES * self.stages) if self.tensor_maps \
            else 0
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


LOAD_ARGUMENTS = len(LOAD_FIELDS)


def grouped_loads(loads):
    return [tuple(loads[i:i + LOAD_ARGUMENTS]) for i in range(0, len(loads), LOAD_ARGUMENTS)]


def _transposed(order, ndim):
    """True for a load's ``order`` that swaps the last two axes, False for the array's own
    order, None for any other (or one not known when compiling)."""
    order = constant_of(order, None) if not isinstance(order, types.NoneType) else "C"
    if order is None:
        return None
    order = normalize_order(order, ndim, "load")
    identity = tuple(range(ndim))
    if order == identity:
        return False
    return True if order == identity[:-2] + (ndim - 1, ndim - 2) else None


def _stageable(array, shape, padding_mode, order):
    """``(dtype, shape, transposed)`` of the tile a load gives, where it can be copied
    ahead, else None."""
    mode = constant_of(padding_mode, None)
    shape = constant_of(shape, None)
    if not (isinstance(array, ArrayType) and array.aligned and 2 <= array.ndim <= MAX_RANK
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
    """The number of stages: the kernel's ``num_stages`` option, else at most
    :data:`MOST_STAGES`, as many as fit in the shared memory left (less
    :data:`SCRATCH_FLOOR` for the scratch buffer), or, compiling again after
    :class:`~numba_tile.compiler.compile_state.FewerStages`, in three quarters of it (the
    rest for the scratch buffer); fewer than 2 is no pipelining. ``extra_bytes``: what the
    ring needs besides its stages. (Filling the shared memory gave a 128 x 128 attention
    kernel at head dim 128 three stages where leaving a quarter gave it two, and 0.85 of
    sdpa where two gave it 0.67.)"""
    compilation = current()
    chosen = compilation.num_stages
    budget = compilation.shared.available - extra_bytes
    if chosen is not None:
        return chosen if chosen * stage_bytes <= budget else 0
    leaving_a_quarter = min(MOST_STAGES, (budget * 3 // 4) // stage_bytes)
    if not compilation.stages_fill_shared:
        return leaving_a_quarter if leaving_a_quarter >= 2 else 0
    stages = min(MOST_STAGES, (budget - SCRATCH_FLOOR) // stage_bytes)
    if stages < 2:
        if compilation.stages_past_quarter:  # an earlier ring took what this one needs
            raise FewerStages()
        return 0
    compilation.stages_past_quarter |= stages > leaving_a_quarter
    return stages


def _tensor_map_copies(pipeline_id, tiles, loads):
    """``(parameter, ndim, dtype, stored shape, tfloat32)`` of each tile, where the TMA can
    copy the pipeline's tiles (sm_90, every array an int32-indexed kernel parameter, or an
    item of a list parameter, that allows it, every tile a shape it copies into the
    swizzled layout), else None; ``tfloat32``: a float32 tile only read as tfloat32, which
    the copy rounds. An item of a list has ``(parameter, number of items)``."""
    compilation = current()
    sources = compilation.tensor_map_sources.get(pipeline_id)
    if compilation.target != (9, 0) or not sources or None in sources or \
            len(sources) != len(tiles):
        return None
    if any(array.index_dtype.itemsize != 4 for array, *_ in loads):
        return None  # the TMA's coordinates are int32; int64-indexed arrays use cp.async

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
            maps = copies and [tma.tensor_map_slots(*copy) for copy in copies]
            ring_end = compilation.shared.reserve_ring(
                PipelineType(pipeline_id, tiles, stages, 0, maps).ring_bytes)
    found = PipelineType(pipeline_id, [t for t in tiles if t is not None] if stages else (),
                         stages, ring_end, maps, [copy[-1] for copy in copies or ()])
    compilation.pipelines[pipeline_id] = found
    compilation.choose_automatic_producer(found)
    return found


def resident_type(resident_id, load):
    """The one-stage "pipeline" of a loop-invariant operand (``load``: the types of
    ``(array, index, shape, padding_mode, order)``; with tensor maps where a producer warp
    may copy it, see :func:`~numba_tile.compiler.intrinsics.resident_produce`), or None
    where it stays a plain load:
    it cannot be copied ahead, or its buffer would take more than a quarter of the shared
    memory the rings have left (rings typed later keep their stages). Where every ring and
    every resident numbered before it are planned already (typing met the loops first, as
    in a persistent kernel whose tiles' loop holds the load) on sm_90, what is left
    suffices: ``wgmma`` reads its operands from shared memory, where a plain load's tile
    would be written at every product (a persistent attention kernel ran 27% slower so),
    unless it is A in the layout it reads from registers."""
    compilation = current()
    if resident_id in compilation.pipelines:
        return compilation.pipelines[resident_id]
    tile = _stageable(*load[:1], *load[2:])
    found = None
    if compilation.target >= (8, 0) and tile is not None:
        # the TMA's copy where a producer warp may start it (then with its two barriers)
        copies = _tensor_map_copies(resident_id, [tile], [load]) \
            if resident_id in compilation.produced_residents else None
        maps = copies and [tma.tensor_map_slots(*copy) for copy in copies]
        nbytes = PipelineType(resident_id, [tile], 1, 0, maps).ring_bytes
        planned = compilation.target >= (9, 0) and all(
            earlier in compilation.pipelines for earlier in range(resident_id))
        if nbytes <= compilation.shared.available // (1 if planned else 4):
            found = PipelineType(resident_id, [tile], 1,
                                 compilation.shared.reserve_ring(nbytes), maps)
        elif compilation.stages_past_quarter:  # a ring took the room: leave more
            raise FewerStages()
    compilation.pipelines[resident_id] = found
    return found
