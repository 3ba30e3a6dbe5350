"""Warpgroups taking turns on the work between their two products (an IR pass before typing).

With a producer warpgroup (:mod:`.producer_warp`) the consumers are two warpgroups or more,
and each iteration of a flash-attention loop is, for each of them: start ``S = Q K^T`` on
the tensor cores, wait for it, compute the softmax (an exponential a score, on the
multiprocessor's few special function units), start ``P V``. Left alone, the warpgroups
drift into step: both compute their exponentials at once, queueing on those units
(``ncu``: MIO throttling), while the tensor cores idle. cuDNN and FlashAttention-3 make
them take turns: a warpgroup computes its softmax while the other's products run. This
pass writes the turns::

    consumer_turns_begin()      # before the loop: the last warpgroup gives the first turn
    for ...:
        s = deferred_mma(...)   # the first product: started before the turn
        consumer_turn_take()    # wait for this warpgroup's turn
        ...                     # (waits for s, the softmax)
        consumer_turn_give()    # the next warpgroup's turn
        acc = deferred_mma(...) # the second product
    consumer_turns_end()        # after it: the first warpgroup takes the last turn given

The turn is taken after the first product has started and before its result is waited
for, so that ptxas keeps the wait, and everything that reads the result, after it (ptxas
moves plain arithmetic across a barrier that none of it reads: a turn taken after the
wait held nothing). Warpgroup ``i`` waits at named barrier ``2 + i`` and gives the turn at
the next one's (:mod:`~numba_tile.compiler.lowering.warp_roles`); the barriers of each
loop balance, so no arrival is left over when the block ends.

The pass writes turns only where they cannot deadlock or mislead: a kernel with a producer
warp, a loop with one way in and one way out (whose exit no other way reaches), and in it
exactly two products, each on every way through an iteration, the first ahead of the
second and its result waited for on the way to the second (not in FlashAttention-3's
two-loop form, whose second product starts first). Where the producer turns out to be a
single warp, or off Hopper, the calls lower to nothing. In a kernel without a producer
whose loop could have one (``CompileState.producer_candidate``), the pass only notes whether
a loop would take turns (``CompileState.producer_turns``): the producer the compiler adds
unasked is for such loops.
"""

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ..compile_state import current
from ..intrinsics import consumer_registers, consumer_turn_give, consumer_turn_take, \
    consumer_turns_begin, consumer_turns_end, deferred_mma, product_wait
from .contract import tile_pass
from .device_output import callee


@tile_pass("let the consumer warpgroups take turns between their products",
           needs=("DeferProductWaits",))
@register_pass(mutates_CFG=False, analysis_only=False)
class TakeWarpgroupTurns(FunctionPass):
    """Write the consumers' turns around a loop's two products (see the module's
    docstring)."""

    _name = "numba_tile_take_warpgroup_turns"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        compilation = current()
        producer = bool(_calls(func_ir, func_ir.blocks.values(), consumer_registers))
        if not producer and compilation.producer_candidate is None:
            return False
        cfg = compute_cfg_from_blocks(func_ir.blocks)
        for loop in cfg.loops().values():
            sites = _turn_sites(func_ir, cfg, loop)
            if sites is None:
                continue
            if not producer:  # only noted: would the producer the compiler may add pay?
                compilation.producer_turns = True
                return False
            _write_turns(*sites)
            return True
        return False


def _calls(func_ir, blocks, function):
    """``(block, index)`` of each statement in ``blocks`` that calls ``function``."""
    found = []
    for block in blocks:
        for index, statement in enumerate(block.body):
            value = statement.value if isinstance(statement, ir.Assign) else None
            if isinstance(value, ir.Expr) and value.op == "call" and \
                    callee(func_ir, value) is function:
                found.append((block, index))
    return found


def _turn_sites(func_ir, cfg, loop):
    """``(preheader, first product, second product, exit)`` blocks and statements of a loop
    that takes turns, or None (see the module's docstring)."""
    blocks = func_ir.blocks
    if len(loop.entries) != 1 or len(loop.exits) != 1:
        return None
    exit_label, = loop.exits
    if any(p not in loop.body for p, _ in cfg.predecessors(exit_label)):
        return None
    body = [blocks[label] for label in sorted(loop.body)]
    products = _calls(func_ir, body, deferred_mma)
    if len(products) != 2:
        return None
    labels = {id(block): label for label, block in blocks.items()}
    latches = [p for p, _ in cfg.predecessors(loop.header) if p in loop.body]
    dominators = cfg.dominators()

    def ahead(site, other):  # True where ``site`` comes first on every way to ``other``
        (block, index), (other_block, other_index) = site, other
        if block is other_block:
            return index < other_index
        return labels[id(block)] in dominators[labels[id(other_block)]]
    if any(labels[id(block)] not in dominators[latch] for block, _ in products
           for latch in latches):
        return None  # a product some iterations skip
    first, second = products if ahead(*products) else products[::-1]
    if not ahead(first, second):
        return None  # neither comes first on every way
    result = first[0].body[first[1]].target.name
    if not any(ahead(wait, second) for wait in _calls(func_ir, body, product_wait)
               if wait[0].body[wait[1]].value.args[0].name == result):
        return None  # the second product starts before the first's result is read
    preheader, = loop.entries
    return blocks[preheader], first, second, blocks[exit_label]


def _write_turns(preheader, first, second, exit_block):
    """Put the turns' calls in (``first``, ``second``: ``(block, index)`` of the products)."""
    (first_block, first_index), (second_block, second_index) = first, second
    # the later statement first, so that the earlier index still holds in a shared block
    second_block.body[second_index:second_index] = _call(second_block, consumer_turn_give)
    first_block.body[first_index + 1:first_index + 1] = _call(first_block, consumer_turn_take)
    preheader.body[-1:-1] = _call(preheader, consumer_turns_begin)
    exit_block.body[0:0] = _call(exit_block, consumer_turns_end)


def _call(block, function):
    """The statements of a call of ``function`` (no arguments) in ``block``."""
    loc = block.loc
    callee_var = block.scope.redefine(f"${function.__name__}", loc)
    result = block.scope.redefine(f"${function.__name__}_result", loc)
    return [ir.Assign(ir.Global(function.__name__, function, loc), callee_var, loc),
            ir.Assign(ir.Expr.call(callee_var, [], (), loc), result, loc)]
