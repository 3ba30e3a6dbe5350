"""How the calls of tile code are inlined: helpers by numba-cuda's inlining pass, each call
first bound as Python binds it (:mod:`.variadic`) and the helper checked
(:func:`~numba_tile.rules.syntax.helper_source_error`); closures, and recursive helpers, by
:class:`InlineCalls`.

A helper that calls itself (or a helper that calls it back) is inlined one level at a time:
numba-cuda's pass leaves such calls alone, and :class:`InlineCalls` then decides the branches
on constants (the recursion's end: ``if N > 0:`` on a ``Constant`` parameter) and inlines the
recursive calls left in code still reached, one more level each round, until none is left.
Recursion that does not end on constants within :data:`MOST_LEVELS` levels is a
``TileRecursionError``, as in cuTile.

>>> import numpy as np, numba_tile as ct
>>> def power(t, n):
...     if n > 0:
...         return power(t, n - 1) * 2
...     return t
>>> @ct.kernel
... def k(x, N: ct.Constant[int]):
...     ct.scatter(x, 0, power(ct.gather(x, 0), N))
>>> x = np.ones(1, np.int32)
>>> ct.launch(0, (1,), k, (x, 5))
>>> x
array([32], dtype=int32)
"""

import types

from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.inline_closurecall import InlineWorker, callee_ir_validator
from numba.cuda.core.ir_utils import build_definitions
from numba.cuda.core.postproc import PostProcessor
from numba.cuda.core.rewrites.static_getitem import RewriteConstGetitems
from numba.cuda.core.untyped_passes import InlineInlinables

from ...source import static_expressions
from ...errors import RECURSION_MESSAGE, TileRecursionError
from ...rules.calls import RUN_TIME, recursion_key
from ...rules.syntax import helper_source_error
from ..compile_state import current
from .bytecode_columns import source_location
from .closures import inline_closure_calls, remove_closures_left
from .constant_branches import constant_values, prune_constant_branches
from .contract import tile_pass
from .variadic import bind_call, callee_of

#: the deepest recursion of helpers the compiler inlines (cuTile's limit is of this order)
MOST_LEVELS = 1000

_ORIGINAL_DO_WORK = InlineInlinables._do_work


def _inlinable(callee):
    options = getattr(callee, "targetoptions", None)
    return bool(options) and options.get("inline") == "always"


def _do_work(self, state, work_list, block, i, expr, inline_worker):
    """numba-cuda's inlining of one call, after the call is bound (:func:`bind_call`) and
    the helper it calls checked; a recursive call is left for :class:`InlineCalls`."""
    bound = None
    while True:  # (a forwarded call, once expanded, may call a helper to bind)
        index = bind_call(state.func_ir, block, i)
        if index is None:
            break
        bound = i = index
        expr = block.body[i].value
    callee = callee_of(state.func_ir, expr)
    if not _inlinable(callee):
        inlined = _ORIGINAL_DO_WORK(self, state, work_list, block, i, expr, inline_worker)
    else:
        error = helper_source_error(callee.py_func)
        if error is not None:
            raise type(error)(error.message, error.loc)
        inlined = _inline_helper(self, state, work_list, block, i, expr, inline_worker,
                                 callee.py_func.__code__)
    if bound is not None and not inlined:
        # the call changed but stays: look at the rest of its block again
        work_list.append((next(label for label, b in state.func_ir.blocks.items()
                               if b is block), block))
        return True
    return inlined


def _inline_helper(self, state, work_list, block, i, expr, inline_worker, code):
    compilation = current()
    if code in compilation.inlining:  # a helper being inlined calls itself (maybe through
        compilation.recursive_helpers.add(code)  # others): leave the call for later
        return False
    if code in compilation.recursive_helpers and \
            id(block.body[i]) not in compilation.recursion_allowed:
        return False
    compilation.inlining.append(code)
    try:
        return _ORIGINAL_DO_WORK(self, state, work_list, block, i, expr, inline_worker)
    finally:
        compilation.inlining.pop()


def _recursive_calls(func_ir):
    """The statements calling a recursive helper, left in the IR."""
    recursive = current().recursive_helpers
    found = []
    for block in func_ir.blocks.values():
        for statement in block.body:
            value = getattr(statement, "value", None)
            if getattr(value, "op", None) == "call":
                callee = callee_of(func_ir, value)
                if _inlinable(callee) and callee.py_func.__code__ in recursive:
                    found.append(statement)
    return found


