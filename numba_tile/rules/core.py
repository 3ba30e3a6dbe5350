"""Building blocks of the op rules: specs, constants, shapes, axes and broadcasting.

>>> from numba_tile.rules.core import broadcast_shapes
>>> broadcast_shapes((4, 1), (8,))
(4, 8)
"""

import enum
import math

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose


class Spec:
    """The abstract result of an op: dtype, shape and whether it is a compile-time constant.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import Spec
    >>> Spec(ct.float32, (4,))
    Spec(float32, (4,), constant=False)
    """

    __slots__ = ("dtype", "shape", "constant")

    def __init__(self, dtype, shape, constant=False):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.constant = constant

    def __repr__(self):
        return f"Spec({self.dtype}, {self.shape}, constant={self.constant})"

    def __eq__(self, other):
        return (isinstance(other, Spec) and (self.dtype, self.shape, self.constant)
                == (other.dtype, other.shape, other.constant))


def is_python_number(value):
    """True for Python bool/int/float (loosely typed constants in tile code)."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum)


def as_operand(value, what="operand"):
    """Wrap a Python number as :class:`Loose`; pass tiles through; reject anything else."""
    if is_python_number(value):
        return Loose(value)
    if hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "is_constant"):
        return value
    if isinstance(value, np.generic) and d.dtype_spelling(value.dtype) is not None:
        # a NumPy scalar object (np.float32(0.5)): a typed constant of its dtype, as compiled
        # code takes it (only the interpreter meets these objects here)
        return d.to_dtype(value.dtype)(value.item())
    raise TileTypeError(f"Expected a tile or a scalar for {what}, got {describe(value)}")


def describe(value):
    """A short human description of a tile-code value, for error messages."""
    if isinstance(value, Loose):
        return f"constant {value.value!r}"
    if is_python_number(value):
        return f"constant {value!r}"
    if hasattr(value, "describe"):
        return value.describe()
    return f"{type(value).__name__} {value!r}"


def operand_dtype(x):
    """The dtype of an operand; a Loose constant's concrete dtype."""
    return x.concrete_dtype() if isinstance(x, Loose) else x.dtype


def operand_shape(x):
    return () if isinstance(x, Loose) else tuple(x.shape)


def operand_constant(x):
    return isinstance(x, Loose) or bool(x.is_constant)


_NOT_CONSTANT = object()


def constant_value(value, default=_NOT_CONSTANT):
    """The Python value of a compile-time constant, or ``default`` if it is not one."""
    if value is None or isinstance(value, (bool, int, float, str, enum.Enum, d.DType)):
        return value
    if isinstance(value, Loose):
        return value.value
    if isinstance(value, tuple):
        items = [constant_value(v, default) for v in value]
        return default if any(v is default for v in items) else tuple(items)
    if getattr(value, "is_constant", False) and tuple(value.shape) == ():
        return value.constant_value()
    if getattr(value, "is_constant_object", False):  # dtypes-like objects from other libs
        return value
    return default


def require_constant(value, what):
    """Return the Python value of a constant, or raise ``TileTypeError`` naming ``what``.

    >>> from numba_tile.rules.core import require_constant
    >>> require_constant((1, 2), "shape")
    (1, 2)
    """
    result = constant_value(value)
    if result is _NOT_CONSTANT:
        if isinstance(value, tuple):
            for i, item in enumerate(value):
                if constant_value(item) is _NOT_CONSTANT:
                    raise TileTypeError(f"{what} must be a compile-time constant, but element "
                                        f"{i} is a {describe(item)}")
        raise TileTypeError(f"{what} must be a compile-time constant, got {describe(value)}")
    return result


def require_int_constant(value, what):
    """A constant integer (bools excluded)."""
    result = require_constant(value, what)
    if isinstance(result, bool) or not isinstance(result, int):
        raise TileTypeError(f"{what} must be a constant integer, got {describe(value)}")
    return result


