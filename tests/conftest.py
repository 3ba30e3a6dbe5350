"""Shared test fixtures.

Kernels under test are started through the ``run_kernel`` fixture, parametrized by execution
mode (DESIGN.md section 6):

* ``interpret``: the interpreter runs the kernel; the test checks the values.
* ``compile``: the kernel is compiled for sm_80 and sm_90 on the CPU (a compile-time error
  must be the one the test expects), then interpreted for the values. A kernel that needs
  what sm_80 lacks (float8 tensor cores) must say so there (``TileUnsupportedFeatureError``
  with ``needs``) and compile for sm_90.
* ``gpu`` (where a GPU is present): the kernel runs compiled on the GPU, on device copies of
  the arrays that are copied back, and the test checks the values.

A kernel that uses an op the compiler does not have yet is an expected failure (``xfail``,
with the op in the reason) in the compiled modes: the count of those is the compiler's to-do
list, not a pass.

The modes run are ``interpret`` and ``compile``, plus ``gpu`` where a GPU is present; set
``NUMBA_TILE_TEST_MODES`` (comma-separated) to choose, e.g.
``NUMBA_TILE_TEST_MODES=gpu python -m pytest tests/test_elementwise.py``.
"""

import atexit
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import numba_tile as ct

# Compiled kernels go to a cache directory of this run, never the user's (see disk_cache.py).
os.environ["NUMBA_TILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba_tile-test-cache-")
atexit.register(shutil.rmtree, os.environ["NUMBA_TILE_CACHE_DIR"], ignore_errors=True)

ARCHES = ("sm_80", "sm_90")
# errors about what a program is rather than what its values are: an interpreter raising one
# of these for a kernel the compiler accepted is a disagreement between the executors
_STATIC_ERRORS = (ct.TileTypeError, ct.TileSyntaxError, ct.TileRecursionError,
                  ct.TileStaticEvalError, ct.TileStaticAssertionError)


def _compiler_gap(error):
    """True for errors that say the compiler lacks something (not that the kernel is wrong)."""
    if isinstance(error, ct.TileUnsupportedFeatureError):
        return True
    # Numba's own "not supported" errors (typing, bytecode) in code our templates do not cover
    module = type(error).__module__ or ""
    return module.startswith("numba.") and not isinstance(error, ct.TileError)


class KernelRunner:
    """Starts kernels in one execution mode: ``run_kernel(kernel, grid, args)``."""

    def __init__(self, mode):
        self.mode = mode

    def __call__(self, kernel, grid, args):
        args = tuple(args)
        if self.mode == "compile":
            self._compiled(lambda: [_compile_for(kernel, args, arch) for arch in ARCHES])
        if self.mode == "gpu":
            self._compiled(lambda: _run_on_gpu(kernel, grid, args))
            return
        try:
            with ct.interpret():
                ct.launch(0, grid, kernel, args)
        except _STATIC_ERRORS as error:
            # the compiler accepted what the interpreter rejects for a reason known before
            # any value is (a type, a constant): the executors disagree
            if self.mode == "compile":
                raise AssertionError(f"compiled, but the interpreter raised "
                                     f"{type(error).__name__}: {error}") from error
            raise

    def expect_assertion_failure(self, kernel, grid, args, message, error=AssertionError,
                                 match=None):
        """Run a kernel whose ``ct.assert_`` (or run-time check) must fail with ``message``.
        The interpreter raises ``error`` (its message matching the regular expression
        ``match``, by default ``message``). On the GPU the kernel stops with CUDA's device
        assertion, which leaves the process's CUDA context unusable: the kernel (a
        module-level kernel of a test module) runs in a child process, which must fail with
        the driver's report of the message and ``CUDA_ERROR_ASSERT``."""
        if self.mode != "gpu":
            with pytest.raises(error, match=match or re.escape(message)):
                self(kernel, grid, args)
            return
        self._compiled(lambda: ct.compile(kernel, tuple(args), arch=_gpu_arch()))
        with tempfile.TemporaryDirectory() as folder:
            payload = os.path.join(folder, "launch.pickle")
            with open(payload, "wb") as file:
                pickle.dump((kernel.fn.__module__, kernel.fn.__name__, grid, tuple(args)), file)
            child = subprocess.run([sys.executable, __file__, payload], capture_output=True,
                                   text=True, timeout=300)
        report = child.stdout + child.stderr
        assert child.returncode != 0, report
        assert f"Assertion `{message}` failed" in report, report
        if error is AssertionError:  # ct.assert_ prints its message, a line of stdout
            assert any(message in line for line in child.stdout.splitlines()), report
        assert "CUDA_ERROR_ASSERT" in report, report

    @staticmethod
    def _compiled(action):
        try:
            action()
        except Exception as error:
            if _compiler_gap(error):
                reason = getattr(error, "message", str(error)).splitlines()[0]
                pytest.xfail(f"not compiled yet: {reason[:200]}")
            raise


