"""The typing and target contexts of tile code.

Subclasses of numba-cuda's contexts that also install numba_tile's registries. Only tile
kernels are compiled with them, so ordinary ``numba.cuda`` kernels keep Numba's semantics.
"""

import builtins
import enum
import functools
import operator

import numpy as np

from numba.cuda.target import CUDATargetContext, CUDATypingContext

from numba.core import types
from numba.core.typing import signature

from ..dtypes import DType, dtype_spelling
from ..enums import MemoryOrder, MemoryScope, PaddingMode, RoundingMode, missing_member_message
from ..errors import TileTypeError, TileUnsupportedFeatureError
from ..rules import calls, objects
from ..rules.core import as_operand
from ..rules.elementwise import constant_division_error
from ..rules.operators import BINARY_OPERATORS, BOOL_INVERT, INPLACE_OPERATORS, OPERATORS
from ..rules.syntax import missing_attribute_error
from . import models  # noqa: F401  (registers the data models of our types)
from .abstract import constant_of
from .constant_folding import FOLDABLE, UNARY_FOLDABLE, is_wide_integer, literal_type
from .registries import lowering_registry, typing_registry
from .types import ArrayType, ConstantType, FloatLiteral, ListType, PartitionType, \
    RawMemoryType, TiledViewType, TileType, TypedConstant
from .typing.dataclasses import DataclassType, holds_dataclasses, \
    value_type as dataclass_value_type
from .typing.compile_time import type_enum_call
from .typing.elementwise import type_dtype_call
from .typing.joins import MISMATCH, joined_type
from .typing.text import python_class_name
from .typing.tuples import COMPARISONS as TUPLE_COMPARISONS
from ..host.arrays import Array, TiledView
from ..host.raw_memory import RawArrayMemory
from ..host.tile import Tile


