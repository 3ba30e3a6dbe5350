"""One element of an elementwise op, as LLVM IR: conversions, arithmetic, math functions.

Everything here works on single LLVM values in their *storage* form (halves and bfloat16 as
i16 bits, bools as i1) and on tile dtypes, so that tiles (register by register) and scalars
share one implementation. The semantics are the interpreter's:

* float arithmetic is correctly rounded to the result dtype; halves and bfloat16 are
  computed in float32 (or float64 where a directed rounding mode must be honoured exactly);
* ``rounding_mode`` maps to PTX's ``.rz/.rm/.rp`` instructions and conversions;
  ``APPROX``/``FULL`` pick the fast PTX forms (``div.approx``, ``ex2.approx``, ...);
* ``flush_to_zero`` flushes float32 subnormal inputs and results;
* float to integer conversion saturates and turns NaN into 0 (PTX ``cvt`` does that);
* integer ``//`` and ``%`` round toward negative infinity, give 0 for a zero divisor, and
  shifts by the bit width or more give 0 (or -1 for a negative value shifted right).

>>> import numba_tile as ct
>>> from numba_tile.compiler.lowering.arithmetic import compute_dtype
>>> compute_dtype(ct.float16), compute_dtype(ct.int8)
(float32, int8)
"""

import math

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.typing import signature

from ... import dtypes as d
from ...enums import RoundingMode
from ...errors import TileUnsupportedFeatureError
from ...rules.operators import OPERATORS
from ...host.bit_patterns import to_bits
from ...host.conversion import convert as convert_values
from . import asm, narrow_floats

I1 = ir.IntType(1)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()

DIRECTED = {RoundingMode.RZ: "rz", RoundingMode.RM: "rm", RoundingMode.RP: "rp"}

Options = namedtuple("Options", "rounding_mode flush_to_zero propagate_nan",
                     defaults=(None, False, False))


def storage_type(dtype):
    """The LLVM type of one element of ``dtype`` in registers.

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.lowering.arithmetic import storage_type
    >>> str(storage_type(ct.bfloat16)), str(storage_type(ct.bool_))
    ('i16', 'i1')
    """
    if dtype is d.bool_:
        return I1
    if d.is_foreign_pointer(dtype):  # (an address as an integer: compiler/types.py)
        return ir.IntType(64)
    if dtype.is_integral or dtype in (d.float16, d.bfloat16):
        return ir.IntType(dtype.bitwidth)
    if dtype is d.float32:
        return F32
    if dtype is d.float64:
        return F64
    if narrow_floats.is_narrow(dtype):
        return narrow_floats.storage_type(dtype)
    raise TileUnsupportedFeatureError(f"The compiler does not support {dtype} yet")


def compute_dtype(dtype):
    """The dtype arithmetic on ``dtype`` is done in: float32 for 16-bit floats."""
    return d.float32 if dtype in (d.float16, d.bfloat16) else dtype


def constant(dtype, value):
    """An LLVM constant of ``dtype`` in storage form.

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.lowering.arithmetic import constant
    >>> str(constant(ct.float16, 1.0))
    'i16 15360'
    """
    if dtype in (d.float16, d.bfloat16):
        return I16(int(np.array(value, dtype.numpy).view(np.uint16)))
    if dtype.is_float and dtype.bitwidth <= 8:  # the float8 and float4 codes
        rounded = convert_values(np.array(float(value)), d.float64, dtype)
        return ir.IntType(8)(int(to_bits(rounded, dtype)))
    if dtype is d.tfloat32:
        return F32(float(convert_values(np.array(float(value)), d.float64, dtype)))
    if dtype is d.bool_:
        return I1(int(bool(value)))
    if dtype.is_integral:
        return storage_type(dtype)(int(value) & ((1 << dtype.bitwidth) - 1))
    return storage_type(dtype)(float(value))


def _numba(dtype):
    return {d.float32: types.float32, d.float64: types.float64}[dtype]


_REG = {16: "h", 32: "r", 64: "l"}


