"""Lowering of ``gather`` and ``scatter``: each thread moves the elements its registers hold,
one at a time, at the address its index registers give; an element outside the array (when
``check_bounds``) or masked off reads as the padding value or is not stored.

Indices of any integer dtype are widened to int64 first, so the address never wraps; a
negative index, or a uint64 one past ``2**63``, compares as huge against the axis' length
and is out of bounds. A ``scatter`` stores each element once: from the one thread of a
group of replicas, and once for registers that repeat another's element.
"""

from llvmlite import ir
from numba.core import cgutils, types

from ... import dtypes as d
from ...language import gather
from ...layouts import register_sources
from ...rules.core import broadcast_many
from ..abstract import constant_of
from ..compile_state import current
from ..types import ArrayType, RawMemoryType, SliceType, TileType
from ..typing.gather import element_type
from . import arithmetic
from .elementwise import operand_values
from .memory import from_memory, loaded_or, padding_constant, to_memory, vector_elements, \
    vector_groups, vector_store, vector_words, vector_words_load, widened
from .registry import lower
from .tiles import I32, I64, first_holders, is_replica_leader, make_tile, \
    register_coordinates, relayout, thread_coordinates

# positions of gather's and scatter's parameters in a call's signature
_GATHER = {"indices": 1, "mask": 2, "padding_value": 3, "check_bounds": 4}
_SCATTER = {"indices": 1, "value": 2, "mask": 3, "check_bounds": 4, "where": 1}


def element_addresses(context, builder, data, lengths, strides, indices, check_bounds,
                      mask, result_type):
    """Per register of ``result_type``: ``(pointer, accessed)`` where ``accessed`` says the
    element is inside the array (when ``check_bounds``; ``lengths`` per axis) and its mask is
    true. ``indices`` holds ``(Numba type, value)`` per axis, ``mask`` one or None, and
    ``strides`` the int64 stride of each axis."""
    per_axis = [operand_values(context, builder, t, value, result_type, d.int64)
                for t, value in indices]
    masks = None
    if mask is not None and not isinstance(mask[0], (types.NoneType, types.Omitted)):
        masks = operand_values(context, builder, mask[0], mask[1], result_type, d.bool_)
    return addresses_at(builder, data, lengths, strides, per_axis, check_bounds, masks,
                        result_type.registers)


def addresses_at(builder, data, lengths, strides, per_axis, check_bounds, masks, registers):
    """:func:`element_addresses` of int64 index values (``per_axis[axis][register]``) and
    mask values (a list, or None)."""
    found = []
    for register in range(registers):
        offset, accessed = I64(0), cgutils.true_bit
        for axis, (axis_indices, stride) in enumerate(zip(per_axis, strides)):
            index = axis_indices[register]
            if check_bounds:  # negative indices compare as huge: outside
                accessed = builder.and_(accessed,
                                        builder.icmp_unsigned("<", index, lengths[axis]))
            offset = builder.add(offset, builder.mul(index, stride) if stride is not None
                                 else index)
        if masks is not None:
            accessed = builder.and_(accessed, masks[register])
        found.append((builder.gep(data, [offset]), accessed))
    return found


def array_addresses(context, builder, sig, args, result_type, places):
    """:func:`element_addresses` of a call on an array (``args[0]``) whose indices, bounds
    flag and mask (where it has one) sit at ``places`` in the signature."""
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
    mask = (sig.args[places["mask"]], args[places["mask"]]) if "mask" in places else None
    return element_addresses(context, builder, proxy.data, lengths, strides, indices,
                             constant_of(sig.args[places["check_bounds"]]), mask, result_type)


def raw_addresses(context, builder, sig, args, result_type, places):
    """:func:`element_addresses` of a raw-memory call (``args[0]``): the offset and mask at
    ``places``, elements counted from the array's data pointer, no bounds."""
    proxy = cgutils.create_struct_proxy(sig.args[0].array)(context, builder, value=args[0])
    offset = (sig.args[places["offset"]], args[places["offset"]])
    mask = (sig.args[places["mask"]], args[places["mask"]])
    return element_addresses(context, builder, proxy.data, [None], [None], [offset], False,
                             mask, result_type)


def advanced_addresses(context, builder, sig, args, result_type):
    """:func:`element_addresses` of a ``load_advanced_indexing`` or
    ``store_advanced_indexing`` (array and indices first in ``sig``): along the sparse axis
    the index tile's element at the register's coordinate there, along every other axis the
    slice's start plus the coordinate. Always bounds-checked."""
    array_type, index_types = sig.args[0], tuple(sig.args[1])
    proxy = cgutils.create_struct_proxy(array_type)(context, builder, value=args[0])
    lengths = [widened(builder, builder.extract_value(proxy.shape, a))
               for a in range(array_type.ndim)]
    strides = [widened(builder, builder.extract_value(proxy.strides, a))
               for a in range(array_type.ndim)]
    layout = result_type.layout
    base = thread_coordinates(builder, layout)
    coordinates = [register_coordinates(builder, base, layout, r)
                   for r in range(result_type.registers)]
    per_axis = []
    for axis, index_type in enumerate(index_types):
        value = builder.extract_value(args[1], axis)
        if isinstance(index_type, SliceType):
            per_axis.append([builder.add(value, builder.zext(c[axis], I64))
                             for c in coordinates])
        else:
            per_axis.append(_along_axis(context, builder, index_type, value, result_type, axis))
    return addresses_at(builder, proxy.data, lengths, strides, per_axis, True, None,
                        result_type.registers)


