"""Running a kernel in the interpreter: arguments to tile values, then one call per block.

The kernel's Python function is re-bound to globals where ``min``, ``max``, ``int``,
``float``, ``bool`` and the ``math`` module follow tile semantics; helpers defined in the
kernel's module are re-bound the same way. A ``TileError`` raised by an op gets the location
of the kernel line that caused it.
"""

import builtins
import enum
import functools
import itertools
import math
import os
import re
import types

import numpy as np

from .. import dtypes as d
from ..annotations import (ArgumentPath, ArrayAnnotation, ConstantAnnotation, ScalarAnnotation,
                           TupleAnnotation, check_static_items, constant_dtype,
                           mixed_list_error, scalar_argument, sequence_items, static_axes,
                           unsupported_argument_error)
from ..errors import RECURSION_MESSAGE, SourceLocation, TileError, TileRecursionError, \
    TileSyntaxError, TileTypeError
from ..host import context
from ..host.arrays import Array, TiledView, partition_region
from ..host.raw_memory import RawArrayMemory
from ..host.loops import TileRange
from ..host.scalars import loose
from ..host.tile import Tile, to_tile
from ..language import debugging, elementwise
from ..language.tile_math import REPLACEMENTS, tile_math
from ..partitions import Partition, partitioned_array
from ..rules import calls, context_managers, objects
from ..rules.global_values import read_errors, simt_intrinsic_error
from ..rules.static_evaluation import check_assertion, check_condition, evaluate, \
    iteration_items
from ..rules.syntax import helper_source_error, missing_attribute_error
from ..source import keyword_arguments, static_expressions
from ..source.source_code import closure_for, deep_syntax_trees
from ..source.tile_functions import tile_function
from ..source.user_code import PACKAGE_DIR, is_library_frame, is_user_code
from . import branch_joins, invalid_reads, loop_carried, loop_exits, recursion, tuples, \
    with_blocks
from . import dataclasses as tile_dataclasses
from .enum_classes import tile_enum_class
from .host_arrays import to_host
from .loop_carried import MISMATCH_PREFIX
from .rewrites import made_inside_tile_code, rewritten


# -- builtins with tile semantics -----------------------------------------------------------
def _fold_minmax(name, args):
    items = args[0] if len(args) == 1 else args
    items = tuple(items)
    if not any(isinstance(v, Tile) for v in items):
        return loose(getattr(builtins, name)(items))
    op = elementwise.minimum if name == "min" else elementwise.maximum
    result = items[0]
    for v in items[1:]:
        result = op.__tile_op__(result, v)
    return result


def _tile_min(*args, **kwargs):
    _check_builtin("min", args)
    return builtins.min(*args, **kwargs) if kwargs else _fold_minmax("min", args)


def _tile_max(*args, **kwargs):
    _check_builtin("max", args)
    return builtins.max(*args, **kwargs) if kwargs else _fold_minmax("max", args)


def _kind(value):
    """The kind of a value of tile code (:mod:`numba_tile.rules.objects`), or None."""
    return getattr(type(value), "object_kind", None)


def _check_builtin(name, args):
    """cuTile's error of builtin ``name`` applied to ``args`` where it does not apply to
    them (``len(x)`` of an array, ``float(x)``, ``sum(t)``)."""
    error = objects.builtin_call_error(name, [_kind(a) for a in args])
    if error is not None:
        raise error


def _checked(name, python):
    """The builtin ``python`` that first checks its arguments (:func:`_check_builtin`)."""
    def checked(*args, **kwargs):
        _check_builtin(name, args)
        return python(*args, **kwargs)
    checked.__name__ = name
    return checked


def _converter(name, dtype):
    python = getattr(builtins, name)

    def convert(value=0, *rest):
        _check_builtin(name, (value, *rest))
        if isinstance(value, Tile) and value.is_compile_time and not rest:
            value = value.constant_value()  # a constant: a loosely typed one, as compiled
        elif isinstance(value, Tile) and not rest:
            return elementwise.astype.__tile_op__(value, dtype)
        return loose(python(value, *rest)) if name != "bool" else python(value, *rest)
    convert.__name__ = name
    return convert


def _tile_divmod(x, y):
    _check_builtin("divmod", (x, y))
    if isinstance(x, Tile) or isinstance(y, Tile):
        return elementwise.divmod.__tile_op__(x, y)
    return tuple(loose(v) for v in builtins.divmod(x, y))


def _tile_abs(x):
    """``abs`` in tile code: of a number, Python's; of anything else, ``ct.abs`` (whose rule
    refuses None or a string as the compiler does); of an array or a list argument,
    cuTile's error for the builtin (:func:`_check_builtin`)."""
    _check_builtin("abs", (x,))
    if isinstance(x, (bool, int, float)) and not isinstance(x, Tile):
        return loose(builtins.abs(x))
    return elementwise.abs.__tile_op__(x)


def _refused(name):
    """A stand-in for the builtin ``name``, which tile code cannot call: cuTile's error when
    called."""
    def refused(*args, **kwargs):
        raise calls.builtin_error(name)
    refused.__name__ = name
    return refused


class _RefusedClass:
    """What tile code may not call (:func:`numba_tile.rules.calls.call_error`): a class of
    the user's, whose constant attributes can be read (``Config.BLOCK``) and ``isinstance``
    works; a parameter annotation; another kernel. Calling it is cuTile's error."""

    def __init__(self, cls):
        self.__dict__["_numba_tile_class"] = cls

    def __getattr__(self, name):
        value = getattr(self.__dict__["_numba_tile_class"], name)
        # (a class's function: datetime.datetime.now, refused where called)
        return _RefusedClass(value) if calls.library_function(value) is not None else value

    def __getitem__(self, item):  # ct.Constant[int]: itself an annotation
        value = self.__dict__["_numba_tile_class"][item]
        return _RefusedClass(value) if calls.call_error(value) is not None else value

    def __call__(self, *args, **kwargs):
        raise calls.call_error(self.__dict__["_numba_tile_class"])

    def __instancecheck__(self, instance):
        return isinstance(instance, self.__dict__["_numba_tile_class"])

    def __subclasscheck__(self, subclass):
        return issubclass(subclass, self.__dict__["_numba_tile_class"])


