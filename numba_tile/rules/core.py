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
from ..promotion import Loose, is_wide_integer, loose_concrete_dtype, wide_integer_error


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
        if is_wide_integer(value):  # unbounded while constants fold, not beside a tile
            raise wide_integer_error(value)
        return Loose(value)
    if isinstance(value, Loose):
        return value
    if hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "is_constant"):
        return value
    if isinstance(value, np.generic) and d.dtype_spelling(value.dtype) is not None:
        # a NumPy scalar object (np.float32(0.5)): a typed constant of its dtype, as compiled
        # code takes it (only the interpreter meets these objects here)
        return d.to_dtype(value.dtype)(value.item())
    raise TileTypeError(f"Expected a tile or a scalar for {what}, got {describe(value)}")


def is_tile_or_scalar(value):
    """True for a tile or a scalar of either executor (not an array, which has a dtype too).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import is_tile_or_scalar
    >>> is_tile_or_scalar(ct.int16(3)), is_tile_or_scalar(ct.int16)
    (True, False)
    """
    return hasattr(value, "dtype") and hasattr(value, "shape") and \
        hasattr(value, "is_constant") and not getattr(value, "is_tile_array", False)


def not_a_tile_or_scalar(value):
    """The ``TileTypeError`` of ``value`` where a tile or a scalar goes (a store's value, an
    operand of ``mma``), in words that name it alike in both executors.

    >>> from numba_tile.rules.core import not_a_tile_or_scalar
    >>> not_a_tile_or_scalar(None).message
    'Expected a tile or a scalar, got NoneType None'
    """
    return TileTypeError(f"Expected a tile or a scalar, got {describe(value)}")


def describe(value):
    """A short human description of a tile-code value, for error messages."""
    if isinstance(value, Loose):
        return f"constant {value.value!r}"
    if is_python_number(value):
        return f"constant {value!r}"
    if hasattr(value, "describe"):
        return value.describe()
    if isinstance(value, tuple):
        constants = _constant_items(value)
        if constants is not None:  # (Python's constants: the same repr in both executors)
            return f"tuple {constants!r}"
        # by its items' types: a tile's repr would differ by executor
        return f"tuple {type_name(value)}"
    return f"{type(value).__name__} {value!r}"


def _constant_items(value):
    """``value`` (a tuple) as Python constants (numbers, strings, None, such tuples), or None
    where an item is none of them."""
    items = []
    for item in value:
        if isinstance(item, Loose):
            item = item.value
        if isinstance(item, tuple):
            item = _constant_items(item)
            if item is None:
                return None
        elif not (item is None or isinstance(item, str) or is_python_number(item)):
            return None
        items.append(item)
    return tuple(items)


def type_name(value):
    """cuTile's name of the type of a value of tile code (a rule operand) in its messages:
    ``Tile[int32,()]`` for a constant ``1`` or a 0-d tile, ``Tile[float32,(16,)]``,
    ``Array[float32,(?,?):(?,?)]``, ``None``, ``DTypeSpec(dtype=<DType 'float16'>)`` for a
    dtype.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.core import type_name
    >>> type_name(Loose(1)), type_name(2.5), type_name(None)
    ('Tile[int32,()]', 'Tile[float32,()]', 'None')
    """
    if value is None:
        return "None"
    if isinstance(value, d.DType):
        return f"DTypeSpec(dtype=<DType '{value.name}'>)"
    named = getattr(value, "tile_type_name", None)
    if named is not None:
        return named
    if isinstance(value, Loose):
        value = value.value
    if isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum) and \
            not hasattr(value, "dtype"):
        return f"Tile[{loose_concrete_dtype(value)},()]"
    if isinstance(value, tuple):
        return f"Tuple[{','.join(map(type_name, value))}]"
    dtype = getattr(value, "dtype", None)
    if getattr(value, "is_tile_array", False) or (
            dtype is not None and hasattr(value, "ndim") and not hasattr(value, "shape")):
        unknown = _shape_text("?" * value.ndim)
        return f"Array[{dtype},{unknown}:{unknown}]"
    if dtype is not None and hasattr(value, "shape"):
        return f"Tile[{dtype},{_shape_text(tuple(value.shape))}]"
    return type(value).__name__


