"""Bad inputs on which the two executors used to disagree (issue 52, item 2): one accepted what
the other refused, or both refused with different classes, messages or lines. Each case must
now fail with the same Tile error, message and kernel line in the interpreter and the compiler.
"""

import numpy as np
import pytest

import numba_tile as ct
from bad_inputs import BadInput, arrays, check, module_file, statement_kernel

F32 = arrays(np.float32, np.float32)
I32 = arrays(np.int32, np.int32)
G = [1, 2, 3]
D = {"a": 1}
NP_CONSTANT = np.ones(4, np.float32)


def matrices(dtype=np.float16, n=16):
    """Two fresh ``n`` x ``n`` matrices of ``dtype``."""
    return (np.ones((n, n), dtype), np.zeros((n, n), dtype))


def load(x):
    return ct.load(x, (0,), (4,))


def load2(x):
    return ct.load(x, (0, 0), (16, 16))


CASES = []


def case(name, kernel, args, error, message, line, runs=("interpret", "compile")):
    CASES.append(BadInput(name, kernel, args, error, message, line, runs))


# -- an array where a tile goes ----------------------------------------------------------------
case("astype-of-array", statement_kernel(lambda x, out: ct.astype(x, ct.float16)), F32,
     ct.TileTypeError, r"", "ct.astype(x, ct.float16)")
case("mma-acc-none", statement_kernel(lambda x, out: ct.mma(load2(x), load2(x), None)),
     matrices(), ct.TileTypeError, r"", "load2(x), None)")
case("mma-acc-float", statement_kernel(lambda x, out: ct.mma(load2(x), load2(x), 0.0)),
     matrices(), ct.TileTypeError, r"", "load2(x), 0.0)")
case("mma-array-operand", statement_kernel(lambda x, out: ct.mma(x, load2(x), load2(out))),
     matrices(), ct.TileTypeError, r"", "ct.mma(x, load2(x)")
case("matmul-array-operand", statement_kernel(lambda x, out: ct.matmul(load2(x), out)),
     matrices(), ct.TileTypeError, r"", "ct.matmul(load2(x), out)")
case("tile-eq-none", statement_kernel(lambda x, out: ct.store(out, (0,), load(x) == None)),  # noqa: E711
     F32, ct.TileTypeError, r"", "load(x) == None")
case("tile-plus-numpy-array", statement_kernel(lambda x, out: ct.store(out, (0,), load(x) + NP_CONSTANT)),
     F32, ct.TileTypeError, r"", "load(x) + NP_CONSTANT")
case("numpy-exp-of-tile", statement_kernel(lambda x, out: ct.store(out, (0,), np.exp(load(x)))),
     F32, ct.TileTypeError, r"", "np.exp(load(x))")
case("range-of-tile", statement_kernel(lambda x, out: [0 for i in range(load(x))]),
     F32, ct.TileTypeError, r"", "range(load(x))")


# -- what the interpreter accepted and the compiler refused ------------------------------------
@ct.kernel
def return_tile(x, out):
    return ct.load(x, (0,), (4,))


@ct.kernel
def return_one(x, out):
    return 1


case("return-tile", return_tile, F32, ct.TileSyntaxError,
     r"must not return a value", "return ct.load(x")
case("return-one", return_one, F32, ct.TileSyntaxError,
     r"must not return a value", "return 1")


@ct.kernel
def append_to_global(x, out):
    G.append(1)


@ct.kernel
def store_into_global(x, out):
    G[0] = 1


def set_global():
    global G
    G = 5


@ct.kernel
def global_in_helper(x, out):
    set_global()


@ct.kernel
def class_in_kernel(x, out):
    class A: pass  # noqa: E701


def generator():
    yield 1


@ct.kernel
def generator_helper(x, out):
    generator()


case("global-append", append_to_global, F32, ct.TileTypeError, r"", "G.append(1)")
case("global-setitem", store_into_global, F32, ct.TileTypeError, r"", "G[0] = 1")
case("global-statement-in-helper", global_in_helper, F32, ct.TileSyntaxError, r"", "global G")
case("class-in-kernel", class_in_kernel, F32, ct.TileSyntaxError, r"", "class A")
case("generator-helper", generator_helper, F32, ct.TileSyntaxError, r"", "yield 1")
case("print-array", statement_kernel(lambda x, out: print(x)), F32, ct.TileTypeError, r"",
     "print(x)")
case("percent-format-tile", statement_kernel(lambda x, out: print("%s" % load(x))), F32,
     ct.TileTypeError, r"", '"%s" % load(x)')
case("assert-message-int", statement_kernel(lambda x, out: ct.assert_(load(x) > 0, message=5)),
     F32, ct.TileTypeError, r"", "message=5")
case("sum-rounding-mode", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.sum(load(x), rounding_mode=ct.RoundingMode.RZ))),
     F32, ct.TileTypeError, r"", "ct.sum(load(x), rounding_mode")


@ct.kernel
def huge_loose_int(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + 2**200 // 2**198)


class HugeConstant:
    pass


@ct.kernel
def huge_constant(x, out, n: ct.Constant[int]):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + n)


case("constant-int-2-pow-100", huge_constant, F32 + (2**100,), ct.TileValueError, r"", None)
case("scalar-argument-none", statement_kernel(lambda x, out: ct.store(out, (0,), load(x))),
     F32[:1] + (None,), TypeError, r"", None)
case("load-double-star-kwargs", statement_kernel(
    lambda x, out: ct.store(out, (0,), ct.load(x, (0,), **dict(shape=(4,))))), F32,
     ct.TileSyntaxError, r"", "**dict(shape=(4,))")


# -- what the compiler accepted and the interpreter refused ------------------------------------
@ct.kernel
def raise_value_error(x, out):
    raise ValueError


@ct.kernel
def keyword_only(x, *, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


case("raise-value-error", raise_value_error, F32, ct.TileSyntaxError, r"", "raise ValueError")
case("load-memory-order-release", statement_kernel(lambda x, out: ct.store(out, (0,), ct.load(
    x, (0,), (4,), memory_order=ct.MemoryOrder.RELEASE))), F32, ct.TileValueError, r"",
     "memory_order=ct.MemoryOrder.RELEASE")
case("slice-tile", statement_kernel(lambda x, out: ct.store(out, (0,), load(x)[1:3])), F32,
     ct.TileTypeError, r"", "load(x)[1:3]")
case("keyword-only-parameter", keyword_only, F32, ct.TileSyntaxError, r"must be positional",
     "def keyword_only(x, *, out)")


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_fails_alike(case):
    check(case, module_file(__name__))
