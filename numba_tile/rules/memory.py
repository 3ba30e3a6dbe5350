"""Rules of loads, stores, tiled views and the grid queries.

>>> from numba_tile.rules.memory import normalize_order, view_tile_count
>>> normalize_order("F", 3, "load"), view_tile_count(4, 2, 1)
((2, 1, 0), 3)
"""

from .. import dtypes as d
from ..enums import MemoryOrder, MemoryScope, PaddingMode
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose, check_constant_fits, common_dtype
from .global_values import global_value_error
from .core import (Spec, check_shape_rank, constant_argument, constant_value, describe,
                   index_items, invalid_argument, is_python_number, is_tile_or_scalar,
                   normalize_axis, operand_dtype, require_constant, tile_shape, type_name)


def require_array(array, what="array"):
    if not getattr(array, "is_tile_array", False):
        # an array of the host that tile code reached other than as an argument (a closure
        # reading a global one): cuTile's error for the read
        error = global_value_error(array)
        if error is not None:
            raise error
        raise TileTypeError(f"{what} must be a global array (a kernel argument), got "
                            f"{describe(array)}")
    return array


#: The memory orders each of cuTile's memory operations takes, by cuTile's name of the
#: operation (the name its messages give): a load may acquire, a store release, an atomic both;
#: WEAK (plain accesses) is no order for an atomic. Listed in the order cuTile's messages list.
MEMORY_ORDERS = {
    "tile_load": (MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.WEAK),
    "tile_store": (MemoryOrder.RELAXED, MemoryOrder.RELEASE, MemoryOrder.WEAK),
    "tile_atomic_cas": (MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.RELEASE,
                        MemoryOrder.ACQ_REL),
    "tile_atomic_rmw": (MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.RELEASE,
                        MemoryOrder.ACQ_REL),
}
#: The scopes they take (CLUSTER is cuTile's lower-level language's only).
MEMORY_SCOPES = (MemoryScope.NONE, MemoryScope.BLOCK, MemoryScope.DEVICE, MemoryScope.SYS)


def check_memory_constants(op, memory_order, memory_scope):
    """``memory_order`` and ``memory_scope`` of ``op`` (a load, a store, an atomic) must be
    constants of ``ct.MemoryOrder`` and ``ct.MemoryScope``: else a ``TileTypeError``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.memory import check_memory_constants
    >>> check_memory_constants("load", "weak", ct.MemoryScope.NONE)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: memory_order of load() must be a ct.MemoryOrder ...
    """
    if not isinstance(memory_order, MemoryOrder):
        raise TileTypeError(f"memory_order of {op}() must be a ct.MemoryOrder constant, got "
                            f"{describe(memory_order)}")
    if not isinstance(memory_scope, MemoryScope):
        raise TileTypeError(f"memory_scope of {op}() must be a ct.MemoryScope constant, got "
                            f"{describe(memory_scope)}")


def check_memory_order_and_scope(operation, op, memory_order, memory_scope):
    """cuTile's rule of the ``memory_order`` and ``memory_scope`` of ``op`` (the function
    called: ``"load"``, ``"atomic_add"``), which cuTile names ``operation`` (a key of
    ``MEMORY_ORDERS``): constants, an order and a scope the operation takes, a scope exactly
    where the order is not WEAK. Else a ``TileTypeError`` in cuTile's words.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.memory import check_memory_order_and_scope
    >>> check_memory_order_and_scope("tile_load", "load", ct.MemoryOrder.ACQUIRE,
    ...                              ct.MemoryScope.DEVICE)
    >>> check_memory_order_and_scope("tile_load", "load", ct.MemoryOrder.RELEASE,
    ...                              ct.MemoryScope.DEVICE)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid memory order for tile_load. Got MemoryOrder.RELEASE, expected one of MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.WEAK
    """
    check_memory_constants(op, memory_order, memory_scope)
    orders = MEMORY_ORDERS[operation]
    if memory_order not in orders:
        raise TileTypeError(f"Invalid memory order for {operation}. Got {memory_order}, "
                            f"expected one of {', '.join(str(o) for o in orders)}")
    if memory_scope not in MEMORY_SCOPES:
        raise TileTypeError(f"Invalid memory scope for {operation}. Got {memory_scope}, "
                            f"expected one of {', '.join(str(s) for s in MEMORY_SCOPES)}")
    if memory_order is MemoryOrder.WEAK and memory_scope is not MemoryScope.NONE:
        raise TileTypeError(f"{operation} with WEAK memory ordering cannot specify a memory "
                            f"scope")
    if memory_order is not MemoryOrder.WEAK and memory_scope is MemoryScope.NONE:
        raise TileTypeError(f"{operation} with {memory_order.name} memory ordering requires a "
                            f"memory scope")


