"""Debugging and compile-time helpers: print / ct.print / builtin print, ct.printf,
static_assert, static_eval, static_iter, ensure_constant, assert_ (API.md section 3,
"Debugging and compile-time").

Printed text is compared exactly: tiles print as nested lists (seed 002's example output
``[[4, 5, 6, 7], [8, 9, 10, 11]]``), floats in short form (``0.5``, ``1.0``, ``1.5708``).
"""

import math
import re

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.dtypes import to_dtype
from numba_tile.host.printing import format_values

# -- print ----------------------------------------------------------------------------------


@ct.kernel
def print_slice(x):  # seed 002, Array.slice
    sub = x.slice(axis=0, start=1, stop=3)
    print(ct.load(sub, (0, 0), shape=(2, 4)))


@ct.kernel
def print_dynamic_slice(x, offset, length):  # seed 002, dynamic slice bounds
    sub = x.slice(axis=0, start=offset, stop=offset + length)
    print(ct.load(sub, (0,), shape=(4,)))
    print(ct.load(sub, (1,), shape=(4,)))


@ct.kernel
def print_half_steps():
    t = ct.arange(4, dtype=ct.float32) * 0.5
    ct.print("t =", t)
    ct.print(t)
    print(t)


@ct.kernel
def print_pi_half(x):
    print(ct.load(x, (0,), shape=()))
    print(ct.load(x, (0,), shape=(2,)))
    ct.print(ct.full((2, 2), math.pi / 2, ct.float32))


@ct.kernel
def print_int_tiles():
    t = ct.arange(8, dtype=ct.int32)
    print(t)
    print(ct.reshape(t, (2, 4)))
    print(ct.reshape(t, (2, 2, 2)))
    print(ct.reshape(t, (8, 1)) - 3)
    print(ct.full((2,), -128, ct.int8), ct.full((1,), 2**64 - 1, ct.uint64))


@ct.kernel
def print_float_tiles():
    t = ct.reshape(ct.arange(4, dtype=ct.float32), (2, 2))
    print(t)
    print(-t - 0.25)
    print(ct.astype(t, ct.float16) * 2.5)
    print(ct.astype(t, ct.float64) / 4.0)
    print(ct.astype(t, ct.bfloat16) + 0.5)


@ct.kernel
def print_f_strings(n, v):
    t = ct.arange(4, dtype=ct.float32) * 0.5
    print(f"sum={ct.sum(t)}")
    print(f"t={t} n={n}")
    ct.print(f"v={v}, block {ct.bid(0)} of {ct.num_blocks(0)}")
    print(f"{ct.arange(2, dtype=ct.int32)}{n}")


@ct.kernel
def print_f_string_format_spec(v):
    x = ct.float32(math.pi / 2)
    print(f"{x:.3f} {v:.2f} {ct.int32(255):x}")


@ct.kernel
def print_sep_end(n):
    a = ct.arange(2, dtype=ct.int32)
    ct.print(a, n, "x", sep=" | ")
    ct.print("no newline", end="")
    ct.print("; next", end="!\n")
    print(a, a + 1, sep="", end="#\n")
    print("a", "b", "c", sep="\n")


@ct.kernel
def print_scalars(n, v, flag):
    print(n)
    print(v)
    print(n + 1, v * 2.0)
    print(42)
    print(ct.int16(5) + 2)
    print(ct.float32(0.5) + 1)
    print(ct.sum(ct.arange(4, dtype=ct.int32)))
    print(flag)


@ct.kernel
def print_tuples(n):
    """Tuples print as Python's str writes them: run-time items in print's form (a bool as
    1 or 0, as cuTile prints it), constants as their repr, nested tuples alike."""
    tx = ct.arange(4, dtype=ct.int32)
    print(divmod(tx, 3))
    print(f"blocks: {(ct.num_blocks(0), n, 'a', 2.5)}")
    print((n,), ((n, tx > 1), 7), sep=" ~ ")
    print(tx > 2, n > 1)


