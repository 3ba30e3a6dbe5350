"""Where paths meet (the two sides of an ``if``, a loop's entry and its back edge, the ways out
of a loop, the returns of a helper), variables take cuTile's types in every mode: a loosely
typed constant takes its own dtype (float32 for a float), a scalar meets a 0-d tile, arrays
meet whatever their strides; constants of two dtypes are a ``TileTypeError`` where the
variable is read (at once for a helper's returns), whichever path the run took, and a
variable some path does not set is a ``TileSyntaxError`` where it is read
(``numba_tile.compiler.typing.joins``, ``numba_tile.interpreter.branch_joins``,
``numba_tile.interpreter.loop_exits``, ``numba_tile.compiler.frontend.defined_variables``)."""

import re

import numpy as np
import pytest

import numba_tile as ct


# -- loose constants where paths meet ------------------------------------------------------------
@ct.kernel
def loose_floats_meet(x, out):
    b = ct.bid(0)
    v = 1.0 if b == 0 else 3.0
    if b == 0:
        w = 2.0
    else:
        w = 4.0
    s = 0.0
    for i in range(b + 2):
        s = s + 1.5
    half = ct.load(x, (0,), (4,))  # float16
    r = half + v + w + s  # float16 with a loose constant would stay float16
    ct.static_assert(r.dtype == ct.float32, "a loose float that paths join is float32")
    ct.static_assert(v.dtype == ct.float32 and w.dtype == ct.float32 and s.dtype == ct.float32)
    ct.store(out, (0,), r)


def test_loose_float_constants_meet_as_float32(run_kernel):
    x = np.arange(4, dtype=np.float16)
    out = np.zeros(4, np.float32)
    run_kernel(loose_floats_meet, (1,), (x, out))
    np.testing.assert_array_equal(out, np.arange(4) + 1.0 + 2.0 + 3.0)


@ct.kernel
def loose_ints_meet(x):
    v = 1 if ct.bid(0) == 0 else 3
    r = ct.int8(2) + v  # int8 with a loose constant, int32 with an int32 scalar
    ct.static_assert(r.dtype == ct.int32)
    ct.scatter(x, 0, r)


def test_loose_int_constants_meet_as_int32(run_kernel):
    x = np.zeros(1, np.int32)
    run_kernel(loose_ints_meet, (1,), (x,))
    assert x[0] == 3


@ct.kernel
def same_constant_on_both_sides(x, n: ct.Constant[int]):
    if ct.bid(0) == 0:
        t = n + 2
    else:
        t = 7  # the same constant (n = 5): t stays a loose constant
    u = 7
    if ct.bid(0) == 0:
        u = n + 2
    v = 2.0 if ct.bid(0) == 0 else 2.0
    r = ct.arange(4, dtype=ct.int8) + t + u
    ct.static_assert(r.dtype == ct.int8)
    h = ct.zeros((4,), ct.float16) + v
    ct.static_assert(h.dtype == ct.float16)
    ct.scatter(x, ct.arange(4, dtype=ct.int32), r)


def test_the_same_constant_on_both_sides_stays_a_constant(run_kernel):
    x = np.zeros(4, np.int32)
    run_kernel(same_constant_on_both_sides, (2,), (x, 5))
    np.testing.assert_array_equal(x, np.arange(4) + 14)


@ct.kernel
def converted_constants(x):
    ct.scatter(x, 0, float(ct.float32(5.0)))  # a loose constant: into float16 as it is
    ct.scatter(x, 1, int(ct.int64(3)) + ct.float16(0.5))


def test_a_typed_constant_converted_by_a_builtin_is_loose(run_kernel):
    x = np.zeros(2, np.float16)
    run_kernel(converted_constants, (1,), (x,))
    np.testing.assert_array_equal(x, [5.0, 3.5])


@ct.kernel
def constant_branch_keeps_constants(x, N: ct.Constant[int]):
    v = 2.0
    if N > 0:
        v = 3.0
    r = ct.load(x, (0,), (4,)) + v  # a constant still: float16
    ct.static_assert(r.dtype == ct.float16)
    ct.store(x, (0,), r)


def test_a_branch_on_a_constant_joins_nothing(run_kernel):
    x = np.ones(4, np.float16)
    run_kernel(constant_branch_keeps_constants, (1,), (x, 1))
    np.testing.assert_array_equal(x, np.full(4, 4.0))


