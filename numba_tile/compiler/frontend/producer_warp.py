"""A producer warp for a pipelined loop (part of the pipelining pass, before typing).

Where the tensor memory accelerator copies a pipeline's tiles, one thread starts every copy,
and what keeps it from refilling a stage too early is a barrier of the whole block at the
end of each iteration (:mod:`.pipelining`): every warp waits there for the slowest, so the
warpgroups of a block run in lockstep. With a *producer warp* the block gets one warp more,
which runs none of the kernel's tile code: it computes the loop's range and the loads'
indices again, and for each iteration waits until the other warps (the consumers) are done
with the stage it refills, then starts the copies. The consumers only wait for their
stages to land, and each thread tells the producer when it is done with a stage (an
arrival at the stage's "free" ``mbarrier``) instead of meeting the others::

    if pipeline_producer(id):                    # barriers made; True in the producer warp
        producer_registers()
        <the loop's range and the loads' fixed values, computed again>
        pipe = pipeline_begin(id, <the loads' arguments at the first iteration>)
        j = 0
        while j < len(r):
            pipeline_produce(pipe, j, <the loads' arguments at k = start + j * step>)
            j = j + 1
        producer_exit()
        return
    consumer_registers()
    <the kernel as pipelining left it: its pipeline_issue calls are then nothing, its
     pipeline_advance calls the arrivals, its barriers named ones of the consumers alone>

The block is larger only where the pipeline's copies turn out to be the TMA's (known when
typed, :attr:`~numba_tile.compiler.compile_state.CompileState.producer_warps`); elsewhere
``pipeline_producer`` is False and the branch is dead code. Where the tile code runs on two
warpgroups or more, the producer is a warpgroup that hands the consumers most of its
registers (``producer_registers``, ``consumer_registers``, ``producer_exit``:
:mod:`~numba_tile.compiler.lowering.warp_roles`); elsewhere these are nothing.

The kernel option ``warp_specialize=True`` asks for it (it pays for some kernels only, see
docs/performance). A loop gets a producer warp where it is the kernel's one pipelined loop,
the kernel runs it on every way through it (else the producer would wait for consumers
that never come), and every value the range and the indices read is a kernel parameter or
computed from them by plain arithmetic, each with one definition (the same calls the
pipelining pass copies, and ``range`` itself): the producer computes them again before it
starts. The loop may run once a value of one ``for`` loop over a ``range`` around it (a
persistent kernel's loop over its tiles), where every iteration of that loop runs it once
and holds no other loop: the producer then runs that loop too, its value computed from the
outer range as the inner one's is, and counts the iterations over all runs
(``$producer_base``), as the consumers do, so that the stages' barriers stay in step::

    for run in range(len(<the outer range>)):
        <the outer loop's value; the range and the indices of this run, computed again>
        resident_produce(id, <the resident's arguments>)    # for each such resident
        <the run's iterations, as above, each pipeline_produce(pipe, base + j, ...)>
        base = base + len(r)

A resident tile (:func:`~numba_tile.compiler.intrinsics.resident_tile`, the queries of
attention) loaded once before each run of the loop, from a kernel parameter by arguments
the producer can compute again, is copied by the producer too (``resident_produce``: once
the consumers have released the last run's, with ``resident_release`` where they leave
the loop), where typing finds the TMA can copy it.
"""

import builtins
import copy
import operator
from collections import namedtuple

from numba.cuda.core import ir
from numba.cuda.core.ir_utils import replace_vars_inner

from ..compile_state import current
from ..intrinsics import consumer_registers, pipeline_begin, pipeline_produce, \
    pipeline_producer, producer_exit, producer_registers, resident_produce, resident_release
from .device_output import definition
from .plain_computations import PURE_CALLS, PURE_EXPRESSIONS, is_pure
from .range_loops import range_loop

Resident = namedtuple("Resident", [
    "resident_id",  # its number, after the pipelines'
    "label",        # the block of its resident_tile call
    "arguments",    # the variables of the load's LOAD_FIELDS
    "tma_allowed",  # False where the load says allow_tma=False
    "product_labels",  # the blocks of the products that read it
])


