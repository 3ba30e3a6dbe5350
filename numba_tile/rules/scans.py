"""Rules of the scans ``cumsum`` and ``cumprod``: the inclusive running sum or product along
one axis, forward or reversed.

The result keeps the input's shape and dtype (integers wrap, as the sum of the dtype does);
a bool tile counts in int32. Float16 and bfloat16 accumulate in float32, each output rounded
to the dtype once.

>>> import numba_tile as ct
>>> from numba_tile.rules.scans import scan
>>> from numba_tile.host.tile import Tile
>>> import numpy as np
>>> scan("cumsum", Tile(ct.bool_, np.zeros((2, 4), bool)), -1, False)
(int32, 1, False)
"""

from .. import dtypes as d
from ..errors import TileTypeError
from .core import describe, normalize_axis, require_constant
from .elementwise import check_float_options

SCANS = {"cumsum": "add", "cumprod": "mul"}


def scan(op, x, axis, reverse):
    """Rule of ``cumsum``/``cumprod``: ``(result dtype, axis, reverse)``."""
    if not hasattr(x, "dtype") or not tuple(x.shape):
        raise TileTypeError(f"{op}() scans a tile of at least one dimension, got {describe(x)}")
    if not x.dtype.is_bool and not x.dtype.arithmetic:
        raise TileTypeError(f"Non-arithmetic dtype {x.dtype} is unsupported for prefix scans: "
                            f"{op}()")
    reverse = require_constant(reverse, "reverse")
    if not isinstance(reverse, bool):
        raise TileTypeError(f"reverse of {op}() must be a constant bool, got {reverse!r}")
    axis = normalize_axis(axis, len(x.shape))
    return (d.int32 if x.dtype.is_bool else x.dtype), axis, reverse


def scan_options(op, dtype, rounding_mode, flush_to_zero):
    """A scan's ``rounding_mode`` and ``flush_to_zero``, as cuTile takes them: those of its
    additions or multiplications (:func:`~numba_tile.rules.elementwise.check_float_options`).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.scans import scan_options
    >>> try:
    ...     scan_options("cumsum", ct.float16, None, True)
    ... except ct.TileTypeError as error:
    ...     print(error)
    Flush to zero can only be used for float32 type, but got float16
    """
    if not isinstance(flush_to_zero, bool):
        raise TileTypeError(f"flush_to_zero of {op}() must be a constant bool")
    check_float_options(op, dtype, rounding_mode, flush_to_zero)  # (as an add's, a mul's)


def halves(shape, axis, width):
    """Rule of the steps of a scan or reduction with a user's combining function
    (``swap_halves``, ``upper_halves``): ``axis`` of ``shape``, and ``width`` a power of two
    below its length. Returns ``(axis, width)``, the axis made non-negative.

    >>> from numba_tile.rules.scans import halves
    >>> halves((4, 8), -1, 4)
    (1, 4)
    """
    axis = normalize_axis(axis, len(shape))
    if not (isinstance(width, int) and 0 < width < shape[axis] and width & (width - 1) == 0):
        raise TileTypeError(f"the half width {width!r} must be a power of two below the "
                            f"axis length {shape[axis]}")
    return axis, width


def run_split(shape, axis, run):
    """Rule of ``split_runs``: ``axis`` of ``shape`` made non-negative, and ``run`` a power
    of two that divides its length. Returns ``(axis, run)``.

    >>> from numba_tile.rules.scans import run_split
    >>> run_split((4, 8), -1, 4)
    (1, 4)
    """
    axis = normalize_axis(axis, len(shape))
    if not (isinstance(run, int) and 0 < run <= shape[axis] and run & (run - 1) == 0):
        raise TileTypeError(f"the run length {run!r} must be a power of two up to the axis "
                            f"length {shape[axis]}")
    return axis, run


def run_merge(shape, axis):
    """Rule of ``merge_runs``: ``axis`` (made non-negative) and the next one exist.

    >>> from numba_tile.rules.scans import run_merge
    >>> run_merge((2, 4, 4), 1)
    1
    """
    axis = normalize_axis(axis, len(shape))
    if axis + 1 >= len(shape):
        raise TileTypeError(f"merge_runs() needs an axis after axis {axis}")
    return axis


def run_index(shape, axis, index):
    """Rule of ``run_element``: ``(axis, index)``, the axis made non-negative and the index
    a constant inside it.

    >>> from numba_tile.rules.scans import run_index
    >>> run_index((2, 4), -1, 3)
    (1, 3)
    """
    axis = normalize_axis(axis, len(shape))
    if not (isinstance(index, int) and 0 <= index < shape[axis]):
        raise TileTypeError(f"the run element {index!r} must be a constant below "
                            f"{shape[axis]}")
    return axis, index


def run_stack(shape, part_shapes, part_dtypes, axis):
    """Rule of ``stack_runs``: one part per element along ``axis`` of ``shape``, each of
    ``shape`` with length 1 there, all of one dtype; the axis made non-negative.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.scans import run_stack
    >>> run_stack((2, 2), [(2, 1), (2, 1)], [ct.int32, ct.int32], 1)
    1
    """
    axis = normalize_axis(axis, len(shape))
    part = tuple(shape[:axis]) + (1,) + tuple(shape[axis + 1:])
    if len(part_shapes) != shape[axis] or any(tuple(s) != part for s in part_shapes) or \
            len(set(part_dtypes)) != 1:
        raise TileTypeError(f"stack_runs() needs {shape[axis]} tiles of shape {part} and one "
                            f"dtype")
    return axis
