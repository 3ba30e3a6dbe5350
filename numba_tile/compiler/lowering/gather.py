"""Lowering of ``gather`` and ``scatter``: each thread moves the elements its registers hold,
one at a time, at the address its index registers give; an element outside the array (when
``check_bounds``) or masked off reads as the padding value or is not stored.

Indices of any integer dtype are widened to int64 first, so the address never wraps; a
negative index, or a uint64 one past ``2**63``, compares as huge against the axis' length
and is out of bounds. A ``scatter`` stores each element once: from the one thread of a
group of replicas, and once for registers that repeat another's element.
"""

from numba.core import cgutils, types

from ... import dtypes as d
from ...language import gather
from ..abstract import constant_of
from ...rules.core import broadcast_many
from ..types import ArrayType, TileType
from ..typing.gather import element_type
from . import arithmetic
from .elementwise import operand_values
from .memory import loaded_or, to_memory, widened
from .registry import lower
from .tiles import I64, is_replica_leader, make_tile

# positions of gather's and scatter's parameters in a call's signature
_GATHER = {"indices": 1, "mask": 2, "padding_value": 3, "check_bounds": 4}
_SCATTER = {"indices": 1, "value": 2, "mask": 3, "check_bounds": 4}


def _element_addresses(context, builder, sig, args, result_type, places):
    """Per register: ``(pointer, accessed)`` where ``accessed`` says the element is inside
    the array (when bounds are checked) and its mask is true."""
    array_type = sig.args[0]
    proxy = cgutils.create_struct_proxy(array_type)(context, builder, value=args[0])
    lengths = [widened(builder, builder.extract_value(proxy.shape, a))
               for a in range(array_type.ndim)]
    strides = [widened(builder, builder.extract_value(proxy.strides, a))
               for a in range(array_type.ndim)]
    index_type, index_value = sig.args[places["indices"]], args[places["indices"]]
    indices = [(t, builder.extract_value(index_value, axis)) for axis, t in
               enumerate(index_type)] if isinstance(index_type, types.BaseTuple) else \
        [(index_type, index_value)]  # a bare index of a 1-d array
    per_axis = [operand_values(context, builder, t, value, result_type, d.int64)
                for t, value in indices]
    check_bounds = constant_of(sig.args[places["check_bounds"]])
    mask_type = sig.args[places["mask"]]
    masks = None
    if not isinstance(mask_type, (types.NoneType, types.Omitted)):
        masks = operand_values(context, builder, mask_type, args[places["mask"]], result_type,
                               d.bool_)
    found = []
    for register in range(result_type.registers):
        offset, accessed = I64(0), cgutils.true_bit
        for axis_indices, length, stride in zip(per_axis, lengths, strides):
            index = axis_indices[register]
            if check_bounds:  # negative indices compare as huge: outside
                accessed = builder.and_(accessed, builder.icmp_unsigned("<", index, length))
            offset = builder.add(offset, builder.mul(index, stride))
        if masks is not None:
            accessed = builder.and_(accessed, masks[register])
        found.append((builder.gep(proxy.data, [offset]), accessed))
    return found


@lower(gather.gather, ArrayType, types.VarArg(types.Any))
def lower_gather(context, builder, sig, args):
    result_type, array_type = sig.return_type, sig.args[0]
    dtype = array_type.dtype
    padding_type = sig.args[_GATHER["padding_value"]]
    if isinstance(padding_type, types.Omitted):  # the default, 0
        paddings = [arithmetic.constant(dtype, padding_type.value)] * result_type.registers
    else:
        paddings = operand_values(context, builder, padding_type,
                                  args[_GATHER["padding_value"]], result_type, dtype)
    values = [loaded_or(context, builder, array_type, pointer, accessed, padding, likely=True)
              for (pointer, accessed), padding in zip(
                  _element_addresses(context, builder, sig, args, result_type, _GATHER),
                  paddings)]
    return make_tile(context, builder, result_type, values)


@lower(gather.scatter, ArrayType, types.VarArg(types.Any))
def lower_scatter(context, builder, sig, args):
    array_type = sig.args[0]
    result_type = _scatter_shape_type(sig)
    stored = operand_values(context, builder, sig.args[_SCATTER["value"]],
                            args[_SCATTER["value"]], result_type, array_type.dtype)
    addresses = _element_addresses(context, builder, sig, args, result_type, _SCATTER)
    layout = result_type.layout
    seen = set()
    with builder.if_then(is_replica_leader(builder, layout)):
        for register, ((pointer, accessed), value) in enumerate(zip(addresses, stored)):
            element = layout.apply(register=register)
            if element in seen:  # a register that repeats another's element
                continue
            seen.add(element)
            with builder.if_then(accessed, likely=True):
                builder.store(to_memory(context, builder, array_type, value), pointer)
    return context.get_dummy_value()


def _scatter_shape_type(sig):
    """The tile type a scatter's elements are laid out in: its indices' broadcast shape, in
    the layout a gather of those indices has."""
    indices = sig.args[_SCATTER["indices"]]
    index_types = tuple(indices) if isinstance(indices, types.BaseTuple) else (indices,)
    shape = broadcast_many(t.shape if isinstance(t, TileType) else () for t in index_types)
    return element_type(sig.args[0].dtype, shape, indices)
