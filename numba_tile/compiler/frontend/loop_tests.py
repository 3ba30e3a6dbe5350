"""A loop's test reads the values the loop carries, which are not constants, as in cuTile.

cuTile types a ``while`` loop's test at the loop's head, on the variables the loop carries
(those it assigns): a loosely typed constant there is a run-time scalar of its own dtype
(:mod:`numba_tile.interpreter.loop_carried`), so the test is decided at run time, and the
loop's paths meet at its head and at its exit. Python's bytecode tests a ``while`` loop twice,
before it (on the values it enters with) and at the end of its body (on the values the body
gave); Numba's branch pruning then decides ``a < 10`` for ``a = 0`` before the loop, and
for ``a = 11.0`` at the end of the body, and with the paths it removes goes the join of
``a``'s two types: ``a = 0``, ``while a < 10: a = 11.0`` compiled where cuTile (and the
interpreter) raise "Type of `a` depends on path taken" where ``a`` is read after the loop.

:func:`keep_loop_tests` makes each such read a ``cast`` of the variable (a copy of the same
type, which no pruning looks through), in the tests of each loop: the branches that leave it
or enter it, where they read a variable the loop assigns.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     a = 0
...     while a < 10:
...         a = 11.0
...     ct.scatter(x, 0, a)
>>> ct.compile(k, (np.zeros(1, np.float32),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of `a` depends on path taken: Tile[int32,()] (on one ...
...
"""

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions

from .contract import tile_pass


def _assigned(blocks, labels):
    """The user variables (not Numba's temporaries) the blocks ``labels`` assign."""
    return {s.target.name for label in labels for s in blocks[label].body
            if isinstance(s, ir.assign_types) and not s.target.name.startswith("$")}


def _feeding(block, condition):
    """The statements of ``block`` computing its branch's ``condition`` (through
    temporaries assigned in the block)."""
    definitions = {s.target.name: s for s in block.body if isinstance(s, ir.assign_types)}
    found, pending = [], [condition.name]
    while pending:
        name = pending.pop()
        statement = definitions.get(name)
        if statement is None or statement in found or not name.startswith("$"):
            continue
        found.append(statement)
        value = statement.value
        pending += [value.name] if isinstance(value, ir.var_types) else \
            [v.name for v in value.list_vars()] if isinstance(value, ir.expr_types) else []
    return found


def _keep(block, statement, names):
    """Read each of ``names`` that ``statement`` reads through a ``cast`` put before it."""
    index = block.body.index(statement)
    for var in statement.value.list_vars():
        if var.name not in names:
            continue
        copy = block.scope.make_temp(statement.loc)
        block.body.insert(index, ir.Assign(ir.Expr.cast(var, statement.loc), copy,
                                           statement.loc))
        index += 1
        _replace(statement.value, var.name, copy)


def _replace(expression, name, copy):
    fields = expression._kws  # (an expression's operands: lhs, rhs, args...)
    for field, value in list(fields.items()):
        if isinstance(value, ir.var_types) and value.name == name:
            fields[field] = copy
        elif isinstance(value, (list, tuple)):
            fields[field] = type(value)(copy if isinstance(v, ir.var_types) and v.name == name
                                        else v for v in value)


def keep_loop_tests(func_ir):
    """Make the variables a loop assigns opaque where its tests read them (see the module's
    docstring). Returns True where the IR changed."""
    blocks = func_ir.blocks
    cfg = compute_cfg_from_blocks(blocks)
    changed = False
    for loop in cfg.loops().values():
        names = _assigned(blocks, loop.body)
        if not names:
            continue
        # the branches that leave the loop from inside, and those entering it from outside
        tests = [label for label in loop.body if any(t not in loop.body for t, _ in
                                                     cfg.successors(label))]
        tests += [label for label, _ in cfg.predecessors(loop.header)
                  if label not in loop.body]
        for label in set(tests):
            block = blocks[label]
            branch = block.terminator
            if not isinstance(branch, ir.branch_types):
                continue
            for statement in _feeding(block, branch.cond):
                if isinstance(statement.value, ir.expr_types) and \
                        any(v.name in names for v in statement.value.list_vars()):
                    _keep(block, statement, names)
                    changed = True
    if changed:
        func_ir._definitions = build_definitions(blocks)
    return changed


@tile_pass("keep the tests of loops on the values they carry")
@register_pass(mutates_CFG=False, analysis_only=False)
class KeepLoopTests(FunctionPass):
    """The compiler pass running :func:`keep_loop_tests`."""

    _name = "numba_tile_keep_loop_tests"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return keep_loop_tests(state.func_ir)