@ct.kernel
def if_else_mismatch(x):
    if ct.bid(0) == 0:
        a = 1
    else:
        a = 2.0
    ct.store(x, (0,), a)


@ct.kernel
def loop_mismatch(x):
    a = 1
    for _ in range(ct.bid(0) + 3):
        a *= 2.0
    ct.store(x, (0,), a)


@ct.kernel
def float16_and_loose_mismatch(x):
    v = 1.0 if ct.bid(0) == 0 else ct.float16(3.0)
    ct.store(x, (0,), ct.full((1,), v, ct.float32))


@pytest.mark.parametrize("kernel", [if_else_mismatch, loop_mismatch])
def test_constants_of_two_dtypes_are_an_error_where_read(run_kernel, kernel):
    with pytest.raises(ct.TileTypeError, match="Type of `a` depends on path taken"):
        run_kernel(kernel, (1,), (np.zeros(1, np.float32),))


def test_a_loose_float_and_a_float16_do_not_meet():
    # (the interpreter sees one path: only the compiler knows the other side's type)
    with pytest.raises(ct.TileTypeError, match="depends on path taken"):
        ct.compile(float16_and_loose_mismatch, (np.zeros(1, np.float32),), arch="sm_90")


@ct.kernel
def unused_mismatch(x):
    if ct.bid(0) == 0:
        a = 1  # noqa: F841
    else:
        a = 2.0  # noqa: F841
    ct.scatter(x, 0, 5.0)


def test_an_unread_mismatch_is_no_error(run_kernel):
    x = np.zeros(1, np.float32)
    run_kernel(unused_mismatch, (1,), (x,))
    assert x[0] == 5.0


# -- the ways out of a loop, and one-sided ifs --------------------------------------------------
@ct.kernel
def break_and_end_mismatch(x, b):
    a = 1
    i = 0
    while i < 10:
        a *= 2.0
        i += 1
        if i >= 5:
            break
    ct.store(x, (0,), a)


@ct.kernel
def breaks_mismatch(x, b):
    i = 0
    while True:
        i += 1
        if i >= 5:
            a = 3.0
            break
        elif i >= b:
            a = 5
            break
    ct.store(x, (0,), a)


@ct.kernel
def break_and_entry_mismatch(x, b):
    a = 1
    for i in range(b + 3):
        if i >= 5:
            a = 3.0
            break
    ct.store(x, (0,), a)


@ct.kernel
def continue_and_end_mismatch(x, b):
    i = 0
    while i < 10:
        i += 1
        if i == b:
            a = 2.0
            continue
        a = 1
    ct.store(x, (0,), a)


@ct.kernel
def branch_before_break_mismatch(x, b):
    a = 3
    i = 0
    while True:
        i += 1
        if i < b:
            continue
        if i > 6:
            a = 4.0
        break
    ct.store(x, (0,), a)


@ct.kernel
def one_sided_mismatch(x, b):
    a = 1
    if b == 3:
        a = 2.0
    ct.store(x, (0,), a)


@pytest.mark.parametrize("kernel", [
    break_and_end_mismatch, breaks_mismatch, break_and_entry_mismatch,
    continue_and_end_mismatch, branch_before_break_mismatch,
    one_sided_mismatch], ids=lambda v: v.__name__)
@pytest.mark.parametrize("b", [0, 6])
def test_the_ways_out_meet_whichever_was_taken(run_kernel, kernel, b):
    # b picks the way out (or the side) the run takes: every one is the error
    with pytest.raises(ct.TileTypeError, match="Type of `a` depends on path taken") as error:
        run_kernel(kernel, (1,), (np.zeros(1, np.float32), b))
    assert "Tile[int32,()]" in str(error.value) and "Tile[float32,()]" in str(error.value)


@ct.kernel
def breaks_agree_not_the_entry(x, N: ct.Constant[int]):
    a = 1  # an int32 that never leaves the loop
    while True:
        if ct.bid(0) == 0:
            a = 2.0
            break
        elif N == 1:
            a = 3.0
            break
        else:
            a = 4  # an int32 on the side the constant removes
            break
    ct.scatter(x, ct.bid(0), a)


@ct.kernel
def breaks_unread_mismatch(x):
    a = 1
    for i in range(ct.bid(0) + 3):
        if i >= 5:
            a = 3.0  # noqa: F841 (never read after the loop: no error)
            break
    ct.scatter(x, ct.bid(0), 1.0)


