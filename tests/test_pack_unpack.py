"""``pack_to_bytes`` and ``unpack_from_bytes``: a tile's bytes as a uint8 tile and back,
checked against NumPy's views of the same memory.

Outputs are poisoned before each run (NaN or a sentinel byte pattern).
"""

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct


@ct.kernel
def pack_then_unpack(x, y, TILE: ct.Constant[int]):
    packed = ct.pack_to_bytes(ct.load(x, (0,), (TILE,)))
    ct.store(y, (0,), ct.unpack_from_bytes(packed, y.dtype))


@ct.kernel
def pack_only(x, y, TILE: ct.Constant[int]):
    ct.store(y, (0,), ct.pack_to_bytes(ct.load(x, (0,), (TILE,))))


@ct.kernel
def unpack_only(x, y, TILE: ct.Constant[int]):
    ct.store(y, (0,), ct.unpack_from_bytes(ct.load(x, (0,), (TILE,)), y.dtype))


@ct.kernel
def round_trip_2d(x, y, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(x, (ct.bid(0), ct.bid(1)), (TM, TN))
    back = ct.unpack_from_bytes(ct.pack_to_bytes(t), x.dtype)
    ct.store(y, (ct.bid(0), ct.bid(1)), ct.reshape(back, (TM, TN)))


@ct.kernel
def round_trip_0d(x, y):
    back = ct.unpack_from_bytes(ct.pack_to_bytes(ct.gather(x, ())), x.dtype)
    ct.scatter(y, (), ct.reshape(back, ()))


DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.uint16, np.int64,
          np.float64, ml_dtypes.float8_e4m3fn]


def random_bytes(rng, count, dtype):
    """``count`` elements of ``dtype`` made of random bytes (NaN patterns included)."""
    itemsize = np.dtype(dtype).itemsize
    return rng.integers(0, 256, count * itemsize).astype(np.uint8).view(dtype)


@pytest.mark.parametrize("x_dtype,y_dtype", [(a, b) for a in DTYPES[:4] for b in DTYPES],
                         ids=str)
def test_pack_then_unpack_reinterprets_the_bytes(run_kernel, rng, x_dtype, y_dtype):
    x = random_bytes(rng, 64, x_dtype)
    expected = x.view(np.uint8).view(y_dtype)
    y = np.full(expected.nbytes, 0xA5, np.uint8).view(y_dtype)
    run_kernel(pack_then_unpack, (1,), (x, y, 64))
    np.testing.assert_array_equal(y.view(np.uint8), expected.view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pack_to_bytes_gives_the_bytes_in_memory_order(run_kernel, rng, dtype):
    x = random_bytes(rng, 32, dtype)
    y = np.full(x.nbytes, 0xA5, np.uint8)
    run_kernel(pack_only, (1,), (x, y, 32))
    np.testing.assert_array_equal(y, x.view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unpack_from_bytes(run_kernel, rng, dtype):
    x = rng.integers(0, 256, 64).astype(np.uint8)
    expected = x.view(dtype)
    y = np.full(expected.nbytes, 0xA5, np.uint8).view(dtype)
    run_kernel(unpack_only, (1,), (x, y, 64))
    np.testing.assert_array_equal(y.view(np.uint8), x)


def test_round_trip_of_2d_tiles(run_kernel, rng):
    x = rng.standard_normal((64, 128)).astype(np.float32)
    y = np.full_like(x, np.nan)
    run_kernel(round_trip_2d, (2, 2), (x, y, 32, 64))
    np.testing.assert_array_equal(y, x)


def test_round_trip_of_a_0d_tile(run_kernel):
    x, y = np.array(3.25, np.float32), np.array(np.nan, np.float32)
    run_kernel(round_trip_0d, (1,), (x, y))
    assert y == 3.25


@ct.kernel
def unpack_into(x, y, TILE: ct.Constant[int]):
    ct.unpack_from_bytes(ct.load(x, (0,), (TILE,)), y.dtype)


@ct.kernel
def unpack_2d(x, y):
    ct.unpack_from_bytes(ct.load(x, (0, 0), (4, 4)), y.dtype)


@ct.kernel
def pack_bools(x, TILE: ct.Constant[int]):
    ct.pack_to_bytes(ct.load(x, (0,), (TILE,)))


@pytest.mark.parametrize("kernel,args,message", [
    (unpack_into, (np.ones(2, np.uint8), np.zeros(1, np.int32), 2), "not divisible by 32"),
    (unpack_into, (np.ones(4, np.int32), np.zeros(4, np.int32), 4),
     "unpack_from_bytes requires uint8 tile"),
    (unpack_2d, (np.ones((4, 4), np.uint8), np.zeros(4, np.int32)),
     "unpack_from_bytes requires a 1D tile"),
    (unpack_into, (np.ones(4, np.uint8), np.zeros(4, np.bool_), 4),
     "unpack_from_bytes to a bool_ tile"),
    (pack_bools, (np.ones(4, np.bool_), 4), "pack_to_bytes from a bool_ tile"),
], ids=["not_divisible", "not_uint8", "not_1d", "to_bool", "from_bool"])
def test_errors(run_kernel, kernel, args, message):
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(kernel, (1,), args)
