"""Where paths meet, ``None`` meets only ``None`` and constants whose value is their type
(enum members, dtypes, strings) meet only where equal, also where they leave a loop; a
variable a loop carries with two types is an error where it is read, not where the loop's
paths meet. In every mode: both executors raise cuTile's ``TileTypeError`` "Type of `v`
depends on path taken" (``numba_tile.compiler.typing.joins``,
``numba_tile.interpreter.branch_joins``, ``numba_tile.interpreter.loop_exits``,
``numba_tile.interpreter.loop_carried``)."""

import re

import numpy as np
import pytest

import numba_tile as ct


def _path_message(name, first, second):
    return f"Type of {name} depends on path taken: {first} (on one path) vs. {second} " \
           f"(on another)"


_WEAK, _RELAXED = "<enum constant MemoryOrder.WEAK>", "<enum constant MemoryOrder.RELAXED>"


# -- None meets only None ------------------------------------------------------------------------
@ct.kernel
def none_or_tile(x, b):
    if ct.bid(0) == b:
        v = None
    else:
        v = ct.full((1,), 1, ct.float32)
    ct.store(x, (0,), ct.full((1,), 0, ct.float32) + v)


@ct.kernel
def none_before_a_tile(x, b):
    v = None
    if ct.bid(0) != b:
        v = x
    ct.store(v, (0,), ct.full((1,), 1, ct.float32))


@ct.kernel
def none_or_constant(x, b):
    v = 1.0 if ct.bid(0) != b else None
    ct.store(x, (0,), ct.full((1,), 0, ct.float32) + v)


@ct.kernel
def none_or_scalar_tested(x, b):
    if ct.bid(0) == b:
        v = None
    else:
        v = 3
    if v is None:  # reading it is the error, `is None` too
        ct.store(x, (0,), ct.full((1,), 2, ct.float32))


