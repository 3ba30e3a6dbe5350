"""Bad inputs on which the two executors used to disagree (issue 52, item 2): one accepted what
the other refused, or both refused with different classes, messages or lines. Each must now
fail with the same Tile error (a ``TypeError`` for a bad kernel argument), message and kernel
line in the interpreter and the compiler.
"""

import numpy as np
import pytest

import numba_tile as ct
from bad_inputs import BadInput, arrays, check, module_file, statement_kernel

F32 = arrays(np.float32, np.float32)
I32 = arrays(np.int32, np.int32)
G = [1, 2, 3]
D = {"a": 1}
S = {1, 2}
NESTED = (1, [2])
NP_CONSTANT = np.ones(4, np.float32)
RZ = ct.RoundingMode.RZ
ORDER = ct.MemoryOrder
TYPE_ERROR = ct.TileTypeError


def matrices(dtype=np.float16, n=16):
    """Two ``n`` x ``n`` matrices of ``dtype``."""
    return (np.ones((n, n), dtype), np.zeros((n, n), dtype))


def load(x):
    return ct.load(x, (0,), (4,))


def load2(x):
    return ct.load(x, (0, 0), (16, 16))


CASES = []


def case(name, kernel, args, error, message, line, runs=("interpret", "compile")):
    CASES.append(BadInput(name, kernel, args, error, message, line, runs))


NOT_A_TILE = r"Expected a tile, but given value has type "

# -- an array, None, a string or a number where an op takes a tile -----------------------------
case("astype-of-array", statement_kernel(
    lambda x, out: ct.astype(x, ct.float16)),
    F32, TYPE_ERROR, r'Invalid argument #1 of astype\(\): ' + NOT_A_TILE + r"Array\[float32",
    "ct.astype(x, ct.float16)")
case("astype-of-none", statement_kernel(
    lambda x, out: ct.astype(None, ct.float16)),
    F32, TYPE_ERROR, r"#1 of astype\(\): " + NOT_A_TILE + "None", "ct.astype(None")
case("astype-of-string", statement_kernel(
    lambda x, out: ct.astype("a", ct.float16)),
    F32, TYPE_ERROR, r"#1 of astype\(\): " + NOT_A_TILE + "str", 'ct.astype("a"')
case("mma-acc-none", statement_kernel(
    lambda x, out: ct.mma(load2(x), load2(x), None)),
    matrices(), TYPE_ERROR, r'Invalid argument "acc" of mma\(\): ' + NOT_A_TILE + "None",
    "load2(x), None)")
case("mma-acc-float", statement_kernel(
    lambda x, out: ct.mma(load2(x), load2(x), 0.0)),
    matrices(), TYPE_ERROR, r"Expect acc shape to be \(16, 16\), got \(\)", "load2(x), 0.0)")
case("mma-acc-int", statement_kernel(
    lambda x, out: ct.mma(load2(x), load2(x), 0)),
    matrices(), TYPE_ERROR, r"Expect acc shape to be \(16, 16\), got \(\)", "load2(x), 0)")
case("mma-acc-array", statement_kernel(
    lambda x, out: ct.mma(load2(x), load2(x), out)),
    matrices(), TYPE_ERROR, r'"acc" of mma\(\): ' + NOT_A_TILE + r"Array\[float16", "out)")
case("mma-acc-string", statement_kernel(
    lambda x, out: ct.mma(load2(x), load2(x), "acc")),
    matrices(), TYPE_ERROR, r'"acc" of mma\(\): ' + NOT_A_TILE + "str", '"acc")')
case("mma-array-operand", statement_kernel(
    lambda x, out: ct.mma(x, load2(x), load2(out))),
    matrices(), TYPE_ERROR, r"#1 of mma\(\): " + NOT_A_TILE + r"Array\[float16,\(\?,\?\)",
    "ct.mma(x, load2(x)")
case("mma-second-operand-array", statement_kernel(
    lambda x, out: ct.mma(load2(x), out, load2(out))),
    matrices(), TYPE_ERROR, r"#2 of mma\(\): " + NOT_A_TILE + r"Array", "ct.mma(load2(x), out")
case("mma-first-operand-none", statement_kernel(
    lambda x, out: ct.mma(None, load2(x), load2(out))),
    matrices(), TYPE_ERROR, r"#1 of mma\(\): " + NOT_A_TILE + "None", "ct.mma(None")
case("mma-scalar-operand", statement_kernel(
    lambda x, out: ct.mma(2.0, load2(x), load2(out))),
    matrices(), TYPE_ERROR, r"Expect shape of `x` to be at least 2D, got \(\)", "ct.mma(2.0")
case("matmul-array-operand", statement_kernel(
    lambda x, out: ct.matmul(load2(x), out)),
    matrices(), TYPE_ERROR, r"#2 of matmul\(\): " + NOT_A_TILE + r"Array\[float16",
    "ct.matmul(load2(x), out)")
case("matmul-array-first", statement_kernel(
    lambda x, out: ct.matmul(x, load2(out))),
    matrices(), TYPE_ERROR, r"#1 of matmul\(\): " + NOT_A_TILE + "Array", "ct.matmul(x,")
