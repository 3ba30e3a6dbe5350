"""The functions the frontend's rewrites call in tile code: each is typed in :mod:`.typing`
and lowered in :mod:`.lowering` like a public op, and never runs in Python (a call outside
compiled code raises ``TileInternalError``). One place for all of them, found by name, as
numba-cuda keeps its stubs (``stubs``, ``cudadecl``, ``cudaimpl``).

>>> from numba_tile.compiler import intrinsics
>>> intrinsics.product_wait(None, 0)
Traceback (most recent call last):
...
numba_tile.errors.TileInternalError: product_wait only exists in compiled tile code
"""

from ..errors import TileInternalError


# what the calls of a pipeline pass for each of its loads, one load after the other: the
# arguments of its ``ct.load`` (None where the call gives none)
LOAD_FIELDS = ("array", "index", "shape", "padding_mode", "order")


def _only_compiled(name):
    return TileInternalError(f"{name} only exists in compiled tile code")


# -- Device output (:mod:`.frontend.device_output`) ----------------------------------------
def device_print(sep, end, *values):
    """What ``print(*values, sep=sep, end=end)`` of tile code becomes (never called)."""
    raise _only_compiled("device_print")


def device_assert(condition, message, where):
    """What ``ct.assert_(condition, message)`` becomes; ``where`` is ``"file:line"``."""
    raise _only_compiled("device_assert")


# -- Index tiles in place (:mod:`.frontend.index_layouts`) ---------------------------------
def arange_in_layout(size, /, *, dtype, start=0, step=1, layout_key=None):
    """``ct.arange(size, dtype=dtype, start=start, step=step)`` in the layout that
    ``layout_key`` names."""
    raise _only_compiled("arange_in_layout")


# -- Deferred products (:mod:`.frontend.deferred_products`) --------------------------------
def deferred_mma(x, y, /, acc, *, use_fast_acc=False):
    """``ct.mma(x, y, acc)`` committed on the tensor cores and not waited for."""
    raise _only_compiled("deferred_mma")


def product_wait(tile, pending):
    """``tile`` (the result of a :func:`deferred_mma`) once at most ``pending`` (a constant)
    younger products still run."""
    raise _only_compiled("product_wait")


def products_retired(pending):
    """Wait until at most ``pending`` (a constant) products still run."""
    raise _only_compiled("products_retired")


# -- Pipelined loads (:mod:`.frontend.pipelining`, planned by :mod:`.planning.staged_loads`) ---
def pipeline_prepare(pipeline_id, *lists):
    """At the kernel's start: the stages' barriers of pipeline ``pipeline_id`` made ready,
    once (their phases carry on from one run of the loop to the next). ``lists``: pairs of
    ``(parameter number, list argument)`` whose items the TMA copies from."""
    raise _only_compiled("pipeline_prepare")


def pipeline_begin(pipeline_id, *loads):
    """The pipeline of a loop, before each run of it: ``loads`` are ``(array, index, shape,
    padding_mode, order)`` of each pipelined load, flattened."""
    raise _only_compiled("pipeline_begin")


def pipeline_distance(pipeline):
    """How many iterations ahead loads are issued: ``stages - 1``, 0 when not pipelined."""
    raise _only_compiled("pipeline_distance")


def pipeline_issue(pipeline, ahead, valid, first, *loads):
    """Before the loop: start the copies of its iteration ``ahead`` (a constant) into its
    stage, if ``ahead`` is below the distance; ``valid`` is false past the loop's last
    iteration; ``first``: the pipeline's count of iterations before this run of the loop
    (the stages and their barriers' phases go on where the last run left them)."""
    raise _only_compiled("pipeline_issue")


def pipeline_wait(pipeline, iteration):
    """At the start of iteration ``iteration`` (counted over every run of the loop): wait
    until its tiles have landed."""
    raise _only_compiled("pipeline_wait")


def pipeline_advance(pipeline, iteration, valid, *loads):
    """At the end of iteration ``iteration``, once its products are started: start the
    copies ``distance`` iterations ahead (``loads`` hold their indices) into the stage the
    previous iteration used."""
    raise _only_compiled("pipeline_advance")


def pipeline_tile(pipeline, which, iteration, array, index, shape, padding_mode, order):
    """Load ``which`` of iteration ``iteration``: a tile in its stage, or a plain load."""
    raise _only_compiled("pipeline_tile")