def _along_axis(context, builder, index_type, value, result_type, axis):
    """Per register of ``result_type``: the 1-d ``index_type`` tile's element at the
    register's coordinate along ``axis``, as int64."""
    def project(coordinates):
        return (coordinates[axis],)
    sources = register_sources(index_type.layout, result_type.layout, project)
    if sources is not None:  # each thread holds the indices it needs
        values = [builder.extract_value(value, s) for s in sources]
    else:
        moved_type = TileType(index_type.dtype, result_type.shape, result_type.num_warps,
                              result_type.layout)
        moved = relayout(context, builder, index_type, value, moved_type,
                         lambda builder, coordinates: [coordinates[axis]])
        values = [builder.extract_value(moved, r) for r in range(result_type.registers)]
    return [arithmetic.convert(context, builder, v, index_type.dtype, d.int64)
            for v in values]


def contiguous_runs(builder, result_type, element_bytes, addresses):
    """``[(first register, width, ok), ...]`` covering every register, where runs of
    ``width`` registers hold consecutive elements along the last axis
    (:func:`vector_groups`) and ``ok`` is true at run time when the run is accessed in full,
    contiguous in memory and aligned to its size (then one vector access moves it),
    whatever indices gave the addresses. None where the layout has no runs or repeats
    elements (those take the element path). Each run decides alone, so that only its own
    addresses stay live and a partial tile still moves its whole runs as vectors."""
    layout = result_type.layout
    groups = vector_groups(layout, element_bytes)
    if groups[0][1] == 1 or first_holders(layout):
        return None
    runs = []
    for first, width in groups:
        start = builder.ptrtoint(addresses[first][0], I64)
        ok = builder.and_(addresses[first][1], builder.icmp_unsigned(
            "==", builder.and_(start, I64(width * element_bytes - 1)), I64(0)))
        for k in range(1, width):
            pointer, accessed = addresses[first + k]
            step = builder.sub(builder.ptrtoint(pointer, I64), start)
            ok = builder.and_(ok, builder.and_(accessed, builder.icmp_unsigned(
                "==", step, I64(k * element_bytes))))
        runs.append((first, width, ok))
    return runs


def store_elements(context, builder, array_type, result_type, addresses, stored):
    """Store each element of a tile once: from the one thread of a group of replicas, and
    once for registers that repeat another's element; where not accessed, nothing. Runs of
    contiguous, aligned elements are stored as vectors (:func:`contiguous_runs`)."""
    layout = result_type.layout
    element_bytes = array_type.dtype.itemsize
    in_memory = [to_memory(context, builder, array_type, v) for v in stored]
    with builder.if_then(is_replica_leader(builder, layout)):
        runs = contiguous_runs(builder, result_type, element_bytes, addresses)
        if runs is None:
            _store_each(builder, layout, addresses, in_memory, range(len(addresses)))
            return
        for first, width, ok in runs:
            with builder.if_else(ok, likely=True) as (vector_path, element_path):
                with vector_path:
                    vector = ir.Constant(ir.VectorType(in_memory[first].type, width),
                                         ir.Undefined)
                    for k in range(width):
                        vector = builder.insert_element(vector, in_memory[first + k], I32(k))
                    vector_store(builder, vector, addresses[first][0], width, element_bytes)
                with element_path:
                    _store_each(builder, layout, addresses, in_memory,
                                range(first, first + width))


def _store_each(builder, layout, addresses, in_memory, registers):
    seen = set()
    for register in registers:
        element = layout.apply(register=register)
        if element in seen:  # a register that repeats another's element
            continue
        seen.add(element)
        pointer, accessed = addresses[register]
        with builder.if_then(accessed, likely=True):
            builder.store(in_memory[register], pointer)


def loaded_elements(context, builder, array_type, result_type, addresses, paddings):
    """The tile of the elements at ``addresses``; each padding where not accessed. Runs of
    contiguous, aligned elements are loaded as vectors (:func:`contiguous_runs`)."""
    element_bytes = array_type.dtype.itemsize

    def each(registers):
        return [loaded_or(context, builder, array_type, *addresses[r], paddings[r],
                          likely=True) for r in registers]
    runs = contiguous_runs(builder, result_type, element_bytes, addresses)
    if runs is None:
        return make_tile(context, builder, result_type, each(range(len(addresses))))
    # every run's branch first, each giving the words it moved; then the elements
    # (splitting a run's words where it is loaded would wait for them before the next run's
    # load could issue)
    loaded = []
    for first, width, ok in runs:
        pointer = addresses[first][0]
        with builder.if_else(ok, likely=True) as (vector_path, element_path):
            with vector_path:
                fast = vector_words_load(builder, pointer, width, element_bytes)
                fast_block = builder.block
            with element_path:
                slow = vector_words(builder, [to_memory(context, builder, array_type, v)
                                              for v in each(range(first, first + width))],
                                    element_bytes)
                slow_block = builder.block
        words = builder.phi(fast.type)
        words.add_incoming(fast, fast_block)
        words.add_incoming(slow, slow_block)
        loaded.append((words, pointer.type.pointee, width))
    values = []
    for words, stored_type, width in loaded:
        vector = vector_elements(builder, words, stored_type, width)
        values.extend(from_memory(context, builder, array_type,
                                  builder.extract_element(vector, I32(k)))
                      for k in range(width))
    return make_tile(context, builder, result_type, values)


