"""``with`` on ``contextlib.contextmanager`` helpers in tile code, as cuTile runs it: the code
before the ``yield`` on entry, the code after it on leaving by the end of the block,
``break``, ``continue`` or ``return`` (innermost first), closures made in the generator, and
cuTile's rules on the generator (one reachable ``yield``, outside loops and conditionals, no
``return``), alike in both executors. The compiler inlines each block into the source
(:mod:`numba_tile.compiler.frontend.with_blocks`); that rewrite, run as Python, must
compute what Python's own ``with`` computes."""

import ast
import contextlib
import dataclasses
import inspect
import re
import textwrap

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.compiler.frontend.with_blocks import WithBlocks


def _append(x, value):
    i = ct.gather(x, 0) + 1
    ct.scatter(x, 0, i)
    ct.scatter(x, i, value)


@contextlib.contextmanager
def _logged(x, start, end):
    _append(x, start)
    yield start
    _append(x, end)


@contextlib.contextmanager
def _nested(x, a, b, c, d, e, f):
    _append(x, a)
    with _logged(x, b, e) as inner:
        _append(x, c)
        yield inner + 1
        _append(x, d)
    _append(x, f)


@contextlib.contextmanager
def _closure(x, a, b, c):
    def record():
        _append(x, a)
    _append(x, b)
    yield record
    a += 1  # the closure reads a when called
    _append(x, c)
    while True:
        break
        yield  # dead code: no second yield


def _with_in_helper(x, early):
    with _closure(x, 10, 20, 30) as record:
        record()
        if early:
            return record
    return record


@ct.kernel
def blocks(x, y, early: ct.Constant[bool]):
    with _logged(x, 1, 2) as v:
        ct.static_assert(v == 1)
        with _nested(x, 3, 4, 5, 6, 7, 8) as w:
            ct.static_assert(w == 5)
            _append(x, 9)
    i = 0
    while True:
        with _logged(x, 100 + i, 200 + i):
            with _logged(x, 300 + i, 400 + i):
                i += 1
                if i == 1:
                    continue
                if i == 2:
                    break
    record = _with_in_helper(y, early)
    record()


def _cleanup_on_return(x):
    with _logged(x, 1, 2):
        j = 0
        while j < 2:
            with _logged(x, 3 + j, 5 + j):
                if j == 1:
                    return j
                _append(x, 10)
            j += 1
    return 99


@ct.kernel
def returns_inside(x, out):
    ct.scatter(out, 0, _cleanup_on_return(x))
    with _logged(out, 1, 2):
        j = 0
        while True:
            with _logged(out, 3 + j, 5 + j):
                if j == 1:
                    return
            j += 1


