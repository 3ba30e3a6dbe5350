"""Conversions of the storage-only float dtypes: tfloat32, the float8 types (e4m3fn, e5m2,
e8m0fnu, e5m3fnu) and float4_e2m1fn.

These dtypes have no arithmetic of their own (``astype`` in and out, loads, stores, byte views
and matrix products). tfloat32 is kept in a float32 register with its low 13 mantissa bits
zero; the float8 types are bytes; a float4 is a byte holding its code in the low nibble. The
conversions are integer code on the bits that rounds exactly as the interpreter
(``ml_dtypes``, or :mod:`numba_tile.host.conversion`) does, on every architecture:
to nearest even; overflow gives NaN for e4m3fn and e5m3fnu (they have no infinity), infinity
for e5m2, the largest finite value for float4 (it has neither); an unsigned format makes a
negative value NaN unless it rounds to zero; e8m0fnu (powers of two only) rounds halfway
values up and has no zero.

>>> import numba_tile as ct
>>> from numba_tile.compiler.lowering.narrow_floats import is_narrow, FORMATS
>>> is_narrow(ct.float8_e4m3fn), is_narrow(ct.float16), FORMATS[ct.float8_e5m2].max_finite
(True, False, 123)
"""

from collections import namedtuple
from llvmlite import ir

from ... import dtypes as d
from ...enums import RoundingMode
from . import asm

I8, I32, F32, F64 = ir.IntType(8), ir.IntType(32), ir.FloatType(), ir.DoubleType()

# exponent bias, mantissa bits, the sign bit's value in the code (0: unsigned), largest finite
# encoding, encodings of overflow and NaN
Float8 = namedtuple("Float8", "bias mantissa sign_bit max_finite overflow nan")
FORMATS = {
    d.float8_e4m3fn: Float8(bias=7, mantissa=3, sign_bit=0x80, max_finite=0x7E, overflow=0x7F,
                            nan=0x7F),
    d.float8_e5m2: Float8(bias=15, mantissa=2, sign_bit=0x80, max_finite=0x7B, overflow=0x7C,
                          nan=0x7E),
    d.float8_e5m3fnu: Float8(bias=15, mantissa=3, sign_bit=0, max_finite=0xFE, overflow=0xFF,
                             nan=0xFF),
    # no NaN: ml_dtypes makes NaN the code 8 with the sign bit flipped (so -NaN is +0)
    d.float4_e2m1fn: Float8(bias=1, mantissa=1, sign_bit=0x8, max_finite=0x7, overflow=0x7,
                            nan=0x8),
}
NARROW = (d.tfloat32, d.float8_e8m0fnu, *FORMATS)


def is_narrow(dtype):
    return dtype in NARROW


def storage_type(dtype):
    """float32 for tfloat32, a byte for the float8 and float4 types."""
    return F32 if dtype is d.tfloat32 else I8


def to_float32(builder, value, dtype):
    """The float32 value of a narrow float (exact)."""
    if dtype is d.tfloat32:
        return value
    byte = builder.zext(value, I32)
    if dtype is d.float8_e5m2:  # the top byte of a float16, converted exactly
        half = builder.trunc(builder.shl(byte, I32(8)), ir.IntType(16))
        return asm.emit(builder, asm.convert(None, "f32", "f16", "f", "h"), [half], F32)
    if dtype is d.float8_e8m0fnu:
        return _e8m0_to_float32(builder, byte)
    fmt = FORMATS[dtype]
    if fmt.sign_bit:
        sign_position = fmt.sign_bit.bit_length() - 1
        sign = builder.shl(builder.and_(byte, I32(fmt.sign_bit)), I32(31 - sign_position))
        magnitude = builder.and_(byte, I32(fmt.sign_bit - 1))
    else:
        sign, magnitude = I32(0), byte
    exponent = builder.lshr(magnitude, I32(fmt.mantissa))
    normal = builder.or_(builder.shl(builder.add(magnitude, I32((127 - fmt.bias)
                                                                << fmt.mantissa)),
                                     I32(23 - fmt.mantissa)), sign)
    # subnormal: mantissa * 2 ** (1 - bias - mantissa bits)
    scaled = builder.fmul(builder.sitofp(magnitude, F32),
                          F32(2.0 ** (1 - fmt.bias - fmt.mantissa)))
    subnormal = builder.or_(builder.bitcast(scaled, I32), sign)
    bits = builder.select(builder.icmp_unsigned("==", exponent, I32(0)), subnormal, normal)
    if dtype is not d.float4_e2m1fn:  # (float4 has no NaN)
        nan = builder.or_(I32(0x7FC00000), sign)
        bits = builder.select(builder.icmp_unsigned("==", magnitude, I32(fmt.nan)), nan, bits)
    return builder.bitcast(bits, F32)


def _e8m0_to_float32(builder, byte):
    """2 ** (code - 127): the code is float32's exponent field; code 0, 2 ** -127, is a
    float32 subnormal; 0xFF is NaN."""
    bits = builder.select(builder.icmp_unsigned("==", byte, I32(0)), I32(0x00400000),
                          builder.shl(byte, I32(23)))
    bits = builder.select(builder.icmp_unsigned("==", byte, I32(0xFF)), I32(0x7FC00000), bits)
    return builder.bitcast(bits, F32)