def add_producer_warp(func_ir, cfg, loop, kernel_entry, outer=None, residents=()):
    """Give the pipelined loop ``loop`` (a ``_PipelinedLoop``, rewritten) a producer warp
    (see the module's docstring); ``outer``: the loop around it, a loop of Numba's CFG,
    where it runs again; ``residents``: the kernel's :data:`Resident` tiles, of which the
    producer copies those loaded once a run of the loop. Returns False, leaving the IR as
    it was, where it cannot have one."""
    blocks = func_ir.blocks
    around = None if outer is None else range_loop(func_ir, outer)
    if outer is not None and (around is None or not _runs_once_an_iteration(cfg, loop, outer)):
        return False
    if (loop.preheader if around is None else around.preheader) not in \
            cfg.post_dominators()[kernel_entry]:
        return False  # a way through the kernel skips the loop
    entry = blocks[kernel_entry]
    parameters = {s.target.name for s in entry.body
                  if isinstance(s, ir.Assign) and isinstance(s.value, ir.Arg)}
    in_loop = {s.target.name for label in loop.loop.body for s in blocks[label].body
               if isinstance(s, ir.Assign)}
    cloned = {s.target.name for s in loop.clones}
    roots = list(loop.range_call.list_vars())
    for statement in loop.clones:
        roots += _read_vars(statement.value)
    for load in loop.loads:
        roots += [v for v in load.arguments if v is not None]
    roots = [v for v in roots if v.name not in cloned and v.name not in loop.induction]
    if any(v.name in in_loop for v in roots):
        return False
    scope, loc = loop.scope, loop.loc
    producer, head, body, done = (max(blocks) + i for i in range(1, 5))
    rest = _label_after_entry(blocks, kernel_entry, max(blocks) + 5)
    prologue = []
    loop._call(prologue, producer_registers, [])
    base = scope.redefine("$producer_base", loc)  # the iterations of the runs before
    prologue.append(ir.Assign(ir.Const(0, loc), base, loc))
    if around is None:
        run, next_run, renamed = prologue, done, {}
    else:
        # the loop around it, run again: its range, and for each of its values one run
        outer_head, outer_body, outer_next = (max(blocks) + i for i in range(6, 9))
        renamed = _copies_of(func_ir, list(around.range_call.list_vars()), parameters,
                             scope, prologue)
        if renamed is None:
            return False
        outer_range = _copied_range(blocks, around, renamed, scope, prologue)
        outer_trip = loop._call(prologue, builtins.len, [outer_range], "$producer_runs")
        outer_start, outer_step = (renamed.get(v.name, v)
                                   for v in loop._range_bounds(prologue, around.range_call))
        runs = scope.redefine("$producer_run", loc)
        prologue.append(ir.Assign(ir.Const(0, loc), runs, loc))
        prologue.append(ir.Jump(outer_head, loc))
        blocks[outer_head] = _counted_test(loop, runs, outer_trip, outer_body, done)
        run = []
        value = _nth_value(loop, run, outer_start, runs, outer_step)
        renamed = {name: value for name in around.induction}
        next_run = outer_next
    if _copies_of(func_ir, roots, parameters, scope, run, renamed) is None:
        return False
    produced = []
    for resident in residents:
        if not _loaded_once_a_run(cfg, loop, outer, resident):
            continue
        source = definition(func_ir, resident.arguments[0])
        copies = []
        copied = isinstance(source, ir.Arg) and resident.tma_allowed and _copies_of(
            func_ir, resident.arguments, parameters, scope, copies, dict(renamed))
        if copied:
            run += copies
            loop._call(run, resident_produce, [loop._const(run, resident.resident_id)] +
                       [copied.get(v.name, v) for v in resident.arguments])
            produced.append((resident, source.index))

    # the kernel's start: its parameters, then the producer warp's way or the kernel's
    split = next(i for i, s in enumerate(entry.body)
                 if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Arg)))
    blocks[rest] = ir.Block(entry.scope, entry.loc)
    blocks[rest].body = []
    loop._call(blocks[rest].body, consumer_registers, [])
    blocks[rest].body += entry.body[split:]
    entry.body = entry.body[:split]
    role = loop._call(entry.body, pipeline_producer, [loop._const(entry.body, loop.pipeline_id)],
                      "$pipeline_producer")
    entry.body.append(ir.Branch(role, producer, rest, loc))

    # a run: the range, its length, and the pipeline typed as the loop's
    iterated = _copied_range(blocks, loop, renamed, scope, run)
    trip = loop._call(run, builtins.len, [iterated], "$producer_trip")
    start, step = (renamed.get(v.name, v) for v in loop._range_bounds(run))
    first = loop._copied_arguments(run, start, renamed)
    pipe = loop._call(run, pipeline_begin,
                      [loop._const(run, loop.pipeline_id)] + first, "$producer_pipeline")
    counter = scope.redefine("$producer_iteration", loc)
    run.append(ir.Assign(ir.Const(0, loc), counter, loc))
    run.append(ir.Jump(head, loc))
    blocks[producer] = _block(scope, loc, prologue)
    if around is not None:
        blocks[outer_body] = _block(scope, loc, run)

    blocks[head] = _counted_test(loop, counter, trip, body, next_run)

    iteration = []
    k = _nth_value(loop, iteration, start, counter, step)
    loads = loop._copied_arguments(iteration, k, renamed)
    # the iterations are counted over all runs, as the consumers count them
    count = loop._binop(iteration, operator.add, base, counter)
    loop._call(iteration, pipeline_produce, [pipe, count] + loads)
    following = loop._binop(iteration, operator.add, counter, loop._const(iteration, 1))
    iteration.append(ir.Assign(following, counter, loc))
    iteration.append(ir.Jump(head, loc))
    blocks[body] = _block(scope, loc, iteration)

    if around is not None:
        after = []
        after.append(ir.Assign(loop._binop(after, operator.add, base, trip), base, loc))
        after.append(ir.Assign(loop._binop(after, operator.add, runs,
                                           loop._const(after, 1)), runs, loc))
        after.append(ir.Jump(outer_head, loc))
        blocks[outer_next] = _block(scope, loc, after)

    finish = []
    loop._call(finish, producer_exit, [])
    none = loop._const(finish, None)
    result = scope.redefine("$producer_return", loc)
    finish.append(ir.Assign(ir.Expr.cast(none, loc), result, loc))
    finish.append(ir.Return(result, loc))
    blocks[done] = _block(scope, loc, finish)

    # the consumers release each resident the producer copies once the loop is left
    compilation = current()
    for resident, parameter in produced:
        release = []
        loop._call(release, resident_release, [loop._const(release, resident.resident_id)])
        exit_block = blocks[next(iter(loop.loop.exits))]
        exit_block.body[0:0] = release
        compilation.produced_residents.add(resident.resident_id)
        compilation.tensor_map_sources[resident.resident_id] = [parameter]
    return True


