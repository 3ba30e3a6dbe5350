"""Typing of ``for v in ct.static_iter(ITERABLE)`` and of tuple comprehensions' conditions
(see :mod:`numba_tile.source.static_expressions` and :mod:`numba_tile.source.comprehensions`).

The loop's iterable is a static expression: the source rewrite makes it
``compiled_static_iter(key, v1, ..., vn)``, and the unrolling pass
(:mod:`numba_tile.compiler.frontend.static_iter`) gives each such loop it meets an instance
number (``compiled_static_iter_instance(number, v1, ..., vn)``) and copies the loop's body
once per item of the iterable. Where the items can be found before typing it does so; where
they need the types of the values (``range(t.shape[0])``), it compiles the kernel as far as
the loop: :class:`StaticIterTemplate` evaluates the expression while typing, and a pass after
typing keeps its items in the compilation
(:class:`~numba_tile.compiler.compile_state.StaticIterState`) and raises
:class:`UnrollAgain`: the pipeline compiles the kernel again, which unrolls that loop. The
call stays in the unrolled kernel, so that the next typing checks the items again against the
types of the whole kernel (another :class:`UnrollAgain` where they differ).

An item is described by a *plan*, from which the unrolling builds the loop variable's value:

* ``("const", value)`` a number, bool, string or None;
* ``("global", value)`` a dtype, enum member, function or other object tile code reads;
* ``("function", function)`` a Python function, made a helper of the compile that unrolls
  the loop (plans outlive a compile; helpers belong to one);
* ``("typed", dtype, value)`` a typed constant (``ct.int16(3)``);
* ``("path", j, steps)`` a run-time value reached from the ``j``-th value passed, through
  ``("item", i)`` and ``("attr", name)`` steps;
* ``("var", name)`` the value of a variable assigned once in the kernel (found before typing);
* ``("tuple", plans)``.

>>> from numba_tile.compiler.typing.static_iteration import plan_of
>>> plan_of((1, 2.5, None), {})
('tuple', (('const', 1), ('const', 2.5), ('const', None)))
"""

import enum
import types as pytypes

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...errors import TileInternalError, TileStaticEvalError, TileTypeError
from ...host import context as interpreter_context
from ...host.tile import Tile
from ...rules.static_evaluation import check_condition, evaluate, iteration_items
from ...source.static_expressions import AsTileCode
from ..abstract import RUN_TIME, constant_of
from ..compile_state import current
from .static_expressions import RunTimeValue, python_value
from .templates import registry


class UnrollAgain(Exception):
    """The items of a ``static_iter`` loop are known now (or changed): compile again."""


class NeedsTyping(Exception):
    """An iterable used a value known only once the kernel is typed (:class:`PendingValue`)."""


class PendingValue:
    """A value of the kernel not known before typing, as an iterable evaluated then sees it:
    it may be kept in an item (``plan`` builds it), any other use needs its type."""

    __slots__ = ("plan",)

    def __init__(self, plan):
        self.plan = plan

    def __getattr__(self, name):
        raise NeedsTyping()

    def _needs_typing(self, *args, **kwargs):
        raise NeedsTyping()


for _dunder in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift",
                "rshift", "and", "or", "xor"):
    setattr(PendingValue, f"__{_dunder}__", PendingValue._needs_typing)
    setattr(PendingValue, f"__r{_dunder}__", PendingValue._needs_typing)
for _dunder in ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "invert", "abs", "bool",
                "int", "float", "index", "iter", "len", "call", "contains", "round", "repr",
                "str", "format", "hash", "getitem"):
    setattr(PendingValue, f"__{_dunder}__", PendingValue._needs_typing)


def compiled_static_iter(key, *values):
    """What the source rewrite makes of ``ct.static_iter(ITERABLE)`` (never typed: each
    call becomes an instance before typing)."""


def compiled_static_iter_instance(instance, *values):
    """One ``static_iter`` loop of the kernel as unrolled (typed: the items checked)."""


def compiled_static_condition(value):
    """The ``if`` of a tuple comprehension: its constant condition."""


