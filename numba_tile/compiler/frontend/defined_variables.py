"""A variable read where some path to the read has not set it is an error, in compiled code
as in the interpreter: cuTile's ``TileTypeError`` "Use of potentially undefined variable
`acc`" where another path to the read sets it, its ``TileSyntaxError`` "Undefined variable
acc used" where none does.

cuTile decides the branches on constants first, then requires every variable a statement
reads to be set on every path that reaches it: ``acc`` set after an ``if`` on one side only,
or read in a loop before the loop sets it (the previous iteration set it), is potentially
undefined; set in the ``if`` branch and read in the ``else`` branch, undefined. Numba's SSA
lets such a read use the definition of another path. After typing (when a branch on a
condition typed as a constant is decided too), this pass runs a must-be-set and a
may-be-set analysis over the blocks that can run and raises at the first read of a
variable of the user's code that is not set on every path. A loop is taken to run at least
once where it is left: a variable its body sets can be read after it, as Python reads it
after a loop that ran (the interpreter raises where a loop that ran no iteration is read
from). Numba's own ``NotDefinedError`` (a read before any assignment, found while it
translates the bytecode) becomes the syntax error
(:func:`~numba_tile.compiler.error_translation.as_tile_error`).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     if ct.bid(0) == 0:
...         t = ct.load(x, (0,), (4,))
...     ct.store(x, (0,), t)
>>> ct.compile(k, (np.zeros(4, np.float32),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Use of potentially undefined variable `t`
...
"""

import re

from numba.core import types
from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.controlflow import CFGraph

from ...errors import SourceLocation, TileSyntaxError, TileTypeError
from .contract import TYPED, tile_pass

# the prefix Numba's inlining gives the variables of a helper (``helper_v2_acc``: "acc" of
# ``helper$2``), and the version SSA adds (``acc.3``)
_INLINED = re.compile(r"^.*_v\d+_(?=[A-Za-z_])")
_VERSION = re.compile(r"(\.\d+)+$")


class _Flow:
    """The blocks that can run (a branch on a condition typed as a constant goes one way),
    their loops, and the names set on every path to the end of each block."""

    def __init__(self, func_ir, typemap):
        self.blocks = func_ir.blocks
        successors = _feasible_successors(func_ir, typemap)
        self.order = sorted(successors)
        graph = CFGraph()
        for label in self.order:
            graph.add_node(label)
        for label, targets in successors.items():
            for target in targets:
                graph.add_edge(label, target)
        graph.set_entry_point(min(successors))
        graph.process()
        self.loops = graph.loops()  # header -> loop (its body: the blocks in it)
        self.predecessors = {label: [p for p, _ in graph.predecessors(label)]
                             for label in self.order}
        self.entry = min(self.blocks)
        self.set_at_end = {label: None for label in self.order}  # None: not yet reached
        # the names set on some path to the end of each block (a way back into a loop too)
        self.maybe_at_end = {label: frozenset() for label in self.order}
        changed = True
        while changed:
            changed = False
            for label in self.order:
                end = self.maybe_on_entry(label) | {s.target.name for s in
                                                    self.blocks[label].body
                                                    if isinstance(s, ir.Assign)}
                if end != self.maybe_at_end[label]:
                    self.maybe_at_end[label], changed = end, True
        changed = True
        while changed:
            changed = False
            for label in self.order:
                start = self.on_entry(label)
                if start is None:
                    continue
                end = start | {s.target.name for s in self.blocks[label].body
                               if isinstance(s, ir.Assign)}
                if end != self.set_at_end[label]:
                    self.set_at_end[label], changed = end, True

    def latches(self, header):
        """The blocks that go back to loop ``header``."""
        return [p for p in self.predecessors[header] if p in self.loops[header].body]

    def leaves_loop(self, source, target):
        """True for the edge from a loop's header out of the loop (the loop is done)."""
        return source in self.loops and target not in self.loops[source].body

    def at_end(self, source, target):
        """The names set on every path along the edge ``source`` -> ``target``: where it
        leaves a loop from its header, after an iteration (the loop ran)."""
        if self.leaves_loop(source, target):
            found = _meet(self.set_at_end[p] for p in self.latches(source))
            if found is not None:
                return found | {s.target.name for s in self.blocks[source].body
                                if isinstance(s, ir.Assign)}
        return self.set_at_end[source]

    def maybe_on_entry(self, label):
        """The names set on some path into block ``label``."""
        return frozenset().union(*(self.maybe_at_end[p] for p in self.predecessors[label]))

    def on_entry(self, label):
        """The names set on every path into block ``label`` (None where no way in has been
        reached yet)."""
        if label == self.entry:
            return frozenset()
        return _meet(self.at_end(p, label) for p in self.predecessors[label])


def _meet(sets):
    found = None
    for names in sets:
        if names is not None:
            found = set(names) if found is None else found & names
    return None if found is None else frozenset(found)