class TileTypingContext(CUDATypingContext):
    """numba-cuda's typing context plus the tile templates.

    It also makes enum members and dtypes compile-time constants, and turns "no typing
    found" for a numba_tile op or a tile attribute into a ``TileUnsupportedFeatureError``
    that names it (the op exists in the model, the compiler just lacks it).
    """

    def load_additional_registries(self):
        super().load_additional_registries()
        self.install_registry(typing_registry)

    def _insert_global(self, gv, gty):
        # Templates marked ``tile_first`` are tried before Numba's own for the same function
        # (tile semantics for run-time scalars: ``bid + 1`` is an int32).
        if isinstance(gty, types.Function):
            templates = gty.templates
            for template in templates:
                if getattr(template, "tile_first", False) and "target" not in template.metadata:
                    # Numba tries a target's own templates (numba-cuda's overloads of
                    # operator.eq...) before generic ones: a tile_first template is the CUDA
                    # target's, so that it still comes first (t == None is its error)
                    template.metadata = {**template.metadata, "target": "cuda"}
            ordered = sorted(templates, key=lambda t: not getattr(t, "tile_first", False))
            if list(ordered) != list(templates):
                gty = types.Function(tuple(ordered))
        super()._insert_global(gv, gty)

    def resolve_value_type(self, val):
        if holds_dataclasses(val):  # a frozen dataclass, an instance, a tuple holding one
            return dataclass_value_type(self, val)
        if isinstance(val, (enum.Enum, DType)):
            return ConstantType(val)
        if isinstance(val, int) and is_wide_integer(val):  # one Numba has no type for: a
            return ConstantType(val)  # constant that folds (an error where code meets it)
        if isinstance(val, np.generic) and dtype_spelling(val.dtype) is not None:
            # a NumPy scalar (np.int16(4)) is a constant of its dtype, as in the interpreter
            return TypedConstant(dtype_spelling(val.dtype), val.item())
        spelled = dtype_spelling(val)  # np.float32, torch.float16: the dtype they spell
        if spelled is not None:
            return ConstantType(spelled)
        if isinstance(val, float):
            return FloatLiteral(val)
        if isinstance(val, tuple) and _is_constant_tuple(val):
            return literal_type(val)  # ((1, 2), (3, 4)) keeps its values, as tile constants
        if calls.refused_builtin(val):  # (dict, which Numba has): a call is cuTile's error
            return ConstantType(val)
        if isinstance(val, (bytes, complex)):
            # no value of tile code: a constant, which the op that meets it refuses by its
            # value, as the interpreter does (b"ab", 1j; ... stays Numba's, for indexing)
            return ConstantType(val)
        try:
            return super().resolve_value_type(val)
        except Exception:
            if _is_tile_op(val):
                raise _not_compiled(f"ct.{val.__name__}") from None
            if calls.call_error(val) is not None or _judged_builtin(val) is not None:
                # a constant: its attributes can be read, a call is cuTile's error
                return ConstantType(val)
            raise

    def unify_pairs(self, first, second):
        # A variable that two paths give different types: cuTile's rules where a loose
        # constant or a 0-d tile meets a scalar (``j = 0``, then ``j += 1`` in a loop, is an
        # int32 counter; ``1.0 if c else 3.0`` a float32), Numba's otherwise
        joined = joined_type(first, second)
        if joined is MISMATCH:
            return None  # Numba reports the variable: "Type of `v` depends on path taken"
        if joined is not None:
            return joined
        return super().unify_pairs(first, second)

    def resolve_getattr(self, typ, attr):
        if isinstance(typ, types.EnumClass) and issubclass(typ.instance_class, _TILE_ENUMS) \
                and not hasattr(typ.instance_class, attr):
            raise TileTypeError(missing_member_message(typ.instance_class, attr))
        if isinstance(typ, types.EnumClass) and (
                issubclass(typ.instance_class, _TILE_ENUMS) or
                not issubclass(typ.instance_class, int) and
                attr in typ.instance_class.__members__):
            # a member is a compile-time constant, as a global member is (IntEnum members
            # stay Numba's, ints at run time)
            return ConstantType(getattr(typ.instance_class, attr))
        if isinstance(typ, ConstantType) and calls.is_plain_class(typ.value) and \
                calls.library_function(getattr(typ.value, attr, None)) is not None:
            return ConstantType(getattr(typ.value, attr))  # datetime.now(): its call, refused
        if isinstance(typ, types.Module):  # module constants (math.pi) are loose constants
            if not hasattr(typ.pymod, attr):
                raise missing_attribute_error(typ.pymod.__name__, attr)
            value = getattr(typ.pymod, attr, None)
            if isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum):
                return literal_type(value)
            if calls.is_annotation(value) or calls.is_kernel(value) or \
                    calls.library_function(value) is not None:  # calling is the error
                return ConstantType(value)
            spelled = dtype_spelling(value)
            if spelled is not None:
                return ConstantType(spelled)
        try:
            result = super().resolve_getattr(typ, attr)
        except Exception:
            result = None
            if not (isinstance(typ, types.Module) and _is_tile_op(getattr(typ.pymod, attr, None))):
                raise
        if result is None and attr == "__call__" and object_kind(typ) is not None:
            raise objects.call_object_error(object_kind(typ))  # x(1), t(0)
        if result is None:
            host_class = _HOST_CLASSES.get(object_kind(typ))
            if host_class is not None:
                # (a dunder the class has, __dict__, is Python's, none of tile code's)
                if not hasattr(host_class, attr) or attr.startswith("__"):
                    raise objects.no_attribute_error(object_kind(typ), attr)
                raise _not_compiled(f"{object_kind(typ)}.{attr}")
            if isinstance(typ, types.Module) and _is_tile_op(getattr(typ.pymod, attr, None)):
                raise _not_compiled(f"ct.{attr}")
        return result

    def resolve_function_type(self, func, args, kws):
        if func == "print_item" and any(isinstance(a, TileType) for a in args):
            raise _not_compiled("print() of a tile")
        if isinstance(func, _NOT_CALLABLE_TYPES):  # x.ndim(), t.shape(): no function
            raise objects.call_object_error(object_kind(func) or _python_kind(func))
        _check_objects(func, args)
        if isinstance(func, ConstantType) and isinstance(func.value, DType):  # ct.int16(5)
            return type_dtype_call(func.value, args, kws)
        if isinstance(func, ConstantType):  # Foo(), eval(...): cuTile's error
            calls.check_call(func.value)
            if _judged_builtin(func.value) is not None:  # any(...), list(...) of others
                raise _not_compiled(f"{_judged_builtin(func.value)}()")
        if isinstance(func, types.EnumClass):  # Color(0): the member, a constant
            return type_enum_call(func.instance_class, args, kws)
        if getattr(func, "typing_key", None) in (operator.mod, operator.imod) and args and \
                isinstance(args[0], (types.StringLiteral, types.UnicodeType)):
            # a string formatted with %: no op of tile code (the interpreter's error)
            as_operand(args[0].literal_value if isinstance(args[0], types.StringLiteral)
                       else "", "the left operand")
        folded = fold_constants(func, args, kws)
        if folded is not None:
            return folded
        if _is_numpy_function(func) and any(isinstance(a, (TileType, ArrayType))
                                            for a in (*args, *kws.values())):
            raise calls.numpy_call_error()
        result = super().resolve_function_type(func, args, kws)
        if result is None:
            name = _tile_op_name(func)
            if name is not None:
                raise _not_compiled(f"ct.{name} for arguments ({', '.join(map(str, args))})")
        return result


