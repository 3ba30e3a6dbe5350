"""The TileError hierarchy, and errors that point at the kernel line with a caret."""

import inspect

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.errors import SourceLocation

ERRORS = [ct.TileSyntaxError, ct.TileTypeError, ct.TileValueError, ct.TileUnsupportedFeatureError,
          ct.TileRecursionError, ct.TileStaticEvalError, ct.TileStaticAssertionError,
          ct.TileInternalError, ct.TileCompilerExecutionError, ct.TileCompilerTimeoutError]


@pytest.mark.parametrize("cls", ERRORS)
def test_hierarchy_and_attributes(cls):
    assert issubclass(cls, ct.TileError) and issubclass(cls, Exception)
    err = cls("something is wrong")
    assert err.message == "something is wrong" and err.loc is None
    assert str(err) == "something is wrong"


def test_printed_form_has_file_line_and_caret():
    loc = SourceLocation("kern.py", 12, 12, 17, "        c = a + b", function="k")
    text = str(ct.TileTypeError("bad", loc))
    assert text.splitlines() == ['bad', '  File "kern.py", line 12, col 13, in k:',
                                 '            c = a + b', '                ^^^^^']


def _line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


def _launch(kernel, *args):
    with ct.interpret():
        ct.launch(0, (1,), kernel, args)


@ct.kernel
def mixed_signedness(x, y):
    a = ct.load(x, (0,), (4,))
    b = ct.load(y, (0,), (4,))
    ct.store(x, (0,), a + b)  # marker: promotion


def test_promotion_error_points_at_the_expression():
    with pytest.raises(ct.TileTypeError) as info:
        _launch(mixed_signedness, np.ones(4, np.uint8), np.ones(4, np.int8))
    err = info.value
    assert "uint8" in err.message and "int8" in err.message and "not supported" in err.message
    assert err.loc.filename == __file__
    assert err.loc.line == _line_of(mixed_signedness.fn, "marker: promotion")
    lines = str(err).splitlines()
    assert lines[2].strip() == "ct.store(x, (0,), a + b)  # marker: promotion"
    caret = lines[3]
    assert lines[2][caret.index("^"):caret.rindex("^") + 1] == "a + b"


def helper_with_bad_shape(x):
    return ct.load(x, (0,), (3,))  # marker: helper


@ct.kernel
def calls_helper(x):
    helper_with_bad_shape(x)


def test_error_in_a_helper_points_into_the_helper():
    with pytest.raises(ct.TileTypeError) as info:
        _launch(calls_helper, np.ones(4, np.float32))
    assert "power of two" in info.value.message
    assert info.value.loc.line == _line_of(helper_with_bad_shape, "marker: helper")
    assert info.value.loc.function == "helper_with_bad_shape"


@ct.kernel
def non_constant_shape(x, n):
    ct.store(x, (0,), ct.load(x, (0,), (n,)))


def test_non_constant_where_a_constant_is_required():
    with pytest.raises(ct.TileTypeError, match="Expected a constant integer tuple, but given "
                                               "value is not constant"):
        _launch(non_constant_shape, np.ones(4, np.float32), 4)


@ct.kernel
def rank_mismatch(x):
    ct.load(x, (0, 0), (4,))


def test_rank_mismatch_names_both_ranks():
    with pytest.raises(ct.TileTypeError, match="Expected shape length to be 2, got 1"):
        _launch(rank_mismatch, np.ones((4, 4), np.float32))


def test_python_errors_are_not_wrapped():
    @ct.kernel
    def typo(x):
        ct.lod(x, (0,), (4,))

    with pytest.raises(AttributeError):
        _launch(typo, np.ones(4, np.float32))


def test_caret_is_exact_in_a_nested_kernel_with_a_closure():
    scale = 3  # captured: the kernel is a closure

    @ct.kernel
    def nested(x, y):
        a = ct.load(x, (0,), (4,)) * scale
        ct.store(x, (0,), a + ct.load(y, (0,), (4,)))  # marker: nested

    with pytest.raises(ct.TileTypeError) as info:
        _launch(nested, np.ones(4, np.uint8), np.ones(4, np.int8))
    lines = str(info.value).splitlines()
    assert info.value.loc.line == _line_of(nested.fn, "marker: nested")
    caret = lines[3]
    assert lines[2][caret.index("^"):caret.rindex("^") + 1] == "a + ct.load(y, (0,), (4,))"


def test_literals_are_scalars_with_a_dtype(capsys):
    @ct.kernel
    def literals():
        a = 0
        b = 2**40
        c = 1.5
        print(a.dtype, a.shape, b.dtype, c.dtype, (a + 1).dtype, ct.arange(4, dtype=ct.int8).shape[0].dtype)

    _launch(literals)
    assert capsys.readouterr().out == "int32 () int64 float32 int32 int32\n"


def _deepest(x):
    ct.no_such_op(x)  # marker: deepest


def _middle(x):
    _deepest(x)  # marker: middle


@ct.kernel
def calls_through_helpers(x):
    _middle(x)  # marker: kernel


def test_an_error_in_a_helper_names_the_calls_that_led_there(run_kernel):
    # as cuTile prints it: a frame a call, the kernel's first, each line as indented in its
    # file, the call (or the attribute read) underlined
    with pytest.raises(ct.TileTypeError) as info:
        run_kernel(calls_through_helpers, (1,), (np.ones(4, np.float32),))
    loc = info.value.loc
    assert [c.function for c in loc.callers] == ["calls_through_helpers", "_middle"]
    assert [c.line for c in loc.callers] == [
        _line_of(calls_through_helpers.fn, "marker: kernel"), _line_of(_middle, "marker: middle")]
    assert (loc.function, loc.line) == ("_deepest", _line_of(_deepest, "marker: deepest"))
    lines = str(info.value).splitlines()
    assert lines[0] == "Module 'numba_tile' has no attribute 'no_such_op'"
    assert lines[2:4] == ["        _middle(x)  # marker: kernel", "        ^^^^^^^^^^"]
    assert lines[5:7] == ["        _deepest(x)  # marker: middle", "        ^^^^^^^^^^^"]
    assert lines[8:10] == ["        ct.no_such_op(x)  # marker: deepest",
                           "        ^^^^^^^^^^^^^"]
    assert str(info.value).endswith("^\n")
