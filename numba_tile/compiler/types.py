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
from ..rules.core import check_tile_size
from .compile_state import current

_SCALARS = {
    d.bool_: types.boolean, d.uint8: types.uint8, d.uint16: types.uint16,
    d.uint32: types.uint32, d.uint64: types.uint64, d.int8: types.int8, d.int16: types.int16,
    d.int32: types.int32, d.int64: types.int64, d.float16: types.float16,
    d.float32: types.float32, d.float64: types.float64, d.bfloat16: cuda_types.bfloat16,
}
_FROM_NUMBA = {v: k for k, v in _SCALARS.items()}
# dtypes without arithmetic that tiles and arrays can hold, in a register of this type
# (float4: its code in the low nibble of a byte)
_STORAGE_ONLY = {d.tfloat32: types.float32, d.float8_e4m3fn: types.uint8,
                 d.float8_e5m2: types.uint8, d.float8_e8m0fnu: types.uint8,
                 d.float8_e5m3fnu: types.uint8, d.float4_e2m1fn: types.uint8}


def scalar_type(dtype):
    """The Numba scalar type that stores one element of ``dtype``."""
    try:
        return _SCALARS[dtype]
    except KeyError:
        raise TileUnsupportedFeatureError(f"The compiler does not support {dtype} yet") from None


def storage_scalar_type(dtype):
    """The Numba type of one element of a tile or array of ``dtype``: :func:`scalar_type`,
    and for the storage-only dtypes (tfloat32, float8) the type that holds their bits."""
    if d.is_foreign_pointer(dtype):  # an address, as an integer (no op computes on it)
        return types.uint64
    found = _STORAGE_ONLY.get(dtype)
    return scalar_type(dtype) if found is None else found


def dtype_of_scalar(numba_type):
    """The tile dtype of a Numba scalar type (int32 for Numba's int32, ...), or None."""
    return _FROM_NUMBA.get(types.unliteral(numba_type))


#: the types of ``slice(a, b)`` and ``slice(a, b, c)`` where a bound is a run-time value
#: (Numba's own slice types otherwise: those of constant bounds), which tile indexing and
#: tuple indexing refuse (:mod:`.typing.shapes` types them)
class RunTimeSliceType(types.SliceType):
    """A slice of run-time bounds (a type of its own: Numba interns slice types by their
    number of members)."""

    @property
    def key(self):
        return self.members, "run-time"


RUN_TIME_SLICES = {2: RunTimeSliceType("slice<run-time a:b>", 2),
                   3: RunTimeSliceType("slice<run-time a:b:c>", 3)}


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


class TypedConstant(types.Literal, types.Dummy):
    """A strictly typed constant scalar: ``ct.int16(5)``, and what folding it gives
    (``ct.int16(5) + 2`` is the int16 constant 7). Unlike a loose literal it promotes by
    its dtype."""

    def __init__(self, dtype, value):
        self.dtype = dtype
        self._literal_init(value)
        types.Dummy.__init__(self, name=f"Constant[{dtype}]({value!r})")

    @property
    def literal_type(self):
        """The run-time type of the constant: a scalar of its dtype, or a 0-d tile for the
        dtypes without scalar arithmetic (tfloat32, float8). Asked only when the value is
        needed at run time, so that constants of a dtype the compiler cannot hold still
        fold (``ct.float64(ct.float8_e8m0fnu(0.2))`` is the float64 constant 0.25)."""
        if self.dtype in _SCALARS:
            return _SCALARS[self.dtype]
        if self.dtype in _STORAGE_ONLY:
            return TileType(self.dtype, (), current().num_warps)
        raise TileUnsupportedFeatureError(f"The compiler does not support {self.dtype} yet")

    @property
    def key(self):
        # float values by their bits' text: a NaN constant is the same type as itself (so a
        # variable holding it keeps it: ``tx = ct.float32(nan)``), and -0.0 is not 0.0
        value = self.literal_value
        return (self.dtype, value.hex() if isinstance(value, float) else value)


