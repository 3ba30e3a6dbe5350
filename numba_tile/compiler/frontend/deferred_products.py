"""Asynchronous products waited for where their results are first read (an IR pass before
typing, plus the calls it writes).

On Hopper a ``wgmma`` product runs on the tensor cores while the warps issue other
instructions; its result registers may only be read once a ``wgmma.wait_group N`` has seen
it complete (groups complete in the order they were committed: ``N`` is how many younger
groups may still run). Waiting right after each product, as a plain ``ct.mma`` does, leaves
the tensor cores idle while the warps compute on the previous result. In the loop of flash
attention written as FlashAttention-3 does::

    for j in range(1, blocks):
        scores = ct.mma(q, k_j, zeros)               # S_j
        acc = ct.mma(p.astype(f16), v_before, acc * alpha)   # P_{j-1} V_{j-1}
        m_new = ct.maximum(m_i, ct.max(scores, ...))  # softmax of S_j ...

the softmax of ``S_j`` can run while ``P_{j-1} V_{j-1}`` is on the tensor cores. This pass
rewrites each ``ct.mma`` into :func:`deferred_mma` (committed, not waited for) and puts
``x = product_wait(x, N)`` before the first statement that reads a result ``x`` on each path,
``N`` counting the products started since ``x``'s on every path there (fewer is always
safe: it only waits for more). ``product_wait`` also passes the registers through, so that
nothing reading them can be moved before the wait.

What stays as it was:

- a product whose two operands are tiles of one pipelined load (the k-loop of a matrix
  product): :mod:`~numba_tile.compiler.planning.staged_loads` already lets it run on into the
  next iteration;
- a product with an operand from registers that goes through the scratch buffer: that
  buffer is shared with other ops, so its lowering still waits at once.

A product still running at the end of a loop's iteration is waited for there
(:func:`products_retired`): the next iterations refill the stages of pipelined loads it may
read. Off Hopper, or where a product does not run as ``wgmma``, the calls are plain products
(an empty group is committed, so the counts stay exact) and pass-throughs.
"""

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions

from ...language import matrix
from ..intrinsics import pipeline_tile, staged_as_tfloat32, deferred_mma, product_wait, \
    products_retired
from .device_output import callee
from .contract import tile_pass

# wait_group counts above this are written as this one (waiting for more is safe)
MOST_PENDING = 3
# passes over the blocks (per block) before the data flow counts every age as 0
ROUNDS_PER_BLOCK = 4


# -- the pass -------------------------------------------------------------------------------------
@tile_pass("wait for products where read", needs=("PipelineMmaLoads",))
@register_pass(mutates_CFG=False, analysis_only=False)
class DeferProductWaits(FunctionPass):
    """Rewrite products to wait where their results are read (see the module's docstring)."""

    _name = "numba_tile_defer_product_waits"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        products = {id(s) for block in func_ir.blocks.values() for s in block.body
                    if _deferrable(func_ir, s)}
        if not products:
            return False
        for block in func_ir.blocks.values():
            body = []
            for statement in block.body:
                if id(statement) in products:
                    loc = statement.loc
                    function = block.scope.redefine("$deferred_mma", loc)
                    body.append(ir.Assign(ir.Global(deferred_mma.__name__, deferred_mma, loc),
                                          function, loc))
                    statement.value.func = function
                body.append(statement)
            block.body = body
        _Waits(func_ir, products).rewrite()
        func_ir._definitions = build_definitions(func_ir.blocks)
        return True


def _mma_call(func_ir, statement):
    value = statement.value if isinstance(statement, ir.Assign) else None
    if isinstance(value, ir.Expr) and value.op == "call" and \
            callee(func_ir, value) is matrix.mma:
        return value
    return None


def _deferrable(func_ir, statement):
    """True for a ``ct.mma`` statement whose operands are not both tiles of one pipeline."""
    call = _mma_call(func_ir, statement)
    if call is None or len(call.args) < 2:
        return False
    pipelines = [_pipeline_of(func_ir, operand) for operand in call.args[:2]]
    return pipelines[0] is None or pipelines[0] != pipelines[1]


