"""``for v in ct.static_iter(ITERABLE)``: loops unrolled before typing.

The source rewrite (:mod:`numba_tile.source.static_expressions`) makes each loop's iterable a call
``compiled_static_iter(key, v1, ..., vn)`` of its static expression and the local variables
it reads. This pass gives every such call an instance number
(:class:`~numba_tile.compiler.compile_state.StaticIterState`: a loop nested in an unrolled one
is a new instance in each copy), evaluates the iterable and copies the loop's body once per
item, the loop variable assigned the item in each copy (:mod:`..typing.static_iteration`'s plans: a
constant, an entry of a value passed...). Loops are unrolled outermost and earliest first,
so a tuple built by one unrolled loop (``parts += (t * k,)``) is known to the next one, and
the branches the copies decide (``if k == 1:``, a comprehension's ``if``) are removed at once.

Where the iterable needs the types of its values (``range(t.shape[0])``), the kernel is cut
after the loop's call and typed that far: the typing evaluates the iterable, and the pipeline
compiles the kernel again with its items known
(:class:`~numba_tile.compiler.typing.static_iteration.UnrollAgain`).
"""

import copy
import itertools

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks, compute_use_defs
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions, replace_var_names
from numba.cuda.core.untyped_passes import InlineInlinables, ReconstructSSA

from ...errors import TileError, TileSyntaxError, TileUnsupportedFeatureError
from ...language import debugging
from ...source.static_iter_uses import STATIC_ITER_INNER_RETURN
from ...source.user_code import traceback_location
from ..compile_state import current
from ..typing.static_iteration import NeedsTyping, UnrollAgain, compiled_static_iter, \
    compiled_static_iter_instance, iteration_plans
from .closures import captured_variables
from .contract import TYPED, tile_pass
from .device_output import callee, definition, source_location
from .inlining import InlineCalls
from .static_values import ValuesBeforeTyping


@tile_pass("unroll static_iter loops")
@register_pass(mutates_CFG=True, analysis_only=False)
class UnrollStaticIter(FunctionPass):
    """Unroll every ``ct.static_iter`` loop of the kernel (see the module's docstring)."""

    _name = "numba_tile_unroll_static_iter"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        compilation = current()
        run = compilation.passes_run.count(type(self).__name__)
        changed = cut = False
        for round_ in itertools.count():
            unrolled = _unroll_loops(state, compilation, (run, round_))
            if unrolled is None:  # cut after a loop whose items typing finds
                changed = cut = True
            elif not unrolled:
                break
            changed = True
            # an item may be a helper or a closure (``for f in ct.static_iter(fns)``): called
            # in the copies, it is inlined as any other call, and may hold static_iter loops
            # (before a cut too: the next round unrolls them or cuts the kernel after them)
            InlineInlinables().run_pass(state)
            InlineCalls().run_pass(state)
        if changed and not cut:
            _merge_blocks(state.func_ir)
        if changed:
            # a variable the copies assign may take values of several types in turn (a
            # tuple of tiles halved by each copy), where this pass runs after Numba's SSA
            ReconstructSSA().run_pass(state)
        return changed


def _unroll_loops(state, compilation, run):
    """Unroll the kernel's ``static_iter`` loops in turn; whether any was, or None where the
    kernel was cut after one whose items need typing."""
    static, func_ir = compilation.static_iter, state.func_ir
    func_ir._definitions = build_definitions(func_ir.blocks)
    changed = _number_calls(func_ir, static, run)
    while True:
        found = _first_static_iter_loop(func_ir)
        if found is None:
            return changed
        changed = True
        unroller = _Unroller(func_ir, *found)
        known = static.plans.get(unroller.instance)
        if known is None:
            values = ValuesBeforeTyping(func_ir, state.args, state.typingctx)
            key = static.keys[unroller.instance]
            try:
                known = iteration_plans(key, values.passed(unroller.call.args[1:],
                                                           *unroller.site),
                                        compilation.static_namespaces[key],
                                        values.functions), False
            except NeedsTyping:
                unroller.stop_after_call()
                return None
            except TileError as error:
                if error.loc is None:  # (the iterable's expression, else the loop's line)
                    error.loc = traceback_location(error.__traceback__) or \
                        source_location(unroller.call.loc)
                raise
        unroller.unroll(*known)
        _prune_decided_branches(func_ir, state.args, state.typingctx)


