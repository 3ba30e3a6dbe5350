"""Interpreter mode with GPU arrays: copied to the host, run, copied back (needs a GPU).

Runs only where a CUDA GPU is present (the device machine); CI has none.
"""

import numpy as np
import pytest

import numba_tile as ct
from conftest import gpu_present as _gpu_present


pytestmark = pytest.mark.skipif(not _gpu_present(), reason="needs a CUDA GPU")


@ct.kernel
def double(x, y, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(y, (i,), ct.load(x, (i,), (TILE,)) * 2)


def _converters():
    from numba import cuda
    yield "numba", cuda.to_device, lambda t: t.copy_to_host()
    try:
        import torch
        yield "torch", lambda a: torch.from_numpy(a).cuda(), lambda t: t.cpu().numpy()
        yield ("torch-bf16", lambda a: torch.from_numpy(a).cuda().to(torch.bfloat16),
               lambda t: t.float().cpu().numpy())
    except ImportError:
        pass
    try:
        import cupy
        yield "cupy", cupy.asarray, cupy.asnumpy
    except ImportError:
        pass


@pytest.mark.parametrize("name,to_device,to_host", list(_converters()) if _gpu_present() else [])
def test_gpu_arrays_are_copied_and_written_back(name, to_device, to_host):
    a = np.arange(8, dtype=np.float32) + 1
    x, y = to_device(a), to_device(np.full(8, np.nan, np.float32))
    with ct.interpret():
        ct.launch(None, (2,), double, (x, y, 4))
    np.testing.assert_array_equal(to_host(y), a * 2)
