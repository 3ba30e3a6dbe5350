"""Compile mode (DESIGN.md section 6): kernels compile on the CPU for sm_80 and sm_90.

The compiler covers a first slice of the op set (grid queries, load/store, elementwise
arithmetic on tiles of one shape); these tests check what it produces: PTX for the target,
global loads and stores, no local memory, no spills, a cubin from nvJitLink.
"""

import inspect
import re

import numpy as np
import pytest

import numba_tile as ct

ARCHES = ["sm_80", "sm_90"]


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))


@ct.kernel
def mixed_arithmetic(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    x = ct.load(a, (i, j), (TM, TN))
    y = ct.load(b, (j, i), (TM, TN), order="F")
    ct.store(c, (i, j), ct.maximum(x * y - x, y) / (x + 2.0 * 0 + y))


def _line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.int8])
def test_vector_add_compiles(arch, dtype):
    x = np.zeros(1024, dtype)
    compiled = ct.compile(vector_add, (x, x, x, 256), arch=arch)
    assert f".target {arch}" in compiled.ptx
    assert re.search(r"ld\.global", compiled.ptx) and re.search(r"st\.global", compiled.ptx)
    # runs of 4 contiguous elements a thread (8 for narrow dtypes): vectors of 16 bytes,
    # of 8 for int8 (8 x 1 byte) and float64 (two vectors of 2 x 8 bytes)
    width = "v2" if np.dtype(dtype).itemsize in (1, 8) else "v4"
    assert re.search(rf"ld\.global\.{width}", compiled.ptx)
    assert re.search(rf"st\.global\.{width}", compiled.ptx)
    assert ".local" not in compiled.ptx
    assert isinstance(compiled.cubin, bytes) and compiled.cubin
    assert compiled.registers > 0 and compiled.spill_bytes == 0
    assert compiled.shared_bytes == 0


@pytest.mark.parametrize("arch", ARCHES)
def test_tiles_with_scalars_and_literals_compile(arch):
    a = np.zeros((64, 64), np.float32)
    compiled = ct.compile(mixed_arithmetic, (a, a, a, 16, 32), arch=arch)
    assert compiled.spill_bytes == 0
    assert not re.search(r"\.f64\b", compiled.ptx)  # float literals stay float32


