"""Running a kernel in the interpreter: arguments to tile values, then one call per block.

The kernel's Python function is re-bound to globals where ``min``, ``max``, ``int``,
``float``, ``bool`` and the ``math`` module follow tile semantics; helpers defined in the
kernel's module are re-bound the same way. A ``TileError`` raised by an op gets the location
of the kernel line that caused it.
"""

import enum
import functools
import itertools
import math
import types

import numpy as np

from .. import dtypes as d
from ..annotations import (ArgumentPath, ArrayAnnotation, ConstantAnnotation, ScalarAnnotation,
                           TupleAnnotation, check_static_items, constant_dtype,
                           mixed_list_error, scalar_argument, sequence_items, static_axes,
                           unsupported_argument_error)
from ..errors import TileError
from ..host import context
from ..host.arrays import Array, partition_region
from ..host.scalars import loose
from ..host.tile import Tile, to_tile
from ..language.tile_math import REPLACEMENTS, tile_math
from ..partitions import Partition, partitioned_array
from ..rules import calls, context_managers
from ..rules.global_values import read_errors, simt_intrinsic_error
from ..rules.static_evaluation import check_assertion, check_condition, evaluate, \
    iteration_items, raise_static_exception
from ..rules.syntax import helper_source_error, missing_attribute_error
from ..source import keyword_arguments, static_expressions
from ..source.source_code import closure_for, deep_syntax_trees
from ..source.tile_functions import tile_function
from ..source.user_code import is_user_code
from . import branch_joins, conditions, invalid_reads, loop_carried, loop_exits, loop_returns, \
    recursion, texts, tuples, with_blocks
from . import dataclasses as tile_dataclasses
from .enum_classes import tile_enum_class
from .host_arrays import to_host
from .python_errors import location_from_traceback, tile_error
from .rewrites import made_inside_tile_code, rewritten
from .tile_builtins import TILE_BUILTINS, RefusedClass