@tile_pass("check the items of static_iter loops that typing found", needs=(TYPED,))
@register_pass(mutates_CFG=False, analysis_only=True)
class CheckStaticIterItems(FunctionPass):
    """After typing: each ``static_iter`` loop left for typing gets its items for the
    kernel's final types; where they are new (the kernel was cut after the loop) or differ
    from those it was unrolled with, the pipeline compiles the kernel again with them."""

    _name = "numba_tile_check_static_iter_items"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        static = current().static_iter
        again = False
        for block in state.func_ir.blocks.values():
            for call in block.find_exprs("call"):
                function = state.typemap.get(call.func.name)
                if getattr(function, "typing_key", None) is not compiled_static_iter_instance:
                    continue
                arguments = state.calltypes[call].args
                instance = arguments[0].literal_value
                plans = static.typed[instance, tuple(arguments[1:])]
                if static.plans.get(instance) != (plans, True):
                    static.plans[instance] = (plans, True)
                    again = True
        if again:
            raise UnrollAgain()
        return False


def _number_calls(func_ir, static, run):
    """Make each ``compiled_static_iter`` call of the IR a call of an instance (see
    :class:`~numba_tile.compiler.compile_state.StaticIterState`); a ``ct.static_iter`` the
    source rewrite did not reach is an error."""
    changed, seen = False, {}
    for label in sorted(func_ir.blocks):
        block = func_ir.blocks[label]
        for statement in list(block.body):
            if not (isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr)
                    and statement.value.op == "call"):
                continue
            call = statement.value
            function = callee(func_ir, call)
            if function is debugging.static_iter:
                raise TileUnsupportedFeatureError(
                    "ct.static_iter() needs the Python source of the function that uses it",
                    loc=source_location(call.loc))
            if function is not compiled_static_iter:
                continue
            key = definition(func_ir, call.args[0]).value
            occurrence = seen[key] = seen.get(key, -1) + 1
            instance = static.instance(("top", run, key, occurrence), key)
            at = block.body.index(statement)
            block.body[at:at] = _instance_call(block.scope, call, instance, call.loc)
            changed = True
    if changed:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


def _instance_call(scope, call, instance, loc):
    """The statements that make ``call`` a call of loop instance ``instance``."""
    function = scope.redefine("$static_iter_function", loc)
    number = scope.redefine("$static_iter_instance", loc)
    call.func, call.args = function, [number] + list(call.args[1:])
    return [ir.Assign(ir.Global("compiled_static_iter_instance", compiled_static_iter_instance,
                                loc), function, loc),
            ir.Assign(ir.Const(instance, loc), number, loc)]


def _first_static_iter_loop(func_ir):
    """``(loop, iternext, getiter, call)`` of the first ``static_iter`` loop in program
    order, or None."""
    cfg = compute_cfg_from_blocks(func_ir.blocks)
    order = {label: i for i, label in enumerate(cfg.topo_order())}
    for loop in sorted(cfg.loops().values(), key=lambda lp: order.get(lp.header, 0)):
        iternexts = list(func_ir.blocks[loop.header].find_exprs("iternext"))
        if len(iternexts) != 1:
            continue
        getiter = definition(func_ir, iternexts[0].value)
        if not (isinstance(getiter, ir.Expr) and getiter.op == "getiter"):
            continue
        call = definition(func_ir, getiter.value)
        if isinstance(call, ir.Expr) and call.op == "call" and \
                callee(func_ir, call) is compiled_static_iter_instance:
            return loop, iternexts[0], getiter, call, cfg
    return None


