"""A third catalogue of bad inputs: Python that a kernel may hold but that does not apply to
its values, each a Tile error in cuTile's words at the kernel's line, the same in both
executors (an internal ``ValueError``, ``ZeroDivisionError``, ``AttributeError`` or
``IndexError`` reached users from the interpreter, and the compiler accepted ``1 // 0``).
The words are those real cuTile 1.7 gives for the same kernel."""

import contextlib
import dataclasses
import math

import numpy as np
import pytest

import numba_tile as ct
from bad_inputs import statement_kernel


def _load(x):
    return ct.load(x, (0,), (4,))


def _first(value):
    return value[0]  # (a helper: Python warns of a literal indexed in the source)


def _set_first(value):
    value[0] = 1


DIRECT = r"Directly indexing a tile is not supported; use `extract\(\)` or `item\(\)` instead\."
CASES = [
    ("int of a string", lambda x, out: ct.store(out, (0,), ct.full((4,), int("abc"), ct.int32)),
     ct.TileTypeError, r"Invalid argument for int\(abc\)"),
    ("int of infinity", lambda x, out: ct.store(out, (0,), ct.full((4,), int(math.inf),
                                                                   ct.float32)),
     ct.TileTypeError, r"Invalid argument for int\(inf\)"),
    ("constant floor division by zero",
     lambda x, out: ct.store(out, (0,), ct.full((4,), 1 // 0, ct.float32)),
     ct.TileValueError, r"integer division or modulo by zero: the constant expression '//' "
                        r"\(floordiv\) of 1 and 0"),
    ("constant modulo by zero", lambda x, out: ct.store(out, (0,), _load(x) + 7 % 0),
     ct.TileValueError, r"modulo by zero: the constant expression '%' \(mod\) of 7 and 0"),
    ("constant true division by zero", lambda x, out: ct.store(out, (0,), _load(x) + 1.5 / 0),
     ct.TileValueError, r"division by zero: the constant expression '/' \(truediv\) of 1.5 "
                        r"and 0"),
    ("load from a tiled view", lambda x, out: ct.load(x.tiled_view((4,)), (0,), (4,)),
     ct.TileTypeError, r"^array must be a global array \(a kernel argument\), got tiled view "
                       r"of a 1-d float32 array with tiles \(4,\)"),
    ("an enum of a run-time value", lambda x, out: ct.PaddingMode(ct.bid(0)),
     ct.TileTypeError, r"^Enum constructor argument must be a constant: PaddingMode\(\) needs "
                       r"a compile-time constant value, got a run-time int32 scalar"),
    ("join a dtype", lambda x, out: ",".join(("a", ct.float16)),
     ct.TileTypeError, r"^sequence item 1: expected str instance, DType found"),
    ("join two arguments", lambda x, out: ",".join("a", "b"),
     ct.TileTypeError, r"^str.join\(\) takes exactly one argument \(2 given\)"),
    ("len of a dataclass instance", lambda x, out: len(_Pair(1, 2)),
     ct.TileTypeError, r"^'_Pair' object has no len\(\)"),
    ("add to a dataclass instance", lambda x, out: _Pair(1, 2) + 1,
     ct.TileTypeError, r"^Unsupported operand types for \+: _Pair and int"),
    ("reduce an array", lambda x, out: ct.reduce(x, 0, lambda a, b: a + b, 0.0),
     ct.TileTypeError, r"^Invalid argument #1 of reduce\(\): Expected a tile or a tuple of "
                       r"tiles, but given value has type Array\[float32,\(\?,\):\(\?,\)\]"),
    ("reduce with a run-time identity", lambda x, out: ct.reduce(_load(x), 0,
                                                                 lambda a, b: a + b,
                                                                 ct.bid(0) + 0.0),
     ct.TileTypeError, r"^identity of reduce\(\) must be constant scalars, got run-time "
                       r"float32 scalar"),
    ("join a number", lambda x, out: ",".join(("a", 1)),
     ct.TileTypeError, r"^sequence item 1: expected str instance, int found"),
    ("join a tile", lambda x, out: "".join(("a", _load(x))),
     ct.TileTypeError, r"^sequence item 1: expected str instance, Tile found"),
    ("store an ellipsis", lambda x, out: ct.store(out, (0,), ...),
     ct.TileTypeError, "Expected a tile or a scalar, got ellipsis Ellipsis"),
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
    ("a global object", lambda x, out: _first((SENTINEL,)),
     ct.TileTypeError, r"Cannot create constant from value of type object\."),
    ("astile of tiles", lambda x, out: ct.astile((_load(x), _load(x)), dtype=ct.float32),
     ct.TileTypeError, r"Expected scalar elements at value\[0\]; got element of type "
                       r"Tile\[float32,\(4,\)\]"),
    ("astile of arrays", lambda x, out: ct.astile((x, x), dtype=ct.float32),
     ct.TileTypeError, r"Expected scalar elements at value\[0\]; got element of type "
                       r"Array\[float32,\(\?,\):\(\?,\)\]"),
    ("astile of three", lambda x, out: ct.astile((1, 2, 3), dtype=ct.float32),
     ct.TileTypeError, "Tuple length 3 at value is not a power of 2"),
    ("assign an item of None", lambda x, out: _set_first(None),
     ct.TileTypeError, "Object of type None does not support item assignment"),
    ("an enum called with two values", lambda x, out: ct.PaddingMode(1, 2),
     ct.TileTypeError, r"Enum constructor takes exactly one positional argument: "
                       r"PaddingMode\(value\)"),
    ("divmod of floats", lambda x, out: divmod(_load(x), _load(x)),
     ct.TileTypeError, r"divmod\(\) is not implemented for floating point values"),
    ("assert of a float tile", lambda x, out: ct.assert_(_load(x)),
     ct.TileTypeError, r"Type of condition must be bool, got Tile\[float32,\(4,\)\]"),
    ("isnan of an int tile", lambda x, out: ct.isnan(_load(x).astype(ct.int32)),
     ct.TileTypeError, r"Unexpected input type Tile\[int32,\(4,\)\]"),
    ("store_advanced_indexing of a 1-d array",
     lambda x, out: ct.store_advanced_indexing(out, (ct.arange(4, dtype=ct.int32),), _load(x)),
     ct.TileTypeError, r"store_advanced_indexing requires a 2D or higher-rank array; use "
                       r"ct.scatter\(\) for 1D arrays"),
    ("reduce returning too few",
     lambda x, out: ct.reduce((_load(x), _load(x)), 0, lambda a0, a1, b0, b1: (a0 + b0,),
                              (0.0, 0.0)),
     ct.TileTypeError, r"Reduction function must return a tuple of 2 values to match the "
                       r"number of inputs, but a tuple of length 1 was found\."),
]

SENTINEL = object()


@dataclasses.dataclass(frozen=True)
class _Pair:
    a: int
    b: int


@pytest.mark.parametrize("name,statement,error,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_tile_error(run_kernel, name, statement, error, message):
    x, out = np.arange(1, 5, dtype=np.float32), np.full(4, np.nan, np.float32)
    with pytest.raises(error, match=message) as raised:
        run_kernel(statement_kernel(statement), (1,), (x, out))
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


@ct.kernel
def reuses_a_context_manager(x, out):
    manager = _nothing()
    with manager:
        pass
    with manager:
        pass


@contextlib.contextmanager
def _nothing():
    yield


def test_a_context_manager_entered_twice(run_kernel):
    with pytest.raises(ct.TileTypeError, match="^Context manager cannot be reused") as raised:
        run_kernel(reuses_a_context_manager, (1,), (np.ones(4, np.float32),
                                                    np.zeros(4, np.float32)))
    assert raised.value.loc.line == reuses_a_context_manager._pyfunc.__code__.co_firstlineno + 5


@contextlib.contextmanager
def _scaled(out, factor):
    yield factor
    ct.store(out, (1,), ct.full((4,), factor, ct.float32))


@ct.kernel
def holds_a_context_manager(x, out):
    factor = 2.0
    manager = _scaled(out, factor)  # (its arguments are taken here, as Python takes them)
    factor = 5.0
    with manager as f:
        ct.store(out, (0,), ct.load(x, (0,), (4,)) * f + factor)


def test_a_context_manager_held_in_a_variable(run_kernel):
    """``manager = make(...)`` then ``with manager:`` compiles as in cuTile (the compiler
    took only ``with make(...):``)."""
    x, out = np.arange(1, 5, dtype=np.float32), np.full(8, np.nan, np.float32)
    run_kernel(holds_a_context_manager, (1,), (x, out))
    np.testing.assert_array_equal(out, np.concatenate([x * 2 + 5, np.full(4, 2.0)]))


@ct.kernel
def repr_in_fstring(x, out):
    print(f"{ct.bid(0)!r}")


@ct.kernel
def format_spec_of_a_value(x, out):
    print(f"{ct.bid(0):{ct.bid(0)}}")


@ct.kernel
def starred_assignment(x, out):
    a, *rest = (1, 2, 3)


@ct.kernel
def for_else(x, out):
    for i in range(2):
        pass
    else:
        ct.store(out, (0,), ct.load(x, (0,), (4,)))


def _while_else(n):
    while n < 2:
        n += 1
    else:
        n = 0
    return n


@ct.kernel
def while_else_in_a_helper(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + _while_else(0))


@pytest.mark.parametrize("kernel,message,line", [
    (repr_in_fstring, "f-string: !r, !s, !a conversions are not supported", 2),
    (format_spec_of_a_value, "f-string: format spec must be a literal string", 2),
    (starred_assignment, r"Unsupported syntax: starred assignment \(a, \*b = ...\)", 2),
    (for_else, "'for-else' is not supported", 2),
    (while_else_in_a_helper, "'while-else' is not supported", None),
], ids=["repr", "format-spec", "starred", "for-else", "while-else"])
def test_syntax_cutile_refuses(run_kernel, kernel, message, line):
    with pytest.raises(ct.TileSyntaxError, match=message) as raised:
        run_kernel(kernel, (1,), (np.ones(4, np.float32), np.zeros(4, np.float32)))
    expected = _while_else.__code__.co_firstlineno + 1 if line is None else \
        kernel._pyfunc.__code__.co_firstlineno + line  # (the decorator's line, then the def)
    assert raised.value.loc.line == expected


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_where_takes_a_numeric_condition(run_kernel, dtype):
    """cuTile converts a numeric condition to bool: true where it is not zero."""
    @ct.kernel
    def choose(c, out):
        ct.store(out, (0,), ct.where(ct.load(c, (0,), (8,)), 1.0, -1.0))

    condition = np.array([0, 3, -2, 0, 1, 0, 0, 7], dtype)
    out = np.full(8, np.nan, np.float32)
    run_kernel(choose, (1,), (condition, out))
    np.testing.assert_array_equal(out, np.where(condition != 0, 1.0, -1.0))


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "tfloat32"])
def test_astile_of_narrow_floats(run_kernel, dtype):
    """Nested constants of the storage dtypes, compiled as a table (the compiler said it
    did not support the dtype)."""
    narrow = getattr(ct, dtype)
    last = 448.0 if dtype == "float8_e4m3fn" else 8.0

    @ct.kernel
    def table(out):
        values = ct.astile(((1.5, -2.0), (0.25, last)), dtype=narrow)
        ct.store(out, (0, 0), values.astype(ct.float32))

    out = np.full((2, 2), np.nan, np.float32)
    run_kernel(table, (1,), (out,))
    np.testing.assert_array_equal(out, [[1.5, -2.0], [0.25, last]])


@ct.kernel
def increments_an_array_item(x, out):
    x[1] += 1


@ct.kernel
def increments_a_tile_item(x, out):
    t = ct.load(x, (0,), (4,))
    t[0] += 1


@pytest.mark.parametrize("kernel,message", [
    (increments_an_array_item, r"Arrays are not directly subscriptable\."),
    (increments_a_tile_item, DIRECT)], ids=["array", "tile"])
def test_augmented_item_assignment_reads_first(run_kernel, kernel, message):
    """``x[i] += v`` reads ``x[i]`` first: its error, in both executors (the interpreter
    said item assignment, the compiler indexing)."""
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(kernel, (1,), (np.ones(4, np.float32), np.zeros(4, np.float32)))


@ct.kernel
def unpacks_a_number(x, out):
    a, b = 5


@ct.kernel
def unpacks_a_scalar(x, out):
    a, b = ct.bid(0)


@ct.kernel
def unpacks_none(x, out):
    a, b = None


@pytest.mark.parametrize("kernel,type_text", [
    (unpacks_a_number, r"Tile\[int32,\(\)\]"), (unpacks_a_scalar, r"Tile\[int32,\(\)\]"),
    (unpacks_none, "None")], ids=["number", "scalar", "none"])
def test_unpacking_what_is_no_tuple(run_kernel, kernel, type_text):
    """cuTile's "Expected a tuple" in both executors (the interpreter let Python's
    ``TypeError`` through, the compiler called it a gap)."""
    with pytest.raises(ct.TileTypeError, match=f"Expected a tuple, but given value has type "
                                               f"{type_text}: it cannot be unpacked"):
        run_kernel(kernel, (1,), (np.ones(4, np.float32), np.zeros(4, np.float32)))


@ct.kernel
def inverts_true(x, out):
    ct.static_assert(~True == -2)  # (a static expression is plain Python)
    ct.store(out, (0,), ct.full((4,), ~True, ct.float32))


@ct.kernel
def inverts_a_folded_bool(x, out):
    flag = 1 == 1
    ct.store(out, (0,), ct.full((4,), ~flag, ct.float32))


@pytest.mark.parametrize("kernel", [inverts_true, inverts_a_folded_bool],
                         ids=["literal", "folded"])
def test_invert_of_a_bool_constant(run_kernel, kernel):
    """cuTile refuses ``~`` of a bool constant (Python's is the int -2) but in static
    expressions."""
    with pytest.raises(ct.TileTypeError, match="`~` on boolean constant is not supported, "
                                               "please use ct.bitwise_not"):
        run_kernel(kernel, (1,), (np.ones(4, np.float32), np.zeros(4, np.float32)))


@ct.kernel
def joins_constant_strings(x, out):
    text = "-".join(("a", "b", "c"))
    ct.static_assert(text == "a-b-c" and ",".join("xy") == "x,y")
    ct.store(out, (0,), ct.load(x, (0,), (4,)) * len(("a", "b")))


def test_a_join_of_constant_strings_is_a_constant(run_kernel):
    """(cuTile folds it; the compiler failed on it.)"""
    x, out = np.arange(1, 5, dtype=np.float32), np.full(4, np.nan, np.float32)
    run_kernel(joins_constant_strings, (1,), (x, out))
    np.testing.assert_array_equal(out, 2 * x)


@ct.kernel
def joins_texts(x, out):
    t = ct.load(x, (0,), (4,))
    print(",".join((f"{t}", "b", f"{ct.bid(0)}")))


def test_a_join_of_texts(run_kernel, capfd):
    run_kernel(joins_texts, (1,), (np.arange(4, dtype=np.float32), np.zeros(4, np.float32)))
    assert "[0.0, 1.0, 2.0, 3.0],b,0" in capfd.readouterr().out


@ct.kernel
def matrix_product_of_numbers(x, out):
    a = 1
    a @= 2


def test_a_matrix_product_of_numbers(run_kernel):
    with pytest.raises(ct.TileTypeError, match=r"^Unsupported operand types for @=: int and "
                                               r"int"):
        run_kernel(matrix_product_of_numbers, (1,), (np.zeros(4, np.float32),
                                                     np.zeros(4, np.float32)))
