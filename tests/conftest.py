"""Shared test fixtures.

Kernels under test are started through the ``run_kernel`` fixture, which is parametrized by
execution mode (DESIGN.md section 6). This release has the ``interpret`` mode; the compiler
adds ``compile`` (sm_80/sm_90 on the CPU) and ``gpu`` (when a GPU is present) to the same
tests.
"""

import numpy as np
import pytest

import numba_tile as ct

MODES = ["interpret"]


class KernelRunner:
    """Starts kernels in one execution mode: ``run_kernel(kernel, grid, args)``."""

    def __init__(self, mode):
        self.mode = mode

    def __call__(self, kernel, grid, args):
        if self.mode == "interpret":
            with ct.interpret():
                ct.launch(0, grid, kernel, tuple(args))
        else:  # pragma: no cover - modes of later releases
            raise NotImplementedError(self.mode)


def gpu_present():
    """True where numba-cuda sees a CUDA GPU (the device machine; CI has none)."""
    try:
        from numba import cuda
        return cuda.is_available()
    except Exception:  # numba-cuda without its CUDA libraries: no GPU either
        return False


@pytest.fixture(params=MODES)
def run_kernel(request):
    return KernelRunner(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


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
