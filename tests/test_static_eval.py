"""``ct.static_eval(expr)``: plain Python evaluated when the kernel compiles, with run-time
values seen by their type (shape, dtype) and tile operations with effects refused, in both
executors alike."""

import operator

import numpy as np
import pytest

import numba_tile as ct

_OPS = {"add": ct.atomic_add, "max": ct.atomic_max}


def _plus_one(n):
    return n + 1


seen = []


@ct.kernel
def constants_and_functions(x, out, OP: ct.Constant[str], PICK: ct.Constant[int]):
    t = ct.load(x, (0,), (8,))
    squares = ct.static_eval(sum([i * i for i in range(4)]))  # a comprehension
    rows = ct.static_eval(t.shape[0] // 2)  # a run-time tile's shape is known
    kind = ct.static_eval(t.dtype)
    helper = _plus_one
    bumped = ct.static_eval(helper(rows))  # a plain function run at compile time
    ct.static_eval(seen.append(repr(t)))
    update = ct.static_eval(_OPS[OP])  # a tile function looked up in a dict
    update(x, 0, 1)
    a = t + 10
    b = t * 2
    chosen = ct.static_eval(a if PICK == 0 else b)  # one of two run-time tiles
    ct.store(out, (0,), chosen + squares + rows + bumped + ct.zeros((8,), kind))


@pytest.mark.parametrize("op,pick", [("add", 0), ("max", 1)])
def test_constants_functions_and_run_time_values(run_kernel, op, pick):
    x = np.arange(8, dtype=np.int32) + 3
    out = np.full(8, -1, np.int32)
    expected_x = x.copy()
    expected_x[0] = x[0] + 1 if op == "add" else max(x[0], 1)
    chosen = x + 10 if pick == 0 else x * 2
    del seen[:]
    run_kernel(constants_and_functions, (1,), (x, out, op, pick))
    np.testing.assert_array_equal(out, chosen + 14 + 4 + 5)
    np.testing.assert_array_equal(x, expected_x)
    assert seen and set(seen) == {"<tile[int32, (8,)]>"}


@ct.kernel
def symbolic_array(x, out):
    ct.static_eval(seen.append(repr(x)))
    shape = ct.static_eval(x.shape)  # run-time values: compiled as tile code
    ct.store(out, (0,), ct.full((2,), shape[0] + ct.static_eval(x.ndim), ct.int32))


def test_a_run_time_array_shows_its_type(run_kernel):
    del seen[:]
    out = np.zeros(2, np.int32)
    run_kernel(symbolic_array, (1,), (np.zeros((5, 3), np.float32), out))
    np.testing.assert_array_equal(out, 7)
    assert set(seen) == {"<array[float32, (?, ?)]>"}


@pytest.mark.parametrize("fn,expected", [(operator.add, 19), (operator.floordiv, 3),
                                         (ct.minimum, 4), (operator.lt, 0)])
def test_pure_expressions_of_run_time_values(run_kernel, fn, expected):
    @ct.kernel
    def combine(y):
        lhs = ct.bid(0) + 15
        rhs = ct.bid(0) + 4
        ct.scatter(y, 0, ct.static_eval(fn(lhs, rhs)))
    y = np.full(1, -1.0, np.float64)
    run_kernel(combine, (1,), (y,))
    assert y[0] == expected


@ct.kernel
def effect_inside(y):
    ct.static_eval(ct.scatter(y, 0, 1))


@ct.kernel
def method_with_effect_inside(y):
    ct.static_eval(y.slice(0, 0, 1))


@ct.kernel
def nested(y):
    ct.static_eval(ct.static_eval(2))


@ct.kernel
def raising(y, N: ct.Constant[int]):
    ct.static_eval(1 // N)


@ct.kernel
def local_function(y):
    def f(n):
        return n + 1
    ct.static_eval(f(3))


@ct.kernel
def walrus(y):
    ct.static_eval((z := 3))  # noqa: F841


@ct.kernel
def two_arguments(y):
    ct.static_eval(3, 5)


@ct.kernel
def indirect(y):
    f = ct.static_eval
    ct.scatter(y, 0, f(2))


@pytest.mark.parametrize("kernel,args,error,match", [
    (effect_inside, (), ct.TileStaticEvalError, r"scatter\(\) cannot be called inside"),
    (method_with_effect_inside, (), ct.TileStaticEvalError,
     r"slice\(\) cannot be called inside"),
    (nested, (), ct.TileStaticEvalError, r"static_eval\(\) cannot be used inside"),
    (raising, (0,), ct.TileStaticEvalError,
     r"Exception was raised inside static_eval\(\) \(ZeroDivisionError"),
    (local_function, (), ct.TileStaticEvalError, r"f\(\) is defined inside the kernel"),
    (walrus, (), ct.TileSyntaxError, "attempted to modify a local variable 'z'"),
    (two_arguments, (), ct.TileSyntaxError, "expects a single expression"),
    (indirect, (), ct.TileSyntaxError, r"static_eval\(\) must be used directly"),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_errors(run_kernel, kernel, args, error, match):
    with pytest.raises(error, match=match):
        run_kernel(kernel, (1,), (np.zeros(4, np.int32), *args))


# -- static_assert: its condition and message are static expressions too -------------------------
def _factorial(n):
    result = 1
    for i in range(1, n + 1):
        result *= i
    return result


@ct.kernel
def checked_factorial(x, N: ct.Constant[int]):
    ct.static_assert(_factorial(N) < 100, f"{N}! = {_factorial(N)}; x is {x}")
    ct.scatter(x, 0, N)


def test_static_assert_runs_python_at_compile_time(run_kernel):
    x = np.zeros(1, np.int32)
    run_kernel(checked_factorial, (1,), (x, 4))
    assert x[0] == 4
    with pytest.raises(ct.TileStaticAssertionError,
                       match=r"Static assertion failed: 7! = 5040; x is <array\[int32, \(\?,\)\]>"):
        run_kernel(checked_factorial, (1,), (x, 7))


@ct.kernel
def assert_run_time(x, n):
    ct.static_assert(n > 2)


@ct.kernel
def assert_not_bool(x, N: ct.Constant[int]):
    ct.static_assert(N)


@ct.kernel
def assert_calls_tile_op(x):
    ct.static_assert(ct.ones((4,), dtype=ct.int32).dtype == ct.int32)


@ct.kernel
def assert_three_arguments(x):
    ct.static_assert(True, "message", 123)


@ct.kernel
def assert_in_static_eval(x):
    ct.static_eval(ct.static_assert(True))


@ct.kernel
def assert_empty_message(x):
    ct.static_assert(x.dtype == ct.float32, "")


@pytest.mark.parametrize("kernel,args,error,match", [
    (assert_run_time, (3,), ct.TileTypeError, "condition must be a compile-time constant"),
    (assert_not_bool, (42,), ct.TileTypeError, "condition must be a boolean"),
    (assert_calls_tile_op, (), ct.TileStaticEvalError,
     r"ones\(\) cannot be called inside static_assert\(\)"),
    (assert_three_arguments, (), ct.TileSyntaxError, "expects one or two positional"),
    (assert_in_static_eval, (), ct.TileStaticEvalError,
     r"static_assert\(\) cannot be used inside static_eval\(\)"),
    (assert_empty_message, (), ct.TileStaticAssertionError, "Static assertion failed\n"),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_static_assert_errors(run_kernel, kernel, args, error, match):
    with pytest.raises(error, match=match):
        run_kernel(kernel, (1,), (np.zeros(4, np.int32), *args))
