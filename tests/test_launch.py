"""Kernels and launching (spec section 1): launch validation, kernel options, argument
conversion, ``Constant`` parameters, array-like arguments, launch syntaxes, helpers, builtins and
the ``math`` module in tile code, and the errors of host-side misuse.
"""

import math

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error

import kernels_postponed


# -- helpers ----------------------------------------------------------------------------------
def launch_interpreted(stream, grid, kernel, args):
    with ct.interpret():
        ct.launch(stream, grid, kernel, args)


def random_floats(rng, shape, dtype=np.float32):
    """Non-zero values in +-[0.25, 4]."""
    signs = rng.choice([-1.0, 1.0], size=shape)
    return (rng.uniform(0.25, 4.0, size=shape) * signs).astype(dtype)


def poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype)


class ArrayInterfaceWrapper:
    """A host array known only through ``__array_interface__``."""

    def __init__(self, array):
        self._array = array

    @property
    def __array_interface__(self):
        return self._array.__array_interface__


class DLPackWrapper:
    """A host array known only through ``__dlpack__``/``__dlpack_device__``."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


# -- kernels ----------------------------------------------------------------------------------
def add_body(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))


add_kernel = ct.kernel(add_body)


def run_add(run, rng, kernel=add_kernel, n=16, tile=4, wrap=lambda a: a):
    """Launch an add kernel with ``run(grid, kernel, args)`` and check c = a + b."""
    a, b = random_floats(rng, n), random_floats(rng, n)
    c = poisoned(n)
    run((n // tile,), kernel, (wrap(a), wrap(b), wrap(c), tile))
    assert relative_error(c, a.astype(np.float64) + b) < 1e-6


@ct.kernel
def block_ids_kernel(out):
    i, j = ct.bid(0), ct.bid(1)
    ct.store(out, (i, j), i * 100 + j + 1)


@ct.kernel
def no_op_kernel():
    pass


@ct.kernel
def scalar_kind_kernel(v, out, DT: ct.Constant):
    ct.static_assert(v.dtype == DT)
    ct.static_assert(v.ndim == 0)
    ct.store(out, (0,), v)


@ct.kernel
def int64_scalar_kernel(v: ct.ScalarInt64, out):
    ct.static_assert(v.dtype == ct.int64)
    ct.store(out, (0,), v)


@ct.kernel
def runtime_int_as_shape_kernel(n):
    ct.arange(n, dtype=ct.int32)


@ct.kernel
def constant_int_kernel(y, N: ct.Constant[int]):
    ct.store(y, (0,), ct.arange(N, dtype=ct.int32) + 1)


@ct.kernel
def bare_constant_kernel(y, N: ct.Constant):
    ct.store(y, (0,), ct.arange(N, dtype=ct.int32) + 1)


@ct.kernel
def constant_tuple_kernel(x, y, TILE: ct.Constant[tuple[int, int]],
                          FILL: ct.Constant[tuple[int, float]]):
    idx = (ct.bid(0), ct.bid(1))
    t = ct.load(x, idx, TILE)
    ct.store(y, idx, t + ct.full(TILE, FILL[1], ct.float32) * FILL[0])


@ct.kernel
def constant_kinds_kernel(C: ct.Constant, EXPECTED: ct.Constant):
    ct.static_assert(C == EXPECTED)


@ct.kernel
def string_mode_kernel(x, y, MODE: ct.Constant[str]):
    t = ct.load(x, (0,), (8,))
    if MODE == "double":
        t = t * 2
    elif "negate" == MODE:
        t = -t
    if MODE != "double":
        t = t + 1
    ct.store(y, (0,), t)


@ct.kernel
def constant_dtype_kernel(x, y, DT: ct.Constant, EXPECTED: ct.Constant):
    ct.static_assert(DT == EXPECTED)
    t = ct.load(x, (0,), (8,)).astype(DT)
    ct.static_assert(t.dtype == EXPECTED)
    ct.store(y, (0,), t)


@ct.kernel
def list_kernel(arrays, out, TILE: ct.Constant[int]):
    i = ct.bid(0)
    acc = ct.zeros((TILE,), ct.float32)
    for k in range(len(arrays)):
        acc = acc + ct.load(arrays[k], (i,), (TILE,))
    ct.store(out, (i,), acc)
    ct.store(arrays[len(arrays) - 1], (i,), acc * 2)


@ct.kernel
def tuple_argument_kernel(pair, out):
    arr, factor = pair
    ct.store(out, (0,), ct.load(arr, (0,), (8,)) * factor)


@ct.function
def twice(t):
    return t * 2


def plus(t, v):  # a plain helper, inlined into the kernel
    return t + v


def clamp(t, low, high):  # a plain helper calling builtins with tile semantics
    return min(max(t, low), high)


@ct.function
def twice_plus_one_clamped(t):  # a ct.function calling the other helpers
    return clamp(plus(twice(t), 1.0), -1.0, 1.0)


@ct.kernel
def helpers_kernel(x, y, z, TILE: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, (i,), (TILE,))
    ct.store(y, (i,), plus(twice(t), 1.0))
    ct.store(z, (i,), twice_plus_one_clamped(t))


@ct.kernel
def builtins_kernel(a, b, c, mn, mx, as_int, as_float, n, small):
    ta = ct.load(a, (0,), (8,))
    tb = ct.load(b, (0,), (8,))
    tc = ct.load(c, (0,), (8,))
    ct.store(mn, (0,), min(ta, tb))
    ct.store(mx, (0,), max(ta, tb, 0.5))
    i = int(ta)
    ct.static_assert(i.dtype == ct.int32)
    ct.store(as_int, (0,), i)
    f = float(tc)
    ct.static_assert(f.dtype == ct.float32)
    ct.store(as_float, (0,), f)
    ct.store(small, (0,), min(n, 5))
    ct.store(small, (1,), max(n, 50))


@ct.kernel
def math_kernel(x, y, w, out_sqrt, out_exp, out_atan2, out_isnan, out_fold):
    t = ct.load(x, (0,), (8,))
    u = ct.load(y, (0,), (8,))
    ct.store(out_sqrt, (0,), math.sqrt(math.fabs(t)))
    ct.store(out_exp, (0,), math.exp(t))
    ct.store(out_atan2, (0,), math.atan2(t, u))
    ct.store(out_isnan, (0,), math.isnan(ct.load(w, (0,), (8,))))
    # on Python numbers math folds to constants: usable as a tile shape
    ct.static_assert(math.sqrt(16.0) == 4.0)
    n = int(math.log2(8)) + 1
    ct.store(out_fold, (0,), ct.arange(n, dtype=ct.int32) + int(math.floor(2.5)))


# -- launch validation ------------------------------------------------------------------------
@pytest.mark.parametrize("grid", [[2], 2, None, "2"], ids=repr)
def test_grid_must_be_a_tuple(run_kernel, grid):
    with pytest.raises(TypeError, match="Grid must be a tuple"):
        run_kernel(no_op_kernel, grid, ())


@pytest.mark.parametrize("grid", [(1, 1, 1, 1), (0,), (-1,), (2, 0), (1, 1, 0),
                                  (2**31,), (1, 65536), (1, 1, 65536)], ids=str)
def test_bad_grid_values(run_kernel, grid):
    message = "Grid dimensions must be at most 3, got length 4" if len(grid) == 4 else \
        r"Grid\[\d\] = -?\d+ is out of range"
    with pytest.raises(ValueError, match=message):
        run_kernel(no_op_kernel, grid, ())


@pytest.mark.parametrize("grid", [(), (True,)], ids=str)
def test_grids_cutile_takes_as_one_block(run_kernel, grid):
    """cuTile launches ``()`` (every axis 1) and ``(True,)`` (a bool is an int) as one
    block."""
    out = np.full((1, 1), -1, np.int32)
    run_kernel(block_ids_kernel, grid, (out,))
    np.testing.assert_array_equal(out, [[1]])


@pytest.mark.parametrize("args,message", [
    ((), "Kernel expects 4 arguments but 0 were given"),
    ((np.ones(4, np.float32),) * 3, "Kernel expects 4 arguments but 3 were given"),
    ((np.ones(4, np.float32),) * 4 + (4, 5), "Kernel expects 4 arguments but 6 were given")],
    ids=lambda v: str(len(v)) if isinstance(v, tuple) else "")
def test_wrong_number_of_arguments(run_kernel, args, message):
    with pytest.raises(TypeError, match=message):
        run_kernel(add_kernel, (1,), args)


def test_kernel_decorates_python_functions_only():
    with pytest.raises(TypeError, match="`kernel` decorator must be applied to a Python "
                                        "function"):
        ct.kernel(print)
    assert block_ids_kernel._pyfunc is block_ids_kernel.fn  # (cuTile's name for it)


@pytest.mark.parametrize("kernel_args", [[], None, np.zeros(0)], ids=repr)
def test_kernel_args_must_be_a_tuple(kernel_args):
    with pytest.raises(TypeError):
        launch_interpreted(0, (1,), no_op_kernel, kernel_args)


def test_calling_a_kernel_directly():
    with pytest.raises(TypeError):
        no_op_kernel()
    with pytest.raises(TypeError):
        add_kernel(np.ones(4), np.ones(4), np.ones(4), 4)


@pytest.mark.parametrize("stream", [None, 0, 17, object()], ids=["None", "0", "17", "object"])
def test_any_stream_in_interpreter_mode(rng, stream):
    run_add(lambda grid, k, args: launch_interpreted(stream, grid, k, args), rng)


def test_interpreter_mode_from_environment(monkeypatch, rng):
    monkeypatch.setenv("NUMBA_TILE_INTERPRET", "1")
    run_add(lambda grid, k, args: ct.launch(0, grid, k, args), rng)


# -- outside interpreter mode -----------------------------------------------------------------
@ct.kernel
def list_only_kernel(arrays):
    pass


@pytest.mark.parametrize("wrap", [lambda a: a, ArrayInterfaceWrapper, DLPackWrapper],
                         ids=["numpy", "array_interface", "dlpack"])
def test_host_arrays_need_interpreter_mode(wrap):
    args = tuple(wrap(np.ones(8, np.float32)) for _ in range(3)) + (8,)
    with ct.interpret(False):
        with pytest.raises(ValueError, match="Input array is not on a CUDA device"):
            ct.launch(0, (2,), add_kernel, args)


def test_host_arrays_in_a_list_need_interpreter_mode():
    arrays = [np.ones(8, np.float32), np.ones(8, np.float32)]
    with ct.interpret(False):
        with pytest.raises(ValueError, match="Input array is not on a CUDA device"):
            ct.launch(0, (1,), list_only_kernel, (arrays,))


def test_stream_none_outside_interpreter_mode():
    with ct.interpret(False):
        with pytest.raises(TypeError, match="Stream is required"):
            ct.launch(None, (1,), no_op_kernel, ())


# -- kernel options ---------------------------------------------------------------------------
def _body(x):
    pass


BAD_OPTIONS = [("num_ctas", 3), ("num_ctas", 0), ("num_ctas", 32), ("occupancy", 0),
               ("occupancy", 33), ("opt_level", 4), ("opt_level", -1), ("num_worker_warps", 5),
               ("num_worker_warps", 0), ("num_worker_warps", 64),
               ("num_ctas", ct.ByTarget(sm_90=3, default=2)),
               ("occupancy", ct.ByTarget(default=33)),
               ("opt_level", ct.ByTarget(sm_100=7, default=3))]
GOOD_OPTIONS = [("num_ctas", 1)] + \
    [("occupancy", v) for v in (1, 16, 32)] + [("opt_level", v) for v in (0, 1, 2, 3)] + \
    [("num_worker_warps", v) for v in (1, 2, 4, 8, 16, 32)] + \
    [("num_ctas", ct.ByTarget(sm_100=4, default=1)),
     ("occupancy", ct.ByTarget(sm_90=2, default=1)), ("opt_level", ct.ByTarget(default=0))]


@pytest.mark.parametrize("name,value", BAD_OPTIONS, ids=str)
def test_bad_kernel_options(name, value):
    with pytest.raises(ValueError):
        ct.kernel(**{name: value})(_body)


@pytest.mark.parametrize("name,value", GOOD_OPTIONS, ids=str)
def test_good_kernel_options(run_kernel, rng, name, value):
    kernel = ct.kernel(**{name: value})(add_body)
    run_add(lambda grid, k, args: run_kernel(k, grid, args), rng, kernel=kernel)


@pytest.mark.parametrize("value", [2, 4, 8, 16, ct.ByTarget(sm_80=2, sm_90=2, default=2)],
                         ids=str)
def test_a_cluster_of_ctas_is_refused_in_both_executors(run_kernel, rng, value):
    """``num_ctas`` above 1 (a valid option of cuTile's) is not compiled yet: refused where
    the kernel is compiled or interpreted, never ignored."""
    kernel = ct.kernel(num_ctas=value)(add_body)
    with pytest.raises(ct.TileUnsupportedFeatureError, match=r"^num_ctas=\d+ \(a cluster of "
                                                             r"\d+ CTAs for each block\) is not "
                                                             r"supported yet") as raised:
        if run_kernel.mode == "compile":
            ct.compile(kernel, (np.ones(4, np.float32),) * 3 + (4,), arch="sm_90")
        else:
            run_add(lambda grid, k, args: run_kernel(k, grid, args), rng, kernel=kernel)
    assert raised.value.loc.filename == __file__


def test_opt_level_reaches_nvvm():
    x = np.zeros(256, np.float32)
    ptx = {level: ct.compile(ct.kernel(opt_level=level)(add_body), (x, x, x, 256),
                             arch="sm_90").ptx for level in (0, 3)}
    assert ptx[0] != ptx[3] and len(ptx[0]) > len(ptx[3])  # (unoptimized: longer)


def test_num_worker_warps_are_the_warps_that_compute():
    x = np.zeros(256, np.float32)
    assert ct.compile(ct.kernel(num_worker_warps=2)(add_body), (x, x, x, 256),
                      arch="sm_90").num_warps == 2
    assert ct.compile(ct.kernel(num_worker_warps=2, num_warps=8)(add_body), (x, x, x, 256),
                      arch="sm_90").num_warps == 8


def test_replace_hints(run_kernel, rng):
    base = ct.kernel(occupancy=2)(add_body)
    replaced = base.replace_hints(occupancy=4, num_ctas=1)
    assert replaced is not base
    for kernel in (replaced, base):
        run_add(lambda grid, k, args: run_kernel(k, grid, args), rng, kernel=kernel)
    with pytest.raises(ValueError):
        base.replace_hints(occupancy=0)


# -- argument conversion ----------------------------------------------------------------------
SCALAR_CASES = [
    (True, ct.bool_, np.bool_), (False, ct.bool_, np.bool_),
    (7, ct.int32, np.int64), (-3, ct.int32, np.int64), (2**31 - 1, ct.int32, np.int64),
    (-2**31, ct.int32, np.int64), (0.1, ct.float32, np.float64),
    (np.float64(0.1), ct.float64, np.float64), (np.float16(1.5), ct.float16, np.float64),
    (np.int16(-5), ct.int16, np.int64), (np.uint8(200), ct.uint8, np.uint64),
    (np.int64(2**40), ct.int64, np.int64), (np.uint32(2**32 - 1), ct.uint32, np.uint64),
]


@pytest.mark.parametrize("value,dtype,out_dtype", SCALAR_CASES,
                         ids=[f"{v!r}->{d}" for v, d, _ in SCALAR_CASES])
def test_scalar_argument_dtypes(run_kernel, value, dtype, out_dtype):
    out = np.full(1, 99, out_dtype) if out_dtype is not np.bool_ else np.array([not value])
    run_kernel(scalar_kind_kernel, (1,), (value, out, dtype))
    expected = np.asarray(value, dtype.numpy)  # the value as the dtype holds it
    assert out[0] == expected.astype(out_dtype)


def test_float_argument_is_float32(run_kernel):
    out = np.full(1, np.nan)
    run_kernel(scalar_kind_kernel, (1,), (0.1, out, ct.float32))
    assert out[0] == float(np.float32(0.1)) and out[0] != 0.1


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 2**40])
def test_int_argument_out_of_int32_range(run_kernel, value):
    with pytest.raises(ValueError):
        run_kernel(scalar_kind_kernel, (1,), (value, np.zeros(1, np.int64), ct.int32))


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 2**40 + 3, -2**62, 5])
def test_scalar_int64_annotation(run_kernel, value):
    out = np.full(1, 99, np.int64)
    run_kernel(int64_scalar_kernel, (1,), (value, out))
    assert out[0] == value


def test_int_argument_is_a_runtime_value(run_kernel):
    """An int argument is a run-time value: not a constant a shape can be made of (cuTile's
    message)."""
    with pytest.raises(ct.TileTypeError, match="given value is not constant \\(it is a "
                                               "run-time int32 scalar\\)"):
        run_kernel(runtime_int_as_shape_kernel, (1,), (4,))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_unsupported_array_dtype(run_kernel, dtype):
    with pytest.raises(TypeError):
        run_kernel(scalar_kind_kernel, (1,), (1, np.ones(4, dtype), ct.int32))


def test_tuple_argument(run_kernel, rng):
    x = random_floats(rng, 8)
    out = poisoned(8)
    run_kernel(tuple_argument_kernel, (1,), ((x, 3), out))
    assert relative_error(out, x.astype(np.float64) * 3) < 1e-6


# -- Constant parameters ----------------------------------------------------------------------
@pytest.mark.parametrize("kernel", [constant_int_kernel, bare_constant_kernel],
                         ids=["Constant[int]", "Constant"])
def test_constant_as_tile_shape(run_kernel, kernel):
    for n in (4, 8, 4, 16):  # each value its own compile; repeats hit the cache
        y = np.full(16, -7, np.int32)
        run_kernel(kernel, (1,), (y, n))
        expected = np.full(16, -7, np.int32)
        expected[:n] = np.arange(1, n + 1)
        np.testing.assert_array_equal(y, expected)


def test_constant_tuples(run_kernel, rng):
    x = random_floats(rng, (8, 16))
    y = poisoned((8, 16))
    run_kernel(constant_tuple_kernel, (2, 2), (x, y, (4, 8), (3, 0.5)))
    assert relative_error(y, x.astype(np.float64) + 1.5) < 1e-6


@pytest.mark.parametrize("mode,expected", [("double", 2 * np.arange(8)),
                                           ("negate", 1 - np.arange(8)),
                                           ("other", np.arange(8) + 1)])
def test_branches_on_a_string_constant(run_kernel, mode, expected):
    """``MODE == "double"`` with a ``Constant[str]`` folds, either side (it did not compile)."""
    y = poisoned((8,))
    run_kernel(string_mode_kernel, (1,), (np.arange(8, dtype=np.float32), y, mode))
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("value", [7, 2.5, True, None, "abc", ct.PaddingMode.NAN, ct.float16,
                                   (1, 2.5, "x", None)], ids=repr)
def test_constant_kinds(run_kernel, value):
    run_kernel(constant_kinds_kernel, (1,), (value, value))


def test_constant_rejects_an_array(run_kernel):
    with pytest.raises(TypeError):
        run_kernel(constant_int_kernel, (1,), (np.zeros(4, np.int32), np.ones(4, np.int32)))


@pytest.mark.parametrize("dt,expected", [
    (ct.float16, ct.float16), (np.float16, ct.float16), (np.dtype("float16"), ct.float16),
    (np.int8, ct.int8), (np.dtype(np.int64), ct.int64), (np.float64, ct.float64),
    (ml_dtypes.bfloat16, ct.bfloat16), (np.bool_, ct.bool_)], ids=str)
def test_constant_dtypes(run_kernel, rng, dt, expected):
    x = random_floats(rng, 8) * 10
    y = np.zeros(8, expected.numpy)
    run_kernel(constant_dtype_kernel, (1,), (x, y, dt, expected))
    reference = x.astype(np.float64)
    if expected.is_integral:
        reference = np.trunc(reference)
    np.testing.assert_array_equal(y, reference.astype(expected.numpy))


def test_postponed_annotations(run_kernel, rng):
    x = rng.integers(1, 100, size=16).astype(np.int32)
    y = np.full(16, -1, np.int64)
    factor = 2**33 + 1
    run_kernel(kernels_postponed.scale_postponed, (4,), (x, y, factor, 4, ct.int64))
    np.testing.assert_array_equal(y, x.astype(np.int64) * factor)


def test_postponed_annotation_naming_a_later_global(run_kernel):
    y = np.full(8, -1, np.int32)
    run_kernel(kernels_postponed.later_global_postponed, (1,), (y, 4))
    np.testing.assert_array_equal(y, [1, 2, 3, 4, -1, -1, -1, -1])


# -- array-like arguments ---------------------------------------------------------------------
def test_list_of_arrays(run_kernel, rng):
    arrays = [random_floats(rng, 16) for _ in range(3)]
    originals = [a.copy() for a in arrays]
    out = poisoned(16)
    run_kernel(list_kernel, (4,), (arrays, out, 4))
    total = sum(a.astype(np.float64) for a in originals)
    assert relative_error(out, total) < 1e-6
    assert relative_error(arrays[2], total * 2) < 1e-6  # written in place through the list
    for a, original in zip(arrays[:2], originals[:2]):
        np.testing.assert_array_equal(a, original)


def test_list_of_arrays_with_mixed_dtypes(run_kernel):
    arrays = [np.ones(16, np.float32), np.ones(16, np.float64)]
    with pytest.raises(TypeError):
        run_kernel(list_kernel, (4,), (arrays, poisoned(16), 4))


@pytest.mark.parametrize("wrap", [ArrayInterfaceWrapper, DLPackWrapper],
                         ids=["array_interface", "dlpack"])
def test_array_like_objects_written_in_place(run_kernel, rng, wrap):
    run_add(lambda grid, k, args: run_kernel(k, grid, args), rng, wrap=wrap)


def test_cpu_torch_tensors(run_kernel, rng):
    torch = pytest.importorskip("torch")
    a, b = random_floats(rng, 16), random_floats(rng, 16)
    c = torch.full((16,), float("nan"), dtype=torch.float32)
    run_kernel(add_kernel, (4,), (torch.from_numpy(a), torch.from_numpy(b), c, 4))
    assert relative_error(c.numpy(), a.astype(np.float64) + b) < 1e-6
    y = np.zeros(8, np.float16)
    run_kernel(constant_dtype_kernel, (1,), (a[:8], y, torch.float16, ct.float16))
    np.testing.assert_array_equal(y, a[:8].astype(np.float16))


# -- launch syntaxes and the grid -------------------------------------------------------------
def numba_style_with_stream(grid, kernel, args):
    with ct.interpret():
        kernel[grid, 0](*args)


def numba_style(grid, kernel, args):
    with ct.interpret():
        kernel[grid](*args)


@pytest.mark.parametrize("style", [numba_style_with_stream, numba_style],
                         ids=["kernel[grid, stream]", "kernel[grid]"])
def test_numba_style_launch(rng, style):
    run_add(style, rng)


def test_numba_style_launch_takes_no_keyword_arguments():
    """A keyword argument is a TypeError that names it and the parameters, before anything
    runs (it was Python's own error about an internal function)."""
    x = np.full(8, -1, np.int32)
    with ct.interpret(), pytest.raises(TypeError) as raised:
        block_ids_kernel[(2,)](out=x)
    assert str(raised.value) == (
        "Kernel 'block_ids_kernel' takes its arguments by position in kernel[grid, "
        "stream](...), as in ct.launch: pass out in its place among (out)")
    assert (x == -1).all()


@pytest.mark.parametrize("grid", [(3, 5), (7, 1), (1, 4)], ids=str)
def test_kernel_sees_every_block(run_kernel, grid):
    out = np.full(grid, -1, np.int32)
    run_kernel(block_ids_kernel, grid, (out,))
    i, j = np.indices(grid)
    np.testing.assert_array_equal(out, i * 100 + j + 1)


def test_numba_style_launch_with_2d_grid():
    out = np.full((3, 5), -1, np.int32)
    numba_style_with_stream((3, 5), block_ids_kernel, (out,))
    i, j = np.indices((3, 5))
    np.testing.assert_array_equal(out, i * 100 + j + 1)


# -- helpers, builtins and math in kernels ----------------------------------------------------
def test_function_and_plain_helpers(run_kernel, rng):
    x = random_floats(rng, 16)
    y, z = poisoned(16), poisoned(16)
    run_kernel(helpers_kernel, (4,), (x, y, z, 4))
    expected = x.astype(np.float64) * 2 + 1
    assert relative_error(y, expected) < 1e-6
    assert relative_error(z, np.clip(expected, -1, 1)) < 1e-6


def test_builtins_on_tiles(run_kernel, rng):
    a, b = random_floats(rng, 8), random_floats(rng, 8)
    c = rng.integers(-1000, 1000, size=8).astype(np.int32)
    mn, mx, as_float = poisoned(8), poisoned(8), poisoned(8, np.float64)
    as_int = np.full(8, -99, np.int32)
    small = np.full(2, -1, np.int32)
    run_kernel(builtins_kernel, (1,), (a, b, c, mn, mx, as_int, as_float, 9, small))
    np.testing.assert_array_equal(mn, np.minimum(a, b))
    np.testing.assert_array_equal(mx, np.maximum(np.maximum(a, b), np.float32(0.5)))
    np.testing.assert_array_equal(as_int, np.trunc(a).astype(np.int32))
    np.testing.assert_array_equal(as_float, c.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(small, [5, 50])


def test_math_module_on_tiles(run_kernel, rng):
    x, y = random_floats(rng, 8), random_floats(rng, 8)
    w = random_floats(rng, 8)
    w[[1, 4, 6]] = np.nan
    outs = [poisoned(8) for _ in range(3)]
    isnan = np.zeros(8, np.bool_)
    fold = np.full(4, -1, np.int32)
    run_kernel(math_kernel, (1,), (x, y, w, *outs, isnan, fold))
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    for out, expected in zip(outs, [np.sqrt(np.abs(x64)), np.exp(x64), np.arctan2(x64, y64)]):
        assert relative_error(out, expected) < 1e-6
    np.testing.assert_array_equal(isnan, np.isnan(w))
    np.testing.assert_array_equal(fold, [2, 3, 4, 5])


# -- ops outside tile code --------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: ct.load(np.zeros(4), (0,), (4,)),
    lambda: ct.store(np.zeros(4), (0,), np.ones(4)),
    lambda: ct.bid(0),
    lambda: ct.num_blocks(0),
    lambda: ct.num_tiles(np.zeros(4), 0, (4,)),
    lambda: ct.arange(4, dtype=ct.int32),
    lambda: ct.full((4,), 1.0, ct.float32),
], ids=["load", "store", "bid", "num_blocks", "num_tiles", "arange", "full"])
def test_ops_outside_a_kernel(call):
    with pytest.raises(TypeError):
        call()


def test_a_kernel_that_cannot_be_loaded_says_why(monkeypatch):
    """No cubin (nvJitLink unusable) and PTX the driver refuses: a Tile error that names
    CUDA_HOME, never cuda.core's TypeError."""
    from numba_tile.runtime import loaded_kernels

    class Compiled:
        arch, cubin, ptx = "sm_90", None, ".version 9.5"

    class Unloadable:
        @staticmethod
        def from_ptx(ptx):
            raise TypeError("cannot load")

    monkeypatch.setenv("CUDA_HOME", "/opt/partial-toolkit")
    with pytest.raises(ct.TileCompilerExecutionError,
                       match="no cubin.*CUDA_HOME=/opt/partial-toolkit may point at"):
        loaded_kernels.object_code(Unloadable, Compiled)
    monkeypatch.delenv("CUDA_HOME")
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(ct.TileCompilerExecutionError, match="cu12 or cu13 extra"):
        loaded_kernels.object_code(Unloadable, Compiled)


def test_compiler_libraries_missing_under_cuda_home_say_so(monkeypatch):
    """numba-cuda reads libdevice from CUDA_HOME when it is set: a partial toolkit there is
    a TileCompilerExecutionError naming it (seen on an H100 with another toolkit's
    CUDA_HOME), not an internal error."""
    from numba_tile.compiler.error_translation import as_tile_error
    monkeypatch.setenv("CUDA_HOME", "/opt/partial-toolkit")
    missing = FileNotFoundError(2, "No such file or directory",
                                "/opt/partial-toolkit/nvvm/libdevice/libdevice.10.bc")
    error = as_tile_error(missing)
    assert isinstance(error, ct.TileCompilerExecutionError)
    assert "CUDA_HOME=/opt/partial-toolkit" in str(error) and "Unset CUDA_HOME" in str(error)
    assert isinstance(as_tile_error(FileNotFoundError(2, "gone", "/elsewhere/x")),
                      ct.TileInternalError)
