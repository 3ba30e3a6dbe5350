"""The state of one compile: what the passes, typing templates and lowerings of a kernel share.

A :class:`CompileState` is made by the kernel compiler
(:func:`~numba_tile.compiler.kernel_compiler.compile_to_ptx`) for each kernel it types and
lowers, and reached from anywhere in that compile through :func:`current`; once the compile
ends it is gone. Nothing a compile decides
is kept in a module global, so two compiles never see each other's decisions and nothing has
to be reset between them.

It holds the options (target, warps, stages, the default run length of tiles), the
shared-memory plan (:class:`SharedMemoryPlan`: the scratch buffer every conversion shares and
the rings of pipelined loads), the pipelines typed so far and those whose products run on into
the next iteration, the tensor maps the launch passes (and, found before typing, which kernel
parameter each pipelined load reads and whether its tile is only read rounded to tfloat32),
and the layouts asked of index tiles.

Outside a compile, :func:`current` gives a fresh compile state with the default options, so
that the types of tile code can be made and inspected in tests and examples:

>>> from numba_tile.compiler.compile_state import CompileState, compiling, current
>>> current().num_warps, current().target
(4, (8, 0))
>>> with compiling(CompileState(target=(9, 0), num_warps=8)):
...     current().num_warps, current().shared.limit
(8, 232448)
>>> current().num_warps
4
"""

import contextlib
import contextvars

# Shared memory a block may have, by compute capability (the launch opts in beyond 48 KB)
SHARED_LIMITS = {(8, 0): 163 * 1024, (8, 7): 163 * 1024, (9, 0): 227 * 1024,
                 (10, 0): 227 * 1024}
# elsewhere (the consumer GPUs of compute capability 8.6 and 8.9, and later ones until measured)
SHARED_LIMIT_UNLISTED = 99 * 1024
# 1024 bytes: where the 128-byte swizzle pattern of wgmma repeats
SHARED_ALIGNMENT = 1024
# the warps a producer adds to the block (frontend.producer_warp): one; a warpgroup where
# the tile code runs on two warpgroups or more and may take most of the producer's registers
# (setmaxnreg: a warpgroup's warps change their registers together)
PRODUCER_WARPS = 1
PRODUCER_WARPGROUP = 4
# a thread of the producer warpgroup keeps 24 registers, the fewest setmaxnreg allows
PRODUCER_REGISTERS = 24
# where the kernel leaves warp_specialize unset, a producer warpgroup comes for a loop whose
# consumer warpgroups take turns (attention's) and whose ring fills the shared memory with
# this many stages or fewer: measured on an H200, it took attention with 128 x 128 tiles at
# head dim 128 (three stages, 226 of 227 KiB) from 0.85 to 0.95 of sdpa; with four stages,
# with 3 stages of 128 x 64 tiles (room for more), or in matrix products (one product a
# loop, no turns), it was level or slower (see docs/performance)
AUTOMATIC_PRODUCER_MOST_STAGES = 3
# 32-bit registers a multiprocessor has (compute capability 9.0), and most a thread may use
REGISTER_FILE = 65536
MOST_REGISTERS = 255
DEFAULT_TARGET = (8, 0)
DEFAULT_NUM_WARPS = 4
DEFAULT_RUN_ELEMENTS = 4