def _float_suffix(dtype):
    return {d.float32: "f32", d.float64: "f64", d.float16: "f16"}[dtype]


def _float_reg(dtype):
    return {d.float32: "f", d.float64: "d", d.float16: "h"}[dtype]


# -- conversions ----------------------------------------------------------------------------
def _bf16_to_f32(builder, bits):
    return builder.bitcast(builder.shl(builder.zext(bits, I32), I32(16)), F32)


def _f32_to_bf16(builder, value):
    """Round a float32 to bfloat16 bits, to nearest even (NaN stays a quiet NaN)."""
    bits = builder.bitcast(value, I32)
    lsb = builder.and_(builder.lshr(bits, I32(16)), I32(1))
    rounded = builder.lshr(builder.add(bits, builder.add(I32(0x7FFF), lsb)), I32(16))
    is_nan = builder.fcmp_unordered("uno", value, value)
    quiet = builder.or_(builder.lshr(bits, I32(16)), I32(0x40))
    return builder.trunc(builder.select(is_nan, quiet, rounded), I16)


def _f64_to_f32_odd(builder, value):
    """float64 to float32 rounded to odd: a later rounding to a narrower type is then exact
    (no double-rounding error)."""
    truncated = asm.emit(builder, asm.convert("rz", "f32", "f64", "f", "d"), [value], F32)
    inexact = builder.fcmp_ordered("!=", builder.fpext(truncated, F64), value)
    bits = builder.bitcast(truncated, I32)
    return builder.bitcast(builder.select(inexact, builder.or_(bits, I32(1)), bits), F32)


def to_compute(builder, value, dtype):
    """A storage value of ``dtype`` as a value of :func:`compute_dtype` (exact)."""
    if dtype is d.float16:
        return asm.emit(builder, asm.convert(None, "f32", "f16", "f", "h"), [value], F32)
    if dtype is d.bfloat16:
        return _bf16_to_f32(builder, value)
    return value


def _float_to_float(builder, value, src, dst, rounding_mode):
    """Between float32 and float64 (``src`` and ``dst`` are compute dtypes or halves)."""
    mode = DIRECTED.get(rounding_mode, "rn")
    if dst is d.bfloat16:
        if src is d.float64:
            value = _f64_to_f32_odd(builder, value)
        return _f32_to_bf16(builder, value)
    if dst is d.float16:
        return asm.emit(builder, asm.convert(mode, "f16", _float_suffix(src), "h",
                                             _float_reg(src)), [value], I16)
    if src is dst:
        return value
    if dst is d.float64:
        return builder.fpext(value, F64)
    if mode == "rn":
        return builder.fptrunc(value, F32)
    return asm.emit(builder, asm.convert(mode, "f32", "f64", "f", "d"), [value], F32)


_INT_ROUNDING = {None: "rzi", RoundingMode.RZI: "rzi", RoundingMode.RZ: "rzi",
                 RoundingMode.RM: "rmi", RoundingMode.RP: "rpi"}


def _float_to_int(context, builder, value, src, dst, rounding_mode):
    """Saturating conversion (NaN gives 0), as the interpreter's ``convert``."""
    if rounding_mode is RoundingMode.RA:  # ties away from zero: floor(v + 0.5) in float64
        if src is d.float32:
            value, src = builder.fpext(value, F64), d.float64
        half = F64(0.5)
        up = _libdevice(context, builder, "floor", d.float64, builder.fadd(value, half))
        down = _libdevice(context, builder, "ceil", d.float64, builder.fsub(value, half))
        value = builder.select(builder.fcmp_ordered(">=", value, F64(0.0)), up, down)
    mode = _INT_ROUNDING.get(rounding_mode, "rni")
    width = max(dst.bitwidth, 16)
    kind = "s" if dst.is_signed else "u"
    result = asm.emit(builder, asm.convert(mode, f"{kind}{dst.bitwidth}", _float_suffix(src),
                                           _REG[width], _float_reg(src)),
                      [value], ir.IntType(width))
    return builder.trunc(result, ir.IntType(dst.bitwidth)) if width != dst.bitwidth else result


