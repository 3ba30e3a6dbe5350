"""Arithmetic promotion: the seed's category rules, its table, and loosely typed constants.

This is the single place where the common dtype of two operands is decided (seed 000/001,
"Arithmetic Promotion"). Both executors call it: the interpreter with the dtypes of host
values, the compiler with the dtypes of Numba types.

>>> import numba_tile as ct
>>> from numba_tile.promotion import common_dtype, Loose
>>> common_dtype(ct.int8, ct.int16), common_dtype(ct.uint8, Loose(3)), common_dtype(ct.int8, Loose(1.5))
(int16, uint8, float32)
"""

import math

import numpy as np

try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover
    _ml_dtypes = None

from . import dtypes as d
from .errors import TileTypeError, TileValueError

# The table of seed 000, restricted to pairs of the same category (the category rule decides
# the others, and the seed's table agrees with it). Each row lists the results for the columns
# in the order of the row's keys; the table is symmetric.
_ERR = None
_SAME_CATEGORY_TABLE = {
    # unsigned x unsigned: the wider one
    **{(a, b): (a if a.bitwidth >= b.bitwidth else b)
       for a in (d.uint8, d.uint16, d.uint32, d.uint64)
       for b in (d.uint8, d.uint16, d.uint32, d.uint64)},
    # signed x signed: the wider one
    **{(a, b): (a if a.bitwidth >= b.bitwidth else b)
       for a in (d.int8, d.int16, d.int32, d.int64)
       for b in (d.int8, d.int16, d.int32, d.int64)},
    # signed x unsigned: not supported, whatever the widths
    **{(a, b): _ERR
       for a in (d.uint8, d.uint16, d.uint32, d.uint64)
       for b in (d.int8, d.int16, d.int32, d.int64)},
    **{(b, a): _ERR
       for a in (d.uint8, d.uint16, d.uint32, d.uint64)
       for b in (d.int8, d.int16, d.int32, d.int64)},
    # floats: f16 < f32 < f64, bf16 < f32 < f64, f16 with bf16 is an error
    **{(a, b): (a if a.bitwidth >= b.bitwidth else b)
       for a in (d.float16, d.float32, d.float64)
       for b in (d.float16, d.float32, d.float64)},
    **{(a, b): (a if a.bitwidth >= b.bitwidth else b)
       for a in (d.bfloat16, d.float32, d.float64)
       for b in (d.bfloat16, d.float32, d.float64)},
    (d.float16, d.bfloat16): _ERR,
    (d.bfloat16, d.float16): _ERR,
    (d.bool_, d.bool_): d.bool_,
}


