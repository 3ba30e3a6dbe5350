"""Software pipelining of the loads that feed ``ct.mma`` in a loop (an IR pass before typing).

In the k-loop of a matrix product::

    for k in range(n):
        a = ct.load(A, (bm, k), (TM, TK))
        b = ct.load(B, (k, bn), (TK, TN))
        acc = ct.mma(a, b, acc)

the loads of iteration ``k`` are independent of the products before it, so they can be
started ``stages - 1`` iterations early and land in shared memory while tensor cores work.
This pass finds such loads (in the blocks every iteration runs, in a loop that has no loop
inside; their results used only as operands of ``mma`` calls that every
iteration runs, directly or through conversions to tfloat32 and reshapes (see
:mod:`.staged_uses`); their arguments computed from the loop variable and values fixed
during the loop by plain arithmetic) and rewrites the loop into calls of
:mod:`~numba_tile.compiler.planning.staged_loads`::

    pipeline_prepare(id)                                     # at the kernel's start
    count = 0
    ...
    first = count                                            # before the loop
    pipe = pipeline_begin(id, <the loads' arguments>)
    distance = pipeline_distance(pipe)                       # stages - 1: known when typed
    pipeline_issue(pipe, 0, 0 < len(r), first, <arguments at k = start>)
    pipeline_issue(pipe, 1, 1 < len(r), first, <arguments at k = start + step>) ...
    for k in r:
        pipeline_wait(pipe, count)
        a = pipeline_tile(pipe, 0, count, A, (bm, k), (TM, TK), padding, order)
        ...                                                  # the products
        pipeline_advance(pipe, count, count - first + distance < len(r),
                         <arguments at k + distance * step>)
        count = count + 1
        if pipeline_last(<the range's iterator>):           # the header's next test
            pipeline_end(pipe, True)                         # wait for the products
            <to the header, which leaves the loop>
        <else the header's step without its test, and on to the next iteration>

``count`` goes on from one run of the loop to the next where an outer loop runs it again
(the k-loop of a persistent kernel, one block looping over the tiles of ``C``): each run
uses the stages after the last run's, whose barriers are then in the phases the count
tells, and ``pipeline_begin`` first waits until the last run's products and copies are
done with the stages.

The argument computations are copied with the loop variable replaced. The number of stages
is chosen when the loads are typed (their tile sizes give the shared memory a stage needs),
so the pass issues up to ``MAX_STAGES - 1`` loads ahead before the loop and the typing turns
those beyond ``stages - 1`` into nothing; where the loads cannot be pipelined (an array not
aligned, another padding, no ``cp.async``), every call but ``pipeline_tile``, then a plain
load, is nothing. A load with ``order=(1, 0)`` (a transposed tile, such as ``K^T`` in
attention) is copied as the array holds it and read transposed from its stage.
"""

import builtins
import copy
import inspect
import operator

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions, replace_vars_inner

from ...language import matrix, memory
from ..compile_state import current
from ..planning.staged_loads import MAX_STAGES
from ..intrinsics import LOAD_FIELDS, pipeline_advance, pipeline_begin, pipeline_distance, \
    pipeline_end, pipeline_issue, pipeline_last, pipeline_prepare, pipeline_tile, pipeline_wait, \
    resident_tile
from ..types import ListType
from .contract import tile_pass
from .device_output import callee, definition
from .staged_uses import is_mma_operand, mma_operand_uses
from . import producer_warp
from .plain_computations import is_pure
from .range_loops import range_loop

# ct.load's own signature: a load's arguments are found by name, as Python binds them
_LOAD_SIGNATURE = inspect.signature(getattr(memory.load, "__tile_op__", memory.load))
_IGNORED_HINTS = ("latency", "allow_tma")


