"""Closures and lambdas of tile code, as cuTile runs them: calls bound as Python binds them
(keywords, defaults), variables read when the closure is called (even those assigned after
it is defined), closures passed out of helpers (alone, in a tuple, from either side of a
branch: their captured values frozen) and into helpers."""

import numpy as np

import numba_tile as ct


@ct.kernel
def defaults_and_keywords(x, y):
    def scale(t, a=10, b=3):
        return t * a + b

    t = ct.gather(x, 0)
    ct.scatter(y, 0, scale(t))
    ct.scatter(y, 1, scale(t, b=5))
    ct.scatter(y, 2, scale(t, 4))
    ct.scatter(y, 3, scale(b=1, t=t, a=2))


def test_closure_calls_bind_keywords_and_defaults(run_kernel):
    x, y = np.full(1, 2, np.int32), np.zeros(4, np.int32)
    run_kernel(defaults_and_keywords, (1,), (x, y))
    np.testing.assert_array_equal(y, [23, 25, 11, 5])


@ct.kernel
def late_variables(x, y):
    f = lambda t, m=100: t * 2 + n + m  # noqa: E731 (n is assigned below)
    t = ct.gather(x, 0)
    n = 5
    ct.scatter(y, 0, f(t))
    n = 7
    ct.scatter(y, 1, f(t))
    g = lambda t: t * 10 + n  # noqa: E731
    ct.scatter(y, 2, g(t))


def test_a_lambda_reads_variables_when_called(run_kernel):
    x, y = np.ones(1, np.int32), np.zeros(3, np.int32)
    run_kernel(late_variables, (1,), (x, y))
    np.testing.assert_array_equal(y, [107, 109, 17])


def _adder_and_name(t):
    def add(y):
        return y + t
    return add, "adder"


def _frozen_default(default):
    def put(x, i, t=default):
        ct.scatter(x, i, t)
    default = -1  # the default was taken when put was defined
    return put


@ct.kernel
def closures_out_of_helpers(x, y):
    i = ct.bid(0)
    add = _adder_and_name(30)[0]  # out of a tuple
    if i == 0:  # the same def on both sides: its captured value is frozen in each
        put = _frozen_default(3)
        plus = _adder_and_name(100)[0]
    else:
        put = _frozen_default(4)
        plus = _adder_and_name(200)[0]
    put(y, i)
    ct.scatter(x, i, plus(add(ct.gather(x, i))))


def test_closures_leave_their_helpers_frozen(run_kernel):
    x, y = np.ones(2, np.int32), np.zeros(2, np.int32)
    run_kernel(closures_out_of_helpers, (2,), (x, y))
    np.testing.assert_array_equal(x, [131, 231])
    np.testing.assert_array_equal(y, [3, 4])


def _apply_twice(f, v):
    return f(f(v))


@ct.kernel
def closure_into_helper(x):
    step = 3
    t = ct.gather(x, 0)
    ct.scatter(x, 0, _apply_twice(lambda v: v * 2 + step, t))


def test_a_lambda_passed_to_a_helper(run_kernel):
    x = np.ones(1, np.int32)
    run_kernel(closure_into_helper, (1,), (x,))
    np.testing.assert_array_equal(x, [13])