class Loose:
    """A loosely typed numeric constant (a literal, or arithmetic on literals).

    >>> from numba_tile.promotion import Loose
    >>> Loose(7).concrete_dtype(), Loose(2**40).concrete_dtype(), Loose(2**63).concrete_dtype()
    (int32, int64, uint64)
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Loose({self.value!r})"

    @property
    def category(self):
        return loose_category(self.value)

    def concrete_dtype(self):
        """The dtype a lone constant takes: int32/int64/uint64 by value, float32, ``bool_``."""
        return loose_concrete_dtype(self.value)


def loose_category(value):
    """The category of a Python constant: ``"bool"``, ``"int"`` or ``"float"``.

    >>> from numba_tile.promotion import loose_category
    >>> loose_category(True), loose_category(3), loose_category(0.5)
    ('bool', 'int', 'float')
    """
    if isinstance(value, bool):
        return d.BOOLEAN
    if isinstance(value, int):
        return d.INTEGRAL
    if isinstance(value, float):
        return d.FLOAT
    raise TileTypeError(f"{value!r} of type {type(value).__name__} is not a numeric constant")


def loose_concrete_dtype(value):
    """The concrete dtype picked for a loosely typed constant on its own.

    >>> from numba_tile.promotion import loose_concrete_dtype
    >>> loose_concrete_dtype(-1), loose_concrete_dtype(2**31), loose_concrete_dtype(1.0)
    (int32, int64, float32)
    """
    category = loose_category(value)
    if category == d.BOOLEAN:
        return d.bool_
    if category == d.FLOAT:
        return d.float32
    for candidate in (d.int32, d.int64, d.uint64):
        if integer_range(candidate)[0] <= value <= integer_range(candidate)[1]:
            return candidate
    raise wide_integer_error(value)


def is_wide_integer(value):
    """True for an int no integer dtype holds (beyond int64 and uint64): a loosely typed
    constant while it folds (``2**200 // 2**198`` is 4), :func:`wide_integer_error` where
    it meets a tile or becomes a value of its own.

    >>> from numba_tile.promotion import is_wide_integer
    >>> is_wide_integer(2 ** 64 - 1), is_wide_integer(2 ** 64), is_wide_integer(2.0 ** 70)
    (False, True, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and \
        not -2 ** 63 <= value < 2 ** 64


def wide_integer_error(value):
    """The ``TileValueError`` of an int no dtype holds met by tile code (both executors)."""
    return TileValueError(f"Integer constant {value} is out of range of any supported "
                          f"integer type (tile code integers fit in int64 or uint64)")


def truncated(value, dtype):
    """An integer constant as ``dtype``'s constructor takes it: the low bits ``dtype`` holds,
    as cuTile truncates (``ct.uint32(-3)`` is ``0xfffffffd``); anything else unchanged.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import truncated
    >>> truncated(-3, ct.uint32), truncated(300, ct.int8), truncated(300.0, ct.int8)
    (4294967293, 44, 300.0)
    >>> truncated(2 ** 64, ct.int64)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Integer constant 18446744073709551616 is out of range ...
    """
    if is_wide_integer(value):  # (no dtype holds it to take the low bits of, as cuTile says)
        raise wide_integer_error(value)
    if isinstance(value, bool) or not isinstance(value, int) or not dtype.is_integral:
        return value
    bits = 8 * dtype.itemsize
    value = int(value) & ((1 << bits) - 1)
    return value - (1 << bits) if dtype.is_signed and value >> (bits - 1) else value


def integer_range(dtype):
    """The inclusive ``(min, max)`` of an integer or bool dtype.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import integer_range
    >>> integer_range(ct.int8), integer_range(ct.uint16)
    ((-128, 127), (0, 65535))
    """
    if dtype.is_bool:
        return (0, 1)
    if dtype.is_signed:
        return (-(1 << (dtype.bitwidth - 1)), (1 << (dtype.bitwidth - 1)) - 1)
    return (0, (1 << dtype.bitwidth) - 1)


def float_max(dtype):
    """The largest finite value of a float dtype.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import float_max
    >>> float_max(ct.float16)
    65504.0
    """
    if dtype is d.tfloat32:
        return float_max(d.float32)
    if dtype is d.float8_e5m3fnu:
        return 114688.0
    if dtype.numpy is not None and _ml_dtypes is not None and dtype.bitwidth < 16 or \
            dtype is d.bfloat16:
        return float(_ml_dtypes.finfo(dtype.numpy).max)
    return float(np.finfo(dtype.storage).max)


def check_constant_converts(value, dtype):
    """Raise ``TileValueError`` if a constant does not convert to ``dtype``: as
    :func:`check_constant_fits`, except that a float into an integer dtype is truncated
    first (NaN and infinities saturate, as ``astype`` does).

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import check_constant_converts
    >>> check_constant_converts(1e20, ct.int32)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Integer constant 100000000000000000000 is out of range of int32
    """
    if is_wide_integer(value):  # (no dtype holds it, whatever dtype it would become)
        raise wide_integer_error(value)
    if isinstance(value, float) and dtype.is_integral:
        if math.isfinite(value):
            check_constant_fits(int(value), dtype)
    else:
        check_constant_fits(value, dtype)
    if dtype is d.float8_e8m0fnu and not isinstance(value, bool) and value < 0:
        # (a format of exponents only: no sign bit)
        raise TileValueError(f"Negative values cannot be represented in an unsigned float "
                             f"format ({value!r} to {dtype})")


def check_constant_fits(value, dtype):
    """Raise ``TileValueError`` if a constant cannot be represented in ``dtype``.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import check_constant_fits
    >>> check_constant_fits(-170, ct.int8)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Integer constant -170 is out of range of int8
    """
    if isinstance(value, bool) or dtype.is_bool:
        return
    if isinstance(value, int) and dtype.is_integral:
        low, high = integer_range(dtype)
        if not low <= value <= high:
            raise TileValueError(f"Integer constant {value} is out of range of {dtype}")
    elif dtype.is_float and math.isfinite(value) and abs(value) > float_max(dtype):
        kind = "Integer" if isinstance(value, int) else "Float"
        raise TileValueError(f"{kind} constant {value} is out of range of {dtype}")


def table_dtype(a, b):
    """The seed table's cell for two concrete dtypes, or ``None`` for ERR.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import table_dtype
    >>> table_dtype(ct.uint8, ct.int8), table_dtype(ct.int32, ct.float16)
    (None, float16)
    """
    if not (a.arithmetic and b.arithmetic):
        return a if a is b else None
    rank_a, rank_b = d._CATEGORY_RANK[a.category], d._CATEGORY_RANK[b.category]
    if rank_a != rank_b:
        return a if rank_a > rank_b else b
    return _SAME_CATEGORY_TABLE[(a, b)]


def _describe(operand):
    if isinstance(operand, Loose):
        return f"constant {operand.value!r}"
    return str(operand)


def common_dtype(a, b, *, op_name=None):
    """The common dtype of two operands, each a :class:`DType` or a :class:`Loose` constant.

    Raises ``TileTypeError`` for ERR cells and ``TileValueError`` when a constant does not fit
    the dtype it is promoted to. Two loose constants have no common dtype: fold them instead.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import common_dtype, Loose
    >>> common_dtype(ct.int16, Loose(2)), common_dtype(ct.bool_, Loose(2)), common_dtype(Loose(1.0), ct.int64)
    (int16, int32, float32)
    """
    a_loose, b_loose = isinstance(a, Loose), isinstance(b, Loose)
    if a_loose and b_loose:
        raise TileTypeError("Two loosely typed constants have no common dtype (they fold)")
    if a_loose or b_loose:
        const, typed = (a, b) if a_loose else (b, a)
        if not typed.arithmetic:
            where = f" in {op_name}" if op_name else ""
            raise TileTypeError(f"Implicit promotion of {typed} and {_describe(const)}{where} "
                                f"is not supported: {typed} is not an arithmetic dtype")
        const_rank = d._CATEGORY_RANK[const.category]
        typed_rank = d._CATEGORY_RANK[typed.category]
        result = const.concrete_dtype() if const_rank > typed_rank else typed
        check_constant_fits(const.value, result)
        return result
    result = table_dtype(a, b)
    if result is None:  # (cuTile's words, its spelling included, then where and what to do)
        where = f" in {op_name}" if op_name else ""
        if not (a.arithmetic or a.is_bool) or not (b.arithmetic or b.is_bool):
            raise TileTypeError(f"Implicit promotion of {a} and {b} is not supported as it "
                                f"involves restricted float dtypes. Please perform an explicit "
                                f"cast instead{where}: convert one operand with astype()")
        raise TileTypeError(f"Implicit promotion of {a} and {b} is not supported. Please "
                            f"perform an explict cast instead{where}: convert one operand "
                            f"with astype()")
    return result
