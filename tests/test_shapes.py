"""Shape and dtype ops: reshape, permute, transpose, expand_dims and ``t[:, None]``,
broadcast_to, item, the Tile methods, extract, insert, cat, astype, bitcast (API.md sections 2
and 3, "Shape and dtype").

Kernels load whole tiles, apply an op given as a function and store the result; results are
compared byte for byte with the NumPy equivalent. ``ct.static_assert`` checks the result's
shape and dtype inside the kernel.
"""

import functools
import itertools

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct

NP_TO_CT = {np.dtype(np.float16): ct.float16, np.dtype(np.float32): ct.float32,
            np.dtype(np.float64): ct.float64, np.dtype(np.int8): ct.int8,
            np.dtype(np.int16): ct.int16, np.dtype(np.int32): ct.int32,
            np.dtype(np.int64): ct.int64, np.dtype(np.uint8): ct.uint8,
            np.dtype(np.uint16): ct.uint16, np.dtype(np.uint32): ct.uint32,
            np.dtype(np.uint64): ct.uint64, np.dtype(ml_dtypes.bfloat16): ct.bfloat16}


# -- kernels --------------------------------------------------------------------------------
@functools.cache
def unary_kernel(fn):
    @ct.kernel
    def kernel(x, out, SHAPE: ct.Constant, X_INDEX: ct.Constant, OUT_INDEX: ct.Constant,
               RESULT_SHAPE: ct.Constant, RESULT_DTYPE: ct.Constant):
        r = fn(ct.load(x, X_INDEX, SHAPE))
        ct.static_assert(r.shape == RESULT_SHAPE, "wrong result shape")
        ct.static_assert(r.dtype == RESULT_DTYPE, "wrong result dtype")
        ct.store(out, OUT_INDEX, r)

    return kernel


@functools.cache
def binary_kernel(fn):
    @ct.kernel
    def kernel(x, y, out, X_SHAPE: ct.Constant, Y_SHAPE: ct.Constant, X_INDEX: ct.Constant,
               Y_INDEX: ct.Constant, OUT_INDEX: ct.Constant, RESULT_SHAPE: ct.Constant,
               RESULT_DTYPE: ct.Constant):
        r = fn(ct.load(x, X_INDEX, X_SHAPE), ct.load(y, Y_INDEX, Y_SHAPE))
        ct.static_assert(r.shape == RESULT_SHAPE, "wrong result shape")
        ct.static_assert(r.dtype == RESULT_DTYPE, "wrong result dtype")
        ct.store(out, OUT_INDEX, r)

    return kernel


# -- host helpers ---------------------------------------------------------------------------
def random_tile(rng, shape, dtype=np.float32):
    """Random non-zero values of ``dtype`` (floats with fractional parts and both signs)."""
    return np.asarray(_random_values(rng, shape, dtype))