class TileGlobals:
    """Re-binds user functions to globals where builtins, ``math``, literals and numeric
    globals follow tile semantics; one dict per module, memoized. Helpers imported from other
    user modules, or reached as ``module.helper``, are re-bound too."""

    def __init__(self):
        self._by_module = {}
        self._modules = {}
        self._rebinding = set()  # guards against cycles of closures
        self._running = {}  # the calls of each helper running (.recursion)
        self._dataclasses = tile_dataclasses.Dataclasses(self.tile_value)

    def globals_for(self, module_globals):
        key = id(module_globals)
        if key in self._by_module:
            return self._by_module[key]
        new = dict(module_globals)
        self._by_module[key] = new
        new["__builtins__"] = TILE_BUILTINS
        # what static_eval/static_assert calls of this module's code become: their
        # expressions are plain Python, run with the module's own globals
        # (numba_tile.source.static_expressions)
        new[static_expressions.CALL_NAME] = functools.partial(
            _static_eval_call, module_globals, self._dataclasses.converted)
        new[static_expressions.ASSERT_NAME] = functools.partial(_static_assert_call,
                                                                module_globals)
        new[static_expressions.RAISE_NAME] = functools.partial(_static_raise_call,
                                                               module_globals)
        new.update(tuples.GLOBALS)
        new.update(loop_carried.GLOBALS)
        new.update(loop_returns.GLOBALS)
        new.update(loop_exits.GLOBALS)
        new.update(branch_joins.GLOBALS)
        new.update(conditions.GLOBALS)
        new.update(texts.GLOBALS)
        new[keyword_arguments.CONVERT_NAME] = keyword_arguments.KeywordArguments
        new[with_blocks.CHECK_NAME] = with_blocks.checked_context_manager
        new[recursion.GUARD_NAME] = recursion.defined_inside_guard
        new[static_expressions.ITER_NAME] = functools.partial(_static_iter_call,
                                                              module_globals)
        new[static_expressions.CONDITION_NAME] = _static_condition
        for name, value in module_globals.items():
            if not name.startswith("__"):
                new[name] = self.tile_value(value)
        return new

    def tile_value(self, value):
        """What a global of user code is in tile code."""
        if value is math:
            return tile_math
        dataclass_value = self._dataclasses.value(value)
        if dataclass_value is not None:  # a dataclass, an instance, dataclasses.replace
            return dataclass_value
        constant = _captured_constant(value)
        if constant is not None:
            return constant
        if calls.call_error(value) is not None and calls.refused_builtin(value) is None:
            return RefusedClass(value)
        if isinstance(value, (int, float)) and not isinstance(value, (bool, enum.Enum)):
            return loose(value)  # a global constant is a loosely typed constant
        if callable(value) and id(value) in REPLACEMENTS:
            return REPLACEMENTS[id(value)]
        generator = context_managers.generator_function(value)
        if generator is not None and is_user_code(generator):
            # a @contextlib.contextmanager helper: its generator runs as tile code too
            return with_blocks.context_manager_function(
                generator, self.rebind(generator, generator=True))
        if isinstance(value, types.FunctionType) and (
                is_user_code(value) or hasattr(value, "__numba_tile_function__")):
            return self.rebind(tile_function(value))
        if isinstance(value, types.ModuleType):
            return self._module(value)
        return value

    def _module(self, module):
        """A module as tile code sees it (:class:`_TileModule`): a user module's functions
        re-bound too."""
        if id(module) not in self._modules:
            proxy = _TileModule(module)
            self._modules[id(module)] = proxy
            if is_user_code(module):
                proxy.__dict__.update(self.globals_for(vars(module)))
        return self._modules[id(module)]

    def _closure(self, fn):
        """The closure with user functions in it (lambdas passed to a kernel factory, say)
        re-bound too; captured values are taken as they are at launch, as a compiler would."""
        if fn.__closure__ is None:
            return None
        cells = []
        for cell in fn.__closure__:
            try:
                value = cell.cell_contents
            except ValueError:  # not yet assigned
                cells.append(cell)
                continue
            if isinstance(value, types.FunctionType) and value is not fn and (
                    is_user_code(value) or context_managers.generator_function(value)):
                cells.append(types.CellType(self.tile_value(value)))
            else:
                replaced = self._dataclasses.value(value)
                if replaced is None:
                    replaced = _captured_constant(value)
                if replaced is None and calls.call_error(value) is not None:
                    replaced = RefusedClass(value)
                cells.append(cell if replaced is None else types.CellType(replaced))
        return tuple(cells)

    def rebind(self, fn, generator=False):
        """``fn`` as tile code runs it; ``generator``: a context manager's generator."""
        if id(fn) in self._rebinding:
            return fn
        self._rebinding.add(id(fn))
        try:
            return self._rebind(fn, generator)
        finally:
            self._rebinding.discard(id(fn))

    def _rebind(self, fn, generator):
        error = helper_source_error(fn, generator)
        if error is not None:  # raised where tile code calls it, as the compiler does
            return _raising(fn, error)
        tile_globals = self.globals_for(fn.__globals__)
        code, closure = fn.__code__, self._closure(fn)
        typed = rewritten(fn)
        # (of the code that runs: static expressions read their globals as Python does)
        errors = read_errors(fn, typed[0] if typed is not None else None)
        if errors:  # each raised where the compiler types its read
            typed = typed and rewritten(fn, tuple((e.loc.line, e.loc.col)
                                                  for e in errors))
            if typed is None:  # (no source to rewrite: raised where it is called)
                return _raising(fn, errors[0])
            for index, error in enumerate(errors):
                tile_globals[invalid_reads.name_for(fn.__code__, index)] = \
                    invalid_reads.InvalidRead(error)
        if typed is not None:
            code, literals = typed
            tile_globals.update(literals)
            closure = closure_for(code, fn, closure)
        rebound = types.FunctionType(code, tile_globals, fn.__name__, fn.__defaults__, closure)
        rebound.__kwdefaults__ = fn.__kwdefaults__
        rebound.__dict__.update(fn.__dict__)
        return recursion.guarded(rebound, self._running, fn)


