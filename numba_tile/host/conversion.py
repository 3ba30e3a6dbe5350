"""Value conversions between dtypes for host tiles, with rounding modes and flush-to-zero.

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.host.conversion import convert
>>> convert(np.array([1.5, -2.7, 1e10]), ct.float64, ct.int32)
array([          1,          -2, 2147483647], dtype=int32)
"""

import numpy as np

from .. import dtypes as d
from ..enums import RoundingMode
from ..promotion import integer_range

_DIRECTED = {RoundingMode.RZ, RoundingMode.RM, RoundingMode.RP}


def _round_mantissa(values, mantissa_bits):
    """Round float32 values to ``mantissa_bits`` explicit mantissa bits (ties to even)."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    drop = 23 - mantissa_bits
    half = np.uint64(1 << (drop - 1))
    lsb = (bits >> np.uint64(drop)) & np.uint64(1)
    rounded = (bits + half - np.uint64(1) + lsb) >> np.uint64(drop) << np.uint64(drop)
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(values), out, np.asarray(values, np.float32))


def _round_e5m3fnu(values):
    """Round to float8_e5m3fnu (unsigned, 5 exponent and 3 mantissa bits, NaN, no inf)."""
    v = np.asarray(values, np.float64)
    with np.errstate(all="ignore"):
        exponent = np.floor(np.log2(np.maximum(np.abs(v), 2.0 ** -17)))
        exponent = np.maximum(exponent, -14)  # subnormals share the smallest exponent
        quantum = 2.0 ** (exponent - 3)
        out = np.round(v / quantum) * quantum
    out = np.where(out > 114688.0, np.nan, out)
    out = np.where(v < 0, np.where(out == 0, 0.0, np.nan), out)
    # unsigned, one NaN: no -0.0 and no signed NaN (as the bytes the GPU holds)
    return np.where(np.isnan(out), np.nan, np.where(out == 0, 0.0, out)).astype(np.float32)


def _storage_round(values, dtype):
    """Cast float64/float32 values into ``dtype``'s storage, rounding to nearest even."""
    if dtype is d.tfloat32:
        return _round_mantissa(np.asarray(values, np.float32), 10)
    if dtype is d.float8_e5m3fnu:
        return _round_e5m3fnu(values)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf is the answer
        return np.asarray(values).astype(dtype.storage)


def wide_type(dtype, rounding_mode=None):
    """The NumPy type to compute ``dtype`` results in before rounding: float64, or the
    platform's long double for float64 results with a directed rounding mode."""
    if dtype is d.float64 and rounding_mode in _DIRECTED:
        return np.longdouble
    return np.float64


def round_float(values, dtype, rounding_mode=None):
    """Round wide ``values`` (float64 or long double) to float ``dtype`` with a rounding
    mode (default RN, ties to even; RA ties away from zero).

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.host.conversion import round_float
    >>> ties = np.array([1.0, 3.0, -1.0]) * 2.0 ** -11 + np.array([1.0, 1.0, -1.0])
    >>> round_float(ties, ct.float16, ct.RoundingMode.RA).tolist()
    [1.0009765625, 1.001953125, -1.0009765625]
    """
    if dtype is d.tfloat32 and rounding_mode in (RoundingMode.RZ, RoundingMode.RA):
        return _tfloat32_directed(values, rounding_mode)
    if rounding_mode is RoundingMode.RA and dtype.numpy in (np.float16, np.float32):
        return _by_quantum(values, dtype, rounding_mode)
    if dtype is d.bfloat16 and rounding_mode in _DIRECTED:  # (NumPy has no nextafter of it)
        return _by_quantum(values, dtype, rounding_mode)
    result = _storage_round(values, dtype)
    if rounding_mode in _DIRECTED and dtype.numpy in (np.float16, np.float32, np.float64):
        exact = np.asarray(values)
        back = result.astype(exact.dtype)
        if rounding_mode is RoundingMode.RZ:
            wrong = np.abs(back) > np.abs(exact)
            target = np.zeros_like(result)
        elif rounding_mode is RoundingMode.RM:
            wrong = back > exact
            target = np.full_like(result, -np.inf)
        else:
            wrong = back < exact
            target = np.full_like(result, np.inf)
        result = np.where(wrong, np.nextafter(result, target), result).astype(result.dtype)
    return result


