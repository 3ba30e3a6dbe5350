"""A catalogue of bad kernels and bad calls: each fails the same way in both executors, with a
Tile error (a plain ``TypeError``/``ValueError`` for bad host arguments) that names the
kernel line, never an internal exception (AssertionError, Numba's TypingError, KeyError...).

Each case runs in the interpreter (``ct.launch`` inside ``ct.interpret()``) and in the
compiler (``ct.compile`` for sm_90); no GPU is needed.
"""

import operator

import numpy as np
import pytest

import numba_tile as ct

HOST_ERRORS = (TypeError, ValueError)


# -- kernel factories (module-level code, so every kernel has its source) -----------------------
def binary_kernel(op):
    @ct.kernel
    def kernel(x, y, out):
        a = ct.load(x, (0,), (4,))
        b = ct.load(y, (0,), (4,))
        ct.store(out, (0,), op(a, b))
    return kernel


def constant_kernel(op, constant):
    @ct.kernel
    def kernel(x, out):
        ct.store(out, (0,), op(ct.load(x, (0,), (4,)), constant))
    return kernel


def shape_kernel(make):
    @ct.kernel
    def kernel(x, out):
        ct.store(out, (0,), make(x))
    return kernel


def reduction_kernel(reduce, axis):
    @ct.kernel
    def kernel(x, out):
        ct.store(out, (0,), reduce(ct.load(x, (0,), (4,)), axis=axis))
    return kernel


def statement_kernel(statement):
    @ct.kernel
    def kernel(x, out):
        statement(x, out)
    return kernel


def arrays(*dtypes, n=4):
    return tuple(np.ones(n, dtype) for dtype in dtypes)


CASES = []


def case(name, kernel, args, error):
    CASES.append(pytest.param(kernel, args, error, id=name))


# a string beside a tile (a TileTypeError in both, not "no implementation")
case("string-right-operand", constant_kernel(operator.add, "a"), arrays(np.float32, np.float32),
     ct.TileTypeError)
case("string-left-operand", constant_kernel(lambda t, c: c * t, "a"),
     arrays(np.float32, np.float32), ct.TileTypeError)

# assume_divisible_by needs a positive integer constant divisor
case("assume-divisible-by-zero", statement_kernel(lambda x, out: ct.assume_divisible_by(
    ct.bid(0), 0)), arrays(np.float32, np.float32), ct.TileValueError)
case("assume-divisible-by-negative", statement_kernel(lambda x, out: ct.assume_divisible_by(
    ct.bid(0), -4)), arrays(np.float32, np.float32), ct.TileValueError)

# implicit promotions the table does not allow
for _x, _y in [(np.uint8, np.int8), (np.uint16, np.int16), (np.uint32, np.int32),
               (np.uint64, np.int64), (np.uint8, np.int32), (np.int8, np.uint16)]:
    for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                       ("maximum", ct.maximum)]:
        case(f"promotion-{_name}-{np.dtype(_x).name}-{np.dtype(_y).name}", binary_kernel(_op),
             arrays(_x, _y, np.int64), ct.TileTypeError)

# bitwise ops on floats
for _dtype in (np.float16, np.float32, np.float64):
    for _name, _op in [("and", operator.and_), ("or", operator.or_), ("xor", operator.xor),
                       ("lshift", operator.lshift), ("rshift", operator.rshift)]:
        case(f"bitwise-{_name}-{np.dtype(_dtype).name}", binary_kernel(_op),
             arrays(_dtype, _dtype, _dtype), ct.TileTypeError)

# constants out of the range of the tile's dtype
for _dtype, _constant in [(np.int8, 300), (np.int8, -170), (np.uint8, 256), (np.uint8, -1),
                          (np.int16, 40000), (np.uint16, -5)]:
    for _name, _op in [("add", operator.add), ("mul", operator.mul)]:
        case(f"constant-{_name}-{np.dtype(_dtype).name}-{_constant}",
             constant_kernel(_op, _constant), arrays(_dtype, _dtype), ct.TileValueError)