class ArrayType(types.Type):
    """A global array argument: data pointer, shape and strides (in elements)."""

    is_tile_array = True  # what the memory rules accept as an array

    def __init__(self, dtype, ndim, index_dtype=d.int32, aligned=False, static_shape=(),
                 static_strides=(), read_only=False):
        self.dtype = dtype
        # (a read-only NumPy array, a JAX array: what the memory rules refuse to write)
        self.read_only = bool(read_only)
        self.ndim = ndim
        self.index_dtype = index_dtype
        self.aligned = bool(aligned) and ndim > 0
        # ((axis, value), ...) of the shape and stride values the kernel is specialized to
        # (ArrayAnnotation's static_shape_dims/static_stride_dims): constants in its code
        self.static_shape = tuple(sorted(static_shape))
        self.static_strides = tuple(sorted(static_strides))
        suffix = ", aligned" if self.aligned else ""
        suffix += "".join(f", shape[{axis}]={n}" for axis, n in self.static_shape)
        suffix += "".join(f", strides[{axis}]={n}" for axis, n in self.static_strides)
        suffix += ", read-only" if self.read_only else ""
        super().__init__(name=f"TileArray({dtype}, {ndim}, {index_dtype}{suffix})")

    def unify(self, typingctx, other):
        """A variable that holds arrays of one dtype, rank and static shape and strides on
        two paths (``a = x if c else y``): alignment is a fact of lowering, not of the array's
        type, so the variable is an array aligned where both are."""
        if isinstance(other, ArrayType) and self.with_alignment(False, False) == \
                other.with_alignment(False, False):
            return self.with_alignment(self.aligned and other.aligned,
                                       self.read_only or other.read_only)
        return None

    def with_alignment(self, aligned, read_only=None):
        """The same array type, specialized (or not) as :func:`is_aligned` describes (and
        read-only or not, where ``read_only`` is given)."""
        return ArrayType(self.dtype, self.ndim, self.index_dtype, aligned, self.static_shape,
                         self.static_strides,
                         self.read_only if read_only is None else read_only)

    def sliced(self, axis):
        """The type of a slice of this array along ``axis``: that axis's length is no longer
        the one the kernel was specialized to, and a run-time start along the last axis can
        move the data off its 16-byte alignment."""
        static_shape = tuple((a, n) for a, n in self.static_shape if a != axis)
        return ArrayType(self.dtype, self.ndim, self.index_dtype,
                         self.aligned and axis != self.ndim - 1, static_shape,
                         self.static_strides, self.read_only)

    def values_type(self, attribute):
        """The type of ``shape`` or ``strides``: index-dtype values, and literals where the
        kernel is specialized to them."""
        static = dict(self.static_shape if attribute == "shape" else self.static_strides)
        if not static:
            return types.UniTuple(self.index, self.ndim)
        return types.Tuple([types.IntegerLiteral(static[axis]) if axis in static else self.index
                            for axis in range(self.ndim)])

    @property
    def element(self):
        return storage_scalar_type(self.dtype)

    @property
    def index(self):
        return scalar_type(self.index_dtype)

    def describe(self):
        return f"{self.ndim}-d {self.dtype} array"


class ArrayClassType(types.Dummy):
    """The class ``ct.Array`` read in tile code, for its static method ``from_foreign``
    (nothing at run time)."""

    def __init__(self):
        super().__init__(name="TileArrayClass")


ARRAY_CLASS = ArrayClassType()


class ListType(types.UniTuple):
    """A list argument of a kernel (items of one type, arrays as cuTile has them): a tuple
    that may also be indexed at run time (``arrays[i]`` in a ``range`` loop), which a tuple
    may not (:mod:`numba_tile.rules.tuples`).

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.types import ArrayType, ListType
    >>> ListType(ArrayType(ct.float32, 1), 3)
    List(TileArray(float32, 1, int32), 3)
    """

    def __init__(self, dtype, count):
        super().__init__(dtype, count)
        self.name = f"List({dtype}, {count})"

    def __repr__(self):
        return self.name


