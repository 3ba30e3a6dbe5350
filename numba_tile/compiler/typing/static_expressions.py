"""Typing of ``ct.static_eval(EXPR)`` (see :mod:`numba_tile.source.static_expressions`): the call
the source rewrite leaves, ``compiled_static_eval(key, v1, ..., vn)``, is typed by running
``EXPR`` with the local variables' compile-time values, and a :class:`RunTimeValue` for
each one known only when the kernel runs.

Its type is the result's: a constant's literal type, a function's type, or the type of the
run-time value it returns (the lowering then passes that value on). Where ``EXPR`` needs a
run-time value's elements, :class:`~numba_tile.source.static_expressions.AsTileCode` makes the
pipeline compile it as ordinary tile code.
"""

import enum
import types as pytypes

import numpy as np

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...errors import TileError, TileStaticEvalError, TileTypeError
from ...host import context as interpreter_context
from ...host.arrays import symbolic_shape
from ...host.scalars import loose
from ...host.tile import Tile
from ...rules.operators import OPERATORS
from ...rules.static_evaluation import check_assertion, evaluate, local_function_error, \
    static_exception_of
from ...source.static_expressions import EFFECTS, AsGlobal, AsTileCode
from ..abstract import RUN_TIME, constant_of
from ..compile_state import current
from ..constant_folding import literal_type
from ..types import ArrayType, FloatLiteral, TileType, TypedConstant, dtype_of_scalar
from ...rules.dataclasses import field_names, is_dataclass_instance
from .dataclasses import DataclassType, constant_instance, value_type as dataclass_value_type
from .keywords import KeywordArgumentsType
from .templates import folded_type, registry


def compiled_static_eval(key, *values):
    """What ``ct.static_eval(EXPR)`` becomes in compiled kernels (never called: typed and
    lowered)."""


def compiled_static_assert(key, *values):
    """What ``ct.static_assert(COND, MSG)`` becomes in compiled kernels (typed: the check
    runs then; lowered to nothing)."""


def compiled_static_raise(key, *values):
    """What ``raise ct.static_exception(EXPR)`` becomes in compiled kernels (typed: it
    raises then, wherever it is not in the side of an ``if`` decided against it)."""


class _Method:
    """A method of a run-time value: calling it needs the value."""

    def __init__(self, key, name):
        self.key, self.name = key, name

    def __call__(self, *args, **kwargs):
        construct = interpreter_context.static_construct()
        if self.name in EFFECTS or construct == "static_iter":
            raise TileStaticEvalError(f"{self.name}() cannot be called inside "
                                      f"{interpreter_context.inside(construct)}")
        raise AsTileCode(self.key)


_TILE_METHODS = ("reshape", "permute", "transpose", "astype", "extract", "insert", "item")
_ARRAY_METHODS = ("slice", "tiled_view", "get_raw_memory")


def _unknown_shape(ndim):
    """How cuTile's type names show ``ndim`` extents known only at run time: ``(?,?)``."""
    return "(" + ",".join("?" * ndim) + ("," if ndim == 1 else "") + ")"


