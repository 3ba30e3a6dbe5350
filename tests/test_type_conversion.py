"""``astype`` (function and method) in kernels: float to integer truncates and saturates,
integers wrap, float to float rounds to nearest even (or by ``rounding_mode``), anything to
bool tests for non-zero.

As in test_elementwise.py, kernels work on (4, 8) tiles of (8, 8) arrays over two blocks and
write into poisoned outputs; the result dtype is checked in the kernel by ``static_assert``.
"""

import fractions
import functools
import math

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error

SHAPE, TILE, GRID = (8, 8), (4, 8), (2,)
SIGNED = [ct.int8, ct.int16, ct.int32, ct.int64]
UNSIGNED = [ct.uint8, ct.uint16, ct.uint32, ct.uint64]
INTS = SIGNED + UNSIGNED
FLOATS = [ct.float16, ct.float32, ct.float64, ct.bfloat16]
RM = ct.RoundingMode


def npdt(dtype):
    return np.dtype(dtype.numpy)


@functools.cache
def astype_kernel(how, rounding_mode=None):
    """Convert a (4, 8) block to the constant dtype RESULT, by ``ct.astype`` or the method."""
    @ct.kernel
    def kernel(x, out, RESULT: ct.Constant):
        t = ct.load(x, index=(ct.bid(0), 0), shape=TILE)
        if how == "method":
            r = t.astype(RESULT, rounding_mode=rounding_mode)
        else:
            r = ct.astype(t, RESULT, rounding_mode=rounding_mode)
        ct.static_assert(r.dtype == RESULT, "astype gives the requested dtype")
        ct.static_assert(r.shape == TILE, "astype keeps the shape")
        ct.store(out, index=(ct.bid(0), 0), tile=r)
    return kernel


def convert(run_kernel, x, dtype, how="function", rounding_mode=None):
    """Run the kernel; bool results land in a poisoned int8 array as 0/1."""
    store = ct.int8 if dtype is ct.bool_ else dtype
    fill = np.nan if store.is_float else np.iinfo(npdt(store)).max - 3
    out = np.full(SHAPE, fill, npdt(store))
    run_kernel(astype_kernel(how, rounding_mode), GRID, (x, out, dtype))
    return out


def signed_mix(rng, low, high, shape=SHAPE):
    return rng.uniform(low, high, size=shape) * rng.choice([-1, 1], size=shape)


def bits(rng, dtype):
    info = np.iinfo(npdt(dtype))
    v = rng.integers(info.min, info.max, size=SHAPE, dtype=npdt(dtype), endpoint=True)
    return np.where(v == 0, npdt(dtype).type(1), v)


HOW = pytest.mark.parametrize("how", ["function", "method"])


@HOW
@pytest.mark.parametrize("dst", INTS, ids=str)
@pytest.mark.parametrize("src", FLOATS, ids=str)
def test_float_to_int_truncates_and_saturates(run_kernel, rng, src, dst, how):
    info = np.iinfo(npdt(dst))
    limit = min(1.5 * float(info.max), 0.9 * float(ml_dtypes.finfo(npdt(src)).max))
    v = np.concatenate([signed_mix(rng, 0.1, 120, (4, 8)), signed_mix(rng, 1, limit, (4, 8))])
    v[3, :2] = [np.inf, -np.inf]
    x = v.astype(npdt(src))
    out = convert(run_kernel, x, dst, how)
    expected = [info.max if f == math.inf else info.min if f == -math.inf
                else min(info.max, max(info.min, math.trunc(f))) for f in x.astype(float).flat]
    np.testing.assert_array_equal(out, np.array(expected, npdt(dst)).reshape(SHAPE))


INT_PAIRS = [(ct.int32, ct.int8), (ct.int64, ct.int16), (ct.uint32, ct.uint8),
             (ct.int16, ct.uint16), (ct.uint64, ct.int32), (ct.int8, ct.uint64),
             (ct.uint8, ct.int8), (ct.int32, ct.int64), (ct.uint16, ct.int32),
             (ct.int64, ct.uint32)]


@HOW
@pytest.mark.parametrize("src,dst", INT_PAIRS, ids=str)
def test_int_to_int_wraps(run_kernel, rng, src, dst, how):
    """Narrowing keeps the low bits; widening sign-extends signed and zero-extends unsigned."""
    x = bits(rng, src)
    out = convert(run_kernel, x, dst, how)
    expected = [(int(v) % 2**dst.bitwidth) for v in x.flat]  # two's complement, low bits
    if dst.is_signed:
        expected = [v - 2**dst.bitwidth if v >= 2**(dst.bitwidth - 1) else v for v in expected]
    np.testing.assert_array_equal(out, np.array(expected, npdt(dst)).reshape(SHAPE))


