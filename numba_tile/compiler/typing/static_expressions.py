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

import numpy as np

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...errors import TileStaticEvalError
from ...interpreter import context as interpreter_context
from ...interpreter.arrays import symbolic_shape
from ...interpreter.literals import loose
from ...interpreter.tile import Tile
from ...static_expressions import EFFECTS, AsGlobal, AsTileCode, check_assertion, evaluate
from ..abstract import RUN_TIME, constant_of
from ..compilation import current
from ..constant_folding import literal_type
from ..types import ArrayType, FloatLiteral, TileType, TypedConstant, dtype_of_scalar
from .keywords import KeywordArgumentsType
from .templates import folded_type, registry


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
        # an attribute's value: a constant (an array's dtype, a view's tile_shape...) or
        # another run-time value (an array's shape, whose entries have a dtype)
        found = self._context.resolve_getattr(self._type, name) \
            if self._context is not None and self._type is not None else None
        if found is None:
            raise AsTileCode(self._key)
        return _derived(self._key, found, self._context)

    def __getitem__(self, index):
        if isinstance(self._type, types.BaseTuple) and isinstance(index, int) and \
                -len(self._type) <= index < len(self._type):
            return _derived(self._key, self._type[index], self._context)
        raise AsTileCode(self._key)

    def __len__(self):
        if isinstance(self._type, types.BaseTuple):
            return len(self._type)
        raise AsTileCode(self._key)

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
                "int", "float", "index", "iter", "call", "contains", "round"):
    setattr(RunTimeValue, f"__{_dunder}__", RunTimeValue._needs_value)
RunTimeValue.__hash__ = object.__hash__


def _derived(key, numba_type, typing_context):
    """A value computed from a run-time value (an attribute, an entry): its constant, or a
    run-time value that cannot be the expression's result (it is no variable)."""
    found = _python_value(numba_type)
    if found is None:
        return RunTimeValue(key, None, numba_type, typing_context)
    return found[0] if isinstance(found, tuple) else found


def _tile_value(numba_type):
    """A constant as the interpreter holds it: loose literals keep their tile dtype
    (``LooseInt``), typed constants are 0-d constant tiles; ``RUN_TIME`` if not a
    constant."""
    if isinstance(numba_type, TypedConstant):
        return Tile(numba_type.dtype, np.array(numba_type.literal_value,
                                               dtype=numba_type.dtype.storage), constant=True)
    if isinstance(numba_type, types.BooleanLiteral):
        return numba_type.literal_value
    if isinstance(numba_type, (types.IntegerLiteral, FloatLiteral)):
        return loose(numba_type.literal_value)
    if isinstance(numba_type, types.BaseTuple):
        values = tuple(_tile_value(t) for t in numba_type)
        return RUN_TIME if any(v is RUN_TIME for v in values) else values
    if isinstance(numba_type, KeywordArgumentsType):  # a helper's **kwargs: a dict
        values = [_tile_value(t) for t in numba_type.values]
        return RUN_TIME if any(v is RUN_TIME for v in values) else \
            dict(zip(numba_type.names, values))
    return constant_of(numba_type, RUN_TIME)


def _python_value(numba_type):
    """The Python value a static expression sees for a compile-time value, or None."""
    if isinstance(numba_type, types.Dispatcher):
        return numba_type.dispatcher.py_func
    if isinstance(numba_type, types.Function):
        return numba_type.typing_key
    value = _tile_value(numba_type)
    return None if value is RUN_TIME else (value,)


def _plain(value):
    """Loose constants as plain Python numbers (what literal types hold)."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return int(value) if isinstance(value, int) else float(value)


def _is_constant(value):
    if isinstance(value, (RunTimeValue, _Method, Tile)):
        return False
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, d.DType, enum.Enum)) or \
        d.dtype_spelling(value) is not None


class _StaticTemplate(AbstractTemplate):
    """A rewritten static call: ``key`` (a literal) and the values; each expression runs
    once per value types (``Compilation.static_values``)."""

    prefer_literal = True

    def generic(self, args, kws):
        if not isinstance(args[0], types.IntegerLiteral):
            return None
        key = args[0].literal_value
        compilation = current()
        memo_key = (key, tuple(args[1:]))
        if memo_key not in compilation.static_values:
            compilation.static_values[memo_key] = self._evaluate(key, args[1:], compilation)
        return signature(self._result_type(compilation.static_values[memo_key]), *args)


class StaticEvalTemplate(_StaticTemplate):
    key = compiled_static_eval

    @staticmethod
    def _result_type(found):
        return found[0]

    def _evaluate(self, key, value_types, compilation):
        """``(result type, index of the run-time value it is, or None)``."""
        values = _values_of(key, value_types, self.context)

        def defer():
            raise AsTileCode(key)
        result = evaluate(key, values, compilation.static_namespaces[key],
                          lambda construct: interpreter_context.static_evaluation(construct,
                                                                                  defer))
        if isinstance(result, RunTimeValue) and result._index is not None:
            return result._type, result._index
        if isinstance(result, Tile) and result.is_constant and result.ndim == 0:
            return folded_type(result), None
        if isinstance(result, (_Method, RunTimeValue)) or (
                isinstance(result, tuple) and not _is_constant(result)):
            raise AsTileCode(key)
        if _is_constant(result):
            return literal_type(_plain(result)), None
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


class StaticAssertTemplate(_StaticTemplate):
    key = compiled_static_assert

    @staticmethod
    def _result_type(found):
        return types.none

    def _evaluate(self, key, value_types, compilation):
        try:
            condition, message = evaluate(
                key, _values_of(key, value_types, self.context),
                compilation.static_namespaces[key],
                lambda construct: interpreter_context.static_evaluation(construct))
        except AsTileCode:  # the condition needs a run-time value
            condition, message = RunTimeValue(key, 0, None), None
        check_assertion(condition, message, lambda v: isinstance(v, RunTimeValue))
        return True


registry.register_global(compiled_static_assert)(StaticAssertTemplate)
