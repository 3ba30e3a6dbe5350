"""The plan of the copies of the tensor memory accelerator (TMA) on sm_90: which tensor maps
a kernel needs, and the boxes its copies move. One thread starts the copy of a whole tile,
which lands in shared memory swizzled, and an ``mbarrier`` tells the block when its bytes are
there (the device code: :mod:`~numba_tile.compiler.lowering.tma`).

A pipelined load (:mod:`~numba_tile.compiler.planning.staged_loads`) whose array is a kernel
parameter, on a GPU of compute capability 9.0, is copied this way rather than by ``cp.async``
from every thread: the threads issue no copies and compute no addresses, and waiting for a
stage costs no barrier. What the hardware copies is described by a *tensor map* (128 bytes:
the array's address, extents and strides, the box of one copy, the swizzle), which only the
host can make: the compile lists the maps it needs (:class:`TensorMapSpec`, one per array
parameter and box) and declares each as an extra kernel parameter, ``.param .align 64 .b8
numba_tile_tensor_map_<i>[128]``, after the kernel's own
(:func:`~numba_tile.compiler.ptx_rewrites.declare_tensor_map_parameters`); the launch encodes
them (:mod:`numba_tile.runtime.tensor_maps`) and passes them there. The copies read the map through
its address in the parameter space.

The tile's layout in its stage is :func:`~numba_tile.compiler.lowering.tiles.swizzled_offset`'s,
which is the TMA's own: rows of a multiple of 128 bytes are copied as boxes of 128-byte columns
(128-byte swizzle), one after the other; rows of 64 or 32 bytes as one box with the swizzle of
that width; rows of 16 bytes unswizzled. Outside the array the TMA writes zeros (zero
padding).

>>> import numba_tile as ct
>>> from numba_tile.compiler.planning.tma import boxes
>>> boxes(ct.float16, (128, 64)), boxes(ct.float16, (128, 16)), boxes(ct.float16, (512, 64))
((64, 128, 1), (16, 32, 1), None)
"""

from ..compile_state import current

MAP_BYTES, MAP_ALIGNMENT = 128, 64
MAX_BOX = 256  # elements along one axis of a box
SWIZZLE_SPAN = 128  # bytes: the widest swizzle, and the widest box row it allows


class TensorMapSpec(tuple):
    """What the launch needs to make one tensor map: ``(parameter, ndim, itemsize,
    box_columns, box_rows, swizzle_bytes, tfloat32)``: the kernel parameter (an array; for
    an item of a list parameter, ``(parameter, item)``), its rank and element size, the
    box (``box_columns`` elements of ``box_rows`` rows, one matrix deep), the swizzle (0,
    32, 64 or 128) and whether the copy rounds float32 elements to tfloat32 (to nearest,
    ties to even, as ``astype`` does). A plain tuple, so that compiled kernels pickle.

    >>> from numba_tile.compiler.planning.tma import TensorMapSpec
    >>> TensorMapSpec((0, 2, 2, 64, 128, 128, False)).box_bytes
    16384
    """

    __slots__ = ()

    parameter = property(lambda self: self[0])
    ndim = property(lambda self: self[1])
    itemsize = property(lambda self: self[2])
    box_columns = property(lambda self: self[3])
    box_rows = property(lambda self: self[4])
    swizzle = property(lambda self: self[5])
    tfloat32 = property(lambda self: self[6])

    @property
    def box_bytes(self):
        return self.box_columns * self.box_rows * self.itemsize


def boxes(dtype, stored_shape):
    """``(box columns, swizzle bytes, boxes)`` of a tile of ``stored_shape`` (its rows as
    the array holds them), or None where the TMA cannot copy it into the swizzled layout:
    rows of 16, 32, 64 bytes or a multiple of 128, at most :data:`MAX_BOX` rows."""
    rows, columns = stored_shape[-2:]
    row_bytes = columns * dtype.itemsize
    if not 1 <= rows <= MAX_BOX:
        return None
    if row_bytes % SWIZZLE_SPAN == 0:
        return SWIZZLE_SPAN // dtype.itemsize, SWIZZLE_SPAN, row_bytes // SWIZZLE_SPAN
    if row_bytes in (16, 32, 64):
        return columns, 0 if row_bytes == 16 else row_bytes, 1
    return None


def tensor_map_slots(parameter, ndim, dtype, stored_shape, tfloat32=False):
    """:func:`tensor_map_slot` of an array parameter; of a list parameter (``parameter`` is
    ``(parameter, number of items)``), the tuple of its items' slots."""
    if isinstance(parameter, int):
        return tensor_map_slot(parameter, ndim, dtype, stored_shape, tfloat32)
    number, items = parameter
    return tuple(tensor_map_slot((number, item), ndim, dtype, stored_shape, tfloat32)
                 for item in range(items))


def tensor_map_slot(parameter, ndim, dtype, stored_shape, tfloat32=False):
    """The slot (parameter number after the kernel's own) of the map that copies tiles of
    ``stored_shape`` from array parameter ``parameter`` (or item ``item`` of list parameter
    ``number``, for ``parameter`` ``(number, item)``), rounding them to ``tfloat32`` or not,
    added to the compile state's maps on first use."""
    box_columns, swizzle, _ = boxes(dtype, stored_shape)
    spec = TensorMapSpec((parameter, ndim, dtype.itemsize, box_columns, stored_shape[-2],
                          swizzle, bool(tfloat32)))
    return current().tensor_map_slot(spec)