@ct.kernel
def other_side_continues(x):
    for i in range(3):
        if ct.bid(0) == i:
            a = 2.0
        else:
            continue
        ct.scatter(x, i, a)  # set wherever the loop gets here


@pytest.mark.parametrize("kernel,args,expected", [
    (breaks_agree_not_the_entry, (1,), [2, 3, 3]), (breaks_unread_mismatch, (), [1, 1, 1]),
    (other_side_continues, (), [2, 2, 2])], ids=lambda v: getattr(v, "__name__", ""))
def test_ways_out_that_meet_or_are_not_read(run_kernel, kernel, args, expected):
    x = np.full(3, -1, np.float32)
    run_kernel(kernel, (3,), (x,) + args)
    np.testing.assert_array_equal(x, expected)


# -- helpers' returns -------------------------------------------------------------------------
def int_or_float():
    if ct.bid(0) == 0:
        return 3
    else:
        return 5.0


def early_int_or_float():
    if ct.bid(0) == 0:
        return 3
    return 5.0


def float_either_way():
    if ct.bid(0) == 0:
        return 3.0
    return 5.0


@ct.kernel
def result_unused(x):
    int_or_float()


@ct.kernel
def early_result_unused(x):
    early_int_or_float()


@ct.kernel
def result_used(x):
    ct.scatter(x, 0, early_int_or_float())


@ct.kernel
def floats_returned(x):
    v = float_either_way()
    ct.static_assert(v.dtype == ct.float32)
    ct.scatter(x, 0, v)


@pytest.mark.parametrize("kernel", [result_unused, early_result_unused, result_used])
def test_returns_of_two_dtypes_are_an_error(run_kernel, kernel):
    with pytest.raises(ct.TileTypeError, match="Type of return value depends on path taken"):
        run_kernel(kernel, (1,), (np.zeros(1, np.float32),))


def test_returns_of_one_dtype_meet(run_kernel):
    x = np.zeros(1, np.float32)
    run_kernel(floats_returned, (1,), (x,))
    assert x[0] == 3.0


# -- scalars and 0-d tiles, arrays -------------------------------------------------------------
@ct.kernel
def scalar_meets_tile(x, out):
    t = ct.load(x, (0,), (4,))
    v = ct.float32(2.0)
    if ct.bid(0) == 0:
        v = ct.sum(t)
    s = 0.0
    for i in range(2):
        s = s + ct.max(t)
    ct.scatter(out, 0, v)
    ct.scatter(out, 1, s)


def test_a_scalar_meets_a_0d_tile(run_kernel):
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(2, np.float32)
    run_kernel(scalar_meets_tile, (1,), (x, out))
    np.testing.assert_array_equal(out, [6.0, 6.0])


@ct.kernel
def arrays_meet(x, y, out):
    if ct.bid(0) == 0:
        a = x
    else:
        a = y
    ct.store(out, (0, 0), ct.load(a, (0, 0), shape=(4, 4)))


def test_arrays_of_other_strides_meet(run_kernel, rng):
    x = rng.random((4, 4), dtype=np.float32)
    y = rng.random((4, 4), dtype=np.float32).T  # column-major: not aligned as x is
    out = np.zeros((4, 4), np.float32)
    run_kernel(arrays_meet, (1,), (x, y, out))
    np.testing.assert_array_equal(out, x)


# -- constants of dtypes without scalars ----------------------------------------------------------
@ct.kernel
def narrow_float_constants(x):
    ct.scatter(x, 0, ct.float16(0.2))
    ct.scatter(x, 1, ct.float64(ct.float8_e8m0fnu(0.2)))
    ct.scatter(x, 2, ct.float64(ct.float8_e4m3fn(0.2)))
    v = ct.float8_e4m3fn(0.2)
    for i in range(ct.bid(0) + 2):
        v = ct.float8_e4m3fn(0.3)
    ct.scatter(x, 3, ct.float64(v))


def test_narrow_float_constants_round_and_convert(run_kernel):
    x = np.zeros(4, np.float64)
    run_kernel(narrow_float_constants, (1,), (x,))
    np.testing.assert_array_equal(x, [float(np.float16(0.2)), 0.25, 0.203125, 0.3125])