# tile shapes: not powers of two (cuTile's TileTypeError), or too large (numba_tile's limit)
for _name, _make, _error in [
        ("load-3", lambda x: ct.load(x, (0,), (3,)), ct.TileTypeError),
        ("load-6", lambda x: ct.load(x, (0,), (6,)), ct.TileTypeError),
        ("load-12", lambda x: ct.load(x, (0,), (12,)), ct.TileTypeError),
        ("full-5", lambda x: ct.full((5,), 1.0, ct.float32), ct.TileTypeError),
        ("zeros-7", lambda x: ct.zeros((7,), ct.float32), ct.TileTypeError),
        ("ones-3x4", lambda x: ct.ones((3, 4), ct.float32), ct.TileTypeError),
        ("arange-10", lambda x: ct.arange(10, dtype=ct.float32), ct.TileTypeError),
        ("reshape-3", lambda x: ct.reshape(ct.load(x, (0,), (4,)), (3,)), ct.TileTypeError),
        ("load-2**20", lambda x: ct.load(x, (0,), (2 ** 20,)), ct.TileValueError),
        ("full-2**10x2**10", lambda x: ct.full((2 ** 10, 2 ** 10), 0.0, ct.float32),
         ct.TileValueError)]:
    case(f"shape-{_name}", shape_kernel(_make), arrays(np.float32, np.float32), _error)

# reduction axes outside the tile (cuTile's "Axis 1 is out of range for rank 1")
for _name, _reduce in [("sum", ct.sum), ("max", ct.max), ("min", ct.min), ("prod", ct.prod),
                       ("argmax", ct.argmax), ("argmin", ct.argmin)]:
    for _axis in (1, -2):
        case(f"axis-{_name}-{_axis}", reduction_kernel(_reduce, _axis),
             arrays(np.float32, np.float32), ct.TileTypeError)

