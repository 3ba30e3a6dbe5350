"""``mma_scaled`` (block-scaled products) and the dtypes it needs: float8_e8m0fnu,
float8_e5m3fnu and float4_e2m1fn in tiles (conversions, byte views), in every mode.

References are computed here in float64 from the dtypes' definitions (``ml_dtypes`` for the
formats NumPy knows, a table for float8_e5m3fnu), never by the interpreter."""

import functools

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error

F4_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                      -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def e5m3fnu_values():
    """The 256 codes of float8_e5m3fnu (unsigned, 5 exponent bits of bias 15, 3 mantissa
    bits, 0xFF NaN), from the definition."""
    values = []
    for code in range(256):
        exponent, mantissa = code >> 3, code & 7
        if exponent == 0:
            values.append(mantissa / 8 * 2.0 ** -14)
        else:
            values.append((1 + mantissa / 8) * 2.0 ** (exponent - 15))
    values[0xFF] = np.nan
    return np.array(values)


E5M3FNU = e5m3fnu_values()


def e5m3fnu_reference(x):
    """Round to nearest float8_e5m3fnu, ties to the even code; beyond the largest finite
    value (after rounding), infinity, NaN and negative values that do not round to zero:
    NaN."""
    finite = E5M3FNU[:0xFF]
    out = []
    for v in np.asarray(x, np.float64).ravel():
        if np.isnan(v):
            out.append(np.nan)
            continue
        magnitude = abs(v)
        distance = np.abs(finite - magnitude)
        best = np.flatnonzero(distance == distance.min())
        code = best[0] if len(best) == 1 else best[best % 2 == 0][0]
        top_half = finite[-1] + (finite[-1] - finite[-2]) / 2
        if magnitude >= top_half:
            out.append(np.nan)
        elif v < 0 and finite[code] != 0:
            out.append(np.nan)
        else:
            out.append(finite[code])
    return np.array(out).reshape(np.shape(x))


def scaled_reference(x, x_scale, y, y_scale, acc):
    """``(x * x_scale) @ (y * y_scale) + acc`` in float64, each scale repeated along K."""
    block_x = x.shape[-1] // x_scale.shape[-1]
    block_y = y.shape[-2] // y_scale.shape[-2]
    xs = np.repeat(x_scale.astype(np.float64), block_x, axis=-1)
    ys = np.repeat(y_scale.astype(np.float64), block_y, axis=-2)
    return (x.astype(np.float64) * xs) @ (y.astype(np.float64) * ys) + acc


def random_e8m0(rng, shape):
    """Powers of two from 2**-6 to 2**6 (values whose products stay well in range)."""
    return (2.0 ** rng.integers(-6, 7, shape)).astype(ml_dtypes.float8_e8m0fnu)


def random_f8(rng, dtype, shape):
    values = rng.standard_normal(shape) * 4
    return values.astype(dtype.numpy)


@ct.kernel
def scaled_kernel(X, X_scale, Y, Y_scale, Z, tm: ct.Constant[int], tn: ct.Constant[int],
                  tk: ct.Constant[int], tks: ct.Constant[int]):
    x = ct.load(X, index=(0, 0), shape=(tm, tk))
    x_scale = ct.load(X_scale, index=(0, 0), shape=(tm, tks))
    y = ct.load(Y, index=(0, 0), shape=(tk, tn))
    y_scale = ct.load(Y_scale, index=(0, 0), shape=(tks, tn))
    acc = ct.load(Z, index=(0, 0), shape=(tm, tn))
    ct.store(Z, index=(0, 0), tile=ct.mma_scaled(x, x_scale, y, y_scale, acc))