class _TileModule(types.ModuleType):
    """A module read by tile code: its attributes, and cuTile's ``TileTypeError`` for one it
    lacks (``ct.abracadabra``), as the compiler raises."""

    def __init__(self, module):
        super().__init__(module.__name__, module.__doc__)
        self.__dict__["_numba_tile_module"] = module

    def __getattr__(self, name):
        try:
            value = getattr(self.__dict__["_numba_tile_module"], name)
        except AttributeError:
            raise missing_attribute_error(self.__name__, name) from None
        simt = simt_intrinsic_error(value)
        if simt is not None:  # (cuda.threadIdx: the compiler's typing of the read)
            raise simt
        if isinstance(value, types.ModuleType) and value.__name__.startswith("numba.cuda"):
            value = _TileModule(value)  # (cuda.libdevice.sinf: an intrinsic too)
        if calls.call_error(value) is not None and calls.refused_builtin(value) is None:
            value = RefusedClass(value)  # (ct.Constant(4), module.other_kernel(...))
        self.__dict__[name] = value  # found once per launch
        return value


def _captured_constant(value):
    """What an enum class or a NumPy scalar that tile code reads (a global, a captured
    variable) is there, else None: an enum class that makes members of constants only
    (:mod:`.enum_classes`); a constant of the scalar's dtype (``np.int16(4)``), as compiled."""
    if isinstance(value, np.generic) and d.dtype_spelling(value.dtype) is not None:
        return to_tile(value)
    return tile_enum_class(value)


def _raising(fn, error):
    """A stand-in for helper ``fn`` that raises ``error`` when called."""
    @functools.wraps(fn)
    def raising(*args, **kwargs):
        raise type(error)(error.message, error.loc)
    return raising


def _static_eval_call(module_globals, finish, key, *values):
    """``ct.static_eval(EXPR)`` in interpreted code: EXPR with the block's values, where a
    tile operation with an effect cannot be called; ``finish`` makes the dataclass
    instances of its value those of tile code."""
    return evaluate(key, values, module_globals, context.static_evaluation, finish=finish,
                    made_inside=made_inside_tile_code)


def _static_assert_call(module_globals, key, *values):
    """``ct.static_assert(COND, MSG)`` in interpreted code."""
    condition, message = evaluate(key, values, module_globals, context.static_evaluation,
                                  made_inside=made_inside_tile_code)
    check_assertion(condition, message, _is_run_time)


def _static_raise_call(module_globals, key, *values):
    """``raise ct.static_exception(EXPR)`` in interpreted code, where it runs."""
    raise_static_exception(evaluate(key, values, module_globals, context.static_evaluation,
                                    made_inside=made_inside_tile_code))


def _static_iter_call(module_globals, key, *values):
    """``ct.static_iter(ITERABLE)`` of a ``for`` in interpreted code: the items, numbers as
    loosely typed constants (what the compiler makes of them)."""
    items = evaluate(key, values, module_globals, context.static_evaluation,
                     finish=lambda iterable: iteration_items(iterable, _known_at_run_time,
                                                             _is_tile_value),
                     made_inside=made_inside_tile_code)
    return tuple(_loose_numbers(item) for item in items)


def _static_condition(value):
    """The ``if`` of a tuple comprehension: a compile-time constant's truth."""
    return check_condition(value, _known_at_run_time)


def _loose_numbers(value):
    if isinstance(value, tuple):
        return tuple(_loose_numbers(v) for v in value)
    return loose(value) if isinstance(value, (int, float)) else value


def _is_tile_value(value):
    """A value of interpreted tile code: a tile, an array, a view (host values), a list
    argument, a context manager's value..."""
    return type(value).__module__.startswith(("numba_tile.host", "numba_tile.interpreter"))


def _is_run_time(value):
    return isinstance(value, Tile) and not value.is_constant


def _known_at_run_time(value):
    """A tile (but a constant scalar), an array, a view...: no compile-time value."""
    if isinstance(value, Tile):
        return not value.is_compile_time
    return _is_tile_value(value) and not isinstance(value, (int, float))


# -- arguments ------------------------------------------------------------------------------
def _constant_argument(where, value):
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        value = value.item()  # a NumPy number is its value, as a Python number is
    if isinstance(value, (int, float)) and not isinstance(value, (bool, enum.Enum)):
        return loose(value)  # embedded like a literal
    if value is None or isinstance(value, (bool, str, enum.Enum, d.DType)):
        return value
    if isinstance(value, tuple):
        return tuple(_constant_argument(w, v) for w, v, _ in sequence_items(where, value, None))
    return constant_dtype(where, value)


def _scalar_argument(name, value, meta):
    scalar = scalar_argument(name, value, meta)
    if scalar is None:
        return None
    dtype, value = scalar
    return Tile(dtype, np.array(value).astype(dtype.storage))


