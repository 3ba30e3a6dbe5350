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
typed, :attr:`~numba_tile.compiler.compilation.Compilation.producer_warps`); elsewhere
``pipeline_producer`` is False and the branch is dead code. Where the tile code runs on two
warpgroups or more, the producer is a warpgroup that hands the consumers most of its
registers (``producer_registers``, ``consumer_registers``, ``producer_exit``:
:mod:`~numba_tile.compiler.lowering.warp_roles`); elsewhere these are nothing.

The kernel option ``warp_specialize=True`` asks for it (it pays for some kernels only, see
docs/performance). A loop gets a producer warp where it is the kernel's one pipelined loop,
the kernel runs it on every way through it (else the producer would wait for consumers
that never come), it runs once (not inside another loop), and every value the range and
the indices read is a kernel parameter or computed from them by plain arithmetic, each with
one definition (the same calls the pipelining pass copies, and ``range`` itself): the
producer computes them again before it starts.
"""

import builtins
import copy
import operator

from numba.cuda.core import ir
from numba.cuda.core.ir_utils import replace_vars_inner

from ..intrinsics import consumer_registers, pipeline_begin, pipeline_produce, \
    pipeline_producer, producer_exit, producer_registers
from .plain_computations import PURE_CALLS, PURE_EXPRESSIONS, is_pure


def add_producer_warp(func_ir, cfg, loop, kernel_entry):
    """Give the pipelined loop ``loop`` (a ``_PipelinedLoop``, rewritten) a producer warp
    (see the module's docstring). Returns False, leaving the IR as it was, where it cannot
    have one."""
    blocks = func_ir.blocks
    if loop.preheader not in cfg.post_dominators()[kernel_entry]:
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
    prologue = []
    loop._call(prologue, producer_registers, [])
    renamed = _copies_of(func_ir, roots, parameters, scope, prologue)
    if renamed is None:
        return False

    producer, head, body, done, rest = (max(blocks) + i for i in range(1, 6))
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

    # the range, its length, and the pipeline typed as the loop's
    range_value = copy.deepcopy(loop.range_call, _memo(blocks))
    replace_vars_inner(range_value, renamed)
    iterated = scope.redefine("$producer_range", loc)
    prologue.append(ir.Assign(range_value, iterated, loc))
    trip = loop._call(prologue, builtins.len, [iterated], "$producer_trip")
    start, step = (renamed.get(v.name, v) for v in loop._range_bounds(prologue))
    first = loop._copied_arguments(prologue, start, renamed)
    pipe = loop._call(prologue, pipeline_begin,
                      [loop._const(prologue, loop.pipeline_id)] + first, "$producer_pipeline")
    counter = scope.redefine("$producer_iteration", loc)
    prologue.append(ir.Assign(ir.Const(0, loc), counter, loc))
    prologue.append(ir.Jump(head, loc))
    blocks[producer] = _block(scope, loc, prologue)

    test = []
    more = loop._binop(test, operator.lt, counter, trip)
    test.append(ir.Branch(more, body, done, loc))
    blocks[head] = _block(scope, loc, test)

    iteration = []
    k = loop._binop(iteration, operator.add, start,
                    loop._binop(iteration, operator.mul, counter, step))
    loads = loop._copied_arguments(iteration, k, renamed)
    loop._call(iteration, pipeline_produce, [pipe, counter] + loads)
    following = loop._binop(iteration, operator.add, counter, loop._const(iteration, 1))
    iteration.append(ir.Assign(following, counter, loc))
    iteration.append(ir.Jump(head, loc))
    blocks[body] = _block(scope, loc, iteration)

    finish = []
    loop._call(finish, producer_exit, [])
    none = loop._const(finish, None)
    result = scope.redefine("$producer_return", loc)
    finish.append(ir.Assign(ir.Expr.cast(none, loc), result, loc))
    finish.append(ir.Return(result, loc))
    blocks[done] = _block(scope, loc, finish)
    return True


def _block(scope, loc, statements):
    block = ir.Block(scope, loc)
    block.body = statements
    return block


def _memo(blocks):
    # a Var copied deeply copies its whole scope unless the memo holds it
    return {id(block.scope): block.scope for block in blocks.values()}


def _read_vars(value):
    if isinstance(value, ir.Var):
        return [value]
    return value.list_vars() if isinstance(value, ir.Expr) else []


def _copies_of(func_ir, roots, parameters, scope, statements):
    """Append to ``statements`` copies of the computations of ``roots`` (variables), from
    the kernel's ``parameters`` on; returns the map from each copied variable's name to its
    copy, or None where one is not a plain computation with one definition."""
    renamed = {}
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
