"""Tile semantics of Python in interpreted kernels: helpers, builtins, math, constants."""

import math

import numpy as np
import pytest

import kernel_helpers
import numba_tile as ct
from kernel_helpers import relu


def _run(kernel, *args, grid=(1,)):
    with ct.interpret():
        ct.launch(0, grid, kernel, args)


def test_helpers_from_another_module_follow_tile_semantics(capsys):
    @ct.kernel
    def k():
        t = ct.arange(4, dtype=ct.float32) - 2.0
        print(relu(t), kernel_helpers.relu(t), kernel_helpers.literal_dtype())
        print(kernel_helpers.scaled_sqrt(ct.full((2,), 4.0, ct.float32)), kernel_helpers.SCALE.dtype)

    _run(k)
    assert capsys.readouterr().out.splitlines() == [
        "[0.0, 0.0, 0.0, 1.0] [0.0, 0.0, 0.0, 1.0] int32", "[6.0, 6.0] int32"]


def test_installed_libraries_are_no_user_code_wherever_they_lie(monkeypatch):
    """NumPy installed outside the interpreter's own directories (``pip install --target``,
    a ``PYTHONPATH`` of packages) is a library all the same: its functions and modules keep
    Python semantics and are never rewritten as tile code; the user's modules are."""
    from numba_tile.source import user_code
    package_only = tuple(d for d in user_code.LIBRARY_DIRS if "numba_tile" in d)
    monkeypatch.setattr(user_code, "LIBRARY_DIRS", package_only)
    user_code._installed_elsewhere.cache_clear()
    try:
        assert not user_code.is_user_code(np)
        assert not user_code.is_user_code(np.linalg)
        assert not user_code.is_user_code(np.linalg.norm)
        assert user_code.is_user_code(kernel_helpers)
        assert user_code.is_user_code(kernel_helpers.relu)
    finally:
        user_code._installed_elsewhere.cache_clear()


@pytest.mark.parametrize("value", [np.int64(4), np.int32(4), np.uint8(4)])
def test_numpy_integers_for_constant_parameters(value, capsys):
    @ct.kernel
    def k(n: ct.Constant[int]):
        print(ct.arange(n, dtype=ct.int32), n.dtype)

    _run(k, value)
    assert capsys.readouterr().out == "[0, 1, 2, 3] int32\n"


def test_numpy_float_for_a_constant_parameter(capsys):
    @ct.kernel
    def k(c: ct.Constant[float]):
        print(c.dtype, ct.full((2,), c, ct.float32))

    _run(k, np.float32(1.5))
    assert capsys.readouterr().out == "float32 [1.5, 1.5]\n"


def test_scalars_from_math_and_builtins_carry_a_dtype(capsys):
    @ct.kernel
    def k():
        q, r = divmod(7, 2)
        print(math.sqrt(4.0).dtype, math.floor(2.5).dtype, float(3).dtype, int(2.5).dtype,
              q.dtype, r, (math.pi / 2).dtype, math.pi / 2, 0.1 + 0.2, min(3, 4).dtype)

    _run(k)
    assert capsys.readouterr().out == (
        "float32 int32 float32 int32 int32 1 float32 1.5708 0.3 int32\n")


def test_math_arctan_and_math_on_tiles(capsys):
    @ct.kernel
    def k():
        t = ct.full((2,), 1.0, ct.float32)
        print(math.arctan(t), math.atan2(t, t), math.isnan(t), math.sqrt(ct.full((2,), 4, ct.int32)))

    _run(k)
    assert capsys.readouterr().out == "[0.785398, 0.785398] [0.785398, 0.785398] " \
                                      "[0, 0] [2.0, 2.0]\n"


def test_cdiv_on_the_host_takes_numpy_integers():
    assert ct.cdiv(np.int64(10), 4) == 3 and ct.cdiv(10, np.int32(5)) == 2


def test_rounding_mode_to_an_integer_is_refused():
    """cuTile rounds float to integer toward zero only: a rounding mode is for conversions
    between floats (RA, ties away, is tested on tfloat32 in test_astype_rounding.py)."""
    @ct.kernel
    def k(out):
        t = ct.astile((0.5, 1.5, 2.5, -2.5), dtype=ct.float32)
        ct.store(out, (0,), ct.astype(t, ct.int32, rounding_mode=ct.RoundingMode.RA))

    out = np.full(4, 99, np.int32)
    with pytest.raises(ct.TileTypeError, match="rounding_mode is only valid for float to float "
                                                "conversions"):
        _run(k, out)
    assert (out == 99).all()


@pytest.mark.parametrize("call", [
    lambda a: ct.add(a, a, rounding_mode="rz"),
    lambda a: ct.add(a.astype(ct.int32), 1, rounding_mode=ct.RoundingMode.RZ),
    lambda a: ct.sqrt(a, rounding_mode=1)])
def test_rounding_mode_is_checked(call):
    @ct.kernel
    def k():
        call(ct.ones((2,), ct.float32))

    with pytest.raises(ct.TileTypeError, match="rounding_mode"):
        _run(k)


def test_float_constant_into_an_integer_dtype_is_range_checked():
    @ct.kernel
    def k():
        ct.int8(300.0)

    with pytest.raises(ct.TileValueError, match="300 is out of range of int8"):
        _run(k)


def test_run_time_value_in_a_shape_is_named():
    @ct.kernel
    def k(n):
        ct.zeros((n, 4), ct.float32)

    with pytest.raises(ct.TileTypeError, match="element #0 is a run-time int32 scalar"):
        _run(k, 4)


def test_error_in_a_multi_line_statement_keeps_its_caret():
    @ct.kernel
    def k(x, y):
        ct.store(x, (0,),
                 ct.load(x, (0,), (2,)) +
                 ct.load(y, (0,), (2,)))

    with pytest.raises(ct.TileTypeError) as info:
        _run(k, np.ones(2, np.uint8), np.ones(2, np.int8))
    text = str(info.value)
    assert "ct.load(x, (0,), (2,)) +" in text and "^^^^" in text