@tile_pass("pipeline the loads that feed mma", needs=("UnrollStaticIter", "PruneConstantBranches"))
@register_pass(mutates_CFG=False, analysis_only=False)
class PipelineMmaLoads(FunctionPass):
    """Rewrite the loops whose loads feed ``mma`` (see the module's docstring)."""

    _name = "numba_tile_pipeline_mma_loads"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        rewritten = 0
        cfg = compute_cfg_from_blocks(func_ir.blocks)
        loops = list(cfg.loops().values())
        pipelined = []
        for loop in loops:
            # a loop with loops inside may run its products a varying number of times
            if any(other is not loop and other.header in loop.body for other in loops):
                continue
            found = _PipelinedLoop.find(func_ir, cfg, loop, pipeline_id=rewritten,
                                        arg_types=state.args)
            if found is None:
                continue
            # a loop inside another (the k-loop of a persistent kernel) runs again: each
            # run first waits until the last one's products and copies are done
            around = [other for other in loops
                      if other is not loop and loop.header in other.body]
            found.rewrite(cfg.entry_point(), bool(around))
            func_ir._definitions = build_definitions(func_ir.blocks)
            rewritten += 1
            pipelined.append((found, around))
        residents = _stage_loop_invariant_operands(func_ir, loops, first_id=rewritten)
        # a producer warp for the kernel's one pipelined loop, which may run in one loop
        # around it (the tiles of a persistent kernel)
        compilation = current()
        if len(pipelined) == 1 and len(pipelined[0][1]) <= 1 and not _has_phis(func_ir):
            found, around = pipelined[0]
            if compilation.adds_producer():
                if producer_warp.add_producer_warp(func_ir, cfg, found, cfg.entry_point(),
                                                   around[0] if around else None, residents):
                    compilation.producer_pipeline = found.pipeline_id
                    func_ir._definitions = build_definitions(func_ir.blocks)
            elif compilation.may_choose_producer():
                compilation.producer_candidate = found.pipeline_id
        return rewritten + len(residents) > 0


def _stage_loop_invariant_operands(func_ir, loops, first_id):
    """Rewrite each load outside a loop whose tile only feeds ``mma`` in the loop (the
    queries of attention) into :func:`~numba_tile.compiler.intrinsics.resident_tile`: copied
    once into shared memory, where the products read it, instead of written there from
    registers by every product. Returns a :data:`~.producer_warp.Resident` for each."""
    rewritten = []
    for label, block in list(func_ir.blocks.items()):
        for statement in list(block.body):
            arguments = _load_arguments(func_ir, statement)
            if arguments is None or len(func_ir._definitions.get(
                    statement.target.name, ())) != 1:
                continue
            found = mma_operand_uses(func_ir, statement.target, list(func_ir.blocks.values()))
            if found is None or found.roundings:
                continue
            use_labels = _product_labels(func_ir, statement.target, found)
            if not any(label not in loop.body and use_labels & loop.body for loop in loops):
                continue
            found.rewrite(func_ir)
            scope, loc = block.scope, statement.loc
            function = scope.redefine("$resident_tile", loc)
            resident_id = scope.redefine("$resident_id", loc)
            statements = [ir.Assign(ir.Global(resident_tile.__name__, resident_tile, loc),
                                    function, loc),
                          ir.Assign(ir.Const(first_id + len(rewritten), loc), resident_id,
                                    loc)]

            def given(value):  # padding and order: a None constant where the load has none
                if value is not None:
                    return value
                var = scope.redefine("$resident_const", loc)
                statements.append(ir.Assign(ir.Const(None, loc), var, loc))
                return var
            array, index, shape, padding, order = arguments
            copied = _allows_tma(func_ir, statement.value)
            arguments = [array, index, shape, given(padding), given(order)]
            call = ir.Expr.call(function, [resident_id] + arguments, (), loc)
            statements.append(ir.Assign(call, statement.target, loc))
            position = block.body.index(statement)
            block.body[position:position + 1] = statements
            rewritten.append(producer_warp.Resident(first_id + len(rewritten), label,
                                                    arguments, copied, use_labels))
    if rewritten:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return rewritten


def _product_labels(func_ir, var, found):
    """The labels of the blocks whose products read ``var``, or a reshape of it."""
    tiles = [var] + [call.target for _, call in found.reshapes]
    return {label for label, block in func_ir.blocks.items() for statement in block.body
            if any(is_mma_operand(func_ir, block, statement, tile, [block]) for tile in tiles)}


class _Load:
    """One pipelined load: its statement and the variables of its arguments."""

    def __init__(self, statement, arguments, operand_uses):
        # array, index, shape, padding, order
        self.statement, self.arguments = statement, arguments
        # the conversions and reshapes between the load and its products
        self.operand_uses = operand_uses