# other ops used wrongly
for _name, _statement, _error in [
        ("where-storage-condition", lambda x, out: ct.store(out, (0,), ct.where(
            ct.load(x, (0,), (4,)).astype(ct.float8_e4m3fn), 1.0, 2.0)), ct.TileTypeError),
        ("static-assert", lambda x, out: ct.static_assert(x.ndim == 2, "need a matrix"),
         ct.TileStaticAssertionError),
        ("ensure-constant", lambda x, out: ct.ensure_constant(ct.bid(0)),
         ct.TileStaticAssertionError),
        ("load-index-rank", lambda x, out: ct.store(out, (0,), ct.load(x, (0, 0), (4,))),
         ct.TileTypeError),
        ("store-rank", lambda x, out: ct.store(out, (0,), ct.zeros((2, 2), ct.float32)),
         ct.TileValueError),
        ("slice-negative-length", lambda x, out: ct.store(x.slice(0, 3, 1), (0,),
                                                          ct.zeros((4,), ct.float32)),
         ct.TileTypeError),
        ("slice-start-before", lambda x, out: ct.store(x.slice(0, -1, 2), (0,),
                                                       ct.zeros((4,), ct.float32)),
         ct.TileTypeError),
        ("extract-outside", lambda x, out: ct.store(out, (0,), ct.extract(
            ct.load(x, (0,), (4,)), (2,), (2,))), ct.TileTypeError),
        ("insert-outside", lambda x, out: ct.store(out, (0,), ct.insert(
            ct.load(x, (0,), (4,)), (-1,), ct.zeros((2,), ct.float32))), ct.TileTypeError),
        ("huge-constant", lambda x, out: ct.store(out, (0,), ct.astype(
            ct.load(x, (0,), (4,)), ct.int32) + 2 ** 70), ct.TileValueError),
        ("float-or", lambda x, out: ct.store(out, (0,), 2.0 | ct.load(x, (0,), (4,))),
         ct.TileTypeError),
        ("gather-float-index", lambda x, out: ct.store(out, (0,), ct.gather(
            x, ct.arange(4, dtype=ct.float32))), ct.TileTypeError),
        ("gather-int-mask", lambda x, out: ct.store(out, (0,), ct.gather(
            x, ct.arange(4, dtype=ct.int32), mask=ct.arange(4, dtype=ct.int32))),
         ct.TileTypeError),
        ("gather-mask-shape", lambda x, out: ct.store(out, (0,), ct.gather(
            x, ct.arange(4, dtype=ct.int32), mask=ct.arange(2, dtype=ct.int32) > 0)),
         ct.TileTypeError),
        ("gather-two-indices", lambda x, out: ct.store(out, (0,), ct.gather(
            x, (ct.arange(4, dtype=ct.int32), ct.arange(4, dtype=ct.int32)))),
         ct.TileTypeError),
        ("scatter-narrowing", lambda x, out: ct.scatter(
            out, ct.arange(4, dtype=ct.int32), ct.zeros((4,), ct.float64)), ct.TileTypeError),
        ("gather-padding-range", lambda x, out: ct.store(out, (0,), ct.gather(
            x, ct.arange(4, dtype=ct.int32), padding_value=1e300)), ct.TileValueError),
        ("pack-bool", lambda x, out: ct.pack_to_bytes(ct.load(x, (0,), (4,)) > 0),
         ct.TileTypeError),
        ("unpack-not-uint8", lambda x, out: ct.unpack_from_bytes(
            ct.load(x, (0,), (4,)), ct.int32), ct.TileTypeError),
        ("unpack-not-divisible", lambda x, out: ct.unpack_from_bytes(
            ct.zeros((2,), ct.uint8), ct.int32), ct.TileTypeError),
        ("unpack-to-bool", lambda x, out: ct.unpack_from_bytes(
            ct.zeros((4,), ct.uint8), ct.bool_), ct.TileTypeError),
        ("cat-shapes", lambda x, out: ct.store(out, (0,), ct.cat(
            (ct.zeros((2,), ct.float32), ct.zeros((4,), ct.float32)), 0)), ct.TileTypeError),
        ("astype-unknown", lambda x, out: ct.astype(ct.load(x, (0,), (4,)), "complex64"),
         ct.TileTypeError),
        # arguments of the wrong kind (cuTile's 'Invalid argument "..." of op()')
        ("load-shape-float", lambda x, out: ct.load(x, (0,), (2.0,)), ct.TileTypeError),
        ("load-shape-negative", lambda x, out: ct.load(x, (0,), (-4,)), ct.TileTypeError),
        ("load-order-letter", lambda x, out: ct.load(x, (0,), (4,), order="A"),
         ct.TileTypeError),
        ("full-dtype-string", lambda x, out: ct.full((4,), 1, "foo"), ct.TileTypeError),
        ("full-string-fill", lambda x, out: ct.full((4,), "foo", ct.int32), ct.TileTypeError),
        ("full-tile-fill", lambda x, out: ct.full((4,), ct.load(x, (0,), (4,)), ct.float32),
         ct.TileTypeError),
        ("permute-array", lambda x, out: ct.permute(x, (0,)), ct.TileTypeError),
        ("sum-array", lambda x, out: ct.sum(x), ct.TileTypeError),
        ("insert-array", lambda x, out: ct.insert(ct.load(x, (0,), (4,)), (0,), x),
         ct.TileTypeError),
        ("bool-add", lambda x, out: ct.full((2,), True, ct.bool_) + ct.full((2,), 1, ct.bool_),
         ct.TileTypeError),
        ("sub-byte-dtype-call", lambda x, out: ct.float4_e2m1fn(2.0), ct.TileTypeError),
        # printf formats and arguments
        ("printf-float-as-int", lambda x, out: ct.printf("%d", ct.load(x, (0,), (4,))),
         ct.TileTypeError),
        ("printf-int-as-float", lambda x, out: ct.printf("%f", 1), ct.TileTypeError),
        ("printf-few-arguments", lambda x, out: ct.printf("%d %d", 1), ct.TileTypeError),
        ("printf-many-arguments", lambda x, out: ct.printf("%d", 1, 2), ct.TileTypeError),
        ("printf-lone-percent", lambda x, out: ct.printf("%!"), ct.TileTypeError),
        ("printf-char", lambda x, out: ct.printf("%c", 1), ct.TileTypeError),
        ("printf-tile-format", lambda x, out: ct.printf(ct.load(x, (0,), (4,))),
         ct.TileTypeError),
        ("format-spec-python-refuses", lambda x, out: ct.print(f"{ct.load(x, (0,), (4,)):d}"),
         ct.TileTypeError)]:
    case(_name, statement_kernel(_statement), arrays(np.float32, np.float32), _error)


@ct.kernel
def identity_of_tiles(x, out):
    tx = ct.load(x, (0,), (4,))
    ty = ct.load(out, (0,), (4,))
    tx is ty


@ct.kernel
def identity_of_scalars(x, out):
    ct.bid(0) is not ct.bid(1)


@ct.kernel
def identity_in_lambda(x, out):
    same = lambda a, b: a is b  # noqa: E731
    same(ct.load(x, (0,), (4,)), ct.load(out, (0,), (4,)))


