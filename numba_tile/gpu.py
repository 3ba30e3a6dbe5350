"""The GPU path of ``launch``: argument checks now; compilation arrives with the compiler.

Host arrays are refused with the message the spec prescribes. Device arrays reach the
compiler, which this release does not have yet: it says so and points to interpreter mode.
"""

import numpy as np

from .errors import TileUnsupportedFeatureError

_DLPACK_CPU, _DLPACK_CUDA_HOST = 1, 3  # DLPack device types of host memory


def _is_host_array(value):
    if isinstance(value, np.ndarray):
        return True
    module = type(value).__module__ or ""
    if module.startswith("torch"):
        return value.device.type == "cpu"
    if hasattr(value, "__cuda_array_interface__"):
        return False
    if hasattr(value, "__dlpack_device__"):
        return value.__dlpack_device__()[0] in (_DLPACK_CPU, _DLPACK_CUDA_HOST)
    return hasattr(value, "__array_interface__")


def compiler_available():
    """True when this build can compile tile kernels for the GPU (not yet)."""
    return False


def launch_on_gpu(stream, grid, kernel, kernel_args, *, programmatic_dependent_launch=False):
    for value in kernel_args:
        items = value if isinstance(value, (list, tuple)) else (value,)
        if any(_is_host_array(v) for v in items):
            raise ValueError("Input array is not on a CUDA device; pass a CuPy array, a CUDA "
                             "torch tensor or a numba device array, or set "
                             "NUMBA_TILE_INTERPRET=1 to run on the CPU")
    raise TileUnsupportedFeatureError(
        "This version of numba_tile cannot compile kernels for the GPU yet; set "
        "NUMBA_TILE_INTERPRET=1 (or use `with ct.interpret():`) to run in interpreter mode")