def _counted_test(loop, counter, trip, more, done):
    """A block that goes on to the block ``more`` while ``counter < trip``, else to
    ``done``."""
    test = []
    going_on = loop._binop(test, operator.lt, counter, trip)
    test.append(ir.Branch(going_on, more, done, loop.loc))
    return _block(loop.scope, loop.loc, test)


def _nth_value(loop, statements, start, count, step):
    """``start + count * step``, computed by statements appended to ``statements``."""
    return loop._binop(statements, operator.add, start,
                       loop._binop(statements, operator.mul, count, step))


def _loaded_once_a_run(cfg, loop, outer, resident):
    """True where ``resident`` (a :data:`Resident`) is loaded once before each run of
    ``loop`` and only the loop's products read it (the consumers release it where they
    leave the loop): its block comes on every way to the loop, in the loop ``outer``
    around it (where there is one) and in no other loop."""
    if resident.label not in cfg.dominators()[loop.preheader] or \
            resident.label in loop.loop.body or \
            not set(resident.product_labels) <= set(loop.loop.body):
        return False
    others = [other for other in cfg.loops().values() if other.header != loop.loop.header
              and (outer is None or other.header != outer.header)]
    return (outer is None or resident.label in outer.body) and \
        not any(resident.label in other.body for other in others)


