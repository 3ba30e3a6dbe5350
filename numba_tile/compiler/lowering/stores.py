"""Lowering of ``store`` (and a tiled view's ``store``) from tiles to arrays.

Each thread writes the elements its registers hold, once for registers that other threads
repeat. Runs of registers consecutive in the array's last axis go out as one vector where
the run is inside the array, contiguous and aligned (checked at run time, with a scalar
fallback; a vector wholly inside or outside is one predicated store); a tile whose
registers hold shorter runs goes through shared memory (:mod:`.coalesced_stores`).
Elements outside the array are not written.
"""

from llvmlite import ir
from numba.core import types
from numba.cuda import nvvmutils

from ...language import memory
from ...rules.memory import normalize_order
from ..abstract import constant_of
from ..compile_state import current
from ..intrinsics import store_after_rings
from ..types import ArrayType, TiledViewType, TileType
from . import arithmetic
from .coalesced_stores import column_block, store_through_shared
from .elementwise import operand_values
from .memory import ArrayView, element_indices, element_origin, tile_indices, tile_origin, \
    to_memory, vector_groups, vector_plan, vector_store, view_origin, whole_vectors
from .predicated_stores import store_where
from .registry import registry
from .tiles import I32, is_replica_leader, make_tile, register_coordinates, thread_coordinates

lower = registry.lower


@lower(memory.store, ArrayType, types.Any, types.Any, types.VarArg(types.Any))
def lower_store(context, builder, sig, args, after_rings=False):
    array_type, index_type, tile_type = sig.args[0], sig.args[1], sig.args[2]
    order = normalize_order(constant_of(sig.args[3]), array_type.ndim, "store")
    view = ArrayView(context, builder, array_type, args[0], order)
    tile_index = tile_indices(context, builder, index_type, args[1])
    if not isinstance(tile_type, TileType) or tile_type.shape == ():
        store_element(context, builder, view, array_type,
                      element_origin(builder, view, tile_index), tile_type, args[2])
    else:
        origin = tile_origin(builder, view, tile_index, tile_type.shape, tile_type.shape)
        store_tile(context, builder, view, array_type, origin, tile_type, args[2],
                   tile_type.shape[-1], after_rings)
    return context.get_dummy_value()


@lower(store_after_rings, ArrayType, types.Any, types.Any, types.VarArg(types.Any))
def lower_store_after_rings(context, builder, sig, args):
    """A store where no ring is used again (:mod:`~numba_tile.compiler.frontend.freed_rings`):
    its buffer may take the stages' shared memory."""
    return lower_store(context, builder, sig, args, after_rings=True)


def store_element(context, builder, view, array_type, indices, value_type, value):
    """Store a scalar (or a 0-d tile) at ``indices``, once (by thread 0)."""
    converted, = operand_values(context, builder, value_type, value, None, array_type.dtype)
    pointer, in_bounds = view.element(builder, indices)
    first = builder.icmp_unsigned("==", nvvmutils.call_sreg(builder, "tid.x"), I32(0))
    with builder.if_then(builder.and_(in_bounds, first)):
        builder.store(to_memory(context, builder, array_type, converted), pointer)


def store_tile(context, builder, view, array_type, origin, tile_type, value, origin_step=1,
               after_rings=False):
    """Store a tile whose first element goes to element coordinates ``origin`` (the last
    one a multiple of ``origin_step``); ``after_rings``: no ring is used again, their
    stages may take the store's buffer (see :mod:`.coalesced_stores`)."""
    args = (None, None, value)
    layout = tile_type.layout
    base = thread_coordinates(builder, layout)
    leader = is_replica_leader(builder, layout)
    element_bytes = array_type.dtype.itemsize
    converted = [to_memory(context, builder, array_type, arithmetic.convert(
        context, builder, builder.extract_value(args[2], r), tile_type.dtype, array_type.dtype))
        for r in range(tile_type.registers)]
    block = column_block(tile_type, element_bytes, view.aligned, origin_step, after_rings)
    if block is not None:
        store_through_shared(builder, view, origin, tile_type, converted, element_bytes, block,
                             after_rings)
        return
    groups, seen = [], set()
    for first, width in vector_groups(layout, element_bytes):
        constant = layout.apply(register=first)
        if constant not in seen:  # registers that repeat others (collapsed layouts)
            seen.add(constant)
            groups.append((first, width))

    def scalar_stores():
        for first, width in groups:
            for register in range(first, first + width):
                indices = element_indices(
                    builder, origin, register_coordinates(builder, base, layout, register))
                pointer, in_bounds = view.element(builder, indices)
                store_where(builder, converted[register], pointer, in_bounds, element_bytes)

    def vector_of(first, width):
        vector = ir.Constant(ir.VectorType(converted[first].type, width), None)
        for i in range(width):
            vector = builder.insert_element(vector, converted[first + i], I32(i))
        return vector

    with builder.if_then(leader):
        if groups[0][1] == 1:
            scalar_stores()
            return
        if whole_vectors(view, layout, groups, origin_step):
            for first, width in groups:  # each vector wholly inside or outside
                indices = element_indices(
                    builder, origin, register_coordinates(builder, base, layout, first))
                pointer, inside = view.element(builder, indices)
                vector_store(builder, vector_of(first, width), pointer, width, element_bytes,
                             where=inside)
            return
        pointers, ok = vector_plan(builder, view, origin, base, layout, groups,
                                   element_bytes)
        with builder.if_else(ok, likely=True) as (vector_path, scalar_path):
            with vector_path:
                for pointer, (first, width) in zip(pointers, groups):
                    vector_store(builder, vector_of(first, width), pointer, width,
                                 element_bytes)
            with scalar_path:
                scalar_stores()


@lower("view.store", TiledViewType, types.VarArg(types.Any))
def lower_view_store(context, builder, sig, args):
    view, array, origin = view_origin(context, builder, sig, args)
    value_type, value = sig.args[2], args[2]
    if isinstance(value_type, TileType) and value_type.shape == view.tile_shape:
        tile_type, tile = value_type, value
    else:  # a scalar fills the whole tile
        tile_type = TileType(value_type.dtype if isinstance(value_type, TileType) else
                             view.dtype, view.tile_shape, current().num_warps)
        dtype = tile_type.dtype
        tile = make_tile(context, builder, tile_type, operand_values(
            context, builder, value_type, value, tile_type, dtype))
    store_tile(context, builder, array, view.array, origin, tile_type, tile, view.steps[-1])
    return context.get_dummy_value()
