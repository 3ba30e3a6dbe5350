"""Which loops of a kernel's IR are plain ``for`` loops over a ``range``, and what of them a
pass rewriting them needs: the ``range`` call, the blocks around the loop, and the names
that hold the loop variable (see :mod:`.pipelining` and :mod:`.producer_warp`).

>>> from numba_tile.compiler.frontend.range_loops import RangeLoop
>>> RangeLoop._fields[:3]
('preheader', 'entry', 'range_call')
"""

from collections import namedtuple

from numba.cuda.core import ir

from .device_output import callee, definition

RangeLoop = namedtuple("RangeLoop", [
    "preheader",   # the label of the one block that enters the loop
    "entry",       # the label of the block an iteration starts with
    "range_call",  # the ``range(...)`` call (an ir.Expr)
    "range_var",   # the variable that holds the range
    "iterator",    # the range's iterator, which the loop's test reads
    "iteration_block",  # the block where the iterator gives the next value
    "induction",   # the names that hold the loop variable
])


def range_loop(func_ir, loop):
    """``loop`` (a loop of Numba's CFG) as a :data:`RangeLoop`, or None where it is not a
    plain ``for`` over a ``range`` with one way in and one way out."""
    blocks = func_ir.blocks
    header = blocks[loop.header]
    if not list(header.find_exprs("iternext")) and isinstance(header.terminator, ir.Jump) \
            and len(header.body) == 1 and header.terminator.target in loop.body:
        # the back edges may go to a block that only jumps to the iterator's block (seen
        # after a conditional expression before the loop)
        header = blocks[header.terminator.target]
    iternexts = list(header.find_exprs("iternext"))
    if len(iternexts) != 1 or len(loop.entries) != 1 or len(loop.exits) != 1:
        return None
    getiter = definition(func_ir, iternexts[0].value)
    if not (isinstance(getiter, ir.Expr) and getiter.op == "getiter"):
        return None
    range_call = definition(func_ir, getiter.value)
    if not (isinstance(range_call, ir.Expr) and range_call.op == "call" and
            callee(func_ir, range_call) is range and not range_call.kws and
            1 <= len(range_call.args) <= 3 and range_call.vararg is None):
        return None
    branch = header.terminator
    preheader = next(iter(loop.entries))
    if not (isinstance(branch, ir.Branch) and branch.truebr in loop.body and
            isinstance(blocks[preheader].terminator, ir.Jump)):
        return None
    entry = branch.truebr
    induction = _induction_names(header, blocks[entry], iternexts[0])
    if induction is None:
        return None
    # the loop variable's names, unless the iteration assigns them again
    assigned = {}
    for label in loop.body:
        for statement in blocks[label].body:
            if isinstance(statement, ir.Assign):
                assigned[statement.target.name] = assigned.get(statement.target.name, 0) + 1
    induction = {name for name in induction if assigned.get(name, 0) <= 1}
    if not induction:
        return None
    return RangeLoop(preheader, entry, range_call, getiter.value, iternexts[0].value, header,
                     induction)


def _induction_names(header, entry, iternext):
    """The names that hold the loop variable: the header's ``pair_first`` of the iterator's
    next pair, and its copies."""
    pairs = {s.target.name for s in header.body
             if isinstance(s, ir.Assign) and s.value is iternext}
    names = set()
    for block in (header, entry):
        for statement in block.body:
            if not isinstance(statement, ir.Assign):
                continue
            value = statement.value
            if isinstance(value, ir.Expr) and value.op == "pair_first" and \
                    value.value.name in pairs or isinstance(value, ir.Var) and \
                    value.name in names:
                names.add(statement.target.name)
    return names or None