def _random_values(rng, shape, dtype):
    sign = rng.choice([-1, 1], size=shape)
    if np.dtype(dtype).kind == "u":
        return rng.integers(1, 100, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "i":
        return (sign * rng.integers(1, 100, size=shape)).astype(dtype)
    return (sign * rng.uniform(0.1, 100.0, size=shape)).astype(dtype)


def poisoned(shape, dtype):
    shape = shape or (1,)
    if np.dtype(dtype).kind in "iu":
        return np.full(shape, np.iinfo(dtype).max, dtype)
    return np.full(shape, np.nan, dtype)


def assert_same(actual, expected):
    """Same shape, same dtype, same bytes."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.tobytes() == expected.tobytes(), (actual, expected)


def zeros(array):
    """The index of an array's first tile."""
    return (0,) * array.ndim


def run_unary(run_kernel, fn, x, expected):
    """``x`` of shape () is passed as a 1-element array and loaded with ``shape=()``."""
    out = poisoned(expected.shape, expected.dtype)
    array = x.reshape(x.shape or (1,))
    run_kernel(unary_kernel(fn), (1,), (array, out, x.shape, zeros(array), zeros(out),
                                        expected.shape, NP_TO_CT[expected.dtype]))
    assert_same(out.reshape(expected.shape), expected)


def run_binary(run_kernel, fn, x, y, expected):
    out = poisoned(expected.shape, expected.dtype)
    run_kernel(binary_kernel(fn), (1,), (x, y, out, x.shape, y.shape, zeros(x), zeros(y),
                                         zeros(out), expected.shape, NP_TO_CT[expected.dtype]))
    assert_same(out.reshape(expected.shape), expected)


class Case:
    """A tile op (``fn``, applied in tile code) and its NumPy equivalent (``ref``)."""

    def __init__(self, name, shape, fn, ref, dtype=np.float32):
        self.name, self.shape, self.fn, self.ref, self.dtype = name, shape, fn, ref, dtype

    def __repr__(self):
        return self.name


def reshaper(shape):
    return Case(f"reshape-{shape}", None, lambda t: ct.reshape(t, shape),
                lambda a: a.reshape(shape))


def with_shape(case, shape, dtype=np.float32):
    return Case(f"{case.name}-from-{shape}-{np.dtype(dtype).name}", shape, case.fn, case.ref,
                dtype)


RESHAPE_CASES = [
    with_shape(reshaper((4, 4)), (16,)), with_shape(reshaper((16,)), (4, 4)),
    with_shape(reshaper((4, 4)), (2, 8)), with_shape(reshaper((8, 8)), (2, 4, 8)),
    with_shape(reshaper((2, 4, 8)), (8, 8)), with_shape(reshaper((1, 32)), (4, 8)),
    with_shape(reshaper((2, 2, 4)), (4, 4), np.int32), with_shape(reshaper((1, 1, 16)), (16,)),
    with_shape(reshaper((8, 2, 2)), (2, 4, 4), np.int8), with_shape(reshaper((2, 8)), (16,)),
    with_shape(reshaper(()), (1, 1)), with_shape(reshaper((1,)), ()),
]


def permuter(axes):
    return Case(f"permute-{axes}", (2, 4, 8), lambda t: ct.permute(t, axes),
                lambda a: np.transpose(a, axes))


def transposer(*axes):
    return Case(f"transpose-{axes}", (2, 4, 8) if axes else (4, 8),
                lambda t: ct.transpose(t, *axes), lambda a: np.swapaxes(a, *axes) if axes
                else a.T)


def expander(shape, axis):
    return Case(f"expand_dims-{shape}-{axis}", shape, lambda t: ct.expand_dims(t, axis),
                lambda a: np.expand_dims(a, axis))


def broadcaster(shape, target):
    return Case(f"broadcast_to-{shape}-{target}", shape, lambda t: ct.broadcast_to(t, target),
                lambda a: np.broadcast_to(a, target))


def extractor(shape, index, sub, method=False):
    def ref(a):
        return a[tuple(slice(i * s, (i + 1) * s) for i, s in zip(index, sub))]

    fn = (lambda t: t.extract(index, sub)) if method else (lambda t: ct.extract(t, index, sub))
    return Case(f"{'method-' if method else ''}extract-{shape}-{index}-{sub}", shape, fn, ref)


def caster(dtype_in, ct_dtype, dtype_out, method=False):
    fn = (lambda t: t.astype(ct_dtype)) if method else (lambda t: ct.astype(t, ct_dtype))
    return Case(f"{'method-' if method else ''}astype-{np.dtype(dtype_in).name}-{ct_dtype}",
                (4, 8), fn, lambda a: a.astype(dtype_out), dtype_in)


def bitcaster(dtype_in, ct_dtype, dtype_out):
    return Case(f"bitcast-{np.dtype(dtype_in).name}-{ct_dtype}", (4, 8),
                lambda t: ct.bitcast(t, ct_dtype), lambda a: a.view(dtype_out), dtype_in)


UNARY_CASES = (
    RESHAPE_CASES
    + [permuter(p) for p in itertools.permutations(range(3))]
    + [permuter((-1, 0, -2))]
    + [transposer(), transposer(0, 2), transposer(1, 2), transposer(0, 1), transposer(-1, 0)]
    + [expander((4, 8), a) for a in (0, 1, 2, -1, -2, -3)] + [expander((8,), 0),
                                                              expander((8,), 1)]
    + [Case("index-[:,None]", (8,), lambda t: t[:, None], lambda a: a[:, None]),
       Case("index-[None,:]", (8,), lambda t: t[None, :], lambda a: a[None, :]),
       Case("index-[...,None]", (4, 8), lambda t: t[..., None], lambda a: a[..., None]),
       Case("index-[None,...]", (4, 8), lambda t: t[None, ...], lambda a: a[None, ...]),
       Case("index-[:,None,:]", (4, 8), lambda t: t[:, None, :], lambda a: a[:, None, :]),
       Case("index-[None,:,None]", (8,), lambda t: t[None, :, None],
            lambda a: a[None, :, None])]
    + [broadcaster((4, 1), (4, 8)), broadcaster((8,), (4, 8)), broadcaster((1, 8), (2, 4, 8)),
       broadcaster((1, 1), (4, 8)), broadcaster((4, 8), (4, 8)),
       broadcaster((2, 1, 8), (2, 4, 8)), broadcaster((1,), (2, 2, 4))]
    + [extractor((4, 8), (1, 2), (2, 2)), extractor((4, 8), (0, 0), (4, 4)),
       extractor((4, 8), (0, 1), (4, 4)), extractor((4, 8), (3, 1), (1, 4)),
       extractor((2, 4, 8), (1, 0, 1), (1, 4, 4)), extractor((16,), (3,), (4,)),
       extractor((4, 8), (1, 3), (2, 2), method=True)]
    + [Case("item-(1,1)", (1, 1), lambda t: t.item(), lambda a: a.reshape(())),
       Case("item-(1,)", (1,), lambda t: t.item(), lambda a: a.reshape(())),
       Case("method-reshape", (4, 8), lambda t: t.reshape((8, 4)), lambda a: a.reshape(8, 4)),
       Case("method-permute", (2, 4, 8), lambda t: t.permute((1, 2, 0)),
            lambda a: np.transpose(a, (1, 2, 0))),
       Case("method-transpose", (4, 8), lambda t: t.transpose(), lambda a: a.T),
       Case("method-transpose-axes", (2, 4, 8), lambda t: t.transpose(0, 2),
            lambda a: np.swapaxes(a, 0, 2))]
    + [caster(np.float32, ct.int32, np.int32), caster(np.float32, ct.float16, np.float16),
       caster(np.int32, ct.float32, np.float32), caster(np.int16, ct.int64, np.int64),
       caster(np.float32, ct.bfloat16, ml_dtypes.bfloat16),
       caster(np.float64, ct.float32, np.float32, method=True),
       caster(np.float32, ct.int16, np.int16, method=True)]
    + [bitcaster(np.float32, ct.int32, np.int32), bitcaster(np.int32, ct.float32, np.float32),
       bitcaster(np.float16, ct.int16, np.int16), bitcaster(np.uint8, ct.int8, np.int8),
       bitcaster(np.float64, ct.uint64, np.uint64),
       bitcaster(ml_dtypes.bfloat16, ct.uint16, np.uint16)]
)


@pytest.mark.parametrize("case", UNARY_CASES, ids=repr)
def test_unary_shape_op(run_kernel, rng, case):
    x = random_tile(rng, case.shape, case.dtype)
    expected = np.array(case.ref(x), order="C")
    run_unary(run_kernel, case.fn, x, expected)


def test_astype_truncates_toward_zero(run_kernel):
    x = np.array([1.75, -1.75, 2.5, -2.5, 0.25, -0.25, 99.9, -99.9], np.float32)
    run_unary(run_kernel, lambda t: t.astype(ct.int32), x, np.trunc(x).astype(np.int32))


# -- ops of two tiles -----------------------------------------------------------------------
def inserter(shape, index, sub, method=False):
    def ref(a, b):
        out = a.copy()
        out[tuple(slice(i * s, (i + 1) * s) for i, s in zip(index, sub))] = b
        return out

    fn = (lambda t, v: t.insert(index, v)) if method else (lambda t, v: ct.insert(t, index, v))
    return Case(f"{'method-' if method else ''}insert-{shape}-{index}-{sub}", (shape, sub), fn,
                ref)


def catter(shape, axis, dtype=np.float32):
    return Case(f"cat-{shape}-{axis}-{np.dtype(dtype).name}", (shape, shape),
                lambda a, b: ct.cat((a, b), axis),
                lambda a, b: np.concatenate([a, b], axis), dtype)


BINARY_CASES = [
    inserter((4, 8), (1, 2), (2, 2)), inserter((4, 8), (0, 0), (4, 4)),
    inserter((4, 8), (3, 1), (1, 4)), inserter((16,), (2,), (4,)),
    inserter((2, 4, 8), (1, 1, 0), (1, 2, 8)),
    inserter((4, 8), (1, 1), (2, 4), method=True),
    catter((4,), 0), catter((4, 8), 0), catter((4, 8), 1), catter((4, 8), -1),
    catter((2, 4, 8), 1, np.int16), catter((2, 4, 8), -3, np.uint8),
]


@pytest.mark.parametrize("case", BINARY_CASES, ids=repr)
def test_binary_shape_op(run_kernel, rng, case):
    x_shape, y_shape = case.shape
    x = random_tile(rng, x_shape, case.dtype)
    y = random_tile(rng, y_shape, case.dtype)
    run_binary(run_kernel, case.fn, x, y, case.ref(x, y))


def test_insert_converts_value_to_tile_dtype(run_kernel, rng):
    x = random_tile(rng, (4, 8), np.float32)
    y = random_tile(rng, (2, 4), np.int16)
    expected = x.copy()
    expected[2:4, 4:8] = y
    run_binary(run_kernel, lambda t, v: ct.insert(t, (1, 1), v.astype(ct.float32)), x, y,
               expected)


# -- errors ---------------------------------------------------------------------------------
def run_for_error(run_kernel, fn, shape, error, dtype=np.float32):
    x = np.ones(shape, dtype)
    out = np.zeros(16, dtype)
    with pytest.raises(error):
        run_kernel(error_kernel(fn), (1,), (x, out, shape, zeros(x)))


@functools.cache
def error_kernel(fn):
    @ct.kernel
    def kernel(x, out, SHAPE: ct.Constant, X_INDEX: ct.Constant):
        r = fn(ct.load(x, X_INDEX, SHAPE))
        ct.store(out, (0,), ct.reshape(r, (16,)))

    return kernel


ERROR_CASES = [
    ("reshape-not-power-of-two", (16,), lambda t: ct.reshape(t, (6,)), ct.TileTypeError),
    ("reshape-not-power-of-two-2d", (4, 4), lambda t: ct.reshape(t, (3, 4)),
     ct.TileTypeError),
    ("reshape-size-mismatch", (16,), lambda t: ct.reshape(t, (4, 8)), ct.TileTypeError),
    ("reshape-size-mismatch-smaller", (4, 4), lambda t: ct.reshape(t, (2, 2)),
     ct.TileTypeError),
    ("method-reshape-size-mismatch", (4, 4), lambda t: t.reshape((8, 4)), ct.TileTypeError),
    ("item-of-many", (16,), lambda t: t.item(), ct.TileTypeError),
    ("broadcast-incompatible", (4,), lambda t: ct.broadcast_to(t, (8,)), ct.TileTypeError),
    ("broadcast-incompatible-2d", (4, 2), lambda t: ct.broadcast_to(t, (4, 8)),
     ct.TileTypeError),
    ("broadcast-fewer-dims", (2, 8), lambda t: ct.broadcast_to(t, (8,)), ct.TileTypeError),
    ("broadcast-swapped", (4, 8), lambda t: ct.broadcast_to(t, (8, 4)), ct.TileTypeError),
    ("cat-shape-mismatch", (4, 4), lambda t: ct.cat((t, ct.reshape(t, (2, 8))), 0),
     ct.TileTypeError),
    ("int-index", (4, 4), lambda t: t[0], ct.TileTypeError),
    ("int-index-1d", (16,), lambda t: t[3], ct.TileTypeError),
    ("int-index-mixed", (4, 4), lambda t: t[:, 1], ct.TileTypeError),
]


@pytest.mark.parametrize("name,shape,fn,error", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_shape_op_errors(run_kernel, name, shape, fn, error):
    run_for_error(run_kernel, fn, shape, error)


def test_error_kernel_control(run_kernel):
    """The error kernel itself runs when the op is valid."""
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    out = np.full(16, np.nan, np.float32)
    run_kernel(error_kernel(lambda t: ct.reshape(t, (2, 8))), (1,), (x, out, (4, 4), (0, 0)))
    np.testing.assert_array_equal(out, x.reshape(16))
