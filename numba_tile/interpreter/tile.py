"""The interpreter's tile: an immutable NumPy array with a tile dtype and a constness flag.

Operators dispatch to the public ops of :mod:`numba_tile.language`, so ``a + b`` in an
interpreted kernel follows exactly the same rule as ``ct.add(a, b)``.

>>> import numba_tile as ct
>>> t = ct.int16(5)
>>> t.dtype, t.shape, t.is_constant
(int16, (), True)
"""

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError
from ..promotion import Loose, check_constant_converts
from ..rules import operators
from ..rules.core import check_tile_size, not_a_tile
from ..rules.formatting import format_value
from . import context
from .conversion import convert
from .literals import LooseInt
from .printing import format_values


class Tile:
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
        return tuple(LooseInt(n) for n in self._values.shape)

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
        if not spec:
            return str(self)
        if self.ndim == 0:
            return format_value(self.constant_value(), spec)
        return format_values(self._values, self.dtype, lambda v: format_value(v.item(), spec))

    # -- scalar protocol (0-d tiles as Python values) ---------------------------------------
    def _require_scalar(self, what):
        if self.ndim != 0:
            raise TileTypeError(f"Cannot use a {self.describe()} as {what}; only scalars "
                                f"(0-d tiles) can")

    def __bool__(self):
        self._require_scalar("a condition")
        self._require_value("a boolean")
        return bool(self._values[()])

    def __index__(self):
        self._require_scalar("an index")
        if not (self.dtype.is_integral or self.dtype.is_bool):
            raise TileTypeError(f"Cannot use a {self.describe()} as an index; it is not an "
                                f"integer")
        self._require_value("an integer")
        return int(self._values[()])

    def __int__(self):
        self._require_scalar("an int")
        self._require_value("an integer")
        return int(self._values[()])

    def __float__(self):
        self._require_scalar("a float")
        self._require_value("a float")
        return float(self._values[()])

    def _op(self, fn):
        """The op of a method (without its tile-code check: a tile proves we are in tile
        code); inside a ``static_iter`` iterable, a run-time tile has no value to use."""
        if not self.is_compile_time:
            context.check_run_time(fn.__name__)
        return _raw(fn)

    def _require_value(self, conversion):
        """A run-time value has no value inside a ``static_iter`` iterable (as compiled)."""
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

    def __iter__(self):
        raise TileTypeError("Tiles cannot be iterated; use ct.extract or a reduction")

    __hash__ = None

    # -- methods (defined in language modules, attached below) ------------------------------
    def item(self):
        """The single element as a scalar: ``reshape(())``.

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(ct.sum(t).item(), ct.reshape(t, (4, 1))[:, None].shape)
        >>> ct.launch(0, (1,), show, ())
        6 (4, 1, 1)
        """
        from ..language.shapes import reshape
        return self._op(reshape)(self, ())

    def reshape(self, shape):
        """Row-major reshape (see :func:`numba_tile.reshape`).

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.reshape((4,)))
        >>> ct.launch(0, (1,), show, ())
        [0, 1, 2, 3]
        """
        from ..language.shapes import reshape
        return self._op(reshape)(self, shape)

    def permute(self, axes):
        """Permute the axes (see :func:`numba_tile.permute`).

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.permute((1, 0)))
        >>> ct.launch(0, (1,), show, ())
        [[0, 2], [1, 3]]
        """
        from ..language.shapes import permute
        return self._op(permute)(self, axes)

    def transpose(self, axis0=None, axis1=None):
        """Swap two axes (see :func:`numba_tile.transpose`).

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.transpose())
        >>> ct.launch(0, (1,), show, ())
        [[0, 2], [1, 3]]
        """
        from ..language.shapes import transpose
        return self._op(transpose)(self, axis0, axis1)

    def astype(self, dtype, *, rounding_mode=None):
        """Convert to another dtype (see :func:`numba_tile.astype`).

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.astype(ct.float16) / 2)
        >>> ct.launch(0, (1,), show, ())
        [[0.0, 0.5], [1.0, 1.5]]
        """
        from ..language.elementwise import astype
        return self._op(astype)(self, dtype, rounding_mode=rounding_mode)

    def extract(self, index, shape):
        """A sub-tile (see :func:`numba_tile.extract`).

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.extract((1, 0), (1, 2)))
        >>> ct.launch(0, (1,), show, ())
        [[2, 3]]
        """
        from ..language.shapes import extract
        return self._op(extract)(self, index, shape)

    def insert(self, index, value):
        """A copy with a sub-tile replaced (see :func:`numba_tile.insert`).

        >>> import numba_tile as ct
        >>> @ct.kernel
        ... def show():
        ...     t = ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2))
        ...     print(t.insert((0, 1), ct.full((2, 1), 9, ct.int32)))
        >>> ct.launch(0, (1,), show, ())
        [[0, 9], [2, 9]]
        """
        from ..language.shapes import insert
        return self._op(insert)(self, index, value)

    def __getitem__(self, key):
        from ..language.shapes import index_tile
        return self._op(index_tile)(self, key)


def _raw(fn):
    """The op without its tile-code check: tiles already prove we are in tile code."""
    return getattr(fn, "__tile_op__", fn)


def _binary(op, reflected=False):
    def method(self, other):
        from ..language import elementwise
        if not (self.is_compile_time and (not isinstance(other, Tile) or
                                          other.is_compile_time)):
            context.check_run_time(op)
        fn = _raw(getattr(elementwise, op))
        return fn(other, self) if reflected else fn(self, other)
    method.__name__ = op
    return method


def _unary(op):
    def method(self):
        from ..language import elementwise
        if not self.is_compile_time:
            context.check_run_time(op)
        return _raw(getattr(elementwise, op))(self)
    method.__name__ = op
    return method


for _op in operators.OPERATORS:
    setattr(Tile, _op.dunder, _unary(_op.name) if _op.arity == 1 else _binary(_op.name))
    if _op.reflected_dunder:
        setattr(Tile, _op.reflected_dunder, _binary(_op.name, reflected=True))


def _pos(self):
    return self


def _divmod(self, other):
    from ..language.elementwise import floordiv, mod
    return self._op(floordiv)(self, other), self._op(mod)(self, other)


def _rdivmod(self, other):
    from ..language.elementwise import floordiv, mod
    return self._op(floordiv)(other, self), self._op(mod)(other, self)


def _matmul(self, other):
    from ..language.matrix import matmul
    return self._op(matmul)(self, other)


def _rmatmul(self, other):
    from ..language.matrix import matmul
    return self._op(matmul)(other, self)


Tile.__pos__ = _pos
Tile.__divmod__ = _divmod
Tile.__rdivmod__ = _rdivmod
Tile.__matmul__ = _matmul
Tile.__rmatmul__ = _rmatmul


def make_constant(value, dtype):
    """A strictly typed constant scalar (what ``ct.int16(5)`` returns)."""
    if isinstance(value, Tile):
        return Tile(dtype, convert(value.values, value.dtype, dtype), constant=value.is_constant)
    if not isinstance(value, (bool, int, float)):
        raise TileTypeError(f"{dtype}() needs a number, got {type(value).__name__}")
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
        from ..promotion import loose_concrete_dtype
        return make_constant(value, loose_concrete_dtype(value))
    if isinstance(value, np.generic):
        return Tile(d.to_dtype(value.dtype), np.asarray(value), constant=True)
    raise TileTypeError(f"Expected a tile or a scalar, got {type(value).__name__}")


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