def _int_to_float(builder, value, src, dst, rounding_mode):
    mode = DIRECTED.get(rounding_mode)
    kind = "s" if src.is_signed else "u"
    if dst is d.bfloat16:  # through float64 (exact up to 53 bits), then one rounding
        wide = builder.sitofp(value, F64) if src.is_signed else builder.uitofp(value, F64)
        return _float_to_float(builder, wide, d.float64, dst, None)
    if mode is None and dst is not d.float16:
        convert = builder.sitofp if src.is_signed else builder.uitofp
        return convert(value, storage_type(dst))
    if src.bitwidth < 16:
        value = builder.sext(value, I16) if src.is_signed else builder.zext(value, I16)
    width = max(src.bitwidth, 16)
    return asm.emit(builder, asm.convert(mode or "rn", _float_suffix(dst), f"{kind}{width}",
                                         _float_reg(dst), _REG[width]),
                    [value], storage_type(dst))


def convert(context, builder, value, src, dst, rounding_mode=None):
    """Convert a storage value of dtype ``src`` to dtype ``dst`` (tile-model semantics)."""
    if src is dst:
        return value
    if narrow_floats.is_narrow(src) or narrow_floats.is_narrow(dst):
        return _convert_narrow(context, builder, value, src, dst, rounding_mode)
    if dst is d.bool_:
        if src.is_float:
            return builder.fcmp_unordered("!=", to_compute(builder, value, src),
                                          storage_type(compute_dtype(src))(0.0))
        return builder.icmp_unsigned("!=", value, value.type(0))
    if src is d.bool_:
        if dst.is_float:
            return convert(context, builder, builder.zext(value, I32), d.int32, dst)
        return builder.zext(value, storage_type(dst))
    if src.is_integral and dst.is_integral:
        if dst.bitwidth < src.bitwidth:
            return builder.trunc(value, storage_type(dst))
        if dst.bitwidth > src.bitwidth:
            extend = builder.sext if src.is_signed else builder.zext
            return extend(value, storage_type(dst))
        return value
    if src.is_integral:
        return _int_to_float(builder, value, src, dst, rounding_mode)
    wide = to_compute(builder, value, src)
    if dst.is_integral:
        return _float_to_int(context, builder, wide, compute_dtype(src), dst, rounding_mode)
    if src is d.float16 and dst is d.float32 or src is d.bfloat16 and dst is d.float32:
        return wide
    return _float_to_float(builder, wide, compute_dtype(src), dst, rounding_mode)


def _convert_narrow(context, builder, value, src, dst, rounding_mode):
    """Convert between a narrow float dtype (:mod:`.narrow_floats`) and any dtype, through
    float32."""
    if dst is d.tfloat32 and rounding_mode in (RoundingMode.RZ, RoundingMode.RA):
        # (exact in float32 first: float16 and bfloat16 widen exactly; float64 rounds toward
        # zero, which the second truncation keeps; the rules allow RA from float64 not)
        if narrow_floats.is_narrow(src):
            value = narrow_floats.to_float32(builder, value, src)
        else:
            value = convert(context, builder, value, src, d.float32,
                            RoundingMode.RZ if src is d.float64 else None)
        return narrow_floats.tfloat32_directed(builder, value, rounding_mode)
    if narrow_floats.is_narrow(dst) and rounding_mode not in (None, RoundingMode.RN):
        raise TileUnsupportedFeatureError(f"astype to {dst} rounds to nearest even only; "
                                          f"rounding_mode={rounding_mode} is not supported")
    if narrow_floats.is_narrow(src):
        value = narrow_floats.to_float32(builder, value, src)
        if not narrow_floats.is_narrow(dst):
            return convert(context, builder, value, d.float32, dst, rounding_mode)
    elif src is d.float64:  # rounded to odd first: the second rounding is then exact
        value = _f64_to_f32_odd(builder, value)
    else:
        value = convert(context, builder, value, src, d.float32)
    return narrow_floats.from_float32(builder, value, dst)


# -- float helpers --------------------------------------------------------------------------

