"""The 19 dtypes: attributes, NumPy equivalents, equality and hashing, strictly typed constants."""

import pickle

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from numba_tile.dtypes import ALL_DTYPES, to_dtype

# name, bits, category, NumPy equivalent (None where NumPy has none) -- from spec/API.md / seed 000
EXPECTED = [
    ("bool_", 8, "bool", np.bool_), ("uint8", 8, "int", np.uint8),
    ("uint16", 16, "int", np.uint16), ("uint32", 32, "int", np.uint32),
    ("uint64", 64, "int", np.uint64), ("int8", 8, "int", np.int8), ("int16", 16, "int", np.int16),
    ("int32", 32, "int", np.int32), ("int64", 64, "int", np.int64),
    ("float16", 16, "float", np.float16), ("float32", 32, "float", np.float32),
    ("float64", 64, "float", np.float64), ("bfloat16", 16, "float", ml_dtypes.bfloat16),
    ("tfloat32", 32, "float", None), ("float8_e4m3fn", 8, "float", ml_dtypes.float8_e4m3fn),
    ("float8_e5m2", 8, "float", ml_dtypes.float8_e5m2),
    ("float8_e8m0fnu", 8, "float", ml_dtypes.float8_e8m0fnu),
    ("float8_e5m3fnu", 8, "float", None), ("float4_e2m1fn", 4, "float", ml_dtypes.float4_e2m1fn),
]


def test_there_are_19_distinct_dtypes():
    assert len(ALL_DTYPES) == 19 == len({d.name for d in ALL_DTYPES})
    assert [d.name for d in ALL_DTYPES] == [e[0] for e in EXPECTED]


@pytest.mark.parametrize("name,bits,category,numpy", EXPECTED)
def test_attributes(name, bits, category, numpy):
    dtype = getattr(ct, name)
    assert isinstance(dtype, ct.DType)
    assert (dtype.name, dtype.bitwidth, dtype.category) == (name, bits, category)
    assert str(dtype) == repr(dtype) == name
    assert dtype.numpy == (None if numpy is None else np.dtype(numpy))
    if numpy is not None:
        assert to_dtype(np.dtype(numpy)) is dtype


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_equality_hashing_and_pickling(dtype):
    assert dtype == dtype and hash(dtype) == hash(dtype)
    assert all(dtype != other for other in ALL_DTYPES if other is not dtype)
    assert {dtype: 1}[dtype] == 1
    assert pickle.loads(pickle.dumps(dtype)) is dtype
    assert dtype != dtype.name and dtype != dtype.numpy


def test_foreign_dtypes_and_names():
    assert to_dtype("float16") is ct.float16 and to_dtype("bf") is ct.bfloat16
    assert to_dtype(bool) is ct.bool_ and to_dtype(int) is ct.int32 and to_dtype(float) is ct.float32
    assert to_dtype(np.int64) is ct.int64
    with pytest.raises(TypeError):
        to_dtype(np.complex64)
    with pytest.raises(TypeError):
        to_dtype("float128")


@pytest.mark.parametrize("dtype,value,expected", [
    (ct.int16, 5, 5), (ct.uint8, 255, 255), (ct.float16, 1.5, 1.5), (ct.int32, 2.9, 2),
    (ct.int32, -2.9, -2), (ct.bfloat16, 1.0 + 2**-9, 1.0), (ct.tfloat32, 1.0 + 2**-12, 1.0),
    (ct.bool_, 3, True), (ct.float8_e4m3fn, 1.0625, 1.0), (ct.float64, 0.1, 0.1)])
def test_constructors_make_strictly_typed_constants(dtype, value, expected):
    c = dtype(value)
    assert c.dtype is dtype and c.shape == () and c.is_constant
    assert c.item().constant_value() == expected


@pytest.mark.parametrize("dtype,value", [(ct.float16, 70000.0), (ct.int8, 300.0)])
def test_constructor_range_check(dtype, value):
    with pytest.raises(ct.TileValueError, match=f"out of range of {dtype.name}"):
        dtype(value)


@pytest.mark.parametrize("dtype,value,expected", [
    (ct.int8, 128, -128), (ct.uint8, -1, 255), (ct.int16, -40000, 25536),
    (ct.uint32, -3, 0xfffffffd), (ct.uint32, 0x1abcdef23, 0xabcdef23),
    (ct.int32, -3_000_000_000, 1294967296), (ct.int64, 2**64 - 1, -1),
    (ct.uint64, 2**64 - 1, 2**64 - 1)])
def test_an_integer_constructor_keeps_the_low_bits(dtype, value, expected):
    """As cuTile truncates: ``ct.uint32(-3)`` is ``0xfffffffd``."""
    assert dtype(value).constant_value() == expected


@pytest.mark.parametrize("dtype", [ct.int64, ct.uint64, ct.int8, ct.float32], ids=str)
def test_an_int_no_dtype_holds_is_no_constant(dtype):
    """As cuTile: ``ct.int64(2**64 + 5)`` is out of range of every integer type."""
    with pytest.raises(ct.TileValueError, match="out of range of any supported integer type"):
        dtype(2 ** 64 + 5)


def test_an_unsigned_float_format_takes_no_negative_constant():
    assert ct.float8_e8m0fnu(0.2).constant_value() == 0.25
    with pytest.raises(ct.TileValueError, match="Negative values cannot be represented in an "
                                                "unsigned float format"):
        ct.float8_e8m0fnu(-0.2)


def test_constant_arithmetic_stays_strict():
    c = ct.int16(5) + 2
    assert c.dtype is ct.int16 and c.is_constant and c.constant_value() == 7
    with pytest.raises(ct.TileValueError):
        ct.int8(100) + 200


@ct.kernel
def zeros_and_numpy_scalars(out):
    # ct.float16() and np.int32() are zeros of their dtypes, as in cuTile; NumPy scalars are
    # typed constants wherever a value goes (a full's fill value, an operand)
    t = ct.full((4,), np.float32(2.5), ct.float32) + ct.float16() + np.int32() + ct.int8()
    ct.store(out, (0,), t + ct.full((4,), np.int16(3), ct.float32) * np.float32(2))


def test_a_dtype_called_without_a_value_is_zero(run_kernel):
    out = np.full(4, np.nan, np.float32)
    run_kernel(zeros_and_numpy_scalars, (1,), (out,))
    np.testing.assert_array_equal(out, np.full(4, 8.5, np.float32))
    assert ct.float16().constant_value() == 0 and ct.float16().dtype is ct.float16