@pytest.mark.parametrize("dtype", [ct.float8_e4m3fn, ct.float8_e5m2], ids=str)
@pytest.mark.parametrize("m,n,k", [(16, 16, 64), (64, 32, 128)])
def test_mma_scaled_float8(run_kernel, rng, dtype, m, n, k):
    ks = k // 32
    x, y = random_f8(rng, dtype, (m, k)), random_f8(rng, dtype, (k, n))
    x_scale, y_scale = random_e8m0(rng, (m, ks)), random_e8m0(rng, (ks, n))
    z = rng.standard_normal((m, n)).astype(np.float32)
    expected = scaled_reference(x, x_scale, y, y_scale, z)
    run_kernel(scaled_kernel, (1,), (x, x_scale, y, y_scale, z, m, n, k, ks))
    assert relative_error(z, expected) < 1e-6


@ct.kernel
def batched_kernel(X, X_scale, Y, Y_scale, Z, tb: ct.Constant[int], tm: ct.Constant[int],
                   tn: ct.Constant[int], tk: ct.Constant[int], tks: ct.Constant[int]):
    x = ct.load(X, index=(0, 0), shape=(tm, tk))
    x_scale = ct.load(X_scale, index=(0, 0), shape=(tm, tks))
    y = ct.load(Y, index=(0, 0, 0), shape=(tb, tk, tn))
    y_scale = ct.load(Y_scale, index=(0, 0, 0), shape=(tb, tks, tn))
    acc = ct.load(Z, index=(0, 0, 0), shape=(tb, tm, tn))
    ct.store(Z, index=(0, 0, 0), tile=ct.mma_scaled(x, x_scale, y, y_scale, acc))


def test_mma_scaled_batch_broadcast(run_kernel, rng):
    """A 2-d x beside a 3-d y: x and its scale repeat along the batch."""
    b, m, n, k = 2, 16, 16, 128
    ks = k // 32
    x = random_f8(rng, ct.float8_e4m3fn, (m, k))
    y = random_f8(rng, ct.float8_e4m3fn, (b, k, n))
    x_scale, y_scale = random_e8m0(rng, (m, ks)), random_e8m0(rng, (b, ks, n))
    z = rng.standard_normal((b, m, n)).astype(np.float32)
    expected = scaled_reference(x, x_scale, y, y_scale, z)
    run_kernel(batched_kernel, (1,), (x, x_scale, y, y_scale, z, b, m, n, k, ks))
    assert relative_error(z, expected) < 1e-6


