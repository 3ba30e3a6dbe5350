"""``ct.scan`` and ``ct.reduce`` with a user's combining function: lambdas, local and
module functions, ``operator`` functions; single tiles and tuples of tiles that broadcast;
every axis, forward and reversed; the order of the combining (checked with functions that
are associative but not commutative); and cuTile's errors, alike in both executors.

Outputs are filled with a sentinel first, inside a guarded buffer: unwritten elements and
writes outside the array both show. Floats are compared with NumPy in float64 by relative
error.
"""

import operator
import re

import numpy as np
import pytest

import numba_tile as ct
from conftest import GUARD, guarded, guards_untouched, relative_error


def _add(a, b):
    return a + b


@ct.kernel
def scan_2d(x, y, FLAVOR: ct.Constant[int], AXIS: ct.Constant[int],
            REVERSE: ct.Constant[bool]):
    def added(a, b):
        return a + b

    t = ct.load(x, (0, 0), (16, 32))
    if FLAVOR == 0:
        r = ct.scan(t, AXIS, lambda a, b: a + b, 0, reverse=REVERSE)
    elif FLAVOR == 1:
        r = ct.scan(t, AXIS, added, 0, reverse=REVERSE)
    elif FLAVOR == 2:
        r = ct.scan(t, AXIS, operator.add, 0, reverse=REVERSE)
    else:
        r = ct.scan(t, axis=AXIS, func=_add, identity=0, reverse=REVERSE)
    ct.store(y, (0, 0), r)


def _cumsum(x, axis, reverse):
    values = np.flip(x, axis) if reverse else x
    out = np.cumsum(values.astype(np.float64), axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("flavor,axis,reverse", [(0, 1, False), (1, 1, True), (2, 0, False),
                                                  (3, -2, True)],
                         ids=["lambda", "def-reversed", "operator-axis0", "global-reversed"])
def test_custom_cumsum_along_every_axis(run_kernel, rng, flavor, axis, reverse):
    x = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    buffer, y = guarded((16, 32), np.float32, np.nan)
    run_kernel(scan_2d, (1,), (x, y, flavor, axis, reverse))
    assert relative_error(y, _cumsum(x, axis, reverse)) < 1e-5
    assert np.isnan(buffer[:GUARD]).all() and np.isnan(buffer[-GUARD:]).all()


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float16])
def test_custom_cumsum_keeps_the_dtype(run_kernel, rng, dtype):
    if np.dtype(dtype).kind in "iu":
        x = rng.integers(0, 9, (16, 32)).astype(dtype)
    else:
        x = rng.uniform(-1, 1, (16, 32)).astype(dtype)
    fill = 77 if np.dtype(dtype).kind in "iu" else np.nan
    buffer, y = guarded((16, 32), dtype, fill)
    run_kernel(scan_2d, (1,), (x, y, 0, 1, False))
    if np.dtype(dtype).kind in "iu":
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(y, np.cumsum(x, 1, dtype=dtype))
        assert guards_untouched(buffer, (16, 32), fill)
    else:
        assert relative_error(y, _cumsum(x, 1, False)) < (1e-2 if dtype == np.float16
                                                           else 1e-12)


@ct.kernel
def ordered(x, first, last, first_reversed, N: ct.Constant[int]):
    t = ct.load(x, (0,), (N,))
    # associative, not commutative: the order of the arguments shows
    ct.store(first, (0,), ct.scan(t, 0, lambda a, b: a, 0))
    ct.store(last, (0,), ct.scan(t, 0, lambda a, b: b, 0))
    ct.store(first_reversed, (0,), ct.scan(t, 0, lambda a, b: a, 0, reverse=True))


@pytest.mark.parametrize("n", [1, 8])
def test_the_combining_order(run_kernel, rng, n):
    x = rng.integers(1, 1000, n).astype(np.int32)
    outputs = [np.full(n, -1, np.int32) for _ in range(3)]
    run_kernel(ordered, (1,), (x, *outputs, n))
    np.testing.assert_array_equal(outputs[0], np.full(n, x[0]))
    np.testing.assert_array_equal(outputs[1], x)
    np.testing.assert_array_equal(outputs[2], np.full(n, x[-1]))


@ct.kernel
def tuple_scan(x, w, out_a, out_b):
    xt = ct.load(x, (0,), (16,))
    wt = ct.load(w, (0, 0), (8, 16))

    def combine(prev_a, prev_b, a, b):
        return prev_a + a, ct.maximum(prev_b, b)

    a, b = ct.scan((xt, wt), axis=-1, func=combine, identity=(0, float("-inf")))
    ct.store(out_a, (0, 0), a)
    ct.store(out_b, (0, 0), b)


def test_a_tuple_of_tiles_broadcast_and_scanned_together(run_kernel, rng):
    x = rng.integers(-10, 10, 16).astype(np.int32)
    w = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    out_a, out_b = np.zeros((8, 16), np.int32), np.full((8, 16), np.nan, np.float32)
    run_kernel(tuple_scan, (1,), (x, w, out_a, out_b))
    np.testing.assert_array_equal(out_a, np.broadcast_to(np.cumsum(x), (8, 16)))
    np.testing.assert_array_equal(out_b, np.maximum.accumulate(w, axis=1))