def resident_tile(resident_id, array, index, shape, padding_mode, order):
    """A load, before a loop, of a tile that only feeds ``mma`` (such as the queries of
    attention, the same in every iteration): copied once into a buffer of its own in
    shared memory, where the products read it, or a plain load."""
    raise _only_compiled("resident_tile")


def resident_produce(resident_id, array, index, shape, padding_mode, order):
    """In a producer warp: once the consumers are done with the last run's tile of resident
    ``resident_id`` (see :func:`resident_release`), start the TMA's copy of this run's into
    its buffer; nothing where the consumers copy it themselves."""
    raise _only_compiled("resident_produce")


def resident_release(resident_id):
    """Where the loop that reads resident ``resident_id`` is left: the consumers are done
    with its tile, which the producer warp may then refill for the next run."""
    raise _only_compiled("resident_release")


def staged_as_tfloat32(tile):
    """``tile.astype(ct.tfloat32)`` of a pipelined load: a float32 tile stays in its stage,
    rounded to tfloat32 where ``mma`` reads it."""
    raise _only_compiled("staged_as_tfloat32")


def staged_reshape(tile, shape):
    """``ct.reshape(tile, shape)`` of a pipelined or resident load: a tile that only loses
    or gains leading axes of length 1 stays in its stage."""
    raise _only_compiled("staged_reshape")


def pipeline_last(iterator):
    """Whether the iteration ending is the loop's last: ``iterator``, the loop's range
    iterator, has no more values."""
    raise _only_compiled("pipeline_last")


def pipeline_end(pipeline, last):
    """Where ``last`` (True on the loop's way out): the products still running on the
    pipeline's tiles are waited for."""
    raise _only_compiled("pipeline_end")


def pipeline_producer(pipeline_id):
    """At the kernel's start, where a producer warp may issue the copies of pipeline
    ``pipeline_id`` (:mod:`.frontend.producer_warp`): its barriers made ready, and True in
    the producer warp (False everywhere where the pipeline's copies are not the TMA's)."""
    raise _only_compiled("pipeline_producer")


def pipeline_produce(pipeline, iteration, *loads):
    """In the producer warp: once the consumers are done with the stage of iteration
    ``iteration``, start the copies of that iteration's tiles (``loads`` as in
    :func:`pipeline_advance`) into it."""
    raise _only_compiled("pipeline_produce")


def producer_registers():
    """First in the producer's way: where the producer is a warpgroup
    (:attr:`~numba_tile.compiler.compile_state.CompileState.register_split`), its threads give
    back all registers but a few, and its warps other than the first (which starts the
    copies) end."""
    raise _only_compiled("producer_registers")


def consumer_registers():
    """First in the consumers' way: where the producer is a warpgroup, they take the
    registers it gave back."""
    raise _only_compiled("consumer_registers")


def consumer_turns_begin():
    """Before a loop whose consumer warpgroups take turns (:mod:`.frontend.warpgroup_turns`):
    the last warpgroup gives the first its turn."""
    raise _only_compiled("consumer_turns_begin")


def consumer_turn_take():
    """The warpgroup waits for its turn."""
    raise _only_compiled("consumer_turn_take")


def consumer_turn_give():
    """The warpgroup gives the next warpgroup its turn."""
    raise _only_compiled("consumer_turn_give")


def consumer_turns_end():
    """After the loop: the first warpgroup takes the turn the last one gave it last."""
    raise _only_compiled("consumer_turns_end")


def producer_exit():
    """Last in the producer's way: where the producer is a warpgroup, its threads end here
    (ptxas honours ``setmaxnreg`` only where the producer's way never joins the
    consumers')."""
    raise _only_compiled("producer_exit")


# -- Stores after the rings (:mod:`.frontend.freed_rings`) ---------------------------------
def store_after_rings(array, /, index, tile, **options):
    """``ct.store(array, index, tile, **options)`` where no ring of pipelined loads is used
    again: it may go through the stages' shared memory (typed with ``ct.store``'s
    signature)."""
    raise _only_compiled("store_after_rings")


# -- Partitions (:mod:`.frontend.partitions`) ----------------------------------------------
def partition_region(partition):
    """The region of the ``ct.partition`` argument ``partition`` that this tile block writes
    (:func:`numba_tile.partitions.region_bounds` along each axis)."""
    raise _only_compiled("partition_region")
