"""Arithmetic promotion against the seed's own text (seed 000, "Arithmetic Promotion").

The expected table is parsed from a verbatim excerpt of the seed (tests/data), never from the
implementation: every cell is checked, both through ``common_dtype`` and through a kernel.
"""

import contextlib
import io
import pathlib
import re

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.dtypes import to_dtype
from numba_tile.promotion import Loose, common_dtype, table_dtype

SEED_EXCERPT = pathlib.Path(__file__).parent / "data" / "promotion_table_seed000.txt"


def parse_seed_table(text):
    """Return ``(short_names, {short: dtype name}, {(row, col): result short name or 'ERR'})``."""
    body, legend = text.split("Legend:")
    header, rows = re.split(r"\|\s*\n\|---[|-]*", body, maxsplit=1)
    header = header.split("table below.", 1)[1]
    columns = [c.strip() for c in header.split("|") if c.strip()]
    cells = [c.strip() for c in rows.split("|") if c.strip()]
    assert len(cells) == len(columns) * (len(columns) + 1), "table is not square"
    table = {}
    for r in range(len(columns)):
        row = cells[r * (len(columns) + 1):(r + 1) * (len(columns) + 1)]
        label, values = row[0], row[1:]
        for col, value in zip(columns, values):
            table[(label, col)] = value
    # The legend reads "b1:\nbool_u8:\nuint8u16:..." : each full name runs up to the next key.
    flat = legend.replace("\n", "")
    keys = columns + ["ERR"]
    names = {}
    for key, following in zip(keys, keys[1:]):
        start = flat.index(key + ":") + len(key) + 1
        names[key] = flat[start:flat.index(following + ":", start)]
    return columns, names, table


COLUMNS, NAMES, TABLE = parse_seed_table(SEED_EXCERPT.read_text())


def dtype_of(short):
    return getattr(ct, NAMES[short])


def test_seed_table_parsed_completely():
    assert len(COLUMNS) == 18
    assert len(TABLE) == 18 * 18
    assert NAMES["bf"] == "bfloat16" and NAMES["b1"] == "bool_" and NAMES["f4e2m1fn"] == \
        "float4_e2m1fn"
    assert TABLE[("u8", "i8")] == "ERR" and TABLE[("i32", "f16")] == "f16"


@pytest.mark.parametrize("row,col", sorted(TABLE))
def test_every_cell(row, col):
    expected = TABLE[(row, col)]
    a, b = dtype_of(row), dtype_of(col)
    if expected == "ERR":
        assert table_dtype(a, b) is None
        with pytest.raises(ct.TileTypeError, match="not supported"):
            common_dtype(a, b)
    else:
        assert table_dtype(a, b) is dtype_of(expected)
        assert common_dtype(a, b) is dtype_of(expected)


ARITHMETIC_SHORT = ["b1", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "f32",
                    "f64", "bf"]


def _launch_add(a, b):
    """Combine two arrays in a kernel (``+``, or ``maximum`` for two bools, on which ``+`` is
    not defined) and return the result dtype as the kernel saw it."""
    @ct.kernel
    def add(x, y, out):
        p, q = ct.load(x, (0,), (4,)), ct.load(y, (0,), (4,))
        t = ct.maximum(p, q) if p.dtype == ct.bool_ and q.dtype == ct.bool_ else p + q
        print(t.dtype)  # tile code cannot write to host objects: it says the dtype
        ct.store(out, (0,), t)

    out = np.zeros(4, np.float64)
    printed = io.StringIO()
    with ct.interpret(), contextlib.redirect_stdout(printed):
        ct.launch(0, (1,), add, (a, b, out))
    return to_dtype(printed.getvalue().strip()), out


@pytest.mark.parametrize("row", ARITHMETIC_SHORT)
def test_cells_through_a_kernel(row):
    rng = np.random.default_rng(0)
    for col in ARITHMETIC_SHORT:
        a_dt, b_dt = dtype_of(row), dtype_of(col)
        a = rng.integers(1, 5, 4).astype(a_dt.numpy)
        b = rng.integers(1, 5, 4).astype(b_dt.numpy)
        if TABLE[(row, col)] == "ERR":
            with pytest.raises(ct.TileTypeError):
                _launch_add(a, b)
            continue
        dtype, out = _launch_add(a, b)
        assert dtype is dtype_of(TABLE[(row, col)]), (row, col)
        combine = np.maximum if dtype is ct.bool_ else np.add
        np.testing.assert_array_equal(out, combine(a.astype(np.float64), b.astype(np.float64)))