@ct.kernel
def reductions(x, sums, products, low, at, KEEP: ct.Constant[bool]):
    t = ct.load(x, (0, 0), (8, 32))
    ct.store(sums, (0,), ct.reduce(t, 1, operator.add, 0))
    ct.store(products, (0, 0), ct.reduce(t, 0, lambda a, b: a * b, 1, keepdims=True))
    index = ct.arange(32, dtype=ct.int32)
    value, where = ct.reduce(
        (t, index), 1, lambda v, i, w, j: (ct.minimum(v, w), ct.where(w < v, j, i)),
        (float("inf"), 0), keepdims=KEEP)
    ct.store(low, (0, 0) if KEEP else (0,), value)
    ct.store(at, (0, 0) if KEEP else (0,), where)


@pytest.mark.parametrize("keep", [False, True])
def test_reductions(run_kernel, rng, keep):
    x = rng.uniform(0.5, 1.5, (8, 32)).astype(np.float32)
    sums, products = np.full(8, np.nan, np.float32), np.full((1, 32), np.nan, np.float32)
    shape = (8, 1) if keep else (8,)
    low, at = np.full(shape, np.nan, np.float32), np.full(shape, -1, np.int32)
    run_kernel(reductions, (1,), (x, sums, products, low, at, keep))
    assert relative_error(sums, x.astype(np.float64).sum(1)) < 1e-5
    assert relative_error(products, x.astype(np.float64).prod(0, keepdims=True)) < 1e-5
    np.testing.assert_array_equal(low.reshape(8), x.min(1))
    np.testing.assert_array_equal(at.reshape(8), x.argmin(1))


# -- errors ----------------------------------------------------------------------------------
def _load(x, a, b):
    return ct.load(x, (0, 0), (1, 1)).item() + a + b


@ct.kernel
def refused(x, y, WHICH: ct.Constant[int]):
    def branching(a, b):
        if ct.bid(0) == 0:
            return a + b
        return a - b

    def looping(a, b):
        total = a
        for _ in range(ct.bid(0) + 1):
            total += b
        return total

    def printing(a, b):
        ct.printf("%d", a)
        return a + b

    def nesting(a, b):
        inner = ct.reduce(ct.full((2,), 1, ct.int32), 0, lambda u, v: u + v, 0)
        return a + b + inner

    t = ct.load(x, (0, 0), (4, 4))
    if WHICH == 0:
        r = ct.scan(t, 1, branching, 0)
    elif WHICH == 1:
        r = ct.scan(t, 1, looping, 0)
    elif WHICH == 2:
        r = ct.scan(t, 1, printing, 0)
    elif WHICH == 3:
        r = ct.scan(t, 1, lambda a, b: _load(x, a, b), 0)
    elif WHICH == 4:
        r = ct.scan(t, 1, nesting, 0)
    elif WHICH == 5:
        r = ct.reduce(t, 1, branching, 0, keepdims=True)
    elif WHICH == 6:
        r = ct.scan(t, None, operator.add, 0)
    elif WHICH == 7:
        r = ct.scan(t, 1, operator.add, (0, 0))
    elif WHICH == 8:
        r = ct.scan(t, 1, lambda a, b: (a + b).astype(ct.float32), 0)
    else:
        r = ct.scan(t, 2, operator.add, 0)
    ct.store(y, (0, 0), r)


@pytest.mark.parametrize("which,error,match", [
    (0, ct.TileSyntaxError, "Branching inside scan body is not supported"),
    (1, ct.TileSyntaxError, "Loops inside scan body are not supported"),
    (2, ct.TileSyntaxError, "Operations with memory effects are not supported inside scan"),
    (3, ct.TileSyntaxError, "Operations with memory effects are not supported inside scan"),
    (4, ct.TileSyntaxError, "Nested scan/reduction is not supported"),
    (5, ct.TileSyntaxError, "Branching inside reduction body is not supported"),
    (6, ct.TileTypeError, "Expected an integer constant, but given value has type None"),
    (7, ct.TileTypeError, "identity of scan"),
    (8, ct.TileTypeError, "must return values of the input's dtype int32"),
    (9, ct.TileTypeError, "axis 2 of scan"),
])
def test_what_cutile_refuses(run_kernel, which, error, match):
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    with pytest.raises(error, match=match):
        run_kernel(refused, (1,), (x, np.zeros((4, 4), np.int32), which))


@ct.kernel
def wrong_result_dtype(x, y):
    t = ct.load(x, (0, 0), (4, 4))
    ct.store(y, (0, 0), ct.reduce(t, 1, lambda a, b: (a + b).astype(ct.float32), 0))