# -- undefined variables -------------------------------------------------------------------------
@ct.kernel
def set_in_one_branch(x):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == 0:
        acc = t + 1
    else:
        acc = acc + t  # noqa: F821
    ct.store(x, (0,), acc)


@ct.kernel
def set_before_read_in_loop(x):
    for i in range(2):
        acc = acc + ct.load(x, (0,), (4,))  # noqa: F821
        acc = ct.load(x, (0,), (4,))
    ct.store(x, (0,), acc)


@ct.kernel
def read_after_if(x):
    if ct.bid(0) == 0:
        t = ct.load(x, (0,), (4,))
    ct.store(x, (0,), t)


@ct.kernel
def read_after_loop(x):
    for i in range(2):
        t = ct.load(x, (0,), (4,))
    ct.store(x, (0,), t)


@ct.kernel
def loop_index_after_loop(x):
    for i in range(2):
        pass
    ct.scatter(x, 0, i)


@ct.kernel
def never_set(x):
    ct.store(x, (0,), nowhere)  # noqa: F821


@ct.kernel
def read_by_a_loops_iterable(x):
    for i in range(n):  # noqa: F821  (read once, before any iteration sets it)
        n = 3


@pytest.mark.parametrize("kernel,name", [(set_in_one_branch, "acc"), (never_set, "nowhere"),
                                         (read_by_a_loops_iterable, "n")],
                         ids=lambda v: getattr(v, "__name__", v))
def test_a_variable_no_path_sets_is_undefined(run_kernel, kernel, name):
    with pytest.raises(ct.TileSyntaxError, match=f"^Undefined variable {name} used"):
        run_kernel(kernel, (2,), (np.zeros(4, np.float32),))


