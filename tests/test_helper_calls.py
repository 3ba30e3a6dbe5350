"""Calls of helpers: ``*args``, ``**kwargs`` and keyword-only parameters, calls that forward
with ``f(*args, **kwargs)`` (decorators), the keyword dictionary's reads, recursion that ends
on constants, helpers called on the side of a constant branch not taken, ``@ct.function``
helpers on the host, and what a helper may not do (``return`` inside a ``for`` loop), alike in
both executors."""

import functools

import numpy as np
import pytest

import numba_tile as ct


def _leaf(x, foo, bar=7):
    return x * 100 + foo * 10 + bar


def _forward(f, *args, **kwargs):
    return f(*args, **kwargs)


def _options(**kwargs):
    ct.static_assert(kwargs == {"scale": 3, "shift": 1})
    ct.static_assert("scale" in kwargs and "other" not in kwargs)
    ct.static_assert(kwargs.get("other") is None)
    return kwargs["scale"], kwargs.get("shift", 0), kwargs.get("other", 5)


def _keyword_only(t, *, by, plus=0):
    return t * by + plus


@ct.kernel
def variadic(x):
    ct.static_assert(_forward(_leaf, 3, foo=4, bar=5) == 345)
    ct.static_assert(_forward(_leaf, 3, 4) == 347)
    scale, shift, other = _options(scale=3, shift=1)
    t = ct.gather(x, 0)
    ct.scatter(x, 0, _forward(_keyword_only, t, by=scale, plus=shift + other))


def test_args_and_kwargs_bind_and_forward(run_kernel):
    x = np.full(1, 2, np.int32)
    run_kernel(variadic, (1,), (x,))
    np.testing.assert_array_equal(x, [12])


def _traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_traced
def _times(t, factor=10):
    return t * factor


@ct.kernel
def decorated(x):
    t = ct.gather(x, 0)
    ct.scatter(x, 0, _times(t) + _times(t, factor=2))


def test_a_decorator_forwarding_everything(run_kernel):
    x = np.full(1, 5, np.int32)
    run_kernel(decorated, (1,), (x,))
    np.testing.assert_array_equal(x, [60])


def _missing_key(**kwargs):
    return kwargs["qux"]


@ct.kernel
def reads_a_missing_key(x):
    ct.scatter(x, 0, _missing_key(foo=1))


def test_a_missing_key_is_a_type_error(run_kernel):
    with pytest.raises(ct.TileTypeError, match="Key 'qux' not found in dictionary"):
        run_kernel(reads_a_missing_key, (1,), (np.zeros(1, np.int32),))


def _first_above(t, limit):
    for i in range(4):
        if i > limit:
            return i
    return t


def _unused_helper_that_breaks_a_rule(n):
    for i in range(n):
        pass
    else:
        return i


@ct.kernel
def returns_inside_a_for_loop(x):
    ct.scatter(x, 0, _first_above(ct.gather(x, 0), 1))


@ct.kernel
def calls_a_good_helper(x):
    # a helper of this module that breaks the rule is an error only where it is called
    ct.scatter(x, 0, _times(ct.gather(x, 0)))


def test_return_inside_a_for_loop(run_kernel):
    """cuTile 1.7 returns from inside a ``for`` loop (1.6 refused it), and so do both
    executors."""
    x = np.zeros(1, np.int32)
    run_kernel(returns_inside_a_for_loop, (1,), (x,))
    np.testing.assert_array_equal(x, [2])
    x = np.ones(1, np.int32)
    run_kernel(calls_a_good_helper, (1,), (x,))
    np.testing.assert_array_equal(x, [10])


@ct.function
def _device_only(t):
    return t + 1


@ct.function(host=True)
def _also_on_the_host(t):
    return t + 2


@ct.kernel
def calls_functions(x):
    ct.scatter(x, 0, _device_only(_also_on_the_host(ct.gather(x, 0))))


def test_a_device_function_is_not_callable_from_the_host(run_kernel):
    with pytest.raises(RuntimeError, match="Device functions can only be called from device"):
        _device_only(1)
    assert _also_on_the_host(1) == 3
    x = np.ones(1, np.int32)
    run_kernel(calls_functions, (1,), (x,))
    np.testing.assert_array_equal(x, [4])


def _countdown(t, n):
    if n > 0:
        t = _countdown(t, n - 1) * 2 + _countdown(t, n - 2 if n > 1 else 0)
    return t


@ct.kernel
def recursion(x, N: ct.Constant[int]):
    ct.scatter(x, 0, _countdown(ct.gather(x, 0), N))


def test_recursion_that_ends_on_constants(run_kernel):
    def countdown(t, n):
        return countdown(t, n - 1) * 2 + countdown(t, n - 2 if n > 1 else 0) if n > 0 else t
    x = np.ones(1, np.int32)
    run_kernel(recursion, (1,), (x, 4))
    np.testing.assert_array_equal(x, [countdown(1, 4)])


def _inc(t):
    return t + 1


@ct.kernel
def functions_in_a_tuple(x):
    fns = (_inc, _times, lambda t: t - 3)
    ct.scatter(x, 0, fns[2](fns[1](fns[0](ct.gather(x, 0)))))


def test_functions_called_out_of_a_tuple(run_kernel):
    x = np.full(1, 2, np.int32)
    run_kernel(functions_in_a_tuple, (1,), (x,))
    np.testing.assert_array_equal(x, [27])


def _plus_one(x):
    return x + 1


def _plus_two(x):
    return _plus_one(_plus_one(x))


@ct.kernel
def helpers_on_the_side_not_taken(out):
    if True:
        size = _plus_one(1)
        size = 1
    else:
        size = _plus_two(2)  # a helper calling helpers, on the side a constant removes
        size = 2
    ct.store(out, (0, 0), ct.full((size, size), 1.0, dtype=ct.float32))


@ct.kernel
def invalid_helpers_on_the_side_not_taken(out, N: ct.Constant[int]):
    if N == 1:
        size = _plus_one(N)
    else:
        size = _plus_two(out)  # an array plus one: never typed, never run
    ct.store(out, (0, 0), ct.full((size, size), 1.0, dtype=ct.float32))


@pytest.mark.parametrize("kernel,args,size", [
    (helpers_on_the_side_not_taken, (), 1), (invalid_helpers_on_the_side_not_taken, (1,), 2)],
    ids=["folded", "invalid"])
def test_helpers_on_the_side_of_a_constant_branch_not_taken(run_kernel, kernel, args, size):
    out = np.full((4, 4), -1, np.float32)
    run_kernel(kernel, (1,), (out,) + args)
    expected = np.full((4, 4), -1, np.float32)
    expected[:size, :size] = 1
    np.testing.assert_array_equal(out, expected)
