"""Rules of the reductions: sum, prod, max, min, argmax, argmin. A bool tile reduces as
int32 (``sum`` counts the true elements), as in cuTile.

>>> from numba_tile.rules.reductions import reduced_shape
>>> reduced_shape((4, 8), (1,), keepdims=False), reduced_shape((4, 8), (0, 1), keepdims=True)
((4,), (1, 1))
"""

from .. import dtypes as d
from ..errors import TileTypeError
from .core import Spec, constant_argument, describe, normalize_axes

# the reductions by value and by position: every executor's tables derive from these names
VALUE_REDUCTIONS = ("sum", "prod", "max", "min")
ARG_REDUCTIONS = ("argmax", "argmin")
REDUCTIONS = VALUE_REDUCTIONS + ARG_REDUCTIONS


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def reduction(op, x, axis, keepdims):
    """Rule of a reduction: returns ``(result_spec, axes)``."""
    keepdims = constant_argument(keepdims, op, "keepdims", "boolean")
    axes = normalize_axes(axis, len(x.shape))
    if not x.dtype.is_bool and not x.dtype.arithmetic:
        raise TileTypeError(f"Non-arithmetic dtype {x.dtype} is unsupported for reduction: "
                            f"{op}() of {describe(x)}")
    # a bool tile counts in int32, as in cuTile (its sum is how many are true)
    dtype = d.int32 if op in ARG_REDUCTIONS or x.dtype.is_bool else x.dtype
    return Spec(dtype, reduced_shape(x.shape, axes, keepdims), x.is_constant), axes