case("matmul-none", statement_kernel(
    lambda x, out: ct.matmul(load2(x), None)),
    matrices(), TYPE_ERROR, r"#2 of matmul\(\): " + NOT_A_TILE + "None",
    "ct.matmul(load2(x), None)")
case("matmul-operator-array", statement_kernel(
    lambda x, out: load2(x) @ out),
    matrices(), TYPE_ERROR, r"#2 of matmul\(\): " + NOT_A_TILE + "Array", "load2(x) @ out")
case("matmul-scalar", statement_kernel(
    lambda x, out: ct.matmul(load2(x), 2)),
    matrices(), ct.TileValueError, r"matmul\(\) needs tiles of rank 1 to 3",
    "ct.matmul(load2(x), 2)")

# operators: a tile beside None, a string, an array
case("tile-eq-none", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) == None)),  # noqa: E711
    F32, TYPE_ERROR, r"Expected a tile or a scalar for the right operand, got NoneType None",
    "load(x) == None")
case("tile-ne-none", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) != None)),  # noqa: E711
    F32, TYPE_ERROR, r"for the right operand, got NoneType None", "load(x) != None")
case("none-eq-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), None == load(x))),  # noqa: E711
    F32, TYPE_ERROR, r"for the left operand, got NoneType None", "None == load(x)")
case("tile-lt-none", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) < None)),
    F32, TYPE_ERROR, r"for the right operand, got NoneType None", "load(x) < None")
case("tile-plus-none", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) + None)),
    F32, TYPE_ERROR, r"for the right operand, got NoneType None", "load(x) + None")
case("tile-eq-string", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) == "a")),
    F32, TYPE_ERROR, r"for the right operand, got str 'a'", 'load(x) == "a"')
case("tile-plus-numpy-array", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) + NP_CONSTANT)),
    F32, TYPE_ERROR, r"Cannot create constant from value of type numpy.ndarray\.",
    "load(x) + NP_CONSTANT")
case("numpy-array-times-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), NP_CONSTANT * load(x))),
    F32, TYPE_ERROR, r"Cannot create constant from value of type numpy.ndarray\.",
    "NP_CONSTANT * load(x)")