def memory_options(op, memory_order, memory_scope):
    """Check ``memory_order``/``memory_scope`` of ``op`` (``"load"`` or ``"store"``) as
    :func:`check_memory_order_and_scope` does.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.memory import memory_options
    >>> memory_options("store", ct.MemoryOrder.RELAXED, ct.MemoryScope.NONE)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: tile_store with RELAXED memory ordering requires a memory scope
    """
    check_memory_order_and_scope(f"tile_{op}", op, memory_order, memory_scope)


#: The range of the ``latency`` hint of loads and stores (cuTile's: 1, low, to 10, high).
LATENCY_RANGE = (1, 10)


def check_hints(op, check_bounds=True, latency=None, allow_tma=None):
    """cuTile's requirements of the hints a memory operation ``op`` (``"load()"``) takes:
    ``check_bounds`` a constant bool, ``latency`` None or a constant int in 1..10,
    ``allow_tma`` None or a constant bool. A hint is compile-time: a run-time value (or a
    string, a float) is a ``TileTypeError``, an int out of range a ``TileValueError``.

    >>> from numba_tile.rules.memory import check_hints
    >>> check_hints("load()", True, 3, False)
    >>> check_hints("load()", latency=100)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Latency must be between 1 and 10, got 100: the latency ...
    """
    function = op.rstrip("()")
    bounds = constant_value(check_bounds, _RUN_TIME)
    if not isinstance(bounds, bool):
        raise _hint_error(function, "check_bounds", "a boolean", check_bounds, bounds,
                          "a constant bool")
    value = constant_value(latency, _RUN_TIME)
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _hint_error(function, "latency", "an integer", latency, value,
                              f"None or a constant int between {LATENCY_RANGE[0]} and "
                              f"{LATENCY_RANGE[1]}")
        if not LATENCY_RANGE[0] <= value <= LATENCY_RANGE[1]:
            raise TileValueError(f"Latency must be between {LATENCY_RANGE[0]} and "
                                 f"{LATENCY_RANGE[1]}, got {value}: the latency of {op}, "
                                 f"1 (low) to 10 (high)")
    value = constant_value(allow_tma, _RUN_TIME)
    if value is not None and not isinstance(value, bool):
        raise _hint_error(function, "allow_tma", "a boolean", allow_tma, value,
                          "None or a constant bool")


_RUN_TIME = object()


def _hint_error(function, parameter, kind, operand, value, takes):
    """The ``TileTypeError`` of a hint that is not the constant it must be, in cuTile's words
    ("Expected a boolean constant, but given value is not constant"), then what it takes."""
    problem = "is not constant" if value is _RUN_TIME else f"has type {type_name(operand)}"
    return invalid_argument(function, parameter, f"Expected {kind} constant, but given value "
                                                 f"{problem}: it must be {takes}, got "
                                                 f"{_described(operand, value)}")


def _described(operand, value):
    """The description of a hint: of its Python value where it is a constant (a tuple of
    constants reads the same in both executors)."""
    return describe(operand if value is _RUN_TIME or not isinstance(value, tuple) else value)


def slice_axis(axis, ndim):
    return normalize_axis(axis, ndim)


#: What ``Array.slice`` requires of its bounds; the compiled check (a device assertion, as the
#: bounds are run-time values there) reports the same words.
SLICE_BOUNDS = "needs 0 <= start <= stop <= length, and start < length unless length is 0"


