"""Typing of foreign pointers: ``x.foreign_pointer`` (a 0-d tile of a foreign pointer dtype,
its value the data address as an integer), ``ct.Array.from_foreign(pointer, shape,
strides)`` (an array of the pointee dtype) and ``ct.foreign_pointer_dtype(dtype)`` (a
constant). The rules are :mod:`numba_tile.rules.foreign_pointers`.

Tile code reaches ``from_foreign`` through the class ``ct.Array``, which Numba cannot type:
the class is typed here as :data:`~numba_tile.compiler.types.ARRAY_CLASS`, whose one
attribute is the function.
"""

from numba.cuda.typing.templates import AttributeTemplate
from numba.cuda.typing.typeof import typeof_impl

from ... import dtypes as d
from ...host.arrays import Array
from ...rules import foreign_pointers as rules
from ..abstract import operand
from ..compile_state import current
from ..types import ARRAY_CLASS, ArrayClassType, ArrayType, ConstantType, TileType
from .memory import ArrayAttributes
from .templates import constant_value, register_template, registry

_TYPEOF_CLASS = typeof_impl.dispatch(type)


@typeof_impl.register(type)
def _typeof_class(value, context):
    """``ct.Array`` (read as a global or as the module's attribute) is :data:`ARRAY_CLASS`;
    every other class is typed as Numba types it."""
    if value is Array:
        return ARRAY_CLASS
    return _TYPEOF_CLASS(value, context)


def pointer_type(array):
    """The type of ``array.foreign_pointer``: a 0-d tile of the pointer dtype."""
    return TileType(d.foreign_pointer_dtype(array.dtype), (), current().num_warps)


ArrayAttributes.resolve_foreign_pointer = lambda self, array: pointer_type(array)


def infer_from_foreign(values):
    dtype, ndim, index_dtype = rules.from_foreign(
        operand(values["pointer"]), operand(values["shape"]), operand(values["strides"]))
    return ArrayType(dtype, ndim, index_dtype)


register_template(Array.from_foreign, infer_from_foreign)


@registry.register_attr
class ArrayClassAttributes(AttributeTemplate):
    key = ArrayClassType

    def resolve_from_foreign(self, cls):
        return self.context.resolve_value_type(Array.from_foreign)


def infer_pointer_dtype(values):
    try:
        return ConstantType(d.foreign_pointer_dtype(constant_value(values["pointee_dtype"])))
    except TypeError as error:  # (cuTile raises it so: a TypeError, its words)
        raise TypeError(str(error)) from None


register_template(d.foreign_pointer_dtype, infer_pointer_dtype)