# NumPy functions on tiles (and arrays)
NUMPY_MESSAGE = r"NumPy functions cannot take tiles or arrays in tile code; use the ct ops"
case("numpy-exp-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.exp(load(x)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.exp(load(x))")
case("numpy-sqrt-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.sqrt(load(x)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.sqrt(load(x))")
case("numpy-sin-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.sin(load(x)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.sin(load(x))")
case("numpy-abs-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.abs(load(x)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.abs(load(x))")
case("numpy-maximum-of-tiles", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.maximum(load(x), load(out)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.maximum(load(x), load(out))")
case("numpy-add-tile-and-number", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.add(load(x), 1.0))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.add(load(x), 1.0)")
case("numpy-sum-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.sum(load(x)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.sum(load(x))")
case("numpy-where-of-tiles", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.where(load(x) > 1, load(x), load(out)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.where(load(x) > 1")
case("numpy-exp-of-array", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.exp(x))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.exp(x)")
case("numpy-floor-of-int-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.floor(load(x)))),
    I32, TYPE_ERROR, NUMPY_MESSAGE, "np.floor(load(x))")

# range of what is no integer scalar
RANGE = r"Invalid argument #{} of range\(\): Expected an integer scalar, but given value has type "
case("range-of-tile", statement_kernel(
    lambda x, out: [0 for i in range(load(x))]),
    F32, ct.TileSyntaxError, r"list comprehensions are not supported", "[0 for i in range")


@ct.kernel
def range_of_tile(x, out):
    for i in range(ct.load(x, (0,), (4,))):
        pass


@ct.kernel
def range_of_float(x, out):
    for i in range(2.5):
        pass


@ct.kernel
def range_stop_tile(x, out):
    for i in range(0, ct.load(x, (0,), (4,))):
        pass


@ct.kernel
def range_of_array(x, out):
    for i in range(x):
        pass


@ct.kernel
def range_of_none(x, out):
    for i in range(None):
        pass


@ct.kernel
def range_of_string(x, out):
    for i in range("8"):
        pass


@ct.kernel
def range_float_step(x, out):
    for i in range(0, 8, 2.0):
        pass


@ct.kernel
def range_float_scalar(x, out):
    for i in range(ct.sum(ct.load(x, (0,), (4,)))):
        pass


@ct.kernel
def range_zero_step(x, out):
    for i in range(0, 8, 0):
        pass


@ct.kernel
def range_four_arguments(x, out):
    for i in range(0, 8, 1, 1):
        pass


case("range-of-tile-loop", range_of_tile, F32, TYPE_ERROR,
     RANGE.format(1) + r"Tile\[float32,\(4,\)\]", "range(ct.load(x")
case("range-of-float", range_of_float, F32, TYPE_ERROR,
     RANGE.format(1) + r"Tile\[float32,\(\)\]", "range(2.5)")
case("range-stop-tile", range_stop_tile, F32, TYPE_ERROR,
     RANGE.format(2) + r"Tile\[float32,\(4,\)\]", "range(0, ct.load")
case("range-of-array", range_of_array, F32, TYPE_ERROR, RANGE.format(1) + r"Array\[float32",
     "range(x)")
case("range-of-none", range_of_none, F32, TYPE_ERROR, RANGE.format(1) + "None", "range(None)")
case("range-of-string", range_of_string, F32, TYPE_ERROR, RANGE.format(1) + "str",
     'range("8")')
case("range-float-step", range_float_step, F32, TYPE_ERROR,
     RANGE.format(3) + r"Tile\[float32,\(\)\]", "range(0, 8, 2.0)")
case("range-of-float-scalar", range_float_scalar, F32, TYPE_ERROR,
     RANGE.format(1) + r"Tile\[float32,\(\)\]", "range(ct.sum(")
case("range-zero-step", range_zero_step, F32, TYPE_ERROR,
     r"Step must be positive, got 0", "range(0, 8, 0)")
case("range-four-arguments", range_four_arguments, F32, TYPE_ERROR,
     r"Invalid number of arguments: 4: range\(\) takes 1 to 3",
     "range(0, 8, 1, 1)")


# -- what the interpreter ran and the compiler refused -----------------------------------------
@ct.kernel
def return_tile(x, out):
    return ct.load(x, (0,), (4,))


@ct.kernel
def return_one(x, out):
    return 1


@ct.kernel
def return_tuple(x, out):
    return (1, 2)


@ct.kernel
def return_array(x, out):
    return x


@ct.kernel
def return_on_a_branch(x, out):
    if ct.bid(0) == 0:
        return 1.5
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


RETURN = r"Tile kernels cannot return values"
case("return-tile", return_tile, F32, ct.TileSyntaxError, RETURN, "return ct.load(x")
case("return-one", return_one, F32, ct.TileSyntaxError, RETURN, "return 1")
case("return-tuple", return_tuple, F32, ct.TileSyntaxError, RETURN, "return (1, 2)")
case("return-array", return_array, F32, ct.TileSyntaxError, RETURN, "return x")
case("return-on-a-branch", return_on_a_branch, F32, ct.TileSyntaxError, RETURN, "return 1.5")


# module globals tile code would change (or read as a mutable container)
@ct.kernel
def append_to_global(x, out):
    G.append(1)


@ct.kernel
def store_into_global(x, out):
    G[0] = 1


@ct.kernel
def read_global_list(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + G[0])


@ct.kernel
def read_global_dict(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + D["a"])


@ct.kernel
def store_into_global_dict(x, out):
    D["b"] = 2


@ct.kernel
def add_to_global_set(x, out):
    S.add(3)


@ct.kernel
def length_of_global_list(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + len(G))


@ct.kernel
def list_in_global_tuple(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + NESTED[0])


def set_global():
    global G
    G = 5


def extend_global():
    G.extend((4, 5))


def outer_counter():
    count = 0

    def bump():
        nonlocal count
        count += 1
    return bump


@ct.kernel
def global_in_helper(x, out):
    set_global()


@ct.kernel
def global_mutated_in_helper(x, out):
    extend_global()


GLOBALS = r"Cannot create constant from value of type {}\."
case("global-append", append_to_global, F32, TYPE_ERROR, GLOBALS.format("list"), "G.append(1)")
case("global-setitem", store_into_global, F32, TYPE_ERROR, GLOBALS.format("list"), "G[0] = 1")
case("global-list-read", read_global_list, F32, TYPE_ERROR, GLOBALS.format("list"), "+ G[0]")
case("global-dict-read", read_global_dict, F32, TYPE_ERROR, GLOBALS.format("dict"),
     '+ D["a"]')
case("global-dict-setitem", store_into_global_dict, F32, TYPE_ERROR, GLOBALS.format("dict"),
     'D["b"] = 2')
case("global-set-add", add_to_global_set, F32, TYPE_ERROR, GLOBALS.format("set"), "S.add(3)")
case("global-list-len", length_of_global_list, F32, TYPE_ERROR, GLOBALS.format("list"),
     "len(G)")
case("global-tuple-holding-list", list_in_global_tuple, F32, TYPE_ERROR,
     GLOBALS.format("list"), "NESTED[0]")
case("global-statement-in-helper", global_in_helper, F32, ct.TileSyntaxError,
     r"global is not supported in tile code", "global G")
case("global-extended-in-helper", global_mutated_in_helper, F32, TYPE_ERROR,
     GLOBALS.format("list"), "G.extend((4, 5))")


def make_captured_list_kernel():
    captured = [1.0]
    return statement_kernel(
        lambda x, out: captured.append(2.0))


case("captured-list-append", make_captured_list_kernel(), F32, TYPE_ERROR,
     GLOBALS.format("list"), "captured.append(2.0)")


# statements of Python that tile code does not have, in kernels and in helpers
@ct.kernel
def class_in_kernel(x, out):
    class A: pass  # noqa: E701


def helper_with_class():
    class B:
        pass


@ct.kernel
def class_in_helper(x, out):
    helper_with_class()


def generator():
    yield 1


def delegating_generator():
    yield from (1, 2)


@ct.kernel
def generator_helper(x, out):
    generator()


@ct.kernel
def yield_from_helper(x, out):
    delegating_generator()


def helper_with_del(t):
    del t


@ct.kernel
def del_in_helper(x, out):
    helper_with_del(ct.load(x, (0,), (4,)))


def helper_with_import():
    import math  # noqa: F401


@ct.kernel
def import_in_helper(x, out):
    helper_with_import()


def helper_with_list(t):
    return [t, t]


@ct.kernel
def list_in_helper(x, out):
    helper_with_list(ct.load(x, (0,), (4,)))


def helper_with_dict(t):
    return {"t": t}


@ct.kernel
def dict_in_helper(x, out):
    helper_with_dict(ct.load(x, (0,), (4,)))


def helper_with_walrus(t):
    return (u := t) + u


@ct.kernel
def walrus_in_helper(x, out):
    helper_with_walrus(ct.load(x, (0,), (4,)))


def helper_with_try(t):
    try:
        return t
    except ValueError:
        return t


@ct.kernel
def try_in_helper(x, out):
    helper_with_try(ct.load(x, (0,), (4,)))


def helper_with_nonlocal():
    return outer_counter()()


@ct.kernel
def nonlocal_in_helper(x, out):
    helper_with_nonlocal()


SYNTAX = ct.TileSyntaxError
case("class-in-kernel", class_in_kernel, F32, SYNTAX,
     r"class definitions are not supported in tile code", "class A")
case("class-in-helper", class_in_helper, F32, SYNTAX,
     r"class definitions are not supported in tile code", "class B")
case("generator-helper", generator_helper, F32, SYNTAX,
     r"A helper of tile code cannot be a generator \(yield\)", "yield 1")
case("yield-from-helper", yield_from_helper, F32, SYNTAX,
     r"cannot be a generator \(yield\)", "yield from (1, 2)")
case("generator-lambda", statement_kernel(
    lambda x, out: (yield)),
    F32, SYNTAX, r"cannot be a generator \(yield\)", "lambda x, out: (yield)")
case("del-in-helper", del_in_helper, F32, SYNTAX, r"del is not supported", "del t")
case("import-in-helper", import_in_helper, F32, SYNTAX, r"import is not supported",
     "import math")
case("list-in-helper", list_in_helper, F32, SYNTAX, r"list literals are not supported",
     "return [t, t]")
case("dict-in-helper", dict_in_helper, F32, SYNTAX, r"dict literals are not supported",
     'return {"t": t}')
case("walrus-in-helper", walrus_in_helper, F32, SYNTAX, r"assignment expressions",
     "(u := t)")
case("try-in-helper", try_in_helper, F32, SYNTAX, r"try/except is not supported", "try:")
case("nonlocal-in-helper-closure", nonlocal_in_helper, F32, SYNTAX,
     r"nonlocal is not supported", "nonlocal count")
case("list-in-lambda", statement_kernel(
    lambda x, out: [load(x), load(x)]),
    F32, SYNTAX, r"list literals are not supported", "lambda x, out: [load(x), load(x)]")
case("set-in-lambda", statement_kernel(
    lambda x, out: {1, 2}),
    F32, SYNTAX, r"set literals are not supported", "lambda x, out: {1, 2}")
case("walrus-in-lambda", statement_kernel(
    lambda x, out: (y := load(x))),  # noqa: F841
    F32, SYNTAX, r"assignment expressions", "lambda x, out: (y := load(x))")


# containers made by calling their builtins
case("dict-call", statement_kernel(
    lambda x, out: dict(a=1)),
    F32, TYPE_ERROR, r"dict\(\) is not supported in device code", "lambda x, out: dict(a=1)")
case("list-call", statement_kernel(
    lambda x, out: list((1, 2))),
    F32, TYPE_ERROR, r"list\(\) is not supported in device code", "lambda x, out: list((1, 2))")
case("set-call", statement_kernel(
    lambda x, out: set((1, 2))),
    F32, TYPE_ERROR, r"set\(\) is not supported in device code", "lambda x, out: set((1, 2))")
case("frozenset-call", statement_kernel(
    lambda x, out: frozenset((1, 2))),
    F32, TYPE_ERROR, r"frozenset\(\) is not supported", "lambda x, out: frozenset((1, 2))")
case("load-double-star-dict-call", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), **dict(shape=(4,))))),
    F32, TYPE_ERROR, r"dict\(\) is not supported in device code", "**dict(shape=(4,))")
case("load-double-star-dict-literal", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), **{"shape": (4,)}))),
    F32, SYNTAX, r"dict literals are not supported", '**{"shape": (4,)}')