def _libdevice(context, builder, name, dtype, *args):
    """A ``math`` function of numba-cuda's CUDA target (libdevice) on float32/float64."""
    numba_type = _numba(dtype)
    impl = context.get_function(getattr(math, name), signature(numba_type,
                                                               *[numba_type] * len(args)))
    return impl(builder, list(args))


def _flush(builder, value, dtype):
    """float32 subnormals to zero of the same sign (other dtypes unchanged)."""
    if dtype is not d.float32:
        return value
    bits = builder.bitcast(value, I32)
    exponent = builder.and_(bits, I32(0x7F800000))
    sign = builder.bitcast(builder.and_(bits, I32(0x80000000)), F32)
    return builder.select(builder.icmp_unsigned("==", exponent, I32(0)), sign, value)


def _is_nan(builder, value):
    return builder.fcmp_unordered("uno", value, value)


def _nan(dtype):
    return storage_type(dtype)(math.nan)


def _float_minmax(builder, op, a, b, propagate_nan):
    if not propagate_nan and isinstance(a.type, (ir.FloatType, ir.DoubleType)):
        # PTX min/max already let a NaN lose to the other operand: one instruction
        suffix, reg = ("f64", "d") if isinstance(a.type, ir.DoubleType) else ("f32", "f")
        return asm.emit(builder, asm.float_minmax(op[:3], suffix, reg), [a, b], a.type)
    better = builder.fcmp_ordered("<" if op == "minimum" else ">", a, b)
    chosen = builder.select(better, a, b)
    if propagate_nan:
        either = builder.or_(_is_nan(builder, a), _is_nan(builder, b))
        return builder.select(either, a.type(math.nan), chosen)
    # NaN loses: take the other operand
    return builder.select(_is_nan(builder, b), a, builder.select(_is_nan(builder, a), b,
                                                                   chosen))


_BASIC_ASM = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div"}
# comparison op -> the predicate of LLVM's fcmp/icmp: the op's own symbol
_FLOAT_COMPARE = {op.name: op.symbol for op in OPERATORS if op.category == "comparison"}


def _float_divmod(context, builder, dtype, a, b):
    """NumPy's float floor division and modulo: ``(a // b, a % b)`` with Python signs."""
    zero = a.type(0.0)
    remainder = _libdevice(context, builder, "fmod", dtype, a, b)
    quotient = builder.fdiv(builder.fsub(a, remainder), b)
    adjust = builder.and_(builder.fcmp_ordered("!=", remainder, zero),
                          builder.xor(builder.fcmp_ordered("<", b, zero),
                                      builder.fcmp_ordered("<", remainder, zero)))
    modulo = builder.select(adjust, builder.fadd(remainder, b),
                            builder.select(builder.fcmp_ordered("==", remainder, zero),
                                           _libdevice(context, builder, "copysign", dtype,
                                                      zero, b), remainder))
    quotient = builder.select(adjust, builder.fsub(quotient, a.type(1.0)), quotient)
    floored = _libdevice(context, builder, "floor", dtype, quotient)
    floored = builder.select(builder.fcmp_ordered(">", builder.fsub(quotient, floored),
                                                  a.type(0.5)),
                             builder.fadd(floored, a.type(1.0)), floored)
    floored = builder.select(builder.fcmp_ordered("==", quotient, zero),
                             _libdevice(context, builder, "copysign", dtype, zero,
                                        builder.fdiv(a, b)), floored)
    by_zero = builder.fcmp_ordered("==", b, zero)
    floored = builder.select(by_zero, builder.fdiv(a, b), floored)
    modulo = builder.select(by_zero, remainder, modulo)
    return floored, modulo


