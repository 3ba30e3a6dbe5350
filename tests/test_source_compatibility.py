"""Kernels written for ``cuda.tile`` run unchanged: the dtype spellings, Python idioms and
semantics such kernels use (NumPy and torch dtypes, enum members held in variables, math on
integer tiles, ``axis=None``, conditions on 0-d tiles, int32 loop indices and counters).

Every kernel runs in each mode of ``run_kernel`` and is checked against NumPy in float64.
"""

import contextlib
import math
from typing import Annotated

import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error


# -- dtypes spelled by NumPy (and torch) --------------------------------------------------------
@ct.kernel
def numpy_dtype_spellings(out):
    i = ct.arange(16, dtype=np.int32)
    f = ct.full((16,), 2.0, dtype=np.float32)
    h = ct.full((16,), 1, dtype=np.float16)
    keep = ct.full((16,), True, dtype=np.bool_)
    total = ct.astype(i, np.float32) + f + ct.astype(h, np.float32)
    ct.store(out, (0,), ct.where(keep, total, 0.0))


def test_numpy_dtypes_spell_tile_dtypes(run_kernel):
    out = np.full(16, np.nan, np.float32)
    run_kernel(numpy_dtype_spellings, (1,), (out,))
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32) + 3.0)


@ct.kernel
def numpy_dtype_of_result(x, out):
    t = ct.load(x, (0,), (8,))
    ct.store(out, (0,), ct.astype(t, np.int16) + ct.zeros((8,), np.int16))


def test_numpy_dtype_sets_the_result_dtype(run_kernel, rng):
    x = rng.uniform(-100, 100, 8).astype(np.float32)
    out = np.full(8, 7, np.int16)
    run_kernel(numpy_dtype_of_result, (1,), (x, out))
    np.testing.assert_array_equal(out, np.trunc(x).astype(np.int16))


def test_torch_dtypes_spell_tile_dtypes():
    torch = pytest.importorskip("torch")
    from numba_tile.dtypes import dtype_spelling
    assert dtype_spelling(torch.float16) is ct.float16
    assert dtype_spelling(torch.bfloat16) is ct.bfloat16
    assert dtype_spelling(torch.int64) is ct.int64


def test_dtype_spelling_of_other_values():
    from numba_tile.dtypes import dtype_spelling
    assert dtype_spelling(np.dtype("uint8")) is ct.uint8
    assert dtype_spelling(np.complex64) is None  # no tile dtype: left to the usual errors
    assert dtype_spelling(32) is None


# -- an enum member held in a local ---------------------------------------------------------
@ct.kernel
def padding_mode_in_a_local(a, out):
    zero_pad = ct.PaddingMode.ZERO
    acc = ct.zeros((4, 8), ct.float32)
    for k in range(ct.num_tiles(a, 1, (4, 8))):
        acc += ct.load(a, (0, k), (4, 8), padding_mode=zero_pad)
    ct.store(out, (0, 0), acc)


def test_padding_mode_held_in_a_local_inside_a_loop(run_kernel, rng):
    a = rng.uniform(0.5, 2.0, (4, 20)).astype(np.float32)
    out = np.full((4, 8), np.nan, np.float32)
    run_kernel(padding_mode_in_a_local, (1,), (a, out))
    padded = np.zeros((4, 24))
    padded[:, :20] = a
    expected = padded.reshape(4, 3, 8).sum(axis=1)
    assert relative_error(out, expected) < 1e-6


# -- math on integer and bool tiles -----------------------------------------------------------
@ct.kernel
def math_of_integers(x, out):
    t = ct.load(x, (0,), (16,))
    ct.store(out, (0,), ct.exp(t) + ct.sin(t) + ct.sqrt(t) + ct.log(t + 1) + math.log(t + 1))


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8])
def test_float_math_of_integer_tiles_computes_in_float32(run_kernel, rng, dtype):
    x = rng.integers(0, 12, 16).astype(dtype)
    out = np.full(16, np.nan, np.float32)
    run_kernel(math_of_integers, (1,), (x, out))
    v = x.astype(np.float64)
    expected = np.exp(v) + np.sin(v) + np.sqrt(v) + 2 * np.log(v + 1)
    assert relative_error(out, expected) < 1e-6


