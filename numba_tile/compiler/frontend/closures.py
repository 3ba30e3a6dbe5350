"""Closures and lambdas of tile code are inlined where they are called, as cuTile does.

Numba inlines a call of a closure only where the closure is defined in the same function and
called by the name it was defined under; the rest it turns into separate functions that
cannot hold tiles. Tile code also passes closures around: out of the helper that made them
(alone or in a tuple), into helpers as arguments, from either side of a branch. After the
helpers are inlined (:mod:`.helpers`), every closure and every call of one is in the
kernel's IR, and :func:`inline_closure_calls` (run by :class:`.inlining.InlineCalls`)
follows each called variable back to the ``make_function`` that made it:

* through copies, returns of inlined helpers and items of tuples (``make(30)[0]``, ``g, a =
  make()``);
* where the variable is set on several paths by the same ``def`` (``c = make(30)`` in one
  branch, ``c = make(40)`` in the other), the values the closure captured and its default
  arguments are copied, at each definition, into variables shared by all of them: the call
  then inlines one closure reading those (cuTile's frozen captures, whose types must agree;
  a variable all the definitions capture is read as it is).

A closure reads its captured variables as Python's cells do: their values when it is called
(a closure that leaves its function sees what the function left in them: cuTile's frozen
captures). Numba's IR names a captured variable the same at every assignment (it does not
rename cells) and the inlined body reads it by that name where the call is. That holds
because Numba's dead code elimination keeps every assignment of a captured variable while a
closure capturing it is in the IR (:func:`_remove_dead`: a call not yet inlined may read it),
a closure made in an inlined closure captures the outer closure's variable itself rather than
a copy taken where the outer one was called (:func:`_replace_freevars`), and the copies of an
unrolled ``static_iter`` loop share a variable that closures capture (:mod:`.static_iter`).

Calls are bound to the closure's parameters as Python binds them (keywords, defaults in
place of the missing trailing arguments, ``*args`` of a known tuple), and a closure may read
a variable of its function assigned after the closure is defined (``f = lambda t: t + n``
before ``n = 5``): :data:`PATCHES` adjust Numba's front end for both while a kernel compiles
(:mod:`.numba_patches`).

>>> import numpy as np, numba_tile as ct
>>> def make_adder(t):
...     return lambda y: y + t
>>> @ct.kernel
... def add(x):
...     f = make_adder(30) if ct.bid(0) == 0 else make_adder(40)
...     ct.scatter(x, ct.bid(0), f(ct.gather(x, ct.bid(0))))
>>> x = np.ones(2, np.int32)
>>> ct.launch(0, (2,), add, (x,))
>>> x
array([31, 41], dtype=int32)
"""

import types as pytypes

from numba.cuda.core import errors, inline_closurecall, ir, ir_utils
from numba.cuda.core.errors import NotDefinedError
from numba.cuda.core.interpreter import Interpreter
from numba.cuda.core.ir_utils import build_definitions, dead_code_elimination, guard, \
    get_definition
from numba.cuda.core.untyped_passes import MakeFunctionToJitFunction

from ...errors import NESTED_RECURSION_MESSAGE, TileRecursionError
from ..compile_state import current
from .bytecode_columns import source_location


# -- finding the closure a variable holds ---------------------------------------------------
class _Joined:
    """A variable set to closures of one ``def`` on several paths: ``variable`` and the
    ``make_function`` each of its assignments (``statements``) gives."""

    def __init__(self, variable, statements, closures):
        self.variable, self.statements, self.closures = variable, statements, closures


def _closure_of(func_ir, var, seen=frozenset()):
    """The ``make_function`` expression ``var`` holds, a :class:`_Joined`, or None."""
    if var.name in seen:
        return None
    seen = seen | {var.name}
    definitions = func_ir._definitions.get(var.name, [])
    if len(definitions) == 1:
        return _closure_of_node(func_ir, definitions[0], seen)
    if len(definitions) < 2:
        return None
    statements = _assignments_of(func_ir, var)
    closures = [_closure_of_node(func_ir, s.value, seen) for s in statements]
    if len(statements) != len(definitions) or not all(
            isinstance(c, ir.expr_types) and c.code is closures[0].code for c in closures):
        return None
    return _Joined(var, statements, closures)