def undefined_variable_error(func_ir, typemap):
    """The ``TileSyntaxError`` of the first read of a variable not set on every path that
    reaches it, or None."""
    flow = _Flow(func_ir, typemap)
    blocks = flow.blocks
    reads = []  # (name, loc, block) of the reads of phis
    for label in flow.order:
        names = set(flow.on_entry(label) or ())
        for statement in blocks[label].body:
            if is_phi(statement):
                names.add(statement.target.name)
                continue
            target = statement.target.name if isinstance(statement, ir.Assign) else None
            for var in statement.list_vars():
                if var.name == target:
                    continue
                reads.append((var.name, statement.loc, label))
                if var.name not in names and _checked(var.name):
                    return undefined_variable(var.name, statement.loc.filename,
                                              statement.loc.line,
                                              var.name in flow.maybe_on_entry(label))
            if target is not None:
                names.add(target)
    return _phi_error(flow, reads)


def _phi_error(flow, reads):
    """The error of a phi that a read needs and that some way in gives no value: SSA puts one
    where a variable's definitions meet, ``Undefined`` from a way that sets none. The phis
    of a block copy their values in order on each way in (one may read another of its block
    set before it), and a phi of a loop's header read after the loop takes the value of an
    iteration."""
    phis = {}
    for label in flow.order:
        statements = [s for s in flow.blocks[label].body if is_phi(s)]
        for position, statement in enumerate(statements):
            phis[statement.target.name] = (label, position, statement.value)
    work = [read for read in reads if read[0] in phis]
    seen = set()
    while work:
        name, loc, where = work.pop()
        label, position, phi = phis[name]
        after_loop = label in flow.loops and where not in flow.loops[label].body
        if (name, after_loop) in seen:
            continue
        seen.add((name, after_loop))
        ways = flow.latches(label) if after_loop else flow.predecessors[label]
        for incoming in ways:
            value = _incoming(phi, incoming)
            while isinstance(value, ir.Var) and value.name in phis and \
                    phis[value.name][0] == label and phis[value.name][1] < position:
                value = _incoming(phis[value.name][2], incoming)
            if not isinstance(value, ir.Var) or value.name not in (
                    flow.at_end(incoming, label) or ()):
                if _checked(name):  # (another way in gives it a value)
                    return undefined_variable(name, loc.filename, loc.line, True)
            elif value.name in phis:
                work.append((value.name, loc, incoming))
    return None


def _incoming(phi, label):
    """The value ``phi`` takes coming from block ``label`` (None where it names none)."""
    for value, incoming in zip(phi.incoming_values, phi.incoming_blocks):
        if incoming == label:
            return value
    return None


def is_phi(statement):
    """True for an SSA phi: ``name = phi(...)``."""
    return isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr) and \
        statement.value.op == "phi"


def feasible_blocks(func_ir, typemap):
    """The labels of the blocks that can run: a branch on a condition typed as a constant
    goes one way."""
    return set(_feasible_successors(func_ir, typemap))


def _feasible_successors(func_ir, typemap):
    """The blocks that can run, each with the blocks it can go to: a branch on a condition
    typed as a constant goes one way."""
    blocks, successors, work = func_ir.blocks, {}, [min(func_ir.blocks)]
    while work:
        label = work.pop()
        if label in successors or label not in blocks:
            continue
        terminator = blocks[label].terminator
        targets = []
        if isinstance(terminator, ir.Branch):
            condition = typemap.get(terminator.cond.name)
            if isinstance(condition, (types.BooleanLiteral, types.IntegerLiteral)):
                targets = [terminator.truebr if condition.literal_value
                           else terminator.falsebr]
            else:
                targets = [terminator.truebr, terminator.falsebr]
        elif isinstance(terminator, ir.Jump):
            targets = [terminator.target]
        successors[label] = [t for t in targets if t in blocks]
        work += successors[label]
    return successors


def user_name(name):
    """The name a variable has in the user's code (without SSA's version and the prefix of
    an inlined helper), or None for the compiler's own variables."""
    name = _VERSION.sub("", name)
    name = _INLINED.sub("", name)
    if not name.isidentifier() or name.startswith("__numba_tile") or name.startswith("_v"):
        return None
    return name


def _checked(name):
    return not name.startswith("$") and user_name(name) is not None


def undefined_variable(name, filename, line, potentially=False):
    """cuTile's error for a read of variable ``name`` (as Numba names it) at a line, the
    name underlined: ``TileTypeError`` "Use of potentially undefined variable" where some
    path to the read sets it (``potentially``), else ``TileSyntaxError``."""
    user = user_name(name) or name
    location = SourceLocation(filename, line)
    text = location.source_line or ""
    found = re.search(rf"\b{re.escape(user)}\b", text)
    if found is not None:
        location.col, location.end_col = found.start(), found.end()
    if potentially:
        return TileTypeError(f"Use of potentially undefined variable `{user}`", location)
    return TileSyntaxError(f"Undefined variable {user} used", location)


@tile_pass("check that every variable read is set on every path to the read",
           needs=(TYPED,))
@register_pass(mutates_CFG=False, analysis_only=True)
class CheckDefinedVariables(FunctionPass):
    """The compiler pass running :func:`undefined_variable_error`."""

    _name = "numba_tile_check_defined_variables"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        error = undefined_variable_error(state.func_ir, state.typemap)
        if error is not None:
            raise error
        return False
