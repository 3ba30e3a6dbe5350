"""Typing of ``ct.static_eval(EXPR)`` (see :mod:`numba_tile.static_expressions`): the call
the source rewrite leaves, ``compiled_static_eval(key, v1, ..., vn)``, is typed by running
``EXPR`` with the local variables' compile-time values, and a :class:`RunTimeValue` for
each one known only when the kernel runs.

Its type is the result's: a constant's literal type, a function's type, or the type of the
run-time value it returns (the lowering then passes that value on). Where ``EXPR`` needs a
run-time value's elements, :class:`~numba_tile.static_expressions.AsTileCode` makes the
pipeline compile it as ordinary tile code.
"""

import enum
import types as pytypes

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...errors import TileStaticEvalError
from ...interpreter import context as interpreter_context
from ...interpreter.arrays import symbolic_shape
from ...static_expressions import EFFECTS, AsGlobal, AsTileCode, check_assertion, evaluate
from ..abstract import RUN_TIME, constant_of
from ..compilation import current
from ..constant_folding import literal_type
from ..types import ArrayType, TileType, dtype_of_scalar
from .templates import registry


def compiled_static_eval(key, *values):
    """What ``ct.static_eval(EXPR)`` becomes in compiled kernels (never called: typed and
    lowered)."""


def compiled_static_assert(key, *values):
    """What ``ct.static_assert(COND, MSG)`` becomes in compiled kernels (typed: the check
    runs then; lowered to nothing)."""


class _Method:
    """A method of a run-time value: calling it needs the value."""

    def __init__(self, key, name):
        self.key, self.name = key, name

    def __call__(self, *args, **kwargs):
        if self.name in EFFECTS:
            raise TileStaticEvalError(f"{self.name}() cannot be called inside static_eval()")
        raise AsTileCode(self.key)


_TILE_METHODS = ("reshape", "permute", "transpose", "astype", "extract", "insert", "item")
_ARRAY_METHODS = ("slice", "tiled_view", "get_raw_memory")


class RunTimeValue:
    """A value of the kernel known only when it runs, as ``static_eval`` sees it while the
    kernel compiles: its type's facts (a tile's ``shape``, ``dtype``, ``ndim``), methods
    that cannot run yet, and nothing else (anything else compiles the expression as code)."""

    def __init__(self, key, index, numba_type, typing_context=None):
        self._key, self._index, self._type = key, index, numba_type
        self._context = typing_context

    def _tile_facts(self):
        t = self._type
        if isinstance(t, TileType):
            return t.shape, t.dtype
        dtype = dtype_of_scalar(t)
        return ((), dtype) if dtype is not None else None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        facts = self._tile_facts()
        if facts is not None:
            shape, dtype = facts
            found = {"shape": tuple(shape), "dtype": dtype, "ndim": len(shape)}
            if name in found:
                return found[name]
            if name in _TILE_METHODS:
                return _Method(self._key, name)
        if isinstance(self._type, ArrayType) and name in _ARRAY_METHODS:
            return _Method(self._key, name)
        # an attribute whose type is a constant (an array's dtype, a view's tile_shape...)
        found = self._context.resolve_getattr(self._type, name) \
            if self._context is not None and self._type is not None else None
        value = RUN_TIME if found is None else constant_of(found, RUN_TIME)
        if value is RUN_TIME:
            raise AsTileCode(self._key)
        return value

    def __format__(self, spec):
        return repr(self)

    def __str__(self):
        return repr(self)

    def __repr__(self):
        facts = self._tile_facts()
        if facts is not None:
            return f"<tile[{facts[1]}, {tuple(facts[0])}]>"
        if isinstance(self._type, ArrayType):
            return f"<array[{self._type.dtype}, {symbolic_shape(self._type.ndim)}]>"
        raise AsTileCode(self._key)

    def _needs_value(self, *args, **kwargs):
        raise AsTileCode(self._key)