def check_constant_slice_bounds(start, stop):
    """cuTile's ``TileTypeError`` for the bounds of ``Array.slice`` known before the kernel
    runs (constants; None for a bound known only at run time, which
    :func:`check_slice_bounds` checks then).

    >>> from numba_tile.rules.memory import check_constant_slice_bounds
    >>> check_constant_slice_bounds(2, None)
    >>> check_constant_slice_bounds(3, 2)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Slice stop must be greater than or equal to start
    """
    if start is not None and start < 0:
        raise TileTypeError("Slice start must be non-negative")
    if stop is not None and stop < 0:
        raise TileTypeError("Slice stop must be non-negative")
    if start is not None and stop is not None and stop < start:
        raise TileTypeError("Slice stop must be greater than or equal to start")


def check_slice_bounds(axis, start, stop, length=None):
    """Raise TileValueError unless ``start:stop`` is a valid slice of an axis of ``length``.
    A bound or length of None is not known yet (a run-time value at compile time): only what
    the known ones decide is checked.

    >>> from numba_tile.rules.memory import check_slice_bounds
    >>> check_slice_bounds(0, 2, 6, 10)
    >>> check_slice_bounds(0, 6, 2)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: slice(6, 2) is out of bounds for axis 0: needs 0 <= start <= stop <= length, and start < length unless length is 0
    """
    known = [v for v in (start, stop, length) if v is not None]
    ok = all(v >= 0 for v in known)
    if start is not None and stop is not None:
        ok = ok and start <= stop
    if length is not None:
        ok = ok and (stop is None or stop <= length) and \
            (start is None or start < length or length == 0)
    if not ok:
        where = f" of length {length}" if length is not None else ""
        raise TileValueError(f"slice({_bound(start)}, {_bound(stop)}) is out of bounds for "
                             f"axis {axis}{where}: {SLICE_BOUNDS}")


def _bound(value):
    return "<run-time>" if value is None else value


def index_value(value, what):
    """Validate an integer index entry (a constant or a run-time integer scalar); return it."""
    const = constant_value(value, None)
    if isinstance(const, bool) or (const is not None and not isinstance(const, int)):
        raise TileTypeError(f"{what} must be an integer, got {describe(value)}")
    if const is None:
        dtype = getattr(value, "dtype", None)
        if not (isinstance(dtype, d.DType) and dtype.is_integral and value.shape == ()):
            raise TileTypeError(f"{what} must be an integer scalar, got {describe(value)}")
    return value


def tile_index(index, ndim, indexed="array", op="load"):
    """Validate ``ndim`` integer tile coordinates (an int is accepted for 1-d) into the
    ``indexed`` (an array or a tiled view) that ``op`` takes (signed integers, as cuTile
    requires: :func:`~numba_tile.rules.core.index_items`); return them as a tuple."""
    items = index_items(index, op)
    if len(items) != ndim:
        raise TileTypeError(f"Index size {len(items)} does not match the {indexed} rank {ndim}")
    return tuple(items)


def normalize_order(order, ndim, op):
    """The ``order`` argument of ``op``: ``"C"`` (identity), ``"F"`` (reversed) or a
    permutation tuple of ``ndim`` axes."""
    order = require_constant(order, "order")
    if order == "C":
        return tuple(range(ndim))
    if order == "F":
        return tuple(reversed(range(ndim)))
    if not isinstance(order, tuple):
        raise invalid_argument(op, "order", f"Expected 'C' or 'F', got {order!r}")
    try:
        axes = tuple(normalize_axis(a, ndim) for a in order)
    except TileTypeError as error:
        raise invalid_argument(op, "order", error.message) from None
    if sorted(axes) != list(range(ndim)):
        raise invalid_argument(op, "order", f"Expected a permutation of {ndim} axes, got "
                                            f"{order!r}")
    return axes


def padding(mode):
    mode = require_constant(mode, "padding_mode")
    if not isinstance(mode, PaddingMode):
        raise TileTypeError(f"padding_mode must be a ct.PaddingMode, got {mode!r}")
    return mode


