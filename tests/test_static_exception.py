"""``raise ct.static_exception(EXPR)``: an exception raised at compile time, where the compiled
kernel reaches the ``raise`` (an ``if`` on a constant decides; under a run-time condition it
is raised whichever way the condition goes), as cuTile 1.7 does (``StaticException``, a
``TileStaticEvalError``); any other ``raise`` in tile code is cuTile's ``TileSyntaxError``.
The words are those real cuTile 1.7 gives for the same kernels."""

import numpy as np
import pytest

import numba_tile as ct


def _arrays():
    return np.arange(1, 5, dtype=np.float32), np.full(4, np.nan, np.float32)


@ct.kernel
def needs_a_matrix(x, out):
    if x.ndim != 2:
        raise ct.static_exception(ValueError(f"needs a 2-d array, got {x.ndim}-d"))
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


@ct.kernel
def needs_one_dimension(x, out):
    if x.ndim != 1:
        raise ct.static_exception(ValueError("needs a 1-d array"))
    ct.store(out, (0,), ct.load(x, (0,), (4,)) * 2)


def test_a_static_exception_reached_raises_at_compile_time(run_kernel):
    x, out = _arrays()
    with pytest.raises(ct.StaticException, match=r"^Exception was raised at compile time "
                                                  r"\(ValueError: needs a 2-d array, got 1-d\)"
                       ) as raised:
        run_kernel(needs_a_matrix, (1,), (x, out))
    assert isinstance(raised.value, ct.TileStaticEvalError)
    assert raised.value.loc.line == needs_a_matrix._pyfunc.__code__.co_firstlineno + 3
    assert np.isnan(out).all()


def test_a_static_exception_on_a_side_not_taken_is_not_raised(run_kernel):
    x, out = _arrays()
    run_kernel(needs_one_dimension, (1,), (x, out))
    np.testing.assert_array_equal(out, x * 2)


def _check_dtype(t):
    if t.dtype != ct.float32:
        raise ct.static_exception(TypeError(f"helper needs float32, got {t.dtype}"))
    return t


@ct.kernel
def helper_raises(x, out):
    ct.store(out, (0,), _check_dtype(ct.load(x, (0,), (4,)).astype(ct.float16)).astype(
        ct.float32))


def test_a_helper_raises_a_static_exception(run_kernel):
    with pytest.raises(ct.StaticException, match=r"\(TypeError: helper needs float32, got "
                                                  r"float16\)"):
        run_kernel(helper_raises, (1,), _arrays())


@ct.kernel
def raises_under_a_run_time_condition(x, out):
    if ct.bid(0) == 0:
        raise ct.static_exception(ValueError("a run-time branch"))


def test_under_a_run_time_condition_the_compiler_raises_whichever_way_it_goes():
    """(The interpreter raises where it runs the raise: block 0 here.)"""
    with pytest.raises(ct.StaticException, match="a run-time branch"):
        ct.compile(raises_under_a_run_time_condition, _arrays(), arch="sm_90")


@ct.kernel
def raises_a_number(x, out):
    raise ct.static_exception(5)


@ct.kernel
def raises_a_class(x, out):
    raise ct.static_exception(ValueError)


@pytest.mark.parametrize("kernel,type_name", [(raises_a_number, "int"),
                                              (raises_a_class, "type")], ids=str)
def test_what_is_raised_must_be_an_exception(run_kernel, kernel, type_name):
    with pytest.raises(ct.StaticException, match=rf"^Exception was raised inside "
                                                  rf"static_exception\(\) expression \("
                                                  rf"TypeError: '{type_name}' is not derived "
                                                  rf"from 'BaseException'\)"):
        run_kernel(kernel, (1,), _arrays())


@ct.kernel
def plain_raise(x, out):
    raise ValueError("at run time")


@ct.kernel
def bare_raise(x, out):
    raise


@ct.kernel
def raise_from(x, out):
    raise ct.static_exception(ValueError("a")) from None


@ct.kernel
def static_exception_alone(x, out):
    error = ct.static_exception(ValueError("a"))


@ct.kernel
def two_expressions(x, out):
    raise ct.static_exception(ValueError("a"), 1)


@pytest.mark.parametrize("kernel,message", [
    (plain_raise, r"^Raised exception must be wrapped in static_exception\(\)"),
    (bare_raise, r"^Raised exception must be wrapped in static_exception\(\)"),
    (raise_from, r"^'raise from' syntax is not supported"),
    (static_exception_alone, r"^static_exception\(\) is only allowed after `raise`, e\.g\. "
                             r"`raise static_exception\(ValueError\('Error'\)\)`"),
    (two_expressions, r"^static_exception\(\) expects a single expression"),
], ids=["plain", "bare", "from", "alone", "two"])
def test_raise_syntax_cutile_refuses(run_kernel, kernel, message):
    with pytest.raises(ct.TileSyntaxError, match=message) as raised:
        run_kernel(kernel, (1,), _arrays())
    assert raised.value.loc.line == kernel._pyfunc.__code__.co_firstlineno + 2


@ct.kernel
def static_eval_raises(x, out):
    ct.store(out, (0,), ct.full((4,), ct.static_eval(1 // 0), ct.float32))


def test_an_exception_inside_static_eval_is_a_static_exception(run_kernel):
    with pytest.raises(ct.StaticException, match=r"^Exception was raised inside static_eval\(\) "
                                                  r"\(ZeroDivisionError"):
        run_kernel(static_eval_raises, (1,), _arrays())


@ct.kernel
def checks_a_tiles_dtype(x, out):
    t = ct.load(x, (0,), (4,))
    if t.dtype != ct.float32:  # (decided when the kernel is typed, not before)
        raise ct.static_exception(TypeError(f"needs float32, got {t.dtype}"))
    ct.store(out, (0,), t.astype(ct.float32) * 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=str)
def test_a_branch_a_typed_constant_decides_raises_only_where_taken(run_kernel, dtype):
    """Numba types both sides of such an ``if``: the compiler raises only where the typed
    kernel reaches the raise, as the interpreter does."""
    x, out = np.arange(1, 5, dtype=dtype), np.full(4, np.nan, np.float32)
    if dtype is np.float32:
        run_kernel(checks_a_tiles_dtype, (1,), (x, out))
        np.testing.assert_array_equal(out, 2 * x)
    else:
        with pytest.raises(ct.StaticException, match="needs float32, got float16"):
            run_kernel(checks_a_tiles_dtype, (1,), (x, out))


@ct.kernel
def tile_operation_in_the_exception(x, out):
    raise ct.static_exception(ValueError(ct.bid(0)))


def test_no_tile_operation_runs_in_the_exceptions_expression(run_kernel):
    with pytest.raises(ct.TileStaticEvalError, match=r"^bid\(\) cannot be called inside "
                                                     r"static_exception\(\) expression"):
        run_kernel(tile_operation_in_the_exception, (1,), _arrays())