def _pipeline_of(func_ir, var, depth=0):
    """The name of the pipeline variable of the ``pipeline_tile`` call ``var`` holds
    (through copies and ``staged_as_tfloat32``), or None."""
    try:
        definition = func_ir.get_definition(var)
    except KeyError:
        return None
    if isinstance(definition, ir.Var) and depth < 8:
        return _pipeline_of(func_ir, definition, depth + 1)
    if isinstance(definition, ir.Expr) and definition.op == "call" and depth < 8:
        function = callee(func_ir, definition)
        if function is pipeline_tile and definition.args:
            return definition.args[0].name
        if function is staged_as_tfloat32 and definition.args:
            return _pipeline_of(func_ir, definition.args[0], depth + 1)
    return None


class _Waits:
    """The forward data flow of the results still to wait for, and the rewrite.

    A state maps a variable holding a deferred product's result, not yet passed through
    ``product_wait``, to ``(age, done)``: how many products were started after it at least
    (on every path), and whether a wait has seen it complete on every path."""

    def __init__(self, func_ir, products):
        self.func_ir, self.products = func_ir, products
        self.conservative = False  # every age counted as 0 (see _fixed_point)
        self.cfg = compute_cfg_from_blocks(func_ir.blocks)
        joins = self._joins()
        # per block: the names that meet another definition where one of its edges goes
        self.phis = {label: set().union(*(joins.get(successor, ())
                                          for successor, _ in self.cfg.successors(label)))
                     for label in func_ir.blocks}
        self.into_joins = {label for label, names in self.phis.items() if names}
        self.loop_ends = set()  # blocks that jump back to the header of a loop they are in
        for loop in self.cfg.loops().values():
            self.loop_ends.update(label for label, _ in self.cfg.predecessors(loop.header)
                                  if label in loop.body)

    def _joins(self):
        """For each block, the names assigned by statements of more than one site that
        reach its start (Numba makes a phi of them there)."""
        names = {s.target.name for b in self.func_ir.blocks.values() for s in b.body
                 if isinstance(s, ir.Assign) and (id(s) in self.products or
                                                  isinstance(s.value, ir.Var))}
        last = {}  # per block: name -> the site of its last assignment there
        for label, block in self.func_ir.blocks.items():
            last[label] = {s.target.name: (label, i) for i, s in enumerate(block.body)
                           if isinstance(s, ir.Assign) and s.target.name in names}
        reaching = {label: {} for label in self.func_ir.blocks}
        changed = True
        while changed:
            changed = False
            for label in self.cfg.topo_order():
                incoming = {}
                for predecessor, _ in self.cfg.predecessors(label):
                    out = dict(reaching[predecessor])
                    out.update({n: frozenset([site]) for n, site in
                                last[predecessor].items()})
                    for name, sites in out.items():
                        incoming[name] = incoming.get(name, frozenset()) | sites
                if incoming != reaching[label]:
                    reaching[label], changed = incoming, True
        return {label: {n for n, sites in r.items() if len(sites) > 1}
                for label, r in reaching.items()}

    def rewrite(self):
        entries = self._fixed_point()
        for label, block in self.func_ir.blocks.items():
            if entries.get(label) is not None:
                block.body = self._transfer(label, block, dict(entries[label]), rewrite=True)

    def _fixed_point(self):
        """The state at the start of each block. Should the ages not settle (a wait marks
        older results complete, so a smaller age in can mean more done out), it starts over
        counting every age as 0: each wait then waits for all, which always settles."""
        order = self.cfg.topo_order()
        entries = {label: None for label in order}
        entries[self.cfg.entry_point()] = {}
        exits = {}
        changed, rounds = True, 0
        while changed:
            changed, rounds = False, rounds + 1
            if rounds > ROUNDS_PER_BLOCK * len(order) + 8 and not self.conservative:
                self.conservative = True
                return self._fixed_point()
            for label in order:
                if label != self.cfg.entry_point():
                    incoming = [exits[p] for p, _ in self.cfg.predecessors(label)
                                if exits.get(p) is not None]
                    merged = _merge(incoming) if incoming else None
                    if merged != entries[label]:
                        entries[label], changed = merged, True
                if entries[label] is None:
                    continue
                out = dict(entries[label])
                self._transfer(label, self.func_ir.blocks[label], out)
                if exits.get(label) != out:
                    exits[label], changed = out, True
        return entries

    def _transfer(self, label, block, state, rewrite=False):
        """Run ``block`` from ``state`` (updated in place); with ``rewrite``, the new body."""
        body = []
        for statement in block.body:
            if statement is block.terminator and label in self.into_joins:
                # a result given another value on another path meets it in a phi, whose
                # copy would read the registers before the wait
                for name in [n for n in state if n in self.phis[label]]:
                    body += self._wait(block, statement.loc, name, state)
            if statement is block.terminator and (label in self.loop_ends or
                                                  isinstance(statement, ir.Return)):
                running = [age for age, done in state.values() if not done]
                if running:
                    body += self._call(block, statement.loc, products_retired,
                                       [min(running)])
                    for name, (age, _) in state.items():
                        state[name] = (age, True)
            if not isinstance(statement, ir.Del):
                for name in _reads(statement):
                    if name in state:
                        body += self._wait(block, statement.loc, name, state)
                if isinstance(statement, ir.Assign):
                    target, value = statement.target.name, statement.value
                    if id(statement) in self.products:
                        for name, (age, done) in state.items():
                            state[name] = (0 if self.conservative else
                                           min(age + 1, MOST_PENDING), done)
                        state[target] = (0, False)
                    elif isinstance(value, ir.Var) and value.name in state:
                        state[target] = state[value.name]
                    else:
                        state.pop(target, None)
            body.append(statement)
        return body if rewrite else None

    def _wait(self, block, loc, name, state):
        """Statements passing ``name`` through ``product_wait``; ``state`` updated."""
        age = state.pop(name)[0]
        for other, (other_age, done) in state.items():
            if other_age >= age and not self.conservative:  # started before it: complete
                state[other] = (other_age, True)
        var = ir.Var(block.scope, name, loc)
        return self._call(block, loc, product_wait, [var, age], target=var)

    def _call(self, block, loc, function, arguments, target=None):
        """Statements calling ``function`` (constants for plain ``arguments``)."""
        scope, statements, variables = block.scope, [], []
        callee_var = scope.redefine(f"${function.__name__}", loc)
        statements.append(ir.Assign(ir.Global(function.__name__, function, loc), callee_var,
                                    loc))
        for argument in arguments:
            if isinstance(argument, ir.Var):
                variables.append(argument)
                continue
            constant = scope.redefine("$wait_count", loc)
            statements.append(ir.Assign(ir.Const(argument, loc), constant, loc))
            variables.append(constant)
        result = target or scope.redefine(f"${function.__name__}_result", loc)
        statements.append(ir.Assign(ir.Expr.call(callee_var, variables, (), loc), result, loc))
        return statements


def _reads(statement):
    """The names a statement reads, except the source of a plain copy (which only gives
    the result another name)."""
    if isinstance(statement, ir.Assign):
        if not isinstance(statement.value, ir.Expr):  # a copy, constant, global, argument
            return []
        return list(dict.fromkeys(v.name for v in statement.value.list_vars()))
    return list(dict.fromkeys(v.name for v in statement.list_vars()))


def _merge(states):
    merged = {}
    for state in states:
        for name, (age, done) in state.items():
            if name in merged:
                other_age, other_done = merged[name]
                merged[name] = (min(age, other_age), done and other_done)
            else:
                merged[name] = (age, done)
    return merged