TILE_BUILTINS = dict(vars(builtins))
# (classes stay classes, for isinstance: a tile-code object fails in their constructors)
TILE_BUILTINS.update((name, _checked(name, getattr(builtins, name)))
                     for name in objects.BUILTINS
                     if not isinstance(getattr(builtins, name), type))
TILE_BUILTINS.update(min=_tile_min, max=_tile_max, divmod=_tile_divmod, range=TileRange,
                     print=debugging.print,
                     int=_converter("int", d.int32),
                     float=_converter("float", d.float32), bool=_converter("bool", d.bool_))
# (print is ct.print, whose keywords are the compiler's: sep=, end= and flush=)
TILE_BUILTINS.update(abs=_tile_abs, print=debugging.print)
TILE_BUILTINS.update((name, _refused(name)) for name in calls.REFUSED_BUILTINS
                     if hasattr(builtins, name))


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
        new.update(tuples.GLOBALS)
        new.update(loop_carried.GLOBALS)
        new.update(loop_exits.GLOBALS)
        new.update(branch_joins.GLOBALS)
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
            return _RefusedClass(value)
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
                    replaced = _RefusedClass(value)
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
            value = _RefusedClass(value)  # (ct.Constant(4), module.other_kernel(...))
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


# -- running --------------------------------------------------------------------------------
def _location_from_traceback(tb):
    """The innermost frame of user code (outside this package) in a traceback, with the
    frames of the user's code that called it (the kernel, its helpers) as its callers."""
    frames = []
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(
                PACKAGE_DIR + os.sep):
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return None
    users = [t for t in frames if not is_library_frame(t.tb_frame)]
    # (an error inside a library the kernel called, NumPy's np.sum: the kernel's line)
    innermost = users[-1] if users else frames[-1]
    callers = [_frame_location(t) for t in users if t is not innermost]
    return _frame_location(innermost, callers)


def _frame_location(tb, callers=()):
    """The expression a traceback's frame was running."""
    code = tb.tb_frame.f_code
    line, col, end_col = tb.tb_lineno, None, None
    try:
        positions = list(code.co_positions())[tb.tb_lasti // 2]
        if positions[0] is not None:
            line, col = positions[0], positions[2]
            # an expression over several lines: underline the rest of its first line
            end_col = positions[3] if positions[0] == positions[1] else 10**6
    except (AttributeError, IndexError):
        pass
    return SourceLocation(code.co_filename, line, col, end_col, function=code.co_name,
                          callers=callers)


_UNDEFINED = re.compile(r"(?:local|free) variable '(\w+)'|name '(\w+)' is not defined")


def _undefined_variable(error):
    """cuTile's ``TileSyntaxError`` for a read of a variable of tile code that holds no
    value (set on another path only, or nowhere), or None where the ``NameError`` is not
    one of tile code."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    found = _UNDEFINED.search(str(error))
    if found is None or os.path.abspath(code.co_filename).startswith(PACKAGE_DIR + os.sep):
        return None
    name = found[1] or found[2]
    loc = _location_from_traceback(error.__traceback__)
    if loc is not None and loc.source_line:
        word = re.search(rf"\b{re.escape(name)}\b", loc.source_line)
        if word is not None:
            loc.col, loc.end_col = word.start(), word.end()
    # the paths that met set it to constants of two types (branch_joins): that message, from
    # the function that reads it (or the one around a lambda that does)
    frame = tb.tb_frame
    while frame is not None and MISMATCH_PREFIX + name not in frame.f_locals:
        frame = frame.f_back if frame.f_back is not None and not os.path.abspath(
            frame.f_back.f_code.co_filename).startswith(PACKAGE_DIR + os.sep) else None
    mismatch = None if frame is None else frame.f_locals[MISMATCH_PREFIX + name]
    if mismatch is not None:
        return TileTypeError(mismatch, loc)
    return TileSyntaxError(f"Undefined variable {name}", loc)


_CALLED = re.compile(r"^'(\w+)' object is not callable$")
# the host objects of tile code by their class's name: the kind of each
_NOT_CALLABLE = {cls.__name__: cls.object_kind
                 for cls in (Tile, Array, TiledView, RawArrayMemory, tuples.ArgumentList)}


def _not_callable_class(error):
    """The class named by Python's error of calling a value that is no function, where
    tile code (not numba_tile's own) made the call, else None."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    if os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(PACKAGE_DIR + os.sep):
        return None
    found = _CALLED.match(str(error))
    return found and found[1]


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
            err.loc = _location_from_traceback(err.__traceback__)
        raise
    except RecursionError as err:  # helpers calling each other without end
        raise TileRecursionError(RECURSION_MESSAGE,
                                 _location_from_traceback(err.__traceback__)) from None
    except NameError as err:
        undefined = _undefined_variable(err)
        if undefined is None:
            raise
        raise undefined from None
    except TypeError as err:  # a tile, an array... called (x(1)): cuTile's error
        kind = _NOT_CALLABLE.get(_not_callable_class(err))
        if kind is None:
            raise
        raise TileTypeError(objects.call_object_error(kind).message,
                            _location_from_traceback(err.__traceback__)) from None
    finally:
        for write_back in prepared.write_backs:
            write_back()