_TILE_ENUMS = (PaddingMode, RoundingMode, MemoryOrder, MemoryScope)

# the interpreter's class of each kind of object, which has the attributes cuTile defines
_HOST_CLASSES = {"Tile": Tile, "Array": Array, "TiledView": TiledView, "List": tuple,
                 "RawArrayMemory": RawArrayMemory}


# the types of values that are no function: calling one is cuTile's error
_NOT_CALLABLE_TYPES = (types.Number, types.Boolean, types.BaseTuple, types.UnicodeType,
                       types.StringLiteral, types.NoneType)


def _python_kind(typ):
    """The name of the Python type of a constant of Numba type ``typ``, as the interpreter
    names its values (``int``, ``tuple``...)."""
    if isinstance(typ, types.Boolean):
        return "bool"
    if isinstance(typ, types.Integer):
        return "int"
    if isinstance(typ, types.Number):
        return "float"
    if isinstance(typ, types.BaseTuple):
        return "tuple"
    return "NoneType" if isinstance(typ, types.NoneType) else "str"


def _argument_kind(typ):
    """The kind of an argument of a builtin (:func:`numba_tile.rules.objects
    .builtin_call_error`): an object's, or ``"None"``, ``"str"``."""
    if isinstance(typ, types.NoneType):
        return "None"
    if isinstance(typ, (types.UnicodeType, types.StringLiteral)):
        return "str"
    if isinstance(typ, DataclassType):
        return objects.DATACLASS_KIND + typ.cls.__name__
    return object_kind(typ)


def object_kind(typ):
    """The kind (:mod:`numba_tile.rules.objects`) of a value of Numba type ``typ``: a
    run-time scalar or a typed constant is a tile, as in the interpreter; a Python number
    (a literal) is none."""
    if isinstance(typ, (TileType, TypedConstant)):
        return "Tile"
    if isinstance(typ, (ArrayType, PartitionType)):
        return "Array"
    if isinstance(typ, TiledViewType):
        return "TiledView"
    if isinstance(typ, ListType):
        return "List"
    if isinstance(typ, RawMemoryType):
        return "RawArrayMemory"
    if isinstance(typ, (types.Number, types.Boolean)) and not isinstance(typ, types.Literal):
        return "Tile"
    return None


# each operator of tile code's function (and in-place function) and its symbol
_OPERATOR_SYMBOLS = {**{op.function: op.symbol for op in OPERATORS if op.symbol is not None},
                     **{op.inplace: op.symbol for op in OPERATORS
                        if op.symbol is not None and op.inplace is not None}}