@ct.kernel
def exp_of_int64(x, out):
    ct.store(out, (0,), ct.exp(ct.load(x, (0,), (8,))))


def test_float_math_of_int64_tiles_computes_in_float32(run_kernel, rng):
    """As cuTile: float32, its default float type, whatever the integer's width."""
    x = rng.integers(-5, 5, 8).astype(np.int64)
    out = np.full(8, np.nan, np.float32)
    run_kernel(exp_of_int64, (1,), (x, out))
    assert relative_error(out, np.exp(x.astype(np.float64))) < 1e-6


@ct.kernel
def math_of_bools(x, out):
    t = ct.load(x, (0,), (8,)) > 0
    ct.store(out, (0,), ct.exp(t))


def test_float_math_of_bool_tiles(run_kernel, rng):
    x = rng.uniform(-1, 1, 8).astype(np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(math_of_bools, (1,), (x, out))
    assert relative_error(out, np.exp((x > 0).astype(np.float64))) < 1e-6


# -- reductions with axis=None, conditions on 0-d tiles --------------------------------------
@ct.kernel
def explicit_axis_none(x, out):
    t = ct.load(x, (0, 0), (4, 8))
    ct.store(out, (0,), ct.sum(t, axis=None) + ct.max(t, None))


def test_reductions_with_explicit_axis_none(run_kernel, rng):
    x = rng.uniform(0.5, 2.0, (4, 8)).astype(np.float32)
    out = np.full(1, np.nan, np.float32)
    run_kernel(explicit_axis_none, (1,), (x, out))
    assert relative_error(out[0], x.astype(np.float64).sum() + x.max()) < 1e-6


@ct.kernel
def conditions_on_0d_tiles(x, out):
    t = ct.load(x, (0, 0), (4, 8))
    total = ct.sum(t)
    if total > 0:
        total = total + 100.0
    else:
        total = total - 100.0
    while ct.max(t) < 10.0:
        t = t + 1.0
    ct.store(out, (0,), total)
    ct.store(out, (1,), ct.max(t))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_and_while_on_0d_tiles(run_kernel, rng, sign):
    x = (sign * rng.uniform(0.5, 2.0, (4, 8))).astype(np.float32)
    out = np.full(2, np.nan, np.float32)
    run_kernel(conditions_on_0d_tiles, (1,), (x, out))
    total = x.astype(np.float64).sum()
    steps = math.ceil(10.0 - x.max()) if x.max() < 10.0 else 0
    assert relative_error(out[0], total + 100.0 * sign) < 1e-6
    assert relative_error(out[1], x.max() + steps) < 1e-6


@ct.kernel
def condition_on_a_tile(x, out):
    t = ct.load(x, (0, 0), (4, 8))
    if t > 0:
        t = t + 1.0
    ct.store(out, (0, 0), t)


def test_a_tile_is_no_condition(run_kernel):
    x = np.ones((4, 8), np.float32)
    with pytest.raises(ct.TileTypeError,
                       match=r"cannot be used as a condition; only scalars \(0-d tiles\)"):
        run_kernel(condition_on_a_tile, (1,), (x, x.copy()))


# -- loop indices and counters are int32 ------------------------------------------------------
@ct.kernel
def int32_counters(out, n):
    acc = ct.zeros((16,), ct.int32)
    for i in range(4):
        acc = acc + i
    j = 0
    while j < 3:
        acc = acc + j
        j += 1
    for q in range(1, n, 2):
        acc = acc + q
    ct.store(out, (0,), acc)
    ct.store(out, (1,), ct.full((16,), i, i.dtype))


def test_loop_indices_and_counters_are_int32(run_kernel):
    out = np.full(32, -1, np.int32)
    run_kernel(int32_counters, (1,), (out, 6))
    expected = sum(range(4)) + sum(range(3)) + sum(range(1, 6, 2))
    np.testing.assert_array_equal(out, [expected] * 16 + [3] * 16)


@ct.kernel
def loop_index_dtype(out, n: ct.ScalarInt64):
    for i in range(4):
        ct.store(out, (0,), ct.full((1,), 1, i.dtype) + ct.zeros((1,), ct.int64))
    for k in range(n):
        ct.store(out, (1,), ct.full((1,), k, k.dtype))


def test_loop_index_is_int64_for_an_int64_bound(run_kernel):
    out = np.full(2, -1, np.int64)
    run_kernel(loop_index_dtype, (1,), (out, 2 ** 33 // 2 ** 32 + 2))
    np.testing.assert_array_equal(out, [1, 3])


def test_range_index_dtype_rule():
    from numba_tile.rules.loops import range_index_dtype
    assert range_index_dtype([4]) is ct.int32
    assert range_index_dtype([ct.int16, 8]) is ct.int32
    assert range_index_dtype([ct.int64]) is ct.int64
    assert range_index_dtype([ct.uint32]) is ct.int64
    assert range_index_dtype([0, 2 ** 31]) is ct.int64


# -- NaN scalars ------------------------------------------------------------------------------
@ct.kernel
def nan_scalars_compare_unequal(out, runtime_nan):
    typed = ct.float32(math.nan)
    loose = math.nan
    for tx in ct.static_iter((typed, loose, runtime_nan)):
        ct.assert_(tx != tx)
        ct.assert_(ct.isnan(tx))
        ct.assert_(not (tx == tx))
    ct.static_assert(typed != typed)  # a typed constant's comparison folds, as a loose one's
    ct.store(out, (0,), ct.full((4,), 1.0, ct.float32))


def test_nan_scalars_compare_unequal(run_kernel):
    out = np.full(4, np.nan, np.float32)
    run_kernel(nan_scalars_compare_unequal, (1,), (out, math.nan))
    np.testing.assert_array_equal(out, np.ones(4, np.float32))


# -- the kernel object ----------------------------------------------------------------------
def test_kernel_is_a_class():
    @ct.kernel(num_warps=4)
    def k(x):
        ct.store(x, (0,), ct.zeros((4,), ct.float32))
    assert isinstance(k, ct.kernel) and isinstance(k.replace_hints(num_warps=8), ct.kernel)
    assert k.replace_hints(num_warps=8).options["num_warps"] == 8


def test_by_target_without_a_default_means_the_option_default():
    @ct.kernel(occupancy=ct.ByTarget(sm_100=16), num_warps=ct.ByTarget(sm_80=8))
    def k(x):
        ct.store(x, (0,), ct.zeros((4,), ct.float32))
    x = np.zeros(4, np.float32)
    compiled = ct.compile(k, (x,), arch="sm_90")
    # (num_warps left to the compiler, which chooses 4 for this kernel)
    assert compiled.ptx == ct.compile(k.replace_hints(occupancy=None, num_warps=None), (x,),
                                      arch="sm_90").ptx
    assert compiled.num_warps == 4 and ".minnctapersm" not in compiled.ptx


def test_compiler_timeout_is_enforced():
    @ct.kernel
    def slow_enough(x):
        t = ct.load(x, (0, 0), (64, 64))
        ct.store(x, (0, 0), ct.exp(t) * ct.sin(t) + ct.sqrt(t))
    x = np.zeros((64, 64), np.float32)
    with ct.compiler_timeout(1e-4):
        with pytest.raises(ct.TileCompilerTimeoutError, match="compiler_timeout"):
            ct.compile(slow_enough, (x,), arch="sm_90")
    with ct.compiler_timeout(600):  # not cached as a failure: compiles now
        assert ".target sm_90" in ct.compile(slow_enough, (x,), arch="sm_90").ptx


def test_compiler_timeout_from_cutiles_environment_variable(monkeypatch):
    """``CUDA_TILE_COMPILER_TIMEOUT_SEC`` bounds compiles outside a ``compiler_timeout``
    block, read as cuTile reads it; the block wins where both are given."""
    @ct.kernel
    def slow_enough(x):
        t = ct.load(x, (0, 0), (64, 64))
        ct.store(x, (0, 0), ct.exp(t) * ct.cos(t) + ct.sqrt(t))
    x = np.zeros((64, 64), np.float32)
    monkeypatch.setenv("CUDA_TILE_COMPILER_TIMEOUT_SEC", "0.0001")
    with pytest.raises(ct.TileCompilerTimeoutError, match="CUDA_TILE_COMPILER_TIMEOUT_SEC"):
        ct.compile(slow_enough, (x,), arch="sm_90")
    with ct.compiler_timeout(timeout_sec=600):
        assert ".target sm_90" in ct.compile(slow_enough, (x,), arch="sm_90").ptx
    monkeypatch.setenv("CUDA_TILE_COMPILER_TIMEOUT_SEC", "-1")
    with pytest.raises(ValueError, match="Value of CUDA_TILE_COMPILER_TIMEOUT_SEC must be "
                                         "positive"):
        ct.compile(ct.kernel(slow_enough._pyfunc), (x,), arch="sm_90")


def test_cutiles_log_variable_prints_each_compiles_ir(monkeypatch, capsys):
    """``CUDA_TILE_LOGS=CUTILEIR,TILEIR`` prints numba_tile's LLVM IR and PTX of each kernel
    compiled, as cuTile prints its two IRs; another value is cuTile's error."""
    @ct.kernel
    def logged(x):
        ct.store(x, (0,), ct.load(x, (0,), (4,)) + 1)
    x = np.zeros(4, np.float32)
    monkeypatch.setenv("CUDA_TILE_LOGS", "cutileir, TileIR")
    compiled = ct.compile(logged, (x,), arch="sm_90")
    printed = capsys.readouterr().err
    assert "the LLVM IR of kernel 'logged' (CUDA_TILE_LOGS=CUTILEIR):\n; ModuleID" in printed
    assert "\ndefine void @" in printed
    assert f"the PTX of kernel 'logged' (CUDA_TILE_LOGS=TILEIR):\n{compiled.ptx}" in printed
    monkeypatch.setenv("CUDA_TILE_LOGS", "MLIR")
    with pytest.raises(RuntimeError, match=r"^Unexpected value MLIR in CUDA_TILE_LOGS, "
                                           r"supported values are \['CUTILEIR', 'TILEIR'\]"):
        ct.compile(ct.kernel(logged._pyfunc), (x,), arch="sm_90")


# -- reshape with -1, bitcast of scalars ------------------------------------------------------
@ct.kernel
def reshape_with_minus_one(x, out):
    t = ct.load(x, (0, 0), (4, 8))
    ct.store(out, (0,), ct.reshape(t, (-1,)))
    ct.store(out, (1,), ct.reshape(ct.reshape(t, (2, -1)), -1))


def test_reshape_with_minus_one(run_kernel, rng):
    x = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    run_kernel(reshape_with_minus_one, (1,), (x, out))
    np.testing.assert_array_equal(out, np.concatenate([x.ravel(), x.ravel()]))


@ct.kernel
def bitcast_scalars(out, s, h):
    ct.store(out, (0,), ct.full((1,), ct.bitcast(s, ct.int32), ct.int32))
    ct.store(out, (1,), ct.full((1,), ct.bitcast(ct.float32(1.0), ct.int32), ct.int32))
    ct.store(out, (2,), ct.full((1,), ct.astype(ct.bitcast(h, ct.int16), ct.int32), ct.int32))
    # a Python float is a float32 constant (cuTile's example: 0x3f800000)
    ct.store(out, (3,), ct.full((1,), ct.bitcast(1.0, ct.uint32).astype(ct.int32), ct.int32))


def test_bitcast_of_scalars(run_kernel):
    out = np.full(4, -1, np.int32)
    run_kernel(bitcast_scalars, (1,), (out, 2.5, np.float16(1.5)))
    np.testing.assert_array_equal(out, [np.float32(2.5).view(np.int32),
                                        np.float32(1.0).view(np.int32),
                                        np.float16(1.5).view(np.int16), 0x3F800000])


def test_reshape_minus_one_that_cannot_fit():
    from numba_tile.rules.shapes import reshape
    with pytest.raises(ct.TileTypeError,
                       match=r"Cannot reshape \(4, 8\) to \(3, -1\): no length for -1"):
        reshape((4, 8), (3, -1))


@ct.kernel
def static_iter_over_a_tuple_built_with_iadd(x, out):
    t = ct.load(x, (0,), (4,))
    parts = ()
    for i in ct.static_iter(range(3)):
        parts += (t * i,)
    total = ct.zeros((4,), ct.float32)
    for part in ct.static_iter(parts):
        total = total + part
    ct.store(out, (0,), total)


def test_static_iter_over_a_tuple_built_with_iadd(run_kernel, rng):
    x = rng.uniform(-1, 1, 4).astype(np.float32)
    out = np.full(4, np.nan, np.float32)
    run_kernel(static_iter_over_a_tuple_built_with_iadd, (1,), (x, out))
    assert relative_error(out, 3.0 * x.astype(np.float64)) < 1e-6


# -- *args, **kwargs forwarding and with on a contextmanager helper (once compiler gaps) -------
def _sum_of(*tiles):
    return tiles[0] + tiles[1]


def _scaled(x, **options):
    return x * options["scale"]


def _forwarding(*args, **kwargs):
    return _scaled(*args, **kwargs)


@contextlib.contextmanager
def _nothing():
    yield


@ct.kernel
def star_args_helper(x, out):
    t = ct.load(x, (0,), (8,))
    ct.store(out, (0,), _sum_of(t, t))


@ct.kernel
def kwargs_forwarding_helper(x, out):
    t = ct.load(x, (0,), (8,))
    ct.store(out, (0,), _forwarding(t, scale=2.0))


@ct.kernel
def with_a_context_manager(x, out):
    t = ct.load(x, (0,), (8,))
    with _nothing():
        t = t + 1.0
    ct.store(out, (0,), t)


@pytest.mark.parametrize("kernel,expected", [
    (star_args_helper, lambda x: 2 * x),
    (kwargs_forwarding_helper, lambda x: 2 * x),
    (with_a_context_manager, lambda x: x + 1),
], ids=["star-args", "kwargs", "with"])
def test_variadic_helpers_and_with_blocks(run_kernel, kernel, expected):
    """Both executors run these (tests/test_helper_calls.py and
    tests/test_context_managers.py have the details)."""
    x = np.arange(8, dtype=np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(kernel, (1,), (x, out))
    np.testing.assert_array_equal(out, expected(x))


# -- ArrayAnnotation(static_shape_dims=..., static_stride_dims=...) ----------------------------
StaticRows = Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(0,),
                                                    static_stride_dims=(-1,))]


@ct.kernel
def whole_rows(x: StaticRows, out):
    rows = x.shape[0]
    ct.static_assert(x.strides[1] == 1, "a constant stride")
    t = ct.load(x, (0, 0), (rows, 8))  # the launch's row count is a compile-time constant
    ct.store(out, (0, 0), t * rows)


@pytest.mark.parametrize("rows", [4, 16])
def test_static_shape_dims_are_constants_of_each_launch(run_kernel, rows):
    x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
    out = np.full((rows, 8), np.nan, np.float32)
    run_kernel(whole_rows, (1,), (x, out))
    np.testing.assert_array_equal(out, x * rows)


@ct.kernel
def rows_of_a_slice(x: StaticRows, out):
    part = x.slice(axis=0, start=0, stop=2)
    ct.store(out, (0, 0), ct.load(part, (0, 0), (part.shape[0], 8)))


def test_a_sliced_axis_is_no_longer_static(run_kernel):
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(ct.TileTypeError, match="not constant"):
        run_kernel(rows_of_a_slice, (1,), (x, x.copy()))


@ct.kernel
def third_axis(x: Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(2,))], out):
    ct.store(out, (0, 0), ct.load(x, (0, 0), (4, 8)))


def test_a_static_axis_the_array_lacks_is_a_value_error(run_kernel):
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="static_shape_dims names axis 2"):
        run_kernel(third_axis, (1,), (x, x.copy()))


# -- NumPy scalar objects are typed constants of their dtype -------------------------------------
HALF = np.float32(0.5)


@ct.kernel
def numpy_scalar_operands(x, out):
    t = ct.load(x, (0,), (8,))
    r = np.float32(2.0) * t + HALF
    ct.static_assert(r.dtype == ct.float32, "float16 with a float32 scalar is float32")
    ct.store(out, (0,), ct.maximum(r, np.float32(1.0)))


def test_numpy_scalars_are_typed_constants(run_kernel):
    x = np.arange(8, dtype=np.float16) - 2
    out = np.full(8, np.nan, np.float32)
    run_kernel(numpy_scalar_operands, (1,), (x, out))
    np.testing.assert_array_equal(out, np.maximum(2.0 * x.astype(np.float32) + 0.5, 1.0))
