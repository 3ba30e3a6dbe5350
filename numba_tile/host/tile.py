"""The host tile: an immutable NumPy array with a tile dtype and a constness flag, what the
ops of :mod:`numba_tile.language` compute on in the interpreter (and what the compiler's
static evaluation holds as a constant).

Host values sit below the language: the ops import this module, never the reverse. The
methods and operators that call ops (``t.reshape(...)``, ``a + b``) are attached to
:class:`Tile` where each op is defined (:func:`numba_tile.language.tile_methods.tile_method`),
so ``a + b`` in an interpreted kernel follows exactly the same rule as ``ct.add(a, b)``. This
module hands calling a dtype (``ct.int16(5)``, a constant scalar) down to
:mod:`numba_tile.dtypes` (:func:`~numba_tile.dtypes.set_scalar_maker`).

>>> import numba_tile as ct
>>> t = ct.int16(5)
>>> t.dtype, t.shape, t.is_constant
(int16, (), True)
"""

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError
from ..promotion import Loose, check_constant_converts, loose_concrete_dtype, truncated
from ..rules.calls import numpy_call_error
from ..rules.core import check_dtype_call, check_not_pointer, check_tile_size, describe, \
    not_a_scalar, not_a_tile, not_a_tile_or_scalar
from ..rules.formatting import check_printable, format_value
from ..rules.objects import ObjectTuple, TileObject
from . import context
from .conversion import convert
from .printing import format_values
from .scalars import LooseInt


class Tile(TileObject):
    """A host tile. Users never construct one directly: ops and loads make them.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.arange(4, dtype=ct.int32)
    ...     print(t.shape, t.dtype, t.ndim, t * 2)
    >>> ct.launch(0, (1,), show, ())
    (4,) int32 1 [0, 2, 4, 6]
    """

    __slots__ = ("dtype", "_values", "is_constant")
    __array_priority__ = 1000  # NumPy scalars on the left defer to our operators

    def __init__(self, dtype, values, constant=False):
        values = np.asarray(values)
        check_tile_size(values.shape)  # whatever op made it (the rules check most before)
        if values.dtype != dtype.storage:
            values = values.astype(dtype.storage)
        values.flags.writeable = False
        self.dtype = dtype
        self._values = values
        self.is_constant = constant

    # -- data model --------------------------------------------------------------------------
    @property
    def shape(self):
        """The tile's shape, a tuple of loosely typed constant ints.

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.shape)
        >>> ct.launch(0, (1,), show, ())
        (2, 2)
        """
        return ObjectTuple(LooseInt(n) for n in self._values.shape)

    @property
    def ndim(self):
        """The tile's rank, a loosely typed constant int.

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.ndim)
        >>> ct.launch(0, (1,), show, ())
        2
        """
        return LooseInt(self._values.ndim)

    @property
    def values(self):
        """The elements as a read-only NumPy array in the dtype's storage type.

        >>> import numba_tile as ct
        >>> ct.int16(7).values
        array(7, dtype=int16)
        """
        return self._values

    def constant_value(self):
        """The Python value of a constant scalar.

        >>> import numba_tile as ct
        >>> ct.float16(0.5).constant_value()
        0.5
        """
        value = self._values[()]
        if self.dtype.is_bool:
            return bool(value)
        if self.dtype.is_integral:
            return int(value)
        return float(value)

    def describe(self):
        """How error messages name this value.

        >>> import numba_tile as ct
        >>> ct.int16(7).describe()
        'constant int16 scalar 7'
        """
        if self.ndim == 0:
            if self.is_constant:
                return f"constant {self.dtype} scalar {format_values(self._values, self.dtype)}"
            return f"run-time {self.dtype} scalar"
        return f"{self.dtype} tile of shape {self.shape}"

    def __repr__(self):
        if context.in_static_evaluation():  # as the compiler sees it: no values yet
            return f"<tile[{self.dtype}, {tuple(self._values.shape)}]>"
        return format_values(self._values, self.dtype)

    __str__ = __repr__

    def __format__(self, spec):
        check_printable(self)  # (f"{p}" of a foreign pointer: no format)
        if not spec:
            return str(self)
        if self.ndim == 0:
            return format_value(self.constant_value(), spec)
        return format_values(self._values, self.dtype, lambda v: format_value(v.item(), spec))

    # -- scalar protocol (0-d tiles as Python values) ---------------------------------------
    def require_scalar(self, what):
        """Raise cuTile's error where this tile (of more than one element) is used as
        ``what`` (``"a condition"``), which a 0-d tile alone can be.

        >>> import numba_tile as ct
        >>> ct.int16(5).require_scalar("a condition")  # a scalar: nothing to say
        """
        if self.ndim != 0:
            raise not_a_scalar(self.shape, what)

    def __bool__(self):
        self.require_scalar("a condition")
        self._require_value("a boolean")
        return bool(self._values[()])

    def __index__(self):
        self.require_scalar("an index")
        if not (self.dtype.is_integral or self.dtype.is_bool):
            raise TileTypeError(f"Cannot use a {self.describe()} as an index; it is not an "
                                f"integer")
        self._require_value("an integer")
        return int(self._values[()])

    def __int__(self):
        self.require_scalar("an int")
        self._require_value("an integer")
        return int(self._values[()])

    def __float__(self):
        self.require_scalar("a float")
        self._require_value("a float")
        return float(self._values[()])

    def _op(self, fn):
        """The op of a method (without its tile-code check: a tile proves we are in tile
        code); inside a ``static_iter`` iterable, a run-time tile has no value to use."""
        if not self.is_compile_time:
            context.check_run_time(fn.__name__)
        return context.unchecked(fn)

    def _require_value(self, conversion):
        """A run-time value has no value inside a ``static_iter`` iterable (as compiled); a
        foreign pointer converts to no number (compiled, ``bool(p)`` is ``astype``'s)."""
        check_not_pointer("astype", self.dtype)
        if not self.is_compile_time:
            context.check_run_time(None, conversion)

    @property
    def is_compile_time(self):
        """True for a value the compiler knows too: a constant scalar (it holds no constant
        tiles of more elements, such as ``ct.arange(4, dtype=ct.int32)`` is here).

        >>> import numba_tile as ct
        >>> ct.int16(3).is_compile_time
        True
        """
        return self.is_constant and self.ndim == 0

    def __len__(self):
        if self.ndim == 0:
            raise TileTypeError("len() of a scalar")
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        # what NumPy asks of np.exp(t), np.sum(t)... (ops with NumPy scalars or arrays on the
        # left defer to the tile's own operators: __array_priority__)
        raise numpy_call_error()

    def __pos__(self):  # unary plus is no op of its own
        return self

    __hash__ = None


