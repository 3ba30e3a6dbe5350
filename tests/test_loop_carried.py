"""A variable that a loop carries takes a concrete dtype, as cuTile types it, in every mode:
a loosely typed constant assigned in a ``for`` or ``while`` loop is a run-time scalar of its
own dtype there (int32, int64 or uint64 by value), and typing errors are those of that type,
not of the constant the loop starts from (``numba_tile.interpreter.loop_carried``,
``numba_tile.compiler.typing.settled_errors``). ``static_iter`` loops are unrolled and carry
nothing."""

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