def _float_binary(context, builder, op, dtype, a, b, options):
    """``op`` on two compute values of float ``dtype`` (float32 or float64)."""
    mode = options.rounding_mode
    if op in _BASIC_ASM and mode in DIRECTED or (op == "truediv" and dtype is d.float32 and
                                                 mode in (RoundingMode.APPROX,
                                                          RoundingMode.FULL)):
        suffix = DIRECTED.get(mode) or {RoundingMode.APPROX: "approx",
                                       RoundingMode.FULL: "full"}[mode]
        reg = _float_reg(dtype)
        return asm.emit(builder, asm.float_binary(_BASIC_ASM[op], suffix,
                                                  _float_suffix(dtype), reg), [a, b], a.type)
    if op == "add":
        return builder.fadd(a, b)
    if op == "sub":
        return builder.fsub(a, b)
    if op == "mul":
        return builder.fmul(a, b)
    if op == "truediv":
        return builder.fdiv(a, b)
    if op in ("minimum", "maximum"):
        return _float_minmax(builder, op, a, b, options.propagate_nan)
    if op in _FLOAT_COMPARE:
        if op == "not_equal":
            return builder.fcmp_unordered("!=", a, b)
        return builder.fcmp_ordered(_FLOAT_COMPARE[op], a, b)
    if op in ("floordiv", "mod"):
        floored, modulo = _float_divmod(context, builder, dtype, a, b)
        return floored if op == "floordiv" else modulo
    name = {"pow": "pow", "atan2": "atan2", "copysign": "copysign", "fmod": "fmod"}.get(op)
    if name is None:
        raise TileUnsupportedFeatureError(f"ct.{op} on floats is not compiled")
    return _libdevice(context, builder, name, dtype, a, b)


# -- integer helpers ------------------------------------------------------------------------
def _int_divmod(builder, op, a, b, signed):
    """Floor division or modulo with Python signs; a zero divisor gives 0."""
    zero = a.type(0)
    by_zero = builder.icmp_unsigned("==", b, zero)
    safe = builder.select(by_zero, a.type(1), b)
    if signed:  # INT_MIN // -1 wraps instead of trapping: divide by 1 and negate
        minus_one = builder.icmp_signed("==", safe, a.type(-1))
        safe = builder.select(minus_one, a.type(1), safe)
        quotient = builder.sdiv(a, safe)
        quotient = builder.select(minus_one, builder.sub(zero, quotient), quotient)
        remainder = builder.srem(a, safe)
        remainder = builder.select(minus_one, zero, remainder)
        adjust = builder.and_(builder.icmp_signed("!=", remainder, zero),
                              builder.xor(builder.icmp_signed("<", remainder, zero),
                                          builder.icmp_signed("<", b, zero)))
        quotient = builder.select(adjust, builder.sub(quotient, a.type(1)), quotient)
        remainder = builder.select(adjust, builder.add(remainder, b), remainder)
    else:
        quotient, remainder = builder.udiv(a, safe), builder.urem(a, safe)
    result = quotient if op == "floordiv" else remainder
    return builder.select(by_zero, zero, result)


def _int_pow(builder, a, b, signed):
    """Square and multiply over every exponent bit; negative exponents as C (0 unless the
    base is 1 or -1)."""
    result, base = a.type(1), a
    for bit in range(a.type.width):
        take = builder.trunc(builder.lshr(b, b.type(bit)), I1)
        result = builder.select(take, builder.mul(result, base), result)
        base = builder.mul(base, base)
    if not signed:
        return result
    one, minus_one = a.type(1), a.type(-1)
    odd = builder.trunc(b, I1)
    special = builder.select(builder.icmp_signed("==", a, one), one,
                             builder.select(builder.icmp_signed("==", a, minus_one),
                                            builder.select(odd, minus_one, one), a.type(0)))
    return builder.select(builder.icmp_signed("<", b, b.type(0)), special, result)


def _shift(builder, op, a, b, signed):
    bits = a.type.width
    too_far = builder.icmp_unsigned(">=", b, b.type(bits))  # negative counts are huge too
    if op == "bitwise_lshift":
        return builder.select(too_far, a.type(0), builder.shl(a, builder.select(
            too_far, b.type(0), b)))
    if signed:
        return builder.ashr(a, builder.select(too_far, b.type(bits - 1), b))
    return builder.select(too_far, a.type(0), builder.lshr(a, builder.select(
        too_far, b.type(0), b)))


_INT_COMPARE = _FLOAT_COMPARE