for _dunder in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift",
                "rshift", "and", "or", "xor"):
    setattr(RunTimeValue, f"__{_dunder}__", RunTimeValue._needs_value)
    setattr(RunTimeValue, f"__r{_dunder}__", RunTimeValue._needs_value)
for _dunder in ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "invert", "abs", "bool",
                "int", "float", "index", "len", "iter", "getitem", "call", "contains",
                "round"):
    setattr(RunTimeValue, f"__{_dunder}__", RunTimeValue._needs_value)
RunTimeValue.__hash__ = object.__hash__


def _python_value(numba_type):
    """The Python value a static expression sees for a compile-time value, or None."""
    if isinstance(numba_type, types.Dispatcher):
        return numba_type.dispatcher.py_func
    if isinstance(numba_type, types.Function):
        return numba_type.typing_key
    value = constant_of(numba_type, RUN_TIME)
    return None if value is RUN_TIME else (value,)


def _is_constant(value):
    if isinstance(value, (RunTimeValue, _Method)):
        return False
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, d.DType, enum.Enum)) or \
        d.dtype_spelling(value) is not None


class StaticEvalTemplate(AbstractTemplate):
    key = compiled_static_eval
    prefer_literal = True

    def generic(self, args, kws):
        if not isinstance(args[0], types.IntegerLiteral):
            return None
        key = args[0].literal_value
        compilation = current()
        memo_key = (key, tuple(args[1:]))
        if memo_key not in compilation.static_values:
            compilation.static_values[memo_key] = self._evaluate(key, args[1:], compilation)
        result_type, _ = compilation.static_values[memo_key]
        return signature(result_type, *args)

    def _evaluate(self, key, value_types, compilation):
        """``(result type, index of the run-time value it is, or None)``."""
        values = _values_of(key, value_types, self.context)

        def defer():
            raise AsTileCode(key)
        result = evaluate(key, values, compilation.static_namespaces[key],
                          lambda construct: interpreter_context.static_evaluation(construct,
                                                                                  defer))
        if isinstance(result, RunTimeValue):
            return result._type, result._index
        if isinstance(result, (_Method, RunTimeValue)) or (
                isinstance(result, tuple) and not _is_constant(result)):
            raise AsTileCode(key)
        if _is_constant(result):
            return literal_type(result), None
        if callable(result):
            helper = compilation.static_helpers.value(result) \
                if isinstance(result, pytypes.FunctionType) else result
            if helper is not result:  # a plain function: a global the compiler inlines
                raise AsGlobal(key, result)
            return self.context.resolve_value_type(result), None
        raise TileStaticEvalError(f"static_eval() gave {type(result).__name__} "
                                  f"{result!r}, which tile code cannot hold")


registry.register_global(compiled_static_eval)(StaticEvalTemplate)


def _values_of(key, value_types, typing_context):
    values = []
    for index, numba_type in enumerate(value_types):
        found = _python_value(numba_type)
        values.append(RunTimeValue(key, index, numba_type, typing_context) if found is None else
                      found[0] if isinstance(found, tuple) else found)
    return values


class StaticAssertTemplate(AbstractTemplate):
    key = compiled_static_assert
    prefer_literal = True

    def generic(self, args, kws):
        if not isinstance(args[0], types.IntegerLiteral):
            return None
        key = args[0].literal_value
        compilation = current()
        memo_key = (key, tuple(args[1:]))
        if memo_key not in compilation.static_values:
            compilation.static_values[memo_key] = None  # checked once
            try:
                condition, message = evaluate(
                    key, _values_of(key, args[1:], self.context),
                    compilation.static_namespaces[key],
                    lambda construct: interpreter_context.static_evaluation(construct))
            except AsTileCode:  # the condition needs a run-time value
                condition, message = RunTimeValue(key, 0, None), None
            check_assertion(condition, message, lambda v: isinstance(v, RunTimeValue))
        return signature(types.none, *args)


registry.register_global(compiled_static_assert)(StaticAssertTemplate)
