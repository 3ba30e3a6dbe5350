"""``for v in ct.static_iter(iterable)``: loops unrolled before typing.

The loop body is copied once per value of the iterable. In each copy ``v`` is a compile-time
constant (for a ``range`` whose bounds are constants or ``Constant`` parameters) or the tuple's
entry (a ``static_getitem``, so that each copy is typed with that entry's own type: a tuple of
tiles of several dtypes, of dtypes, of functions...). Loops are unrolled outermost and earliest
first, so a tuple built by one unrolled loop (``parts = parts + (t * k,)``) has a length that
the next one can read off its assignments.
"""

import copy
import operator

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.errors import ConstantInferenceError
from numba.cuda.core.ir_utils import build_definitions, replace_var_names

from ...errors import TileTypeError, TileUnsupportedFeatureError
from ...language import debugging
from .device_output import callee, source_location
from .contract import tile_pass


@tile_pass("unroll static_iter loops")
@register_pass(mutates_CFG=True, analysis_only=False)
class UnrollStaticIter(FunctionPass):
    """Unroll every ``ct.static_iter`` loop of the kernel (see the module's docstring)."""

    _name = "numba_tile_unroll_static_iter"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        changed = False
        while True:
            found = _first_static_iter_loop(func_ir)
            if found is None:
                return changed
            _Unroller(func_ir, state.args, *found).unroll()
            func_ir._definitions = build_definitions(func_ir.blocks)
            changed = True


def _definition(func_ir, var):
    try:
        return func_ir.get_definition(var)
    except KeyError:
        return None


def _first_static_iter_loop(func_ir):
    """``(loop, iternext, getiter, call)`` of the first ``static_iter`` loop in program
    order, or None."""
    cfg = compute_cfg_from_blocks(func_ir.blocks)
    order = {label: i for i, label in enumerate(cfg.topo_order())}
    for loop in sorted(cfg.loops().values(), key=lambda lp: order.get(lp.header, 0)):
        iternexts = list(func_ir.blocks[loop.header].find_exprs("iternext"))
        if len(iternexts) != 1:
            continue
        getiter = _definition(func_ir, iternexts[0].value)
        if not (isinstance(getiter, ir.Expr) and getiter.op == "getiter"):
            continue
        call = _definition(func_ir, getiter.value)
        if isinstance(call, ir.Expr) and call.op == "call" and \
                callee(func_ir, call) is debugging.static_iter:
            return loop, iternexts[0], getiter, call
    return None