def make_constant(value, dtype):
    """A strictly typed constant scalar (what ``ct.int16(5)`` returns)."""
    if isinstance(value, Tile):
        return Tile(dtype, convert(value.values, value.dtype, dtype), constant=value.is_constant)
    if not isinstance(value, (bool, int, float)):
        raise TileTypeError(f"{dtype}() needs a number, a scalar or a tile, got "
                            f"{describe(value)}")
    check_constant_converts(value, dtype)
    source = d.float64 if isinstance(value, float) else (
        d.bool_ if isinstance(value, bool) else None)
    if source is None:  # exact integers: convert without a float round trip
        if dtype.is_float:
            return Tile(dtype, convert(np.array(float(value)), d.float64, dtype), constant=True)
        return Tile(dtype, np.array(value).astype(dtype.storage) if dtype.is_integral
                    else np.array(value != 0), constant=True)
    return Tile(dtype, convert(np.array(value, source.storage), source, dtype), constant=True)


def to_tile(value):
    """A tile for a tile-code value: tiles pass through, Python numbers become constants."""
    if isinstance(value, Tile):
        return value
    if isinstance(value, Loose):
        value = value.value
    if isinstance(value, (bool, int, float)):
        return make_constant(value, loose_concrete_dtype(value))
    if isinstance(value, np.generic):
        return Tile(d.to_dtype(value.dtype), np.asarray(value), constant=True)
    raise not_a_tile_or_scalar(value)


def tile_argument(value, op, position=1):
    """Argument ``position`` of ``op`` as a tile (see :func:`to_tile`): anything but a tile or
    a number is cuTile's ``TileTypeError`` naming the argument."""
    try:
        return to_tile(value)
    except TileTypeError:
        raise not_a_tile(op, value, position) from None


def values_as(value, dtype):
    """The stored values of an operand converted to ``dtype`` (constants exactly)."""
    if isinstance(value, Loose):
        value = value.value
    if isinstance(value, Tile):
        return convert(value.values, value.dtype, dtype)
    return make_constant(value, dtype).values


def _dtype_call(dtype, *values, **keywords):
    """``dtype(value)``: a strictly typed constant scalar; an integer keeps the low bits the
    dtype holds, as cuTile truncates."""
    check_dtype_call(dtype, len(values), tuple(keywords))
    value = values[0] if values else 0  # (ct.float16() is zero, as in cuTile)
    if not isinstance(value, (bool, int, float, np.number, np.bool_, Tile)):  # (a string...)
        raise TileTypeError(f"{dtype}() needs a number, a scalar or a tile, got "
                            f"{describe(value)}")
    return make_constant(truncated(value, dtype), dtype)


d.set_scalar_maker(_dtype_call)