def _closure_of_node(func_ir, node, seen):
    if isinstance(node, ir.var_types):
        return _closure_of(func_ir, node, seen)
    if not isinstance(node, ir.expr_types):
        return None
    if node.op == "make_function":
        return node
    if node.op in ("static_getitem", "getitem"):
        index = node.index if node.op == "static_getitem" else \
            getattr(guard(get_definition, func_ir, node.index), "value", None)
        items = _tuple_items(func_ir, node.value)
        if isinstance(index, int) and items is not None and -len(items) <= index < len(items):
            return _closure_of_node(func_ir, items[index], seen)
    return None


def _tuple_items(func_ir, var):
    """The variables of a tuple built in the IR (``build_tuple``), also where it is unpacked
    (``g, a = make()``: an ``exhaust_iter`` of it), or None."""
    found = guard(get_definition, func_ir, var)
    if isinstance(found, ir.expr_types) and found.op == "exhaust_iter":
        return _tuple_items(func_ir, found.value)
    if isinstance(found, ir.expr_types) and found.op == "build_tuple":
        return list(found.items)
    return None


def _assignments_of(func_ir, var):
    return [statement for block in func_ir.blocks.values() for statement in block.body
            if isinstance(statement, ir.assign_types) and statement.target.name == var.name]


# -- several definitions: one closure reading shared copies ---------------------------------
def _parts(func_ir, closure):
    """The captured values and the default arguments of a ``make_function``, as lists of
    variables or constants."""
    captured = _tuple_items(func_ir, closure.closure) if closure.closure is not None else []
    defaults = closure.defaults
    if defaults is None:
        defaults = []
    elif isinstance(defaults, ir.var_types):
        defaults = _tuple_items(func_ir, defaults)
    else:
        defaults = list(defaults)
    return captured, defaults


def _join(func_ir, joined, call_block, call_index):
    """Copy what each definition's closure captured (and its defaults) into variables all
    definitions share, and define one ``make_function`` reading them before the call:
    returns it, or None where a closure's parts cannot be found."""
    parts = [_parts(func_ir, closure) for closure in joined.closures]
    if any(captured is None or defaults is None for captured, defaults in parts):
        return None
    sizes = {(len(captured), len(defaults)) for captured, defaults in parts}
    if len(sizes) != 1:
        return None
    scope, loc = call_block.scope, call_block.body[call_index].loc
    n_captured, n_defaults = sizes.pop()
    slots = list(zip(*(captured + defaults for captured, defaults in parts)))
    # a variable that every definition captures is read as it is at the call (the one cell
    # they share, as in Python); the others are copied where each definition is made
    shared = [slot[0] if index < n_captured and _same_variable(slot) else
              scope.redefine(f"{joined.variable.name}.capture", loc=loc)
              for index, slot in enumerate(slots)]
    for statement, (captured, defaults) in zip(joined.statements, parts):
        block = next(b for b in func_ir.blocks.values() if statement in b.body)
        at = block.body.index(statement) + 1
        copies = [ir.Assign(value, target, statement.loc)
                  for value, target in zip(captured + defaults, shared)
                  if not (isinstance(value, ir.var_types) and value.name == target.name)]
        block.body[at:at] = copies
        for copy in copies:
            func_ir._definitions[copy.target.name].append(copy.value)
    new = []

    def define(value, name):
        target = scope.redefine(name, loc=loc)
        new.append(ir.Assign(value, target, loc))
        func_ir._definitions[target.name].append(value)
        return target
    closure_tuple = define(ir.Expr.build_tuple(shared[:n_captured], loc), "$closure")
    defaults = define(ir.Expr.build_tuple(shared[n_captured:], loc), "$defaults") \
        if n_defaults else None
    first = joined.closures[0]
    function = ir.Expr.make_function(first.name, first.code, closure_tuple, defaults, loc)
    define(function, "$function")
    call_block.body[call_index:call_index] = new
    call_block.body[call_index + len(new)].value.func = new[-1].target
    return function


def _same_variable(values):
    return all(isinstance(v, ir.var_types) and v.name == values[0].name for v in values)


# -- the pass -------------------------------------------------------------------------------
def _globals_of(func_ir, code):
    """The globals a closure's code reads: those of the function it was defined in (a
    helper's, which may be another module's than the kernel's)."""
    found = current().code_globals.get(code)
    return found if found is not None else func_ir.func_id.func.__globals__