@ct.kernel
def print_block_ids():
    print(ct.bid(0))


PRINT_CASES = [
    ("seed-slice", print_slice, (1,), lambda: (np.arange(16).reshape(4, 4),),
     "[[4, 5, 6, 7], [8, 9, 10, 11]]\n"),
    ("seed-dynamic-slice", print_dynamic_slice, (1,), lambda: (np.arange(16), 8, 8),
     "[8, 9, 10, 11]\n[12, 13, 14, 15]\n"),
    ("half-steps", print_half_steps, (1,), tuple,
     "t = [0.0, 0.5, 1.0, 1.5]\n[0.0, 0.5, 1.0, 1.5]\n[0.0, 0.5, 1.0, 1.5]\n"),
    ("pi-half", print_pi_half, (1,), lambda: (np.full(2, math.pi / 2, np.float32),),
     "1.5708\n[1.5708, 1.5708]\n[[1.5708, 1.5708], [1.5708, 1.5708]]\n"),
    ("int-tiles", print_int_tiles, (1,), tuple,
     "[0, 1, 2, 3, 4, 5, 6, 7]\n[[0, 1, 2, 3], [4, 5, 6, 7]]\n"
     "[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]\n[[-3], [-2], [-1], [0], [1], [2], [3], [4]]\n"
     "[-128, -128] [18446744073709551615]\n"),
    ("float-tiles", print_float_tiles, (1,), tuple,
     "[[0.0, 1.0], [2.0, 3.0]]\n[[-0.25, -1.25], [-2.25, -3.25]]\n"
     "[[0.0, 2.5], [5.0, 7.5]]\n[[0.0, 0.25], [0.5, 0.75]]\n[[0.5, 1.5], [2.5, 3.5]]\n"),
    ("f-strings", print_f_strings, (1,), lambda: (7, 2.5),
     "sum=3.0\nt=[0.0, 0.5, 1.0, 1.5] n=7\nv=2.5, block 0 of 1\n[0, 1]7\n"),
    ("f-string-format-spec", print_f_string_format_spec, (1,), lambda: (2.5,),
     "1.571 2.50 ff\n"),
    ("sep-end", print_sep_end, (1,), lambda: (-5,),
     "[0, 1] | -5 | x\nno newline; next!\n[0, 1][1, 2]#\na\nb\nc\n"),
    ("tuples", print_tuples, (1,), lambda: (5,),
     "([0, 0, 0, 1], [0, 1, 2, 0])\nblocks: (1, 5, 'a', 2.5)\n(5,) ~ ((5, [0, 0, 1, 1]), 7)\n"
     "[0, 0, 0, 1] 1\n"),
    ("scalars", print_scalars, (1,), lambda: (7, -0.75, True),
     "7\n-0.75\n8 -1.5\n42\n7\n1.5\n6\n1\n"),
]


@pytest.mark.parametrize("name,kernel,grid,args,expected", PRINT_CASES,
                         ids=[c[0] for c in PRINT_CASES])
def test_print(run_kernel, capfd, name, kernel, grid, args, expected):
    capfd.readouterr()
    run_kernel(kernel, grid, args())
    assert capfd.readouterr().out == expected


def test_print_from_every_block(run_kernel, capfd):
    """Each block prints its line; the order of blocks is not specified."""
    capfd.readouterr()
    run_kernel(print_block_ids, (5,), ())
    assert sorted(capfd.readouterr().out.splitlines()) == ["0", "1", "2", "3", "4"]


def test_print_random_floats_round_trip(run_kernel, capfd, rng):
    """Printed float32 elements read back within the short form's 6 significant digits."""
    @ct.kernel
    def kernel(x):
        print(ct.load(x, (0,), shape=(8,)))

    x = (rng.choice([-1, 1], size=8) * rng.uniform(0.1, 100.0, size=8)).astype(np.float32)
    capfd.readouterr()
    run_kernel(kernel, (1,), (x,))
    text = capfd.readouterr().out
    assert text.startswith("[") and text.endswith("]\n")
    values = np.array([float(v) for v in text[1:-2].split(", ")])
    np.testing.assert_allclose(values, x, rtol=6e-6)