@ct.kernel
def unpacked_kernel(X, X_scale, Y, Y_scale, Z, tm: ct.Constant[int], tn: ct.Constant[int],
                    tk: ct.Constant[int], tks: ct.Constant[int], packed_scale: ct.Constant[bool]):
    """float4 inputs (two to a byte) and, with packed_scale, float8_e5m3fnu scales, both
    read as bytes and unpacked."""
    x = ct.unpack_from_bytes(ct.load(X, index=(0, 0), shape=(tm, tk // 2)).reshape((-1,)),
                             ct.float4_e2m1fn).reshape((tm, tk))
    y = ct.unpack_from_bytes(ct.load(Y, index=(0, 0), shape=(tk, tn // 2)).reshape((-1,)),
                             ct.float4_e2m1fn).reshape((tk, tn))
    x_scale = ct.load(X_scale, index=(0, 0), shape=(tm, tks))
    y_scale = ct.load(Y_scale, index=(0, 0), shape=(tks, tn))
    if packed_scale:
        x_scale = ct.unpack_from_bytes(x_scale.reshape((-1,)),
                                       ct.float8_e5m3fnu).reshape((tm, tks))
        y_scale = ct.unpack_from_bytes(y_scale.reshape((-1,)),
                                       ct.float8_e5m3fnu).reshape((tks, tn))
    acc = ct.load(Z, index=(0, 0), shape=(tm, tn))
    ct.store(Z, index=(0, 0), tile=ct.mma_scaled(x, x_scale, y, y_scale, acc))


def unpack_f4(packed, shape):
    """float4 bytes, low nibble first, as float64 values."""
    nibbles = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(-1)
    return F4_VALUES[nibbles].reshape(shape)


@pytest.mark.parametrize("scale_dtype,block", [
    (ct.float8_e8m0fnu, 32), (ct.float8_e8m0fnu, 16), (ct.float8_e4m3fn, 16),
    (ct.float8_e5m3fnu, 16), (ct.float8_e5m3fnu, 32)], ids=str)
def test_mma_scaled_float4(run_kernel, rng, scale_dtype, block):
    m, n, k = 16, 16, 64
    ks = k // block
    x_packed = rng.integers(0, 256, (m, k // 2), dtype=np.uint8)
    y_packed = rng.integers(0, 256, (k, n // 2), dtype=np.uint8)
    packed_scale = scale_dtype is ct.float8_e5m3fnu
    if packed_scale:  # codes of finite values from 2**-6 to 2**6 (exponent codes 9..21)
        x_scale = rng.integers(9 * 8, 22 * 8, (m, ks), dtype=np.uint8)
        y_scale = rng.integers(9 * 8, 22 * 8, (ks, n), dtype=np.uint8)
        x_scale_values, y_scale_values = E5M3FNU[x_scale], E5M3FNU[y_scale]
    elif scale_dtype is ct.float8_e8m0fnu:
        x_scale, y_scale = random_e8m0(rng, (m, ks)), random_e8m0(rng, (ks, n))
        x_scale_values, y_scale_values = x_scale, y_scale
    else:
        x_scale, y_scale = random_f8(rng, scale_dtype, (m, ks)), random_f8(rng, scale_dtype,
                                                                            (ks, n))
        x_scale_values, y_scale_values = x_scale, y_scale
    z = rng.standard_normal((m, n)).astype(np.float32)
    expected = scaled_reference(unpack_f4(x_packed, (m, k)), x_scale_values,
                                unpack_f4(y_packed, (k, n)), y_scale_values, z)
    run_kernel(unpacked_kernel, (1,),
               (x_packed, x_scale, y_packed, y_scale, z, m, n, k, ks, packed_scale))
    assert relative_error(z, expected) < 1e-6


@ct.kernel
def error_kernel(X, X_scale, Y, Y_scale, Z, tm: ct.Constant[int], tn: ct.Constant[int],
                 tk: ct.Constant[int], tms: ct.Constant[int], tks: ct.Constant[int],
                 tns: ct.Constant[int]):
    x = ct.load(X, index=(0, 0), shape=(tm, tk))
    x_scale = ct.load(X_scale, index=(0, 0), shape=(tms, tks))
    y = ct.load(Y, index=(0, 0), shape=(tk, tn))
    y_scale = ct.load(Y_scale, index=(0, 0), shape=(tks, tns))
    acc = ct.load(Z, index=(0, 0), shape=(tm, tn))
    ct.store(Z, index=(0, 0), tile=ct.mma_scaled(x, x_scale, y, y_scale, acc))


E4M3, E5M2, E8M0 = ct.float8_e4m3fn, ct.float8_e5m2, ct.float8_e8m0fnu


@pytest.mark.parametrize("dtypes,message", [
    ((E4M3, E5M2, E8M0, E8M0, ct.float32), "x and y must have the same dtype"),
    ((E4M3, E4M3, E8M0, E4M3, ct.float32), "x_scale and y_scale must have the same dtype"),
    ((ct.float16, ct.float16, E8M0, E8M0, ct.float32), "Unsupported input dtype float16"),
    ((E4M3, E4M3, ct.bfloat16, ct.bfloat16, ct.float32), "Unsupported scale dtype bfloat16"),
    ((E4M3, E4M3, E8M0, E8M0, ct.float16), "Unsupported acc dtype float16"),
], ids=lambda v: "-".join(map(str, v)) if isinstance(v, tuple) else None)
def test_mma_scaled_dtype_errors(run_kernel, rng, dtypes, message):
    x_dtype, y_dtype, xs_dtype, ys_dtype, acc_dtype = dtypes
    m, n, k, ks = 16, 16, 64, 2
    args = [np.ones(shape, np.dtype(dtype.numpy)) for shape, dtype in [
        ((m, k), x_dtype), ((m, ks), xs_dtype), ((k, n), y_dtype), ((ks, n), ys_dtype),
        ((m, n), acc_dtype)]]
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(error_kernel, (1,), (*args, m, n, k, m, ks, n))


@pytest.mark.parametrize("tm,tn,tk,tms,tns,tks,message", [
    (16, 16, 64, 8, 16, 2, r"x_scale shape \(8, 2\) is not compatible with x shape \(16, 64\)"),
    (16, 16, 64, 16, 8, 2, r"y_scale shape \(2, 8\) is not compatible with y shape \(64, 16\)"),
    (16, 16, 16, 16, 16, 32,
     r"x\.shape\[1\] must be an exact multiple of x_scale\.shape\[1\] with scaling block size "
     r"B = K // K_s in \{32\}, got x\.shape\[1\] = 16 and x_scale\.shape\[1\] = 32"),
    (16, 16, 64, 16, 16, 8,
     r"x\.shape\[1\] must be an exact multiple of x_scale\.shape\[1\] with scaling block size "
     r"B = K // K_s in \{32\}, got x\.shape\[1\] = 64 and x_scale\.shape\[1\] = 8"),
])
def test_mma_scaled_shape_errors(run_kernel, tm, tn, tk, tms, tns, tks, message):
    f8, e8 = np.dtype(E4M3.numpy), np.dtype(E8M0.numpy)
    args = (np.ones((tm, tk), f8), np.ones((tms, tks), e8), np.ones((tk, tn), f8),
            np.ones((tks, tns), e8), np.zeros((tm, tn), np.float32))
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(error_kernel, (1,), (*args, tm, tn, tk, tms, tks, tns))


@ct.kernel
def one_d_kernel():
    x = ct.ones((16 * 64,), ct.float8_e4m3fn)
    x_scale = ct.ones((16, 2), ct.float8_e8m0fnu)
    y = ct.ones((64, 16), ct.float8_e4m3fn)
    y_scale = ct.ones((2, 16), ct.float8_e8m0fnu)
    ct.printf("%f", ct.mma_scaled(x, x_scale, y, y_scale, ct.zeros((16, 16), ct.float32)))


def test_mma_scaled_1d_error(run_kernel):
    with pytest.raises(ct.TileTypeError, match="Expect shape of `x` to be 2D or 3D"):
        run_kernel(one_d_kernel, (1,), ())


# -- the dtypes: conversions and byte views ------------------------------------------------
def conversion_inputs(rng):
    """128 float32 values over every case of the roundings: zeros, NaN, infinities,
    negatives, overflow and the halfway points at the top, subnormals of the narrow formats
    and of float32, halfway points between powers of two, random values over many decades."""
    special = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, 0.75, 1.5, 1.49, 1.51, 3.0,
               2.5, 5.0, 7.0, 100.0, -2.5, -0.25, 0.25, 0.26, -1e-9, 1e38, 3e38, 2.0**-127,
               1.5 * 2.0**-127, 1.25 * 2.0**-127, 2.0**-128, 1e-45, 1.5 * 2.0**-126,
               114688.0, 120000.0, 122880.0, 131072.0, 2.0**-17, 3 * 2.0**-18, 2.0**-18,
               -2.0**-18, 1.0625, 1.1875, 2.0**-14, 0.875 * 2.0**-14]
    count = 128 - len(special)
    rest = rng.uniform(1, 2, count) * rng.choice([-1, 1], count) * 2.0 ** rng.integers(
        -20, 20, count)
    return np.concatenate([special, rest]).astype(np.float32).reshape(16, 8)


@functools.cache
def round_trip_kernel(narrow):
    @ct.kernel
    def kernel(x, out):
        t = ct.load(x, index=(ct.bid(0), 0), shape=(8, 8))
        r = ct.astype(t, narrow)
        ct.static_assert(r.dtype == narrow)
        ct.store(out, index=(ct.bid(0), 0), tile=ct.astype(r, ct.float32))
    return kernel


@pytest.mark.parametrize("narrow", [ct.float8_e8m0fnu, ct.float8_e5m3fnu, ct.float4_e2m1fn],
                         ids=str)
def test_round_trip(run_kernel, rng, narrow):
    """astype into the dtype rounds as its definition says, and back to float32 is exact."""
    x = conversion_inputs(rng)
    out = np.full(x.shape, -7.0, np.float32)
    run_kernel(round_trip_kernel(narrow), (2,), (x, out))
    if narrow is ct.float8_e5m3fnu:
        expected = e5m3fnu_reference(x).astype(np.float32)
    else:
        expected = x.astype(np.dtype(narrow.numpy)).astype(np.float32)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))


@ct.kernel
def e8m0_array_kernel(scales, out):
    """float8_e8m0fnu arrays: loaded as tiles, stored back through astype."""
    t = ct.load(scales, index=(0,), shape=(256,))
    ct.store(out, index=(0,), tile=ct.astype(t, ct.float32))
    ct.store(scales, index=(0,), tile=ct.astype(ct.astype(t, ct.float32) * 2, t.dtype))


def test_e8m0_arrays(run_kernel):
    codes = np.arange(256, dtype=np.uint8)
    scales = codes.view(ml_dtypes.float8_e8m0fnu).copy()
    out = np.full(256, -7.0, np.float32)
    run_kernel(e8m0_array_kernel, (1,), (scales, out))
    expected = codes.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    np.testing.assert_array_equal(out, expected)
    doubled = np.where(codes >= 254, 255, codes + 1).astype(np.uint8)
    np.testing.assert_array_equal(scales.view(np.uint8), doubled)


@ct.kernel
def byte_view_kernel(data, values, back, DTYPE: ct.Constant):
    """Bytes unpacked into DTYPE elements (as float32), and packed back into bytes."""
    unpacked = ct.unpack_from_bytes(ct.load(data, index=(0,), shape=(64,)), DTYPE)
    ct.store(values, index=(0,), tile=ct.astype(unpacked, ct.float32))
    ct.store(back, index=(0,), tile=ct.pack_to_bytes(unpacked))


@pytest.mark.parametrize("dtype", [ct.float4_e2m1fn, ct.float8_e5m3fnu, ct.float8_e8m0fnu],
                         ids=str)
def test_byte_views(run_kernel, rng, dtype):
    """float4: two elements to a byte, the first in the low nibble; the float8 formats one
    to a byte; pack_to_bytes gives the bytes back (NaN codes included)."""
    data = rng.integers(0, 256, 64, dtype=np.uint8)
    count = 128 if dtype is ct.float4_e2m1fn else 64
    values = np.full(count, -7.0, np.float32)
    back = np.full(64, 0xAB, np.uint8)
    run_kernel(byte_view_kernel, (1,), (data, values, back, dtype))
    if dtype is ct.float4_e2m1fn:
        expected = unpack_f4(data, (128,))
    elif dtype is ct.float8_e5m3fnu:
        expected = E5M3FNU[data]
    else:
        expected = data.view(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    np.testing.assert_array_equal(values, expected.astype(np.float32))
    np.testing.assert_array_equal(np.signbit(values), np.signbit(expected))
    np.testing.assert_array_equal(back, data)


@ct.kernel
def bitcast_kernel(data, out):
    codes = ct.load(data, index=(0,), shape=(16,))
    ct.store(out, index=(0,), tile=ct.astype(ct.bitcast(codes, ct.float8_e5m3fnu),
                                             ct.float32))


def test_bitcast_e5m3fnu(run_kernel, rng):
    data = rng.integers(0, 256, 16, dtype=np.uint8)
    out = np.full(16, -7.0, np.float32)
    run_kernel(bitcast_kernel, (1,), (data, out))
    np.testing.assert_array_equal(out, E5M3FNU[data].astype(np.float32))


def test_pack_to_bytes_needs_whole_bytes(run_kernel):
    @ct.kernel
    def odd():
        ct.pack_to_bytes(ct.full((1,), 1.0, ct.float4_e2m1fn))

    with pytest.raises(ct.TileTypeError, match="not a whole number of bytes"):
        run_kernel(odd, (1,), ())