def _runs_once_an_iteration(cfg, loop, outer):
    """True where every iteration of ``outer`` runs the loop ``loop`` once: its way in
    comes on every way back to ``outer``'s start, and no other loop is inside ``outer``."""
    inner_header = loop.loop.header
    if any(other.header != inner_header and other.header in outer.body and
           other.header != outer.header for other in cfg.loops().values()):
        return False
    dominators = cfg.dominators()
    latches = [p for p, _ in cfg.predecessors(outer.header) if p in outer.body]
    return all(loop.preheader in dominators[latch] for latch in latches)


def _copied_range(blocks, found, renamed, scope, statements):
    """A copy of the ``range`` call of ``found`` (a loop with ``range_call``) of the
    kernel's ``blocks``, reading the copies in ``renamed``; returns its variable."""
    value = copy.deepcopy(found.range_call, _memo(blocks))
    replace_vars_inner(value, renamed)
    target = scope.redefine("$producer_range", value.loc)
    statements.append(ir.Assign(value, target, value.loc))
    return target


def _block(scope, loc, statements):
    block = ir.Block(scope, loc)
    block.body = statements
    return block


def _memo(blocks):
    # a Var copied deeply copies its whole scope unless the memo holds it
    return {id(block.scope): block.scope for block in blocks.values()}


def _label_after_entry(blocks, entry, otherwise):
    """A free label between the kernel's entry and the block after it, else
    ``otherwise``. Numba lowers blocks in the order of their labels: the consumers' start,
    moved out of the entry, is then lowered before the code it leads to, whose lowering
    looks back at what the start stored (a filled tile, known to be one constant in any
    layout, is not moved through shared memory)."""
    following = min((label for label in blocks if label > entry), default=None)
    if following is None or following - entry > 1:
        return entry + 1
    return otherwise


def _read_vars(value):
    if isinstance(value, ir.Var):
        return [value]
    return value.list_vars() if isinstance(value, ir.Expr) else []


def _copies_of(func_ir, roots, parameters, scope, statements, renamed=None):
    """Append to ``statements`` copies of the computations of ``roots`` (variables), from
    the kernel's ``parameters`` and the variables ``renamed`` maps (by name, to what the
    copies read instead) on; returns that map with each copied variable's copy added, or
    None where one is not a plain computation with one definition."""
    renamed = {} if renamed is None else renamed
    memo = _memo(func_ir.blocks)
    # what the pipelining pass copies ahead, ``range``, and the unpacking of a tuple a
    # helper returned
    calls = PURE_CALLS + (builtins.range,)
    expressions = PURE_EXPRESSIONS + ("exhaust_iter",)

    def copy_of(var, depth=0):
        if var.name in renamed:
            return True
        definitions = func_ir._definitions.get(var.name, ())
        if var.name in parameters:
            # read as the kernel's start sets it: only where nothing sets it again
            return len(definitions) == 1
        if len(definitions) != 1 or depth > 200 or not is_pure(
                func_ir, definitions[0], calls, expressions):
            return False
        value = definitions[0]
        if not all(copy_of(v, depth + 1) for v in _read_vars(value)):
            return False
        if isinstance(value, ir.Var):
            copied = renamed.get(value.name, value)
        else:
            copied = copy.deepcopy(value, dict(memo))
            replace_vars_inner(copied, renamed)
        target = scope.redefine("$producer_value", var.loc)
        statements.append(ir.Assign(copied, target, var.loc))
        renamed[var.name] = target
        return True

    return renamed if all(copy_of(v) for v in roots) else None
