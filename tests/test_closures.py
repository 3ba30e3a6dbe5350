"""Closures and lambdas of tile code, as cuTile runs them: calls bound as Python binds them
(keywords, defaults), variables read when the closure is called (even those assigned after
it is defined), closures passed out of helpers (alone, in a tuple, from either side of a
branch: their captured values frozen) and into helpers.

A closure reads its variables as Python's cells hold them when it is called. Compile mode
does not run kernels, so the compiler's reading is also checked in the PTX: the kernels
below compute from distinctive constants, which the PTX holds folded (the value a closure
reads, not the one it would have read at its definition)."""

import re

import numpy as np
import pytest

import numba_tile as ct

#: the distinctive constants of the PTX checks: never a line number or a register
BASE = 7_000_000


def _constants(kernel, args):
    """The constants from BASE to BASE + 99 in the kernel's PTX (compiled on the CPU)."""
    ptx = ct.compile(kernel, args, arch="sm_90").ptx
    return {int(v) for v in re.findall(r"\b\d+\b", ptx) if BASE <= int(v) < BASE + 100}


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


@ct.kernel
def closure_unpacked(x):
    add, name = _adder_and_name(5)  # unpacked from the tuple the helper returns
    ct.static_assert(name == "adder")
    ct.scatter(x, ct.bid(0), add(ct.gather(x, ct.bid(0))))


def test_a_closure_unpacked_from_a_tuple(run_kernel):
    x = np.arange(2, dtype=np.int32)
    run_kernel(closure_unpacked, (2,), (x,))
    np.testing.assert_array_equal(x, [5, 6])


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


# -- variables read when the closure is called, as Python's cells ------------------------------
def _incremented_after(v):
    f = lambda: v  # noqa: E731
    v = v + 1  # before the closure is called: it reads v + 1
    return f


@ct.kernel
def reassigned_in_a_helper(y):
    g = _incremented_after(BASE + 5)
    ct.scatter(y, 0, g())


@ct.kernel
def reassigned_in_the_kernel(y):
    n = BASE + 1

    def make():
        return lambda: n  # the kernel's n, one cell with it
    g = make()
    n = BASE + 2
    ct.scatter(y, 0, g())
    if ct.bid(0) == 0:  # the same def on both sides
        h = make()
    else:
        h = make()
    n = BASE + 3
    ct.scatter(y, 1, h())


@ct.kernel
def lambdas_made_in_a_loop(y):
    fs = ()
    for i in ct.static_iter(range(3)):
        fs += (lambda: i + BASE,)  # one i for all of them, 2 after the loop
    for k, f in ct.static_iter(enumerate(fs)):
        ct.scatter(y, k, f())


CELLS = [
    (reassigned_in_a_helper, [BASE + 6, 0, 0]),
    (reassigned_in_the_kernel, [BASE + 2, BASE + 3, 0]),
    (lambdas_made_in_a_loop, [BASE + 2] * 3),
]


@pytest.mark.parametrize("kernel,expected", CELLS, ids=[k.__name__ for k, _ in CELLS])
def test_a_closure_reads_its_variables_when_called(run_kernel, kernel, expected):
    y = np.zeros(3, np.int32)
    run_kernel(kernel, (1,), (y,))
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("kernel,expected", CELLS, ids=[k.__name__ for k, _ in CELLS])
def test_the_compiled_closure_reads_them_when_called(kernel, expected):
    assert _constants(kernel, (np.zeros(3, np.int32),)) == set(expected) - {0}


# -- what a closure's body holds is checked, its result read or not -------------------------------
@ct.kernel
def identity_in_lambda(x):
    t = ct.load(x, (0,), (4,))
    same = lambda a, b: a is b  # noqa: E731
    same(t, t)  # (unread: typed all the same, as cuTile types every statement)
    ct.store(x, (0,), t)


@ct.kernel
def identity_in_nested_function(x):
    t = ct.load(x, (0,), (4,))

    def differ(a):
        a is not ct.bid(0)
        return a

    ct.store(x, (0,), differ(t))


@ct.kernel
def identity_with_none_in_lambda(x):
    t = ct.load(x, (0,), (4,))
    missing = lambda a: a is None  # noqa: E731
    missing(t)
    ct.store(x, (0,), t + 1)


