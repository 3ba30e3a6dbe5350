"""numba_tile: the tile programming model (NVIDIA's ``cuda.tile``) for Numba.

Kernels are written on whole tiles and run unchanged under ``cuda.tile``, on the GPU through
numba-cuda, or on the CPU in interpreter mode (``NUMBA_TILE_INTERPRET=1``)::

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def scale(x, y, TILE: ct.Constant[int]):
    ...     t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
    ...     ct.store(y, index=(ct.bid(0),), tile=t * 2)
    >>> x = np.arange(8, dtype=np.float32); y = np.empty_like(x)
    >>> ct.launch(0, (2,), scale, (x, y, 4))
    >>> y
    array([ 0.,  2.,  4.,  6.,  8., 10., 12., 14.], dtype=float32)
"""

from ._version import __version__
from .annotations import (ArrayAnnotation, Constant, ConstantAnnotation, IndexedWithInt64,
                          ListAnnotation, ScalarAnnotation, ScalarInt64)
from .dtypes import (DType, bfloat16, bool_, float4_e2m1fn, float8_e4m3fn, float8_e5m2,
                     float8_e5m3fnu, float8_e8m0fnu, float16, float32, float64,
                     foreign_pointer_dtype, int8, int16, int32, int64, tfloat32, uint8, uint16,
                     uint32, uint64)
from .enums import MemoryOrder, MemoryScope, PaddingMode, RoundingMode
from .errors import (StaticException, TileCompilerExecutionError, TileCompilerTimeoutError,
                     TileError, TileInternalError, TileRecursionError, TileStaticAssertionError,
                     TileStaticEvalError, TileSyntaxError, TileTypeError,
                     TileUnsupportedFeatureError, TileValueError)
from .host.arrays import Array, TiledView
from .host.raw_memory import RawArrayMemory
from .host.tile import Tile
from .runtime.kernels import ByTarget
from .source.tile_functions import function
from .language.debugging import (assert_, ensure_constant, print, printf, static_assert,
                                 static_eval, static_exception, static_iter)
from .language.elementwise import (abs, add, astype, atan2, bitwise_and, bitwise_lshift,
                                   bitwise_not, bitwise_or, bitwise_rshift, bitwise_xor, ceil,
                                   cos, cosh, divmod, equal, exp, exp2, floor, floordiv, greater,
                                   greater_equal, isnan, less, less_equal, log, log2, maximum,
                                   minimum, mod, mul, negative, not_equal, pow, rsqrt, sin, sinh,
                                   sqrt, sub, tan, tanh, truediv, where)
from .language.atomics import (atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min,
                               atomic_or, atomic_xchg, atomic_xor)
from .language.factories import arange, astile, full, ones, zeros
from .language.gather import Slice, gather, load_advanced_indexing, scatter, \
    store_advanced_indexing
from .language.matrix import matmul, mma
from .language.scaled_products import mma_scaled
from .language.grid_dependencies import (grid_dependency_control_launch_dependents,
                                         grid_dependency_control_wait)
from .language.memory import assume_divisible_by, bid, cdiv, load, num_blocks, num_tiles, \
    store
from .language.combiners import reduce, scan
from .language.histograms import histogram
from .language.scans import cumprod, cumsum
from .language.reductions import argmax, argmin, max, min, prod, sum
from .language.shapes import (bitcast, broadcast_to, cat, expand_dims, extract, insert,
                              pack_to_bytes, permute, reshape, transpose, unpack_from_bytes)
from .runtime.compile_entry import compile, compiler_timeout
from .runtime.kernel_decorator import kernel
from .runtime.launch import interpret, interpret_mode, launch
from .partitions import Partition, partition
from .type_hints import Order, Scalar, ScalarProtocol, Shape, TileOrScalar

# ct.tune and ct.compilation, as cuda.tile has them
from . import compilation, tune  # noqa: E402  (they build on the names above)

import types as _types  # noqa: E402

__all__ = [_name for _name, _value in globals().items()
           if not _name.startswith("_") and not isinstance(_value, _types.ModuleType)]