def test_blocks_run_the_generator_around_the_body(run_kernel):
    x, y = np.zeros(24, np.int32), np.zeros(8, np.int32)
    run_kernel(blocks, (1,), (x, y, True))
    np.testing.assert_array_equal(x, [17, 1, 3, 4, 5, 9, 6, 7, 8, 2, 100, 300, 400, 200,
                                      101, 301, 401, 201, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(y, [4, 20, 10, 30, 11, 0, 0, 0])


BASE = 7_000_000  # distinctive constants: never a line number or a register in the PTX


def _closure_of_a_helper(x, early):
    with _closure(x, BASE + 10, BASE + 20, BASE + 30) as record:
        record()
        if early:
            return record
    return record


@ct.kernel
def closure_out_of_a_helper(x, early):
    record = _closure_of_a_helper(x, early)  # returned on either path (a run-time branch)
    record()  # after the generator's a += 1


@pytest.mark.parametrize("early", [False, True])
def test_a_closure_yielded_reads_its_variables_when_called(run_kernel, early):
    x = np.zeros(6, np.int32)
    run_kernel(closure_out_of_a_helper, (1,), (x, early))
    np.testing.assert_array_equal(x, [4, BASE + 20, BASE + 10, BASE + 30, BASE + 11, 0])


def test_the_compiled_closure_reads_them_when_called():
    # compile mode runs nothing: the PTX holds the values the closure reads, folded
    ptx = ct.compile(closure_out_of_a_helper, (np.zeros(6, np.int32), True)).ptx
    assert {int(v) for v in re.findall(r"\b\d+\b", ptx) if BASE <= int(v) < BASE + 100} \
        == {BASE + 10, BASE + 11, BASE + 20, BASE + 30}


def test_return_runs_the_cleanups_innermost_first(run_kernel):
    x, out = np.zeros(10, np.int32), np.zeros(10, np.int32)
    run_kernel(returns_inside, (1,), (x, out))
    np.testing.assert_array_equal(x, [7, 1, 3, 10, 5, 4, 6, 2, 0, 0])
    np.testing.assert_array_equal(out, [7, 0, 1, 3, 5, 4, 6, 2, 0, 0])


def _rewritten(kernel):
    """The kernel with its with blocks inlined by the compiler's rewrite, as a new kernel
    (made from text: the interpreter runs it as it is)."""
    fn = kernel.fn
    injected = {}
    lines, _ = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    function = tree.body[0]
    function.decorator_list = []
    assert WithBlocks(fn, injected, []).rewrite_function(function)
    assert not any(isinstance(node, ast.With) for node in ast.walk(function))
    namespace = dict(fn.__globals__, **injected)
    exec(compile(ast.fix_missing_locations(tree), "<rewritten>", "exec"), namespace)
    return ct.kernel(namespace[fn.__name__])


@pytest.mark.parametrize("kernel,args", [
    (blocks, lambda: (np.zeros(24, np.int32), np.zeros(8, np.int32), True)),
    (blocks, lambda: (np.zeros(24, np.int32), np.zeros(8, np.int32), False)),
    (returns_inside, lambda: (np.zeros(10, np.int32), np.zeros(10, np.int32)))])
def test_the_compiler_rewrite_computes_what_python_does(kernel, args):
    expected, got = args(), args()
    with ct.interpret():
        ct.launch(0, (1,), kernel, expected)
        ct.launch(0, (1,), _rewritten(kernel), got)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)


@dataclasses.dataclass(frozen=True)
class _Log:
    x: ct.Array

    @contextlib.contextmanager
    def entered(self, start, end):
        _append(self.x, start)
        yield start + 1
        _append(self.x, end)


@ct.kernel
def method_of_an_instance(x):
    log = _Log(x)
    with log.entered(1, 2) as v:
        _append(x, v)


def test_a_context_manager_method_of_an_instance(run_kernel):
    x = np.zeros(5, np.int32)
    run_kernel(method_of_an_instance, (1,), (x,))
    np.testing.assert_array_equal(x, [3, 1, 2, 2, 0])


@contextlib.contextmanager
def _two_yields(x):
    yield
    yield


@contextlib.contextmanager
def _no_live_yield(x):
    while True:
        break
        yield


@contextlib.contextmanager
def _yield_in_if(x, flag):
    if flag:
        yield


@contextlib.contextmanager
def _returns(x):
    if ct.bid(0) == 1:
        return
    yield


def _helper_entering(x):
    with _two_yields(x):
        pass


@contextlib.contextmanager
def _yield_in_a_foreign_block(x):
    with ct.interpret():  # the yield sits in a block that tile code refuses
        yield


@ct.kernel
def enters(x, which: ct.Constant[int]):
    if which == 0:
        with _two_yields(x):
            pass
    elif which == 1:
        with _no_live_yield(x):
            pass
    elif which == 2:
        with _yield_in_if(x, True):
            pass
    elif which == 3:
        with _returns(x):
            pass
    elif which == 4:
        with ct.interpret():  # not a generator of the user's code
            pass
    elif which == 5:
        _helper_entering(x)
    else:
        with _yield_in_a_foreign_block(x):
            pass


@pytest.mark.parametrize("which,error,match", [
    (0, ct.TileTypeError, "must have one `yield` statement"),
    (1, ct.TileTypeError, "no reachable `yield` statement"),
    (2, ct.TileTypeError, "outside of loops and conditional"),
    (3, ct.TileSyntaxError, "Returning from a generator-based context manager"),
    (4, ct.TileTypeError, "needs a generator-based context manager"),
    (5, ct.TileTypeError, "must have one `yield` statement"),
    (6, ct.TileTypeError, "needs a generator-based context manager")])
def test_the_generator_rules(run_kernel, which, error, match):
    with pytest.raises(error, match=match):
        run_kernel(enters, (1,), (np.zeros(1, np.int32), which))