_INPLACE_FUNCTIONS = frozenset(op.inplace for op in OPERATORS if op.inplace is not None) | \
    {operator.imatmul}
_MATMUL_SYMBOLS = {operator.matmul: "@", operator.imatmul: "@"}


def _judged_builtin(value):
    """The name of ``value`` where it is a builtin that :mod:`numba_tile.rules.objects`
    judges, else None."""
    name = getattr(value, "__name__", None)
    return name if name in objects.BUILTINS and getattr(builtins, name) is value else None


def _check_objects(func, args):
    """cuTile's errors of a builtin applied to objects it does not apply to (``len(x)`` of
    an array) and of ``x[i]`` of an array, as the interpreter raises them."""
    key = func.value if isinstance(func, ConstantType) else getattr(func, "typing_key", func)
    if key in (operator.getitem, "static_getitem") and args:
        if isinstance(args[0], ConstantType) and calls.is_annotation(args[0].value) and \
                len(args) == 2 and hasattr(args[1], "typing_key"):
            # ct.Constant[int]: an annotation, which tile code has no use for but a call,
            # cuTile's error (no value of it exists while compiling)
            raise calls.call_error(args[0].value[args[1].typing_key])
        kind = object_kind(args[0])
        if kind in ("Array", "TiledView", "RawArrayMemory"):
            raise objects.subscript_error(kind)
        if key == "static_getitem" and isinstance(args[0], types.BaseTuple) and \
                isinstance(args[1], int) and not isinstance(args[1], bool):
            objects.check_index_in_range(args[1], len(args[0]))
        return
    if key == "getiter" or key is operator.contains:  # for v in x, 1 in x
        kind = object_kind(args[0]) if args else None
        if kind is not None and kind != "List":
            raise objects.iteration_error(kind)
    symbol = _OPERATOR_SYMBOLS.get(key)
    numbers_matmul = key in _MATMUL_SYMBOLS and len(args) == 2 and \
        all(isinstance(a, types.Literal) for a in args)
    if numbers_matmul or symbol is not None and len(args) == 2 and \
            any(isinstance(a, DataclassType) for a in args):
        # (no operator applies to a dataclass instance, nor @ to numbers: the interpreter's
        # Python error)
        symbol = symbol or _MATMUL_SYMBOLS[key]
        shown = symbol + "=" if key in _INPLACE_FUNCTIONS else symbol
        raise TileTypeError(f"Unsupported operand types for {shown}: "
                            f"{python_class_name(args[0])} and {python_class_name(args[1])}")
    if symbol is not None and args:
        # as Python dispatches: the left operand's operator first (a tile's is the tile
        # rule's, which names a memory operand its own way), then the right's
        kinds = [object_kind(arg) for arg in args]
        memory = [kind for kind in kinds if kind in objects.MEMORY_KINDS]
        if memory and kinds[0] != "Tile":
            raise objects.operator_error(symbol, memory[0])
    name = _judged_builtin(key)
    if name is not None:
        error = objects.builtin_call_error(name, [_argument_kind(a) for a in args])
        if error is not None:
            raise error


_NOT = object()


def _is_constant_tuple(value):
    """A tuple of numbers, dtypes, enum members and such tuples: a compile-time constant."""
    return all(isinstance(v, (bool, int, float, DType, enum.Enum)) or
               isinstance(v, tuple) and _is_constant_tuple(v) for v in value)


