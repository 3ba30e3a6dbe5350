"""A third catalogue of bad inputs: Python that a kernel may hold but that does not apply to
its values, each a Tile error in cuTile's words at the kernel's line, the same in both
executors (an internal ``ValueError``, ``ZeroDivisionError``, ``AttributeError`` or
``IndexError`` reached users from the interpreter, and the compiler accepted ``1 // 0``).
The words are those real cuTile 1.7 gives for the same kernel."""

import numpy as np
import pytest

import numba_tile as ct


def _statement(statement):
    @ct.kernel
    def kernel(x, out):
        statement(x, out)
    return kernel


def _load(x):
    return ct.load(x, (0,), (4,))


def _first(value):
    return value[0]  # (a helper: Python warns of a literal indexed in the source)


DIRECT = r"Directly indexing a tile is not supported; use `extract\(\)` or `item\(\)` instead\."
CASES = [
    ("int of a string", lambda x, out: ct.store(out, (0,), ct.full((4,), int("abc"), ct.int32)),
     ct.TileTypeError, r"Invalid argument for int\(abc\)"),
    ("constant floor division by zero",
     lambda x, out: ct.store(out, (0,), ct.full((4,), 1 // 0, ct.float32)),
     ct.TileValueError, r"integer division or modulo by zero: the constant expression '//' "
                        r"\(floordiv\) of 1 and 0"),
    ("constant modulo by zero", lambda x, out: ct.store(out, (0,), _load(x) + 7 % 0),
     ct.TileValueError, r"modulo by zero: the constant expression '%' \(mod\) of 7 and 0"),
    ("constant true division by zero", lambda x, out: ct.store(out, (0,), _load(x) + 1.5 / 0),
     ct.TileValueError, r"division by zero: the constant expression '/' \(truediv\) of 1.5 "
                        r"and 0"),
    ("index a dtype", lambda x, out: ct.float32[0],
     ct.TileTypeError, r"Object of type DTypeSpec\(dtype=<DType 'float32'>\) is not "
                       r"subscriptable"),
    ("index None", lambda x, out: _first(None),
     ct.TileTypeError, "Object of type None is not subscriptable"),
    ("index a float constant", lambda x, out: _first(1.5), ct.TileTypeError, DIRECT),
    ("index a scalar", lambda x, out: ct.bid(0)[0], ct.TileTypeError, DIRECT),
    ("index a tile with two ellipses", lambda x, out: ct.store(out, (0,), _load(x)[..., None,
                                                                                   ...][0]),
     ct.TileTypeError, "Only one ellipsis is allowed"),
    ("index an array", lambda x, out: ct.store(out, (0,), ct.full((4,), x[0], ct.float32)),
     ct.TileTypeError, r"Arrays are not directly subscriptable\. Use load\(\) or gather\(\) "
                       r"instead"),
    ("an enum member that is not there", lambda x, out: ct.PaddingMode.FOO,
     ct.TileTypeError, "'PaddingMode' object has no attribute 'FOO'"),
]


@pytest.mark.parametrize("name,statement,error,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_tile_error(run_kernel, name, statement, error, message):
    x, out = np.arange(1, 5, dtype=np.float32), np.full(4, np.nan, np.float32)
    with pytest.raises(error, match=message) as raised:
        run_kernel(_statement(statement), (1,), (x, out))
    assert raised.value.loc is not None and raised.value.loc.filename == __file__
    assert np.isnan(out).all()  # nothing ran past the error


@ct.kernel
def assigns_an_array_item(x, out):
    out[0] = 1.0


def test_array_item_assignment_in_cutile_words(run_kernel):
    with pytest.raises(ct.TileTypeError, match=r"Arrays do not support item assignment\. Use "
                                               r"store\(\) or scatter\(\) instead\."):
        run_kernel(assigns_an_array_item, (1,), (np.ones(4, np.float32),
                                                 np.zeros(4, np.float32)))