@ct.kernel
def double_star_dict_call_in_kernel(x, out):
    ct.store(out, (0,), ct.load(x, (0,), **dict(shape=(4,))))


case("kernel-double-star-dict-call", double_star_dict_call_in_kernel, F32, TYPE_ERROR,
     r"dict\(\) is not supported in device code", "**dict(shape=(4,))")

# printing an array
PRINT = r"Cannot print Array\[float32,\(\?,\):\(\?,\)\] from tile code; print a tile loaded"
case("print-array", statement_kernel(
    lambda x, out: print(x)),
    F32, TYPE_ERROR, PRINT, "lambda x, out: print(x)")
case("print-tile-and-array", statement_kernel(
    lambda x, out: print(load(x), x)),
    F32, TYPE_ERROR, PRINT, "print(load(x), x)")
case("print-array-in-tuple", statement_kernel(
    lambda x, out: print((1, x))),
    F32, TYPE_ERROR, PRINT, "print((1, x))")
case("ct-print-array", statement_kernel(
    lambda x, out: ct.print("x =", x)),
    F32, TYPE_ERROR, PRINT, 'ct.print("x =", x)')

# string formatting with %
FORMAT = r"Expected a tile or a scalar for the left operand, got str "
case("percent-format-tile", statement_kernel(
    lambda x, out: print("%s" % load(x))),
    F32, TYPE_ERROR, FORMAT + "'%s'", '"%s" % load(x)')