def _shape_text(items):
    return f"({','.join(map(str, items))}{',' if len(items) == 1 else ''})"


def check_dtype_call(dtype, count=1, keywords=()):
    """Rule of calling a dtype (``ct.int16(5)``, ``ct.float16(t)``, ``ct.float16()`` for zero)
    with ``count`` positional arguments and ``keywords``: at most one argument, and a
    sub-byte dtype has no scalars to make.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import check_dtype_call
    >>> check_dtype_call(ct.float4_e2m1fn)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Cannot call an object of type DTypeSpec(...): ...
    """
    if d.is_foreign_pointer(dtype):  # (a pointer comes from an array: Array.foreign_pointer)
        raise TileTypeError(f"Cannot call an object of type {type_name(dtype)}: {dtype} has no "
                            f"constants; a foreign pointer comes from Array.foreign_pointer")
    if dtype.bitwidth < 8:
        raise TileTypeError(f"Cannot call an object of type {type_name(dtype)}: {dtype} has no "
                            f"scalars (a sub-byte dtype); make its tiles with astype()")
    if keywords or count > 1:  # (none: zero, as cuTile's constructors, x=0)
        raise TileTypeError(f"{dtype}() takes at most one argument")


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


def constant_argument(value, op, parameter, kind):
    """The Python value of argument ``parameter`` of ``op``, which must be a compile-time
    constant (``kind`` names what it must be: "boolean", "string").

    >>> from numba_tile.rules.core import constant_argument
    >>> constant_argument(True, "sum", "keepdims", "boolean")
    True
    >>> constant_argument("yes", "sum", "keepdims", "boolean")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument "keepdims" of sum(): Expected a boolean ...
    """
    result = constant_value(value)
    article = "an" if kind[0] in "aeiou" else "a"
    if result is _NOT_CONSTANT:
        raise invalid_argument(op, parameter, f"Expected {article} {kind} constant, but given "
                                              f"value is not constant "
                                              f"({not_constant_detail(value)})")
    expected = _CONSTANT_KINDS.get(kind)
    if expected is not None and not isinstance(result, expected):
        raise invalid_argument(op, parameter, f"Expected {article} {kind} constant, got "
                                              f"{describe(value)}")
    return result


# the Python type of each kind of constant argument that names one
_CONSTANT_KINDS = {"boolean": bool, "string": str}


def require_int_constant(value, what):
    """A constant integer (bools excluded)."""
    result = require_constant(value, what)
    if isinstance(result, bool) or not isinstance(result, int):
        raise TileTypeError(f"{what} must be a constant integer, got {describe(value)}")
    return result


def is_power_of_two(n):
    return isinstance(n, int) and n > 0 and (n & (n - 1)) == 0


def dtype_argument(value, op, parameter="dtype"):
    """The :class:`~numba_tile.DType` that argument ``parameter`` of ``op`` names
    (``ct.float32``, ``np.float32``, ``"float32"``, ``torch.float16``), or ``TileTypeError``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import dtype_argument
    >>> dtype_argument("f16", "astype")
    float16
    >>> dtype_argument("foo", "full")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument "dtype" of full(): Expected a dtype ...
    """
    try:
        dtype = d.to_dtype(value)
    except TypeError:
        # (a tile by its description: its values are known in the interpreter alone)
        shown = value.describe() if hasattr(value, "describe") else repr(value)
        raise invalid_argument(op, parameter, f"Expected a dtype constant such as ct.float32, "
                                              f"got {shown}") from None
    if d.is_foreign_pointer(dtype):  # (no op makes or converts to addresses)
        raise invalid_argument(op, parameter, f"Expected a numeric dtype, got {dtype}")
    return dtype


