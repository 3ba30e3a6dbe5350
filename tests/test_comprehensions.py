"""Tuple comprehensions and ``ct.static_iter`` as cuTile has them, in every executor.

A ``static_iter`` loop's iterable is a static expression (plain Python, evaluated when the
kernel compiles, with run-time values seen by their type); its items are taken out at once
(at most 1000, each a value tile code holds), and the loop's body is unrolled once per item.
A tuple comprehension is such loops building a tuple, with Python's scoping. cuTile's errors:
``break``/``continue``/``return`` in the loop, ``static_iter`` anywhere but a ``for``, a tile
operation or a run-time value's elements in the iterable, a comprehension's ``if`` that is
not a constant, a loop variable read before its ``for``.
"""

import re

import numpy as np
import pytest

import numba_tile as ct


# -- tuple comprehensions -------------------------------------------------------------------------
@ct.kernel
def rotate(x, y):
    tiles = tuple(ct.load(x, (i,), (4,)) for i in ct.static_iter(range(3)))
    rotated = tuple(tiles[(i + 1) % 3] for i in ct.static_iter(range(3)))
    for i, t in ct.static_iter(enumerate(rotated)):
        ct.store(y, (i,), t)


def test_a_comprehension_builds_a_tuple_of_tiles(run_kernel):
    x = np.arange(12, dtype=np.int32)
    y = np.zeros(12, np.int32)
    run_kernel(rotate, (1,), (x, y))
    np.testing.assert_array_equal(y, np.roll(x, -4))


@ct.kernel
def generators_and_conditions(x, y):
    tiles = tuple(ct.load(x, (i,), (4,)) for i in ct.static_iter(range(4)))
    pairs = ((tiles[0], (tiles[1], 10)), (tiles[2], (tiles[3], 100)))
    # unpacking targets, two generators, conditions on either
    sums = tuple(u * k + v * s
                 for k, (u, (v, s)) in ct.static_iter(enumerate(pairs)) if k != 5
                 for w in ct.static_iter((1, 2, 3)) if w % 2 == 1 if w > k)
    for i, t in ct.static_iter(enumerate(sums)):
        ct.store(y, (i,), t)


def test_generators_targets_and_conditions(run_kernel):
    x = np.arange(16, dtype=np.int32)
    y = np.zeros(12, np.int32)
    run_kernel(generators_and_conditions, (1,), (x, y))
    a, b, c, d = x.reshape(4, 4)
    # k=0: w in (1, 3); k=1: w in (3,)
    expected = [a * 0 + b * 10, a * 0 + b * 10, c * 1 + d * 100]
    np.testing.assert_array_equal(y, np.concatenate(expected))


@ct.kernel
def nested_rows(y):
    # the inner length depends on the outer loop variable
    rows = tuple(tuple(i * 10 + j for j in ct.static_iter(range(i)))
                 for i in ct.static_iter(range(4)))
    k = 0
    for row in ct.static_iter(rows):
        for v in ct.static_iter(row):
            ct.scatter(y, k, v)
            k += 1


def test_nested_comprehensions(run_kernel):
    y = np.full(6, -1, np.int32)
    run_kernel(nested_rows, (1,), (y,))
    np.testing.assert_array_equal(y, [10, 20, 21, 30, 31, 32])


@ct.kernel
def in_a_loop(y):
    for offset in range(2):
        matrix = tuple(tuple(offset + i + j for i in ct.static_iter(range(2)))
                       for j in ct.static_iter(range(2)))
        for i, row in ct.static_iter(enumerate(matrix)):
            for j, v in ct.static_iter(enumerate(row)):
                ct.scatter(y, offset * 4 + i * 2 + j, v)


def test_a_comprehension_in_a_run_time_loop(run_kernel):
    y = np.zeros(8, np.int32)
    run_kernel(in_a_loop, (1,), (y,))
    np.testing.assert_array_equal(y, [o + i + j for o in range(2) for i in range(2)
                                      for j in range(2)])