class _Unroller:
    """Replaces one loop by copies of its body, one per item."""

    def __init__(self, func_ir, loop, iternext, getiter, call, cfg):
        self.func_ir, self.blocks, self.cfg = func_ir, func_ir.blocks, cfg
        self.loop, self.iternext, self.getiter, self.call = loop, iternext, getiter, call
        self.instance = definition(func_ir, call.args[0]).value
        self.site = next((label, index) for label, block in self.blocks.items()
                         for index, statement in enumerate(block.body)
                         if isinstance(statement, ir.Assign) and statement.value is call)

    def stop_after_call(self):
        """Cut the kernel after the loop's call: typing then evaluates the iterable."""
        label, index = self.site
        block, loc = self.blocks[label], self.call.loc
        none = block.scope.redefine("$static_iter_none", loc)
        result = block.scope.redefine("$static_iter_return", loc)
        block.body = block.body[:index + 1] + [
            ir.Assign(ir.Const(None, loc), none, loc),
            ir.Assign(ir.Expr.cast(none, loc), result, loc), ir.Return(result, loc)]
        _remove_dead_blocks(self.func_ir)

    def unroll(self, plans, by_typing):
        """Copy the body once per item (``plans``); the call stays where typing found the
        items, to be checked against the kernel's final types."""
        loop, blocks = self.loop, self.blocks
        header = blocks[loop.header]
        branch = header.terminator
        if not isinstance(branch, ir.Branch) or branch.truebr not in loop.body:
            raise TileUnsupportedFeatureError(
                "The compiler cannot unroll this ct.static_iter loop",
                loc=source_location(self.call.loc))
        exit_label, entry_label = branch.falsebr, branch.truebr
        body = sorted(loop.body - {loop.header})
        self._check_exits(body, exit_label)
        arguments = self._snapshot_arguments(plans)
        roles = _header_roles(header, self.iternext)
        local = self._iteration_variables()
        next_label = max(blocks) + 1
        starts = []
        for _ in plans:
            starts.append({old: next_label + i for i, old in enumerate([loop.header] + body)})
            next_label += len(body) + 1
        for index, (plan, labels) in enumerate(zip(plans, starts)):
            after = starts[index + 1][loop.header] if index + 1 < len(plans) else exit_label
            # this iteration's header: the loop variable gets its item, then the body
            start = ir.Block(header.scope, header.loc)
            for statement in header.body[:-1]:
                role = roles.get(statement.target.name) if isinstance(
                    statement, ir.Assign) else None
                if role == "first":
                    item = _build(plan, start, arguments, statement.loc)
                    start.append(ir.Assign(item, statement.target, statement.loc))
                elif role is None:
                    start.append(_copy(statement, [header.scope]))
            start.append(ir.Jump(labels[entry_label], branch.loc))
            blocks[labels[loop.header]] = start
            targets = {loop.header: after, **{b: labels[b] for b in body}}
            for old in body:
                block = _copy(blocks[old], [blocks[old].scope])
                _retarget(block.terminator, targets)
                blocks[labels[old]] = block
            copied = {labels[b]: blocks[labels[b]] for b in [loop.header] + body}
            self._renumber_nested(copied.values(), index)
            _forward_unpacking([copied[labels[b]] for b in [loop.header] + body])
            # each copy's own variables get names of their own (so that nested static_iter
            # loops in the copies keep one definition of their iterators)
            renamed = {n: f"{n}.u{labels[loop.header]}" for n in local}
            for name in renamed.values():  # known to the scope, as SSA needs
                if name not in header.scope.localvars:
                    header.scope.define(name, header.loc)
            replace_var_names(copied, renamed)
        first = starts[0][loop.header] if starts else exit_label
        for label in loop.entries:
            _retarget(blocks[label].terminator, {loop.header: first})
        for label in [loop.header] + body:
            del blocks[label]
        # the iterator and its copies are unused now; so is the call, unless typing found
        # the items (it then checks them again)
        gone = {self.iternext.value.name} | {
            s.target.name for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and (s.value is self.getiter or (
                s.value is self.call and not by_typing))}
        for block in blocks.values():
            block.body = [s for s in block.body if not (
                isinstance(s, ir.Assign) and (s.target.name in gone or isinstance(
                    s.value, ir.Var) and s.value.name in gone)
                or isinstance(s, ir.Del) and s.value in gone)]
        self.func_ir._definitions = build_definitions(blocks)

    def _iteration_variables(self):
        """The variables each iteration has to itself: assigned in the loop, but neither
        read by the next iteration nor read or assigned outside the loop, nor captured by a
        closure (a cell, which the closures of all iterations share, as in Python)."""
        loop, blocks = self.loop, self.blocks
        inside = {label: blocks[label] for label in loop.body}
        uses, defs = compute_use_defs(inside)
        outside = {v.name for label, block in blocks.items() if label not in loop.body
                   for statement in block.body for v in statement.list_vars()}
        live = {label: set(uses[label]) for label in inside}
        changed = True
        while changed:  # live at the entry of each block, along the loop's own edges
            changed = False
            for label in inside:
                after = set().union(*(live[s] for s, _ in self.cfg.successors(label)
                                      if s in inside))
                new = live[label] | (after - defs[label])
                if new != live[label]:
                    live[label], changed = new, True
        assigned = set().union(*defs.values())
        return assigned - live[loop.header] - outside - captured_variables(blocks)

    def _check_exits(self, body, exit_label):
        """The body leaves only through its end (the source checks reject the rest)."""
        for label in body:
            for successor, _ in self.cfg.successors(label):
                if successor not in self.loop.body:
                    if successor == exit_label:
                        raise TileSyntaxError("Break in a for loop with static_iter() is not "
                                              "supported", source_location(self.call.loc))
                    raise TileUnsupportedFeatureError(STATIC_ITER_INNER_RETURN,
                                                      source_location(self.call.loc))

    def _snapshot_arguments(self, plans):
        """Copies of the values passed to the iterable that the items read (``path``
        plans), made where it is evaluated (the body may assign the variables)."""
        read = set()
        pending = list(plans)
        while pending:
            plan = pending.pop()
            if plan[0] == "path":
                read.add(plan[1])
            elif plan[0] == "tuple":
                pending.extend(plan[1])
        label, index = self.site
        block, loc = self.blocks[label], self.call.loc
        copies = {j: ir.Assign(argument, block.scope.redefine("$static_iter_value", loc), loc)
                  for j, argument in enumerate(self.call.args[1:]) if j in read}
        block.body[index:index] = copies.values()
        self.site = (label, index + len(copies))
        return {j: copy.target for j, copy in copies.items()}

    def _renumber_nested(self, blocks, iteration):
        """The loops inside this copy of the body are instances of their own."""
        static = current().static_iter
        for block in blocks:
            functions = {s.target.name: s.value.value for s in block.body
                         if isinstance(s, ir.Assign) and isinstance(s.value, ir.Global)}
            constants = {s.target.name: s for s in block.body
                         if isinstance(s, ir.Assign) and isinstance(s.value, ir.Const)}
            for statement in block.body:
                value = getattr(statement, "value", None)
                if isinstance(value, ir.Expr) and value.op == "call" and \
                        functions.get(value.func.name) is compiled_static_iter_instance:
                    number = constants[value.args[0].name]
                    old = number.value.value
                    number.value = ir.Const(static.instance(
                        ("copy", old, self.instance, iteration), static.keys[old]),
                        number.loc)


