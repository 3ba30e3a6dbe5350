"""Rules of ``mma`` and ``matmul``: shapes, supported dtype pairs and promotion.

>>> import numba_tile as ct
>>> from numba_tile.rules.matrix import MMA_PAIRS
>>> ct.float32 in MMA_PAIRS[ct.float16]
True
"""

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..promotion import common_dtype
from .core import Spec, broadcast_shapes, describe, require_constant

MMA_PAIRS = {
    d.float16: (d.float16, d.float32),
    d.bfloat16: (d.float32,),
    d.tfloat32: (d.float32,),
    d.float32: (d.float32,),
    d.float64: (d.float64,),
    d.int8: (d.int32,),
    d.uint8: (d.int32,),
    d.float8_e4m3fn: (d.float16, d.float32),
    d.float8_e5m2: (d.float16, d.float32),
}


def mma_operand_shapes(xs, ys):
    """The shapes of ``mma``'s operands with their batch axes broadcast: a 2-d operand beside
    a 3-d one, or a batch of 1 beside a batch of ``B``, is repeated along the batch (cuTile
    broadcasts all but the last two axes).

    >>> from numba_tile.rules.matrix import mma_operand_shapes
    >>> mma_operand_shapes((2, 16, 8), (8, 4)), mma_operand_shapes((1, 4, 8), (3, 8, 2))
    (((2, 16, 8), (2, 8, 4)), ((3, 4, 8), (3, 8, 2)))
    """
    xs, ys = tuple(xs), tuple(ys)
    for name, shape in (("x", xs), ("y", ys)):
        if len(shape) < 2:
            raise TileTypeError(f"Expect shape of `{name}` to be at least 2D, got {shape}")
    if len(xs) > 3 or len(ys) > 3:
        raise TileValueError(f"mma() needs 2-d or 3-d tiles, got shapes {xs} and {ys}")
    batch_x, batch_y = xs[:-2], ys[:-2]
    if batch_x == batch_y:
        return xs, ys
    if batch_x and batch_y and 1 not in (batch_x[0], batch_y[0]):
        raise TileTypeError(f"Incompatible shapes for matrix mul on tiles: {xs}, {ys}.")
    batch = (max(batch_x + batch_y),)
    return batch + xs[-2:], batch + ys[-2:]


def _matrix_shapes(x, y, what):
    xs, ys = mma_operand_shapes(x.shape, y.shape)
    if xs[-1] != ys[-2]:
        raise TileTypeError(f"Incompatible shapes for matrix mul on tiles: {tuple(x.shape)}, "
                            f"{tuple(y.shape)}.")
    return xs[:-1] + ys[-1:]


def mma(x, y, acc, use_fast_acc=False):
    """Rule of ``mma(x, y, acc, use_fast_acc=...)``: returns the result spec (the
    accumulator's). ``use_fast_acc`` (a constant bool) is for float8 inputs only.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.matrix import mma
    >>> from numba_tile.host.tile import Tile
    >>> import numpy as np
    >>> h = Tile(ct.float16, np.zeros((16, 16), np.float16))
    >>> try:
    ...     mma(h, h, Tile(ct.float32, np.zeros((16, 16), np.float32)), use_fast_acc=True)
    ... except ct.TileTypeError as error:
    ...     print(error)
    use_fast_acc=True needs float8 inputs (float8_e4m3fn or float8_e5m2), got float16
    """
    use_fast_acc = require_constant(use_fast_acc, "use_fast_acc")
    if not isinstance(use_fast_acc, bool):
        raise TileTypeError(f"use_fast_acc of mma() must be a constant bool, got "
                            f"{use_fast_acc!r}")
    if use_fast_acc and x.dtype not in (d.float8_e4m3fn, d.float8_e5m2):
        raise TileTypeError(f"use_fast_acc=True needs float8 inputs (float8_e4m3fn or "
                            f"float8_e5m2), got {x.dtype}")
    shape = _matrix_shapes(x, y, "mma()")  # (shapes first, as cuTile checks them)
    if tuple(acc.shape) != shape:
        raise TileTypeError(f"Expect acc shape to be {shape}, got {tuple(acc.shape)}")
    if x.dtype is not y.dtype and {x.dtype, y.dtype} != {d.int8, d.uint8}:
        raise TileTypeError(f"x and y must have the same dtype unless they are int8/uint8, "
                            f"got {x.dtype} {y.dtype}")
    if x.dtype not in MMA_PAIRS:
        raise TileTypeError(f"Unsupported input dtype {x.dtype}, supported dtypes are "
                            f"{','.join(map(str, MMA_PAIRS))}")
    if acc.dtype not in MMA_PAIRS[x.dtype]:
        raise TileTypeError(f"Unsupported acc dtype {acc.dtype}, supported dtypes are "
                            f"{'/'.join(map(str, MMA_PAIRS[x.dtype]))} for {x.dtype} inputs "
                            f"({describe_pairs()})")
    return Spec(acc.dtype, shape)


def describe_pairs():
    return ", ".join(f"{i} -> {'/'.join(map(str, accs))}" for i, accs in MMA_PAIRS.items())


def matmul(x, y):
    """Rule of ``matmul``: NumPy's shapes for 1-d to 3-d tiles, promoted dtype."""
    dtype = common_dtype(x.dtype, y.dtype, op_name="matmul")
    if dtype.is_bool:
        raise TileTypeError("matmul() of bool_ tiles")
    xs, ys = tuple(x.shape), tuple(y.shape)
    if not (1 <= len(xs) <= 3 and 1 <= len(ys) <= 3):
        raise TileValueError(f"matmul() needs tiles of rank 1 to 3, got {describe(x)} and "
                             f"{describe(y)}")
    xm = xs if len(xs) > 1 else (1,) + xs
    ym = ys if len(ys) > 1 else ys + (1,)
    if xm[-1] != ym[-2]:
        raise TileTypeError(f"Incompatible shapes for matrix mul on tiles: {xs}, {ys}.")
    batch = ()
    if len(xm) == 3 or len(ym) == 3:
        if xm[:-2] and ym[:-2] and 1 not in (xm[0], ym[0]) and xm[0] != ym[0]:
            raise TileTypeError(f"Incompatible shapes for matrix mul on tiles: {xs}, {ys}.")
        batch = broadcast_shapes(xm[:-2], ym[:-2])
    shape = batch + xm[-2:-1] * (len(xs) > 1) + ym[-1:] * (len(ys) > 1)
    return Spec(dtype, shape, x.is_constant and y.is_constant)