# Floats whose %g form is an integer get ".0" (a rule the device output computes per element):
# the decades, rounding up into the next decade or to 1e6 (exponent form), tiny and huge
# values, zero of both signs, NaN and infinities.
SHORT_FORM_VALUES = [1.0, 0.5, 100000.0, 123456.0, 999999.0, 999999.5, 1e6, 0.99999997,
                     0.1, 0.099999994, 1e-5, 12345.6, 12345.0, 9999.996, 99999.96, 2.5e-4,
                     -0.0, 0.0, -7.0, -123.25, 3e38, float("nan"), float("inf"),
                     -float("inf"), 1.5707964, 65504.0, 1e-40, 33554432.0, 7.0, 0.25,
                     1234567.0, -0.125]
SHORT_FORM_TEXT = ("[1.0, 0.5, 100000.0, 123456.0, 999999.0, 1e+06, 1e+06, 1.0, 0.1, 0.1, "
                   "1e-05, 12345.6, 12345.0, 10000.0, 100000.0, 0.00025, -0.0, 0.0, -7.0, "
                   "-123.25, 3e+38, nan, inf, -inf, 1.5708, 65504.0, 9.99995e-41, 3.35544e+07, 7.0, "
                   "0.25, 1.23457e+06, -0.125]\n")


def test_print_short_float_form(run_kernel, capfd):
    @ct.kernel
    def kernel(x):
        print(ct.load(x, (0,), shape=(32,)))

    capfd.readouterr()
    run_kernel(kernel, (1,), (np.array(SHORT_FORM_VALUES, np.float32),))
    assert capfd.readouterr().out == SHORT_FORM_TEXT


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.uint8, np.int64,
                                   np.bool_])
def test_print_large_tile(run_kernel, capfd, rng, dtype):
    """A tile of 16 x 64 elements (printed by a loop on the device), every dtype's form."""
    @ct.kernel
    def kernel(x):
        print(ct.load(x, (0, 0), shape=(16, 64)))

    if dtype == np.bool_:
        x = rng.random((16, 64)) < 0.5
    elif np.dtype(dtype).kind == "f":
        wide = rng.standard_normal((16, 64)) * 10.0 ** rng.integers(-3, 6, (16, 64))
        # (beyond float16's range: infinities, made so rather than by an overflowing cast)
        x = np.where(np.abs(wide) > np.finfo(dtype).max, np.copysign(np.inf, wide),
                     wide).astype(dtype)
        x[0, :4] = [1.0, 100.0, -2.0, 0.0]
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), (16, 64)).astype(dtype)
    capfd.readouterr()
    run_kernel(kernel, (1,), (x,))
    expected = format_values(x, to_dtype(x.dtype)) + "\n"  # the interpreter's form
    text = capfd.readouterr().out
    rows = text[2:-3].split("], [")
    assert text.startswith("[[") and text.endswith("]]\n") and len(rows) == 16
    values = [[v for v in row.split(", ")] for row in rows]
    assert all(len(row) == 64 for row in values)
    if dtype == np.bool_:
        assert np.array_equal(np.array(values) == "1", x)  # cuTile prints bools as 1 or 0
    elif np.dtype(dtype).kind == "f":
        floats = np.array([[float(v) for v in row] for row in values])
        np.testing.assert_allclose(floats, x.astype(np.float64), rtol=6e-6)
        assert all("." in v or "e" in v or v in ("nan", "inf", "-inf")
                   for row in values for v in row)
    else:
        assert np.array_equal(np.array([[int(v) for v in row] for row in values]), x)
    assert text == expected


@ct.kernel
def print_from_helper_kernel(x):
    t = ct.load(x, (0,), shape=(4,))
    print_helper(t, ct.sum(t))


def print_helper(t, total):
    print(t, total)