case("percent-format-two-tiles", statement_kernel(
    lambda x, out: print("%s %s" % (load(x), load(x)))),
    F32, TYPE_ERROR, FORMAT + "'%s %s'", '"%s %s" % (load(x), load(x))')


@ct.kernel
def percent_format_in_kernel(x, out):
    text = "%d"
    print(text % ct.bid(0))


case("percent-format-run-time-scalar", percent_format_in_kernel, F32, TYPE_ERROR,
     FORMAT + "'%d'", "text % ct.bid(0)")

# ct.assert_ of what is no tile, with a message that is no string
ASSERT_MESSAGE = r'Invalid argument "message" of assert_\(\): Expected a constant string, '
case("assert-message-int", statement_kernel(
    lambda x, out: ct.assert_(load(x) > 0, message=5)),
    F32, TYPE_ERROR, ASSERT_MESSAGE + r"but given value has type Tile\[int32,\(\)\]",
    "message=5")
case("assert-message-float", statement_kernel(
    lambda x, out: ct.assert_(load(x) > 0, 1.5)),
    F32, TYPE_ERROR, ASSERT_MESSAGE + r"but given value has type Tile\[float32,\(\)\]",
    "ct.assert_(load(x) > 0, 1.5)")
case("assert-message-tile", statement_kernel(
    lambda x, out: ct.assert_(load(x) > 0, load(x))),
    F32, TYPE_ERROR, ASSERT_MESSAGE + r"but given value has type Tile\[float32,\(4,\)\]",
    "ct.assert_(load(x) > 0, load(x))")
case("assert-condition-array", statement_kernel(
    lambda x, out: ct.assert_(x)),
    F32, TYPE_ERROR, r"Invalid argument #1 of assert_\(\): " + NOT_A_TILE + r"Array",
    "ct.assert_(x)")
case("assert-condition-none", statement_kernel(
    lambda x, out: ct.assert_(None, "no")),
    F32, TYPE_ERROR, r"Invalid argument #1 of assert_\(\): " + NOT_A_TILE + "None",
    'ct.assert_(None, "no")')
case("assert-condition-string", statement_kernel(
    lambda x, out: ct.assert_("yes")),
    F32, TYPE_ERROR, r"Invalid argument #1 of assert_\(\): " + NOT_A_TILE + "str",
    'ct.assert_("yes")')


# integers no dtype holds, where tile code meets them
WIDE = r"Integer constant {} is out of range of any supported integer type"


@ct.kernel
def huge_constant(x, out, n: ct.Constant[int]):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + n)


@ct.kernel
def huge_literal(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) * 2**100)


@ct.kernel
def huge_negative_literal(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) - (-2**63 - 1))


@ct.kernel
def huge_fill(x, out):
    ct.store(out, (0,), ct.full((4,), 2**70, ct.float32))


case("constant-int-2-pow-100", huge_constant, F32 + (2**100,), ct.TileValueError,
     WIDE.format(2**100), "ct.load(x, (0,), (4,)) + n")
case("constant-int-2-pow-100-int-tile", huge_constant, I32 + (2**100,), ct.TileValueError,
     WIDE.format(2**100), "ct.load(x, (0,), (4,)) + n")
case("literal-2-pow-100", huge_literal, F32, ct.TileValueError, WIDE.format(2**100),
     "* 2**100")
case("literal-below-int64", huge_negative_literal, I32, ct.TileValueError,
     WIDE.format(-2**63 - 1), "(-2**63 - 1)")
case("full-of-2-pow-70", huge_fill, F32, ct.TileValueError, WIDE.format(2**70),
     "ct.full((4,), 2**70")

# kernel arguments of no run-time form
ARGUMENT = r"Argument '{}' of type {} is not supported: pass arrays, bool, int, float, dtypes"


