"""Lowering of foreign pointers: ``x.foreign_pointer`` is the array's data address as an
integer (in each register of its 0-d tile); ``Array.from_foreign`` makes the array struct
``{data, shape, strides}`` of that address and the shape and stride values, cast to the
index dtype. Nothing is checked at run time (a negative value, memory the array does not
own: undefined, as on cuTile's GPU)."""

from numba.core import cgutils, types

from ... import dtypes as d
from ...host.arrays import Array
from ..types import ArrayClassType, ArrayType
from . import constants
from .registry import lower, registry
from .tiles import make_tile


@registry.lower_getattr(ArrayType, "foreign_pointer")
def lower_foreign_pointer(context, builder, typ, value):
    tile_type = context.typing_context.resolve_getattr(typ, "foreign_pointer")
    data = cgutils.create_struct_proxy(typ)(context, builder, value=value).data
    address = builder.ptrtoint(data, context.get_value_type(types.uint64))
    return make_tile(context, builder, tile_type, [address] * tile_type.registers)


@registry.lower_getattr(ArrayClassType, "from_foreign")
def lower_from_foreign_attribute(context, builder, typ, value):
    return context.get_dummy_value()  # (the function: its call is lowered below)


def _items(context, builder, tuple_type, value, index):
    """The items of a shape or strides tuple, cast to the index type."""
    return [context.cast(builder, builder.extract_value(value, axis), item, index)
            for axis, item in enumerate(tuple_type)]


@lower(Array.from_foreign, types.Any, types.Any, types.Any)
def lower_from_foreign(context, builder, sig, args):
    array_type = sig.return_type
    address = builder.extract_value(args[0], 0)  # (every register holds it)
    proxy = cgutils.create_struct_proxy(array_type)(context, builder)
    proxy.data = builder.inttoptr(address, context.get_value_type(
        types.CPointer(array_type.element)))
    for name, tuple_type, value in (("shape", sig.args[1], args[1]),
                                    ("strides", sig.args[2], args[2])):
        items = _items(context, builder, tuple_type, value, array_type.index)
        setattr(proxy, name, context.make_tuple(
            builder, types.UniTuple(array_type.index, array_type.ndim), items))
    return proxy._getvalue()


lower(d.foreign_pointer_dtype, types.Any)(constants.folded_constant)