def test_print_in_a_helper(run_kernel, capfd):
    capfd.readouterr()
    run_kernel(print_from_helper_kernel, (1,), (np.arange(4, dtype=np.int32),))
    assert capfd.readouterr().out == "[0, 1, 2, 3] 6\n"


@ct.kernel
def print_tile_format_specs(x):
    t = ct.load(x, (0,), shape=(4,))
    print(f"{t:.2f}|{t:+.1e}|{ct.astype(t, ct.int32):x}|{ct.astype(t, ct.int32):>4d}|{t:g}")


def test_print_f_string_specs_on_tiles(run_kernel, capfd):
    capfd.readouterr()
    run_kernel(print_tile_format_specs, (1,), (np.array([-255.0, 0.5, 10.0, 3.0], np.float32),))
    assert capfd.readouterr().out == (
        "[-255.00, 0.50, 10.00, 3.00]|[-2.6e+02, +5.0e-01, +1.0e+01, +3.0e+00]|"
        "[-ff, 0, a, 3]|[-255,    0,   10,    3]|[-255, 0.5, 10, 3]\n")


def test_print_options_the_device_lacks_are_compile_errors():
    @ct.kernel
    def to_file(x):
        print(ct.load(x, (0,), shape=(4,)), file=None)

    @ct.kernel
    def centered(x):
        print(f"{ct.load(x, (0,), shape=(4,)):^8}")

    @ct.kernel
    def float_without_type(x):
        print(f"{ct.load(x, (0,), shape=(4,)):.3}")

    @ct.kernel
    def repr_conversion(x):
        print(f"{ct.load(x, (0,), shape=(4,))!r}")

    x = np.zeros(4, np.float32)
    with pytest.raises(ct.TileTypeError, match="sep= and end="):
        ct.compile(to_file, (x,))
    with pytest.raises(ct.TileUnsupportedFeatureError, match="centering"):
        ct.compile(centered, (x,))
    with pytest.raises(ct.TileUnsupportedFeatureError, match="no presentation type"):
        ct.compile(float_without_type, (x,))
    with pytest.raises(ct.TileSyntaxError, match="f-string: !r, !s, !a conversions are not "
                                                 "supported"):
        ct.compile(repr_conversion, (x,))


# -- printf ---------------------------------------------------------------------------------
@ct.kernel
def printf_scalars(n, v):
    ct.printf("%d %f\n", n, v)
    ct.printf("%.3f|%e|%x\n", v, v, ct.int32(255))
    ct.printf("%5.2f|%-4d|%04d\n", v, n, n)
    ct.printf("100%%\n")
    ct.printf("a=%d ", n + 1)
    ct.printf("b=%.1f\n", v * 2.0)


@ct.kernel
def printf_constants():
    ct.printf("%.4f %d %x %X\n", ct.float32(math.pi / 2), 12, 3054, 3054)
    ct.printf("%e\n", ct.float64(12345.678))


@ct.kernel
def printf_tiles():
    t = ct.arange(4, dtype=ct.int32)
    ct.printf("one tile: %d\n", t)
    ct.printf("two tiles: %d, %f\n", t, t * 2.0)
    ct.printf("%.1f\n", ct.reshape(t, (2, 2)) * 0.5)
    ct.printf("%x\n", t + 9)


@ct.kernel
def printf_hex_floats(v):
    ct.printf("%a %A %.1a|%#.0a|%+11.2a\n", v, v * 8.0, ct.float16(0.1), 1.0, -v)


PRINTF_CASES = [
    ("scalars", printf_scalars, lambda: (3, 1.5),
     "3 1.500000\n1.500|1.500000e+00|ff\n 1.50|3   |0003\n100%\na=4 b=3.0\n"),
    ("constants", printf_constants, tuple, "1.5708 12 bee BEE\n1.234568e+04\n"),
    ("tiles", printf_tiles, tuple,
     "one tile: [0, 1, 2, 3]\ntwo tiles: [0, 1, 2, 3], [0.000000, 2.000000, 4.000000, "
     "6.000000]\n[[0.0, 0.5], [1.0, 1.5]]\n[9, a, b, c]\n"),
    ("hex floats", printf_hex_floats, lambda: (9.0,),  # (as glibc's printf writes them)
     "0x1.2p+3 0X1.2P+6 0x1.ap-4|0x1.p+0| -0x1.20p+3\n"),
]


