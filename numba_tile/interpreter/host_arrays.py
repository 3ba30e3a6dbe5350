"""Turning kernel arguments from NumPy, PyTorch, CuPy and numba into host NumPy views.

A CPU array is viewed in place (results land in the caller's array). A GPU array is copied
to the host and copied back after the launch, so interpreter mode accepts it too.
"""

import numpy as np

from .. import dtypes as d


def _torch_to_numpy(tensor):
    """A NumPy view of a CPU torch tensor; bfloat16 and float8 go through their raw bits,
    which DLPack cannot hand to NumPy."""
    dtype = d.to_dtype(tensor.dtype)
    if dtype.numpy is not None and dtype.numpy.kind in "biuf":
        return np.from_dlpack(tensor.detach()), dtype
    import torch  # (an optional dependency: only a torch tensor gets here)
    raw = {1: torch.uint8, 2: torch.int16}[tensor.element_size()]
    return np.from_dlpack(tensor.detach().view(raw)).view(dtype.storage), dtype


class HostArgument:
    """A NumPy view of an array argument and how to write results back to its owner."""

    def __init__(self, array, dtype, write_back=None):
        self.array = array
        self.dtype = dtype
        self.write_back = write_back


def to_host(obj):
    """A :class:`HostArgument` for an array-like object, or None if it is not one."""
    module = type(obj).__module__ or ""
    if isinstance(obj, np.ndarray):
        return HostArgument(obj, _dtype_of(obj.dtype))
    if module.startswith("torch"):
        if obj.device.type != "cpu":
            host = obj.detach().to("cpu")
            array, dtype = _torch_to_numpy(host)
            return HostArgument(array, dtype, lambda: obj.copy_(host))
        array, dtype = _torch_to_numpy(obj)
        return HostArgument(array, dtype)
    if module.startswith("cupy") and hasattr(obj, "get"):
        host = obj.get()
        return HostArgument(host, _dtype_of(host.dtype), lambda: obj.set(host))
    if hasattr(obj, "__cuda_array_interface__") and hasattr(obj, "copy_to_host"):
        host = obj.copy_to_host()
        return HostArgument(host, _dtype_of(host.dtype), lambda: obj.copy_to_device(host))
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__dlpack__"):
        try:
            array = np.from_dlpack(obj) if hasattr(obj, "__dlpack__") else np.asarray(obj)
        except (TypeError, RuntimeError, BufferError):
            array = np.asarray(obj)
        return HostArgument(array, _dtype_of(array.dtype))
    return None


def _dtype_of(npdtype):
    try:
        return d.to_dtype(npdtype)
    except TypeError:
        raise TypeError(f"Unsupported array dtype {npdtype}; numba_tile supports "
                        f"{', '.join(x.name for x in d.ALL_DTYPES)}") from None