def _copy(node, scopes):
    """A deep copy of a block or statement sharing the scopes of its variables (a copied
    scope would name new variables as the original does)."""
    memo = {id(scope): scope for scope in scopes}
    for var in node.list_vars() if isinstance(node, ir.Stmt) else [
            v for statement in node.body for v in statement.list_vars()]:
        memo[id(var.scope)] = var.scope
    return copy.deepcopy(node, memo)


def _build(plan, block, arguments, loc):
    """A variable holding the value ``plan`` describes (statements added to ``block``)."""
    scope = block.scope

    def assign(value):
        target = scope.redefine("$static_iter_item", loc)
        block.append(ir.Assign(value, target, loc))
        return target
    kind = plan[0]
    if kind == "const":
        return assign(ir.Const(plan[1], loc))
    if kind in ("global", "function"):
        value = current().static_helpers.value(plan[1]) if kind == "function" else plan[1]
        return assign(ir.Global(getattr(plan[1], "__name__", "static_iter_item"), value,
                                loc))
    if kind == "typed":  # ct.int16(3)
        dtype, value = plan[1], plan[2]
        return assign(ir.Expr.call(assign(ir.Global(str(dtype), dtype, loc)),
                                   [assign(ir.Const(value, loc))], (), loc))
    if kind == "var":
        return ir.Var(scope, plan[1], loc)
    if kind == "path":
        value = arguments[plan[1]]
        for step, detail in plan[2]:
            value = assign(ir.Expr.static_getitem(value, detail, None, loc) if step == "item"
                           else ir.Expr.getattr(value, detail, loc))
        return value
    return assign(ir.Expr.build_tuple([_build(p, block, arguments, loc) for p in plan[1]],
                                      loc))