def fold_constants(func, args, kws):
    """Tile semantics: arithmetic and comparisons of compile-time constants fold, so that
    ``N % 2 == 0`` with a constant ``N`` is itself a constant (Numba would compute it)."""
    key = getattr(func, "typing_key", func)
    if kws or key not in FOLDABLE or not args or any(isinstance(a, TypedConstant) for a in args):
        return None  # typed constants fold by the op's rule, which keeps their dtype
    if any(isinstance(a, types.BaseTuple) for a in args) and key in TUPLE_COMPARISONS:
        return None  # the rules of tuples decide (typing/tuples.py): (1, 2) < (3, 4) is an error
    values = [constant_of(a, _NOT) for a in args]
    if any(v is _NOT for v in values):
        return None
    if key is operator.invert and isinstance(values[0], bool):
        raise TileTypeError(BOOL_INVERT)  # (Python's ~True is the int -2)
    try:
        result = key(*values)
    except ZeroDivisionError as error:  # (as the interpreter's constants say it)
        name = BINARY_OPERATORS.get(key) or INPLACE_OPERATORS.get(key)
        raise constant_division_error(error, name, *values) from None
    except Exception:  # let the ordinary typing report it
        return None
    if isinstance(result, (bool, int, float, tuple)):
        return signature(literal_type(result), *args)
    return None


def _not_compiled(what):
    return TileUnsupportedFeatureError(f"{what} is not compiled yet; run this kernel in "
                                       f"interpreter mode (NUMBA_TILE_INTERPRET=1)")


def _is_numpy_function(func):
    """True for the Numba type of a NumPy function or ufunc (``np.exp``, ``np.sum``)."""
    key = getattr(func, "typing_key", None)
    return isinstance(key, np.ufunc) or (callable(key) and not isinstance(key, type) and (
        getattr(key, "__module__", None) or "").split(".")[0] == "numpy")


def _is_tile_op(value):
    return callable(value) and (getattr(value, "__module__", None) or "").startswith(
        "numba_tile.language")


def _tile_op_name(func):
    """The public name of a numba_tile op behind a Numba function type, or None."""
    templates = getattr(func, "templates", ())
    for template in templates:
        key = getattr(template, "key", None)
        if getattr(key, "__module__", "").startswith("numba_tile.language"):
            return key.__name__
    key = getattr(func, "typing_key", func)
    if getattr(key, "__module__", "").startswith("numba_tile.language"):
        return key.__name__
    return None


class TileTargetContext(CUDATargetContext):
    """numba-cuda's target context plus the tile lowering."""

    def load_additional_registries(self):
        super().load_additional_registries()
        self.install_registry(lowering_registry)
        # a closure left after inlining is only read by static expressions (a combining
        # function checked by ct.scan): nothing at run time
        self.special_ops["make_function"] = lambda lowerer, expr: self.get_dummy_value()

    def get_function(self, fn, sig, _firstcall=True):
        # a unary op the typing folded (-math.inf) never went through the op's templates,
        # so Numba has no implementation key for it: the folded constant's lowering applies
        key = getattr(fn, "typing_key", None)
        if key in UNARY_FOLDABLE and isinstance(fn, types.Function) and \
                sig.args not in fn._impl_keys:
            fn = key
        return super().get_function(fn, sig, _firstcall)

    def get_getattr(self, typ, attr):
        # A numeric module constant (math.pi) is a loose constant of tile code; Numba lowers
        # module constants from their type, and a float literal's type has no value to lower
        if isinstance(typ, types.Module):
            value = getattr(typ.pymod, attr, None)
            if isinstance(value, float):
                return lambda context, builder, typ, val, attr: context.get_constant(
                    types.float64, value)
            if dtype_spelling(value) is not None:  # np.float32: a constant, nothing at run time
                return lambda context, builder, typ, val, attr: context.get_dummy_value()
        # A member of a tile enum (ct.PaddingMode.ZERO) is a compile-time constant, nothing at
        # run time (Numba's enum lowering would build the member's value)
        if isinstance(typ, types.EnumClass) and issubclass(typ.instance_class, _TILE_ENUMS):
            return lambda context, builder, typ, val, attr: context.get_dummy_value()
        return super().get_getattr(typ, attr)


@functools.lru_cache(maxsize=None)
def contexts():
    """The (typing, target) context pair, made once per process."""
    typing_context = TileTypingContext()
    return typing_context, TileTargetContext(typing_context)
