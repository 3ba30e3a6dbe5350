"""The values that meet where the two sides of an ``if`` join are typed in cuTile's order, so
that "Type of `a` depends on path taken" names them as cuTile and the interpreter do: the
else side's type first, then the if side's (``<enum constant MemoryOrder.WEAK> (on one
path) vs. <enum constant MemoryOrder.RELAXED> (on another)`` for ``RELAXED`` in the ``if``
and ``WEAK`` in the ``else``); an ``if`` without ``else`` has the value from before it as its
else side.

Numba types a phi's incoming values in the order its SSA reconstruction found the
predecessors of the block, which follows the hash order of a set of block labels: the same
kernel could name the two types either way, depending on the bytecode offsets. This pass
sorts the incoming values of each phi where the sides of a branch join: by the way taken at
each branch from the join's immediate dominator down (false before true), which for nested
``if``/``elif`` chains is cuTile's order too (an inner join's mismatch is reported first). At
a loop's head the value on entry comes before those of the back edges; the ways out of a
loop keep Numba's order (:mod:`numba_tile.interpreter.loop_exits` orders them by source
position).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     if ct.bid(0) == 0:
...         dtype = ct.float16
...     else:
...         dtype = ct.int8
...     ct.store(x, (0,), ct.full((1,), 0, dtype))
>>> ct.compile(k, (np.zeros(1, np.float32),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of `dtype` depends on path taken: DTypeSpec(dtype=<DType...
'int8'>) (on one path) vs. DTypeSpec(dtype=<DType 'float16'>) (on another)
...
"""

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from .contract import tile_pass


def _branch_path(blocks, dominators, head, label, join):
    """The ways taken (False for a branch's false side) at each branch from ``head`` down
    the dominator tree to block ``label``, whose edge into ``join`` ends the path."""
    chain = [label]
    while chain[-1] != head:
        parent = dominators[chain[-1]]
        if parent == chain[-1]:  # (the entry: head does not dominate label)
            return ()
        chain.append(parent)
    path = []
    for block, child in zip(reversed(chain), list(reversed(chain))[1:] + [join]):
        branch = _branch(blocks, block)
        if branch is not None and child in (branch.truebr, branch.falsebr) and \
                branch.truebr != branch.falsebr:
            path.append(child == branch.truebr)
    return tuple(path)


def _branch(blocks, label):
    """The ``Branch`` that ends block ``label``, or None."""
    terminator = blocks[label].body[-1] if blocks[label].body else None
    return terminator if isinstance(terminator, ir.branch_types) else None


def order_joins(func_ir):
    """Sort the incoming values of the phis of ``func_ir`` (see the module's docstring).
    True if one moved."""
    blocks = func_ir.blocks
    cfg = compute_cfg_from_blocks(blocks)
    dominators = cfg.immediate_dominators()
    all_dominators = cfg.dominators()
    exits = {}  # loop exits: the blocks a loop's edges out of it reach, and the loop's body
    for loop in cfg.loops().values():
        for label in loop.exits:
            exits.setdefault(label, set()).update(loop.body)
    moved = False
    for join, block in blocks.items():
        phis = [s.value for s in block.body if isinstance(s, ir.assign_types) and
                isinstance(s.value, ir.expr_types) and s.value.op == "phi"]
        if not phis or join not in dominators:
            continue
        head = dominators[join]

        def key(label):
            if join in all_dominators.get(label, ()):
                return (1, ())  # a back edge of a loop: after the value on entry
            return (0, _branch_path(blocks, dominators, head, label, join))
        if any(label in exits.get(join, ()) for phi in phis for label in phi.incoming_blocks):
            continue  # a way out of a loop
        for phi in phis:
            pairs = list(zip(phi.incoming_blocks, phi.incoming_values))
            ordered = sorted(pairs, key=lambda pair: key(pair[0]))
            if [label for label, _ in ordered] != phi.incoming_blocks:
                phi.incoming_blocks = [label for label, _ in ordered]
                phi.incoming_values = [value for _, value in ordered]
                moved = True
    return moved


@tile_pass("type the values meeting where the sides of an if join in cuTile's order",
           needs=("PruneConstantBranches",))
@register_pass(mutates_CFG=False, analysis_only=False)
class OrderJoins(FunctionPass):
    """The compiler pass running :func:`order_joins`."""

    _name = "numba_tile_order_joins"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        order_joins(state.func_ir)
        return True