@pytest.mark.parametrize("name,kernel,args,expected", PRINTF_CASES,
                         ids=[c[0] for c in PRINTF_CASES])
def test_printf(run_kernel, capfd, name, kernel, args, expected):
    capfd.readouterr()
    run_kernel(kernel, (1,), args())
    assert capfd.readouterr().out == expected


# -- static_assert --------------------------------------------------------------------------
@ct.kernel
def static_assert_even(out, N: ct.Constant[int]):
    ct.static_assert(N % 2 == 0, "N must be even")
    ct.static_assert(out.ndim == 1)
    ct.store(out, (0,), ct.full((N,), N, ct.int32))


@pytest.mark.parametrize("n", [2, 4, 8])
def test_static_assert_true_passes(run_kernel, n):
    out = np.zeros(n, np.int32)
    run_kernel(static_assert_even, (1,), (out, n))
    np.testing.assert_array_equal(out, np.full(n, n))


@pytest.mark.parametrize("n", [1, 3, 7])
def test_static_assert_false_raises_with_message(run_kernel, n):
    out = np.zeros(8, np.int32)
    with pytest.raises(ct.TileStaticAssertionError) as info:
        run_kernel(static_assert_even, (1,), (out, n))
    assert info.value.message == "Static assertion failed: N must be even"  # as cuTile words it
    assert "N must be even" in str(info.value)
    assert not out.any()


def test_static_assert_false_without_message(run_kernel):
    @ct.kernel
    def kernel(x):
        ct.static_assert(x.ndim == 2)

    with pytest.raises(ct.TileStaticAssertionError):
        run_kernel(kernel, (1,), (np.zeros(4, np.float32),))


