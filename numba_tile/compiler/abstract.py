"""Numba types as the abstract operands the shared op rules take.

The rules of :mod:`numba_tile.rules` read ``dtype``, ``shape``, ``is_constant`` and
``constant_value()`` (or a :class:`~numba_tile.promotion.Loose` constant). This module turns
the Numba types of tile code into such operands, and back.

>>> from numba.core import types
>>> from numba_tile.compiler.abstract import operand
>>> operand(types.IntegerLiteral(3)).value, operand(types.int32).describe()
(3, 'run-time int32 scalar')
"""

import enum

from numba.core import types

from .. import dtypes as d
from ..errors import TileTypeError
from ..host.tile import make_constant
from ..language.gather import Slice
from ..promotion import Loose
from .constant_folding import check_integer_constant, is_wide_integer
from .types import RUN_TIME_SLICES, ArrayType, ConstantType, FloatLiteral, SliceType, \
    TiledViewType, TileType, TypedConstant, dtype_of_scalar


class RuntimeScalar:
    """A run-time scalar of tile code (a Numba scalar such as a block id)."""

    is_constant = False
    shape = ()

    def __init__(self, dtype):
        self.dtype = dtype

    def describe(self):
        return f"run-time {self.dtype} scalar"


class Described:
    """A value of tile code no rule takes, known by its ``description`` alone."""

    def __init__(self, description):
        self.description = description

    def describe(self):
        return self.description


def operand(numba_type):
    """The rule operand for a Numba type."""
    if isinstance(numba_type, types.Omitted):
        return _python(numba_type.value)
    if isinstance(numba_type, ConstantType):
        if is_wide_integer(numba_type.value):  # an int no dtype holds, met by tile code
            check_integer_constant(numba_type.value)
        return numba_type.value
    if isinstance(numba_type, TypedConstant):  # the interpreter's strictly typed constant
        return make_constant(numba_type.literal_value, numba_type.dtype)
    if isinstance(numba_type, FloatLiteral):
        return Loose(numba_type.literal_value)
    if isinstance(numba_type, types.BooleanLiteral):
        return Loose(numba_type.literal_value)
    if isinstance(numba_type, types.IntegerLiteral):
        return Loose(numba_type.literal_value)
    if isinstance(numba_type, types.StringLiteral):
        return numba_type.literal_value
    if isinstance(numba_type, (TileType, ArrayType)):
        return numba_type
    if isinstance(numba_type, SliceType):
        return Slice(RuntimeScalar(d.int64), numba_type.length)
    if numba_type in RUN_TIME_SLICES.values():  # a slice of run-time bounds (a:b)
        return slice(RuntimeScalar(d.int64), None)
    if isinstance(numba_type, types.BaseTuple):
        return tuple(operand(t) for t in numba_type)
    if isinstance(numba_type, types.NoneType):
        return None
    if isinstance(numba_type, types.EllipsisType):  # (an index; elsewhere, the rule says)
        return Ellipsis
    if isinstance(numba_type, TiledViewType):  # (where an array goes: the rule names it)
        return Described(f"tiled view of a {numba_type.array.describe()} with tiles "
                         f"{tuple(numba_type.tile_shape)}")
    dtype = dtype_of_scalar(numba_type)
    if dtype is not None:
        return RuntimeScalar(dtype)
    description = getattr(numba_type, "tile_code_description", None)
    if description is not None:  # (text: the rule that meets it says what it is)
        return Described(description)
    raise TileTypeError(f"{numba_type} is not a value of tile code")


def _python(value):
    if isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum):
        return Loose(value)
    return value


def python_value(op):
    """A rule operand that is a constant, as the Python value the rules expect."""
    if isinstance(op, Loose):
        return op.value
    if isinstance(op, tuple):
        return tuple(python_value(v) for v in op)
    return op


def is_dtype(value):
    return isinstance(value, d.DType)


NOT_CONSTANT = object()
# what constant_of(numba_type, RUN_TIME) gives for a value known only at run time
RUN_TIME = object()


def constant_of(numba_type, default=NOT_CONSTANT):
    """The Python value of a compile-time constant type (a literal, None, an omitted
    argument's default, a ``ConstantType`` or a tuple of those); ``default`` for anything else, and an
    ``AssertionError`` when no default is given."""
    if isinstance(numba_type, types.Omitted):
        return numba_type.value
    if isinstance(numba_type, ConstantType):
        return numba_type.value
    if isinstance(numba_type, types.Literal):
        return numba_type.literal_value
    if isinstance(numba_type, types.NoneType):  # an explicit None (axis=None)
        return None
    if isinstance(numba_type, types.BaseTuple):
        values = [constant_of(t, default) for t in numba_type]
        if any(v is default for v in values):
            return default
        return tuple(values)
    if default is NOT_CONSTANT:
        raise AssertionError(f"not a constant: {numba_type}")
    return default