def inline_closure_calls(func_ir):
    """Inline every call of a closure whose ``make_function`` can be found; True if any.
    A closure called inside itself (directly or through others) is cuTile's
    ``TileRecursionError``: a function defined in tile code is inlined where it is called,
    so its recursion could never end (the interpreter's rule too:
    :mod:`numba_tile.interpreter.recursion`)."""
    changed = False
    work_list = list(func_ir.blocks.items())
    within = {}  # id(block) -> the codes of the closures the block was inlined from
    while work_list:
        _, block = work_list.pop()
        for i, statement in enumerate(block.body):
            value = getattr(statement, "value", None)
            if not (isinstance(statement, ir.assign_types) and isinstance(value, ir.expr_types)
                    and value.op == "call"):
                continue
            closure = _closure_of(func_ir, value.func)
            if isinstance(closure, _Joined):
                closure = _join(func_ir, closure, block, i)
                i = block.body.index(statement) if closure is not None else i
            if closure is None:
                continue
            outer = within.get(id(block), ())
            if closure.code in outer:
                raise TileRecursionError(NESTED_RECURSION_MESSAGE,
                                         source_location(statement.loc))
            first_new = len(work_list)
            inline_closurecall.inline_closure_call(
                func_ir, _globals_of(func_ir, closure.code), block, i, closure,
                work_list=work_list, callee_validator=inline_closurecall.callee_ir_validator)
            # (the first block added is the rest of this one; the others, the closure's)
            for index, (_, added) in enumerate(work_list[first_new:]):
                within[id(added)] = outer + (closure.code,) if index else outer
            changed = True
            break  # the block was split: its rest is on the work list
    if changed:
        func_ir._definitions = build_definitions(func_ir.blocks)
        remove_closures_left(func_ir)
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


# the unread values that stay where closures are removed: operators and subscripts (Numba's
# dead code elimination would remove them; calls it keeps). Attributes go: a method taken
# for a call (``(a + b).astype``) is typed with the call
_TYPED_OPS = ("binop", "inplace_binop", "unary", "getitem", "static_getitem", "typed_getitem")


def _closure_values(blocks):
    """The names of the variables that hold a closure or a value made from one (a copy, a
    tuple holding it, an item of that tuple): what dead code elimination may remove."""
    names = set()
    changed = True
    while changed:
        changed = False
        for block in blocks.values():
            for statement in block.find_insts(ir.assign_types):
                if statement.target.name in names:
                    continue
                value = statement.value
                if isinstance(value, ir.expr_types) and value.op == "make_function" or \
                        any(v.name in names for v in statement.list_vars()):
                    names.add(statement.target.name)
                    changed = True
    return names


def _kept(blocks, closure_values):
    """The assignments that stay where unread: a value of :data:`_TYPED_OPS` made from no
    closure."""
    return {id(s) for block in blocks.values() for s in block.find_insts(ir.assign_types)
            if isinstance(s.value, ir.expr_types) and s.value.op in _TYPED_OPS
            and s.target.name not in closure_values}


def remove_closures_left(func_ir):
    """Numba's dead code elimination of what the inlined calls of closures left behind (the
    closures, the tuples they were taken from), where an unread operator or subscript
    stays, as in a kernel without closures: cuTile types every statement, so that
    ``a is b`` in a lambda whose result is unused is its ``TileTypeError`` too.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x):
    ...     t = ct.load(x, (0,), (4,))
    ...     same = lambda a, b: a is b
    ...     same(t, t)
    >>> ct.compile(k, (np.zeros(4, np.float32),), arch="sm_90")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Operator 'is' expects one of the operands to be None, ...
    ...
    """
    kept = _kept(func_ir.blocks, _closure_values(func_ir.blocks))
    for block in func_ir.blocks.values():
        body = []
        for statement in block.body:
            body.append(statement)
            if id(statement) in kept:
                body.append(_CellRead(statement.target, statement.loc))
        block.body = body
    try:
        _ORIGINAL_DEAD_CODE_ELIMINATION(func_ir)
    finally:
        for block in func_ir.blocks.values():
            block.body = [s for s in block.body if not isinstance(s, _CellRead)]


def _closure_pass_elimination(func_ir, *args, **kwargs):
    """The dead code elimination of Numba's own inlining of closures (those called by the
    name they were defined under): :func:`remove_closures_left`."""
    if args or kwargs:
        return _ORIGINAL_DEAD_CODE_ELIMINATION(func_ir, *args, **kwargs)
    return remove_closures_left(func_ir)


# -- Numba's front end while a kernel compiles ----------------------------------------------
_ORIGINAL_CALLEE_ARGS = inline_closurecall._get_callee_args