def padding_values(context, builder, padding_type, padding, result_type, dtype):
    """Per register: the padding value (the default, 0, when omitted)."""
    if isinstance(padding_type, types.Omitted):
        return [arithmetic.constant(dtype, padding_type.value)] * result_type.registers
    return operand_values(context, builder, padding_type, padding, result_type, dtype)


def _load_lowering(addresses_of, places):
    """The lowering of a gather (``addresses_of``: :func:`array_addresses`) or a raw
    ``load_offset`` (:func:`raw_addresses`), its parameters at ``places``."""
    def lower_load(context, builder, sig, args):
        result_type, source = sig.return_type, sig.args[0]
        place = places["padding_value"]
        paddings = padding_values(context, builder, sig.args[place], args[place], result_type,
                                  source.dtype)
        return loaded_elements(context, builder, source, result_type, addresses_of(
            context, builder, sig, args, result_type, places), paddings)
    return lower_load


def _store_lowering(addresses_of, places):
    """The lowering of a scatter or a raw ``store_offset`` (see :func:`_load_lowering`):
    ``places["where"]`` is its indices or offset."""
    def lower_store(context, builder, sig, args):
        target = sig.args[0]
        result_type = elements_type(target.dtype, sig.args[places["where"]])
        stored = operand_values(context, builder, sig.args[places["value"]],
                                args[places["value"]], result_type, target.dtype)
        store_elements(context, builder, target, result_type,
                       addresses_of(context, builder, sig, args, result_type, places), stored)
        return context.get_dummy_value()
    return lower_store


def elements_type(dtype, indices):
    """The tile type a scatter's (a store's, an atomic's) elements are laid out in: its
    indices' broadcast shape, in the layout a gather of those indices has."""
    index_types = tuple(indices) if isinstance(indices, types.BaseTuple) else (indices,)
    shape = broadcast_many(t.shape if isinstance(t, TileType) else () for t in index_types)
    return element_type(dtype, shape, indices)


# -- raw memory: element offsets from the data pointer, no bounds ------------------------------
_LOAD_OFFSET = {"offset": 1, "mask": 2, "padding_value": 3}
_STORE_OFFSET = {"offset": 1, "value": 2, "mask": 3, "where": 1}


@lower("array.get_raw_memory", ArrayType)
def lower_get_raw_memory(context, builder, sig, args):
    return args[0]


lower(gather.gather, ArrayType, types.VarArg(types.Any))(
    _load_lowering(array_addresses, _GATHER))
lower(gather.scatter, ArrayType, types.VarArg(types.Any))(
    _store_lowering(array_addresses, _SCATTER))
lower("raw.load_offset", RawMemoryType, types.VarArg(types.Any))(
    _load_lowering(raw_addresses, _LOAD_OFFSET))
lower("raw.store_offset", RawMemoryType, types.VarArg(types.Any))(
    _store_lowering(raw_addresses, _STORE_OFFSET))


# -- load_advanced_indexing / store_advanced_indexing --------------------------------------------
@lower(gather.load_advanced_indexing, ArrayType, types.VarArg(types.Any))
def lower_load_advanced_indexing(context, builder, sig, args):
    result_type, source = sig.return_type, sig.args[0]
    padding = padding_constant(context, source.dtype, constant_of(sig.args[2]))
    return loaded_elements(context, builder, source, result_type, advanced_addresses(
        context, builder, sig, args, result_type), [padding] * result_type.registers)


@lower(gather.store_advanced_indexing, ArrayType, types.VarArg(types.Any))
def lower_store_advanced_indexing(context, builder, sig, args):
    target = sig.args[0]
    shape = tuple(t.length if isinstance(t, SliceType) else t.shape[0] for t in sig.args[1])
    value_type = sig.args[2]
    result_type = value_type if isinstance(value_type, TileType) and \
        value_type.shape == shape else TileType(target.dtype, shape, current().num_warps)
    stored = operand_values(context, builder, value_type, args[2], result_type, target.dtype)
    store_elements(context, builder, target, result_type,
                   advanced_addresses(context, builder, sig, args, result_type), stored)
    return context.get_dummy_value()


@lower(gather.Slice, types.Any, types.Any)
def lower_slice(context, builder, sig, args):
    start, = operand_values(context, builder, sig.args[0], args[0], None, d.int64)
    return start