@pytest.mark.parametrize("kernel,message", [
    (none_or_tile, _path_message("`v`", "Tile[float32,(1,)]", "None")),
    (none_before_a_tile, _path_message("`v`", "None", "Array[float32,(?,):(?,)]")),
    (none_or_constant, _path_message("a value", "None", "Tile[float32,()]")),
    (none_or_scalar_tested, _path_message("`v`", "Tile[int32,()]", "None")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_none_and_a_value_do_not_meet(run_kernel, kernel, message):
    # b = 1: tile block 0 takes the side that is not None (the interpreter computes the
    # other side, a constant None)
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        run_kernel(kernel, (1,), (np.zeros(1, np.float32), 1))


@pytest.mark.parametrize("kernel", [none_or_constant, none_or_scalar_tested],
                         ids=lambda v: v.__name__)
def test_none_and_a_constant_do_not_meet_whichever_side_runs(run_kernel, kernel):
    with pytest.raises(ct.TileTypeError, match="depends on path taken"):
        run_kernel(kernel, (1,), (np.zeros(1, np.float32), 0))


@ct.kernel
def none_replaced_on_every_path(x, b):
    v = None
    if ct.bid(0) == b:
        v = 1.0
    else:
        v = 2.0
    w = None if ct.bid(0) == b else None  # None on both sides: None
    u = None
    if ct.bid(0) == b:
        u = 4  # noqa: F841 (None or 4, never read: no error)
    ct.static_assert(w is None)
    ct.store(x, (0,), ct.full((1,), 0, ct.float32) + v)


@ct.kernel
def none_argument_decides(x, bias: ct.Constant):
    if bias is None:  # a None argument: decided before the kernel runs
        v = ct.full((1,), 1, ct.float32)
    else:
        v = None
    w = ct.full((1,), 2, ct.float32) if bias is None else None
    ct.store(x, (0,), v + w)


def test_none_replaced_or_decided_at_compile_time_is_no_error(run_kernel):
    x = np.zeros(1, np.float32)
    run_kernel(none_replaced_on_every_path, (1,), (x, 0))
    assert x[0] == 1.0
    run_kernel(none_argument_decides, (1,), (x, None))
    assert x[0] == 3.0


# -- constants whose value is their type, and None, leaving a loop ------------------------------
@ct.kernel
def enum_breaks_mismatch(x, b):
    i = 0
    while True:
        i += 1
        if i >= 5:
            order = ct.MemoryOrder.WEAK
            break
        elif i >= ct.bid(0) + b:
            order = ct.MemoryOrder.RELAXED
            break
    ct.atomic_add(x, 0, 1.0, memory_order=order)


@ct.kernel
def dtype_break_and_entry_mismatch(x, b):
    dtype = ct.float16
    for i in range(4):
        if i >= b:
            dtype = ct.float32
            break
    ct.store(x, (0,), ct.full((1,), 1, dtype))


@ct.kernel
def none_break_mismatch(x, b):
    v = x
    for i in range(4):
        if i >= b:
            v = None
            break
    ct.store(v, (0,), ct.full((1,), 1, ct.float32))


@pytest.mark.parametrize("kernel,name,types", [
    (enum_breaks_mismatch, "order", (_WEAK, _RELAXED)),
    (dtype_break_and_entry_mismatch, "dtype", ("DTypeSpec(dtype=<DType 'float16'>)",
                                               "DTypeSpec(dtype=<DType 'float32'>)")),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("b", [0, 6])
def test_constants_leaving_a_loop_two_ways_are_a_type_error(run_kernel, kernel, name, types, b):
    # b picks the way out the run takes: every one is the error (the order of the two types
    # is the order the ways are found in)
    with pytest.raises(ct.TileTypeError, match=f"Type of `{name}` depends on path taken") as \
            error:
        run_kernel(kernel, (1,), (np.zeros(1, np.float32), b))
    assert all(t in str(error.value) for t in types)


def test_none_leaving_a_loop_by_a_break_is_a_type_error(run_kernel):
    # (the run leaves by the end of the loop: the break's None is compared with the array)
    with pytest.raises(ct.TileTypeError, match="Type of `v` depends on path taken") as error:
        run_kernel(none_break_mismatch, (1,), (np.zeros(1, np.float32), 6))
    assert "None" in str(error.value) and "Array[float32,(?,):(?,)]" in str(error.value)


@ct.kernel
def equal_constants_leave_a_loop(x, b):
    order = ct.MemoryOrder.RELAXED
    s = "a"
    for i in range(4):
        if i >= b:
            order = ct.MemoryOrder.RELAXED
            s = "a"
            break
    ct.static_assert(s == "a")
    ct.atomic_add(x, 0, 1.0, memory_order=order)


@pytest.mark.parametrize("b", [0, 6])
def test_equal_constants_leaving_a_loop_meet(run_kernel, b):
    x = np.zeros(1, np.float32)
    run_kernel(equal_constants_leave_a_loop, (1,), (x, b))
    assert x[0] == 1.0


# -- a variable the loop carries with two types: the error where it is read ---------------------
@ct.kernel
def carried_two_types_unread(x, b):
    a = 1
    v = None
    for i in range(b + 2):
        a = 2.0  # noqa: F841 (int32 on entry, float32 around the loop: never read, no error)
        v = ct.full((1,), 1, ct.float32)
        ct.store(x, (0,), v)


@ct.kernel
def carried_two_types_read_in_loop(x, b):
    a = 1
    for i in range(b + 2):
        a *= 2.0  # reads the int32 or float32 the loop's head holds: the error
    ct.store(x, (0,), ct.full((1,), 1, ct.float32))


@ct.kernel
def carried_none_read_in_loop(x, b):
    acc = None
    for i in range(b + 2):
        t = ct.full((1,), 1, ct.float32)
        acc = t if acc is None else acc + t
    ct.store(x, (0,), acc)


def test_a_carried_variable_of_two_types_never_read_is_no_error(run_kernel):
    x = np.zeros(1, np.float32)
    run_kernel(carried_two_types_unread, (1,), (x, 1))
    assert x[0] == 1.0


@pytest.mark.parametrize("kernel,message", [
    (carried_two_types_read_in_loop, _path_message("`a`", "Tile[int32,()]", "Tile[float32,()]")),
    (carried_none_read_in_loop, _path_message("`acc`", "None", "Tile[float32,(1,)]")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_carried_variable_of_two_types_read_in_the_loop_is_an_error(run_kernel, kernel,
                                                                      message):
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        run_kernel(kernel, (1,), (np.zeros(1, np.float32), 1))
