"""Interop on the GPU: JAX arrays (through DLPack or the CUDA array interface), CuPy and numba
device arrays on their own streams, launches captured in a CUDA graph (PyTorch's and CuPy's
capture) and replayed with new data, and launches from several host threads at once, each
compiling the kernel the first time.

Runs where a GPU is present (the device machine); each library's tests skip where it is not
installed.
"""

import threading

import numpy as np
import pytest

import numba_tile as ct
from conftest import gpu_present

pytestmark = pytest.mark.skipif(not gpu_present(), reason="needs a CUDA GPU")
N, TILE = 1 << 16, 1024


@ct.kernel
def axpy(x, y, out, a, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, (i,), a * ct.load(x, (i,), (TILE,)) + ct.load(y, (i,), (TILE,)))


def _expected(a, x, y):
    return a * np.asarray(x, np.float64) + np.asarray(y, np.float64)


def _close(out, expected):
    out = np.asarray(out, np.float64)
    return np.abs(out - expected).max() <= 1e-6 * np.abs(expected).max()


def test_torch_graph_capture_replays_with_new_data():
    torch = pytest.importorskip("torch")
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    out = torch.full((N,), float("nan"), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # compile and load outside the capture
        ct.launch(side, (N // TILE,), axpy, (x, y, out, 3.0, TILE))
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ct.launch(torch.cuda.current_stream(), (N // TILE,), axpy, (x, y, out, 3.0, TILE))
    for _ in range(3):
        x.copy_(torch.randn(N, device="cuda"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert _close(out.cpu().numpy(), _expected(3.0, x.cpu().numpy(), y.cpu().numpy()))


def test_cupy_graph_capture_replays_with_new_data():
    cp = pytest.importorskip("cupy")
    x = cp.random.standard_normal(N, dtype=cp.float32)
    y = cp.random.standard_normal(N, dtype=cp.float32)
    out = cp.full(N, cp.nan, cp.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()
    ct.launch(stream, (N // TILE,), axpy, (x, y, out, -2.0, TILE))
    stream.synchronize()
    with stream:
        stream.begin_capture()
        ct.launch(stream, (N // TILE,), axpy, (x, y, out, -2.0, TILE))
        graph = stream.end_capture()
    for _ in range(3):
        with stream:
            x[...] = cp.random.standard_normal(N, dtype=cp.float32)
            out.fill(cp.nan)
        graph.launch(stream)
        stream.synchronize()
        assert _close(cp.asnumpy(out), _expected(-2.0, cp.asnumpy(x), cp.asnumpy(y)))


def test_cupy_arrays_on_a_cupy_stream():
    cp = pytest.importorskip("cupy")
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        x = cp.random.standard_normal(N, dtype=cp.float32)
        y = cp.random.standard_normal(N, dtype=cp.float32)
        out = cp.full(N, cp.nan, cp.float32)
    ct.launch(stream, (N // TILE,), axpy, (x, y, out, 0.5, TILE))
    stream.synchronize()
    assert _close(cp.asnumpy(out), _expected(0.5, cp.asnumpy(x), cp.asnumpy(y)))


def test_numba_device_arrays_on_a_numba_stream():
    from numba import cuda
    rng = np.random.default_rng(0)
    stream = cuda.stream()
    x = cuda.to_device(rng.standard_normal(N).astype(np.float32), stream=stream)
    y = cuda.to_device(rng.standard_normal(N).astype(np.float32), stream=stream)
    out = cuda.to_device(np.full(N, np.nan, np.float32), stream=stream)
    ct.launch(stream, (N // TILE,), axpy, (x, y, out, 1.5, TILE))
    stream.synchronize()
    assert _close(out.copy_to_host(), _expected(1.5, x.copy_to_host(), y.copy_to_host()))


def test_jax_arrays_as_arguments():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU here")
    from numba import cuda
    x = jax.random.normal(jax.random.PRNGKey(0), (N,), jnp.float32)
    y = jax.random.normal(jax.random.PRNGKey(1), (N,), jnp.float32)
    jax.block_until_ready((x, y))  # JAX computes on its own stream
    out = cuda.to_device(np.full(N, np.nan, np.float32))  # (JAX arrays are immutable)
    ct.launch(0, (N // TILE,), axpy, (x, y, out, 2.5, TILE))
    cuda.synchronize()
    assert _close(out.copy_to_host(), _expected(2.5, np.asarray(x), np.asarray(y)))
    # a JAX array as the output: read-only, so the store is cuTile's error at its line
    frozen = jnp.full((N,), jnp.nan, jnp.float32)
    with pytest.raises(ct.TileTypeError, match="writes into a read-only array") as caught:
        ct.launch(0, (N // TILE,), axpy, (x, y, frozen, 2.5, TILE))
    assert "ct.store(out" in caught.value.loc.source_line
    assert np.isnan(np.asarray(frozen)).all()


def test_launches_from_several_host_threads_compile_once_each_and_agree():
    torch = pytest.importorskip("torch")
    kernel = ct.kernel(axpy.fn)  # not compiled yet: the threads race to compile it
    problems = []

    def work(k):
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
                out = torch.full((N,), float("nan"), device="cuda")
            for _ in range(20):
                ct.launch(stream, (N // TILE,), kernel, (x, y, out, float(k), TILE))
            stream.synchronize()
            if not _close(out.cpu().numpy(), _expected(k, x.cpu().numpy(), y.cpu().numpy())):
                problems.append(f"thread {k}: wrong result")
        except Exception as error:  # reported below, with the thread
            problems.append(f"thread {k}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems


def _two_gpus():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.device_count() >= 2


@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs and PyTorch")
def test_with_several_gpus_a_launch_runs_on_the_arrays_device():
    import torch
    for device in (1, 0, 1):
        with torch.cuda.device(device):
            x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
            out = torch.full((N,), float("nan"), device="cuda")
            stream = torch.cuda.current_stream()
        torch.cuda.set_device(0)  # the current device is another one half of the time
        ct.launch(stream, (N // TILE,), axpy, (x, y, out, 2.0, TILE))
        torch.cuda.synchronize(device)
        assert _close(out.cpu().numpy(), _expected(2.0, x.cpu().numpy(), y.cpu().numpy()))


@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs and PyTorch")
def test_arrays_on_two_gpus_or_a_stream_of_another_are_errors():
    import torch
    x = torch.randn(N, device="cuda:0")
    y = torch.randn(N, device="cuda:1")
    out = torch.empty(N, device="cuda:1")
    with pytest.raises(ValueError, match=r"different GPUs: device 0 \(x\), device 1 "
                                         r"\(y, out\)"):
        ct.launch(torch.cuda.current_stream(1), (N // TILE,), axpy, (x, y, out, 1.0, TILE))
    stream_of_0 = torch.cuda.Stream(device=0)
    with pytest.raises(ValueError, match="stream belongs to GPU 0"):
        ct.launch(stream_of_0, (N // TILE,), axpy, (y, y, out, 1.0, TILE))