class _PipelinedLoop:
    def __init__(self, func_ir, loop, pipeline_id, preheader, entry, range_call, range_var,
                 induction, loads, clones, iteration_block, iterator, arg_types=()):
        self.func_ir, self.loop, self.pipeline_id = func_ir, loop, pipeline_id
        self.arg_types = tuple(arg_types)
        self.preheader, self.entry = preheader, entry
        self.range_call, self.range_var = range_call, range_var
        self.induction, self.loads, self.clones = induction, loads, clones
        self.iteration_block = iteration_block  # where the iterator gives the next value
        self.iterator = iterator  # the range's iterator, which the loop's test reads
        self.scope = func_ir.blocks[entry].scope
        self.loc = loads[0].statement.loc

    # -- analysis ---------------------------------------------------------------------------
    @classmethod
    def find(cls, func_ir, cfg, loop, pipeline_id, arg_types=()):
        """The loop's pipelined loads, or None where it has none (or is not a plain
        ``for`` over a ``range`` with one way in and out)."""
        blocks = func_ir.blocks
        plain = range_loop(func_ir, loop)
        if plain is None:
            return None
        header, induction = plain.iteration_block, plain.induction
        loop_blocks = [blocks[label] for label in loop.body]
        # the blocks every iteration runs (they dominate each block that jumps back), in
        # the order they run
        latches = [label for label in loop.body
                   if isinstance(blocks[label].terminator, ir.Jump) and
                   blocks[label].terminator.target == loop.header]
        if any(isinstance(blocks[label].terminator, ir.Branch) and loop.header in (
                blocks[label].terminator.truebr, blocks[label].terminator.falsebr)
                for label in loop.body):
            return None  # a back edge that is a branch: no place for the end of iteration
        dominators = cfg.dominators()
        topo = {label: i for i, label in enumerate(cfg.topo_order())}
        every_iteration = sorted(
            (label for label in loop.body if blocks[label] is not header and
             label != loop.header and all(label in dominators[b] for b in latches)),
            key=topo.get)
        earlier = []  # the statements of those blocks, in order, up to the current one
        loads, clones = [], []
        # the products that read a staged tile must run in every iteration too: a product
        # skipped in one iteration would leave the previous one's running on its stage
        every_block = [blocks[label] for label in every_iteration]
        for label in every_iteration:
            for statement in blocks[label].body:
                arguments = _load_arguments(func_ir, statement)
                operand_uses = None if arguments is None else mma_operand_uses(
                    func_ir, statement.target, every_block, arguments[0], arg_types)
                if operand_uses is not None:
                    needed = _argument_slice(func_ir, earlier, loop_blocks, arguments,
                                             induction)
                    if needed is not None:
                        loads.append(_Load(statement, arguments, operand_uses))
                        clones.extend(s for s in needed
                                      if all(c is not s for c in clones))
                earlier.append(statement)
        if not loads:
            return None
        order = {id(s): i for i, s in enumerate(earlier)}
        clones.sort(key=lambda s: order[id(s)])
        return cls(func_ir, loop, pipeline_id, plain.preheader, plain.entry, plain.range_call,
                   plain.range_var, induction, loads, clones, header, plain.iterator, arg_types)

    # -- rewriting --------------------------------------------------------------------------
    def rewrite(self, kernel_entry, run_again):
        """Rewrite the loop (see the module's docstring); ``kernel_entry``: the label of the
        kernel's first block, where the iterations start being counted; ``run_again``: the
        loop is inside another."""
        blocks = self.func_ir.blocks
        compilation = current()
        self._hoist_fixed_items()
        products_of_two_loads = self._products_of_two_loads()
        sources = [self._parameter_of(load) for load in self.loads]
        compilation.tensor_map_sources[self.pipeline_id] = [
            source if source is None or isinstance(source, int) else source[:2]
            for source in sources]
        # (before the rewriting changes the loads' uses)
        compilation.tensor_map_rounding[self.pipeline_id] = [
            load.operand_uses.rounded_only for load in self.loads]
        if run_again:
            compilation.pipelines_run_again.add(self.pipeline_id)
        # the iterations are counted over all runs of the loop: each uses the stage after
        # the last one's, whose barrier is then in the phase that the count tells
        count = self.scope.redefine("$pipeline_count", self.loc)
        prepare = []
        # the list arguments whose items the TMA copies: their items' maps are told apart
        # by the items themselves, which the kernel's start hands over
        lists = {source[0]: source[2] for source in sources
                 if source is not None and not isinstance(source, int)}
        self._call(prepare, pipeline_prepare, [self._const(prepare, self.pipeline_id)] + [
            v for parameter, var in lists.items()
            for v in (self._const(prepare, parameter), var)])
        prepare.append(ir.Assign(ir.Const(0, self.loc), count, self.loc))
        blocks[kernel_entry].body[-1:-1] = prepare
        before = []
        first = self.scope.redefine("$pipeline_first", self.loc)
        before.append(ir.Assign(count, first, self.loc))
        start, step = self._range_bounds(before)
        trip = self._call(before, builtins.len, [self.range_var], "$pipeline_trip")
        pipe = distance = None
        for ahead in range(MAX_STAGES - 1):
            position = self._const(before, ahead)
            k = self._binop(before, operator.add, start,
                            self._binop(before, operator.mul, position, step))
            loads = self._copied_arguments(before, k)
            if pipe is None:
                pipe = self._call(before, pipeline_begin,
                                  [self._const(before, self.pipeline_id)] + loads,
                                  "$pipeline")
                distance = self._call(before, pipeline_distance, [pipe], "$pipeline_distance")
            valid = self._binop(before, operator.lt, position, trip)
            self._call(before, pipeline_issue, [pipe, position, valid, first] + loads)
        preheader = blocks[self.preheader]
        preheader.body[-1:-1] = before

        entry = blocks[self.entry]
        wait = []
        self._call(wait, pipeline_wait, [pipe, count])
        for which, load in enumerate(self.loads):
            statements = []
            function = self._global(statements, pipeline_tile)
            statements.append(ir.Assign(ir.Expr.call(
                function, [pipe, self._const(statements, which), count] +
                self._arguments_of(statements, load.arguments), (), load.statement.loc),
                load.statement.target, load.statement.loc))
            block = next(b for b in blocks.values() if load.statement in b.body)
            at = block.body.index(load.statement)
            block.body[at:at + 1] = statements
            # the tile stays in its stage: reshaped and rounded to tfloat32 where mma reads
            # it (or as it is, for an astype to its own dtype)
            load.operand_uses.rewrite(self.func_ir)
        entry.body[0:0] = wait
        # at the end of each iteration (every block that jumps back to the header): start the
        # copies `distance` iterations ahead, count the iteration, and after the last one
        # wait for products still running (where Numba's SSA form has not been made yet
        # (see static_iter), on the loop's way out, else at the end of the last iteration)
        leave_through_wait = products_of_two_loads and not _has_phis(self.func_ir)
        for label in list(self.loop.body):
            block = blocks[label]
            if not (isinstance(block.terminator, ir.Jump) and
                    block.terminator.target == self.loop.header):
                continue
            end = []
            k = self._binop(end, operator.add, self._induction_var(),
                            self._binop(end, operator.mul, distance, step))
            loads = self._copied_arguments(end, k)
            done = self._binop(end, operator.sub, count, first)  # in this run, before it
            valid = self._binop(end, operator.lt,
                                self._binop(end, operator.add, done, distance), trip)
            self._call(end, pipeline_advance, [pipe, count, valid] + loads)
            next_count = self._binop(end, operator.add, count, self._const(end, 1))
            end.append(ir.Assign(next_count, count, self.loc))
            last = self._call(end, pipeline_last, [self.iterator], "$pipeline_last")
            if leave_through_wait:
                block.body[-1:-1] = end
                block.body[-1] = self._exit_through_wait(last, pipe)
            else:
                self._call(end, pipeline_end, [pipe, last])
                block.body[-1:-1] = end

    def _hoist_fixed_items(self):
        """Move each ``arrays[i]`` of the loads' arguments (an item fixed during the loop,
        see :func:`_fixed_item`) to the end of the loop's preheader, where it is taken
        once: in the loop, and in the copies ahead of each iteration, picking the item
        again is a branch on ``i`` each time (the copies ahead of the first iterations
        took it before the loop already)."""
        preheader = self.func_ir.blocks[self.preheader]
        for statement in [s for s in self.clones if isinstance(s.value, ir.Expr) and
                          s.value.op == "getitem"]:
            block = next(b for b in self.func_ir.blocks.values() if statement in b.body)
            block.body.remove(statement)
            preheader.body.insert(len(preheader.body) - 1, statement)
            self.clones.remove(statement)

    def _products_of_two_loads(self):
        """True where a product reads two of the loop's loads (a k-loop): its products may
        run on into the next iteration (see
        :mod:`~numba_tile.compiler.frontend.products_in_flight`)."""
        tiles = []  # each load's tile, and its reshapes and conversions
        for load in self.loads:
            uses = load.operand_uses
            tiles.append({load.statement.target.name} |
                         {call.target.name for _, call in uses.reshapes} |
                         {call.target.name for _, call, _ in uses.roundings})
        for label in self.loop.body:
            for statement in self.func_ir.blocks[label].body:
                call = statement.value if isinstance(statement, ir.Assign) else None
                if isinstance(call, ir.Expr) and call.op == "call" and \
                        callee(self.func_ir, call) is matrix.mma and len(call.args) >= 2:
                    x, y = call.args[0].name, call.args[1].name
                    if any(x in a and y in b for a in tiles for b in tiles if a is not b):
                        return True
        return False

    def _exit_through_wait(self, last, pipe):
        """The branch that ends an iteration: after the last one, to the loop's test (which
        then leaves the loop) through a block of its own that waits for the products still
        running; else on to the next iteration through a copy of the iterator's step,
        without the test (it would pass: ``last`` is the test it makes). Every way out of
        the loop then passes the wait, and the loop is left from its header as before."""
        blocks = self.func_ir.blocks
        out, again = max(blocks) + 1, max(blocks) + 2
        blocks[out] = ir.Block(self.scope, self.loc)
        self._call(blocks[out].body, pipeline_end, [pipe, self._const(blocks[out].body, True)])
        blocks[out].body.append(ir.Jump(self.loop.header, self.loc))
        blocks[again] = ir.Block(self.scope, self.loc)
        scopes = {id(block.scope): block.scope for block in blocks.values()}
        blocks[again].body = [copy.deepcopy(statement, dict(scopes))
                              for statement in self.iteration_block.body[:-1]]
        blocks[again].body.append(ir.Jump(self.entry, self.loc))
        return ir.Branch(last, out, again, self.loc)

    def _parameter_of(self, load):
        """The kernel parameter the load's array is, where the TMA may copy it (the call
        does not say ``allow_tma=False``), else None; for an item of a list argument
        (``arrays[i]``), ``(parameter, number of items, the list's variable)``."""
        if not _allows_tma(self.func_ir, load.statement.value):
            return None
        array = definition(self.func_ir, load.arguments[0])
        if isinstance(array, ir.Arg):
            return array.index
        if isinstance(array, ir.Expr) and array.op in ("getitem", "static_getitem"):
            container = definition(self.func_ir, array.value)
            if isinstance(container, ir.Arg) and container.index < len(self.arg_types) and \
                    isinstance(self.arg_types[container.index], ListType):
                return (container.index, self.arg_types[container.index].count, array.value)
        return None

    def _range_bounds(self, statements, range_call=None):
        """``(start, step)`` variables of the loop's ``range`` call (or of ``range_call``),
        constants appended to ``statements`` where the call leaves them out."""
        args = (range_call or self.range_call).args
        if len(args) == 1:
            return self._const(statements, 0), self._const(statements, 1)
        start = args[0]
        step = args[2] if len(args) == 3 else self._const(statements, 1)
        return start, step

    def _induction_var(self):
        for statement in self.iteration_block.body:
            if isinstance(statement, ir.Assign) and statement.target.name in self.induction \
                    and isinstance(statement.value, ir.Expr) and \
                    statement.value.op == "pair_first":
                return statement.target
        raise AssertionError("the loop has no loop variable")

    def _copied_arguments(self, statements, k, renamed=None):
        """The loads' arguments computed again with the loop variable replaced by ``k``:
        ``[array, index, shape, padding, order]`` of each load, flattened; ``renamed``:
        the copies of values fixed during the loop to read instead (by name)."""
        renamed = dict(renamed or {})
        renamed.update({name: k for name in self.induction})
        # the copies' variables stay in the function's scopes: a Var copied deeply copies
        # its whole scope (every variable of the function) unless the memo holds it
        scopes = {id(block.scope): block.scope for block in self.func_ir.blocks.values()}
        for statement in self.clones:
            value = copy.deepcopy(statement.value, dict(scopes))
            if isinstance(value, ir.Var):
                value = renamed.get(value.name, value)
            else:
                replace_vars_inner(value, renamed)
            target = self.scope.redefine("$pipeline_arg", statement.loc)
            statements.append(ir.Assign(value, target, statement.loc))
            renamed[statement.target.name] = target
        result = []
        for load in self.loads:
            for var in self._arguments_of(statements, load.arguments):
                result.append(renamed.get(var.name, var))
        return result

    def _arguments_of(self, statements, arguments):
        """The load's argument variables (padding and order: None where the call gave
        none)."""
        array, index, shape, padding, order = arguments
        return [array, index, shape] + [v if v is not None else self._const(statements, None)
                                        for v in (padding, order)]

    def _const(self, statements, value):
        var = self.scope.redefine("$pipeline_const", self.loc)
        statements.append(ir.Assign(ir.Const(value, self.loc), var, self.loc))
        return var

    def _global(self, statements, fn):
        var = self.scope.redefine(f"${fn.__name__}", self.loc)
        statements.append(ir.Assign(ir.Global(fn.__name__, fn, self.loc), var, self.loc))
        return var

    def _call(self, statements, fn, args, name="$pipeline_call"):
        function = self._global(statements, fn)
        var = self.scope.redefine(name, self.loc)
        statements.append(ir.Assign(ir.Expr.call(function, list(args), (), self.loc), var,
                                    self.loc))
        return var

    def _binop(self, statements, fn, lhs, rhs):
        var = self.scope.redefine("$pipeline_index", self.loc)
        statements.append(ir.Assign(ir.Expr.binop(fn, lhs, rhs, self.loc), var, self.loc))
        return var


