"""cuTile types both sides of a run-time ``if`` and every path of a loop before the kernel
runs: a type mismatch on the side that did not run (a nested ``if``, an ``elif``, a call's
result against ``None`` or a constant) and a variable a ``while`` loop carries with two types
(whose test Numba would decide on the first values) are cuTile's ``TileTypeError`` "Type of
`v` depends on path taken", with the same message in every mode
(``numba_tile.interpreter.other_sides``, ``numba_tile.compiler.frontend.loop_tests``)."""

import re

import numpy as np
import pytest

import numba_tile as ct


def _path_message(name, first, second):
    return f"Type of {name} depends on path taken: {first} (on one path) vs. {second} " \
           f"(on another)"


_F16 = "DTypeSpec(dtype=<DType 'float16'>)"
_I32, _F32 = "Tile[int32,()]", "Tile[float32,()]"


# -- a nested if, an elif on the side not taken ---------------------------------------------
@ct.kernel
def nested_if(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        y = 1
    else:
        if ct.bid(0) == 1:
            y = 2.0
        else:
            y = ct.float16
    ct.store(x, (0,), t + y)


@ct.kernel
def elif_chain(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        y = 1.0
    elif ct.bid(0) == 5:
        y = 2.0
    else:
        y = 3
    ct.store(x, (0,), t + y)


@ct.kernel
def nested_agrees_outer_does_not(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        y = 1
    else:
        if ct.bid(0) == 1:
            y = 2.0
        else:
            y = 3.0
    ct.store(x, (0,), t + y)


@ct.kernel
def nested_if_in_a_loop(x, b):
    t = ct.load(x, (0,), (4,))
    for i in range(2):
        if ct.bid(0) == b:
            y = 1
        else:
            if ct.bid(0) == 1:
                y = 2.0
            else:
                y = ct.float16
        ct.store(x, (0,), t + y)


@pytest.mark.parametrize("kernel,message", [
    (nested_if, _path_message("`y`", _F16, _F32)),
    (elif_chain, _path_message("`y`", _I32, _F32)),
    (nested_agrees_outer_does_not, _path_message("`y`", _F32, _I32)),
    (nested_if_in_a_loop, _path_message("`y`", _F16, _F32)),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("b", [0, 1, 2])
def test_a_nested_if_is_checked_whichever_side_runs(run_kernel, kernel, message, b):
    # b = 0: block 0 runs the outer true side, a constant; the nested if is checked too
    with pytest.raises(ct.TileTypeError, match="depends on path taken") as error:
        run_kernel(kernel, (1,), (np.zeros(4, np.float32), b))
    if b == 0:
        assert message in str(error.value)


@ct.kernel
def elif_chain_of_one_type(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        y = 1.0
    elif ct.bid(0) == 5:
        y = 2.0
    else:
        y = 3.0
    ct.store(x, (0,), t + y)


@pytest.mark.parametrize("b,expected", [(0, 1.0), (1, 3.0)])
def test_an_elif_chain_of_one_type_runs(run_kernel, b, expected):
    x = np.zeros(4, np.float32)
    run_kernel(elif_chain_of_one_type, (1,), (x, b))
    assert (x == expected).all()


# -- a call's result on the side not taken ---------------------------------------------------
@ct.kernel
def none_or_a_sum(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = None
    else:
        v = ct.sum(t)
    if v is None:
        ct.store(x, (0,), t)


@ct.kernel
def a_sum_or_none(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) != b:
        v = ct.sum(t)
    else:
        v = None
    if v is None:
        ct.store(x, (0,), t)


@ct.kernel
def none_or_a_method(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = None
    else:
        v = t.astype(ct.float16)
    if v is None:
        ct.store(x, (0,), t)


@ct.kernel
def none_or_a_load(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = None
    else:
        v = ct.load(x, (0,), (4,))
    if v is None:
        ct.store(x, (0,), t)


@ct.kernel
def a_constant_or_a_sum(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = 0
    else:
        v = ct.sum(t)
    ct.store(x, (0,), t + v)


@pytest.mark.parametrize("kernel,message", [
    (none_or_a_sum, _path_message("`v`", _F32, "None")),
    (a_sum_or_none, _path_message("`v`", "None", _F32)),
    (none_or_a_method, _path_message("`v`", "Tile[float16,(4,)]", "None")),
    (none_or_a_load, _path_message("`v`", "Tile[float32,(4,)]", "None")),
    (a_constant_or_a_sum, _path_message("`v`", _F32, _I32)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_call_on_the_side_not_taken_is_checked(run_kernel, kernel, message):
    # b = 0: block 0 runs the side giving None (or the constant)
    with pytest.raises(ct.TileTypeError, match=re.escape(message)):
        run_kernel(kernel, (1,), (np.zeros(4, np.float32), 0))


@ct.kernel
def none_or_a_sum_unread(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = None  # noqa: F841 (never read: no error)
    else:
        v = ct.sum(t)  # noqa: F841
    ct.store(x, (0,), t + 1.0)


@ct.kernel
def a_float_or_a_sum(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = 0.5
    else:
        v = ct.sum(t)
    ct.store(x, (0,), t + v)


def test_a_call_of_the_same_type_or_never_read_is_no_error(run_kernel):
    x = np.zeros(4, np.float32)
    run_kernel(none_or_a_sum_unread, (1,), (x, 0))
    assert (x == 1.0).all()
    x = np.zeros(4, np.float32)
    run_kernel(a_float_or_a_sum, (1,), (x, 0))
    assert (x == 0.5).all()


@ct.kernel
def none_or_a_store(x, b):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == b:
        v = None
    else:
        v = ct.store(x, (0,), t + 1.0)  # (a store's result: None; not run again)
    if v is None:
        ct.store(x, (1,), t + 2.0)


def test_a_call_with_an_effect_on_the_side_not_taken_is_not_run(run_kernel):
    x = np.zeros(8, np.float32)
    run_kernel(none_or_a_store, (1,), (x, 0))
    assert (x[:4] == 0).all() and (x[4:] == 2.0).all()


# -- a while loop carrying a variable with two types -----------------------------------------
@ct.kernel
def while_test_on_a_changed_type(x):
    t = ct.load(x, (0,), (4,))
    a = 0
    while a < 10:
        a = 11.0
    ct.store(x, (0,), t + a)


@ct.kernel
def while_counter_and_a_changed_type(x):
    t = ct.load(x, (0,), (4,))
    a = 0
    i = 0
    while i < 10:
        a = 11.0
        i += 1
    ct.store(x, (0,), t + a)


@pytest.mark.parametrize("kernel", [while_test_on_a_changed_type,
                                    while_counter_and_a_changed_type],
                         ids=lambda v: v.__name__)
def test_a_while_loop_carrying_two_types_is_an_error_where_read(run_kernel, kernel):
    with pytest.raises(ct.TileTypeError, match=re.escape(_path_message("`a`", _I32, _F32))):
        run_kernel(kernel, (1,), (np.zeros(4, np.float32),))


@ct.kernel
def while_carrying_two_types_unread(x):
    a = 0
    i = 0
    while i < 10:
        a = 11.0  # noqa: F841 (never read: no error)
        i += 1
    ct.scatter(x, 0, ct.float32(i))


@ct.kernel
def while_float_stays_float(x):
    a = 0.0
    while a < 10.0:
        a = a + 3.0
    ct.scatter(x, 0, a)


@ct.kernel
def while_true_with_break(x):
    a = 0
    while True:
        a = a + 1
        if a > 3:
            break
    ct.scatter(x, 0, ct.float32(a))


@pytest.mark.parametrize("kernel,expected", [(while_carrying_two_types_unread, 10.0),
                                             (while_float_stays_float, 12.0),
                                             (while_true_with_break, 4.0)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_while_loop_of_one_type_runs(run_kernel, kernel, expected):
    x = np.zeros(1, np.float32)
    run_kernel(kernel, (1,), (x,))
    assert x[0] == expected