@pytest.mark.parametrize("kernel,name,lines_down", [
    (set_before_read_in_loop, "acc", 3), (read_after_if, "t", 4)],
    ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_variable_another_path_sets_is_potentially_undefined(run_kernel, kernel, name,
                                                                lines_down):
    """cuTile's TileTypeError where some path to the read sets the variable (the other side
    of an ``if``, an earlier iteration of the loop), its syntax error where none does."""
    with pytest.raises(ct.TileTypeError, match=f"^Use of potentially undefined variable "
                                               f"`{name}`") as caught:
        run_kernel(kernel, (2,), (np.zeros(4, np.float32),))
    # (co_firstlineno: the line of the decorator)
    assert caught.value.loc.line == kernel._pyfunc.__code__.co_firstlineno + lines_down


@ct.kernel
def read_after_a_loop_of_no_iteration(x, n):
    for i in range(n):
        t = ct.load(x, (0,), (4,))
    ct.store(x, (0,), t)


def test_a_loop_that_ran_no_iteration_leaves_its_variables_potentially_undefined():
    """(Interpreted: the compiler takes a loop to run where it is left.)"""
    with pytest.raises(ct.TileTypeError, match="^Use of potentially undefined variable `t`"):
        with ct.interpret():
            ct.launch(0, (1,), read_after_a_loop_of_no_iteration, (np.zeros(4, np.float32), 0))


@pytest.mark.parametrize("kernel", [read_after_loop, loop_index_after_loop],
                         ids=lambda v: v.__name__)
def test_what_a_loop_that_ran_sets_is_read_after_it(run_kernel, kernel):
    x = np.ones(4, np.float32)
    run_kernel(kernel, (1,), (x,))
    assert x[0] == 1


@ct.kernel
def set_where_needed(x, HAS_BIAS: ct.Constant[bool]):
    t = ct.load(x, (0,), (4,))
    if HAS_BIAS:
        bias = ct.full((4,), 1.0, ct.float32)
    if HAS_BIAS:
        t = t + bias
    j = 0
    while True:
        last = t * 2
        j += 1
        if j > 1:
            break
    ct.store(x, (0,), last)


@pytest.mark.parametrize("has_bias", [False, True])
def test_variables_set_on_every_path_that_runs_are_defined(run_kernel, has_bias):
    x = np.ones(4, np.float32)
    run_kernel(set_where_needed, (1,), (x, has_bias))
    np.testing.assert_array_equal(x, np.full(4, 4.0 if has_bias else 2.0))


# -- constants whose value is their type: enum members, dtypes, strings ---------------------------
@ct.kernel
def enum_in_branch(x):  # cuTile's conformance kernel (test_typeinfer.py)
    if ct.bid(0) == 0:
        val = ct.MemoryOrder.RELAXED
    else:
        val = ct.MemoryOrder.WEAK
    print(val == ct.MemoryOrder.WEAK)


@ct.kernel
def enum_set_on_one_side(x):
    val = ct.MemoryOrder.RELAXED
    if ct.bid(0) == 0:
        val = ct.MemoryOrder.WEAK
    ct.atomic_add(x, 0, 1, memory_order=val)


@ct.kernel
def dtype_in_branch(x):
    if ct.bid(0) == 0:
        dtype = ct.float16
    else:
        dtype = ct.int8
    ct.store(x, (0,), ct.full((1,), 0, dtype))


@ct.kernel
def dtype_or_enum(x):
    if ct.bid(0) == 0:
        val = ct.MemoryOrder.WEAK
    else:
        val = ct.float16
    ct.store(x, (0,), ct.full((1,), 0, val))


@ct.kernel
def string_in_branch(x):
    if ct.bid(0) == 0:
        s = "a"
    else:
        s = "b"
    ct.printf(s)


@ct.kernel
def string_in_conditional_expression(x):
    s = "a" if ct.bid(0) == 0 else "b"
    ct.static_assert(s == "a")


@ct.kernel
def enum_in_nested_else(x):
    if ct.bid(0) == 0:
        val = ct.MemoryOrder.RELAXED
    elif ct.bid(0) == 1:
        val = ct.MemoryOrder.WEAK
    else:
        val = ct.MemoryOrder.ACQUIRE
    print(val == ct.MemoryOrder.WEAK)


def _path_message(name, first, second):
    return f"Type of {name} depends on path taken: {first} (on one path) vs. {second} " \
           f"(on another)"


_WEAK, _RELAXED = "<enum constant MemoryOrder.WEAK>", "<enum constant MemoryOrder.RELAXED>"


@pytest.mark.parametrize("kernel,message", [
    # the else side's type first, as in cuTile's message
    (enum_in_branch, _path_message("`val`", _WEAK, _RELAXED)),
    (enum_set_on_one_side, _path_message("`val`", _RELAXED, _WEAK)),
    (dtype_in_branch, _path_message("`dtype`", "DTypeSpec(dtype=<DType 'int8'>)",
                                    "DTypeSpec(dtype=<DType 'float16'>)")),
    (dtype_or_enum, _path_message("`val`", "DTypeSpec(dtype=<DType 'float16'>)", _WEAK)),
    (string_in_branch, _path_message("`s`", "<string constant 'b'>", "<string constant 'a'>")),
    (string_in_conditional_expression,
     _path_message("a value", "<string constant 'b'>", "<string constant 'a'>")),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("blocks", [1, 2])
def test_constants_that_depend_on_the_path_are_a_type_error(run_kernel, kernel, message, blocks):
    # whichever side the run takes (blocks: tile block 1 takes the else side)
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        run_kernel(kernel, (blocks,), (np.zeros(1, np.int32),))


def test_a_nested_branch_reports_its_own_join_first_compiled():
    # (the interpreter compares the sides of the branches it runs: tile block 1 and 2)
    message = _path_message("`val`", "<enum constant MemoryOrder.ACQUIRE>", _WEAK)
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        ct.compile(enum_in_nested_else, (np.zeros(1, np.int32),), arch="sm_90")
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        with ct.interpret():
            ct.launch(0, (3,), enum_in_nested_else, (np.zeros(1, np.int32),))


@ct.kernel
def same_constants_meet(x, b):
    if b == 0:
        s = "a"
        dtype = ct.int32
        order = ct.MemoryOrder.RELAXED
    else:
        s = "a"
        dtype = ct.int32
        order = ct.MemoryOrder.RELAXED
    ct.static_assert(s == "a" and dtype == ct.int32)
    ct.atomic_add(x, 0, ct.full((), 1, dtype), memory_order=order)


@ct.kernel
def constant_branch_keeps_one_side(x, B: ct.Constant[int]):
    if B == 0:
        s = "a"
        dtype = ct.int8
    else:
        s = "b"
        dtype = ct.int32
    ct.static_assert(s == "b" and dtype == ct.int32)
    ct.atomic_add(x, 0, ct.full((), 1, dtype))


@pytest.mark.parametrize("kernel", [same_constants_meet, constant_branch_keeps_one_side],
                         ids=lambda v: v.__name__)
def test_equal_constants_meet_and_constant_branches_keep_one_side(run_kernel, kernel):
    x = np.zeros(1, np.int32)
    run_kernel(kernel, (1,), (x, 1))
    assert x[0] == 1


# -- a loose constant meets a scalar by its own dtype -------------------------------------------
@ct.kernel
def loose_int_or_float_scalar(x, f, b):
    if ct.bid(0) == b:
        v = 0
    else:
        v = f  # a float argument: a float32 scalar (0 is int32 here, no float64 widening)
    ct.store(x, (0,), ct.full((1,), 0, ct.float32) + v)


@ct.kernel
def loose_int_before_float_scalar(x, f, b):
    v = 0
    if ct.bid(0) == b:
        v = f
    ct.store(x, (0,), ct.full((1,), 0, ct.float32) + v)


@ct.kernel
def loose_int_or_float_sum(x, f, b):
    s = ct.sum(ct.load(x, (0,), (1,)))  # a float32 0-d tile
    v = 0 if ct.bid(0) == b else s
    ct.store(x, (0,), ct.full((1,), 0, ct.float32) + v)


@ct.kernel
def loose_bool_or_int(x, f, b):
    if ct.bid(0) == b:
        v = True
    else:
        v = 1
    ct.scatter(x, 0, v)


@pytest.mark.parametrize("kernel,message", [
    (loose_int_or_float_scalar, _path_message("`v`", "Tile[float32,()]", "Tile[int32,()]")),
    (loose_int_before_float_scalar, _path_message("`v`", "Tile[int32,()]", "Tile[float32,()]")),
    (loose_int_or_float_sum, _path_message("a value", "Tile[float32,()]", "Tile[int32,()]")),
    (loose_bool_or_int, _path_message("`v`", "Tile[int32,()]", "Tile[bool_,()]")),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("b", [0, 1])
def test_a_loose_constant_and_a_scalar_of_another_kind_do_not_meet(run_kernel, kernel,
                                                                   message, b):
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        run_kernel(kernel, (1,), (np.zeros(1, np.float32), 1.5, b))


@ct.kernel
def loose_int_or_int_scalar(x, n, b):
    if ct.bid(0) == b:
        v = 0
    else:
        v = n  # an int argument: int32, as 0 is
    ct.scatter(x, 0, v + 1)


@pytest.mark.parametrize("b", [0, 1])
def test_a_loose_int_meets_an_int32_scalar(run_kernel, b):
    x = np.zeros(1, np.int32)
    run_kernel(loose_int_or_int_scalar, (1,), (x, 4, b))
    assert x[0] == (1 if b == 0 else 5)


# -- nested ifs: each keeps its own value from before it -----------------------------------------
@ct.kernel
def causal_mask_kernel(x, out, T: ct.Constant[int], CAUSAL: ct.Constant[bool]):
    """cuda.tile's attention sample: in the blocks past the diagonal, ``mask`` is a bool tile
    that a nested ``if`` narrows, then a float tile of the same name; each iteration sets it
    before reading it, so no path gives a read two types."""
    rows = ct.arange(T, dtype=np.int32)[:, None]
    columns = ct.arange(T, dtype=np.int32)[None, :]
    acc = ct.full((T, T), 0.0, dtype=np.float32)
    for j in range(3):
        qk = ct.load(x, (0, j), (T, T))
        if CAUSAL and j >= 1:
            mask = ct.full((T, T), True, dtype=np.bool_)
            if CAUSAL:
                mask = mask & (rows + j >= columns)
            mask = ct.where(mask, 0.0, -1.0)
            qk += mask
        acc = acc + qk
    ct.store(out, (0, 0), acc)


def test_a_nested_if_keeps_its_own_earlier_value(run_kernel):
    x = np.random.default_rng(3).standard_normal((8, 24)).astype(np.float32)
    out = np.full((8, 8), np.nan, np.float32)
    run_kernel(causal_mask_kernel, (1,), (x, out, 8, True))
    rows, columns = np.arange(8)[:, None], np.arange(8)[None, :]
    expected = x[:, :8] + sum(x[:, 8 * j:8 * j + 8] - (rows + j < columns) for j in (1, 2))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
