"""The bits of host tile elements as they lie in GPU memory, and back.

Most dtypes keep their values in NumPy in the GPU's own format, so their bits are a view.
Two do not: ``float8_e5m3fnu`` (no NumPy type: kept as the float32 values it can hold) and
``float4_e2m1fn`` (``ml_dtypes`` gives it a whole byte; in memory two share a byte, the first
in the low nibble). ``bitcast``, ``pack_to_bytes`` and ``unpack_from_bytes`` go through here.

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.host.bit_patterns import to_bits, from_bits
>>> to_bits(np.array([1.0, 2.0, 114688.0], np.float32), ct.float8_e5m3fnu)
array([120, 128, 254], dtype=uint8)
>>> from_bits(np.array([0x21], np.uint8), ct.float4_e2m1fn, packed=True).astype(np.float32)
array([0.5, 1. ], dtype=float32)
"""

import numpy as np

from .. import dtypes as d


def _e5m3fnu_values():
    """The value of each of the 256 float8_e5m3fnu codes (unsigned; 5 exponent bits of bias
    15, 3 mantissa bits; code 0xFF is NaN, there is no infinity)."""
    codes = np.arange(256)
    exponent, mantissa = codes >> 3, codes & 7
    values = np.where(exponent == 0, mantissa * 2.0 ** -17,
                      (1 + mantissa / 8) * 2.0 ** (exponent - 15.0))
    values[0xFF] = np.nan
    return values.astype(np.float32)


_E5M3FNU = _e5m3fnu_values()


def _unsigned(bits):
    return np.dtype(f"uint{max(bits, 8)}")


def to_bits(values, dtype):
    """The bit patterns of ``values`` (held in ``dtype``'s host storage), as unsigned
    integers of the dtype's width (a byte for float4, its code in the low nibble)."""
    values = np.asarray(values)
    if dtype is d.float8_e5m3fnu:
        # the values are representable (rounded when made): find each one's code
        codes = np.searchsorted(_E5M3FNU[:0xFF], values.astype(np.float32))
        return np.where(np.isnan(values), 0xFF, codes).astype(np.uint8)
    if dtype is d.bool_:
        return values.astype(np.uint8)
    # (ascontiguousarray makes a 0-d array 1-d: the shape is put back)
    return np.ascontiguousarray(values).view(_unsigned(dtype.bitwidth)).reshape(values.shape)


def from_bits(bits, dtype, packed=False):
    """Elements of ``dtype`` from their bit patterns (the inverse of :func:`to_bits`);
    with ``packed``, ``bits`` are bytes holding two float4 elements each, low nibble first."""
    bits = np.asarray(bits)
    if packed and dtype.bitwidth == 4:
        nibbles = np.stack([bits & 0x0F, bits >> 4], axis=-1)
        bits = nibbles.reshape(*bits.shape[:-1], -1).astype(np.uint8)
    if dtype is d.float8_e5m3fnu:
        return _E5M3FNU[bits.astype(np.intp)]
    if dtype is d.bool_:
        return bits != 0
    unsigned = np.ascontiguousarray(bits).astype(_unsigned(dtype.bitwidth))
    return unsigned.view(dtype.storage).reshape(bits.shape)


def packed_bytes(values, dtype):
    """The bytes of ``values`` (1-d, in order) as they lie in memory: float4 elements two to a
    byte, low nibble first; others each in their bytes, in memory order."""
    bits = to_bits(values, dtype)
    if dtype.bitwidth == 4:
        pairs = bits.reshape(-1, 2)
        return (pairs[:, 0] | (pairs[:, 1] << 4)).astype(np.uint8)
    return bits.reshape(-1).view(np.uint8)


def unpacked_bytes(data, dtype):
    """Elements of ``dtype`` read from ``data``, 1-d uint8 bytes in memory order (the inverse
    of :func:`packed_bytes`)."""
    data = np.ascontiguousarray(data, np.uint8)
    if dtype.bitwidth == 4:
        return from_bits(data, dtype, packed=True)
    return from_bits(data.view(_unsigned(dtype.bitwidth)), dtype)