class RunTimeValue:
    """A value of the kernel known only when it runs, as ``static_eval`` sees it while the
    kernel compiles: its type's facts (a tile's ``shape``, ``dtype``, ``ndim``), methods
    that cannot run yet, and nothing else (anything else compiles the expression as code).
    Inside a ``static_iter`` iterable, where nothing is compiled as code, anything else is
    cuTile's ``TileStaticEvalError`` (as the interpreter's run-time tiles give), and
    ``path`` says where the value comes from: ``(index of the value passed, steps)``
    (see :mod:`.static_iteration`)."""

    def __init__(self, key, index, numba_type, typing_context=None, path=None):
        self._key, self._index, self._type = key, index, numba_type
        self._context = typing_context
        self._path = path

    def _tile_facts(self):
        t = self._type
        if isinstance(t, TileType):
            return t.shape, t.dtype
        dtype = dtype_of_scalar(t)
        return ((), dtype) if dtype is not None else None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in ("is_constant", "is_constant_object"):
            return False  # (known only when the kernel runs: never a compile-time constant)
        if name in ("is_tile_array", "tile_type_name"):  # (what the rules ask of an array)
            if not isinstance(self._type, ArrayType):
                return False if name == "is_tile_array" else None
            return True if name == "is_tile_array" else \
                f"Array[{self._type.dtype},{_unknown_shape(self._type.ndim)}:" \
                f"{_unknown_shape(self._type.ndim)}]"
        facts = self._tile_facts()
        if name == "describe" and facts is not None:  # (as the interpreter's Tile says it)
            shape, dtype = facts
            return lambda: f"run-time {dtype} scalar" if not shape else \
                f"{dtype} tile of shape {tuple(shape)}"
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
            self._needs_value(operation=name)
        return _derived(self._key, found, self._context, self._step(("attr", name)))

    def __getitem__(self, index):
        if isinstance(self._type, types.BaseTuple) and isinstance(index, int) and \
                -len(self._type) <= index < len(self._type):
            return _derived(self._key, self._type[index], self._context,
                            self._step(("item", index % len(self._type))))
        self._needs_value()

    def __static_function__(self):
        """``(code, names it reads)`` of a function value (a closure made in the kernel, a
        helper), or None: what a static expression may read of a function's source."""
        if isinstance(self._type, types.MakeFunctionLiteral):
            code = self._type.literal_value.code
            return code, dict(current().code_globals.get(code, {}))
        if isinstance(self._type, types.Dispatcher):
            function = self._type.dispatcher.py_func
            return function.__code__, dict(function.__globals__)
        return None

    def __static_defaults__(self):
        """The number of default values of a function value's parameters (0 for anything
        else): what :func:`numba_tile.rules.combiners.check_combiner` counts."""
        if isinstance(self._type, types.MakeFunctionLiteral):
            defaults = self._type.literal_value.defaults
            return len(defaults) if isinstance(defaults, tuple) else int(defaults is not None)
        if isinstance(self._type, types.Dispatcher):
            return len(self._type.dispatcher.py_func.__defaults__ or ())
        return 0

    def __static_items__(self):
        """The items of a run-time tuple, each a run-time value; None for anything else (a
        static expression's way to take a tuple of tiles apart: ``isinstance`` sees no
        tuple here)."""
        if not isinstance(self._type, types.BaseTuple):
            return None
        return tuple(self[i] for i in range(len(self._type)))

    def __len__(self):
        if isinstance(self._type, types.BaseTuple):
            return len(self._type)
        self._needs_value(operation="len")

    def __iter__(self):
        if interpreter_context.static_construct() == "static_iter" and \
                self._tile_facts() is not None:
            raise TileTypeError("Tiles cannot be iterated; use ct.extract or a reduction")
        self._needs_value(operation="iter")

    @property
    def __tile_type_name__(self):
        """The interpreter's type of the value (for error messages)."""
        if isinstance(self._type, ArrayType):
            return "Array"
        return "Tile" if self._tile_facts() is not None else str(self._type)

    def _step(self, step):
        return None if self._path is None else (self._path[0], self._path[1] + (step,))

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
        self._needs_value(operation="repr")

    def _needs_value(self, *args, operation="getitem", conversion=None, **kwargs):
        interpreter_context.check_run_time(operation, conversion)
        raise AsTileCode(self._key)


def _needing_value(operation=None, conversion=None):
    def method(self, *args, **kwargs):
        return self._needs_value(operation=operation, conversion=conversion)
    return method


for _op in OPERATORS:  # named as the interpreter's tiles name them in errors
    setattr(RunTimeValue, _op.dunder, _needing_value(_op.name))
    if _op.reflected_dunder:
        setattr(RunTimeValue, _op.reflected_dunder, _needing_value(_op.name))
for _dunder, _conversion in (("bool", "a boolean"), ("int", "an integer"),
                             ("index", "an integer"), ("float", "a float")):
    setattr(RunTimeValue, f"__{_dunder}__", _needing_value(conversion=_conversion))