def _has_phis(func_ir):
    """True where Numba's SSA form has been made (after ``static_iter``, see
    :mod:`.static_iter`)."""
    return any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr) and
               s.value.op == "phi" for b in func_ir.blocks.values() for s in b.body)


def _allows_tma(func_ir, call):
    """False where the ``ct.load`` call says ``allow_tma=False`` (or a value not known
    before typing)."""
    allow = dict(call.kws).get("allow_tma")
    if allow is None:
        return True
    value = definition(func_ir, allow)
    return isinstance(value, (ir.Const, ir.Global, ir.FreeVar)) and value.value in (None, True)


def _load_arguments(func_ir, statement):
    """The variables of the :data:`~numba_tile.compiler.intrinsics.LOAD_FIELDS` of a
    ``ct.load`` given only those arguments (and the hints ``latency``, ``allow_tma``), else
    None (``padding_mode`` and ``order``: None where the call gives none)."""
    if not (isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr) and
            statement.value.op == "call"):
        return None
    call = statement.value
    if callee(func_ir, call) is not memory.load or call.vararg or call.varkwarg:
        return None
    try:
        bound = _LOAD_SIGNATURE.bind(*call.args, **dict(call.kws)).arguments
    except TypeError:  # not a valid call: typing says why
        return None
    if set(bound) - set(LOAD_FIELDS) - set(_IGNORED_HINTS):
        return None
    return tuple(bound.get(name) for name in LOAD_FIELDS)