def run_length_for(dtypes):
    """The default run length of a kernel whose arrays have ``dtypes``: a 16-byte vector of the
    narrowest of them, between 4 and 8 elements. The compiler sets it for each kernel before
    typing (:attr:`.compile_state.CompileState.default_run`), so every tile of a kernel made
    with one shape shares one layout whatever its dtype, and elementwise ops between them
    stay in registers.

    Four float32 (16 bytes) are the best run for 4-byte data; float16 data needs 8 to load and
    store 16 bytes at a time (measured on an H100: 8 a thread costs float32-only kernels about
    10%, 4 costs float16 kernels about 10%). One byte dtypes stay at 8 so that the float32
    tiles computed from them keep few registers a run.

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.types import run_length_for
    >>> run_length_for([ct.float32, ct.float32]), run_length_for([ct.float16, ct.float32])
    (4, 8)
    >>> run_length_for([ct.int8]), run_length_for([ct.float64]), run_length_for([])
    (8, 4, 4)
    """
    narrowest = min((dtype.itemsize for dtype in dtypes), default=4)
    return min(8, max(4, 16 // narrowest))


def is_aligned(pointer, shape, strides, itemsize):
    """True if 16-byte vectors along the last axis of an array never straddle its end or a
    16-byte boundary: the data is 16-byte aligned, the last axis is contiguous and its length
    a multiple of 16 bytes, and every other stride a positive multiple of 16 bytes (or any
    multiple of 16 on an axis of length 1: the tensor memory accelerator copies such arrays,
    as it reads no others). Kernels are
    specialized on it (a launch checks it), so that loads and stores of such arrays move
    whole vectors with no run-time alignment check and no element-by-element fallback.

    >>> from numba_tile.compiler.types import is_aligned
    >>> is_aligned(0x7f0000, (8, 64), (64, 1), 4), is_aligned(0x7f0004, (8, 64), (64, 1), 4)
    (True, False)
    >>> is_aligned(0x7f0000, (8, 6), (6, 1), 4)  # rows of 24 bytes
    False
    """
    if not shape or pointer % 16 or strides[-1] != 1 or shape[-1] * itemsize % 16:
        return False
    return all(stride * itemsize % 16 == 0 and (stride > 0 or n == 1)
               for stride, n in zip(strides[:-1], shape[:-1]))


def default_layout(shape, num_warps):
    """The layout a tile gets when it is made (loaded, filled): blocked, with runs of
    the compilation's ``default_run`` elements a thread whatever the dtype (see
    :func:`run_length_for`)."""
    return blocked(tuple(shape), num_warps=num_warps,
                   element_bytes=16 // current().default_run)


class TileType(types.Type):
    """A tile: dtype, shape and the linear layout that spreads it over a thread block.

    Its run-time value in each thread is an LLVM array of ``registers`` elements. Without a
    ``layout`` the tile gets :func:`default_layout`.
    """

    is_constant = False

    def __init__(self, dtype, shape, num_warps, layout=None):
        check_tile_size(shape)  # every tile type, whatever op made it (cat, mma, ...)
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

    def unify(self, typingctx, other):
        """A variable that holds tiles of one dtype and shape in two layouts (a loop-carried
        accumulator: ``acc = ct.zeros(...)``, then ``acc = ct.sum(t, axis=0)`` in the loop)
        takes one layout; the other value is converted where it is assigned. A layout that
        is not the default one was computed, most likely inside the loop, so it is kept:
        the conversion then happens once, before the loop."""
        if not isinstance(other, TileType) or (self.dtype, self.shape, self.num_warps) != (
                other.dtype, other.shape, other.num_warps):
            return None
        if self.layout == default_layout(self.shape, self.num_warps):
            return other
        return self

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
        return storage_scalar_type(self.dtype)

    def describe(self):
        if self.shape == ():  # (as the interpreter names its run-time scalars)
            return f"run-time {self.dtype} scalar"
        return f"{self.dtype} tile of shape {self.shape}"


class RawMemoryType(types.Type):
    """``Array.get_raw_memory()``: the array's memory addressed by element offsets from its
    first element (its run-time value is the array's; only the data pointer is used)."""

    def __init__(self, array):
        self.array = array
        super().__init__(name=f"TileRawMemory({array})")

    @property
    def dtype(self):
        return self.array.dtype

    @property
    def element(self):
        return self.array.element

    def describe(self):
        return f"raw memory of a {self.array.describe()}"


class SliceType(types.Type):
    """``ct.Slice(start, length)``: ``length`` elements of one axis from ``start``; the
    length (a constant) is part of the type, the start (an int64) its run-time value."""

    def __init__(self, length):
        self.length = length
        super().__init__(name=f"TileSlice({length})")

    def describe(self):
        return f"ct.Slice of length {self.length}"


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


class PartitionType(types.Type):
    """A ``ct.partition`` kernel argument: the whole array (its run-time value, which the
    kernel's entry turns into the block's region, :mod:`.frontend.partitions`) and the
    constant tile shape of its regions, so that each tile shape compiles a kernel of its own.

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.types import ArrayType, PartitionType
    >>> PartitionType(ArrayType(ct.float32, 2, aligned=True), (16, 16)).region
    TileArray(float32, 2, int32, aligned)
    >>> PartitionType(ArrayType(ct.float32, 2, aligned=True), (16, 3)).region
    TileArray(float32, 2, int32)
    """

    def __init__(self, array, tile_shape):
        self.array = array
        self.tile_shape = tuple(tile_shape)
        super().__init__(name=f"Partition({array}, {self.tile_shape})")

    @property
    def dtype(self):
        return self.array.dtype

    @property
    def region(self):
        """The type of a block's region: an array of the same dtype and rank, whose shape
        varies by block (no static shape), still aligned (:func:`is_aligned`) where the
        whole is and each region starts a multiple of 16 bytes along the last axis."""
        array = self.array
        aligned = array.aligned and self.tile_shape[-1] * array.dtype.itemsize % 16 == 0
        return ArrayType(array.dtype, array.ndim, array.index_dtype, aligned, (),
                         array.static_strides, array.read_only)