@ct.kernel
def scalar_parameter(x, out, n):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + n)


case("scalar-argument-none", scalar_parameter, F32 + (None,), TypeError,
     ARGUMENT.format("n", "NoneType"), None)
case("scalar-argument-string", scalar_parameter, F32 + ("abc",), TypeError,
     ARGUMENT.format("n", "str"), None)
case("array-argument-none", scalar_parameter, (None, F32[1], 1), TypeError,
     ARGUMENT.format("x", "NoneType"), None)
case("tuple-argument-holding-none", scalar_parameter, F32 + ((1, None),), TypeError,
     r"Argument 'n\[1\]' of type NoneType is not supported", None)

# -- what the compiler compiled and the interpreter refused ------------------------------------


@ct.kernel
def raise_value_error(x, out):
    raise ValueError


@ct.kernel
def raise_with_message(x, out):
    if ct.bid(0) > 4:
        raise ValueError("too many blocks")


def raising_helper(t):
    raise RuntimeError("no")


@ct.kernel
def raise_in_helper(x, out):
    raising_helper(ct.load(x, (0,), (4,)))


RAISE = r"^Raised exception must be wrapped in static_exception\(\)"
case("raise-value-error", raise_value_error, F32, SYNTAX, RAISE, "raise ValueError")
case("raise-on-a-branch", raise_with_message, F32, SYNTAX, RAISE, 'raise ValueError("too')
case("raise-in-helper", raise_in_helper, F32, SYNTAX, RAISE, 'raise RuntimeError("no")')

# memory orders a load or a store does not take
LOAD_ORDER = (r"Invalid memory order for tile_load. Got MemoryOrder.{}, expected one of "
              r"MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.WEAK")
STORE_ORDER = (r"Invalid memory order for tile_store. Got MemoryOrder.{}, expected one of "
               r"MemoryOrder.RELAXED, MemoryOrder.RELEASE, MemoryOrder.WEAK")
case("load-memory-order-release", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), memory_order=ORDER.RELEASE))),
    F32, TYPE_ERROR, LOAD_ORDER.format("RELEASE"), "memory_order=ORDER.RELEASE")
case("load-memory-order-acq-rel", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), memory_order=ORDER.ACQ_REL))),
    F32, TYPE_ERROR, LOAD_ORDER.format("ACQ_REL"), "memory_order=ORDER.ACQ_REL")
case("store-memory-order-acquire", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x), memory_order=ORDER.ACQUIRE)),
    F32, TYPE_ERROR, STORE_ORDER.format("ACQUIRE"), "memory_order=ORDER.ACQUIRE")
case("store-memory-order-acq-rel", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x), memory_order=ORDER.ACQ_REL)),
    F32, TYPE_ERROR, STORE_ORDER.format("ACQ_REL"), "memory_order=ORDER.ACQ_REL")
case("load-memory-order-string", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), memory_order="weak"))),
    F32, TYPE_ERROR, r"memory_order of load\(\) must be a ct.MemoryOrder constant, got str",
    'memory_order="weak"')
case("store-memory-scope-string", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x), memory_scope="device")),
    F32, TYPE_ERROR, r"memory_scope of store\(\) must be a ct.MemoryScope constant, got str",
    'memory_scope="device"')
case("load-memory-scope-order", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), memory_scope=ORDER.WEAK))),
    F32, TYPE_ERROR, r"memory_scope of load\(\) must be a ct.MemoryScope constant",
    "memory_scope=ORDER.WEAK")

# indexing a tile with what is neither ':', None nor '...'
INDEX = r"Directly indexing a tile is not supported; use `extract\(\)` or `item\(\)` instead. " \
    r"Tiles can only be indexed with ':', None and '...' \(to add axes\), got {}; use " \
    r"ct.extract for sub-tiles"
case("slice-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[1:3])),
    F32, TYPE_ERROR, INDEX.format("the slice 1:3"), "load(x)[1:3]")
case("slice-tile-step", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[::2])),
    F32, TYPE_ERROR, INDEX.format("the slice ::2"), "load(x)[::2]")
case("slice-tile-stop", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[:2])),
    F32, TYPE_ERROR, INDEX.format("the slice :2"), "load(x)[:2]")
case("slice-tile-start", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[1:])),
    F32, TYPE_ERROR, INDEX.format("the slice 1:"), "load(x)[1:]")
case("slice-tile-after-ellipsis", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[..., 1:3])),
    F32, TYPE_ERROR, INDEX.format("the slice 1:3"), "load(x)[..., 1:3]")
case("slice-tile-after-none", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[None, 0:2])),
    F32, TYPE_ERROR, INDEX.format("the slice 0:2"), "load(x)[None, 0:2]")
case("index-tile-with-int", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[0])),
    F32, TYPE_ERROR, INDEX.format("constant 0"), "load(x)[0]")
case("index-tile-with-run-time-scalar", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[ct.bid(0)])),
    F32, TYPE_ERROR, INDEX.format("run-time int32 scalar"), "load(x)[ct.bid(0)]")