def _forward_unpacking(blocks):
    """In one copy of a loop (its blocks in order), the parts of an item unpacked by the
    loop's target (``for k, f in ...``) are read from the variables the item was built of,
    so that the item's tuple goes unused: a closure in it is then called directly."""
    parts = {}  # variable -> the variables of the tuple it holds
    for block in blocks:
        for statement in block.body:
            if not isinstance(statement, ir.Assign):
                continue
            value, target = statement.value, statement.target.name
            found = None
            if isinstance(value, ir.Var):
                found = parts.get(value.name)
            elif isinstance(value, ir.Expr) and value.op == "build_tuple":
                found = list(value.items)
            elif isinstance(value, ir.Expr) and value.op == "exhaust_iter":
                items = parts.get(value.value.name)
                found = items if items is not None and len(items) == value.count else None
            elif isinstance(value, ir.Expr) and value.op == "static_getitem" and \
                    isinstance(value.index, int) and value.value.name in parts:
                items = parts[value.value.name]
                if -len(items) <= value.index < len(items):
                    statement.value = items[value.index]
                    found = parts.get(statement.value.name)
            parts.pop(target, None)
            if found is not None:
                parts[target] = found


def _prune_decided_branches(func_ir, arg_types, typing_context):
    """Branches whose condition is now a constant become jumps (an ``if`` on the loop
    variable in the copies), so that what the taken side builds is known to later loops."""
    values = ValuesBeforeTyping(func_ir, arg_types, typing_context)
    changed = False
    for label, block in func_ir.blocks.items():
        branch = block.terminator
        if isinstance(branch, ir.Branch):
            truth = values.truth(branch.cond.name, label, len(block.body) - 1)
            if truth is not None:
                block.body[-1] = ir.Jump(branch.truebr if truth else branch.falsebr,
                                         branch.loc)
                changed = True
    if changed:
        _remove_dead_blocks(func_ir)
    func_ir._definitions = build_definitions(func_ir.blocks)


# the most statements a block made of unrolled copies gets: Numba's analyses take time that
# grows with the square of the number of blocks (liveness) or of a block's statements (SSA,
# lowering), so the copies are merged into blocks of about this size
_MERGED_BLOCK_SIZE = 60


def _merge_blocks(func_ir):
    """Merge each block into its one successor where that has no other predecessor, as long
    as the result stays within :data:`_MERGED_BLOCK_SIZE` statements."""
    blocks = func_ir.blocks
    cfg = compute_cfg_from_blocks(blocks)
    merged = set()
    for label in sorted(blocks):
        if label in merged:
            continue
        block, current = blocks[label], label
        while True:
            successors = [s for s, _ in cfg.successors(current)]
            if not isinstance(block.terminator, ir.Jump) or len(successors) != 1 or \
                    successors[0] in merged or successors[0] == label:
                break
            following = successors[0]
            if [p for p, _ in cfg.predecessors(following)] != [current] or \
                    len(block.body) + len(blocks[following].body) > _MERGED_BLOCK_SIZE:
                break
            block.body = block.body[:-1] + blocks[following].body
            del blocks[following]
            merged.add(following)
            current = following
    func_ir._definitions = build_definitions(blocks)


def _remove_dead_blocks(func_ir):
    for label in compute_cfg_from_blocks(func_ir.blocks).dead_nodes():
        del func_ir.blocks[label]
    func_ir._definitions = build_definitions(func_ir.blocks)


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