# -- loosely typed constants -------------------------------------------------------------------
@pytest.mark.parametrize("value,expected", [
    (0, ct.int32), (-2**31, ct.int32), (2**31 - 1, ct.int32), (2**31, ct.int64),
    (-2**31 - 1, ct.int64), (2**63 - 1, ct.int64), (2**63, ct.uint64), (2**64 - 1, ct.uint64),
    (1.5, ct.float32), (True, ct.bool_)])
def test_constant_concrete_dtype(value, expected):
    assert Loose(value).concrete_dtype() is expected


def test_integer_constant_beyond_uint64():
    with pytest.raises(ct.TileValueError):
        Loose(2**64).concrete_dtype()


@pytest.mark.parametrize("typed,const,expected", [
    (ct.int8, 3, ct.int8), (ct.uint16, 7, ct.uint16), (ct.float16, 2.5, ct.float16),
    (ct.bfloat16, 1.0, ct.bfloat16), (ct.int8, 1.5, ct.float32), (ct.bool_, 2, ct.int32),
    (ct.bool_, 2**40, ct.int64), (ct.bool_, 0.5, ct.float32), (ct.float16, 3, ct.float16),
    (ct.int64, True, ct.int64), (ct.uint64, 2**63, ct.uint64)])
def test_constant_with_typed_operand(typed, const, expected):
    assert common_dtype(typed, Loose(const)) is expected
    assert common_dtype(Loose(const), typed) is expected


@pytest.mark.parametrize("typed,const", [(ct.int8, -170), (ct.int8, 128), (ct.uint8, -1),
                                         (ct.uint32, 2**32), (ct.int16, 40000),
                                         (ct.float16, 1e6)])
def test_constant_out_of_range(typed, const):
    with pytest.raises(ct.TileValueError, match="out of range of " + typed.name):
        common_dtype(typed, Loose(const))


def test_message_of_the_spec_example():
    with pytest.raises(ct.TileValueError) as info:
        common_dtype(ct.int8, Loose(-170))
    assert info.value.message == "Integer constant -170 is out of range of int8"


@pytest.mark.parametrize("typed", [ct.tfloat32, ct.float8_e4m3fn, ct.float8_e5m2,
                                   ct.float8_e8m0fnu, ct.float4_e2m1fn, ct.float8_e5m3fnu])
def test_numeric_only_dtypes_do_not_mix(typed):
    assert common_dtype(typed, typed) is typed
    for other in (ct.float32, ct.int32, ct.bool_):
        with pytest.raises(ct.TileTypeError):
            common_dtype(typed, other)
    with pytest.raises(ct.TileTypeError):
        common_dtype(typed, Loose(1.0))


def test_constants_fold_in_a_kernel(capsys):
    @ct.kernel
    def fold(n: ct.Constant[int]):
        t = (n + 2) * 3
        u = 5 + 3.0
        strict = ct.int16(5) + 2
        print(t.dtype, t, u.dtype, u, strict.dtype, strict, strict.is_constant)
        print(isinstance(t, ct.Tile), (2**40).dtype, (2**63).dtype, (n * 2.0).dtype)
        big = 2**40 + ct.zeros((2,), ct.int64)
        print(big.dtype, big)

    with ct.interpret():
        ct.launch(0, (1,), fold, (4,))
    assert capsys.readouterr().out.splitlines() == [
        "int32 18 float32 8.0 int16 7 True", "False int64 uint64 float32",
        f"int64 [{2**40}, {2**40}]"]


def test_constant_out_of_range_in_a_kernel_names_the_line():
    @ct.kernel
    def bad(x):
        t = ct.load(x, (0,), (4,))
        ct.store(x, (0,), t + (-170))  # the offending line

    with pytest.raises(ct.TileValueError) as info:
        with ct.interpret():
            ct.launch(0, (1,), bad, (np.ones(4, np.int8),))
    err = info.value
    assert err.message == "Integer constant -170 is out of range of int8"
    assert err.loc.filename == __file__
    assert "the offending line" in err.loc.source_line
    assert "^" in str(err) and "t + (-170)" in str(err)
