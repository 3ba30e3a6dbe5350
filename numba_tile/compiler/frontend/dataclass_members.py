"""The functions of frozen dataclasses are inlined where tile code calls them, as helpers are.

Which function a call runs depends on the type of the instance it is made on, which only
typing knows. Before the kernel is typed, this pass types it as far as it can (Numba's
partial type inference), finds the calls of dataclass functions the types show
(:mod:`~numba_tile.compiler.typing.dataclasses`) and rewrites each into a call of the
function's inlinable helper (:mod:`.helpers`), with the instance as ``self``:

* ``d.method(...)`` (and class and static methods, and helpers held in fields);
* ``d.prop`` for a ``property``;
* ``d(...)``, ``d[i]`` and ``d[i] = v`` for ``__call__``, ``__getitem__``, ``__setitem__``;
* ``Point(...)`` and ``dataclasses.replace(p, ...)`` of a class with ``__post_init__``:
  the instance is made without it, then ``__post_init__`` is called on it.

Numba's inlining then splices the helpers in, the passes that rewrite helpers' code before
typing run on it again (closures and recursive helpers, ``static_iter`` loops, device output,
constant branches) and its variables are made single-assignment again, as the kernel's are.
An inlined function may call more of them (a method calling another on ``self``), so this
repeats until the typing shows no call left to rewrite. Kernels that mention no dataclass
(and no ``static_eval``, which may give an instance) skip all of it.

>>> import dataclasses
>>> import numpy as np
>>> import numba_tile as ct
>>> @dataclasses.dataclass(frozen=True)
... class Scale:
...     factor: int
...     def __call__(self, t):
...         return t * self.factor
>>> @ct.kernel
... def scaled(x):
...     ct.scatter(x, ct.bid(0), Scale(3)(ct.gather(x, ct.bid(0))))
>>> "scaled" in ct.compile(scaled, (np.ones(4, np.int32),), arch="sm_90").name
True
"""

import dataclasses

from numba.cuda.core import errors, ir, typeinfer
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions
from numba.cuda.core.untyped_passes import InlineInlinables, ReconstructSSA

from ...rules import dataclasses as rules
from ...source.static_expressions import AsGlobal, AsTileCode
from ..compile_state import current
from ..typing.dataclasses import DataclassClassType, DataclassType, MemberType, \
    construct_dataclass, holds_dataclasses, member_receiver, replace_fields
from ..typing.static_expressions import compiled_static_eval
from ..typing.static_iteration import UnrollAgain
from .constant_branches import PruneConstantBranches
from .contract import tile_pass
from .device_output import RewriteDeviceOutput
from .inlining import InlineCalls
from .static_iter import UnrollStaticIter

_COMPILE_AGAIN = (AsTileCode, AsGlobal, UnrollAgain)
# the most rounds of typing and inlining before giving up (functions calling each other
# without end)
_MOST_ROUNDS = 100


def _mentions_dataclasses(func_ir):
    """Whether the kernel reads a dataclass, an instance of one (whose fields may hold
    helpers too), or a ``static_eval`` value (which may be one)."""
    return any(isinstance(statement, ir.assign_types)
               and isinstance(statement.value, ir.global_types + ir.freevar_types)
               and (statement.value.value is compiled_static_eval
                    or holds_dataclasses(statement.value.value))
               for block in func_ir.blocks.values() for statement in block.body)


class _TolerantConstraints(typeinfer.ConstraintNetwork):
    """Numba's constraints, where one that cannot be typed yet (a call of a function of a
    dataclass, what reads its result) is left untyped, whatever it raises: the kernel's
    typing proper reports what is wrong. Only the requests to compile the kernel again
    (``static_eval`` and ``static_iter`` results) go on as they would there."""

    def propagate(self, inferer):
        failures = []
        for constraint in self.constraints:
            try:
                constraint(inferer)
            except _COMPILE_AGAIN:
                raise
            except Exception as error:  # noqa: BLE001 - see the docstring
                failures.append(error)
        return failures


def _partial_types(state):
    """The types of the kernel's variables, as far as they can be found."""
    inferer = typeinfer.TypeInferer(state.typingctx, state.func_ir,
                                    errors.WarningsFixer(errors.NumbaWarning))
    inferer.constraints = _TolerantConstraints()
    with state.typingctx.callstack.register(state.targetctx.target, inferer,
                                            state.func_ir.func_id, state.args), \
            inferer.warnings:
        for index, (name, numba_type) in enumerate(zip(state.func_ir.arg_names, state.args)):
            inferer.seed_argument(name, index, numba_type)
        for name, numba_type in (state.locals or {}).items():
            inferer.seed_type(name, numba_type)
        inferer.build_constraint()
        inferer.propagate(raise_errors=False)
    return {name: var.type for name, var in inferer.typevars.items()
            if var.type is not None}