for _dunder in ("call", "contains", "round", "matmul", "rmatmul", "pos"):
    setattr(RunTimeValue, f"__{_dunder}__", _needing_value(_dunder.lstrip("r") if
                                                           _dunder == "rmatmul" else _dunder))
RunTimeValue.__hash__ = object.__hash__


def _call(self, *args, **kwargs):
    """A closure the kernel made cannot be called inside a static expression (cuTile's
    rule, as the interpreter's closures give); anything else needs its value."""
    if isinstance(self._type, types.MakeFunctionLiteral):
        raise local_function_error(self._type.literal_value.code.co_name)
    return self._needs_value(operation="call")


RunTimeValue.__call__ = _call


def _derived(key, numba_type, typing_context, path=None):
    """A value computed from a run-time value (an attribute, an entry): its constant, or a
    run-time value that cannot be the expression's result (it is no variable). Inside a
    ``static_iter`` iterable, a tuple is a tuple of such values."""
    found = python_value(numba_type)
    if found is not None:
        return found[0] if isinstance(found, tuple) else found
    if isinstance(numba_type, types.BaseTuple) and \
            interpreter_context.static_construct() == "static_iter":
        return tuple(_derived(key, t, typing_context,
                              None if path is None else (path[0], path[1] + (("item", i),)))
                     for i, t in enumerate(numba_type))
    return RunTimeValue(key, None, numba_type, typing_context, path)


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
    if isinstance(numba_type, DataclassType):  # an instance whose fields are constants
        return constant_instance(numba_type, _tile_value, RUN_TIME)
    if isinstance(numba_type, KeywordArgumentsType):  # a helper's **kwargs: a dict
        values = [_tile_value(t) for t in numba_type.values]
        return RUN_TIME if any(v is RUN_TIME for v in values) else \
            dict(zip(numba_type.names, values))
    return constant_of(numba_type, RUN_TIME)


def python_value(numba_type):
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


def _holds_run_time_values(value):
    if isinstance(value, tuple):
        return any(_holds_run_time_values(v) for v in value)
    if is_dataclass_instance(value):
        return any(_holds_run_time_values(getattr(value, name))
                   for name in field_names(type(value)))
    return isinstance(value, (RunTimeValue, _Method))


def _is_constant(value):
    if isinstance(value, (RunTimeValue, _Method, Tile)):
        return False
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, d.DType, enum.Enum)) or \
        d.dtype_spelling(value) is not None


class _StaticTemplate(AbstractTemplate):
    """A rewritten static call: ``key`` (a literal) and the values; each expression runs
    once per value types (``CompileState.static_values``)."""

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
        if is_dataclass_instance(result):  # its type, where its fields are constants
            if _holds_run_time_values(result):
                raise AsTileCode(key)
            return dataclass_value_type(self.context, result), None
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
        # a closure made in the kernel: a run-time value that knows its function's code
        found = None if isinstance(numba_type, types.MakeFunctionLiteral) else \
            python_value(numba_type)
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


class StaticRaiseTemplate(_StaticTemplate):
    """``raise ct.static_exception(EXPR)``: typed as nothing; its error, made here, is kept
    (in ``static_values``) and raised only where the typed kernel reaches the call
    (:mod:`~numba_tile.compiler.frontend.static_raises`): Numba types the sides of an
    ``if`` that a typed constant (a tile's dtype) decides against too."""

    key = compiled_static_raise

    @staticmethod
    def _result_type(found):
        return types.none

    def _evaluate(self, key, value_types, compilation):
        try:
            return static_exception_of(evaluate(
                key, _values_of(key, value_types, self.context),
                compilation.static_namespaces[key],
                lambda construct: interpreter_context.static_evaluation(construct)))
        except AsTileCode:  # (an exception is made at compile time, of compile-time values)
            return TileStaticEvalError("static_exception() expression needs the elements of "
                                       "a run-time value, known only when the kernel runs")
        except TileError as error:  # (raised where reached, as the exception itself)
            return error


registry.register_global(compiled_static_raise)(StaticRaiseTemplate)