@tile_pass("inline closures and recursive helpers until no call of either is left")
@register_pass(mutates_CFG=True, analysis_only=False)
class InlineCalls(FunctionPass):
    """Inline the calls of closures (:func:`.closures.inline_closure_calls`) and of the
    helpers they bring, and recursive helpers one level a round after the branches on
    constants are decided (see the module's docstring)."""

    _name = "numba_tile_inline_calls"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        try:
            inlined = self._inline(state)
        except RecursionError:  # (constants folded along thousands of levels)
            raise _recursion_error(state) from None
        if inlined:
            # what the calls left behind (a tuple the functions called were taken from) would
            # be typed otherwise; the kernel's own dead expressions (``t[1.0]``) and those of
            # the closures are typed, and their errors raised, as the interpreter runs them
            remove_closures_left(state.func_ir)
            _constant_getitems(state.func_ir)
        return True

    @staticmethod
    def _inline(state):
        """Inline what there is to; True if something was."""
        compilation, inlined = current(), False
        for _ in range(MOST_LEVELS):
            if inline_closure_calls(state.func_ir):
                InlineInlinables().run_pass(state)
                inlined = True
                continue
            if not compilation.recursive_helpers:
                return inlined
            prune_constant_branches(state.func_ir, state.args)
            calls = _recursive_calls(state.func_ir)
            if not calls:
                PostProcessor(state.func_ir).run()
                return inlined
            _inline_one_level(state, calls)
            inlined = True
        raise _recursion_error(state)


def _recursion_error(state):
    """``TileRecursionError`` at a recursive call left."""
    loc = next(iter(_recursive_calls(state.func_ir)), state.func_ir).loc
    return TileRecursionError(RECURSION_MESSAGE, source_location(loc))


def _call_key(state, call):
    """The :func:`~numba_tile.rules.calls.recursion_key` of a recursive call (an IR
    expression): its helper, and what is constant of its arguments."""
    arguments = list(call.args) + [value for _, value in sorted(call.kws)]
    if call.vararg is not None:
        arguments.append(call.vararg)
    values = constant_values(state.func_ir, state.args, arguments, RUN_TIME)
    return callee_of(state.func_ir, call).py_func.__code__, recursion_key(values)


def _inline_one_level(state, calls):
    """Inline the recursive calls ``calls`` (statements), not those they bring. A call
    with the key of a call it was inlined from (:func:`_call_key`: the same helper, the same
    constants) would be inlined without end: ``TileRecursionError`` at once."""
    func_ir, compilation = state.func_ir, current()
    worker = InlineWorker(state.typingctx, state.targetctx, state.locals, state.pipeline,
                          state.flags, validator=callee_ir_validator)
    ancestry = compilation.recursion_ancestry  # id(call) -> (call, keys of the calls it is in)
    keys = [_call_key(state, statement.value) for statement in calls]
    compilation.recursion_allowed = {id(statement) for statement in calls}
    try:
        for statement, key in zip(calls, keys):
            within = ancestry.get(id(statement), (None, ()))[1]
            if key in within:
                loc = statement.loc
                raise TileRecursionError(RECURSION_MESSAGE, source_location(loc))
            before = {id(s) for s in _recursive_calls(func_ir)}
            block = next(b for b in func_ir.blocks.values() if statement in b.body)
            _do_work(InlineInlinables(), state, [], block, block.body.index(statement),
                     statement.value, worker)
            for brought in _recursive_calls(func_ir):
                if id(brought) not in before:
                    ancestry[id(brought)] = (brought, within + (key,))
    finally:
        compilation.recursion_allowed = frozenset()
    cfg = compute_cfg_from_blocks(func_ir.blocks)
    for dead in cfg.dead_nodes():
        del func_ir.blocks[dead]
    func_ir._definitions = build_definitions(func_ir.blocks)


#: what this module changes in numba-cuda while a kernel compiles (:mod:`.numba_patches`)
_ORIGINAL_UNTYPED_PASSES = InlineWorker.run_untyped_passes


def _run_untyped_passes(self, func, enable_ssa=False):
    """numba-cuda's front end of a helper, run once per helper and compile: every copy of
    it inlined is a copy of that IR (``inline_ir`` copies what it inlines). A helper with a
    ``static_iter`` loop is made anew each time: each copy's loop is its own instance."""
    key = (func, enable_ssa)
    cache = current().helper_irs
    if key not in cache or _has_static_iter(func.__code__):
        cache[key] = _ORIGINAL_UNTYPED_PASSES(self, func, enable_ssa)
    self.flags.enable_ssa = enable_ssa  # (as numba-cuda's leaves it)
    return cache[key]


def _has_static_iter(code):
    return static_expressions.ITER_NAME in code.co_names or any(
        isinstance(c, types.CodeType) and _has_static_iter(c) for c in code.co_consts)


PATCHES = ((InlineInlinables, "_do_work", _do_work),
           (InlineWorker, "run_untyped_passes", _run_untyped_passes))


def _constant_getitems(func_ir):
    """Numba's rewrite of ``x[<constant>]`` into a ``static_getitem`` (the kernel's own ran
    before the closures were inlined), so that the rules see the constant index of the
    closures' subscripts too (``t[1:3]``: a slice's bounds are lost in its type)."""
    for label, block in func_ir.blocks.items():
        rewrite = RewriteConstGetitems(None)
        if rewrite.match(func_ir, block, None, None):
            func_ir.blocks[label] = rewrite.apply()
