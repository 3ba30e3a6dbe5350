"""Conversions of the storage-only float dtypes: tfloat32, float8_e4m3fn and float8_e5m2.

These dtypes have no arithmetic of their own (``astype`` in and out, loads, stores and
``mma``). tfloat32 is kept in a float32 register with its low 13 mantissa bits zero; the
float8 types are bytes. The conversions are integer code on the bits that rounds to nearest
even exactly as the interpreter (``ml_dtypes``) does, on every architecture: overflow gives
NaN for e4m3fn (it has no infinity) and infinity for e5m2, NaN keeps its sign.

>>> import numba_tile as ct
>>> from numba_tile.compiler.lowering.narrow_floats import is_narrow, FORMATS
>>> is_narrow(ct.float8_e4m3fn), is_narrow(ct.float16), FORMATS[ct.float8_e5m2].max_finite
(True, False, 123)
"""

from collections import namedtuple
from llvmlite import ir

from ... import dtypes as d
from ...enums import RoundingMode
from ...errors import TileUnsupportedFeatureError
from ..hardware import asm

I8, I32, F32, F64 = ir.IntType(8), ir.IntType(32), ir.FloatType(), ir.DoubleType()

# exponent bias, mantissa bits, largest finite encoding, encodings of overflow and NaN
Float8 = namedtuple("Float8", "bias mantissa max_finite overflow nan")
FORMATS = {
    d.float8_e4m3fn: Float8(bias=7, mantissa=3, max_finite=0x7E, overflow=0x7F, nan=0x7F),
    d.float8_e5m2: Float8(bias=15, mantissa=2, max_finite=0x7B, overflow=0x7C, nan=0x7E),
}
NARROW = (d.tfloat32, *FORMATS)


def is_narrow(dtype):
    return dtype in NARROW


def storage_type(dtype):
    """float32 for tfloat32, a byte for the float8 types."""
    return F32 if dtype is d.tfloat32 else I8


def convert(context, builder, value, src, dst, rounding_mode=None):
    """Convert between a narrow float dtype and any dtype, through float32."""
    from . import arithmetic  # (arithmetic converts through this module: a cycle)
    if src is dst:
        return value
    if is_narrow(dst) and rounding_mode not in (None, _rounding_modes().RN):
        raise TileUnsupportedFeatureError(f"astype to {dst} rounds to nearest even only; "
                                          f"rounding_mode={rounding_mode} is not supported")
    if is_narrow(src):
        value = to_float32(builder, value, src)
        if not is_narrow(dst):
            return arithmetic.convert(context, builder, value, d.float32, dst, rounding_mode)
    elif src is d.float64:  # rounded to odd first: the second rounding is then exact
        value = arithmetic._f64_to_f32_odd(builder, value)
    else:
        value = arithmetic.convert(context, builder, value, src, d.float32)
    return from_float32(builder, value, dst)


def _rounding_modes():
    return RoundingMode


def to_float32(builder, value, dtype):
    """The float32 value of a narrow float (exact)."""
    if dtype is d.tfloat32:
        return value
    byte = builder.zext(value, I32)
    if dtype is d.float8_e5m2:  # the top byte of a float16
        from .arithmetic import to_compute  # (a cycle, as above)
        return to_compute(builder, builder.trunc(builder.shl(byte, I32(8)), ir.IntType(16)),
                          d.float16)
    fmt = FORMATS[dtype]
    sign = builder.shl(builder.and_(byte, I32(0x80)), I32(24))
    magnitude = builder.and_(byte, I32(0x7F))
    exponent = builder.lshr(magnitude, I32(fmt.mantissa))
    normal = builder.or_(builder.shl(builder.add(magnitude, I32((127 - fmt.bias)
                                                                << fmt.mantissa)),
                                     I32(23 - fmt.mantissa)), sign)
    # subnormal: mantissa * 2 ** (1 - bias - mantissa bits)
    scaled = builder.fmul(builder.sitofp(magnitude, F32),
                          F32(2.0 ** (1 - fmt.bias - fmt.mantissa)))
    subnormal = builder.or_(builder.bitcast(scaled, I32), sign)
    bits = builder.select(builder.icmp_unsigned("==", exponent, I32(0)), subnormal, normal)
    nan = builder.or_(I32(0x7FC00000), sign)
    bits = builder.select(builder.icmp_unsigned("==", magnitude, I32(fmt.nan)), nan, bits)
    return builder.bitcast(bits, F32)


def from_float32(builder, value, dtype):
    """A float32 value rounded to nearest even into a narrow float."""
    bits = builder.bitcast(value, I32)
    magnitude = builder.and_(bits, I32(0x7FFFFFFF))
    finite = builder.icmp_unsigned("<", magnitude, I32(0x7F800000))
    if dtype is d.tfloat32:
        rounded = _round_bits(builder, bits, 13)
        return builder.bitcast(builder.select(finite, rounded, bits), F32)
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
    code = builder.select(is_nan, I32(fmt.nan), code)
    code = builder.select(builder.and_(builder.not_(finite), builder.not_(is_nan)),
                          I32(fmt.overflow), code)  # infinity
    sign = builder.lshr(builder.and_(bits, I32(0x80000000)), I32(24))
    return builder.trunc(builder.or_(code, sign), I8)


def _round_bits(builder, bits, dropped):
    """``bits`` rounded to nearest even at bit ``dropped`` (the low bits then are zero)."""
    half_minus_one = I32((1 << (dropped - 1)) - 1)
    odd = builder.and_(builder.lshr(bits, I32(dropped)), I32(1))
    rounded = builder.add(builder.add(bits, half_minus_one), odd)
    return builder.and_(rounded, I32(~((1 << dropped) - 1) & 0xFFFFFFFF))