class _Rewriter:
    """Rewrites the calls of one block (see the module's docstring)."""

    def __init__(self, typemap, block):
        self.typemap, self.scope = typemap, block.scope
        self.body = []

    def type_of(self, var):
        return self.typemap.get(var.name)

    def define(self, value, name, loc):
        target = self.scope.redefine(name, loc)
        self.body.append(ir.Assign(value, target, loc))
        return target

    def call(self, function, args, loc, target=None, kws=(), vararg=None, varkwarg=None):
        """Assign ``function(*args, **kws)`` to ``target`` (a new variable if None)."""
        callee = self.define(ir.Global(getattr(function, "__name__", "helper"), function, loc),
                             "$dataclass_function", loc)
        expr = ir.Expr.call(callee, list(args), list(kws), loc, vararg=vararg,
                            varkwarg=varkwarg)
        if target is None:
            return self.define(expr, "$dataclass_result", loc)
        self.body.append(ir.Assign(expr, target, loc))
        return target

    def statement(self, statement):
        """Rewrite ``statement`` into ``self.body``; False where it is kept as it is."""
        loc = statement.loc
        if isinstance(statement, ir.setitem_types + ir.staticsetitem_types):
            owner = self.type_of(statement.target)
            if not _defines(owner, rules.SETITEM):
                return False
            index = statement.index if isinstance(statement, ir.setitem_types) else \
                statement.index_var
            self.call(_helper(owner.cls, rules.SETITEM),
                      [statement.target, index, statement.value], loc)
            return True
        if not (isinstance(statement, ir.assign_types)
                and isinstance(statement.value, ir.expr_types)):
            return False
        expr, target = statement.value, statement.target
        if expr.op == "getattr":
            member = self.type_of(target)
            if not (isinstance(member, MemberType) and member.kind == "property"):
                return False
            self.call(_helper(member.function), [expr.value], loc, target)
            return True
        if expr.op in ("getitem", "static_getitem"):
            owner = self.type_of(expr.value)
            if not _defines(owner, rules.GETITEM):
                return False
            index = expr.index if expr.op == "getitem" else expr.index_var
            if index is None:
                index = self.define(ir.Const(expr.index, loc), "$dataclass_index", loc)
            self.call(_helper(owner.cls, rules.GETITEM), [expr.value, index], loc, target)
            return True
        if expr.op == "call":
            return self._call(expr, target, loc)
        return False

    def _call(self, expr, target, loc):
        callee = self.type_of(expr.func)
        arguments = dict(kws=expr.kws, vararg=expr.vararg, varkwarg=expr.varkwarg)
        if isinstance(callee, MemberType) and callee.kind != "property":
            receiver = [self.call(member_receiver, [expr.func], loc)] \
                if callee.kind == "method" else []
            self.call(_helper(callee.function), receiver + list(expr.args), loc, target,
                      **arguments)
            return True
        if isinstance(callee, DataclassType) and _defines(callee, rules.CALL):
            self.call(_helper(callee.cls, rules.CALL), [expr.func, *expr.args], loc, target,
                      **arguments)
            return True
        if isinstance(callee, DataclassClassType) and _defines(callee, rules.POST_INIT):
            cls = callee.value
            self.call(construct_dataclass, [expr.func, *expr.args], loc, target, **arguments)
        elif getattr(callee, "typing_key", None) is dataclasses.replace and expr.args and \
                _defines(self.type_of(expr.args[0]), rules.POST_INIT):
            cls = self.type_of(expr.args[0]).cls
            self.call(replace_fields, expr.args, loc, target, **arguments)
        else:
            return False
        self.call(_helper(cls, rules.POST_INIT), [target], loc)
        return True


def _defines(owner, dunder):
    """Whether ``owner`` is an instance (or class) whose class defines ``dunder``."""
    if isinstance(owner, DataclassType):
        cls = owner.cls
    elif isinstance(owner, DataclassClassType):
        cls = owner.value
    else:
        return False
    return rules.class_attribute(cls, dunder) is not dataclasses.MISSING


def _helper(function, dunder=None):
    """The inlinable helper of ``function`` (a Python function or a helper's dispatcher;
    with ``dunder``, a class whose function of that name is meant)."""
    if dunder is not None:
        function = rules.class_attribute(function, dunder)
    if hasattr(function, "targetoptions"):  # already a helper's dispatcher
        return function
    return current().static_helpers.inlinable(function)


def rewrite_member_calls(func_ir, typemap):
    """Rewrite the calls of dataclass functions ``typemap`` shows; True if any was."""
    changed = False
    for block in func_ir.blocks.values():
        rewriter = _Rewriter(typemap, block)
        for statement in block.body:
            if rewriter.statement(statement):
                changed = True
            else:
                rewriter.body.append(statement)
        block.body = rewriter.body
    if changed:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


@tile_pass("inline the functions of dataclasses")
@register_pass(mutates_CFG=True, analysis_only=False)
class InlineDataclassMembers(FunctionPass):
    """Type the kernel as far as possible, rewrite the calls of dataclass functions into
    calls of helpers and inline them, until none is left (see the module's docstring)."""

    _name = "numba_tile_inline_dataclass_members"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        if not _mentions_dataclasses(state.func_ir):
            return False
        for _ in range(_MOST_ROUNDS):
            if not rewrite_member_calls(state.func_ir, _partial_types(state)):
                return True
            InlineInlinables().run_pass(state)
            InlineCalls().run_pass(state)
            UnrollStaticIter().run_pass(state)
            # a variable of the inlined code may take values of several types in turn
            # (``total = 0``, then ``total = total + t``), as the kernel's own ones do
            ReconstructSSA().run_pass(state)
            RewriteDeviceOutput().run_pass(state)
            PruneConstantBranches().run_pass(state)
        raise RecursionError("dataclass functions inlined into each other without end")