def test_a_result_of_another_dtype_is_a_type_error(run_kernel):
    """Both executors, a reduction (the scan: case 8 of test_what_cutile_refuses); the
    compiler raises it before the "Undecided type" of the later steps that follows from it."""
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    with pytest.raises(ct.TileTypeError, match="must return values of the input's dtype"):
        run_kernel(wrong_result_dtype, (1,), (x, np.zeros(4, np.int32)))


@ct.kernel
def affine_maps(m, c, out_m, out_c, reduced_c, N: ct.Constant[int],
                REVERSE: ct.Constant[bool]):
    """Composing affine maps ``x -> m * x + c`` (associative, not commutative) along rows of
    ``N`` elements: the steps cross registers, lanes and warps."""
    def then(m1, c1, m2, c2):
        return m1 * m2, c1 * m2 + c2

    tm, tc = ct.load(m, (0, 0), (2, N)), ct.load(c, (0, 0), (2, N))
    sm, sc = ct.scan((tm, tc), 1, then, (1, 0), reverse=REVERSE)
    ct.store(out_m, (0, 0), sm)
    ct.store(out_c, (0, 0), sc)
    _, rc = ct.reduce((tm, tc), 1, then, (1, 0))
    ct.store(reduced_c, (0,), rc)


def _composed(m, c):
    """The running composition of the maps along each row, in uint32 arithmetic (wrapping
    as int32 does)."""
    out_m, out_c = m.astype(np.uint32).copy(), c.astype(np.uint32).copy()
    for i in range(1, m.shape[1]):
        out_m[:, i] = out_m[:, i - 1] * out_m[:, i]
        out_c[:, i] = out_c[:, i - 1] * m[:, i].astype(np.uint32) + out_c[:, i]
    return out_m.view(np.int32), out_c.view(np.int32)


@pytest.mark.parametrize("n,warps,reverse", [
    (2, 1, False), (4, 1, True), (8, 1, False), (8, 1, True), (64, 2, True),
    (256, 4, False), (1024, 8, True), (1024, 4, False)])
def test_the_combining_order_across_lanes_and_warps(run_kernel, rng, n, warps, reverse):
    m = rng.integers(-7, 8, (2, n)).astype(np.int32)
    c = rng.integers(-1000, 1000, (2, n)).astype(np.int32)
    outs = [np.full((2, n), 7, np.int32) for _ in range(2)]
    reduced = np.full(2, 7, np.int32)
    run_kernel(affine_maps.replace_hints(num_warps=warps), (1,),
               (m, c, *outs, reduced, n, reverse))
    with np.errstate(over="ignore"):
        if reverse:
            expected = [np.flip(e, 1) for e in _composed(np.flip(m, 1), np.flip(c, 1))]
        else:
            expected = _composed(m, c)
        np.testing.assert_array_equal(outs[0], expected[0])
        np.testing.assert_array_equal(outs[1], expected[1])
        np.testing.assert_array_equal(reduced, _composed(m, c)[1][:, -1])


@ct.kernel
def runs_of_a_row(x, y, N: ct.Constant[int], CUSTOM: ct.Constant[bool]):
    t = ct.load(x, (0, 0), (1, N))
    if CUSTOM:
        ct.store(y, (0, 0), ct.scan(t, 1, lambda a, b: a + b, 0))
    else:
        ct.store(y, (0, 0), ct.cumsum(t, 1))


@pytest.mark.parametrize("custom", [False, True], ids=["cumsum", "scan"])
def test_a_scan_is_work_efficient_when_compiled(custom):
    """A row of 1024 float32 in 128 threads, 8 a thread: each thread adds its runs' elements
    one after the other, then one offset and one total per run and step across 32 lanes and
    4 warps (7 steps), then the offset to each element: 40 additions, where doubling every
    element at every step took 120 (custom) or 79 (cumsum); one shuffle per run and lane
    step (10), not one per element."""
    x = np.zeros((1, 1024), np.float32)
    ptx = ct.compile(runs_of_a_row, (x, x, 1024, custom), arch="sm_90").ptx
    assert len(re.findall(r"\badd(\.rn)?\.f32", ptx)) <= 40
    assert len(re.findall(r"\bshfl\.sync", ptx)) <= 10


@ct.kernel
def reduced_rows(x, y):
    t = ct.load(x, (0, 0), (1, 1024))
    ct.store(y, (0,), ct.reduce(t, 1, lambda a, b: a + b, 0))


def test_a_reduction_combines_a_thread_s_runs_first_when_compiled():
    """The same row reduced: each thread combines its two runs of four elements one after
    the other (6 additions), then the runs' totals across lanes, warps and the thread's two
    runs (2 a step): 21 additions and 10 shuffles, where doubling every element took 66
    and 40."""
    ptx = ct.compile(reduced_rows, (np.zeros((1, 1024), np.float32), np.zeros(1, np.float32)),
                     arch="sm_90").ptx
    assert len(re.findall(r"\badd(\.rn)?\.f32", ptx)) <= 21
    assert len(re.findall(r"\bshfl\.sync", ptx)) <= 10