def tfloat32_directed(builder, value, rounding_mode):
    """A float32 value rounded into tfloat32 toward zero (``RZ``: the low 13 mantissa bits
    dropped) or to nearest, ties away from zero (``RA``: half a tfloat32 unit added to the
    magnitude first, which carries into the exponent, up to infinity, as rounding does).
    Infinities and NaNs keep their bits."""
    bits = builder.bitcast(value, I32)
    magnitude = builder.and_(bits, I32(0x7FFFFFFF))
    finite = builder.icmp_unsigned("<", magnitude, I32(0x7F800000))
    if rounding_mode is RoundingMode.RA:
        bits = builder.add(bits, I32(1 << 12))  # (the sign bit is not reached: finite values)
    rounded = builder.and_(bits, I32(~0x1FFF & 0xFFFFFFFF))
    return builder.bitcast(builder.select(finite, rounded, builder.bitcast(value, I32)), F32)


def from_float32(builder, value, dtype):
    """A float32 value rounded into a narrow float (to nearest even but for e8m0fnu)."""
    bits = builder.bitcast(value, I32)
    magnitude = builder.and_(bits, I32(0x7FFFFFFF))
    finite = builder.icmp_unsigned("<", magnitude, I32(0x7F800000))
    if dtype is d.tfloat32:
        rounded = _round_bits(builder, bits, 13)
        return builder.bitcast(builder.select(finite, rounded, bits), F32)
    if dtype is d.float8_e8m0fnu:
        return _e8m0_from_float32(builder, bits, magnitude)
    fmt = FORMATS[dtype]
    shift = 23 - fmt.mantissa
    # normal in the narrow format: round the mantissa, then rebias the exponent
    normal = builder.sub(builder.lshr(_round_bits(builder, magnitude, shift), I32(shift)),
                         I32((127 - fmt.bias) << fmt.mantissa))
    # subnormal (or zero): the value in units of the smallest subnormal, rounded
    units = builder.fmul(builder.bitcast(magnitude, F32),
                         F32(2.0 ** (fmt.bias - 1 + fmt.mantissa)))
    rounded_units = asm.emit(builder, asm.convert("rni", "f32", "f32", "f", "f"), [units], F32)
    subnormal = builder.fptosi(rounded_units, I32)
    smallest_normal = (127 - fmt.bias + 1) << 23
    code = builder.select(builder.icmp_unsigned(">=", magnitude, I32(smallest_normal)),
                          normal, subnormal)
    code = builder.select(builder.icmp_unsigned(">", code, I32(fmt.max_finite)),
                          I32(fmt.overflow), code)
    is_nan = builder.icmp_unsigned(">", magnitude, I32(0x7F800000))
    code = builder.select(builder.and_(builder.not_(finite), builder.not_(is_nan)),
                          I32(fmt.overflow), code)  # infinity
    negative = builder.lshr(bits, I32(31))
    if fmt.sign_bit:
        sign = builder.mul(negative, I32(fmt.sign_bit))
        code = builder.or_(code, sign)
        # NaN keeps its sign; float4 has none (see FORMATS): its code 8, the sign flipped
        nan = (builder.xor if dtype is d.float4_e2m1fn else builder.or_)(I32(fmt.nan), sign)
    else:  # unsigned: a negative value is NaN, unless it rounds to zero
        nan = I32(fmt.nan)
        below_zero = builder.and_(builder.icmp_unsigned("!=", negative, I32(0)),
                                  builder.icmp_unsigned("!=", code, I32(0)))
        code = builder.select(below_zero, nan, code)
    code = builder.select(is_nan, nan, code)
    return builder.trunc(code, I8)


def _e8m0_from_float32(builder, bits, magnitude):
    """A positive float32 to the nearest power of two, halfway values up (as ``ml_dtypes``):
    the exponent field, plus one where the mantissa is at least one half; a subnormal is
    2 ** -127 up to that value, 2 ** -126 above it. Zero, negatives, infinity, NaN and values
    that round past 2 ** 127 are NaN."""
    exponent = builder.lshr(magnitude, I32(23))
    mantissa = builder.and_(bits, I32(0x7FFFFF))
    up = builder.zext(builder.icmp_unsigned(">=", mantissa, I32(0x400000)), I32)
    subnormal_up = builder.zext(builder.icmp_unsigned(">", mantissa, I32(0x400000)), I32)
    code = builder.select(builder.icmp_unsigned("==", exponent, I32(0)), subnormal_up,
                          builder.add(exponent, up))
    invalid = builder.or_(builder.icmp_unsigned("!=", builder.lshr(bits, I32(31)), I32(0)),
                          builder.icmp_unsigned("==", magnitude, I32(0)))
    invalid = builder.or_(invalid, builder.icmp_unsigned(">=", code, I32(0xFF)))
    return builder.trunc(builder.select(invalid, I32(0xFF), code), I8)


def _round_bits(builder, bits, dropped):
    """``bits`` rounded to nearest even at bit ``dropped`` (the low bits then are zero)."""
    half_minus_one = I32((1 << (dropped - 1)) - 1)
    odd = builder.and_(builder.lshr(bits, I32(dropped)), I32(1))
    rounded = builder.add(builder.add(bits, half_minus_one), odd)
    return builder.and_(rounded, I32(~((1 << dropped) - 1) & 0xFFFFFFFF))