class _Unroller:
    """Replaces one loop by copies of its body, one per value."""

    def __init__(self, func_ir, arg_types, loop, iternext, getiter, call):
        self.func_ir, self.arg_types = func_ir, arg_types
        self.loop, self.iternext, self.getiter, self.call = loop, iternext, getiter, call
        self.blocks = func_ir.blocks
        self.cfg = compute_cfg_from_blocks(func_ir.blocks)

    def unroll(self):
        loop, blocks, loc = self.loop, self.blocks, self.call.loc
        if len(self.call.args) != 1 or self.call.kws or self.call.vararg:
            raise TileTypeError("ct.static_iter() takes one iterable", loc=source_location(loc))
        count, value_of = self._iteration_values(self.call.args[0])
        header = blocks[loop.header]
        branch = header.terminator
        if not isinstance(branch, ir.Branch) or branch.truebr not in loop.body:
            raise TileUnsupportedFeatureError(
                "The compiler cannot unroll this ct.static_iter loop", loc=source_location(loc))
        exit_label, entry_label = branch.falsebr, branch.truebr
        body = sorted(loop.body - {loop.header})
        roles = _header_roles(header, self.iternext)
        next_label = max(blocks) + 1
        starts = []
        for _ in range(count):
            starts.append({old: next_label + i for i, old in enumerate([loop.header] + body)})
            next_label += len(body) + 1
        for index, labels in enumerate(starts):
            after = starts[index + 1][loop.header] if index + 1 < count else exit_label
            # this iteration's header: the loop variable gets its value, then the body
            start = ir.Block(header.scope, header.loc)
            for statement in header.body[:-1]:
                role = roles.get(statement.target.name) if isinstance(
                    statement, ir.Assign) else None
                if role == "first":
                    start.append(ir.Assign(value_of(index), statement.target, statement.loc))
                elif role is None:
                    start.append(copy.deepcopy(statement))
            start.append(ir.Jump(labels[entry_label], branch.loc))
            blocks[labels[loop.header]] = start
            targets = {loop.header: after, **{b: labels[b] for b in body}}
            for old in body:
                block = copy.deepcopy(blocks[old])
                _retarget(block.terminator, targets)
                blocks[labels[old]] = block
            # each copy's temporaries get names of their own (so that nested static_iter
            # loops in the copies keep one definition of their iterators); the user's
            # variables keep theirs, as they may live on after the loop
            copied = {labels[b]: blocks[labels[b]] for b in [loop.header] + body}
            temporaries = {s.target.name for b in copied.values() for s in b.body
                           if isinstance(s, ir.Assign) and s.target.name.startswith("$")}
            replace_var_names(copied, {n: f"{n}.u{labels[loop.header]}" for n in temporaries})
        first = starts[0][loop.header] if starts else exit_label
        for label in loop.entries:
            _retarget(blocks[label].terminator, {loop.header: first})
        for label in [loop.header] + body:
            del blocks[label]
        # the static_iter call, the iterator and its copies are unused now
        gone = {self.iternext.value.name} | {
            s.target.name for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and (s.value is self.getiter or s.value is self.call)}
        for block in blocks.values():
            block.body = [s for s in block.body if not (
                isinstance(s, ir.Assign) and (s.target.name in gone or isinstance(
                    s.value, ir.Var) and s.value.name in gone)
                or isinstance(s, ir.Del) and s.value in gone)]

    def _iteration_values(self, iterable):
        """``(count, value_of)``: the number of iterations, and the IR value of the loop
        variable in iteration ``i``."""
        loc = self.call.loc
        label, index = self._use_site()
        values = self._constant_range(iterable, label, index)
        if values is not None:
            return len(values), lambda i: ir.Const(values[i], loc)
        length = self._length_at(iterable.name, label, index, set())
        if length is None:
            raise TileUnsupportedFeatureError(
                "ct.static_iter() needs a range with compile-time bounds or a tuple whose "
                "length is known before typing (a tuple argument or display, or a sum of "
                "those)", loc=source_location(loc))
        return length, lambda i: ir.Expr.static_getitem(iterable, i, None, loc)

    def _constant_range(self, var, label, index):
        """The values of ``range(...)`` with compile-time bounds, or None if ``var`` is not
        a range."""
        definition = self._reaching(var.name, label, index, set())
        if definition is None:
            return None
        value, where = definition
        if not (isinstance(value, ir.Expr) and value.op == "call" and
                callee(self.func_ir, value) is range and not value.kws):
            return None
        bounds = [self._compile_time_int(a, *where) for a in value.args]
        if any(b is None for b in bounds):
            raise TileTypeError("ct.static_iter(range(...)) needs compile-time bounds",
                                loc=source_location(value.loc))
        return tuple(range(*bounds))

    def _compile_time_int(self, var, label, index):
        definition = self._reaching(var.name, label, index, set())
        value = None
        if definition is not None:
            value, _ = definition
            if isinstance(value, ir.Arg):
                value = getattr(self.arg_types[value.index], "literal_value", None) \
                    if self.arg_types is not None else None
            elif isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
                value = value.value
            else:
                try:
                    value = self.func_ir.infer_constant(var)
                except ConstantInferenceError:
                    value = None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _reaching(self, name, label, index, visited):
        """``(value, (label, index))``: what variable ``name`` holds before statement
        ``index`` of block ``label``, following copies back along straight-line code (a
        variable of the user's is assigned once per unrolled copy); None if unknown."""
        while True:
            if (label, index) in visited:
                return None
            visited.add((label, index))
            body = self.blocks[label].body
            for i in range(index - 1, -1, -1):
                statement = body[i]
                if isinstance(statement, ir.Assign) and statement.target.name == name:
                    if isinstance(statement.value, ir.Var):
                        return self._reaching(statement.value.name, label, i, visited)
                    return statement.value, (label, i)
            predecessors = [p for p, _ in self.cfg.predecessors(label)]
            if len(predecessors) != 1:
                return None
            label = predecessors[0]
            index = len(self.blocks[label].body)

    def _use_site(self):
        for label, block in self.blocks.items():
            for index, statement in enumerate(block.body):
                if isinstance(statement, ir.Assign) and statement.value is self.call:
                    return label, index
        raise AssertionError("the static_iter call is not in the kernel")

    def _length_at(self, name, label, index, visited):
        """The length of the tuple variable ``name`` holds before statement ``index`` of
        block ``label``."""
        definition = self._reaching(name, label, index, visited)
        if definition is None:
            return None
        value, (label, index) = definition
        return self._value_length(value, label, index, visited)

    def _value_length(self, value, label, index, visited):
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
            return len(value.value) if isinstance(value.value, tuple) else None
        if isinstance(value, ir.Arg):
            arg_type = self.arg_types[value.index] if self.arg_types is not None else None
            return len(arg_type) if hasattr(arg_type, "__len__") else None
        if not isinstance(value, ir.Expr):
            return None
        if value.op == "build_tuple":
            return len(value.items)
        if (value.op == "binop" and value.fn is operator.add) or (
                value.op == "inplace_binop" and value.fn is operator.iadd):  # ``parts += (t,)``
            parts = [self._length_at(v.name, label, index, set())
                     for v in (value.lhs, value.rhs)]
            return None if None in parts else sum(parts)
        if value.op == "call" and callee(self.func_ir, value) is tuple and \
                len(value.args) == 1:
            return self._length_at(value.args[0].name, label, index, set())
        return None


def _header_roles(header, iternext):
    """The header's variables that belong to the iteration itself: the iterator's copy, the
    ``iternext`` pair and its parts (``"first"`` is the loop variable's value)."""
    roles = {}
    for statement in header.body:
        if not isinstance(statement, ir.Assign):
            continue
        value = statement.value
        if statement.target.name == iternext.value.name:
            roles[statement.target.name] = "iterator"
        elif value is iternext:
            roles[statement.target.name] = "pair"
        elif isinstance(value, ir.Expr) and value.op in ("pair_first", "pair_second") and \
                roles.get(value.value.name) == "pair":
            roles[statement.target.name] = value.op[len("pair_"):]
    return roles


def _retarget(terminator, targets):
    if isinstance(terminator, ir.Jump):
        terminator.target = targets.get(terminator.target, terminator.target)
    elif isinstance(terminator, ir.Branch):
        terminator.truebr = targets.get(terminator.truebr, terminator.truebr)
        terminator.falsebr = targets.get(terminator.falsebr, terminator.falsebr)