def _tfloat32_directed(values, rounding_mode):
    """Round into tfloat32 toward zero (its low 13 float32 mantissa bits dropped, after a
    conversion to float32 toward zero) or to nearest, ties away (half a unit added to the
    magnitude first, carrying into the exponent)."""
    exact = round_float(values, d.float32, RoundingMode.RZ)  # (exact where RA is allowed)
    bits = exact.view(np.uint32).astype(np.uint64)
    if rounding_mode is RoundingMode.RA:
        bits = bits + np.uint64(1 << 12)
    rounded = (bits & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(exact), rounded, exact)


def _by_quantum(values, dtype, rounding_mode):
    """Round to float16, bfloat16 or float32 with a directed mode or RA (to nearest, ties
    away from zero), by the quantum of each value's binade (the smallest one's for
    subnormals): exact in float64, whose 53 bits hold every quotient here. Beyond the largest
    finite value a rounding toward it stops there; the others give infinity."""
    info = np.finfo(dtype.numpy)
    largest = float(info.max)
    v = np.asarray(values, np.float64)
    with np.errstate(all="ignore"):
        _, exponent = np.frexp(v)
        quantum = np.ldexp(1.0, np.maximum(exponent - 1, int(info.minexp)) - int(info.nmant))
        units = np.abs(v) / quantum
        if rounding_mode is RoundingMode.RA:
            units = np.floor(units + 0.5)
        elif rounding_mode is RoundingMode.RZ:
            units = np.floor(units)
        else:  # toward -inf or +inf: the magnitude's floor or ceiling by the sign
            up = (v > 0) == (rounding_mode is RoundingMode.RP)
            units = np.where(up, np.ceil(units), np.floor(units))
        out = np.copysign(units * quantum, v)
        if rounding_mode is not RoundingMode.RA:
            toward_zero = np.abs(out) > largest
            if rounding_mode is RoundingMode.RZ:
                out = np.where(toward_zero, np.copysign(largest, v), out)
            else:
                stop = (v > 0) != (rounding_mode is RoundingMode.RP)
                out = np.where(toward_zero & stop, np.copysign(largest, v), out)
        out = np.where(np.isfinite(v), out, v)
        return out.astype(dtype.storage)


def flush_subnormals(values, dtype):
    """Replace subnormal values of a float32 result by zero of the same sign."""
    if dtype is not d.float32:
        return values
    tiny = np.finfo(np.float32).tiny
    return np.where(np.abs(values) < tiny, np.copysign(0.0, values), values).astype(values.dtype)


def convert(values, src, dst, rounding_mode=None):
    """Convert an array stored as ``src`` into ``dst``'s storage with tile-model semantics.

    Float to integer truncates toward zero and saturates (NaN becomes 0), as the GPU's
    ``cvt.rzi`` does; integer narrowing wraps; anything to bool is ``!= 0``.
    """
    values = np.asarray(values)
    if src is dst and rounding_mode is None:
        return values
    if dst.is_bool:
        return values.astype(np.float64 if src.is_float else values.dtype) != 0
    if dst.is_integral:
        if src.is_float:
            low, high = integer_range(dst)
            v = values.astype(np.float64)
            if rounding_mode in (None, RoundingMode.RZI, RoundingMode.RZ):
                v = np.trunc(v)
            elif rounding_mode is RoundingMode.RM:
                v = np.floor(v)
            elif rounding_mode is RoundingMode.RP:
                v = np.ceil(v)
            elif rounding_mode is RoundingMode.RA:  # ties away from zero
                v = np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))
            else:
                v = np.rint(v)
            v = np.where(np.isnan(v), 0, v)
            # clip in float64, then fix the ends exactly (2**63 is not representable below)
            out = np.clip(v, float(low), float(high))
            result = np.where(out >= float(high), 0, out).astype(dst.storage)
            return np.where(out >= float(high), dst.storage.type(high), result)
        return values.astype(dst.storage)
    # floating-point destination
    wide = values.astype(np.float64)
    return round_float(wide, dst, rounding_mode)