@ct.kernel
def scoping(y):
    i = 99
    n = 4
    ns = tuple(n for n in ct.static_iter(range(n)))  # range(n) reads the kernel's n
    squares = tuple(i * i for i in ct.static_iter(range(3)))
    twice = tuple(n for n in ct.static_iter(range(2)) for n in ct.static_iter(range(3)))
    ct.scatter(y, 0, i)  # the comprehensions' variables are their own
    ct.scatter(y, 1, n)
    ct.scatter(y, 2, ns[3])
    ct.scatter(y, 3, squares[2])
    ct.scatter(y, 4, twice[5])


def test_loop_variables_are_the_comprehensions_own(run_kernel):
    y = np.zeros(5, np.int32)
    run_kernel(scoping, (1,), (y,))
    np.testing.assert_array_equal(y, [99, 4, 3, 4, 2])


def _multiples(t, n):
    return tuple(t * k for k in ct.static_iter(range(1, n + 1)))


@ct.kernel
def helper_and_branch(x, y, N: ct.Constant[int]):
    t = ct.load(x, (0,), (4,))
    parts = _multiples(t, N) if N > 0 else (t,)  # evaluated only where Python would
    ct.store(y, (0,), parts[-1])


@pytest.mark.parametrize("n,factor", [(3, 3), (0, 1)])
def test_a_comprehension_in_a_helper_and_a_branch(run_kernel, n, factor):
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    run_kernel(helper_and_branch, (1,), (x, y, n))
    np.testing.assert_array_equal(y, x * factor)


@ct.kernel
def immediate_lambdas(x, y):
    tiles = tuple(ct.load(x, (i,), (4,)) for i in ct.static_iter(range(3)))
    scaled = tuple((lambda t: t * s)(tile) for s, tile in ct.static_iter(zip(range(1, 4), tiles)))
    for k, t in ct.static_iter(enumerate(scaled)):
        ct.store(y, (k,), t)


def test_lambdas_called_in_a_comprehension(run_kernel):
    x = np.arange(12, dtype=np.int32)
    y = np.zeros(12, np.int32)
    run_kernel(immediate_lambdas, (1,), (x, y))
    np.testing.assert_array_equal(y, x * np.repeat([1, 2, 3], 4))


@ct.kernel
def stored_lambdas(y):
    # as in Python, the lambdas share the comprehension's variable, which ends at 2
    fns = tuple(lambda: k for k in ct.static_iter(range(3)))
    k = 123  # noqa: F841 (the kernel's own k)
    for i, f in ct.static_iter(enumerate(fns)):
        ct.scatter(y, i, f())


def test_lambdas_kept_in_a_comprehension(run_kernel):
    y = np.zeros(3, np.int32)
    run_kernel(stored_lambdas, (1,), (y,))
    np.testing.assert_array_equal(y, [2, 2, 2])


BASE = 7_000_000  # distinctive constants: never a line number or a register in the PTX


@ct.kernel
def lambdas_of_nested_comprehensions(y):
    outer = tuple(tuple(lambda: j + BASE for j in ct.static_iter(range(1, 4)))
                  for _ in ct.static_iter(range(1)))
    fns = outer[0] + tuple(lambda: k + BASE + 10 for k in ct.static_iter(range(3)))
    for i, f in ct.static_iter(enumerate(fns)):
        ct.scatter(y, i, f())


def test_lambdas_share_their_comprehension_variable(run_kernel):
    y = np.zeros(6, np.int32)
    run_kernel(lambdas_of_nested_comprehensions, (1,), (y,))
    np.testing.assert_array_equal(y, [BASE + 3] * 3 + [BASE + 12] * 3)


def test_compiled_lambdas_share_their_comprehension_variable():
    # compile mode runs nothing: the PTX holds the values the lambdas read, folded
    ptx = ct.compile(lambdas_of_nested_comprehensions, (np.zeros(6, np.int32),)).ptx
    assert {int(v) for v in re.findall(r"\b\d+\b", ptx) if BASE <= int(v) < BASE + 100} \
        == {BASE + 3, BASE + 12}