def load(array, index, shape, order, padding_mode):
    """Rule of ``load``: returns ``(result_spec, tile_shape_in_array_rank, order, index)``."""
    require_array(array)
    ndim = array.ndim
    index = tile_index(index, ndim)  # (first, as cuTile checks it)
    full = tile_shape(shape, "load")
    result_shape = full
    if full == ():
        full = (1,) * ndim
    check_shape_rank(full, ndim, "load")
    order = normalize_order(order, ndim, "load")
    array_padding(padding_mode, array)
    return Spec(array.dtype, result_shape), full, order, index


def array_padding(padding_mode, array):
    """The padding mode of a load from ``array``: NaN and infinities need a float array."""
    mode = padding(padding_mode)
    if mode not in (PaddingMode.UNDETERMINED, PaddingMode.ZERO, PaddingMode.NEG_ZERO) \
            and not array.dtype.is_float:
        raise TileValueError(f"padding_mode {mode.name} needs a floating-point array, got a "
                             f"{array.describe()}")
    return mode


def check_writable(array, op):
    """Raise ``TileTypeError`` where ``op`` (a store, a scatter, an atomic) writes into a
    read-only array (a NumPy array with ``writeable=False``, a JAX array).

    >>> from numba_tile.rules.memory import check_writable
    >>> class ReadOnly:
    ...     read_only = True
    >>> check_writable(ReadOnly(), "store")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: store() writes into a read-only array (a NumPy array ...
    """
    if getattr(array, "read_only", False) is True:
        raise TileTypeError(f"{op}() writes into a read-only array (a NumPy array with "
                            f"writeable=False, a JAX array...); pass a writable array "
                            f"(np.copy(x), say)")


def store(array, index, tile, order):
    """Rule of ``store``: returns ``(tile_shape_in_array_rank, order, index)``. ``tile`` (a
    tile, a scalar or a :class:`Loose` constant) converts to the array's dtype implicitly,
    as cuTile stores it (:func:`implicit_cast`)."""
    require_array(array)
    check_writable(array, "store")
    index = tile_index(index, array.ndim, op="store")  # (first, as cuTile checks it)
    implicit_cast(tile if isinstance(tile, Loose) else operand_dtype(tile), array.dtype,
                  "Stored tile is incompatible with array's dtype:")
    ndim = array.ndim
    shape = tuple(getattr(tile, "shape", ()))  # a Python number is a scalar
    if shape == ():
        shape = (1,) * ndim
    elif len(shape) != ndim:
        raise TileValueError(f"Cannot store a tile of rank {len(shape)} into an array of rank "
                             f"{ndim}")
    return shape, normalize_order(order, ndim, "store"), index


def tiled_view(array, shape, padding_mode, traversal_steps):
    """Rule of ``Array.tiled_view``: returns ``(tile_shape, steps, padding_mode)``."""
    shape = tile_shape(shape, "tiled_view", "tile_shape")
    check_shape_rank(shape, array.ndim, "tiled_view", "tile_shape")
    if traversal_steps is None:
        steps = shape
    else:  # (as cuTile: constant positive ints, one per axis, of any size)
        steps = tile_shape(traversal_steps, "tiled_view", "traversal_steps",
                           power_of_two=False, name="traversal_steps")
        check_shape_rank(steps, array.ndim, "tiled_view", "traversal_steps",
                         name="traversal_steps")
    return shape, tuple(steps), padding(padding_mode)


def num_tiles(array, axis, shape, order):
    """Rule of ``num_tiles``: returns ``(tile_shape, order, axis)``."""
    require_array(array)
    shape = tile_shape(shape, "num_tiles")
    check_shape_rank(shape, array.ndim, "num_tiles")
    return shape, normalize_order(order, array.ndim, "num_tiles"), slice_axis(axis, array.ndim)