@ct.kernel
def two_dimensional(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    x = ct.load(a, (i, j), (TM, TN))
    y = ct.load(b, (j, i), (TM, TN), order="F")
    ct.store(c, (i, j), ct.maximum(x * y - x, y) / (x + y))


@pytest.mark.parametrize("arch", ARCHES)
def test_two_dimensional_kernel(arch):
    a = np.zeros((64, 64), np.float32)
    compiled = ct.compile(two_dimensional, (a, a, a, 16, 32), arch=arch)
    assert compiled.spill_bytes == 0 and ".local" not in compiled.ptx
    assert "div" in compiled.ptx and "max" in compiled.ptx


@ct.kernel
def mixed_signedness(a, b, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(a, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))  # marker: bad


def test_promotion_error_names_the_kernel_line():
    with pytest.raises(ct.TileTypeError) as info:
        ct.compile(mixed_signedness, (np.zeros(4, np.uint8), np.zeros(4, np.int8), 4))
    assert "uint8 and int8" in info.value.message
    assert info.value.loc.filename == __file__
    assert info.value.loc.line == _line_of(mixed_signedness.fn, "marker: bad")


@ct.kernel
def odd_tile(a, TILE: ct.Constant[int]):
    ct.store(a, (0,), ct.load(a, (0,), (TILE,)))


def test_non_power_of_two_tile_is_a_type_error():
    with pytest.raises(ct.TileTypeError, match="power of two"):
        ct.compile(odd_tile, (np.zeros(8, np.float32), 6))


@ct.kernel
def non_constant_shape(a, n):
    ct.store(a, (0,), ct.load(a, (0,), (n,)))


def test_non_constant_shape_is_a_type_error():
    with pytest.raises(ct.TileTypeError, match="not constant"):
        ct.compile(non_constant_shape, (np.zeros(8, np.float32), 8))


def test_compile_checks_its_arguments():
    with pytest.raises(TypeError):
        ct.compile(vector_add, (np.zeros(4),))
    with pytest.raises(ValueError):
        ct.compile(vector_add, (np.zeros(4),) * 3 + (4,), arch="ampere")


def test_ordinary_numba_cuda_kernels_keep_numba_semantics():
    from numba import cuda, types

    def scale(out, n):
        out[0] = n * 3  # int32 * literal: Numba's rules give int64

    ptx, return_type = cuda.compile_ptx(scale, (types.int64[::1], types.int32), cc=(9, 0))
    assert "mul.lo.s64" in ptx or "mul.wide.s32" in ptx
    # and tile kernels still compile after it
    ct.compile(vector_add, (np.zeros(8, np.float32),) * 3 + (8,))


@ct.kernel
def padded_copy(a, b, TILE: ct.Constant[int]):
    ct.store(b, (0,), ct.load(a, (0,), (TILE,), padding_mode=ct.PaddingMode.NEG_INF))


def test_padding_modes_are_compile_time_constants():
    a = np.zeros(10, np.float32)
    compiled = ct.compile(padded_copy, (a, a, 16))
    assert "0fFF800000" in compiled.ptx  # -inf, the padding value, as a PTX float literal


def future_op(x):
    """Stands for an op of the model that the compiler does not have (yet)."""
    return x


future_op.__module__ = "numba_tile.language.future"


@ct.kernel
def uses_future_op(a, TILE: ct.Constant[int]):
    ct.store(a, (0,), future_op(ct.load(a, (0,), (TILE,))))


@ct.kernel
def uses_a_missing_method(a, TILE: ct.Constant[int]):
    ct.store(a, (0,), ct.load(a, (0,), (TILE,)).frobnicate())


def test_unknown_tile_attributes_are_type_errors():
    with pytest.raises(ct.TileTypeError, match="Tile has no attribute 'frobnicate'") as info:
        ct.compile(uses_a_missing_method, (np.zeros(8, np.float32), 8))
    assert info.value.loc is not None and info.value.loc.filename == __file__


@pytest.mark.parametrize("kernel,missing", [(uses_future_op, "ct.future_op")])
def test_ops_not_compiled_yet_are_named(kernel, missing):
    with pytest.raises(ct.TileUnsupportedFeatureError, match=missing.replace(".", r"\.")) as info:
        ct.compile(kernel, (np.zeros(8, np.float32), 8))
    assert "interpreter mode" in info.value.message
    assert info.value.loc is not None and info.value.loc.filename == __file__


def _softmax_kernel():
    from numba_tile.demo import softmax
    return softmax


@pytest.mark.parametrize("arch", ARCHES)
def test_softmax_uses_shuffles_and_stays_in_registers(arch):
    x = np.zeros((64, 100), np.float32)
    compiled = ct.compile(_softmax_kernel(), (x, x, 128), arch=arch)
    assert "shfl.sync.bfly" in compiled.ptx
    assert compiled.spill_bytes == 0 and ".local" not in compiled.ptx


@ct.kernel
def column_sums(a, out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(a, (0, ct.bid(0)), (TM, TN))
    ct.store(out, (0, ct.bid(0)), ct.sum(t, axis=0, keepdims=True))


def test_reduction_across_warps_goes_through_shared_memory():
    a = np.zeros((64, 64), np.float32)
    compiled = ct.compile(column_sums, (a, a[:1], 64, 64))
    assert "bar.sync" in compiled.ptx and compiled.shared_bytes > 0
    assert compiled.spill_bytes == 0


@ct.kernel
def shape_ops(a, out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(a, (0, 0), (TM, TN))
    row_sums = ct.sum(t, axis=1)                       # keepdims=False: (TM,)
    moved = ct.transpose(t) + ct.reshape(t, (TN, TM))  # through shared memory
    outer = row_sums[:, None] + ct.max(t, axis=0)[None, :]
    ct.store(out, (0, 0), ct.transpose(moved) + outer + ct.broadcast_to(row_sums[:, None],
                                                                         (TM, TN)))


@pytest.mark.parametrize("arch", ARCHES)
def test_shape_ops_compile_through_shared_memory(arch):
    a = np.zeros((32, 64), np.float32)
    compiled = ct.compile(shape_ops, (a, a, 32, 64), arch=arch)
    assert "bar.sync" in compiled.ptx and compiled.shared_bytes > 0
    assert compiled.spill_bytes == 0


def double_it(t):
    return t + t


@ct.kernel
def calls_a_helper(a, TILE: ct.Constant[int]):
    ct.static_assert(TILE <= 128, "TILE must be at most 128")
    doubled = ct.ensure_constant(TILE * 2)
    ct.static_assert(a.ndim == 1 and doubled == 2 * TILE)
    scale = lambda t: t * 3  # noqa: E731 - a closure helper
    ct.store(a, (ct.bid(0),), scale(double_it(ct.load(a, (ct.bid(0),), (TILE,)))))


def test_helpers_are_inlined_and_constants_fold():
    compiled = ct.compile(calls_a_helper, (np.zeros(64, np.float32), 64))
    assert ".func" not in compiled.ptx.split(".entry")[1]  # no call to a separate function
    with pytest.raises(ct.TileStaticAssertionError, match="TILE must be at most 128"):
        ct.compile(calls_a_helper, (np.zeros(64, np.float32), 256))


@ct.kernel
def bool_copy(a, b, TILE: ct.Constant[int]):
    ct.store(b, (ct.bid(0),), ct.load(a, (ct.bid(0),), (TILE,)) == True)  # noqa: E712


def test_bool_tiles_load_and_store_bytes():
    compiled = ct.compile(bool_copy, (np.zeros(64, np.bool_), np.zeros(64, np.bool_), 64))
    assert compiled.spill_bytes == 0


@ct.kernel
def rank_generic_copy(x, y, TILE: ct.Constant[int]):
    if x.ndim == 1:  # only the taken side is typed: the other is wrong for this rank
        ct.store(y, (ct.bid(0),), ct.load(x, (ct.bid(0),), (TILE,)))
    else:
        ct.store(y, (ct.bid(0), 0), ct.load(x, (ct.bid(0), 0), (1, TILE)))
    wide = ct.float64 if x.dtype == ct.float32 else x.dtype
    ct.static_assert(wide == ct.float64 or x.dtype != ct.float32)


@pytest.mark.parametrize("shape", [(64,), (4, 64)])
def test_branches_on_constants_are_decided_before_typing(shape):
    a = np.zeros(shape, np.float32)
    compiled = ct.compile(rank_generic_copy, (a, a, 64))
    assert compiled.spill_bytes == 0


def test_occupancy_option_bounds_the_registers():
    """``occupancy=N`` asks for N blocks an SM: the PTX says so and ptxas keeps the registers
    within 65536 / (N * threads a block)."""
    x = np.zeros((64, 4096), np.float16)
    w = np.zeros(4096, np.float16)
    from numba_tile.bench.kernels import layer_norm
    free = ct.compile(layer_norm.replace_hints(num_warps=8), (x, w, w, x, 1e-5, 1, 4096))
    bounded = ct.compile(layer_norm.replace_hints(num_warps=8, occupancy=6),
                         (x, w, w, x, 1e-5, 1, 4096))
    assert ".minnctapersm 6" in bounded.ptx and ".minnctapersm" not in free.ptx
    if bounded.cubin is not None:
        assert bounded.registers <= 65536 // (6 * 256) < free.registers


@pytest.mark.parametrize("log,registers,spills,shared", [
    ("ptxas info    : Used 11 registers, 96 bytes smem, 380 bytes cmem[0]\n"
     "ptxas info    : Function properties for k\n"
     "    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n", 11, 20, 96),
    ("info    : 8 bytes gmem\ninfo    : Function properties for 'k':\n"
     "info    : used 40 registers, used 1 barriers, 24 stack, 2048 bytes smem, "
     "552 bytes cmem[0], 0 bytes lmem\n", 40, 24, 2048),
    ("ptxas info    : Function properties for k\n"
     "ptxas         .     56 bytes stack frame, 76 bytes spill stores, 76 bytes spill loads\n"
     "ptxas info    : Used 40 registers, used 1 barriers\n"
     "info    : used 40 registers, used 1 barriers, 56 stack, 1024 bytes smem, "
     "632 bytes cmem[0], 0 bytes lmem\n", 40, 152, 1024)],
    ids=["ptxas", "nvjitlink-13", "both"])
def test_resource_report_of_both_linker_log_formats(log, registers, spills, shared):
    """Which nvJitLink a process loads (PyTorch brings its own) decides the log's format."""
    from numba_tile.compiler.kernel_compiler import CompiledKernel
    compiled = CompiledKernel("k", "sm_90", "", b"", log, 4)
    assert (compiled.registers, compiled.spill_bytes, compiled.shared_bytes) == (
        registers, spills, shared)


@pytest.mark.parametrize("serialized", [True, False])
def test_serialized_tensor_core_products_are_warned_of(serialized):
    """ptxas's C7509 (every wgmma waited for at once, as a call in the kernel causes) is
    a RuntimeWarning that names the cause and the way out; other logs say nothing."""
    import warnings
    from numba_tile.compiler.kernel_compiler import CompiledKernel
    from numba_tile.runtime.compile_entry import warn_of_serialized_products
    log = "ptxas info    : Used 168 registers, used 1 barriers\n"
    if serialized:
        log += ("ptxas info    : (C7509) Potential Performance Loss: wgmma.mma_async "
                "instructions are serialized due to the presence of Extern calls in the "
                "function 'attention'\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_of_serialized_products(CompiledKernel("attention", "sm_90", "", b"", log, 8))
    if not serialized:
        assert not caught
        return
    (warning,) = caught
    assert warning.category is RuntimeWarning
    message = str(warning.message)
    assert "attention" in message and "Extern calls" in message and "FULL" in message


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("in_dtype,acc_dtype,instruction", [
    (np.float16, "float32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    (np.float16, "float16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"),
    ("bfloat16", "float32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")])
def test_matmul_runs_on_tensor_cores(arch, in_dtype, acc_dtype, instruction):
    import ml_dtypes
    from test_matrix import matmul_kernel
    dtype = ml_dtypes.bfloat16 if in_dtype == "bfloat16" else in_dtype
    a = np.zeros((256, 256), dtype)
    compiled = ct.compile(matmul_kernel, (a, a, np.zeros((256, 256), np.float32), 64, 64, 32,
                                          getattr(ct, acc_dtype)), arch=arch)
    assert compiled.spill_bytes == 0
    if arch == "sm_90" and acc_dtype == "float32":
        # Hopper: a warpgroup's wgmma of 64 x 64 x 16, two k-steps, operands read by the
        # tensor cores from shared memory
        kind = instruction.split(".")[-2]
        assert compiled.ptx.count(f"wgmma.mma_async.sync.aligned.m64n64k16.f32.{kind}") >= 2
        return
    # a 64 x 64 tile over 4 warps: 2 x 2 warps of 32 x 32, 8 fragments each, 2 k-steps (the
    # k-loop may be unrolled further); operands read with ldmatrix
    assert compiled.ptx.count(instruction) >= 16
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in compiled.ptx
    assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in compiled.ptx


@pytest.mark.parametrize("in_dtype,acc_dtype,instruction", [
    (np.int8, "int32", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"),
    (np.uint8, "int32", "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"),
    (np.float64, "float64", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"),
    ("float8_e4m3fn", "float32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"),
    ("float8_e4m3fn", "float16", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"),
    ("float8_e5m2", "float32", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32")],
    ids=str)
def test_integer_float64_and_float8_products_run_on_tensor_cores(in_dtype, acc_dtype,
                                                                 instruction):
    """64 x 64 x 64 tiles over 4 warps: 2 x 2 warps of 32 x 32, each 8 fragments (16 for
    float64's 8 x 8 ones) a step; float8 into float16 accumulates in float32 and rounds once.
    Loads of 1-byte elements are copied ahead (by the TMA)."""
    import ml_dtypes
    from test_matrix import matmul_kernel
    dtype = getattr(ml_dtypes, in_dtype) if isinstance(in_dtype, str) else in_dtype
    a = np.zeros((256, 256), dtype)
    out = np.zeros((256, 256), np.int32 if acc_dtype == "int32" else np.float32)
    compiled = ct.compile(matmul_kernel, (a, a, out, 64, 64, 64, getattr(ct, acc_dtype)),
                          arch="sm_90")
    steps = 16 if in_dtype == np.float64 else 2
    assert compiled.ptx.count(instruction) >= steps * (16 if in_dtype == np.float64 else 8)
    if in_dtype != np.float64:
        assert "fma.rn.f64" not in compiled.ptx  # not the general path
        # copied ahead by the tensor memory accelerator on sm_90
        assert "cp.async.bulk.tensor.2d" in compiled.ptx
    if compiled.cubin is not None:
        assert compiled.spill_bytes == 0


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_products_need_float8_tensor_cores(dtype):
    """sm_80 has none: the error says what is needed, and where; sm_90 has them."""
    import ml_dtypes
    from test_matrix import matmul_kernel
    a = np.zeros((64, 64), getattr(ml_dtypes, dtype))
    args = (a, a, np.zeros((64, 64), np.float32), 32, 32, 32, ct.float32)
    with pytest.raises(ct.TileUnsupportedFeatureError) as caught:
        ct.compile(matmul_kernel, args, arch="sm_80")
    assert caught.value.needs == (8, 9)
    assert f"mma of {dtype} needs float8 tensor cores (compute capability 8.9" in str(
        caught.value)
    assert "acc = ct.mma(a, b, acc)" in str(caught.value)
    assert "mma.sync.aligned.m16n8k32" in ct.compile(matmul_kernel, args, arch="sm_90").ptx


@pytest.mark.parametrize("arch", ARCHES)
def test_batched_products_run_on_tensor_cores(arch):
    """A block's tiles hold 4 matrices each: one product per batch element on tensor cores
    (2 x 2 warps over each 32 x 32 result, 2 fragments of 16 x 8 a warp, 4 k-steps)."""
    from test_matrix import mma_kernel
    a = np.zeros((4, 32, 64), np.float16)
    b = np.zeros((4, 64, 32), np.float16)
    c = np.zeros((4, 32, 32), np.float32)
    compiled = ct.compile(mma_kernel(), (a, b, c, c, a.shape, b.shape, c.shape, (0, 0, 0),
                                         ct.float16, ct.float16), arch=arch)
    assert compiled.ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") >= 4 * 2 * 4
    assert "fma.rn.f64" not in compiled.ptx


@pytest.mark.parametrize("arch", ARCHES)
def test_matmul_operator_runs_on_tensor_cores(arch):
    """``x @ y`` of float16 tiles: a product into a float32 accumulator on tensor cores,
    rounded to float16 once."""
    @ct.kernel
    def product(a, b, c):
        ct.store(c, (0, 0), ct.load(a, (0, 0), (64, 64)) @ ct.load(b, (0, 0), (64, 64)))
    a = np.zeros((64, 64), np.float16)
    ptx = ct.compile(product, (a, a, a), arch=arch).ptx
    instruction = "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" if arch == "sm_90" \
        else "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    assert instruction in ptx and "fma.rn.f64" not in ptx


def test_float32_matmul_takes_the_general_path():
    from test_matrix import matmul_kernel
    a = np.zeros((64, 64), np.float32)
    compiled = ct.compile(matmul_kernel, (a, a, a, 32, 32, 16, ct.float32))
    assert "mma.sync" not in compiled.ptx and "fma.rn.f64" in compiled.ptx


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("tiles,num_warps", [((128, 128, 32), 4), ((128, 256, 64), 8)],
                         ids=["128x128x32", "128x256x64"])
def test_large_float16_matmul_tiles_do_not_spill(tiles, num_warps, arch):
    """The issue's sizes: the accumulator (128 or 128 float32 registers a thread), the
    fragments and the addresses of the pipelined copies fit in registers."""
    from test_matrix import matmul_kernel
    a = np.zeros((1024, 1024), np.float16)
    compiled = ct.compile(matmul_kernel.replace_hints(num_warps=num_warps),
                          (a, a, a, *tiles, ct.float32), arch=arch)
    instruction = "wgmma.mma_async" if arch == "sm_90" else "mma.sync.aligned.m16n8k16"
    assert instruction in compiled.ptx and "cp.async" in compiled.ptx
    assert ".local" not in compiled.ptx
    if compiled.cubin is not None:
        assert compiled.registers > 0 and compiled.spill_bytes == 0


def _float16_matmul(arch, shape=(1024, 1024), tiles=(128, 128, 32), **hints):
    from test_matrix import matmul_kernel
    a = np.zeros(shape, np.float16)
    kernel = matmul_kernel.replace_hints(**hints) if hints else matmul_kernel
    return ct.compile(kernel, (a, a.T.copy(), np.zeros((shape[0], shape[0]), np.float32),
                               *tiles, ct.float32), arch=arch)


# 128 x 128 float32 results leave through shared memory, rows padded by 16 bytes
RESULT_BUFFER_BYTES = 128 * (128 * 4 + 16)
BARRIER_BLOCK_BYTES = 1024  # the mbarriers of a ring of TMA copies, after its stages


def _copied_ahead(ptx, arch):
    """True where the k-loop's tiles are copied ahead: by the tensor memory accelerator on
    sm_90 (one thread starts a tile's copy, an mbarrier says it landed), by ``cp.async``
    from every thread before."""
    if arch == "sm_90":
        return "cp.async.bulk.tensor" in ptx and "mbarrier.try_wait.parity" in ptx
    return "cp.async.cg.shared.global" in ptx and "cp.async.commit_group" in ptx


@pytest.mark.parametrize("arch", ARCHES)
def test_k_loop_loads_are_pipelined(arch):
    """The loads that feed mma in the k-loop are copied ahead into a ring of stages in
    shared memory: 4 stages of 16 KB for 128 x 128 x 32 float16 tiles, copies 3 iterations
    ahead, one barrier an iteration (the operands are read where they landed). sm_80:
    ``cp.async`` from every thread. sm_90: the TMA, a few boxes a stage, each
    stage's landing told by its mbarrier (waited for without a barrier); wgmma runs on
    while the next copies are issued."""
    compiled = _float16_matmul(arch)
    ptx = compiled.ptx
    assert _copied_ahead(ptx, arch)
    stores_result = 2  # barriers around the result's pass through shared memory
    if arch == "sm_90":
        assert "cp.async.cg" not in ptx and "cp.async.wait_group" not in ptx
        assert ptx.count("mbarrier.init.shared::cta.b64") == 4
        # three boxes a stage (A's rows of 64 bytes, B's two columns of 128 bytes), 3
        # stages started before the loop and one an iteration
        starts = ptx.count("mbarrier.arrive.expect_tx")
        assert starts == 3 + 1 and ptx.count("cp.async.bulk.tensor.2d") == 3 * starts
        assert compiled.dynamic_shared_bytes == 4 * 16 * 1024 + BARRIER_BLOCK_BYTES + \
            RESULT_BUFFER_BYTES
        assert "wgmma.wait_group.sync.aligned 1;" in ptx
        # one barrier once the mbarriers are made, one an iteration
        assert ptx.count("bar.sync") == 2 + stores_result
    else:
        assert "cp.async.wait_group 2;" in ptx  # 2 younger copy groups may still run
        # the ring, and the scratch buffer the float32 result is stored through
        assert compiled.dynamic_shared_bytes == 4 * 16 * 1024 + RESULT_BUFFER_BYTES
        assert "mma.sync.aligned.m16n8k16" in ptx and "ldmatrix" in ptx
        assert ptx.count("bar.sync") == 1 + stores_result


@pytest.mark.parametrize("stages", [1, 2, 3, 8])
def test_num_stages_option_sets_the_ring(stages):
    compiled = _float16_matmul("sm_90", num_stages=stages)
    if stages == 1:  # no pipelining: loads to registers, operands through scratch memory
        assert "cp.async" not in compiled.ptx and "mbarrier" not in compiled.ptx
        return
    assert compiled.ptx.count("mbarrier.init.shared::cta.b64") == stages
    assert compiled.dynamic_shared_bytes == stages * 16 * 1024 + BARRIER_BLOCK_BYTES + \
        RESULT_BUFFER_BYTES


@pytest.mark.parametrize("stages", [2, 3, 8])
def test_num_stages_option_sets_the_ring_of_copies_by_threads(stages):
    """Loads with ``allow_tma=False`` are copied by ``cp.async`` on sm_90 too."""
    from test_matrix import matmul_kernel_without_tma
    a = np.zeros((1024, 1024), np.float16)
    compiled = ct.compile(matmul_kernel_without_tma.replace_hints(num_stages=stages), (
        a, a, np.zeros((1024, 1024), np.float32), 128, 128, 32, ct.float32), arch="sm_90")
    assert "mbarrier" not in compiled.ptx and "cp.async.bulk" not in compiled.ptx
    assert f"cp.async.wait_group {stages - 2};" in compiled.ptx
    assert compiled.dynamic_shared_bytes == stages * 16 * 1024 + RESULT_BUFFER_BYTES


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("num_stages", [3, 4])
def test_results_of_mma_are_stored_in_16_byte_vectors(arch, num_stages):
    """A product's result (pairs of a row in each thread's registers) leaves through shared
    memory as 16-byte vectors, in column blocks where the whole 128 x 256 float32 tile does
    not fit beside the ring (both cases here)."""
    compiled = _float16_matmul(arch, tiles=(128, 256, 64), num_warps=8, num_stages=num_stages)
    stores = re.findall(r"st\.global\S*", compiled.ptx)
    assert stores and set(stores) == {"st.global.v4.u32"}, set(stores)
    assert compiled.spill_bytes == 0


@pytest.mark.parametrize("arch", ARCHES)
def test_transposed_loads_are_pipelined_and_read_k_major(arch):
    """``ct.load(BT, (k, bn), (TK, TN), order=(1, 0))``: the rows of B^T are copied ahead
    as they lie (no element-by-element global loads) and read K-major where they landed:
    ``ldmatrix`` without ``.trans`` (sm_80), ``wgmma`` with B not transposed (sm_90)."""
    from test_matrix import transposed_operands_kernel
    a = np.zeros((128, 128), np.float16)
    compiled = ct.compile(transposed_operands_kernel, (
        a, a, np.zeros((128, 128), np.float32), 128, 64, 64, 64, "C", (1, 0), ct.float32),
        arch=arch)
    ptx = compiled.ptx
    assert _copied_ahead(ptx, arch) and "ld.global" not in ptx
    if arch == "sm_90":
        # imm-trans-a, imm-trans-b: both operands K-major
        assert re.findall(r"wgmma\.mma_async[^;]*, 0, 0; }", ptx)
        assert not re.findall(r"wgmma\.mma_async[^;]*, 0, 1; }", ptx)
    else:
        assert "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x2.trans" not in ptx
    assert compiled.spill_bytes == 0


def test_a_product_of_a_product_reads_a_from_registers():
    """The float16 result of a wgmma is in the registers wgmma wants A in: the second
    product takes them as they are (no pass through shared memory)."""
    from test_matrix import chained_products_kernel
    a = np.zeros((128, 64), np.float16)
    compiled = ct.compile(chained_products_kernel, (a, a, a, np.zeros((128, 64), np.float32),
                                                    64, 64, 64, 64), arch="sm_90")
    products = re.findall(r"wgmma\.mma_async[^;]*;", compiled.ptx)
    from_registers = [p for p in products if re.search(r"\}, \{%r\d+,%r\d+,%r\d+,%r\d+\}, ", p)]
    assert len(products) == 8 and len(from_registers) == 4
    assert compiled.spill_bytes == 0


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("x_fixed", [True, False], ids=["x", "y"])
def test_loop_invariant_operand_is_copied_once(arch, x_fixed):
    """An operand loaded before the loop that only feeds its products is copied into shared
    memory once (cp.async, waited for once) and read there by every product: no global
    load and no write of it from registers in the loop."""
    from test_matrix import loop_invariant_operand_kernel
    a = np.zeros((128, 256), np.float16)
    compiled = ct.compile(loop_invariant_operand_kernel, (
        a, a, np.zeros((128, 64), np.float32), 64, 64, 64, 4, x_fixed, "C"), arch=arch)
    ptx = compiled.ptx
    assert "ld.global" not in ptx and ptx.count("cp.async.wait_group 0;") == 1
    assert _copied_ahead(ptx, arch)
    # (the loop starts by waiting for its stage)
    loop = ptx.split("mbarrier.try_wait" if arch == "sm_90" else "cp.async.wait_group 2;")[1]
    products = loop[:loop.rindex("mma")]  # (the result goes through shared memory after)
    assert "st.shared" not in products
    assert compiled.spill_bytes == 0


def test_attention_does_one_exponential_a_score_and_two_blocks_fit_an_sm():
    """The benchmark's flash attention, head dim 64, 128 x 64 tiles, 8 warps, on sm_90: the
    running maximum and sum, (128, 1) tiles in the scores' layout, hold one value a row in
    each thread (registers that repeat an element are one value), so a thread computes 32
    exponentials of scores and 2 of the rescaling factor; the queries are copied once, the
    accumulator's zeros need no pass through shared memory, and two blocks fit an SM."""
    from numba_tile.bench.kernels import attention_launch
    q = np.zeros((1, 2, 512, 64), np.float16)
    kernel, grid, args = attention_launch(q, q, q, q.copy(), tile_m=128, tile_n=64,
                                          num_warps=8)
    compiled = ct.compile(kernel, args, arch="sm_90")
    assert compiled.ptx.count("ex2.approx.ftz.f32") == 128 * 64 // 256 + 2
    assert "ld.global" not in compiled.ptx
    assert compiled.shared_bytes <= 113 * 1024 and compiled.spill_bytes == 0
    if compiled.cubin is not None:
        assert compiled.registers <= 128


@ct.kernel
def two_products_kernel(a, b, out):
    x = ct.load(a, (0, 0), (64, 64))
    y = ct.load(b, (0, 0), (64, 64))
    first = ct.mma(x, y, ct.zeros((64, 64), ct.float32))
    second = ct.mma(y, x, ct.zeros((64, 64), ct.float32))
    ct.store(out, (0, 0), second - first)


def _wait_counts(ptx):
    return [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", ptx)]


def test_a_product_is_waited_for_where_read_counting_the_younger_ones():
    """Each product's result is passed through a wait where first read: the second with
    no younger product running (0), the first with one (1). (These two read operands from
    the scratch buffer, so each is also waited for at once, 0.) In the interpreter the
    result is the same as the two products'."""
    a = np.arange(64 * 64, dtype=np.float16).reshape(64, 64) / np.float16(4096)
    b = a.T.copy()
    compiled = ct.compile(two_products_kernel.replace_hints(num_warps=4),
                          (a, b, np.zeros((64, 64), np.float32)), arch="sm_90")
    assert compiled.ptx.count("wgmma.mma_async") > 0
    assert _wait_counts(compiled.ptx) == [0, 0, 0, 1]
    out = np.full((64, 64), np.nan, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), two_products_kernel, (a, b, out))
    expected = b.astype(np.float64) @ a.astype(np.float64) - a.astype(np.float64) @ b
    assert np.abs(out - expected).max() <= 1e-3 * np.abs(expected).max()


def test_waits_that_do_not_settle_wait_for_every_product(monkeypatch):
    """Where the data flow would not settle, every wait waits for all products (count 0)."""
    from numba_tile.compiler.frontend import deferred_products
    monkeypatch.setattr(deferred_products, "ROUNDS_PER_BLOCK", -10)
    a = np.zeros((64, 64), np.float16)
    compiled = ct.compile(two_products_kernel.replace_hints(num_warps=4, occupancy=1),
                          (a, a, np.zeros((64, 64), np.float32)), arch="sm_90")
    assert _wait_counts(compiled.ptx) == [0, 0, 0, 0]


def test_products_off_hopper_need_no_waits():
    """On sm_80 the products are ``mma.sync``: nothing to wait for, no ``wgmma`` text."""
    a = np.zeros((64, 64), np.float16)
    compiled = ct.compile(two_products_kernel.replace_hints(num_warps=4),
                          (a, a, np.zeros((64, 64), np.float32)), arch="sm_80")
    assert "mma.sync" in compiled.ptx and "wgmma" not in compiled.ptx


def _loop_commits(ptx):
    """The text after each ``wgmma.commit_group``."""
    return ptx.split("wgmma.commit_group.sync.aligned;")[1:]


@pytest.mark.parametrize("causal", [False, True])
def test_pipelined_attention_runs_the_values_product_during_the_softmax(causal):
    """The benchmark's pipelined attention (head dim 128, 128 x 64 tiles, 8 warps) on
    sm_90: four products (the first scores, the loop's scores and ``P V``, the last
    ``P V``); in the loop the scores are not waited for before ``P V`` starts, and then
    with one product running (``wait_group 1``) before the first exponential; no
    serialized ``wgmma`` (ptxas's C7509 warning), no spills."""
    import warnings

    from numba_tile.bench.kernels import attention_launch
    q = np.zeros((1, 2, 512, 128), np.float16)
    kernel, grid, args = attention_launch(q, q, q, q.copy(), causal=causal, tile_m=128,
                                          tile_n=64, num_warps=8, pipelined=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = ct.compile(kernel, args, arch="sm_90")
    assert not [w for w in caught if "serialized" in str(w.message)]
    after = _loop_commits(compiled.ptx)
    assert len(after) == 4
    scores_to_values = after[1]
    assert "wgmma.wait_group" not in scores_to_values
    values_to_softmax = after[2][:after[2].index("ex2.approx")]
    assert _wait_counts(values_to_softmax) == [1]
    assert compiled.spill_bytes == 0


def test_plain_attention_waits_for_the_values_product_after_the_next_copies():
    """In the plain loop (``P V`` last), its product is waited for at the end of the
    iteration, once the copies of a later iteration are started."""
    from numba_tile.bench.kernels import attention_launch
    q = np.zeros((1, 2, 512, 64), np.float16)
    kernel, grid, args = attention_launch(q, q, q, q.copy(), tile_m=128, tile_n=64,
                                          num_warps=8)
    compiled = ct.compile(kernel, args, arch="sm_90")
    values = _loop_commits(compiled.ptx)[1]
    first_wait = values.index("wgmma.wait_group")
    assert "cp.async.bulk.tensor" in values[:first_wait]


def test_too_many_stages_for_shared_memory_turn_pipelining_off():
    """8 stages of 48 KB (128 x 256 x 64 tiles) do not fit: the loads are plain loads."""
    compiled = _float16_matmul("sm_90", tiles=(128, 256, 64), num_stages=8, num_warps=8)
    assert "cp.async" not in compiled.ptx and "wgmma.mma_async" in compiled.ptx


def test_loads_of_unaligned_arrays_are_not_pipelined():
    """Rows of 72 bytes: a 16-byte copy could straddle the end of a row."""
    compiled = _float16_matmul("sm_90", shape=(64, 36), tiles=(32, 32, 16))
    assert "cp.async" not in compiled.ptx and "mma.sync" in compiled.ptx


@pytest.mark.parametrize("arch", ARCHES)
def test_batched_k_loop_runs_on_tensor_cores_with_pipelined_loads(arch):
    """3-d tiles with a batch of one are one matrix: tensor cores, copies ahead."""
    from test_matrix import batched_matmul_kernel
    a = np.zeros((4, 256, 256), np.float16)
    compiled = ct.compile(batched_matmul_kernel, (a, a, np.zeros_like(a, np.float32), 128,
                                                  128, 64), arch=arch)
    instruction = "wgmma.mma_async" if arch == "sm_90" else "mma.sync.aligned.m16n8k16"
    assert instruction in compiled.ptx and _copied_ahead(compiled.ptx, arch)
    if arch == "sm_90":  # boxes of one matrix of the 3-d arrays
        assert "cp.async.bulk.tensor.3d" in compiled.ptx


def test_negated_module_constant_compiles():
    """``-math.inf`` folds to a constant (Numba had no implementation for the folded op)."""
    import math

    @ct.kernel
    def fill(x):
        ct.store(x, (0,), ct.full((16,), -math.inf, ct.float32))
    compiled = ct.compile(fill, (np.zeros(16, np.float32),))
    # -inf, stored (as a float constant, or as the 32-bit word a predicated store moves)
    assert "0fFF800000" in compiled.ptx or "-8388608" in compiled.ptx


@pytest.mark.parametrize("arch", ARCHES)
def test_tf32_products_run_on_tensor_cores(arch):
    """``ct.mma(a.astype(ct.tfloat32), b.astype(ct.tfloat32), acc)`` in the k-loop: the
    float32 loads are pipelined (cp.async). sm_80: mma.sync m16n8k8 (A by ldmatrix, B element
    by element), each fragment rounded as read. sm_90: wgmma m64nNk8, which reads B K-major
    only: each stage is rounded, and its B transposed, in place."""
    from numba_tile.bench.kernels import matmul_launch
    a = np.zeros((512, 512), np.float32)
    kernel, grid, args = matmul_launch(a, a, a, tile_m=64, tile_n=64, tile_k=32, tf32=True)
    compiled = ct.compile(kernel, args, arch=arch)
    assert _copied_ahead(compiled.ptx, arch)
    assert "fma.rn.f64" not in compiled.ptx  # not the general path
    if arch == "sm_90":
        assert compiled.ptx.count("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32") >= 4
        assert "mma.sync" not in compiled.ptx
        # the TMA rounds both tiles as it copies them (so only B is transposed in place)
        assert [spec[6] for spec in compiled.tensor_maps] == [True, True]
    else:
        assert compiled.ptx.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") >= 16
    if compiled.cubin is not None:
        assert compiled.spill_bytes == 0


def test_tiles_also_read_unrounded_are_copied_as_they_are():
    """A float32 tile that one product reads rounded to tfloat32 and another as float32:
    its copy (TMA) keeps the float32 values, rounded where the tfloat32 product reads them;
    the tfloat32 product's other operand, only read rounded, is rounded by its copy."""
    @ct.kernel
    def both_products(A, B, E, C, D):
        acc = ct.full((64, 64), 0, ct.float32)
        exact = ct.full((64, 64), 0, ct.float32)
        for k in range(4):
            a = ct.load(A, (0, k), (64, 32))
            b = ct.load(B, (k, 0), (32, 64))
            e = ct.load(E, (k, 0), (32, 64))
            acc = ct.mma(a.astype(ct.tfloat32), b.astype(ct.tfloat32), acc)
            exact = ct.mma(a, e, exact)
        ct.store(C, (0, 0), acc)
        ct.store(D, (0, 0), exact)
    a = np.zeros((128, 128), np.float32)
    compiled = ct.compile(both_products, (a, a, a, a, a), arch="sm_90")
    assert [(spec[0], spec[6]) for spec in compiled.tensor_maps] == [
        (0, False), (1, True), (2, False)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_operands_cast_to_a_dtype_known_before_typing_are_pipelined(dtype):
    """``astype(dtype)`` with ``dtype = ct.tfloat32 if A.dtype == ct.float32 else A.dtype``
    (cuda.tile's matmul sample): the branch on the constant is decided first, then the
    cast is the tfloat32 rounding in the stage (float32) or no cast at all (float16)."""
    from test_matrix import sample_matmul_kernel
    a = np.zeros((128, 128), dtype)
    compiled = ct.compile(sample_matmul_kernel, (a, a, a, 64, 64, 32), arch="sm_90")
    assert _copied_ahead(compiled.ptx, "sm_90") and "ld.global" not in compiled.ptx
    assert "wgmma.mma_async" in compiled.ptx and compiled.spill_bytes == 0


def test_operands_cast_to_a_constant_parameter_dtype_are_pipelined():
    @ct.kernel
    def k_loop(A, B, C, DTYPE: ct.Constant):
        acc = ct.full((64, 64), 0, ct.float32)
        for k in range(4):
            a = ct.load(A, (0, k), (64, 32)).astype(DTYPE)
            b = ct.load(B, (k, 0), (32, 64)).astype(DTYPE)
            acc = ct.mma(a, b, acc)
        ct.store(C, (0, 0), acc)
    a = np.zeros((128, 128), np.float32)
    compiled = ct.compile(k_loop, (a, a, a, ct.tfloat32), arch="sm_80")
    assert "cp.async.cg" in compiled.ptx and "mma.sync.aligned.m16n8k8" in compiled.ptx
    # another dtype: converted in registers, from plain loads
    compiled = ct.compile(k_loop, (a, a, a, ct.float16), arch="sm_80")
    assert "cp.async" not in compiled.ptx and "mma.sync.aligned.m16n8k16" in compiled.ptx


@ct.kernel
def masked_k_loop(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
                  SCALE: ct.Constant[bool]):
    """The loads come after a branch on a constant, in a block every iteration still runs."""
    bm, bn = ct.bid(0), ct.bid(1)
    last = ct.num_tiles(A, axis=1, shape=(TM, TK)) if SCALE else 1
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(last):
        if SCALE:
            acc = acc * 1.0
        a = ct.load(A, (bm, k), (TM, TK))
        b = ct.load(B, (k, bn), (TK, TN))
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc)


def test_loads_after_a_branch_in_the_loop_are_pipelined():
    a = np.zeros((256, 256), np.float16)
    compiled = ct.compile(masked_k_loop, (a, a, np.zeros((256, 256), np.float32), 64, 64, 32,
                                          True), arch="sm_80")
    assert "cp.async.cg.shared.global" in compiled.ptx


@pytest.mark.parametrize("kind", ["carried", "reassigned", "looked_up", "some_iterations"])
def test_k_loops_whose_indices_the_loop_variable_does_not_give_are_not_pipelined(kind):
    """Carried, reassigned or looked-up tile indices, and a product in a branch: copying
    ahead would stage the wrong tiles (or leave a product reading a stage being refilled)."""
    from test_matrix import UNPIPELINED_K_LOOPS
    a = np.zeros((64, 64), np.float16)
    compiled = ct.compile(UNPIPELINED_K_LOOPS[kind][0],
                          (a, a, np.zeros((64, 64), np.float32), 32, 32, 16), arch="sm_90")
    assert "cp.async" not in compiled.ptx


@ct.kernel
def nested_k_loop(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    bn = ct.bid(1)
    for bm in range(ct.num_tiles(A, axis=0, shape=(TM, TK))):
        acc = ct.full((TM, TN), 0, ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
            acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
        ct.store(C, (bm, bn), acc)


@pytest.mark.parametrize("arch,copy", [("sm_80", r"\bcp\.async\.cg"),
                                       ("sm_90", r"\bcp\.async\.bulk\.tensor")])
def test_nested_k_loops_are_pipelined(arch, copy):
    """The inner loop copies ahead; each run of it waits before its first copies until the
    last run's products and copies are done (one barrier more than a lone k-loop's)."""
    a = np.zeros((128, 128), np.float16)
    args = (a, a, np.zeros((128, 128), np.float32), 64, 64, 32)
    nested = ct.compile(nested_k_loop, args, arch=arch).ptx
    alone = ct.compile(one_k_loop, args, arch=arch).ptx
    assert re.search(copy, nested)
    assert len(re.findall(r"\bbar\.sync", nested)) == len(re.findall(r"\bbar\.sync", alone)) + 1


@ct.kernel
def one_k_loop(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    """:func:`nested_k_loop` for one row block of ``C``."""
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    ct.store(C, (bm, bn), acc)


def test_one_stage_reserves_no_ring():
    with_ring = _float16_matmul("sm_90", num_stages=2)
    without = _float16_matmul("sm_90", num_stages=1)
    assert without.dynamic_shared_bytes < with_ring.dynamic_shared_bytes
    # scratch only: the operands' (32 KB), or the result's pass to coalesced stores
    assert without.dynamic_shared_bytes <= max(32 * 1024, RESULT_BUFFER_BYTES)


def test_each_architecture_gets_its_own_lowering():
    """sm_90 and sm_100 share a shared-memory size; wgmma is sm_90's alone."""
    first = _float16_matmul("sm_90", tiles=(128, 128, 64))
    assert "wgmma.mma_async" in first.ptx
    try:
        second = _float16_matmul("sm_100", tiles=(128, 128, 64))
    except Exception as error:  # an NVVM without sm_100
        pytest.skip(f"no sm_100 here: {type(error).__name__}")
    assert "wgmma" not in second.ptx and "mma.sync" in second.ptx


@pytest.mark.parametrize("shapes,dtype", [(((1, 2), (2, 1)), np.int8),
                                          (((8, 16), (16, 4)), np.float16)])
def test_products_off_wgmma_issue_no_empty_wgmma_groups(shapes, dtype):
    """A kernel whose products all run as ``mma.sync`` (or the general product) on sm_90
    has no wgmma commit or wait: compute-sanitizer reported the wait of an empty group as an
    out-of-bounds shared memory read and stopped the kernel."""
    from test_matrix import mma_kernel
    (a_shape, b_shape) = shapes
    a, b = np.ones(a_shape, dtype), np.ones(b_shape, dtype)
    acc_dtype = np.int32 if dtype == np.int8 else np.float32
    c = np.zeros((a_shape[0], b_shape[1]), acc_dtype)
    kind = ct.int8 if dtype == np.int8 else ct.float16
    compiled = ct.compile(mma_kernel(), (a, b, c, c.copy(), a.shape, b.shape, c.shape, (0, 0),
                                         kind, kind), arch="sm_90")
    assert "wgmma" not in compiled.ptx
    # a product that does run as wgmma keeps its commit and wait
    big = _float16_matmul("sm_90")
    assert "wgmma.commit_group" in big.ptx and "wgmma.wait_group" in big.ptx


@ct.kernel
def _product_stored_directly(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int]):
    acc = ct.mma(ct.load(a, (ct.bid(0), 0), (TM, 16)), ct.load(b, (0, ct.bid(1)), (16, TN)),
                 ct.full((TM, TN), 0, ct.float32))
    ct.store(c, (ct.bid(0), ct.bid(1)), acc.astype(c.dtype))


@pytest.mark.parametrize("arch", ARCHES)
def test_stores_checked_against_the_bounds_are_predicated_not_branched(arch):
    """A product's result stored directly (here: a 64 x 64 float16 tile, pairs of a row in
    each thread, into an aligned array whose rows end inside a tile) checks each vector
    against the array's bounds; each check is the predicate of its store, not a branch
    around it, so that ptxas can schedule the stores together."""
    a = np.zeros((100, 16), np.float16)
    c = np.zeros((100, 128), np.float16)
    compiled = ct.compile(_product_stored_directly, (a, a.T.copy(), c, 64, 64), arch=arch)
    stores = re.findall(r"(@\S+\s+)?(st\.global\S*)", compiled.ptx)
    assert stores and all(predicate for predicate, _ in stores), stores
    assert compiled.spill_bytes == 0
