"""``return`` inside ``for`` loops, as cuTile 1.7 compiles it (1.6 refused it): a helper that
returns from inside a loop (nested loops too), a kernel whose blocks return early, in both
executors (the results checked against NumPy; on the GPU in GPU mode). A ``return`` that
leaves a ``static_iter`` loop's unrolled body stays an error, as in cuTile."""

import numpy as np
import pytest

import numba_tile as ct


def _first_positive_row(x, rows):
    for i in range(rows):
        if ct.sum(ct.load(x, (i, 0), (1, 4))) > 0:
            return i
    return -1


def _first_positive_pair(x, rows):
    for i in range(rows):
        for j in range(i, rows):
            if ct.sum(ct.load(x, (i, 0), (1, 4)) * ct.load(x, (j, 0), (1, 4))) < 0:
                return i * rows + j
    return -1


def _first_tile_above(x, rows, limit):
    for i in range(rows):
        t = ct.load(x, (i, 0), (1, 4))
        if ct.max(t) > limit:
            return t
    return ct.zeros((1, 4), ct.float32)


@ct.kernel
def searches(x, out, ROWS: ct.Constant[int]):
    ct.scatter(out, 0, _first_positive_row(x, ROWS))
    ct.scatter(out, 1, _first_positive_pair(x, ROWS))
    ct.store(out, (1,), ct.reshape(_first_tile_above(x, ROWS, 2.5), (4,)).astype(ct.int32))


def _sums(x):
    return x.sum(axis=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_helper_returns_from_inside_loops(run_kernel, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, (6, 4)).astype(np.float32)
    out = np.full(8, -99, np.int32)
    run_kernel(searches, (1,), (x, out, 6))
    sums = _sums(x)
    first = next((i for i in range(6) if sums[i] > 0), -1)
    pair = next((i * 6 + j for i in range(6) for j in range(i, 6)
                 if (x[i] * x[j]).sum() < 0), -1)
    above = next((x[i] for i in range(6) if x[i].max() > 2.5), np.zeros(4, np.float32))
    np.testing.assert_array_equal(out[:2], [first, pair])
    np.testing.assert_array_equal(out[4:], above.astype(np.int32))


@ct.kernel
def blocks_return_early(x, out):
    for i in range(4):
        if ct.bid(0) == i * 2:  # blocks 0, 2, 4, 6 write nothing
            return
    ct.store(out, (ct.bid(0),), ct.load(x, (ct.bid(0),), (4,)) + 1)


def test_a_kernel_returns_from_inside_a_loop(run_kernel):
    x = np.arange(32, dtype=np.float32)
    out = np.full(32, np.nan, np.float32)
    run_kernel(blocks_return_early, (8,), (x, out))
    for block in range(8):
        part = out[4 * block:4 * block + 4]
        if block % 2 == 0:
            assert np.isnan(part).all()
        else:
            np.testing.assert_array_equal(part, x[4 * block:4 * block + 4] + 1)


def _returns_from_static_iter(x):
    for i in ct.static_iter(range(3)):
        if ct.sum(ct.load(x, (i, 0), (1, 4))) > 0:
            return i
    return -1


def _returns_from_a_loop_in_static_iter(x):
    for i in ct.static_iter(range(2)):
        for j in range(2):
            if ct.sum(ct.load(x, (i + j, 0), (1, 4))) > 0:
                return i
    return -1


@ct.kernel
def returns_from_static_iter(x, out):
    ct.scatter(out, 0, _returns_from_static_iter(x))


@ct.kernel
def returns_from_a_loop_in_static_iter(x, out):
    ct.scatter(out, 0, _returns_from_a_loop_in_static_iter(x))


def _static_iter_arguments():
    return np.ones((4, 4), np.float32), np.zeros(2, np.int32)


def test_a_return_from_static_iter_is_a_syntax_error(run_kernel):
    with pytest.raises(ct.TileSyntaxError, match=r"^Returning from a for loop with "
                                                 r"static_iter\(\) is not supported"):
        run_kernel(returns_from_static_iter, (1,), _static_iter_arguments())


def test_a_return_from_a_loop_in_static_iter_is_not_supported_yet():
    """cuTile 1.7 compiles it; both executors refuse it alike (the unrolled body is left
    only through its end)."""
    message = r"^Returning from a loop inside a for loop with static_iter\(\) is not " \
        r"supported yet"
    with pytest.raises(ct.TileUnsupportedFeatureError, match=message):
        with ct.interpret():
            ct.launch(0, (1,), returns_from_a_loop_in_static_iter, _static_iter_arguments())
    with pytest.raises(ct.TileUnsupportedFeatureError, match=message):
        ct.compile(returns_from_a_loop_in_static_iter, _static_iter_arguments(), arch="sm_90")


def _returns_from_nested_static_iter(x):
    for i in ct.static_iter(range(2)):
        for j in ct.static_iter(range(2)):
            if i == j:
                return i
    return -1


@ct.kernel
def returns_from_nested_static_iter(x, out):
    ct.scatter(out, 0, _returns_from_nested_static_iter(x))


def test_a_return_from_nested_static_iter_is_a_syntax_error(run_kernel):
    """(The inner static_iter loop is unrolled too: the return leaves an unrolled body.)"""
    with pytest.raises(ct.TileSyntaxError, match=r"^Returning from a for loop with "
                                                 r"static_iter\(\) is not supported"):
        run_kernel(returns_from_nested_static_iter, (1,), _static_iter_arguments())


def _fibonacci_above(n):
    a, b = 1, 1
    for i in range(n):
        a, b = b, a + b
        if b > n:
            return b  # (and None where the loop ends: two types, as cuTile 1.7 says)


@ct.kernel
def returns_a_value_or_none(n, out):
    ct.store(out, (0,), ct.full((1,), _fibonacci_above(ct.load(n, (0,), (1,)).item()),
                                ct.int32))


def test_a_value_from_a_loop_and_none_at_the_end_are_two_types(run_kernel):
    with pytest.raises(ct.TileTypeError, match=r"^Type of return value depends on path taken: "
                                               r"None \(on one path\) vs\. Tile\[int32,\(\)\] "
                                               r"\(on another\)"):
        run_kernel(returns_a_value_or_none, (1,), (np.array([15], np.int32),
                                                   np.zeros(1, np.int32)))