def _compile_for(kernel, args, arch):
    """Compile for ``arch``; a feature that GPU lacks (and a later one has) is no compiler
    gap, so its error passes, checked to name the compute capability needed."""
    try:
        ct.compile(kernel, args, arch=arch)
    except ct.TileUnsupportedFeatureError as error:
        cc = (int(arch[3:-1]), int(arch[-1]))
        if error.needs is None or cc >= error.needs:
            raise
        assert f"{error.needs[0]}.{error.needs[1]}" in error.message, error.message


def _run_on_gpu(kernel, grid, args):
    """Launch on device copies of the host arrays in ``args`` (NumPy arrays, array-like
    objects, CPU tensors, also inside tuples, lists and partitions), keeping their strides;
    copy the results back into the host memory afterwards. What the kernel printed is flushed
    to the process's standard output (``capfd`` reads it there)."""
    from numba import cuda
    write_backs = []
    device_args = tuple(_device_argument(value, write_backs) for value in args)
    ct.launch(0, grid, kernel, device_args)
    try:
        cuda.synchronize()
    finally:
        _flush_c_stdout()
    for write_back in write_backs:
        write_back()


def _flush_c_stdout():
    """Device printf output reaches C's stdout buffer when the host synchronizes."""
    import ctypes
    ctypes.CDLL(None).fflush(None)


def _gpu_arch():
    from numba import cuda
    major, minor = cuda.get_current_device().compute_capability
    return f"sm_{major}{minor}"