def check_not_pointer(op, dtype):
    """``op`` (``astype``, ``bitcast``) converts numbers: a foreign pointer, an address, is
    none (``TileTypeError``).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.core import check_not_pointer
    >>> check_not_pointer("astype", ct.foreign_pointer_dtype(ct.int8))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: astype() of a foreign_pointer[int8] is not supported: ...
    """
    if d.is_foreign_pointer(dtype):
        raise TileTypeError(f"{op}() of a {dtype} is not supported: a foreign pointer is not "
                            f"a number")


#: The most elements a tile may have: a larger one is a ``TileValueError`` when the kernel is
#: typed, in both executors. Each thread holds its share of a tile in registers, so a tile
#: this large already spills, and compile time grows steeply past it (2**17 elements take
#: seconds, 2**24 minutes).
MAX_TILE_ELEMENTS = 2 ** 16


#: The most dimensions a tile may have, in both executors (the interpreter's NumPy arrays
#: hold 64 at most; no tile program needs a fraction of this).
MAX_TILE_RANK = 32


def check_tile_size(shape):
    """Raise ``TileValueError`` for a tile shape of more than :data:`MAX_TILE_ELEMENTS` or
    :data:`MAX_TILE_RANK` dimensions.

    >>> from numba_tile.rules.core import check_tile_size
    >>> check_tile_size((256, 256))
    >>> check_tile_size((2 ** 24,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: A tile of shape (16777216,) has 16777216 elements; ...
    """
    if len(shape) > MAX_TILE_RANK:
        raise TileValueError(f"A tile of {len(shape)} dimensions has too many; a tile may have "
                             f"at most {MAX_TILE_RANK}")
    count = product(shape)
    if count > MAX_TILE_ELEMENTS:
        raise TileValueError(f"A tile of shape {tuple(shape)} has {count} elements; a tile may "
                             f"have at most {MAX_TILE_ELEMENTS}")


def invalid_argument(op, parameter, problem):
    """The ``TileTypeError`` of an argument that ``op`` refuses, in cuTile's words: the
    parameter by name, or by position (an int, 1 for the first argument).

    >>> from numba_tile.rules.core import invalid_argument
    >>> invalid_argument("load", "shape", "Expected shape length to be 2, got 3").message
    'Invalid argument "shape" of load(): Expected shape length to be 2, got 3'
    """
    name = f"#{parameter}" if isinstance(parameter, int) else f'"{parameter}"'
    return TileTypeError(f"Invalid argument {name} of {op}(): {problem}")


def index_items(index, op, parameter="index"):
    """The entries of the tile index ``index`` (a tuple, or one entry) that ``op`` takes:
    each a signed integer, a constant or a run-time scalar, as cuTile requires of the
    ``index`` of a load, a store, ``extract`` and ``insert``. Else its ``TileTypeError``.

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.core import index_items
    >>> index_items((Loose(1), Loose(0)), "load")
    (Loose(1), Loose(0))
    >>> index_items((Loose(1.0),), "load")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument "index" of load(): Expected a tuple of signed integers or a single signed integer scalar, but item #0 has type Tile[float32,()]
    """
    items = index if isinstance(index, tuple) else (index,)
    for position, item in enumerate(items):
        if not _is_signed_integer_scalar(item):
            what = f"item #{position}" if isinstance(index, tuple) else "given value"
            raise invalid_argument(op, parameter, f"Expected a tuple of signed integers or a "
                                                  f"single signed integer scalar, but {what} "
                                                  f"has type {type_name(item)}")
    return items


def _is_signed_integer_scalar(item):
    value = item.value if isinstance(item, Loose) else item
    if is_python_number(value):
        return isinstance(value, int) and not isinstance(value, bool)
    dtype = getattr(item, "dtype", None)
    return isinstance(dtype, d.DType) and dtype.is_integral and dtype.is_signed and \
        not getattr(item, "is_tile_array", False) and tuple(getattr(item, "shape", ())) == ()