case("too-many-colons", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x)[:, :])),
    F32, TYPE_ERROR, r"Tile is 1-dimensional, but 2 were indexed", "load(x)[:, :]")


@ct.kernel
def slice_in_kernel(x, out):
    t = ct.load(x, (0,), (4,))
    ct.store(out, (0,), t[1:3])


@ct.kernel
def slice_run_time_bounds(x, out):
    t = ct.load(x, (0,), (4,))
    ct.store(out, (0,), t[ct.bid(0):2])


case("slice-tile-in-kernel", slice_in_kernel, F32, TYPE_ERROR, INDEX.format("the slice 1:3"),
     "t[1:3]")
case("slice-tile-run-time-bounds", slice_run_time_bounds, F32, TYPE_ERROR,
     INDEX.format("a slice with run-time bounds"), "t[ct.bid(0):2]")


# kernel parameters a launch cannot pass by position
@ct.kernel
def keyword_only(x, *, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


@ct.kernel
def star_args(x, *rest):
    ct.store(x, (0,), ct.load(x, (0,), (4,)))


@ct.kernel
def star_kwargs(x, out, **options):
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


POSITIONAL = r"A tile kernel's parameters must be positional"
case("keyword-only-parameter", keyword_only, F32, SYNTAX, POSITIONAL,
     "def keyword_only(x, *, out)")
case("star-args-parameter", star_args, F32, SYNTAX, POSITIONAL, "def star_args(x, *rest)")
case("star-kwargs-parameter", star_kwargs, F32, SYNTAX, POSITIONAL,
     "def star_kwargs(x, out, **options)")


# options an op does not take, or takes only as constants of their kind
def unexpected(op, name):
    return rf"Invalid call of {op}\(\): got an unexpected keyword argument '{name}'"


case("max-rounding-mode", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.max(load(x), rounding_mode=RZ))),
    F32, TYPE_ERROR, unexpected("max", "rounding_mode"), "ct.max(load(x), rounding_mode=RZ)")
case("argmax-flush-to-zero", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.argmax(load(x), flush_to_zero=True))),
    F32, TYPE_ERROR, unexpected("argmax", "flush_to_zero"), "flush_to_zero=True")
case("exp2-rounding-mode", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.exp2(load(x), rounding_mode=RZ))),
    F32, TYPE_ERROR, unexpected("exp2", "rounding_mode"), "ct.exp2(load(x), rounding_mode=RZ)")
case("exp-flush-to-zero", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.exp(load(x), flush_to_zero=True))),
    F32, TYPE_ERROR, unexpected("exp", "flush_to_zero"), "ct.exp(load(x), flush_to_zero=True)")
case("tanh-flush-to-zero", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.tanh(load(x), flush_to_zero=True))),
    F32, TYPE_ERROR, unexpected("tanh", "flush_to_zero"), "ct.tanh(load(x), flush_to_zero")
case("minimum-rounding-mode", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.minimum(load(x), load(x), rounding_mode=RZ))),
    F32, TYPE_ERROR, unexpected("minimum", "rounding_mode"), "ct.minimum(load(x), load(x)")
case("load-bogus-keyword", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), bogus=1))),
    F32, TYPE_ERROR, unexpected("load", "bogus"), "ct.load(x, (0,), (4,), bogus=1)")
case("sum-rounding-mode-string", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.sum(load(x), rounding_mode="rz"))),
    F32, TYPE_ERROR, r"rounding_mode of sum must be a ct.RoundingMode, got 'rz'",
    'ct.sum(load(x), rounding_mode="rz")')
case("prod-run-time-rounding-mode", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.prod(load(x), rounding_mode=ct.bid(0)))),
    F32, TYPE_ERROR, r"rounding_mode of prod must be a ct.RoundingMode, got run-time int32",
    "ct.prod(load(x), rounding_mode=ct.bid(0))")
case("max-flush-to-zero-int", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.add(load(x), load(x), flush_to_zero=True))),
    I32, TYPE_ERROR, r"Flush to zero can only be used for float32 type, but got int32",
    "ct.add(load(x), load(x), flush_to_zero=True)")

# more of the rules above, met another way
case("print-f-string-of-array", statement_kernel(
    lambda x, out: print(f"{x}")),
    F32, TYPE_ERROR, PRINT, 'print(f"{x}")')
case("tuple-run-time-slice", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) + (1, 2, 3)[ct.bid(0):2][0])),
    F32, TYPE_ERROR, r"Tuple indices must be constant, got a slice with run-time bounds",
    "(1, 2, 3)[ct.bid(0):2][0]")
case("percent-format-constants", statement_kernel(
    lambda x, out: print("%d" % 5)),
    F32, TYPE_ERROR, FORMAT + "'%d'", '"%d" % 5')
case("none-lt-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), None < load(x))),
    F32, TYPE_ERROR, r"for the left operand, got NoneType None", "None < load(x)")
case("array-eq-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), x == load(x))),
    F32, TYPE_ERROR, r"Operator '==' is not supported on an Array: it is memory", "x == load(x)")