def _callee_args(call_expr, callee, loc, func_ir):
    """The arguments of an inlined call in parameter order. For a closure, bound as Python
    binds them (Numba drops the keywords and appends every default)."""
    if isinstance(callee, pytypes.FunctionType) or call_expr.op != "call":
        return _ORIGINAL_CALLEE_ARGS(call_expr, callee, loc, func_ir)
    code = callee.code
    if code.co_flags & (0x04 | 0x08) or code.co_kwonlyargcount:  # *args, **kwargs, kw-only
        raise errors.UnsupportedError("A closure with *args, **kwargs or keyword-only "
                                      "parameters is not supported", loc)
    positional = list(call_expr.args)
    if call_expr.vararg is not None:
        items = _tuple_items(func_ir, call_expr.vararg)
        if items is None:
            raise errors.UnsupportedError("Calling a closure with *args of a tuple not built "
                                          "in the kernel is not supported", loc)
        positional += items
    names = code.co_varnames[:code.co_argcount]
    _, defaults = _parts(func_ir, callee) if callee.defaults is not None else (None, [])
    if defaults is None:
        raise errors.UnsupportedError("The default arguments of this closure are not known "
                                      "before typing", loc)
    if len(positional) > len(names):
        raise errors.TypingError(f"{code.co_name}() takes {len(names)} positional arguments "
                                 f"but {len(positional)} were given", loc)
    bound = dict(zip(names, positional))
    for name, value in call_expr.kws:
        if name not in names or name in bound:
            problem = "an unexpected" if name not in names else "multiple values for"
            raise errors.TypingError(f"{code.co_name}() got {problem} keyword argument "
                                     f"{name!r}", loc)
        bound[name] = value
    first_default = len(names) - len(defaults)
    arguments = []
    for index, name in enumerate(names):
        if name in bound:
            arguments.append(bound[name])
        elif index >= first_default:
            default = defaults[index - first_default]
            arguments.append(default if isinstance(default, (ir.var_types, ir.const_types))
                             else ir.Const(default, loc))
        else:
            raise errors.TypingError(f"{code.co_name}() missing required argument {name!r}",
                                     loc)
    return arguments


class _CellRead(ir.Stmt):
    """A read of a captured variable, put after each of its assignments for the time of a
    dead code elimination (:func:`_remove_dead`)."""

    def __init__(self, var, loc):
        self.var, self.loc = var, loc

    def __str__(self):
        return f"cell read {self.var}"


def captured_variables(blocks):
    """The names of the variables that the closures (``make_function``) of ``blocks``
    capture: the cells Python would give them, which Numba's IR reads by name.

    >>> from numba.cuda.compiler import run_frontend
    >>> from numba_tile.compiler.frontend.closures import captured_variables
    >>> def make(t):
    ...     n = t + 1
    ...     return lambda: n + t
    >>> sorted(captured_variables(run_frontend(make).blocks))
    ['n', 't']
    """
    tuples = {}
    for block in blocks.values():
        for statement in block.body:
            if isinstance(statement, ir.assign_types) and isinstance(
                    statement.value, ir.expr_types) and statement.value.op == "build_tuple":
                tuples.setdefault(statement.target.name, []).append(statement.value)
    names = set()
    for block in blocks.values():
        for make in block.find_exprs("make_function"):
            if isinstance(make.closure, ir.var_types):
                for found in tuples.get(make.closure.name, ()):
                    names.update(item.name for item in found.items
                                 if isinstance(item, ir.var_types))
    return names


def _remove_dead(blocks, *args, **kwargs):
    """Numba's dead code elimination, with every assignment of a variable a closure captures
    kept while the closure is in the IR: a call of it may read the variable anywhere later
    (where it is inlined, maybe after the function that made it has been inlined into
    another). Once the closures are inlined, their ``make_function`` goes, and so does the
    protection."""
    captured = captured_variables(blocks)
    if not captured:
        return _ORIGINAL_REMOVE_DEAD(blocks, *args, **kwargs)
    for block in blocks.values():
        body = []
        for statement in block.body:
            body.append(statement)
            if isinstance(statement, ir.assign_types) and statement.target.name in captured:
                body.append(_CellRead(statement.target, statement.loc))
        block.body = body
    try:
        return _ORIGINAL_REMOVE_DEAD(blocks, *args, **kwargs)
    finally:
        for block in blocks.values():
            block.body = [s for s in block.body if not isinstance(s, _CellRead)]