def not_a_scalar(shape, what):
    """The ``TileTypeError`` of a tile of ``shape`` (more than one element) used as ``what``
    (``"a condition"``, ``"an index"``); in words both executors share, since the
    compiler may have converted the tile to bool before it meets the rule (``t and u``).

    >>> from numba_tile.rules.core import not_a_scalar
    >>> print(not_a_scalar((4,), "a condition"))
    Expected a scalar value, but given value has type a tile of shape (4,): it cannot be used as a condition; only scalars (0-d tiles) can
    """
    return TileTypeError(f"Expected a scalar value, but given value has type a tile of shape "
                         f"{tuple(shape)}: it cannot be used as {what}; only scalars (0-d "
                         f"tiles) can")


def not_a_tile(op, value, position=1):
    """cuTile's ``TileTypeError`` for argument ``position`` of ``op`` that must be a tile
    (or a scalar) and is an array, a string, ..."""
    return invalid_argument(op, position, f"Expected a tile, but given value has type "
                                          f"{type_name(value)}")


def not_constant_detail(value):
    """What makes a value that should be a compile-time constant not one: for a tuple, its
    first element known only at run time."""
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            if constant_value(item) is _NOT_CONSTANT:
                return f"element #{i} is a {describe(item)}"
    return f"it is a {describe(value)}"


def tile_shape(shape, op, parameter="shape", allow_int=True, power_of_two=True, name="shape"):
    """Validate the constant tile shape that argument ``parameter`` of ``op`` gives: a tuple
    (or an int) of positive powers of two. A bad shape is a ``TileTypeError``, as in cuTile;
    one of too many elements a ``TileValueError`` (:func:`check_tile_size`). Other constant
    extents (a tiled view's ``traversal_steps``) are any positive ints: ``power_of_two``
    False, called ``name`` in the messages.

    >>> from numba_tile.rules.core import tile_shape
    >>> tile_shape(8, "arange", "size"), tile_shape((2, 4), "full")
    ((8,), (2, 4))
    >>> tile_shape((3,), "full")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument "shape" of full(): Dimension #0 of ...
    """
    value = constant_value(shape)
    if value is _NOT_CONSTANT:
        raise invalid_argument(op, parameter, f"Expected a constant integer tuple, but given "
                                              f"value is not constant "
                                              f"({not_constant_detail(shape)})")
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, tuple):
        raise invalid_argument(op, parameter, f"Expected a tuple of integers, but given value "
                                              f"has type {type_name(value)}")
    for i, dim in enumerate(value):
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise invalid_argument(op, parameter, f"Expected a tuple of integers, but element "
                                                  f"#{i} has type {type_name(dim)}")
    for i, dim in enumerate(value):
        if dim <= 0:
            raise invalid_argument(op, parameter, f"Dimension #{i} of {name} {value} is not "
                                                  f"positive")
        if power_of_two and not is_power_of_two(dim):
            raise invalid_argument(op, parameter, f"Dimension #{i} of {name} {value} is not a "
                                                  f"power of two")
    if power_of_two:  # (a tile's: steps, any positive ints, make none)
        check_tile_size(value)
    return value


def check_shape_rank(shape, ndim, op, parameter="shape", name="shape"):
    """A tile shape (or the extents ``name``) must have the rank of the array it is a tile
    of."""
    if len(shape) != ndim:
        raise invalid_argument(op, parameter, f"Expected {name} length to be {ndim}, got "
                                              f"{len(shape)}")


def normalize_axis(axis, ndim, what="axis"):
    """A constant axis in ``[-ndim, ndim)`` made non-negative.

    >>> from numba_tile.rules.core import normalize_axis
    >>> normalize_axis(-1, 3)
    2
    """
    axis = require_int_constant(axis, what)
    if not -ndim <= axis < ndim:
        raise TileTypeError(f"{what[:1].upper()}{what[1:]} {axis} is out of range for rank "
                            f"{ndim}")
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