def view_tile_count(length, tile, step):
    """Tiles along one axis: origins ``k * step`` until a tile reaches the end."""
    if length <= 0:
        return 0
    covering = -(-max(length - tile, 0) // step) + 1
    return min(covering, -(-length // step))


def view_origin(index, shape, steps, op="load"):
    coords = tile_index(index, len(shape), "tiled view", op)
    return tuple(int(c) * s for c, s in zip(coords, steps))


def view_store_tile(view, tile):
    """Rule of ``TiledView.store``: a tile of the view's tile shape (or a scalar, a
    :class:`Loose` constant), converted to the array's dtype implicitly as cuTile does."""
    check_writable(view.array, "TiledView.store")
    implicit_cast(tile if isinstance(tile, Loose) else operand_dtype(tile), view.array.dtype,
                  "Stored tile is incompatible with tiled view's dtype:")
    if tuple(getattr(tile, "shape", ())) not in ((), tuple(view.tile_shape)):
        raise TileValueError(f"Cannot store a tile of shape {tuple(tile.shape)} into a tiled "
                             f"view with tiles {view.tile_shape}")


def grid_axis(axis, op="bid"):
    """The grid axis (0, 1 or 2, a constant) that ``op`` (``bid``, ``num_blocks``) takes."""
    axis = constant_argument(axis, op, "axis", "integer")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise invalid_argument(op, "axis", f"Expected an integer constant, but given value "
                                           f"has type {type_name(axis)}")
    if axis not in (0, 1, 2):
        raise TileTypeError(f"Axis must be 0, 1, or 2, but {axis} was given.")
    return axis


def assume_divisible_by(x, divisor):
    """Rule of ``assume_divisible_by(x, divisor)``: ``x`` an integer scalar (or constant),
    ``divisor`` a positive integer constant; a constant ``x`` must be divisible. Returns the
    divisor.

    >>> from numba_tile.rules.memory import assume_divisible_by
    >>> assume_divisible_by(256, 128)
    128
    """
    divisor = require_constant(divisor, "divisor")
    if isinstance(divisor, Loose):
        divisor = divisor.value
    if isinstance(divisor, bool) or not isinstance(divisor, int) or divisor <= 0:
        raise TileValueError(f"assume_divisible_by() needs a positive integer constant "
                             f"divisor, got {describe(divisor)}")
    value = constant_value(x, None)
    # (a constant arrives as a Python number in the interpreter, as a Loose in the compiler)
    number = x.value if isinstance(x, Loose) else x
    if not (is_python_number(number) or is_tile_or_scalar(x)) or \
            isinstance(number, (bool, float)) or \
            (hasattr(x, "dtype") and not x.dtype.is_integral) or \
            tuple(getattr(x, "shape", ())) != ():  # (None, a string, an array: no scalar)
        raise TileTypeError(f"assume_divisible_by() needs an integer scalar, got {describe(x)}")
    if isinstance(value, int) and value % divisor:
        raise TileValueError(f"assume_divisible_by(): the constant {value} is not divisible by "
                             f"{divisor}")
    return divisor


def implicit_cast(source, target, what):
    """``target`` if a value of ``source`` (a dtype or a :class:`Loose` constant) converts to
    it implicitly, as cuTile's stores, scatters and atomics take values: the promotion of the
    two is ``target``. A constant must fit (``TileValueError``); other casts are a
    ``TileTypeError`` (in cuTile's words, after ``what``).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.memory import implicit_cast
    >>> implicit_cast(ct.int8, ct.float32, "scatter()")
    float32
    >>> implicit_cast(ct.float32, ct.float16, "Stored tile is incompatible with array's dtype:")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Stored tile is incompatible with array's dtype: cannot ...
    """
    if source == target:
        return target
    if isinstance(source, Loose) and target is d.bool_ and not isinstance(source.value, float) \
            and source.value in (0, 1):
        return target  # False/True, 0/1 (the default padding) into a bool array
    if isinstance(source, Loose) and not target.arithmetic and not target.is_bool:
        check_constant_fits(source.value, target)  # a constant into a float8 array
        return target
    try:
        ok = common_dtype(source, target) == target
    except TileTypeError:
        ok = False
    if not ok:
        name = f"constant {source.value!r}" if isinstance(source, Loose) else str(source)
        raise TileTypeError(f"{what} cannot implicitly cast {name} to {target}; convert it "
                            f"with astype()")
    return target