# -- static_iter ----------------------------------------------------------------------------------
@ct.kernel
def iterables(x, out, N: ct.Constant[int]):
    t = ct.load(x, (0, 0), (4, 8))
    acc = ct.zeros((8,), ct.float32)
    for r in ct.static_iter(range(t.shape[0])):  # the type of a tile
        acc = acc + ct.extract(t, (r, 0), (1, 8)).reshape((8,))
    half = N // 2  # a constant of tile code
    for k, value in ct.static_iter(enumerate([2, 3.0, True][:half])):  # any Python
        acc = acc + value * (k + 1)
    for dtype, f, c in ct.static_iter((d, f, ct.int16(3)) for d, f in
                                      ((ct.float16, ct.exp), (ct.float32, ct.negative))):
        acc = acc + f(ct.zeros((8,), dtype)).astype(ct.float32) * c
    for n in ct.static_iter(x.shape):  # run-time values
        acc = acc + n
    ct.store(out, (0,), acc)


def test_iterables_are_static_expressions(run_kernel):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.zeros(8, np.float32)
    run_kernel(iterables, (1,), (x, out, 5))
    expected = x.sum(axis=0) + 2 * 1 + 3.0 * 2 + 3 * 1 + 0 + 4 + 8
    np.testing.assert_array_equal(out, expected)


def _negate(t):
    return -t


def _twice(t):
    return t * 2


@ct.kernel
def helpers_as_items(x, y):
    t = ct.load(x, (0,), (4,))
    for k, f in ct.static_iter(enumerate((_negate, _twice))):
        ct.store(y, (k,), f(t))


def test_items_may_be_helpers(run_kernel):
    x = np.arange(4, dtype=np.int32)
    y = np.zeros(8, np.int32)
    run_kernel(helpers_as_items, (1,), (x, y))
    np.testing.assert_array_equal(y, np.concatenate([-x, 2 * x]))


@ct.kernel
def tuples_built_before(x, y):
    a = ct.load(x, (0,), (4,))
    b = ct.load(x, (1,), (4,))
    doubled = ()
    for t in ct.static_iter((a, b)):
        doubled += (t, t * 2)
    both = doubled + (a + b,)
    for i, d in ct.static_iter(enumerate(both[1:])):
        if i == 1:
            d = d * 10
        ct.store(y, (i,), d)


def test_static_iter_over_tuples_built_in_the_kernel(run_kernel):
    x = np.arange(8, dtype=np.int32)
    y = np.zeros(16, np.int32)
    run_kernel(tuples_built_before, (1,), (x, y))
    a, b = x[:4], x[4:]
    np.testing.assert_array_equal(y, np.concatenate([a * 2, b * 10, b * 2, a + b]))


@ct.kernel
def carried_values(x, y):
    t = ct.load(x, (0,), (4,))
    previous = t
    total = ct.zeros((4,), ct.int32)
    for k in ct.static_iter(range(1, 4)):
        total = total + previous * k
        previous = t + k
    ct.store(y, (0,), total)


def test_values_carried_from_one_copy_to_the_next(run_kernel):
    x = np.arange(4, dtype=np.int32)
    y = np.zeros(4, np.int32)
    run_kernel(carried_values, (1,), (x, y))
    np.testing.assert_array_equal(y, x * 1 + (x + 1) * 2 + (x + 2) * 3)


# -- errors ---------------------------------------------------------------------------------------
@ct.kernel
def breaks(x):
    for i in ct.static_iter(range(3)):
        if i == 1:
            break
        ct.scatter(x, i, 1)


@ct.kernel
def continues(x):
    for i in ct.static_iter(range(3)):
        if i == 1:
            continue
        ct.scatter(x, i, 1)


@ct.kernel
def returns(x):
    for i in ct.static_iter(range(3)):
        if i == 1:
            return
        ct.scatter(x, i, 1)


@ct.kernel
def outside_a_loop(x):
    items = ct.static_iter(range(3))
    ct.scatter(x, 0, items[0])


@ct.kernel
def indirect(x):
    f = ct.static_iter
    for i in f(range(3)):
        ct.scatter(x, i, 1)


def _continues_in_helper(x):
    for i in ct.static_iter(range(3)):
        if i == 1:
            continue
        ct.scatter(x, i, 1)


@ct.kernel
def helper_continues(x):
    _continues_in_helper(x)


@ct.kernel
def too_many(x):
    for i in ct.static_iter(range(1000000)):
        ct.scatter(x, 0, i)


@ct.kernel
def not_iterable(x):
    for i in ct.static_iter(42):
        ct.scatter(x, 0, i)


