"""Rules of ``mma_scaled``, the block-scaled matrix product: the dtypes of the inputs,
scales and accumulator, the scaling block sizes, and the shapes the scales are repeated to.

A scale applies to ``B`` consecutive elements along K (``B = K // K_s``). The product is
computed by repeating each scale ``B`` times along K, scaling the inputs in registers and
taking an ordinary tensor-core product: see :mod:`numba_tile.language.scaled_products`.

>>> import numba_tile as ct
>>> from numba_tile.rules.scaled_products import BLOCK_SIZES
>>> BLOCK_SIZES[ct.float4_e2m1fn][ct.float8_e8m0fnu]
(16, 32)
"""

from .. import dtypes as d
from ..errors import TileTypeError
from .matrix import mma_operand_shapes

# input dtype -> scale dtype -> the scaling block sizes B allowed
BLOCK_SIZES = {
    d.float8_e4m3fn: {d.float8_e8m0fnu: (32,)},
    d.float8_e5m2: {d.float8_e8m0fnu: (32,)},
    d.float4_e2m1fn: {d.float8_e8m0fnu: (16, 32), d.float8_e4m3fn: (16,),
                      d.float8_e5m3fnu: (16, 32)},
}


def _names(dtypes):
    return ", ".join(str(t) for t in dtypes)


def _check_dtypes(x, x_scale, y, y_scale, acc):
    """The scaling block sizes allowed for the operands' dtypes."""
    if x.dtype is not y.dtype:
        raise TileTypeError(f"mma_scaled(): x and y must have the same dtype, got {x.dtype} "
                            f"and {y.dtype}")
    if x_scale.dtype is not y_scale.dtype:
        raise TileTypeError(f"mma_scaled(): x_scale and y_scale must have the same dtype, got "
                            f"{x_scale.dtype} and {y_scale.dtype}")
    scales = BLOCK_SIZES.get(x.dtype)
    if scales is None:
        raise TileTypeError(f"mma_scaled(): Unsupported input dtype {x.dtype}; supported: "
                            f"{_names(BLOCK_SIZES)}")
    if x_scale.dtype not in scales:
        raise TileTypeError(f"mma_scaled(): Unsupported scale dtype {x_scale.dtype} for "
                            f"{x.dtype} inputs; supported: {_names(scales)}")
    if acc.dtype is not d.float32:
        raise TileTypeError(f"mma_scaled(): Unsupported acc dtype {acc.dtype}; the "
                            f"accumulator must be float32")
    return scales[x_scale.dtype]


def _repeat_plan(name, shape, scale_shape, k_axis, block_sizes):
    """How the scale tile is repeated to the operand's shape: ``(axis, shape with a new axis
    of B after k_axis, operand shape)`` for expand_dims, broadcast_to and reshape."""
    rank = len(shape)
    scale_name = name + "_scale"
    if len(scale_shape) != rank or any(a != b for i, (a, b) in enumerate(zip(shape, scale_shape))
                                       if i != k_axis):
        raise TileTypeError(f"mma_scaled(): {scale_name} shape {tuple(scale_shape)} is not "
                            f"compatible with {name} shape {tuple(shape)}: all dimensions but "
                            f"axis {k_axis} (K) must be equal")
    k, k_scale = shape[k_axis], scale_shape[k_axis]
    if k % k_scale or k // k_scale not in block_sizes:
        allowed = "{" + ", ".join(map(str, block_sizes)) + "}"
        raise TileTypeError(
            f"{name}.shape[{k_axis}] must be an exact multiple of {scale_name}.shape[{k_axis}] "
            f"with scaling block size B = K // K_s in {allowed}, got {name}.shape[{k_axis}] = "
            f"{k} and {scale_name}.shape[{k_axis}] = {k_scale}")
    block = k // k_scale
    repeated = tuple(scale_shape[:k_axis + 1]) + (block,) + tuple(scale_shape[k_axis + 1:])
    return (k_axis + 1, repeated, tuple(shape))


def mma_scaled(x, x_scale, y, y_scale, acc):
    """Rule of ``mma_scaled``: checks the operands and returns how each scale is repeated to
    its operand's shape (see :func:`_repeat_plan`), for x then y.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import Spec
    >>> from numba_tile.rules.scaled_products import mma_scaled
    >>> x, y = Spec(ct.float8_e4m3fn, (16, 64)), Spec(ct.float8_e4m3fn, (64, 8))
    >>> xs, ys = Spec(ct.float8_e8m0fnu, (16, 2)), Spec(ct.float8_e8m0fnu, (2, 8))
    >>> mma_scaled(x, xs, y, ys, Spec(ct.float32, (16, 8)))
    ((2, (16, 2, 32), (16, 64)), (1, (2, 32, 8), (64, 8)))
    """
    for name, operand in (("x", x), ("y", y)):
        if len(operand.shape) not in (2, 3):
            raise TileTypeError(f"mma_scaled(): Expect shape of `{name}` to be 2D or 3D, got "
                                f"{tuple(operand.shape)}")
    block_sizes = _check_dtypes(x, x_scale, y, y_scale, acc)
    x_plan = _repeat_plan("x", x.shape, x_scale.shape, len(x.shape) - 1, block_sizes)
    y_plan = _repeat_plan("y", y.shape, y_scale.shape, len(y.shape) - 2, block_sizes)
    xs, ys = mma_operand_shapes(x.shape, y.shape)
    if xs[-1] != ys[-2]:
        raise TileTypeError(f"mma_scaled(): inner dimensions differ, {tuple(x.shape)} @ "
                            f"{tuple(y.shape)}")
    result = xs[:-1] + ys[-1:]
    if tuple(acc.shape) != result:
        raise TileTypeError(f"mma_scaled(): the accumulator's shape {tuple(acc.shape)} must be "
                            f"{result}")
    return x_plan, y_plan