def _fixed_item(value, assigned_in_loop, induction):
    """True for ``sequence[i]`` where neither the sequence nor ``i`` changes during the
    loop (an item of a list argument, chosen before the loop): the copies ahead of the
    loop's iterations index it the same, never past its end."""
    return isinstance(value, ir.Expr) and value.op == "getitem" and all(
        v.name not in assigned_in_loop and v.name not in induction
        for v in (value.value, value.index))


def _argument_slice(func_ir, earlier, loop_blocks, arguments, induction):
    """The statements among ``earlier`` (those every iteration runs before the load) that
    compute its arguments, where all of them are plain arithmetic of the loop variable and
    of values fixed during the loop; None otherwise."""
    assigned_in_loop = {}
    for block in loop_blocks:
        for statement in block.body:
            if isinstance(statement, ir.Assign):
                assigned_in_loop.setdefault(statement.target.name, []).append(statement)
    before = {s.target.name: s for s in earlier if isinstance(s, ir.Assign)}
    position = {id(s): i for i, s in enumerate(earlier)}
    needed = []
    # (variable, position of the statement that reads it: the load's is past the end)
    pending = [(v, len(earlier)) for v in arguments if v is not None]
    while pending:
        var, reader = pending.pop()
        if var.name in induction:
            continue
        assignments = assigned_in_loop.get(var.name)
        if not assignments:
            continue  # fixed during the loop
        statement = before.get(var.name)
        if len(assignments) != 1 or statement is None or not (
                is_pure(func_ir, statement.value) or
                _fixed_item(statement.value, assigned_in_loop, induction)):
            return None
        if position[id(statement)] >= reader:
            return None  # read before it is assigned: the previous iteration's value
        if all(s is not statement for s in needed):
            needed.append(statement)
        used = statement.value.list_vars() if isinstance(statement.value, ir.Expr) else \
            [statement.value] if isinstance(statement.value, ir.Var) else []
        pending.extend((v, position[id(statement)]) for v in used)
    return needed