@pytest.mark.parametrize("kernel,message", [
    (identity_in_lambda, "Operator 'is' expects one of the operands to be None, got "
                         "Tile[float32,(4,)] and Tile[float32,(4,)]"),
    (identity_in_nested_function, "Operator 'is not' expects one of the operands to be None, "
                                  "got Tile[float32,(4,)] and Tile[int32,()]")],
    ids=lambda v: getattr(v, "__name__", ""))
def test_identity_of_tiles_in_closures_is_refused(run_kernel, kernel, message):
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        run_kernel(kernel, (1,), (np.ones(4, np.float32),))


def test_identity_with_none_in_a_closure_is_allowed(run_kernel):
    x = np.ones(4, np.float32)
    run_kernel(identity_with_none_in_lambda, (1,), (x,))
    np.testing.assert_array_equal(x, np.full(4, 2.0))


# -- constants through closures and helpers; closures inside static expressions -----------------
def _twice(n):
    return n * 2


def _add(t, k: ct.Constant[int]):
    return t + k


@ct.kernel
def constants_through_closures(y):
    def twice(n):
        return n * 2
    n = 2
    four = lambda: n * 2  # noqa: E731 (captures a constant of the kernel)
    t = ct.full((twice(2),), 0, ct.int32) + ct.full((four(),), 1, ct.int32)
    t = _add(t, twice(3))  # a Constant argument from a closure
    for i in range(twice(1)):  # a loop bound
        t = t + i
    for j in ct.static_iter(range(_twice(2))):  # a global helper inside static_iter
        t = t + j
    ct.static_assert(_twice(2) == 4)
    x = twice(2)
    ct.static_assert(x == 4)  # a closure's result, read as a variable
    ct.store(y, (0,), t)


def test_constants_returned_by_closures_are_constants(run_kernel):
    y = np.zeros(4, np.int32)
    run_kernel(constants_through_closures, (1,), (y,))
    np.testing.assert_array_equal(y, np.full(4, 1 + 6 + 1 + 6))


@ct.kernel
def lambda_in_static_assert(y):
    f = lambda: 3  # noqa: E731
    ct.static_assert(f() == 3)
    ct.store(y, (0,), ct.full((4,), 1, ct.int32))


@ct.kernel
def capturing_lambda_in_static_assert(y):
    n = 4
    f = lambda: n * 2  # noqa: E731
    ct.static_assert(f() == 8)
    ct.store(y, (0,), ct.full((4,), 1, ct.int32))


@ct.kernel
def renamed_function_in_static_assert(y):
    def twice(n):
        return n * 2
    g = twice
    ct.static_assert(g(2) == 4)
    ct.store(y, (0,), ct.full((4,), 1, ct.int32))


@ct.kernel
def lambda_in_static_eval(y):
    f = lambda: 3  # noqa: E731
    ct.store(y, (0,), ct.full((4,), ct.static_eval(f()), ct.int32))


def _check_one(f):
    ct.static_assert(f(1) == 2)
    return 1


@ct.kernel
def lambda_passed_to_a_static_assert(y):
    ct.store(y, (0,), ct.full((4,), _check_one(lambda n: n + 1), ct.int32))


@pytest.mark.parametrize("kernel,name", [
    (lambda_in_static_assert, "<lambda>"), (capturing_lambda_in_static_assert, "<lambda>"),
    (renamed_function_in_static_assert, "twice"), (lambda_in_static_eval, "<lambda>"),
    (lambda_passed_to_a_static_assert, "<lambda>")],
    ids=lambda v: getattr(v, "__name__", ""))
def test_closures_cannot_be_called_in_static_expressions(run_kernel, kernel, name):
    # static_assert and static_eval evaluate as Python does, where cuTile's closures (a def
    # or a lambda of tile code, under any name) cannot be called
    with pytest.raises(ct.TileStaticEvalError,
                       match=re.escape(f"{name}() is defined inside the kernel and cannot be "
                                       f"called inside static_eval()")):
        run_kernel(kernel, (1,), (np.zeros(4, np.int32),))


@ct.kernel
def closures_as_static_iter_items(y):
    f1 = lambda: 1  # noqa: E731
    f2 = lambda: 2  # noqa: E731
    t = ct.full((4,), 0, ct.int32)
    for f in ct.static_iter((f1, f2)):  # not called inside: the items are the closures
        t = t + f()
    ct.store(y, (0,), t)


def test_closures_are_static_iter_items(run_kernel):
    y = np.zeros(4, np.int32)
    run_kernel(closures_as_static_iter_items, (1,), (y,))
    np.testing.assert_array_equal(y, np.full(4, 3))