# -- values as the iterable sees them ---------------------------------------------------------
def static_value(numba_type, index, steps, typing_context, functions):
    """The value an iterable sees for a value of ``numba_type`` reached from passed value
    ``index`` through ``steps``: a constant as the interpreter holds it, a tuple of such
    values, or a :class:`RunTimeValue` that knows where it comes from. Functions given as
    dispatchers are noted in ``functions`` (id of the Python function -> dispatcher), so that
    an item that is one reads the same dispatcher."""
    if isinstance(numba_type, types.Dispatcher):
        function = numba_type.dispatcher.py_func
        functions[id(function)] = numba_type.dispatcher
        return function
    found = python_value(numba_type)
    if found is not None:
        return found[0] if isinstance(found, tuple) else found
    if isinstance(numba_type, types.BaseTuple):
        return tuple(static_value(t, index, steps + (("item", i),), typing_context, functions)
                     for i, t in enumerate(numba_type))
    return RunTimeValue(None, index if not steps else None, numba_type, typing_context,
                        path=(index, steps))


def iteration_plans(key, values, namespace, functions):
    """The plans of the items of ``static_iter`` expression ``key`` for ``values`` (see
    :func:`static_value`); :class:`NeedsTyping` where the expression needs a
    :class:`PendingValue`."""
    try:
        items = evaluate(key, values, namespace, interpreter_context.static_evaluation,
                         finish=lambda iterable: iteration_items(iterable, _is_run_time,
                                                                 _is_tile_value))
    except AsTileCode:  # (no run-time value reaches it: their uses raise first)
        raise TileStaticEvalError("static_iter() iterable needs a run-time value") from None
    return tuple(plan_of(item, functions) for item in items)


def _is_run_time(value):
    if isinstance(value, PendingValue):
        raise NeedsTyping()  # it may be a tuple once typed
    return isinstance(value, RunTimeValue)


def _is_tile_value(value):
    return isinstance(value, (RunTimeValue, Tile, PendingValue))


def plan_of(item, functions):
    """The plan of an item (see the module's docstring)."""
    if isinstance(item, tuple):
        return "tuple", tuple(plan_of(v, functions) for v in item)
    if isinstance(item, PendingValue):
        return item.plan
    if isinstance(item, RunTimeValue):
        if item._path is None:
            raise TileTypeError("A static_iter() item must be a constant or a value of the "
                                "kernel's variables")
        return "path", item._path[0], item._path[1]
    if isinstance(item, Tile):
        return "typed", item.dtype, item.constant_value()
    if item is None or isinstance(item, (str, bool)):
        return "const", item
    if isinstance(item, (int, float)) and not isinstance(item, enum.Enum):
        return "const", int(item) if isinstance(item, int) else float(item)
    spelled = d.dtype_spelling(item)
    if spelled is not None:
        return "global", spelled
    if isinstance(item, pytypes.FunctionType) and id(item) in functions:
        return "global", functions[id(item)]
    if isinstance(item, pytypes.FunctionType):  # converted where the loop is unrolled
        return "function", item
    return "global", item


# -- templates -------------------------------------------------------------------------------
class StaticIterTemplate(AbstractTemplate):
    """A ``static_iter`` loop's call left for typing: its items evaluated with the values'
    types (once per value types: ``StaticIterState.typed``). A pass after typing compares
    them, for the kernel's final types, with those the loop was unrolled with
    (:class:`~numba_tile.compiler.frontend.static_iter.CheckStaticIterItems`)."""

    key = compiled_static_iter_instance
    prefer_literal = True

    def generic(self, args, kws):
        if not isinstance(args[0], types.IntegerLiteral):
            return None
        instance = args[0].literal_value
        state = current().static_iter
        memo = (instance, tuple(args[1:]))
        if memo not in state.typed:
            key = state.keys[instance]
            functions = {}
            values = [static_value(t, j, (), self.context, functions)
                      for j, t in enumerate(args[1:])]
            state.typed[memo] = iteration_plans(key, values,
                                                current().static_namespaces[key], functions)
        return signature(types.none, *args)


registry.register_global(compiled_static_iter_instance)(StaticIterTemplate)


class _NotUnrolled(AbstractTemplate):
    key = compiled_static_iter

    def generic(self, args, kws):
        raise TileInternalError("a static_iter() loop was not unrolled")


registry.register_global(compiled_static_iter)(_NotUnrolled)


class StaticConditionTemplate(AbstractTemplate):
    """A comprehension's condition must be a compile-time constant: its value, a literal."""

    key = compiled_static_condition
    prefer_literal = True

    def generic(self, args, kws):
        value = constant_of(args[0], RUN_TIME)
        if isinstance(args[0], types.BaseTuple) and value is RUN_TIME:
            value = RunTimeValue(None, None, args[0])
        truth = check_condition(value, lambda v: v is RUN_TIME or isinstance(v, RunTimeValue))
        return signature(types.literal(truth), *args)


registry.register_global(compiled_static_condition)(StaticConditionTemplate)
