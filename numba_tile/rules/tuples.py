"""The rules of tuples in tile code, as cuTile has them: a tuple is a compile-time structure,
indexed by constant integers (or slices), compared with ``==``/``!=`` element by element, and
searched with ``in`` item by item; neither tuples nor tiles take item assignment.

The rules take abstract operands (rule operands, tuples of them for tuples) and say what is
compared: a constant ``bool`` where that is known while compiling, else the list of run-time
element equalities, each a pair of *paths* (item indices into the nested operands). Both
executors compute the equalities of those paths their own way.

>>> from numba_tile.promotion import Loose
>>> from numba_tile.rules.tuples import equalities
>>> equalities((Loose(1), Loose(2)), (Loose(1), Loose(2)), "Tuple comparison")
True
>>> import numba_tile as ct
>>> class Scalar:  # a run-time int32 scalar, as the rules see it
...     shape, dtype, is_constant = (), ct.int32, False
>>> equalities((Scalar(), Loose(2)), (Loose(0), Loose(2)), "Tuple comparison")
[((0,), (0,))]
"""

import enum

from .. import dtypes as d
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose
from .core import constant_value, describe, is_python_number

_NOT_CONSTANT = object()


def check_index(index, *, run_time=False):
    """Raise ``TileTypeError`` unless ``index`` can index a tuple: a constant integer or a
    slice (a constant scalar tile of an integer dtype does too). A list argument, indexed at
    run time, takes a run-time integer scalar (or 0-d tile) too (``run_time``).

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.tuples import check_index
    >>> check_index(Loose(1))
    >>> check_index(Loose(1.0))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Tuple indices must be integers or slices, not float
    """
    value = index.value if isinstance(index, Loose) else index
    if isinstance(value, slice):
        if any(bound is not None and constant_value(bound, _NOT_CONSTANT) is _NOT_CONSTANT
               for bound in (value.start, value.stop, value.step)):
            raise TileTypeError("Tuple indices must be constant, got a slice with run-time "
                                "bounds")
        return
    if is_python_number(value) and not isinstance(value, float):
        return
    for kind in (float, tuple, str, type(None)):  # (a loosely typed float subclasses float)
        if isinstance(value, kind):
            raise TileTypeError(f"Tuple indices must be integers or slices, not "
                                f"{kind.__name__}")
    dtype = getattr(index, "dtype", None)
    if not _is_scalar(index) or not isinstance(dtype, d.DType) or \
            not (dtype.is_integral or dtype.is_bool):
        raise TileTypeError(f"Tuple indices must be integers or slices, not "
                            f"{describe(index)}")
    if not (index.is_constant or run_time):
        raise TileTypeError(f"Tuple indices must be constant, got a {describe(index)}")


def starred_error(value):
    """The ``TileTypeError`` of ``*value`` in a call or a tuple (a rule operand), or None
    where ``value`` is a tuple.

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.tuples import starred_error
    >>> print(starred_error(Loose(3)))
    Expected a tuple after *, got a constant 3
    """
    if isinstance(value, tuple):
        return None
    return TileTypeError(f"Expected a tuple after *, got a {describe(value)}")


def no_item_assignment(type_text):
    """cuTile's ``TileTypeError`` of ``v[i] = x`` where ``v`` (of the type cuTile names
    ``type_text``: None, a number, a dtype) holds no items.

    >>> from numba_tile.rules.tuples import no_item_assignment
    >>> print(no_item_assignment("None"))
    Object of type None does not support item assignment
    """
    return TileTypeError(f"Object of type {type_text} does not support item assignment")


def immutable_error(target):
    """The ``TileTypeError`` of item assignment to ``target`` (a rule operand), or None for a
    value that may take it (an object with its own ``__setitem__``).

    >>> from numba_tile.rules.tuples import immutable_error
    >>> print(immutable_error((1, 2)))
    Tuples are immutable: item assignment is not supported.
    """
    if isinstance(target, tuple):
        return TileTypeError("Tuples are immutable: item assignment is not supported.")
    if _is_tile(target):
        return TileTypeError("Tiles are immutable: item assignment is not supported. Make a "
                             "new tile (ct.where, ct.insert)")
    if getattr(target, "is_tile_array", False):
        return TileTypeError("Arrays do not support item assignment. Use store() or scatter() "
                             "instead.")
    return None


def not_a_tuple_to_unpack(type_text, loc=None):
    """cuTile's ``TileTypeError`` of unpacking (``a, b = v``) a value that is no tuple (a
    number, None), whose type cuTile names ``type_text``.

    >>> from numba_tile.rules.tuples import not_a_tuple_to_unpack
    >>> print(not_a_tuple_to_unpack("Tile[int32,()]"))
    Expected a tuple, but given value has type Tile[int32,()]: it cannot be unpacked
    """
    return TileTypeError(f"Expected a tuple, but given value has type {type_text}: it cannot "
                         f"be unpacked", loc)


