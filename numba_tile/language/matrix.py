"""Matrix products: ``mma`` (multiply-accumulate, the tensor-core op) and ``matmul``/``@``
(the tile operator is attached here)."""

import numpy as np

from .. import dtypes as d
from ..host.context import tile_op
from ..host.conversion import convert
from ..host.tile import Tile, tile_argument, values_as
from ..rules import matrix as rules
from .tile_methods import tile_method


def _product(a, b, compute_dtype, out_dtype):
    if compute_dtype.is_float:
        out = np.matmul(a.astype(np.float64), b.astype(np.float64))
        return convert(out, d.float64, out_dtype)
    out = np.matmul(a.astype(np.int64), b.astype(np.int64))
    return convert(out, d.int64, out_dtype)


@tile_op
def mma(x, y, /, acc, *, use_fast_acc=False):
    """``x @ y + acc`` with the accumulator's dtype; 2-d, or 3-d with a leading batch axis
    (broadcast: a 2-d operand beside a 3-d one, or a batch of 1, repeats along the batch).

    Supported (inputs -> accumulator): f16 -> f16/f32, bf16 -> f32, tf32 -> f32, f32 -> f32,
    f64 -> f64, int8/uint8 -> int32, float8 e4m3fn/e5m2 -> f16/f32; x and y of one dtype,
    but int8 beside uint8 (not promoted). ``use_fast_acc`` (float8
    inputs only) lets Hopper's tensor cores keep the running sum of the products in fewer
    bits, as cuBLASLt's fast accumulation does; without it, each call's products are summed
    there and added to ``acc`` in float32. The interpreter sums exactly either way.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     a = ct.reshape(ct.arange(4, dtype=ct.float16), (2, 2))
    ...     print(ct.mma(a, a, ct.ones((2, 2), ct.float32)))
    >>> ct.launch(0, (1,), show, ())
    [[3.0, 4.0], [7.0, 12.0]]
    """
    x, y, acc = tile_argument(x, "mma", 1), tile_argument(y, "mma", 2), \
        tile_argument(acc, "mma", "acc")
    spec = rules.mma(x, y, acc, use_fast_acc)
    # Products are exact in float64 for every supported input; sum in float64, round once.
    compute = d.float64 if acc.dtype.is_float else d.int64
    product = np.matmul(x.values.astype(compute.storage), y.values.astype(compute.storage))
    total = product + acc.values.astype(compute.storage)
    return Tile(spec.dtype, convert(total, compute, spec.dtype))


@tile_op
def matmul(x, y, /):
    """The matrix product ``x @ y`` (NumPy's rules for 1-d to 3-d) in the promoted dtype.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     a = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
    ...     print(a @ a, ct.matmul(ct.arange(2, dtype=ct.int32), a))
    >>> ct.launch(0, (1,), show, ())
    [[2, 3], [6, 11]] [2, 3]
    """
    x, y = tile_argument(x, "matmul", 1), tile_argument(y, "matmul", 2)
    spec = rules.matmul(x, y)
    out = _product(values_as(x, spec.dtype), values_as(y, spec.dtype), spec.dtype, spec.dtype)
    return Tile(spec.dtype, out.reshape(spec.shape), spec.constant)


@tile_method("__matmul__")
def _tile_matmul(self, other):
    return self._op(matmul)(self, other)


@tile_method("__rmatmul__")
def _tile_rmatmul(self, other):
    return self._op(matmul)(other, self)