def _opaque_to_ptxas(builder, value, signed):
    """``value`` (an integer of 32 bits or fewer) through :data:`asm.IDENTITY_PERMUTE`, which
    keeps ptxas from folding a negation into the integer max/min that uses it (a ptxas bug,
    see there; 64-bit integers are not affected)."""
    bits = value.type.width
    if bits > 32 or bits == 1:
        return value
    wide = value if bits == 32 else (builder.sext if signed else builder.zext)(value, I32)
    wide = asm.emit(builder, asm.IDENTITY_PERMUTE, [wide], I32)
    return wide if bits == 32 else builder.trunc(wide, value.type)


def _int_binary(builder, op, a, b, signed):
    if op == "add":
        return builder.add(a, b)
    if op == "sub":
        return builder.sub(a, b)
    if op == "mul":
        return builder.mul(a, b)
    if op == "bitwise_and":
        return builder.and_(a, b)
    if op == "bitwise_or":
        return builder.or_(a, b)
    if op == "bitwise_xor":
        return builder.xor(a, b)
    if op in ("bitwise_lshift", "bitwise_rshift"):
        return _shift(builder, op, a, b, signed)
    if op in ("floordiv", "mod"):
        return _int_divmod(builder, op, a, b, signed)
    if op == "pow":
        return _int_pow(builder, a, b, signed)
    compare = builder.icmp_signed if signed else builder.icmp_unsigned
    if op in ("minimum", "maximum"):
        a, b = _opaque_to_ptxas(builder, a, signed), _opaque_to_ptxas(builder, b, signed)
        return builder.select(compare("<" if op == "minimum" else ">", a, b), a, b)
    return compare(_INT_COMPARE[op], a, b)


# -- the ops ----------------------------------------------------------------------------------
_EXACT_IN_FLOAT64 = {"add", "sub", "mul"}


def _work_dtype(dtype, result, mode, op):
    """The float dtype an op on ``dtype`` operands with result ``result`` is computed in:
    float64 where a directed rounding to a 16-bit result must be exact."""
    compute = compute_dtype(dtype)
    if mode in DIRECTED and (result in (d.float16, d.bfloat16) or (
            op not in _BASIC_ASM and op != "sqrt" and result is d.float32)):
        return d.float64
    return compute


def binary(context, builder, op, operand_dtype, result_dtype, a, b, options=Options()):
    """``op`` (a name of :mod:`numba_tile.rules.elementwise`) on storage values ``a`` and
    ``b`` of ``operand_dtype``; the storage value of ``result_dtype``."""
    if operand_dtype is d.bool_:  # the rules allow only logic, comparisons and min/max
        return _int_binary(builder, op, a, b, signed=False)
    if operand_dtype.is_integral:
        if op == "truediv":
            a = convert(context, builder, a, operand_dtype, result_dtype)
            b = convert(context, builder, b, operand_dtype, result_dtype)
            return binary(context, builder, op, result_dtype, result_dtype, a, b, options)
        return _int_binary(builder, op, a, b, operand_dtype.is_signed)
    if op == "floordiv":  # cuTile's: the quotient rounded to the result dtype, floored
        quotient = binary(context, builder, "truediv", operand_dtype, result_dtype, a, b)
        return unary(context, builder, "floor", result_dtype, result_dtype, quotient)
    mode = options.rounding_mode
    work = _work_dtype(operand_dtype, result_dtype, mode, op)
    a = convert(context, builder, a, operand_dtype, work)
    b = convert(context, builder, b, operand_dtype, work)
    ftz = options.flush_to_zero and result_dtype is d.float32
    if ftz and work is d.float32 and op in _BASIC_ASM:  # PTX flushes in the instruction
        suffix = DIRECTED.get(mode, "rn")
        if op == "truediv" and mode in (RoundingMode.APPROX, RoundingMode.FULL):
            suffix = mode.name.lower()
        return asm.emit(builder, asm.float_binary(_BASIC_ASM[op], suffix, "f32", "f",
                                                  flush_to_zero=True), [a, b], F32)
    if ftz:
        a, b = _flush(builder, a, d.float32), _flush(builder, b, d.float32)
    exact_mode = mode if work is not d.float64 or operand_dtype is d.float64 else None
    out = _float_binary(context, builder, op, work, a, b, options._replace(
        rounding_mode=exact_mode))
    if out.type == I1:
        return out
    out = convert(context, builder, out, work, result_dtype,
                  mode if exact_mode is None else None)
    return _flush(builder, out, d.float32) if ftz else out