def _static_values(array):
    """``(static shape, static strides)`` of an array argument: ``(axis, value)`` pairs of
    the axes its ArrayAnnotation makes static (strides in elements)."""
    data = array.data
    return (tuple((axis, data.shape[axis]) for axis in array.static_shape_axes),
            tuple((axis, data.strides[axis] // data.itemsize)
                  for axis in array.static_stride_axes))


class PreparedArguments:
    """Kernel arguments as tile values, plus the copies to write back after the launch."""

    def __init__(self, kernel, args):
        self.values = []
        self.write_backs = []
        self.partitions = []  # (position, whole array, tile shape) of ct.partition arguments
        for position, (name, value) in enumerate(zip(kernel.parameters, args)):
            self.values.append(self._convert(ArgumentPath(position, name), value,
                                             kernel.parameter_kinds.get(name)))

    def for_block(self, block_id):
        """The values block ``block_id`` is called with: each partition its own region."""
        if not self.partitions:
            return self.values
        values = list(self.values)
        for position, whole, tile_shape in self.partitions:
            values[position] = partition_region(whole, tile_shape, block_id)
        return values

    def _convert(self, name, value, meta):
        if isinstance(value, Partition):
            whole = self._array(name, partitioned_array(name, value, meta), meta)
            self.partitions.append((name.position, whole, value.tile_shape))
            return whole
        if isinstance(meta, ConstantAnnotation):
            meta.check(name, value)
            return _constant_argument(name, value)
        if isinstance(meta, ScalarAnnotation):  # (whatever the value: a tuple, None...)
            return _scalar_argument(name, value, meta)
        if isinstance(value, (tuple, list)) or isinstance(meta, TupleAnnotation):
            items = [self._convert(where, v, item_meta)
                     for where, v, item_meta in sequence_items(name, value, meta)]
            if isinstance(value, list) and \
                    len({(a.dtype, a.ndim) for a in items if isinstance(a, Array)}) > 1:
                raise mixed_list_error(name, [f"{a.dtype} {a.ndim}-d array" if
                                              isinstance(a, Array) else type(a).__name__
                                              for a in items])
            if isinstance(value, list) and items and all(isinstance(a, Array) for a in items):
                check_static_items(name, [_static_values(a) for a in items])
            return tuples.ArgumentList(items) if isinstance(value, list) else tuple(items)
        if isinstance(value, (d.DType, enum.Enum)):
            return value
        if isinstance(value, str) or value is None:  # (compiled code has no run-time form)
            raise unsupported_argument_error(name, value)
        spelled = d.dtype_spelling(value)  # np.int16, torch.float16: the dtype they spell
        if spelled is not None:
            return spelled
        scalar = _scalar_argument(name, value, meta)
        if scalar is not None:
            return scalar
        return self._array(name, value, meta)

    def _array(self, name, value, meta):
        host = to_host(value)
        if host is None:
            raise unsupported_argument_error(name, value)
        if host.write_back is not None:
            self.write_backs.append(host.write_back)
        if not isinstance(meta, ArrayAnnotation):
            return Array(host.array, host.dtype, d.int32)
        static = static_axes(str(name), meta, host.array.ndim)
        return Array(host.array, host.dtype, meta.index_dtype, *static)


def run(kernel, grid, args):
    """Run ``kernel`` over ``grid`` on the CPU; write results into the arguments' arrays."""
    kernel.check_source()  # what the compiler rejects before it runs, rejected here too
    prepared = PreparedArguments(kernel, args)
    with deep_syntax_trees():  # (the source of each function is checked and rewritten)
        fn = TileGlobals().rebind(kernel.fn)
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    try:
        for z, y, x in itertools.product(range(grid3[2]), range(grid3[1]), range(grid3[0])):
            previous = context.set_current(context.BlockContext((x, y, z), grid3))
            try:
                fn(*prepared.for_block((x, y, z)))
            finally:
                context.set_current(previous)
    except TileError as err:
        if err.loc is None:
            err.loc = location_from_traceback(err.__traceback__)
        raise
    except Exception as err:  # Python's own, raised by tile code: cuTile's error, if any
        translated = tile_error(err)
        if translated is None:
            raise
        raise translated from None
    finally:
        for write_back in prepared.write_backs:
            write_back()