INT_TO_FLOAT = [(ct.int32, ct.float16, 60000), (ct.int64, ct.float32, 2**50),
                (ct.uint8, ct.bfloat16, 255), (ct.int16, ct.float64, 32767),
                (ct.uint64, ct.float32, 2**50), (ct.int32, ct.bfloat16, 2**31 - 1),
                (ct.uint32, ct.float16, 60000), (ct.int8, ct.float32, 127)]


@HOW
@pytest.mark.parametrize("src,dst,limit", INT_TO_FLOAT, ids=str)
def test_int_to_float_rounds_to_nearest(run_kernel, rng, src, dst, limit, how):
    mag = rng.integers(1, limit, size=SHAPE, endpoint=True)
    x = (mag * (rng.choice([-1, 1], size=SHAPE) if src.is_signed else 1)).astype(npdt(src))
    out = convert(run_kernel, x, dst, how)
    expected = x.astype(np.float64).astype(npdt(dst))  # exact in float64, rounded once
    np.testing.assert_array_equal(out, expected)


FLOAT_PAIRS = [(ct.float32, ct.float16), (ct.float32, ct.bfloat16), (ct.float64, ct.float32),
               (ct.float64, ct.float16), (ct.float64, ct.bfloat16), (ct.float16, ct.float32),
               (ct.bfloat16, ct.float32), (ct.float16, ct.float64), (ct.bfloat16, ct.float16),
               (ct.float16, ct.bfloat16)]


@HOW
@pytest.mark.parametrize("src,dst", FLOAT_PAIRS, ids=str)
def test_float_to_float_rounds_to_nearest(run_kernel, rng, src, dst, how):
    """Round to nearest even; past the destination's range is inf; tiny values go subnormal."""
    v = signed_mix(rng, 0.01, 1000)
    v[0, :2] = [1e5, -1e5]          # overflow float16 (but not bfloat16)
    v[7, :3] = [1e-6, -3e-7, 2e-5]  # float16 subnormals
    v[4, 4:6] = [np.inf, -np.inf]
    with np.errstate(over="ignore"):
        x = v.astype(npdt(src))
        expected = x.astype(np.float64).astype(npdt(dst))
    out = convert(run_kernel, x, dst, how)
    np.testing.assert_array_equal(out, expected)
    assert relative_error(out, expected) == 0.0


@HOW
@pytest.mark.parametrize("src", [ct.int8, ct.uint32, ct.int64, ct.float16, ct.float32,
                                 ct.float64, ct.bfloat16], ids=str)
def test_to_bool_is_nonzero(run_kernel, rng, src, how):
    if src.is_float:
        v = signed_mix(rng, 0.001, 100)
        v[::2, ::3] = 0.0
        v[1, 1], v[2, 2] = -0.0, np.inf
    else:
        v = rng.integers(1, 100, size=SHAPE) * (-1 if src.is_signed else 1)
        v[::2, ::3] = 0
    x = v.astype(npdt(src))
    out = convert(run_kernel, x, ct.bool_, how)
    np.testing.assert_array_equal(out, (x != 0).astype(np.int8))


@HOW
@pytest.mark.parametrize("dst", [ct.int8, ct.uint16, ct.int32, ct.float16, ct.float32,
                                 ct.bfloat16, ct.float64], ids=str)
def test_from_bool(run_kernel, rng, dst, how):
    x = rng.integers(0, 2, size=SHAPE).astype(bool)
    out = convert(run_kernel, x, dst, how)
    np.testing.assert_array_equal(out, x.astype(npdt(dst)))


def directed(value, approx, mode):
    """The representable value next to ``approx`` that rounds ``value`` (exact) by ``mode``."""
    exact = fractions.Fraction(float(value))
    t = type(approx)
    if fractions.Fraction(float(approx)) == exact:
        return approx
    if fractions.Fraction(float(approx)) > exact:
        lo, hi = np.nextafter(approx, t(-np.inf)), approx
    else:
        lo, hi = approx, np.nextafter(approx, t(np.inf))
    assert fractions.Fraction(float(lo)) < exact < fractions.Fraction(float(hi))
    if mode is RM.RZ:
        return lo if exact > 0 else hi
    return lo if mode is RM.RM else hi


@pytest.mark.parametrize("src,dst,mode", [
    (ct.float64, ct.float32, RM.RN), (ct.float64, ct.float32, RM.RZ),
    (ct.float64, ct.float32, RM.RM), (ct.float64, ct.float32, RM.RP),
    (ct.float32, ct.float16, RM.RN), (ct.float32, ct.float16, RM.RZ)],  # (cuTile's table)
    ids=lambda v: getattr(v, "name", str(v)))