def unpack_error(expected, got):
    """The ``TileValueError`` of unpacking a tuple of ``got`` items into ``expected``
    targets (``a, b, c = t``), or None where they match.

    >>> from numba_tile.rules.tuples import unpack_error
    >>> print(unpack_error(3, 2))
    Too few values to unpack (expected 3, got 2)
    """
    if expected == got:
        return None
    return TileValueError(f"Too {'few' if got < expected else 'many'} values to unpack "
                          f"(expected {expected}, got {got})")


def comparison(symbol, left, right):
    """What ``left <symbol> right`` compares where an operand is a tuple: only ``==`` and
    ``!=`` are supported, element by element (see :func:`equalities`; ``!=`` is its
    negation).

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.tuples import comparison
    >>> comparison("!=", (Loose(1),), (Loose(1), Loose(2)))
    True
    >>> comparison("<", (Loose(1),), (Loose(2),))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Operator '<' is not supported for tuples
    """
    if symbol not in ("==", "!="):
        raise TileTypeError(f"Operator '{symbol}' is not supported for tuples")
    found = equalities(left, right, "Tuple comparison")
    return found if not isinstance(found, bool) else found == (symbol == "==")


def equalities(left, right, what, path=((), ())):
    """``left == right`` of two values of tile code: a constant ``bool``, or the list of
    run-time equalities ``(left path, right path)`` that must all hold. Tuples are equal when
    their lengths and all their elements are; an element must be a scalar or a constant
    (``TileTypeError`` naming ``what`` otherwise)."""
    if isinstance(left, tuple) or isinstance(right, tuple):
        if not (isinstance(left, tuple) and isinstance(right, tuple)) or \
                len(left) != len(right):
            return False
        found = []
        for i, (a, b) in enumerate(zip(left, right)):
            equal = equalities(a, b, what, (path[0] + (i,), path[1] + (i,)))
            if equal is False:
                return False
            if equal is not True:
                found += equal
        return found or True
    for value in (left, right):
        _check_element(value, what)
    a, b = _constant(left), _constant(right)
    if a is not _NOT_CONSTANT and b is not _NOT_CONSTANT:
        return bool(a == b) if type(a) is type(b) or _is_number(a) and _is_number(b) \
            else False
    if not (_is_number(a) or a is _NOT_CONSTANT) or not (_is_number(b) or b is _NOT_CONSTANT):
        return False  # a string, dtype, None... is no number
    return [path]


def contains(needle, items):
    """What ``needle in items`` (a tuple) compares: the items are tried in order, as
    ``needle == item``; one equal as a constant ends the search (later items are not looked
    at). A constant ``bool``, or the list of run-time alternatives, each a list of
    equalities ``(needle path, item path)`` (an item path starts with the item's index).
    ``TileTypeError`` for a needle or an item (reached) that is not a scalar.

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.tuples import contains
    >>> contains(Loose(2), (Loose(1), Loose(2), "anything"))
    True
    >>> contains(Loose(5), ())
    False
    """
    what = "'in'"
    if not isinstance(needle, tuple):
        _check_element(needle, what)
    alternatives = []
    for i, item in enumerate(items):
        equal = equalities(needle, item, what, ((), (i,)))
        if equal is True:
            return True
        if equal is not False:
            alternatives.append(equal)
    return alternatives or False


def _check_element(value, what):
    if _is_scalar(value) or _constant(value) is not _NOT_CONSTANT:
        return
    if what == "'in'":
        raise TileTypeError(f"'in' requires scalar operands, got a {describe(value)}")
    if _is_tile(value):
        raise TileTypeError(f"{what} is not supported for non-scalar elements, got a "
                            f"{describe(value)}")
    raise TileTypeError(f"{what} is not supported for elements of type {describe(value)}")


def _is_tile(value):
    return hasattr(value, "is_constant") and hasattr(value, "shape") and \
        hasattr(value, "dtype")


def _is_scalar(value):
    return isinstance(value, Loose) or is_python_number(value) or \
        _is_tile(value) and tuple(value.shape) == ()


def _constant(value):
    """The Python value of a constant scalar (numbers, strings, dtypes, enum members, None),
    else ``_NOT_CONSTANT``."""
    if isinstance(value, (str, d.DType, enum.Enum)) or value is None:
        return value
    if not _is_scalar(value):
        return _NOT_CONSTANT
    return constant_value(value, _NOT_CONSTANT)


def _is_number(value):
    return is_python_number(value)