@ct.kernel
def identity_in_nested_function(x, out):
    def differ(a):
        return a is not ct.bid(0)
    differ(ct.load(x, (0,), (4,)))


# tiles compare by identity only with None (in closures too, their results read or not)
case("is-of-tiles", identity_of_tiles, arrays(np.float32, np.float32), ct.TileTypeError)
case("is-not-of-scalars", identity_of_scalars, arrays(np.float32, np.float32), ct.TileTypeError)
case("is-in-lambda", identity_in_lambda, arrays(np.float32, np.float32), ct.TileTypeError)
case("is-not-in-nested-function", identity_in_nested_function, arrays(np.float32, np.float32),
     ct.TileTypeError)


@ct.kernel
def two_parameters(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


HOST_CASES = [
    pytest.param(lambda run: run(two_parameters, (np.ones(4, np.float32),)), TypeError,
                 id="too-few-arguments"),
    pytest.param(lambda run: run(two_parameters, (np.ones(4, np.float32),) * 3), TypeError,
                 id="too-many-arguments"),
    pytest.param(lambda run: run(two_parameters, ({"a": 1}, np.ones(4, np.float32))), TypeError,
                 id="a-dict-argument"),
    pytest.param(lambda run: run(two_parameters, (np.ones(4, np.complex64),) * 2), TypeError,
                 id="complex-array"),
]


def _interpret(kernel, args):
    with ct.interpret():
        ct.launch(0, (1,), kernel, tuple(np.copy(a) if isinstance(a, np.ndarray) else a
                                         for a in args))


def _compile(kernel, args):
    ct.compile(kernel, tuple(args), arch="sm_90")


def _failure(action):
    try:
        action()
    except Exception as error:  # what each executor raises is compared below
        return error
    return None


def check_user_error(error, expected):
    assert error is not None, f"no error (expected {expected.__name__})"
    assert isinstance(error, expected), f"{type(error).__name__}: {error}"
    assert not isinstance(error, ct.TileInternalError), str(error)
    assert str(error).strip()


@pytest.mark.parametrize("kernel,args,expected", CASES)
def test_a_bad_kernel_fails_alike_in_both_executors(kernel, args, expected):
    interpreted = _failure(lambda: _interpret(kernel, args))
    compiled = _failure(lambda: _compile(kernel, args))
    for error in (interpreted, compiled):
        check_user_error(error, expected)
        assert error.loc is not None and error.loc.filename == __file__, \
            f"{type(error).__name__} names no kernel line: {error}"
    assert type(interpreted) is type(compiled)


@pytest.mark.parametrize("call,expected", HOST_CASES)
def test_a_bad_call_fails_alike_in_both_executors(call, expected):
    interpreted = _failure(lambda: call(_interpret))
    compiled = _failure(lambda: call(_compile))
    for error in (interpreted, compiled):
        check_user_error(error, expected)
    assert type(interpreted) is type(compiled)


def test_the_catalogue_is_large():
    assert len(CASES) + len(HOST_CASES) >= 100


def test_an_unknown_architecture_is_a_value_error():
    with pytest.raises(ValueError, match="use one of sm_75"):
        ct.compile(two_parameters, arrays(np.float32, np.float32), arch="sm_12")


def test_internal_and_environment_failures_become_tile_errors(monkeypatch):
    """What the compiler's own code or a missing CUDA library raises reaches the user as a
    Tile error that says what to do, the original chained."""
    from numba_tile.compiler import kernel_compiler

    class DynamicLibNotFoundError(RuntimeError):  # as cuda.pathfinder names it
        pass

    @ct.kernel
    def fresh(x, out):
        ct.store(out, (0,), ct.load(x, (0,), (4,)))
    for raised, expected, words in [
            (KeyError("scratch"), ct.TileInternalError, "please report"),
            (AssertionError("not a constant"), ct.TileInternalError, "please report"),
            (DynamicLibNotFoundError("libnvvm.so"), ct.TileCompilerExecutionError,
             "pip install 'numba-tile\\[cu12\\]'")]:
        def failing(*args, raised=raised):
            raise raised
        monkeypatch.setattr(kernel_compiler, "_lower", failing)
        kernel = ct.kernel(fresh.fn)
        with pytest.raises(expected, match=words) as caught:
            ct.compile(kernel, arrays(np.float32, np.float32), arch="sm_90")
        assert caught.value.__cause__ is raised


# -- Python that tile code does not take (numba_tile/rules/syntax.py) --------------------------
@ct.kernel
def uses_try(x, out):
    t = ct.load(x, (0,), (4,))
    try:
        t = t + 1
    except ValueError:
        pass
    ct.store(out, (0,), t)


@ct.kernel
def uses_yield(x, out):
    yield ct.load(x, (0,), (4,))


@ct.kernel
def uses_import(x, out):
    import math  # noqa: F401
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


_counter = 0


@ct.kernel
def uses_global(x, out):
    global _counter
    _counter = 1
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


@ct.kernel
def uses_del(x, out):
    t = ct.load(x, (0,), (4,))
    del t


@ct.kernel
def uses_a_list(x, out):
    shape = [4]
    ct.store(out, (0,), ct.load(x, (0,), shape))


@ct.kernel
def uses_a_dict(x, out):
    options = {"shape": (4,)}
    ct.store(out, (0,), ct.load(x, (0,), options["shape"]))


@ct.kernel
def uses_item_assignment(x, out):
    t = (1, 2, 3)
    t[0] = 7
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


def recursive_helper(t, n):
    return t if n == 0 else recursive_helper(t, n - 1) + 1


@ct.kernel
def runaway_recursion(x, out, N: ct.Constant[int]):
    ct.store(out, (0,), recursive_helper(ct.load(x, (0,), (4,)), N))


@pytest.mark.parametrize("kernel,error,message,line", [
    (uses_try, ct.TileSyntaxError, "try/except is not supported", "try:"),
    (uses_yield, ct.TileSyntaxError, "cannot be a generator", "yield ct.load"),
    (uses_import, ct.TileSyntaxError, "import is not supported", "import math"),
    (uses_global, ct.TileSyntaxError, "global is not supported", "global _counter"),
    (uses_del, ct.TileSyntaxError, "del is not supported", "del t"),
    (uses_a_list, ct.TileSyntaxError, "list literals are not supported", "shape = [4]"),
    (uses_a_dict, ct.TileSyntaxError, "dict literals are not supported", "options = {"),
    (uses_item_assignment, ct.TileTypeError, "Tuples are immutable: item assignment is not "
                                             "supported", "t[0] = 7"),
], ids=lambda v: getattr(v, "__name__", None))
def test_unsupported_python_is_rejected_alike(kernel, error, message, line):
    """The interpreter no longer runs these as plain Python (nor skips a generator kernel's
    body); both executors raise the same error at the kernel line."""
    args = arrays(np.float32, np.float32)
    for failure in (_failure(lambda: _interpret(kernel, args)),
                    _failure(lambda: _compile(kernel, args))):
        assert isinstance(failure, error) and message in failure.message, repr(failure)
        assert failure.loc.filename == __file__ and line in failure.loc.source_line


def test_runaway_recursion_is_a_recursion_error_in_both_executors():
    args = arrays(np.float32, np.float32) + (100000,)
    for failure in (_failure(lambda: _interpret(runaway_recursion, args)),
                    _failure(lambda: _compile(runaway_recursion, args))):
        assert isinstance(failure, ct.TileRecursionError), repr(failure)


def _helper_with_a_bad_operand(t):
    return t + "a"


@ct.kernel
def kernel_calling_a_bad_helper(x, out):
    ct.store(out, (0,), _helper_with_a_bad_operand(ct.load(x, (0,), (4,))))


def test_compiled_errors_name_the_function_as_the_interpreter_does():
    x = np.ones(4, np.float32)
    interpreted = _failure(lambda: _interpret(kernel_calling_a_bad_helper, (x, x.copy())))
    compiled = _failure(lambda: _compile(kernel_calling_a_bad_helper, (x, x.copy())))
    for error in (interpreted, compiled):
        assert isinstance(error, ct.TileTypeError), error
        assert error.loc.function == "_helper_with_a_bad_operand", str(error)
        assert ", in _helper_with_a_bad_operand:" in str(error)


def test_launch_without_a_stream_says_how_to_run_on_the_cpu():
    x = np.ones(4, np.float32)
    with ct.interpret(False), pytest.raises(TypeError, match="NUMBA_TILE_INTERPRET=1"):
        ct.launch(None, (1,), kernel_calling_a_bad_helper, (x, x.copy()))