_APPROX_UNARY = {"sqrt": "sqrt.approx.f32", "rsqrt": "rsqrt.approx.f32",
                 "tanh": "tanh.approx.f32", "sin": "sin.approx.f32", "cos": "cos.approx.f32",
                 "exp2": "ex2.approx.f32", "log2": "lg2.approx.f32"}


def _float_unary(context, builder, op, dtype, x, mode):
    if op == "negative":  # NVVM's LLVM predates `fneg`: subtract from -0.0 instead
        return builder.fsub(x.type(-0.0), x)
    if op == "abs":
        return _libdevice(context, builder, "fabs", dtype, x)
    if op == "isnan":
        return _is_nan(builder, x)
    if op == "isinf":
        return builder.fcmp_ordered("==", _libdevice(context, builder, "fabs", dtype, x),
                                    x.type(math.inf))
    if op == "sqrt" and mode in DIRECTED:
        reg = _float_reg(dtype)
        return asm.emit(builder, asm.float_unary(
            f"sqrt.{DIRECTED[mode]}.{_float_suffix(dtype)}", reg), [x], x.type)
    if mode is RoundingMode.APPROX and dtype is d.float32:
        if op == "exp":  # e ** x = 2 ** (x log2 e)
            x, op = builder.fmul(x, F32(1.0 / math.log(2.0))), "exp2"
        elif op == "log":  # ln x = log2 x * ln 2
            return builder.fmul(_float_unary(context, builder, "log2", dtype, x, mode),
                                F32(math.log(2.0)))
        if op in _APPROX_UNARY:
            return asm.emit(builder, asm.float_unary(_APPROX_UNARY[op], "f"), [x], F32)
    if op == "rsqrt":
        return builder.fdiv(x.type(1.0), _libdevice(context, builder, "sqrt", dtype, x))
    return _libdevice(context, builder, op, dtype, x)


def unary(context, builder, op, dtype, result_dtype, x, options=Options()):
    """``op`` on a storage value ``x`` of ``dtype``; the storage value of ``result_dtype``."""
    if op == "bitwise_not":
        return builder.xor(x, x.type(-1))
    if not dtype.is_float:
        if op in ("isnan", "isinf"):
            return I1(0)
        if op == "negative":
            return builder.sub(x.type(0), x)
        if op == "abs":
            if not dtype.is_signed:
                return x
            return builder.select(builder.icmp_signed("<", x, x.type(0)),
                                  builder.sub(x.type(0), x), x)
        raise TileUnsupportedFeatureError(f"ct.{op} of an integer is not compiled")
    mode = options.rounding_mode
    work = _work_dtype(dtype, result_dtype, mode, op)
    value = convert(context, builder, x, dtype, work)
    ftz = options.flush_to_zero and result_dtype is d.float32
    exact_mode = mode if work is not d.float64 or dtype is d.float64 else None
    if ftz and op == "exp2" and work is d.float32 and exact_mode is None:
        # the hardware's own flushing form: what the flushes around libdevice's exp2f
        # (the same approximation, scaled to reach subnormal results) give, in one
        # instruction instead of four (the exponentials of an online softmax)
        return asm.emit(builder, asm.float_unary("ex2.approx.ftz.f32", "f"), [value], F32)
    if ftz:
        value = _flush(builder, value, d.float32)
    out = _float_unary(context, builder, op, work, value, exact_mode)
    if out.type == I1:
        return out
    out = convert(context, builder, out, work, result_dtype,
                  mode if exact_mode is None else None)
    return _flush(builder, out, d.float32) if ftz else out
