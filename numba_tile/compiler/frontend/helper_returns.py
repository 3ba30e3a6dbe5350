"""The values a helper returns on its paths meet, whether or not the caller uses the result.

cuTile types a helper's return value where its ``return`` statements meet: a helper that
returns ``3`` on one path and ``5.0`` on another is a ``TileTypeError`` ("Type of return
value depends on path taken") even where the call's result is unused. Numba's inlining turns
each ``return v`` into ``result = v`` and a jump to the code after the call; a result that
nothing reads is then never joined (SSA gives each path its own version), so its types are
never compared. This pass adds a read of such a result where the paths meet, after the
branches on constants are decided: only the returns that can run are joined, by the
unification of :mod:`..typing.joins`. At run time the read is a copy of nothing used.

>>> import numba_tile as ct
>>> def sign(flag):
...     if flag:
...         return 1
...     return -1.0
>>> @ct.kernel
... def k():
...     sign(ct.bid(0) == 0)
>>> ct.compile(k, (), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of return value depends on path taken: ...
...
"""

from collections import defaultdict

from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions

from .contract import tile_pass

#: the variables Numba's bytecode translation returns from (``$54return_value.1``, and
#: ``$54return_const.1`` where Python 3.12 returns a constant; once inlined, renamed with the
#: helper's prefix: ``helper_v2__v54return_value_1``)
_RETURN_VALUES = ("return_value", "return_const")


def join_returns(func_ir):
    """Add a read of each unread result of an inlined call that two or more returns set, at
    the block they jump to. True if one was added."""
    returns = defaultdict(list)  # (result name, label jumped to) -> the returning blocks
    for label, block in func_ir.blocks.items():
        body = block.body
        if len(body) < 2 or not isinstance(body[-1], ir.Jump):
            continue
        assign = body[-2]
        if isinstance(assign, ir.Assign) and isinstance(assign.value, ir.Var) and \
                assign.target.name.startswith("$") and \
                any(kind in assign.value.name for kind in _RETURN_VALUES):
            returns[assign.target.name, body[-1].target].append(block)
    read = _read_names(func_ir) if returns else set()
    added = False
    for (name, label), returning in returns.items():
        if len(returning) < 2 or name in read or label not in func_ir.blocks:
            continue
        # the read goes into a block of its own between the returns and the code after the
        # call: the paths meet there, at the helper's last return (where a mismatch is
        # reported), not at the caller's line
        scope, loc = func_ir.blocks[label].scope, returning[-1].body[-2].loc
        joined = ir.Block(scope, loc)
        joined.body = [ir.Assign(ir.Var(scope, name, loc),
                                 scope.redefine("$joined_return", loc), loc),
                       ir.Jump(label, loc)]
        new_label = max(func_ir.blocks) + 1
        func_ir.blocks[new_label] = joined
        for block in returning:
            block.body[-1] = ir.Jump(new_label, block.body[-1].loc)
        added = True
    if added:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return added


def _read_names(func_ir):
    """The names of the variables some statement reads."""
    read = set()
    for block in func_ir.blocks.values():
        for statement in block.body:
            targets = {statement.target.name} if isinstance(statement, ir.Assign) else set()
            read.update(v.name for v in statement.list_vars() if v.name not in targets)
    return read


@tile_pass("join the returns of inlined helpers whose result is unread",
           needs=("InlineCalls", "PruneConstantBranches"))
@register_pass(mutates_CFG=True, analysis_only=False)
class JoinHelperReturns(FunctionPass):
    """The compiler pass running :func:`join_returns`."""

    _name = "numba_tile_join_helper_returns"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return join_returns(state.func_ir)