case("tile-plus-array", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) + x)),
    F32, TYPE_ERROR, r"for the right operand, got 1-d float32 array", "load(x) + x")


# an array where other ops take a tile
case("exp-of-array", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.exp(x))),
    F32, TYPE_ERROR, r"Expected a tile or a scalar for operand, got 1-d float32 array",
    "ct.exp(x)")
case("sqrt-of-none", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.sqrt(None))),
    F32, TYPE_ERROR, r"Expected a tile or a scalar for operand, got NoneType None",
    "ct.sqrt(None)")
case("maximum-with-array", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.maximum(load(x), x))),
    F32, TYPE_ERROR, r"for the right operand, got 1-d float32 array", "ct.maximum(load(x), x)")
case("matmul-string", statement_kernel(
    lambda x, out: ct.matmul(load(x), "a")),
    F32, TYPE_ERROR, r"#2 of matmul\(\): " + NOT_A_TILE + "str", 'ct.matmul(load(x), "a")')
case("matmul-operator-none", statement_kernel(
    lambda x, out: load(x) @ None),
    F32, TYPE_ERROR, r"#2 of matmul\(\): " + NOT_A_TILE + "None", "load(x) @ None")
case("numpy-mean-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.mean(load(x)))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.mean(load(x))")
case("numpy-clip-of-tile", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.clip(load(x), 0, 1))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.clip(load(x), 0, 1)")
case("numpy-negative-of-array", statement_kernel(
    lambda x, out: ct.store(out, (0,), np.negative(x))),
    F32, TYPE_ERROR, NUMPY_MESSAGE, "np.negative(x)")
case("range-of-bool", statement_kernel(
    lambda x, out: ct.store(out, (0,), load(x) + len(range(True)))),
    F32, TYPE_ERROR, RANGE.format(1) + r"Tile\[bool_,\(\)\]", "range(True)")


# the same rules in closures defined in the kernel
@ct.kernel
def closure_slice(x, out):
    t = ct.load(x, (0,), (4,))
    f = lambda u: u[1:3]  # noqa: E731
    ct.store(out, (0,), f(t))


@ct.kernel
def closure_raise(x, out):
    def checked(u):
        if u.ndim > 3:
            raise ValueError("no")
        return u
    ct.store(out, (0,), checked(ct.load(x, (0,), (4,))))


case("closure-slice", closure_slice, F32, TYPE_ERROR, INDEX.format("the slice 1:3"),
     "f = lambda u: u[1:3]")
case("closure-raise", closure_raise, F32, SYNTAX, RAISE, 'raise ValueError("no")')


# -- calls of dtypes and print's separators, alike -------------------------------------------
case("dtype-call-two-arguments", statement_kernel(lambda x, out: ct.int32(1, 2)), F32,
     TYPE_ERROR, r"^int32\(\) takes at most one argument$", "ct.int32(1, 2)")
case("dtype-call-keyword", statement_kernel(lambda x, out: ct.int8(value=1)), F32,
     TYPE_ERROR, r"^int8\(\) takes at most one argument$", "ct.int8(value=1)")
SEPARATOR = r"^print\({}=\.\.\.\) must be a constant string in tile code, got {}$"
case("print-sep-int", statement_kernel(lambda x, out: ct.print(load(x), sep=1)), F32,
     TYPE_ERROR, SEPARATOR.format("sep", "constant 1"), "ct.print(load(x), sep=1)")
case("print-end-none", statement_kernel(lambda x, out: ct.print(load(x), end=None)), F32,
     TYPE_ERROR, SEPARATOR.format("end", "NoneType None"), "ct.print(load(x), end=None)")


@ct.kernel
def print_with_a_tile_separator(x, out):
    print(load(x), sep=load(x))


case("print-sep-tile", print_with_a_tile_separator, F32, TYPE_ERROR,
     SEPARATOR.format("sep", r"float32 tile of shape \(4,\)"), "print(load(x), sep=load(x))")

# -- a tiled view's store given what is no tile ------------------------------------------------
for _name, _value, _described in [("none", None, "NoneType None"), ("string", "a", "str 'a'")]:
    case(f"view-store-{_name}", statement_kernel(
        lambda x, out, value=_value: out.tiled_view((4,)).store((0,), value)), F32, TYPE_ERROR,
        r"^Expected a tile or a scalar, got " + _described + "$", "out.tiled_view((4,))")

@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_fails_alike(case):
    check(case, module_file(__name__))


# -- what both executors take alike -----------------------------------------------------------
@ct.kernel
def wide_integers_fold(x, out, n: ct.Constant[int]):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + 2**200 // 2**198 + n // 2**98)


def test_integers_beyond_64_bits_fold_alike():
    """Loosely typed ints are unbounded while they fold: both executors compute 4 + 4."""
    x, out = arrays(np.float32, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), wide_integers_fold, (x, out, 2**100))
    np.testing.assert_array_equal(out, x + np.float32(4) + np.float32(4))
    ct.compile(wide_integers_fold, (x, out, 2**100), arch="sm_90")