def is_power_of_two(n):
    return isinstance(n, int) and n > 0 and (n & (n - 1)) == 0


def dtype_argument(value, what="dtype"):
    """The :class:`~numba_tile.DType` a dtype argument names (``ct.float32``, ``np.float32``,
    ``"float32"``, ``torch.float16``), or ``TileTypeError``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import dtype_argument
    >>> dtype_argument("f16")
    float16
    """
    try:
        return d.to_dtype(value)
    except TypeError:
        raise TileTypeError(f"{what} needs a dtype such as ct.float32, got {value!r}") from None


#: The most elements a tile may have: a larger one is a ``TileValueError`` when the kernel is
#: typed, in both executors. Each thread holds its share of a tile in registers, so a tile
#: this large already spills, and compile time grows steeply past it (2**17 elements take
#: seconds, 2**24 minutes).
MAX_TILE_ELEMENTS = 2 ** 16


def check_tile_size(shape):
    """Raise ``TileValueError`` for a tile shape of more than :data:`MAX_TILE_ELEMENTS`.

    >>> from numba_tile.rules.core import check_tile_size
    >>> check_tile_size((256, 256))
    >>> check_tile_size((2 ** 24,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: A tile of shape (16777216,) has 16777216 elements; ...
    """
    count = product(shape)
    if count > MAX_TILE_ELEMENTS:
        raise TileValueError(f"A tile of shape {tuple(shape)} has {count} elements; a tile may "
                             f"have at most {MAX_TILE_ELEMENTS}")


def tile_shape(shape, what="tile shape", allow_int=True):
    """Validate a constant tile shape: a tuple (or int) of positive powers of two.

    >>> from numba_tile.rules.core import tile_shape
    >>> tile_shape(8), tile_shape((2, 4))
    ((8,), (2, 4))
    >>> tile_shape((3,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Dimension 0 of the tile shape is 3, which is not a power of two
    """
    shape = require_constant(shape, what)
    if allow_int and isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, tuple):
        raise TileTypeError(f"{what} must be a tuple of constant integers, got {shape!r}")
    for i, dim in enumerate(shape):
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TileTypeError(f"Dimension {i} of the {what} must be a constant integer, "
                                f"got {dim!r}")
        if not is_power_of_two(dim):
            raise TileValueError(f"Dimension {i} of the {what} is {dim}, which is not a "
                                 f"power of two")
    check_tile_size(shape)
    return shape


def normalize_axis(axis, ndim, what="axis"):
    """A constant axis in ``[-ndim, ndim)`` made non-negative.

    >>> from numba_tile.rules.core import normalize_axis
    >>> normalize_axis(-1, 3)
    2
    """
    axis = require_int_constant(axis, what)
    if not -ndim <= axis < ndim:
        raise TileValueError(f"{what} {axis} is out of range for rank {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim):
    """``None`` (all axes), an int or a tuple of ints, as a sorted tuple of distinct axes."""
    value = require_constant(axis, "axis")
    if value is None:
        return tuple(range(ndim))
    items = value if isinstance(value, tuple) else (value,)
    axes = tuple(sorted(normalize_axis(a, ndim) for a in items))
    if len(set(axes)) != len(axes):
        raise TileValueError(f"Repeated axis in {value!r}")
    return axes


def broadcast_shapes(a, b):
    """NumPy broadcasting of two shapes; ``TileValueError`` if incompatible."""
    original_a, original_b = tuple(a), tuple(b)
    n = max(len(original_a), len(original_b))
    a = (1,) * (n - len(original_a)) + original_a
    b = (1,) * (n - len(original_b)) + original_b
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise TileValueError(f"Shapes {original_a} and {original_b} cannot be broadcast "
                                 f"together")
        out.append(max(x, y))
    check_tile_size(out)
    return tuple(out)


def broadcast_many(shapes):
    out = ()
    for s in shapes:
        out = broadcast_shapes(out, s)
    return out


def product(shape):
    """Number of elements of a shape."""
    return math.prod(shape)