def _replace_freevars(blocks, args):
    """Numba's replacement of an inlined closure's free variables by the variables it
    captured, where a free variable that the closure's own closures capture in turn (``def
    mk(): return lambda: n`` reading the kernel's ``n``) is captured as that variable, the
    one cell, rather than as its copy made where the outer closure was called."""
    cells = {}
    for block in blocks.values():
        for statement in block.find_insts(ir.assign_types):
            if isinstance(statement.value, ir.freevar_types) and isinstance(
                    args[statement.value.index], ir.var_types):
                cells.setdefault(statement.target.name, []).append(args[statement.value.index])
    _ORIGINAL_REPLACE_FREEVARS(blocks, args)
    cells = {name: found[0] for name, found in cells.items() if len(found) == 1 and
             len(_assignments_in(blocks, name)) == 1}
    if not cells:
        return
    closure_tuples = {make.closure.name for block in blocks.values()
                      for make in block.find_exprs("make_function")
                      if isinstance(make.closure, ir.var_types)}
    for block in blocks.values():
        for statement in block.find_insts(ir.assign_types):
            if statement.target.name in closure_tuples and isinstance(
                    statement.value, ir.expr_types) and statement.value.op == "build_tuple":
                statement.value.items = [cells.get(item.name, item) for item in
                                         statement.value.items]


def _assignments_in(blocks, name):
    return [statement for block in blocks.values() for statement in block.body
            if isinstance(statement, ir.assign_types) and statement.target.name == name]


def _load_closure(self, inst, res):
    """``LOAD_CLOSURE`` of a variable the function assigns only later: the variable itself,
    which the inlined body reads where the closure is called."""
    name = self.func_id.func.__code__._varname_from_oparg(inst.arg)
    if name in self.code_cellvars:
        try:
            self.get(name)
        except NotDefinedError:
            self.store(self.current_scope.get_or_define(name, loc=self.loc), res)
            return
    _ORIGINAL_LOAD_CLOSURE(self, inst, res)


def _leave_closures(self, state):
    """Closures stay ``make_function`` expressions, inlined where called
    (:func:`inline_closure_calls`), rather than becoming separate functions."""
    return False


_ORIGINAL_LOAD_CLOSURE = Interpreter.op_LOAD_CLOSURE
_ORIGINAL_REMOVE_DEAD = ir_utils.remove_dead
_ORIGINAL_REPLACE_FREEVARS = inline_closurecall._replace_freevars
_ORIGINAL_DEAD_CODE_ELIMINATION = dead_code_elimination
#: what this module changes in numba-cuda's front end while a kernel compiles (see
#: :mod:`.numba_patches`): closure calls bound as Python binds them, closures that read
#: variables assigned after them, closures left to :func:`inline_closure_calls`, captured
_ORIGINAL_INLINE_CLOSURE = inline_closurecall.InlineClosureCallPass._inline_closure


def _inline_closure(self, work_list, block, i, func_def):
    """numba-cuda's inlining of a closure called where it is made, refusing one called
    inside itself (as :func:`inline_closure_calls`), which it would inline without end."""
    if not (isinstance(func_def, ir.expr_types) and func_def.op == "make_function"):
        return _ORIGINAL_INLINE_CLOSURE(self, work_list, block, i, func_def)
    within = self.__dict__.setdefault("_numba_tile_within", {})
    outer = within.get(id(block), ())
    if func_def.code in outer:
        loc = block.body[i].loc
        raise TileRecursionError(NESTED_RECURSION_MESSAGE, source_location(loc))
    first_new = len(work_list)
    inlined = _ORIGINAL_INLINE_CLOSURE(self, work_list, block, i, func_def)
    for index, (_, added) in enumerate(work_list[first_new:]):
        within[id(added)] = outer + (func_def.code,) if index else outer
    return inlined


#: variables read as cells (kept by dead code elimination, captured again as themselves),
#: the unread values of closures Numba inlines kept (:func:`remove_closures_left`), closures
#: calling themselves refused
PATCHES = ((inline_closurecall.InlineClosureCallPass, "_inline_closure", _inline_closure),
           (inline_closurecall, "_get_callee_args", _callee_args),
           (inline_closurecall, "dead_code_elimination", _closure_pass_elimination),
           (Interpreter, "op_LOAD_CLOSURE", _load_closure),
           (MakeFunctionToJitFunction, "run_pass", _leave_closures),
           (ir_utils, "remove_dead", _remove_dead),
           (inline_closurecall, "_replace_freevars", _replace_freevars))
