"""A variable that a loop carries takes a concrete dtype, as cuTile types it, in every mode:
a loosely typed constant assigned in a ``for`` or ``while`` loop is a run-time scalar of its
own dtype there (int32, int64 or uint64 by value), and typing errors are those of that type,
not of the constant the loop starts from (``numba_tile.interpreter.loop_carried``,
``numba_tile.compiler.typing.settled_errors``). ``static_iter`` loops are unrolled and carry
nothing. Where a loop's one way out is a ``break`` in one branch, the other branch's values
reach the next iteration, compiled too (``numba_tile.compiler.frontend.variable_versions``)."""

import numpy as np
import pytest

import numba_tile as ct


@ct.kernel
def counted(n: ct.Constant[int], x):
    t = n
    for i in range(2):
        t += 1
    ct.scatter(x, (), t)


@pytest.mark.parametrize("value,fits", [
    (5, (np.int32, np.int64)), (-2**31, (np.int32, np.int64)),
    (-2**31 - 1, (np.int64,)), (2**31, (np.int64,)), (2**63, (np.uint64,))])
@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.uint64])
def test_a_counter_takes_the_dtype_of_its_start(run_kernel, value, fits, dtype):
    x = np.zeros((), dtype)
    if dtype in fits:
        run_kernel(counted, (1,), (value, x))
        assert int(x) == value + 2
    else:
        with pytest.raises(ct.TileTypeError, match="cannot implicitly cast"):
            run_kernel(counted, (1,), (value, x))


@ct.kernel
def while_counter(x):
    j = 0
    k = 1
    while j < 3:
        j += 1
    for i in ct.static_iter(range(3)):  # unrolled: k stays a constant
        k = k * 2
    ct.scatter(x, 0, ct.int8(1) + j)  # int8 + int32 is int32
    ct.scatter(x, 1, ct.sum(ct.full((k,), 1, ct.int32)))


def test_loop_counters_are_int32_and_unrolled_loops_keep_constants(run_kernel):
    x = np.zeros(2, np.int32)
    run_kernel(while_counter, (1,), (x,))
    np.testing.assert_array_equal(x, [4, 8])
    with pytest.raises(ct.TileTypeError, match="cannot implicitly cast int32"):
        run_kernel(while_counter, (1,), (np.zeros(2, np.int8),))


# -- a loop whose one way out is a break in one branch -------------------------------------------
@ct.kernel
def break_is_the_only_exit_with_dead_code(x, other: ct.Constant):
    i = 0
    a = 10
    while True:
        if ct.bid(0) == i:
            a += 3
            if True:
                break
            a = 30
        else:
            a = other  # carried to the next iteration's a += 3
            i += 1
            if True:
                continue
            a = 40
    ct.scatter(x, ct.bid(0), a)


def count_to_block(start, other):
    i, a = 0, start
    while True:
        if ct.bid(0) == i:
            a += 3
            break
        else:
            a = a * 2 + other
            i += 1
    return a


@ct.kernel
def break_is_the_only_exit_in_helper(x, other: ct.Constant):
    ct.scatter(x, ct.bid(0), count_to_block(10, other))


@pytest.mark.parametrize("kernel,expected", [
    (break_is_the_only_exit_with_dead_code, [13, 23, 23]),
    (break_is_the_only_exit_in_helper, [13, 43, 103])], ids=lambda v: getattr(v, "__name__", ""))
def test_the_other_branch_carries_its_value_to_the_break(run_kernel, kernel, expected):
    x = np.full(3, -1, np.int32)
    run_kernel(kernel, (3,), (x, 20))
    np.testing.assert_array_equal(x, expected)


@pytest.mark.parametrize("kernel", [break_is_the_only_exit_with_dead_code,
                                    break_is_the_only_exit_in_helper], ids=lambda v: v.__name__)
def test_the_other_branch_types_the_loop_head(run_kernel, kernel):
    # compiled, the value the loop carries from the other branch was once dropped, so that
    # its type (float32 here) never met the int32 the loop entered with
    with pytest.raises(ct.TileTypeError, match=r"Type of `a` depends on path taken: "
                       r"Tile\[int32,\(\)\] \(on one path\) vs\. Tile\[float32,\(\)\]"):
        run_kernel(kernel, (2,), (np.zeros(2, np.float32), 20.0))


# -- integers of two widths where paths join: cuTile does not widen ------------------------------
@ct.kernel
def widened_in_a_loop(x, READ: ct.Constant[bool]):
    a = 0
    for i in range(2):
        if READ:
            a = a + ct.int64(3)
        else:  # (not read: no error)
            a = ct.int64(3)


@ct.kernel
def constants_of_two_widths(x):
    if ct.bid(0) == 0:
        a = 0
    else:
        a = 2 ** 40
    ct.scatter(x, (), a)


@ct.kernel
def scalars_of_two_widths(x):
    if ct.bid(0) == 0:
        a = ct.int32(1)
    else:
        a = ct.int64(5)
    ct.scatter(x, (), a)


@ct.kernel
def same_width_in_a_loop(x):
    a = ct.int64(0)
    for i in range(2):
        a = a + ct.int64(3)
    b = 2 ** 40
    for i in range(2):
        b = b + 1
    ct.scatter(x, (), a + b)


def test_integers_of_two_widths_do_not_meet(run_kernel):
    """``a = 0`` (int32 by value) carried by a loop that makes it int64, or an ``if`` whose
    sides give int32 and int64, is cuTile's path error where ``a`` is read (Numba's typing
    widened them compiled; the interpreter raised in loops only); unread, nothing."""
    x = np.zeros((), np.int64)
    with pytest.raises(ct.TileTypeError, match=r"Type of `a` depends on path taken: "
                       r"Tile\[int32,\(\)\] \(on one path\) vs\. Tile\[int64,\(\)\]"):
        run_kernel(widened_in_a_loop, (1,), (x, True))
    run_kernel(widened_in_a_loop, (1,), (x, False))
    for kernel in (constants_of_two_widths, scalars_of_two_widths):
        with pytest.raises(ct.TileTypeError, match="Type of `a` depends on path taken"):
            run_kernel(kernel, (1,), (x,))


def test_integers_of_one_width_meet(run_kernel):
    x = np.zeros((), np.int64)
    run_kernel(same_width_in_a_loop, (1,), (x,))
    assert int(x) == 6 + 2 ** 40 + 2