@ct.kernel
def a_tile(x):
    t = ct.load(x, (0,), (4,))
    for i in ct.static_iter(t):
        ct.scatter(x, 0, i)


@ct.kernel
def list_item(x):
    for i in ct.static_iter(([1, 2], [3, 4])):
        ct.scatter(x, 0, i[0])


@ct.kernel
def tile_op(x):
    for i in ct.static_iter(ct.ones((4,), dtype=ct.int32)):
        ct.scatter(x, i, 1)


@ct.kernel
def run_time_bound(x, n):
    for i in ct.static_iter(range(n)):
        ct.scatter(x, i, 1)


@ct.kernel
def run_time_arithmetic(x):
    t = ct.load(x, (0,), (4,))
    for u in ct.static_iter((t + 1, t)):
        ct.store(x, (0,), u)


@ct.kernel
def factory_tile_arithmetic(x):
    t = ct.arange(4, dtype=ct.int32)  # (a constant in the interpreter, not for the compiler)
    for u in ct.static_iter((t * 2,)):
        ct.store(x, (0,), u)


@ct.kernel
def run_time_condition(x, flag: bool):
    tiles = tuple(ct.load(x, (i,), (4,)) for i in ct.static_iter(range(2)))
    kept = tuple(t for t in ct.static_iter(tiles) if flag)
    ct.store(x, (0,), kept[0])


@ct.kernel
def read_before_bound(x):
    n = 10
    _ = tuple(i + j for i in ct.static_iter(range(3))
              for j in ct.static_iter(range(n))
              for n in ct.static_iter(range(4)))


@ct.kernel
def walrus(x):
    _ = tuple(y for i in ct.static_iter(range(5)) if (y := i * 2) > 3)  # noqa: F841


@ct.kernel
def generator_of_a_range(x):
    t = ct.load(x, (0,), (4,))
    parts = tuple(t * i for i in range(3))
    ct.store(x, (0,), parts[0])


@pytest.mark.parametrize("kernel,args,error,match", [
    (breaks, (), ct.TileSyntaxError, r"Break in a for loop with static_iter\(\)"),
    (continues, (), ct.TileSyntaxError, r"Continue in a for loop with static_iter\(\)"),
    (returns, (), ct.TileSyntaxError,
     r"Returning from a for loop with static_iter\(\) is not supported"),
    (outside_a_loop, (), ct.TileSyntaxError,
     r"static_iter\(\) is only allowed as iterable in a `for` loop"),
    (indirect, (), ct.TileSyntaxError, r"static_iter\(\) must be used directly by name"),
    (helper_continues, (), ct.TileSyntaxError, r"Continue in a for loop with static_iter\(\)"),
    (too_many, (), ct.TileStaticEvalError, r"Maximum number of iterations \(1000\)"),
    (not_iterable, (), ct.TileTypeError, "'int' object is not iterable"),
    (a_tile, (), ct.TileTypeError, "'Tile' object is not iterable"),
    (list_item, (), ct.TileStaticEvalError,
     "Invalid item #0 of static_iter.. iterable: Cannot create constant from value of type "
     "list"),
    (tile_op, (), ct.TileStaticEvalError,
     r"ones\(\) cannot be called inside static_iter\(\) iterable"),
    (run_time_bound, (3,), ct.TileStaticEvalError,
     "Symbolic tile has no concrete value and thus cannot be converted to an integer"),
    (run_time_arithmetic, (), ct.TileStaticEvalError,
     r"add\(\) cannot be called inside static_iter\(\) iterable"),
    (factory_tile_arithmetic, (), ct.TileStaticEvalError,
     r"mul\(\) cannot be called inside static_iter\(\) iterable"),
    (run_time_condition, (True,), ct.TileTypeError,
     "Tuple comprehension if-conditions must be statically known"),
    (read_before_bound, (), ct.TileSyntaxError, "Undefined variable n"),
    (walrus, (), ct.TileSyntaxError, "Unsupported syntax"),
    (generator_of_a_range, (), ct.TileSyntaxError, "generator expressions are not supported"),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_errors(run_kernel, kernel, args, error, match):
    with pytest.raises(error, match=match):
        run_kernel(kernel, (1,), (np.zeros(8, np.int32), *args))