def test_float_narrowing_rounding_mode(run_kernel, rng, src, dst, mode):
    x = signed_mix(rng, 0.5, 100).astype(npdt(src))
    nearest = x.astype(npdt(dst))
    out = convert(run_kernel, x, dst, rounding_mode=mode)
    expected = np.array([n if mode is RM.RN else directed(v, n, mode)
                         for v, n in zip(x.flat, nearest.flat)], npdt(dst)).reshape(SHAPE)
    if mode is not RM.RN:
        assert np.any(expected != nearest)  # the data exercises the rounding direction
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dst", [ct.int32, ct.int8, ct.uint16], ids=str)
def test_float_to_int_takes_no_rounding_mode(run_kernel, rng, dst, how="function"):
    """Float to integer truncates toward zero, as cuTile's, which takes no rounding mode for
    it (RZI included): "rounding_mode is only valid for float to float conversions"."""
    x = signed_mix(rng, 0.1, 300).astype(np.float32)
    with pytest.raises(ct.TileTypeError, match="rounding_mode is only valid for float to "
                                               "float conversions"):
        convert(run_kernel, x, dst, how, rounding_mode=RM.RZI)


# -- storage-only floats: tfloat32 and float8 ------------------------------------------------
FLOAT8 = [ct.float8_e4m3fn, ct.float8_e5m2]


def narrow_float_inputs(rng):
    """64 values over every case of the rounding: zeros, NaN and infinities, overflow (and the
    halfway points at the top), float8 subnormals and their halfway points, random values
    over many decades."""
    special = [0.0, -0.0, np.nan, -np.inf, np.inf, 1e6, -1e6, 460.0, 470.0, 448.0, 464.0,
               57344.0, 60000.0, 61440.0, -61440.0, 2.0**-10, 3 * 2.0**-11, 2.0**-17,
               3 * 2.0**-18, -2.0**-9, 1.0 + 2.0**-4, 1.0 + 3 * 2.0**-4, 1.0 + 2.0**-11,
               1.0 + 3 * 2.0**-11, 1.0 + 2.0**-13 + 2.0**-20, 65504.0, 3.4e38]
    rest = signed_mix(rng, 1.0, 2.0, (64 - len(special),)) * 2.0 ** rng.integers(
        -20, 20, 64 - len(special))
    return np.concatenate([special, rest]).reshape(SHAPE)


def tf32_reference(values):
    """float32 values rounded to 10 mantissa bits, to nearest even (finite values)."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0xFFF + ((bits >> 13) & 1)) >> 13 << 13).astype(np.uint32)
    return np.where(np.isfinite(values), rounded.view(np.float32), values.astype(np.float32))


@functools.cache
def round_trip_kernel(narrow):
    @ct.kernel
    def kernel(x, out):
        t = ct.load(x, index=(ct.bid(0), 0), shape=TILE)
        r = ct.astype(t, narrow)
        ct.static_assert(r.dtype == narrow)
        ct.store(out, index=(ct.bid(0), 0), tile=ct.astype(r, ct.float32))
    return kernel


@pytest.mark.parametrize("source", [ct.float32, ct.float64, ct.float16, ct.int32], ids=str)
@pytest.mark.parametrize("narrow", [ct.tfloat32] + FLOAT8, ids=str)
def test_narrow_float_round_trip(run_kernel, rng, narrow, source):
    """astype to tfloat32 / float8 rounds to nearest even (float8 overflow: NaN for e4m3fn,
    infinity for e5m2) and back to float32 is exact."""
    x = narrow_float_inputs(rng)
    if source.is_integral:
        x = np.clip(np.nan_to_num(x), -1e6, 1e6)
    with np.errstate(all="ignore"):
        x = x.astype(npdt(source))
    out = np.full(SHAPE, -7.0, np.float32)
    run_kernel(round_trip_kernel(narrow), GRID, (x, out))
    wide = x.astype(np.float64)
    if narrow is ct.tfloat32:
        expected = tf32_reference(wide.astype(np.float32))
    else:
        expected = wide.astype(npdt(narrow)).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("narrow", FLOAT8, ids=str)
def test_float8_arrays_load_and_store(run_kernel, rng, narrow):
    """float8 arrays: astype into one stores the nearest float8 bytes; loading one gives
    its values."""
    x = narrow_float_inputs(rng).astype(np.float32)
    out = convert(run_kernel, x, narrow)
    expected = x.astype(np.float64).astype(npdt(narrow))
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))
    back = convert(run_kernel, expected, ct.float32)
    np.testing.assert_array_equal(back, expected.astype(np.float32))
