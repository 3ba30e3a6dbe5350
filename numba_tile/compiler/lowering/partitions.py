"""Lowering of the region of a ``ct.partition`` argument, which the kernel's entry takes
in place of the whole array (:mod:`..frontend.partitions`)."""

from numba.core import cgutils
from numba.cuda import nvvmutils

from ..intrinsics import partition_region
from ..types import PartitionType
from .memory import widened
from .registry import lower
from .tiles import I64

# Tile extents beyond this act as this (no array axis is as long): block * extent then
# cannot overflow where it is taken, below the axis's length.
_LONGEST_EXTENT = 1 << 62


@lower(partition_region, PartitionType)
def lower_partition_region(context, builder, sig, args):
    """The whole array's struct with the data pointer moved to the region's first element
    and each axis's length the region's: ``numba_tile.partitions.region_bounds`` of the
    block's index along it, in 64 bits. The strides stay the whole array's."""
    partition = sig.args[0]
    # the region's struct is laid out as the whole array's (same dtype, rank, index dtype)
    proxy = cgutils.create_struct_proxy(sig.return_type)(context, builder, value=args[0])
    index_type = context.get_value_type(sig.return_type.index)
    offset, shape = I64(0), proxy.shape
    for axis, extent in enumerate(partition.tile_shape):
        extent = I64(min(extent, _LONGEST_EXTENT))
        block = builder.zext(nvvmutils.call_sreg(builder, "ctaid." + "xyz"[axis]), I64)
        length = widened(builder, builder.extract_value(proxy.shape, axis))
        # the block's region starts inside the axis where block <= (length - 1) // extent
        # (then block * extent < length: no overflow); past it, it is empty at the end
        inside = builder.and_(
            builder.icmp_signed(">", length, I64(0)),
            builder.icmp_unsigned("<=", block, builder.udiv(builder.sub(length, I64(1)),
                                                            extent)))
        start = builder.select(inside, builder.mul(block, extent), length)
        rest = builder.sub(length, start)
        size = builder.select(builder.icmp_signed("<", rest, extent), rest, extent)
        stride = widened(builder, builder.extract_value(proxy.strides, axis))
        offset = builder.add(offset, builder.mul(start, stride))
        size = builder.trunc(size, index_type) if index_type.width < 64 else size
        shape = builder.insert_value(shape, size, axis)
    proxy.data = builder.gep(proxy.data, [offset])
    proxy.shape = shape
    return proxy._getvalue()
