"""GPU mode: compiled kernels on a real GPU, checked against NumPy (needs a CUDA GPU).

Runs where a GPU is present (the device machine); CI has none. Covers the compiler's first
slice: grid queries, load/store (partial tiles, order, strided views) and elementwise
arithmetic, with arrays and streams from numba, CuPy and PyTorch.
"""

import numpy as np
import pytest

import numba_tile as ct
from numba_tile import demo
from conftest import gpu_present as _gpu_present


pytestmark = pytest.mark.skipif(not _gpu_present(), reason="needs a CUDA GPU")


def _libraries():
    """(name, to_device, to_host, stream) for each GPU array library installed."""
    if not _gpu_present():
        return []
    from numba import cuda
    found = [("numba", cuda.to_device, lambda a: a.copy_to_host(), cuda.default_stream())]
    try:
        import cupy
        found.append(("cupy", cupy.asarray, cupy.asnumpy, cupy.cuda.get_current_stream()))
    except ImportError:
        pass
    try:
        import torch
        found.append(("torch", lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(),
                      lambda t: t.cpu().numpy(), torch.cuda.current_stream()))
    except ImportError:
        pass
    return found


def _synchronize():
    from numba import cuda
    cuda.synchronize()


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))


@pytest.mark.parametrize("library", _libraries(), ids=lambda lib: lib[0])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32])
def test_vector_add_with_a_partial_tile(library, dtype):
    _, to_device, to_host, stream = library
    rng = np.random.default_rng(0)
    n, tile = 1000, 256
    a = (rng.random(n) * 100).astype(dtype)
    b = (rng.random(n) * 100 + 1).astype(dtype)
    poison = np.full(n + 24, 77, dtype)
    c = to_device(poison)
    ct.launch(stream, (ct.cdiv(n, tile),), vector_add, (to_device(a), to_device(b), c[:n], tile))
    _synchronize()
    out = to_host(c)
    expected = (a.astype(np.float64) + b.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(out[:n], expected)
    np.testing.assert_array_equal(out[n:], poison[n:])  # nothing written past the end


@ct.kernel
def two_dimensional(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    x = ct.load(a, (i, j), (TM, TN))
    y = ct.load(b, (i, j), (TM, TN), order="F")
    ct.store(c, (i, j), ct.maximum(x * y - x, y) / (x + y))


@pytest.mark.parametrize("library", _libraries(), ids=lambda lib: lib[0])
def test_two_dimensional_tiles_order_and_strided_views(library):
    _, to_device, to_host, stream = library
    rng = np.random.default_rng(1)
    m, n = 70, 100
    a = rng.random((m, n)).astype(np.float32) + 0.5
    b_t = rng.random((n, m)).astype(np.float32) + 0.5   # read through order="F"
    big = np.full((2 * m, n), np.nan, np.float32)
    c = to_device(big)
    view = c[::2] if library[0] != "torch" else c[::2, :]
    ct.launch(stream, (ct.cdiv(m, 16), ct.cdiv(n, 32)), two_dimensional,
              (to_device(a), to_device(b_t), view, 16, 32))
    _synchronize()
    out = to_host(c)
    x, y = a.astype(np.float64), b_t.T.astype(np.float64)
    expected = np.maximum(x * y - x, y) / (x + y)
    np.testing.assert_allclose(out[::2], expected, rtol=1e-6)
    assert np.isnan(out[1::2]).all()  # the rows between the view's rows are untouched


def test_compiled_once_per_signature():
    from numba import cuda
    a = cuda.to_device(np.ones(64, np.float32))

    def compiled():
        return {id(loaded) for loaded in vector_add.gpu_cache.values()}

    before = compiled()
    for _ in range(3):
        ct.launch(0, (1,), vector_add, (a, a, a, 64))
    ct.launch(0, (1,), vector_add, (a, a, a, 32))
    _synchronize()
    assert len(compiled() - before) <= 2  # one per distinct TILE, whatever the launches


@ct.kernel
def padded_copy(a, b, TILE: ct.Constant[int]):
    ct.store(b, (0,), ct.load(a, (0,), (TILE,), padding_mode=ct.PaddingMode.NEG_INF))


def test_padding_fills_the_elements_past_the_end():
    from numba import cuda
    a = np.arange(10, dtype=np.float32) + 1
    b = cuda.to_device(np.full(16, 5.0, np.float32))
    ct.launch(0, (1,), padded_copy, (cuda.to_device(a), b, 16))
    _synchronize()
    out = b.copy_to_host()
    np.testing.assert_array_equal(out[:10], a)
    assert np.all(np.isneginf(out[10:]))


def _numba_arrays(*arrays):
    from numba import cuda
    return tuple(cuda.to_device(a) for a in arrays)


softmax = demo.softmax  # the demo's kernel, the one users meet first


@pytest.mark.parametrize("dtype,tolerance", [(np.float32, 1e-5), (np.float16, 2e-3)])
@pytest.mark.parametrize("columns,tile", [(100, 128), (1000, 1024), (4096, 4096)])
def test_softmax(dtype, tolerance, columns, tile):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((33, columns)).astype(dtype)
    xd, yd = _numba_arrays(x, np.full_like(x, np.nan))
    ct.launch(0, (33,), softmax, (xd, yd, tile))
    _synchronize()
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    expected = e / e.sum(1, keepdims=True)
    out = yd.copy_to_host().astype(np.float64)
    assert np.max(np.abs(out - expected)) / np.max(np.abs(expected)) < tolerance


@ct.kernel
def layer_norm(x, w, b, y, TILE_N: ct.Constant[int]):
    i = ct.bid(0)
    row = ct.load(x, (i, 0), (1, TILE_N), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    n = x.shape[1]
    mean = ct.sum(row, axis=1, keepdims=True) / n
    centered = ct.where(ct.load(x, (i, 0), (1, TILE_N), padding_mode=ct.PaddingMode.NAN)
                        == ct.load(x, (i, 0), (1, TILE_N), padding_mode=ct.PaddingMode.NAN),
                        row - mean, 0.0)
    variance = ct.sum(centered * centered, axis=1, keepdims=True) / n
    normed = centered * ct.rsqrt(variance + 1e-5)
    weight = ct.load(w, (0, 0), (1, TILE_N)).astype(ct.float32)
    bias = ct.load(b, (0, 0), (1, TILE_N)).astype(ct.float32)
    ct.store(y, (i, 0), (normed * weight + bias).astype(y.dtype))


def test_layer_norm_half():
    rng = np.random.default_rng(3)
    rows, cols = 17, 1000
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    w = rng.standard_normal((1, cols)).astype(np.float16)
    b = rng.standard_normal((1, cols)).astype(np.float16)
    xd, wd, bd, yd = _numba_arrays(x, w, b, np.full_like(x, np.nan))
    ct.launch(0, (rows,), layer_norm, (xd, wd, bd, yd, 1024))
    _synchronize()
    x64 = x.astype(np.float64)
    normed = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    expected = normed * w.astype(np.float64) + b.astype(np.float64)
    out = yd.copy_to_host().astype(np.float64)
    assert np.max(np.abs(out - expected)) / np.max(np.abs(expected)) < 5e-3


@ct.kernel
def reduce_both_ways(a, rows_out, cols_out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(a, (0, 0), (TM, TN))
    ct.store(rows_out, (0, 0), ct.max(t, axis=1, keepdims=True))
    ct.store(cols_out, (0, 0), ct.sum(t, axis=0, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
@pytest.mark.parametrize("shape", [(64, 64), (8, 256), (128, 32)])
def test_reductions_across_lanes_and_warps(dtype, shape):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    ad, rd, cd = _numba_arrays(a, np.zeros((shape[0], 1), dtype), np.zeros((1, shape[1]), dtype))
    ct.launch(0, (1,), reduce_both_ways, (ad, rd, cd, *shape))
    _synchronize()
    np.testing.assert_array_equal(rd.copy_to_host(), a.max(1, keepdims=True))
    expected = a.astype(np.float64).sum(0, keepdims=True)
    error = np.max(np.abs(cd.copy_to_host() - expected)) / np.max(np.abs(expected))
    assert error < (1e-6 if dtype == np.float32 else 1e-12)


@ct.kernel
def shape_ops(a, out, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(a, (0, 0), (TM, TN))
    row_sums = ct.sum(t, axis=1)
    moved = ct.transpose(t) + ct.reshape(t, (TN, TM))
    outer = row_sums[:, None] + ct.max(t, axis=0)[None, :]
    ct.store(out, (0, 0), ct.transpose(moved) + outer + ct.broadcast_to(row_sums[:, None],
                                                                         (TM, TN)))


@pytest.mark.parametrize("shape", [(32, 64), (8, 128), (64, 16)])
def test_shape_ops_reductions_without_keepdims_and_broadcasting(shape):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape).astype(np.float32)
    ad, od = _numba_arrays(a, np.full(shape, np.nan, np.float32))
    ct.launch(0, (1,), shape_ops, (ad, od, *shape))
    _synchronize()
    x = a.astype(np.float64)
    row_sums = x.sum(1)
    moved = x.T + x.reshape(shape[1], shape[0])
    expected = moved.T + (row_sums[:, None] + x.max(0)[None, :]) + row_sums[:, None]
    out = od.copy_to_host()
    assert np.max(np.abs(out - expected)) / np.max(np.abs(expected)) < 1e-6


# -- copies ahead by the tensor memory accelerator (sm_90) ------------------------------------
def _matmul_reference(a, b):
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def test_tensor_maps_follow_the_arrays_of_each_launch():
    """One compiled k-loop kernel launched on other arrays of its signature, and on a view
    that starts 64 rows in: each launch's tensor maps (sm_90) describe that launch's arrays,
    and kernels launched one after the other without a synchronization each read theirs."""
    cupy = pytest.importorskip("cupy")
    from numba_tile.runtime.driver import current_arch
    from test_matrix import matmul_kernel
    from conftest import relative_error
    rng = np.random.default_rng(7)
    hosts = [(rng.standard_normal((256, 96)).astype(np.float16),
              rng.standard_normal((96, 128)).astype(np.float16)) for _ in range(2)]
    devices = [(cupy.asarray(a), cupy.asarray(b)) for a, b in hosts]
    cases = [(devices[0], hosts[0]), (devices[1], hosts[1]),
             ((devices[0][0][64:], devices[1][1]), (hosts[0][0][64:], hosts[1][1]))]
    outputs = []
    for (a, b), _ in cases:
        c = cupy.full((a.shape[0], b.shape[1]), np.nan, np.float32)
        ct.launch(0, (-(-a.shape[0] // 64), b.shape[1] // 64), matmul_kernel,
                  (a, b, c, 64, 64, 32, ct.float32))
        outputs.append(c)
    for c, (_, (a, b)) in zip(outputs, cases):
        assert relative_error(cupy.asnumpy(c), _matmul_reference(a, b)) < 1e-5
    if current_arch() == "sm_90":
        assert any(k.tensor_maps for k in matmul_kernel.gpu_cache.values())


def test_k_loop_over_an_empty_inner_extent_stores_zeros():
    """``A`` of shape (64, 0): the loop runs no iteration, and the launch makes tensor maps
    of the empty arrays (sm_90) without reading them."""
    cupy = pytest.importorskip("cupy")
    from test_matrix import matmul_kernel
    a = cupy.zeros((64, 0), np.float16)
    b = cupy.zeros((0, 64), np.float16)
    c = cupy.full((64, 64), np.nan, np.float32)
    ct.launch(0, (1, 1), matmul_kernel, (a, b, c, 64, 64, 32, ct.float32))
    assert np.array_equal(cupy.asnumpy(c), np.zeros((64, 64), np.float32))


def test_arrays_with_negative_strides_are_copied_by_threads():
    """Rows in reverse order (a negative stride): not specialized as aligned, so no tensor
    map is asked of them; the product is right."""
    cupy = pytest.importorskip("cupy")
    from test_matrix import matmul_kernel
    from conftest import relative_error
    rng = np.random.default_rng(8)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = cupy.full((128, 64), np.nan, np.float32)
    ct.launch(0, (2, 1), matmul_kernel, (cupy.asarray(a)[::-1], cupy.asarray(b), c, 64, 64,
                                         32, ct.float32))
    assert relative_error(cupy.asnumpy(c), _matmul_reference(a[::-1], b)) < 1e-5


@ct.kernel
def copy_tile_on(x: ct.IndexedWithInt64, i: ct.ScalarInt64):
    t = ct.load(x, (i,), (16,))
    ct.store(x, (i + 1,), t + 1)
    ct.store(x, (i + 2,), t + 2)


def test_int64_indexed_array_past_two_to_the_31_elements():
    """Tiles past element ``2**31`` of an int64-indexed array are read and written where
    they are, the last one partly (its coordinates, lengths and bounds checks are int64),
    and nothing past the array's end is written."""
    cupy = pytest.importorskip("cupy")
    n = 2 ** 31 + 40
    buffer = cupy.full(n + 16, 99, cupy.int8)
    x = buffer[:n]
    x[-40:] = cupy.arange(40, dtype=cupy.int8)
    ct.launch(0, (1,), copy_tile_on, (x, 2 ** 27))  # elements 2**31 .. 2**31 + 15
    _synchronize()
    tail = cupy.asnumpy(buffer[-56:])
    expected = np.concatenate([np.arange(16), np.arange(16) + 1, np.arange(8) + 2,
                               np.full(16, 99)]).astype(np.int8)
    np.testing.assert_array_equal(tail, expected)


# -- launch plans: cached launches of a signature seen before -------------------------------
def add_scaled(a, b, c, scale, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + scale * ct.load(b, (i,), (TILE,)))


@pytest.mark.parametrize("library", _libraries(), ids=lambda lib: lib[0])
def test_launches_of_a_signature_seen_before_take_its_plan(library, monkeypatch):
    """The first launch of a signature goes the general way, the next ones take its plan
    (``numba_tile.runtime.launch_plans``) with each launch's arrays, sizes, scalars and stream; an
    unaligned view, another dtype or a grid too large are not the plan's and go the general
    way (the grid's error comes from its checks)."""
    from conftest import GUARD, guarded, guards_untouched
    from numba_tile.runtime import launch as launcher
    _, to_device, to_host, stream = library
    kernel = ct.kernel(add_scaled)  # plans of its own
    general = []
    from numba_tile.runtime.gpu_launch import launch_on_gpu
    monkeypatch.setattr(launcher, "launch_on_gpu",
                        lambda *args, **kwargs: general.append(args[3]) or
                        launch_on_gpu(*args, **kwargs))
    rng = np.random.default_rng(11)
    for n, offset, dtype, expect_general in [(64, 0, np.float32, True),
                                             (64, 0, np.float32, False),
                                             (1000, 0, np.float32, False),
                                             (1000, 1, np.float32, True),
                                             (1000, 1, np.float32, False),
                                             (512, 0, np.float16, True),
                                             (512, 0, np.float16, False),
                                             (300, 0, np.float32, False)]:
        a, b = (rng.random(n + 1).astype(dtype) + 0.5 for _ in range(2))
        scale = float(rng.random() + 1)
        buffer, _ = guarded((n,), dtype)
        device_buffer = to_device(buffer)
        out = device_buffer[GUARD:GUARD + n]
        calls = len(general)
        ct.launch(stream, (ct.cdiv(n, 64),), kernel,
                  (to_device(a)[offset:offset + n], to_device(b)[offset:offset + n], out,
                   scale, 64))
        _synchronize()
        assert (len(general) > calls) == expect_general, (n, offset, dtype)
        result = to_host(device_buffer)
        expected = a[offset:offset + n].astype(np.float64) + scale * b[offset:offset + n]
        np.testing.assert_allclose(result[GUARD:GUARD + n], expected,
                                   rtol=1e-6 if dtype == np.float32 else 2e-3)
        assert guards_untouched(result, (n,))
    assert len(kernel.launch_plans) == 3
    a = to_device(np.ones(64, np.float32))
    with pytest.raises(ValueError, match="grid"):  # from launch's own checks
        ct.launch(stream, (2**31,), kernel, (a, a, a, 2.0, 64))
    assert len(general) == 3


class _DriverVector:
    """A float32 vector in memory the driver allocated in the current context."""

    def __init__(self, driver, values):
        import ctypes
        self.driver, self.size = driver, len(values)
        self.pointer = ctypes.c_uint64()
        assert driver.cuMemAlloc_v2(ctypes.byref(self.pointer), ctypes.c_size_t(4 * self.size)) == 0
        self.__cuda_array_interface__ = {"shape": (self.size,), "typestr": "<f4",
                                         "strides": None, "version": 3,
                                         "data": (self.pointer.value, False)}
        host = np.ascontiguousarray(values, np.float32)
        assert driver.cuMemcpyHtoD_v2(self.pointer, host.ctypes.data_as(ctypes.c_void_p),
                                      ctypes.c_size_t(4 * self.size)) == 0

    def to_host(self):
        import ctypes
        host = np.empty(self.size, np.float32)
        assert self.driver.cuMemcpyDtoH_v2(host.ctypes.data_as(ctypes.c_void_p), self.pointer,
                                           ctypes.c_size_t(4 * self.size)) == 0
        return host


def test_a_thread_with_a_context_of_its_own_launches_in_it():
    """A kernel that launched in the device's primary context (and has a launch plan and
    driver arguments from there) launches in the context a thread made of its own, on that
    context's arrays; and again in the primary context afterwards."""
    import ctypes
    import threading
    from numba import cuda
    driver = ctypes.CDLL("libcuda.so.1")
    kernel = ct.kernel(add_scaled)
    ones = cuda.to_device(np.ones(64, np.float32))
    for _ in range(2):  # the general way, then the plan, in the primary context
        ct.launch(0, (1,), kernel, (ones, ones, cuda.device_array(64, np.float32), 1.0, 64))
    cuda.synchronize()
    found = {}

    def in_a_context_of_its_own():
        context = ctypes.c_void_p()
        assert driver.cuCtxCreate_v2(ctypes.byref(context), 0, 0) == 0  # made current
        try:
            a, b = _DriverVector(driver, np.arange(64)), _DriverVector(driver, np.ones(64))
            out = _DriverVector(driver, np.full(64, np.nan))
            for scale in (2.0, 3.0):
                ct.launch(0, (1,), kernel, (a, b, out, scale, 64))
                assert driver.cuCtxSynchronize() == 0
                found[scale] = out.to_host()
        except BaseException as error:  # reported by the test's thread
            found["error"] = error
        finally:
            driver.cuCtxDestroy_v2(context)

    thread = threading.Thread(target=in_a_context_of_its_own)
    thread.start()
    thread.join()
    assert "error" not in found, found.get("error")
    for scale in (2.0, 3.0):
        np.testing.assert_array_equal(found[scale], np.arange(64) + scale)
    out = cuda.device_array(64, np.float32)  # and the primary context's launches still run
    ct.launch(0, (1,), kernel, (ones, ones, out, 0.5, 64))
    np.testing.assert_array_equal(out.copy_to_host(), np.full(64, 1.5, np.float32))


@ct.kernel
def twice_plus(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), 2 * ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))


def test_a_kernel_without_a_cubin_loads_from_its_ptx(monkeypatch):
    """Where nvJitLink made no cubin, the driver compiles the kernel's PTX (passed as
    bytes: cuda.core reads a str as the name of a file)."""
    from numba import cuda
    import numba_tile.runtime.compile_entry as compiling
    monkeypatch.setattr(compiling, "link_cubin", lambda ptx, arch: (None, ""))
    monkeypatch.setenv("NUMBA_TILE_CACHE", "0")
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    buffer = cuda.to_device(np.full(256 + 16, np.nan, np.float32))
    out = buffer[8:8 + 256]
    kernel = ct.kernel(twice_plus.fn)
    ct.launch(0, (2,), kernel, (cuda.to_device(a), cuda.to_device(b), out, 128))
    assert next(iter(kernel.gpu_cache.values())).compiled.cubin is None
    result = buffer.copy_to_host()
    expected = 2 * a.astype(np.float64) + b
    assert np.abs(result[8:-8] - expected).max() <= 1e-6 * np.abs(expected).max()
    assert np.isnan(result[:8]).all() and np.isnan(result[-8:]).all()