def test_static_assert_on_tile_properties(run_kernel):
    @ct.kernel
    def kernel(x, out):
        t = ct.load(x, (0, 0), (4, 8))
        ct.static_assert(t.shape == (4, 8), "shape")
        ct.static_assert(t.dtype == ct.float16, "dtype")
        ct.static_assert(t.ndim == 2 and x.ndim == 2, "ndim")
        ct.store(out, (0, 0), t)

    x = np.arange(32, dtype=np.float16).reshape(4, 8) + 1
    out = np.full((4, 8), np.nan, np.float16)
    run_kernel(kernel, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


@ct.kernel
def static_assert_runtime(n):
    ct.static_assert(n > 0, "n must be positive")


@ct.kernel
def static_assert_block_id():
    block = ct.bid(0)
    ct.static_assert(block == 0)


@ct.kernel
def static_assert_calls_bid():
    ct.static_assert(ct.bid(0) == 0)


def test_static_assert_non_constant_is_type_error(run_kernel):
    with pytest.raises(ct.TileTypeError, match="must be a compile-time constant"):
        run_kernel(static_assert_runtime, (1,), (5,))
    with pytest.raises(ct.TileTypeError, match="must be a compile-time constant"):
        run_kernel(static_assert_block_id, (1,), ())
    # as in cuTile, no tile operation runs inside static_assert
    with pytest.raises(ct.TileStaticEvalError, match=r"bid\(\) cannot be called inside"):
        run_kernel(static_assert_calls_bid, (1,), ())


# -- static_eval ----------------------------------------------------------------------------
@ct.kernel
def static_eval_shapes(x, out, SHAPE: ct.Constant, SMALL: ct.Constant[bool]):
    t = ct.load(x, (0, 0), SHAPE)
    reversed_shape = ct.static_eval(tuple(reversed(t.shape)))
    r = ct.reshape(t, reversed_shape)
    ct.static_assert(r.shape == (SHAPE[1], SHAPE[0]))
    dtype = ct.static_eval(ct.float16 if SMALL else ct.float64)
    doubled = ct.static_eval(x.ndim * 2 + len(SHAPE))
    ct.store(out, (0, 0), ct.astype(r, dtype) * doubled)


@pytest.mark.parametrize("small", [False, True])
def test_static_eval(run_kernel, rng, small):
    x = rng.uniform(0.5, 2.0, size=(4, 8)).astype(np.float32)
    out = np.full((8, 4), np.nan, np.float64)
    run_kernel(static_eval_shapes, (1,), (x, out, (4, 8), small))
    expected = x.reshape(8, 4).astype(np.float16 if small else np.float64) * 6
    np.testing.assert_array_equal(out, expected.astype(np.float64))


# -- static_iter ----------------------------------------------------------------------------
DTYPES = (ct.int8, ct.float16, ct.float32)


@ct.kernel
def static_iter_dtypes(x, out):
    t = ct.load(x, (0,), (8,))
    for i in ct.static_iter(range(3)):
        ct.static_assert(i < 3)  # the loop variable is a compile-time constant
        converted = t.astype(DTYPES[i])
        ct.store(out, (i, 0), ct.astype(converted, ct.float32)[None, :])


@ct.kernel
def static_iter_tiles(x, out):
    t = ct.load(x, (0,), (8,))
    parts = ()
    for k in ct.static_iter(range(1, 4)):
        parts = parts + (t * k,)
    total = ct.zeros((8,), ct.float32)
    for p in ct.static_iter(parts):
        total = total + p
    for dt in ct.static_iter((ct.float16, ct.int32)):
        total = total + ct.zeros((8,), dt)  # a loop-carried value of changing types
    ct.store(out, (0,), total)


def test_static_iter_over_range_with_constant_index(run_kernel, rng):
    x = (rng.choice([-1, 1], size=8) * rng.uniform(0.5, 50.0, size=8)).astype(np.float32)
    out = np.full((3, 8), np.nan, np.float32)
    run_kernel(static_iter_dtypes, (1,), (x, out))
    np.testing.assert_array_equal(out[0], np.trunc(x))
    np.testing.assert_array_equal(out[1], x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(out[2], x)


def test_static_iter_over_tuples(run_kernel, rng):
    x = rng.uniform(0.5, 2.0, size=8).astype(np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(static_iter_tiles, (1,), (x, out))
    np.testing.assert_allclose(out, x * 6, rtol=1e-6)


@ct.kernel
def static_iter_nested(out, N: ct.Constant[int]):
    acc = ct.zeros((4,), ct.int32)
    for i in ct.static_iter(range(min(N, 3))):  # (no break in a static_iter loop)
        for j in ct.static_iter(range(i, N)):
            acc = acc + (i * 10 + j)
    ct.store(out, (0,), acc)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_static_iter_nested(run_kernel, n):
    out = np.full(4, -1, np.int32)
    run_kernel(static_iter_nested, (1,), (out, n))
    expected = sum(i * 10 + j for i in range(min(n, 3)) for j in range(i, n))
    np.testing.assert_array_equal(out, np.full(4, expected))


@ct.kernel
def static_iter_functions(x, out):
    t = ct.load(x, (0,), (8,))
    for k, f in ct.static_iter(((0, ct.exp), (1, ct.sqrt), (2, ct.negative))):
        ct.store(out, (k, 0), f(t)[None, :])


def test_static_iter_over_functions(run_kernel, rng):
    x = rng.uniform(0.5, 2.0, size=8).astype(np.float32)
    out = np.full((3, 8), np.nan, np.float32)
    run_kernel(static_iter_functions, (1,), (x, out))
    np.testing.assert_allclose(out, [np.exp(x), np.sqrt(x), -x], rtol=2e-6)


@ct.kernel
def static_iter_run_time_bound(out, n):
    for i in ct.static_iter(range(n)):
        ct.store(out, (i,), ct.full((1,), i, ct.int32))


def test_static_iter_needs_compile_time_bounds(run_kernel):
    with pytest.raises(ct.TileStaticEvalError, match="Symbolic tile has no concrete value"):
        run_kernel(static_iter_run_time_bound, (1,), (np.zeros(4, np.int32), 4))


# -- ensure_constant ------------------------------------------------------------------------
@ct.kernel
def ensure_constant_ok(x, out, N: ct.Constant[int]):
    n = ct.ensure_constant(N)
    k = ct.ensure_constant(x.ndim + 3)
    ct.store(out, (0,), ct.arange(n, dtype=ct.int32) * k)


def test_ensure_constant_returns_constants(run_kernel):
    out = np.full(8, -1, np.int32)
    run_kernel(ensure_constant_ok, (1,), (np.zeros((2, 2)), out, 8))
    np.testing.assert_array_equal(out, np.arange(8) * 5)


@ct.kernel
def ensure_constant_runtime(n):
    ct.ensure_constant(n)


@ct.kernel
def ensure_constant_block_id():
    ct.ensure_constant(ct.bid(0) + 1)


@ct.kernel
def ensure_constant_shape(x):
    ct.ensure_constant(x.shape[0])


@pytest.mark.parametrize("kernel,args", [(ensure_constant_runtime, lambda: (4,)),
                                         (ensure_constant_runtime, lambda: (2.5,)),
                                         (ensure_constant_block_id, tuple),
                                         (ensure_constant_shape, lambda: (np.zeros(4),))],
                         ids=["int-arg", "float-arg", "bid", "array-shape"])
def test_ensure_constant_runtime_is_a_static_assertion_error(run_kernel, kernel, args):
    with pytest.raises(ct.TileStaticAssertionError,
                       match=re.escape("Argument of ensure_constant() is not a compile-time "
                                       "constant")):
        run_kernel(kernel, (1,), args())


@ct.kernel
def branch_on_ensure_constant(out, N: ct.Constant[int]):
    if ct.ensure_constant(N > 1):
        ct.store(out, (0,), ct.full((1,), N, ct.int32))
    else:
        ct.static_assert(False)  # the side a constant condition removes is not compiled


def test_a_branch_on_ensure_constant_is_decided_at_compile_time(run_kernel):
    out = np.zeros(1, np.int32)
    run_kernel(branch_on_ensure_constant, (1,), (out, 3))
    assert out[0] == 3
    with pytest.raises(ct.TileStaticAssertionError, match="Static assertion failed"):
        run_kernel(branch_on_ensure_constant, (1,), (out, 1))


# -- assert_ --------------------------------------------------------------------------------
@ct.kernel
def assert_positive(x, out):
    t = ct.load(x, (0,), (8,))
    ct.assert_(t > 0, "all elements must be positive")
    ct.store(out, (0,), t)


def test_assert_true_passes(run_kernel, rng):
    x = rng.uniform(0.5, 2.0, size=8).astype(np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(assert_positive, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("bad", [0, 3, 7])
def test_assert_false_raises(run_kernel, rng, bad):
    x = rng.uniform(0.5, 2.0, size=8).astype(np.float32)
    x[bad] = -x[bad]
    run_kernel.expect_assertion_failure(assert_positive, (1,), (x, np.zeros(8, np.float32)),
                                        "all elements must be positive")


@ct.kernel
def assert_scalar(n):
    ct.assert_(n < 10)


def test_assert_scalar(run_kernel):
    run_kernel(assert_scalar, (1,), (9,))
    run_kernel.expect_assertion_failure(assert_scalar, (1,), (10,), "ct.assert_ failed")


def test_a_failed_assert_prints_its_message_as_a_line():
    # as cuTile's does, on standard output (the driver's report goes to standard error); on
    # the GPU, expect_assertion_failure checks the line
    compiled = ct.compile(assert_positive, (np.ones(8, np.float32), np.zeros(8, np.float32)),
                          arch="sm_90")
    line = ", ".join(str(b) for b in b"all elements must be positive\n")
    assert "vprintf" in compiled.ptx and line in compiled.ptx