def _host_view(value):
    """A NumPy view sharing the memory of a host array-like object, or None."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (type, np.generic)):  # a dtype class (a Constant), a NumPy scalar
        return None
    if type(value).__module__.startswith("torch") and hasattr(value, "is_cuda") and \
            not value.is_cuda:
        return value.numpy() if value.dtype != __import__("torch").bfloat16 else None
    if hasattr(value, "__array_interface__"):
        return np.asarray(value)
    if hasattr(value, "__dlpack__") and not hasattr(value, "__cuda_array_interface__"):
        return np.from_dlpack(value)
    return None


def _device_argument(value, write_backs):
    if isinstance(value, ct.Partition):  # the same partition of the device copy
        return ct.partition(_device_argument(value.array, write_backs), value.tile_shape)
    if isinstance(value, (tuple, list)):
        items = [_device_argument(v, write_backs) for v in value]
        if hasattr(type(value), "_fields"):  # a namedtuple takes its items one by one
            return type(value)(*items)
        return type(value)(items)
    host = _host_view(value)
    if host is None:
        return value
    if host.dtype in _TORCH_ONLY_DTYPES:  # NumPy-side libraries cannot hold these dtypes
        return _torch_copy(host, write_backs)
    import cupy
    base = host
    while isinstance(base.base, np.ndarray):
        base = base.base
    if not (base.flags.c_contiguous and base.flags.writeable):  # copy just the view
        base = host
        device = cupy.asarray(np.ascontiguousarray(host))

        def write_back():
            host[...] = device.get()
    else:
        offset = host.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        device_base = cupy.asarray(base)
        device = cupy.ndarray(host.shape, host.dtype, memptr=device_base.data + offset,
                              strides=host.strides)

        def write_back():
            base[...] = device_base.get()
    write_backs.append(write_back)
    return device


def _torch_copy(host, write_backs):
    import torch
    contiguous = np.ascontiguousarray(host)
    bits = torch.from_numpy(contiguous.view(np.uint8)).cuda()
    device = bits.view(getattr(torch, _TORCH_ONLY_DTYPES[host.dtype])).reshape(host.shape)

    def write_back():
        # through a flat view: PyTorch cannot reinterpret a 0-d tensor's bytes
        host[...] = device.contiguous().reshape(-1).view(torch.uint8).cpu().numpy() \
            .view(host.dtype).reshape(host.shape)
    write_backs.append(write_back)
    return device


# dtypes only PyTorch holds on the device, by the name of the torch dtype (torch is imported
# only when one is used: importing it early changes which nvJitLink library is loaded)
_TORCH_ONLY_DTYPES = {np.dtype(ct.bfloat16.numpy): "bfloat16",
                      np.dtype(ct.float8_e4m3fn.numpy): "float8_e4m3fn",
                      np.dtype(ct.float8_e5m2.numpy): "float8_e5m2",
                      np.dtype(ct.float8_e8m0fnu.numpy): "float8_e8m0fnu"}


def gpu_present():
    """True where numba-cuda sees a CUDA GPU (the device machine; CI has none)."""
    try:
        from numba import cuda
        return cuda.is_available()
    except Exception:  # numba-cuda without its CUDA libraries: no GPU either
        return False


def gpu_of_compute_capability_9():
    """True where the GPU numba-cuda sees is of compute capability 9.0 (an H100 or H200)."""
    if not gpu_present():
        return False
    from numba import cuda
    return cuda.get_current_device().compute_capability == (9, 0)


def _default_modes():
    return "interpret,compile,gpu" if gpu_present() else "interpret,compile"


MODES = [mode.strip() for mode in os.environ.get("NUMBA_TILE_TEST_MODES",
                                                 _default_modes()).split(",") if mode.strip()]


@pytest.fixture(params=MODES)
def run_kernel(request):
    return KernelRunner(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


GUARD = 8  # elements of guard on every side of a test's output (see guarded)


def guarded(shape, dtype=np.float32, fill=np.nan):
    """``(buffer, view)``: a buffer of ``fill`` with ``GUARD`` elements around a view of
    ``shape`` along every axis. A kernel writes the view; its guards show writes outside.

    >>> buffer, view = guarded((2,))
    >>> buffer.shape, view.shape
    ((18,), (2,))
    """
    buffer = np.full(tuple(n + 2 * GUARD for n in shape), fill, dtype)
    return buffer, buffer[tuple(slice(GUARD, GUARD + n) for n in shape)]


def guards_untouched(buffer, shape, fill=np.nan):
    """True where every element of ``buffer`` around the view of :func:`guarded` (of
    ``shape``) still holds ``fill``."""
    outside = np.ones(buffer.shape, bool)
    outside[tuple(slice(GUARD, GUARD + n) for n in shape)] = False
    if isinstance(fill, float) and math.isnan(fill):
        return bool(np.isnan(buffer[outside].astype(np.float64)).all())
    return bool((buffer[outside] == fill).all())


def relative_error(actual, expected):
    """max |actual - expected| / max |expected|, computed in float64 (NaNs must match)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    nan_a, nan_e = np.isnan(actual), np.isnan(expected)
    assert np.array_equal(nan_a, nan_e), "NaN positions differ"
    a, e = actual[~nan_e], expected[~nan_e]
    if a.size == 0:
        return 0.0
    inf = np.isinf(e)
    assert np.array_equal(a[inf], e[inf]), "infinities differ"
    a, e = a[~inf], e[~inf]
    scale = np.max(np.abs(e)) if e.size else 0.0
    if scale == 0.0:
        return float(np.max(np.abs(a))) if a.size else 0.0
    return float(np.max(np.abs(a - e)) / scale)


if __name__ == "__main__":  # the child process of KernelRunner.expect_assertion_failure
    with open(sys.argv[1], "rb") as _file:
        _module, _name, _grid, _args = pickle.load(_file)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    _run_on_gpu(getattr(__import__(_module), _name), _grid, _args)