def aligned_to_stage(nbytes):
    """``nbytes`` rounded up to :data:`SHARED_ALIGNMENT`, where stages and rings start.

    >>> from numba_tile.compiler.compile_state import aligned_to_stage
    >>> aligned_to_stage(1), aligned_to_stage(2048)
    (1024, 2048)
    """
    return -(-nbytes // SHARED_ALIGNMENT) * SHARED_ALIGNMENT


# shared memory the hardware keeps for each block on a multiprocessor, besides its own
BLOCK_RESERVED_SHARED = 1024


class CompileAgain(Exception):
    """A decision made while typing or lowering turned out wrong for the kernel: the
    kernel compiler compiles it again with other options (each subclass says which)."""

    @classmethod
    def behind(cls, error):
        """True where ``error`` is one, or was raised because of or while handling one
        (Numba's passes wrap what the lowering raises)."""
        seen = set()
        while error is not None and id(error) not in seen:
            if isinstance(error, cls):
                return True
            seen.add(id(error))
            error = error.__cause__ or error.__context__
        return False


class FewerStages(CompileAgain):
    """Stages chosen to fill the shared memory left too little of it (for the scratch
    buffer, a later ring or a resident tile): compile the kernel again, its stages chosen to
    leave a quarter (see :func:`~numba_tile.compiler.planning.staged_loads._stage_count`).

    >>> from numba_tile.compiler.compile_state import FewerStages
    >>> try:
    ...     try:
    ...         raise FewerStages()
    ...     except FewerStages as error:
    ...         raise RuntimeError("lowering failed") from error
    ... except RuntimeError as wrapped:
    ...     FewerStages.behind(wrapped), FewerStages.behind(ValueError())
    (True, False)
    """


class AddProducer(CompileAgain):
    """A kernel that left ``warp_specialize`` unset has a pipelined loop that a producer
    warpgroup pays for (:meth:`CompileState.choose_automatic_producer`): compile it again
    with the pipelining pass making the producer's split (:attr:`CompileState.producer_split`).

    >>> from numba_tile.compiler.compile_state import AddProducer, CompileAgain
    >>> issubclass(AddProducer, CompileAgain)
    True
    """


class NoProducer(CompileAgain):
    """Compiled again with the producer's split (:class:`AddProducer`), the kernel's loop
    turned out not to pay for it after all (its resident tiles' copies changed the shared
    memory): compile it again as with ``warp_specialize=False``.

    >>> from numba_tile.compiler.compile_state import CompileAgain, NoProducer
    >>> issubclass(NoProducer, CompileAgain), NoProducer.behind(NoProducer())
    (True, True)
    """


class SharedMemoryPlan:
    """The kernel's dynamic shared memory: the scratch buffer at its start (as large as the
    largest use any lowering asks for, see :func:`~numba_tile.compiler.lowering.tiles.scratch_regions`),
    the rings of pipelined loads at its end (reserved as their pipelines are planned).

    >>> from numba_tile.compiler.compile_state import SharedMemoryPlan
    >>> plan = SharedMemoryPlan((9, 0))
    >>> plan.reserve_ring(4096), plan.use_scratch(100), plan.dynamic_bytes
    (4096, 100, 5120)
    """

    def __init__(self, target):
        self.limit = SHARED_LIMITS.get(target, SHARED_LIMIT_UNLISTED)
        self.scratch_bytes = 0
        self.ring_bytes = 0

    @property
    def available(self):
        """Bytes the rings have left for the scratch buffer (or for more rings)."""
        return self.limit - self.ring_bytes

    def reserve_ring(self, nbytes):
        """Take ``nbytes`` at the end of shared memory for a ring: returns where it ends,
        counted from the end."""
        self.ring_bytes += nbytes
        return self.ring_bytes

    def use_scratch(self, nbytes):
        """Record that a lowering uses the first ``nbytes`` of the scratch buffer."""
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return self.scratch_bytes

    def blocks_by_rings(self):
        """:meth:`blocks_per_multiprocessor` counting the rings alone (what typing has
        reserved: the scratch buffer grows as the kernel is lowered).

        >>> from numba_tile.compiler.compile_state import SharedMemoryPlan
        >>> plan = SharedMemoryPlan((9, 0))
        >>> plan.reserve_ring(150 * 1024), plan.use_scratch(100 * 1024)
        (153600, 102400)
        >>> plan.blocks_by_rings(), plan.blocks_per_multiprocessor()
        (1, 0)
        """
        return (self.limit + BLOCK_RESERVED_SHARED) // (self.ring_bytes + BLOCK_RESERVED_SHARED)

    def blocks_per_multiprocessor(self):
        """How many blocks with this plan's shared memory a multiprocessor holds at once: it
        has a block's limit and 1 KiB more, and keeps 1 KiB of it for each block.

        >>> from numba_tile.compiler.compile_state import SharedMemoryPlan
        >>> plan = SharedMemoryPlan((9, 0))
        >>> plan.reserve_ring(100 * 1024), plan.blocks_per_multiprocessor()
        (102400, 2)
        """
        return (self.limit + BLOCK_RESERVED_SHARED) // \
            (self.dynamic_bytes + BLOCK_RESERVED_SHARED)

    @property
    def dynamic_bytes(self):
        """Bytes of dynamic shared memory the launch asks for: the scratch buffer, then the
        rings."""
        if not self.ring_bytes:
            return self.scratch_bytes
        return aligned_to_stage(self.scratch_bytes) + self.ring_bytes


class CompileState:
    """One compile of one kernel for one target (see the module's docstring).

    ``target`` is the compute capability, ``num_warps`` the thread block size in warps,
    ``num_stages`` the kernel's option for pipelined loads (None: chosen by size) and
    ``default_run`` the elements a thread holds in a run in the default layout of a tile
    (:func:`~numba_tile.compiler.types.run_length_for`)."""

    def __init__(self, target=DEFAULT_TARGET, num_warps=DEFAULT_NUM_WARPS, num_stages=None,
                 default_run=DEFAULT_RUN_ELEMENTS, warps_open=False, warp_specialize=None,
                 occupancy=None, stages_fill_shared=True, producer_split=False):
        self.target = tuple(target)
        # stages chosen (no num_stages) to fill the shared memory, else to leave a quarter
        # of it; True on the first compile, False on one again after FewerStages
        self.stages_fill_shared = stages_fill_shared
        # True once a ring got more stages than leaving a quarter free would have given it
        self.stages_past_quarter = False
        self.num_warps = num_warps
        # the kernel's option: the blocks a multiprocessor should hold (None: not given)
        self.occupancy = occupancy
        # True where the kernel left its warps to the compiler (see frontend.warps)
        self.warps_open = warps_open
        self.num_stages = num_stages
        # the kernel's option: a producer warp for a pipelined loop (frontend.producer_warp):
        # True, False, or None (not given: where it pays, see choose_automatic_producer)
        self.warp_specialize = warp_specialize
        # where it is None: whether the pipelining pass makes the producer's split (True
        # once a compile without it found it pays, AddProducer), and the pipeline it could
        # make it for, found by the pass that does not
        self.producer_split = producer_split
        self.producer_candidate = None
        # and whether, with the producer, a loop's consumer warpgroups would take turns
        # (found by frontend.warpgroup_turns where there is a candidate)
        self.producer_turns = False
        self.default_run = default_run
        self.shared = SharedMemoryPlan(self.target)
        # pipeline id -> its PipelineType (or None for a resident tile left in registers),
        # planned when typing first meets it: typing may see a call several times
        self.pipelines = {}
        # ids of the pipelines whose products (wgmma) run on while the next copies start,
        # found once the kernel is typed (see frontend.products_in_flight)
        self.products_in_flight = set()
        # ids of the pipelines whose loop is inside another loop (it runs more than once)
        self.pipelines_run_again = set()
        # the id of the pipeline whose copies a producer warp may issue (frontend.producer_warp)
        self.producer_pipeline = None
        # ids of the resident tiles whose copies that producer warp may issue too, a run of
        # the pipelined loop at a time (where the TMA can copy them)
        self.produced_residents = set()
        # whether any product runs as wgmma (found with them): without one, the commits and
        # waits that keep the counts of deferred products are left out (an empty group
        # is no work, but compute-sanitizer reports its wait as a shared memory read)
        self.any_wgmma = False
        # the TensorMapSpec of each tensor map the launch passes, in parameter order
        self.tensor_maps = []
        # pipeline id -> for each of its loads, the kernel parameter its array is, or None
        # (not a parameter, or allow_tma=False), or for an item of a list argument
        # ``(parameter, number of items)``: found by the pipelining pass, before typing
        self.tensor_map_sources = {}
        # list parameter -> its items' values (LLVM), set at the kernel's start where the TMA
        # copies from its items: a copy finds its item's map by comparing with them
        self.list_items = {}
        # pipeline id -> for each of its loads, True where its tile is only read rounded to
        # tfloat32, which the tensor memory accelerator can do as it copies
        self.tensor_map_rounding = {}
        # key -> layout asked of an index tile (see index_layouts)
        self.index_layouts = {}
        # the frontend passes run so far, in order (each checks that what it needs ran)
        self.passes_run = []
        # static_eval (source/static_expressions.py): the keys of expressions compiled as
        # tile code, the Python functions some gave (held in globals), the namespace each expression reads, its result type per value types
        # (kept across the compiles of one kernel, so an expression runs once), and the
        # helper rewriting of this compile (functions an expression returns become helpers)
        self.static_as_code = set()
        self.static_globals = {}
        self.static_namespaces = {}
        self.static_values = {}
        self.static_helpers = None
        # the items of each static_iter loop, kept across the compiles of one kernel
        self.static_iter = StaticIterState()
        # code object -> the globals it reads, for the functions made inlinable and the
        # code of every def and lambda inside them (see frontend.closures: a closure
        # inlined into the kernel reads the globals of the helper that defined it)
        self.code_globals = {}
        # id of a helper's dispatcher -> (it, its version with every parameter positional),
        # the helpers with *args, **kwargs or keyword-only parameters (frontend.variadic)
        self.positional_helpers = {}
        # the code of the helpers being inlined (innermost last), those found calling
        # themselves (maybe through others), and the calls of these allowed to inline in
        # this round (ids of statements): recursion is inlined a level a round
        # (frontend.inlining)
        self.inlining = []
        self.recursive_helpers = set()
        self.recursion_allowed = frozenset()
        # id of each recursive call inlined since -> (the call, the keys of the recursive
        # calls it was inlined from: frontend.inlining)
        self.recursion_ancestry = {}
        # the untyped IR of each helper inlined, made once (frontend.inlining)
        self.helper_irs = {}
        # the Tile errors the source rewrites found, each raised where its code is typed
        # (typing.rewrite_errors)
        self.rewrite_errors = []

    @property
    def producer_warps(self):
        """The warps added to the block where a producer issues the copies of the
        pipeline :attr:`producer_pipeline` (its copies are the TMA's), else 0: a warpgroup
        where the tile code runs on two warpgroups or more and the block is the
        multiprocessor's only one (the kernel asks for no more, or its rings leave no room
        for a second; see :attr:`register_split`), else one warp; where the kernel leaves
        ``warp_specialize`` unset, the warpgroup :meth:`choose_automatic_producer` chose.
        Known once the kernel is typed (it reads the rings typing reserved, never the
        scratch buffer lowering grows)."""
        pipeline = self.pipelines.get(self.producer_pipeline)
        produced = pipeline is not None and pipeline.pipelined and bool(pipeline.tensor_maps)
        if not produced:
            return 0
        if self.warp_specialize is None:
            return PRODUCER_WARPGROUP
        one_block = self.shared.blocks_by_rings() == 1 or self.occupancy in (None, 1)
        return PRODUCER_WARPGROUP if self._in_warpgroups() and one_block else PRODUCER_WARPS

    def _in_warpgroups(self):
        """True where the tile code runs on two warpgroups or more of sm_90."""
        # (setmaxnreg is in the PTX of sm_90a, which compute capability 9.0 gets, and of
        # the "a" targets of later GPUs, which numba_tile does not emit)
        return self.num_warps % PRODUCER_WARPGROUP == 0 and self.num_warps >= 8 and \
            self.target == (9, 0)

    def adds_producer(self):
        """True where the pipelining pass makes a producer warp for a pipelined loop that
        can have one: the kernel asks for it, or leaves ``warp_specialize`` unset and an
        earlier compile found it pays (:class:`AddProducer`).

        >>> from numba_tile.compiler.compile_state import CompileState
        >>> CompileState(target=(9, 0), num_warps=8).adds_producer()
        False
        >>> CompileState(target=(9, 0), num_warps=8, producer_split=True).adds_producer()
        True
        """
        if self.warp_specialize is None:
            return self.producer_split and self._in_warpgroups()
        return self.warp_specialize

    def may_choose_producer(self):
        """True where the kernel leaves ``warp_specialize`` unset and its tile code runs on
        two warpgroups or more of sm_90: typing then tells whether a producer warpgroup
        pays (:meth:`choose_automatic_producer`)."""
        return self.warp_specialize is None and not self.producer_split and \
            self._in_warpgroups()

    def choose_automatic_producer(self, pipeline):
        """Where the kernel leaves ``warp_specialize`` unset, typing has planned
        ``pipeline``. A producer warpgroup pays for a loop whose consumer warpgroups would
        take turns between its two products (:mod:`.frontend.warpgroup_turns`: attention's,
        not a matrix product's single one) and a ring of the TMA's copies that the shared
        memory holds no more than :data:`AUTOMATIC_PRODUCER_MOST_STAGES` stages of (no
        room for one more, so none for a second block either). Compiled without the
        producer's split, raise :class:`AddProducer` where the pipelining pass could have
        made one for the loop; compiled with it, :class:`NoProducer` where it does not pay
        after all."""
        if self.warp_specialize is not None:
            return
        pays = pipeline.pipelined and bool(pipeline.tensor_maps) and \
            pipeline.stages <= AUTOMATIC_PRODUCER_MOST_STAGES and \
            self.shared.available < pipeline.stage_bytes
        if self.producer_split:
            if pipeline.pipeline_id == self.producer_pipeline and not pays:
                raise NoProducer()
        elif pipeline.pipeline_id == self.producer_candidate and pays and self.producer_turns:
            raise AddProducer()

    @property
    def register_split(self):
        """``(a producer thread's registers, a consumer thread's)`` where a producer
        warpgroup gives the consumers most of its registers (``setmaxnreg``), else None.
        The block is the multiprocessor's only one: ptxas gives each thread the registers
        the file holds for the block's threads at the start (168 for 384 threads), and
        the consumers take what the producer gives back.

        >>> from numba_tile.compiler.compile_state import CompileState
        >>> compilation = CompileState(target=(9, 0), num_warps=8)
        >>> compilation.split_registers(), CompileState(num_warps=16).split_registers()
        ((24, 240), (24, 112))
        """
        return self.split_registers() if self.producer_warps == PRODUCER_WARPGROUP else None

    def split_registers(self):
        """:attr:`register_split` where the block has a producer warpgroup."""
        threads = 32 * (self.num_warps + PRODUCER_WARPGROUP)
        at_start = min(MOST_REGISTERS, REGISTER_FILE // threads) // 8 * 8
        given = (at_start * threads - PRODUCER_REGISTERS * 32 * PRODUCER_WARPGROUP)
        consumers = min(256, given // (32 * self.num_warps) // 8 * 8)
        return PRODUCER_REGISTERS, consumers

    def shared_after_rings(self):
        """Bytes from the start of the dynamic shared memory that a use may take where no
        ring is read or filled again (:mod:`.frontend.freed_rings`): the scratch buffer and
        the stages, up to the first ring's ``mbarrier`` objects, whose memory stays theirs.
        Known once the kernel is typed (the scratch buffer only grows, and the rings sit
        above it).

        >>> from numba_tile.compiler.compile_state import CompileState
        >>> from numba_tile.compiler.planning.staged_loads import PipelineType
        >>> from numba_tile import float16
        >>> compilation = CompileState(target=(9, 0))
        >>> ring = PipelineType(0, [(float16, (64, 64), False)], 3, 0, tensor_maps=[0])
        >>> end = compilation.shared.reserve_ring(ring.ring_bytes)
        >>> compilation.pipelines[0] = PipelineType(0, ring.tiles, 3, end, tensor_maps=[0])
        >>> compilation.shared.ring_bytes, compilation.shared_after_rings()
        (25600, 24576)
        """
        plan = self.shared
        size = (aligned_to_stage(plan.scratch_bytes) if plan.ring_bytes else
                plan.scratch_bytes) + plan.ring_bytes
        barriers = [ring.ring_end - ring.stages * ring.stage_bytes
                    for ring in self.pipelines.values()
                    if ring is not None and ring.tensor_maps and ring.stages]
        return size - max(barriers, default=0)

    def tensor_map_slot(self, spec):
        """The parameter slot (after the kernel's own) of the tensor map ``spec``, added on
        first use."""
        if spec not in self.tensor_maps:
            self.tensor_maps.append(spec)
        return self.tensor_maps.index(spec)

    def __repr__(self):
        return (f"<CompileState for sm_{self.target[0]}{self.target[1]}, {self.num_warps} "
                f"warps>")


class StaticIterState:
    """What the unrolling of ``static_iter`` loops knows (see
    :mod:`~numba_tile.compiler.frontend.static_iter`), kept across the compiles of one
    kernel: the number of each loop instance by how it was reached (``descriptor``) and the
    expression key of each (``keys``), the plans of the items each was unrolled with and
    whether typing found them (``plans``: instance -> ``(plans, by_typing)``), the plans typing
    found per value types (``typed``)."""

    def __init__(self):
        self.instances = {}
        self.keys = []
        self.plans = {}
        self.typed = {}

    def instance(self, descriptor, key):
        """The number of the loop instance ``descriptor`` (new ones numbered in turn)."""
        if descriptor not in self.instances:
            self.instances[descriptor] = len(self.keys)
            self.keys.append(key)
        return self.instances[descriptor]


_ACTIVE = contextvars.ContextVar("numba_tile_compile_state", default=None)


def current():
    """The state of the compile in progress; outside one, a fresh state with the default
    options (nothing written to it is kept)."""
    active = _ACTIVE.get()
    return CompileState() if active is None else active


@contextlib.contextmanager
def compiling(state):
    """Make ``state`` the one :func:`current` gives while the block runs."""
    token = _ACTIVE.set(state)
    try:
        yield state
    finally:
        _ACTIVE.reset(token)
