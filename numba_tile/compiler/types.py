"""Numba types of tile code: global arrays and tiles.

>>> import numba_tile as ct
>>> from numba_tile.compiler.types import ArrayType, TileType
>>> ArrayType(ct.float32, 2)
TileArray(float32, 2, int32)
>>> TileType(ct.float32, (64, 64), num_warps=4).registers  # 4096 elements over 128 threads
32
"""

from numba.core import types
from numba.cuda import types as cuda_types

from .. import dtypes as d
from ..errors import TileUnsupportedFeatureError
from ..layouts import blocked

_SCALARS = {
    d.bool_: types.boolean, d.uint8: types.uint8, d.uint16: types.uint16,
    d.uint32: types.uint32, d.uint64: types.uint64, d.int8: types.int8, d.int16: types.int16,
    d.int32: types.int32, d.int64: types.int64, d.float16: types.float16,
    d.float32: types.float32, d.float64: types.float64, d.bfloat16: cuda_types.bfloat16,
}
_FROM_NUMBA = {v: k for k, v in _SCALARS.items()}


def scalar_type(dtype):
    """The Numba scalar type that stores one element of ``dtype``."""
    try:
        return _SCALARS[dtype]
    except KeyError:
        raise TileUnsupportedFeatureError(f"The compiler does not support {dtype} yet") from None


def dtype_of_scalar(numba_type):
    """The tile dtype of a Numba scalar type (int32 for Numba's int32, ...), or None."""
    return _FROM_NUMBA.get(types.unliteral(numba_type))


class ConstantType(types.Type):
    """A compile-time constant that is not a number: an enum member, a dtype, a string.

    Its value is part of the type; at run time it is nothing.
    """

    def __init__(self, value):
        self.value = value
        super().__init__(name=f"TileConstant({value!r})")


class FloatLiteral(types.Literal, types.Dummy):
    """A float literal of tile code: a loosely typed constant that keeps its value (Numba
    types float literals as plain float64, which would make ``t * 0.5`` a float64 tile)."""

    def __init__(self, value):
        self._literal_init(float(value))
        types.Dummy.__init__(self, name=f"Literal[float]({value!r})")


class ArrayType(types.Type):
    """A global array argument: data pointer, shape and strides (in elements)."""

    is_tile_array = True  # what the memory rules accept as an array

    def __init__(self, dtype, ndim, index_dtype=d.int32):
        self.dtype = dtype
        self.ndim = ndim
        self.index_dtype = index_dtype
        super().__init__(name=f"TileArray({dtype}, {ndim}, {index_dtype})")

    @property
    def element(self):
        return scalar_type(self.dtype)

    @property
    def index(self):
        return scalar_type(self.index_dtype)

    def describe(self):
        return f"{self.ndim}-d {self.dtype} array"


def default_layout(shape, num_warps):
    """The layout a tile gets when it is made (loaded, filled): blocked, with runs of 4
    elements a thread whatever the dtype, so that tiles of one shape share a layout and
    elementwise ops between them stay in registers. (Measured on an H200: 8 a thread helps
    float16 and costs float32 about 10%; dtype-aware runs need layout conversions first.)"""
    return blocked(tuple(shape), num_warps=num_warps, element_bytes=4)


class TileType(types.Type):
    """A tile: dtype, shape and the linear layout that spreads it over a thread block.

    Its run-time value in each thread is an LLVM array of ``registers`` elements. Without a
    ``layout`` the tile gets :func:`default_layout`.
    """

    is_constant = False

    def __init__(self, dtype, shape, num_warps, layout=None):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.num_warps = num_warps
        self.layout = default_layout(self.shape, num_warps) if layout is None else layout
        suffix = "" if layout is None or layout == default_layout(self.shape, num_warps) else \
            f", layout#{abs(hash(self.layout)) % 10**8}"
        super().__init__(name=f"Tile({dtype}, {self.shape}, warps={num_warps}{suffix})")

    @property
    def key(self):
        return (self.dtype, self.shape, self.num_warps, self.layout)

    def with_dtype(self, dtype):
        """The same shape and layout with another dtype."""
        return TileType(dtype, self.shape, self.num_warps, self.layout)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def registers(self):
        return self.layout.in_sizes["register"]

    @property
    def element(self):
        return scalar_type(self.dtype)

    def describe(self):
        return f"{self.dtype} tile of shape {self.shape}"


class TiledViewType(types.Type):
    """``Array.tiled_view(...)``: the array plus a constant tile shape, traversal steps and
    padding mode (its run-time value is the array's)."""

    def __init__(self, array, tile_shape, steps, padding_mode):
        self.array = array
        self.tile_shape = tuple(tile_shape)
        self.steps = tuple(steps)
        self.padding_mode = padding_mode
        super().__init__(name=f"TiledView({array}, {self.tile_shape}, steps={self.steps}, "
                              f"{padding_mode.name})")

    @property
    def dtype(self):
        return self.array.dtype

    def describe(self):
        return f"tiled view of a {self.array.describe()} with tiles {self.tile_shape}"
