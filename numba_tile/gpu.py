"""The GPU path of ``launch``: classify arguments, compile once per signature, launch.

Arrays come from any library through ``__cuda_array_interface__`` (CuPy, PyTorch, numba) or,
for PyTorch dtypes that interface cannot describe (bfloat16), the tensor's own accessors.
Kernels are compiled for the current device's architecture, cached per kernel and argument
signature, loaded with ``cuda.core`` and launched on the caller's stream.
"""

import ctypes

import numpy as np
from llvmlite import ir

from . import dtypes as d
from .annotations import ArrayAnnotation, ConstantAnnotation, scalar_argument
from .compiler.types import ArrayType, is_aligned, scalar_type

_DLPACK_CPU, _DLPACK_CUDA_HOST = 1, 3  # DLPack device types of host memory


def _is_host_array(value):
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, type):  # a dtype class (np.float16) passed as a Constant
        return False
    module = type(value).__module__ or ""
    if module.startswith("torch"):
        return hasattr(value, "device") and value.device.type == "cpu"
    if hasattr(value, "__cuda_array_interface__"):
        return False
    if hasattr(value, "__dlpack_device__"):
        return value.__dlpack_device__()[0] in (_DLPACK_CPU, _DLPACK_CUDA_HOST)
    return hasattr(value, "__array_interface__")


def compiler_available():
    """True when this build can compile tile kernels for the GPU."""
    return True


class DeviceArray:
    """What a launch needs of a device array: dtype, shape, strides (elements), pointer."""

    def __init__(self, dtype, shape, strides, pointer):
        self.dtype, self.shape, self.strides, self.pointer = dtype, shape, strides, pointer


def device_array(value):
    """A :class:`DeviceArray` for a GPU array of any library, or None."""
    module = type(value).__module__ or ""
    if module.startswith("torch") and getattr(getattr(value, "device", None), "type",
                                              None) == "cuda":
        return DeviceArray(d.to_dtype(value.dtype), tuple(value.shape), tuple(value.stride()),
                           value.data_ptr())
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None:
        return None
    npdtype = np.dtype(interface["typestr"])
    shape = tuple(interface["shape"])
    if interface.get("strides") is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        strides = tuple(reversed(strides))
    else:
        strides = tuple(s // npdtype.itemsize for s in interface["strides"])
    return DeviceArray(d.to_dtype(npdtype), shape, strides, interface["data"][0])


def stream_handle(stream):
    """The raw CUstream of a PyTorch, CuPy, numba or cuda.core stream, or of an int."""
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attribute in ("cuda_stream", "ptr"):  # PyTorch, CuPy
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    handle = getattr(stream, "handle", None)  # numba-cuda
    if handle is not None:
        return int(getattr(handle, "value", handle) or 0)
    raise TypeError(f"Cannot use {type(stream).__name__} as a CUDA stream; pass a PyTorch, "
                    f"CuPy or numba stream, or an integer handle")


def _argument(name, value, meta):
    """``(numba type, flat values)`` of one kernel argument."""
    if isinstance(meta, ConstantAnnotation):
        from .compiling import constant_argument
        return constant_argument(name, value)
    scalar = scalar_argument(name, value, meta)
    if scalar is not None:
        dtype, value = scalar
        if dtype in (d.float16, d.bfloat16):  # passed as their bits
            value = int(np.array(value, dtype.numpy).view(np.int16))
        return scalar_type(dtype), [value]
    if isinstance(value, (tuple, list)):
        from .errors import TileUnsupportedFeatureError
        raise TileUnsupportedFeatureError(f"Argument {name!r}: {type(value).__name__} "
                                          f"arguments are not compiled yet")
    array = device_array(value)
    if array is None:
        raise TypeError(f"Argument {name!r} of type {type(value).__name__} is not supported: "
                        f"pass GPU arrays (CuPy, PyTorch, numba), bool, int or float")
    index_dtype = meta.index_dtype if isinstance(meta, ArrayAnnotation) else d.int32
    for n in array.shape + array.strides:
        if index_dtype is d.int32 and not -2**31 <= n < 2**31:
            raise ValueError(f"Argument {name!r} needs int64 shapes or strides; annotate it "
                             f"with ct.IndexedWithInt64")
    aligned = is_aligned(array.pointer, array.shape, array.strides, array.dtype.itemsize)
    return (ArrayType(array.dtype, len(array.shape), index_dtype, aligned),
            [array.pointer, *array.shape, *array.strides])


_CTYPES_BY_BITS = {8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}


def _ctypes_for(llvm_type):
    if isinstance(llvm_type, ir.PointerType):
        return ctypes.c_uint64
    if isinstance(llvm_type, ir.IntType):
        return ctypes.c_bool if llvm_type.width == 1 else _CTYPES_BY_BITS[llvm_type.width]
    if isinstance(llvm_type, ir.FloatType):
        return ctypes.c_float
    if isinstance(llvm_type, ir.DoubleType):
        return ctypes.c_double
    raise TypeError(f"Cannot pass a kernel parameter of LLVM type {llvm_type}")


class LoadedKernel:
    """A compiled kernel loaded on the device, with the C types of its parameters."""

    def __init__(self, compiled, arg_types):
        from cuda.core import ObjectCode
        from .compiler.contexts import contexts
        self.compiled = compiled
        self.kernel = ObjectCode.from_cubin(compiled.cubin).get_kernel(compiled.name)
        packer = contexts()[1].get_arg_packer(list(arg_types))
        self.param_types = [_ctypes_for(t) for t in packer.argument_types]
        self.block = (32 * compiled.num_warps, 1, 1)
        self._configs = {}

    def launch(self, stream, grid, flat_values):
        from cuda.core import LaunchConfig, launch
        config = self._configs.get(grid)
        if config is None:
            config = self._configs[grid] = LaunchConfig(
                grid=grid, block=self.block, shmem_size=self.compiled.dynamic_shared_bytes)
        params = [c_type(v) for c_type, v in zip(self.param_types, flat_values)]
        launch(_stream_object(stream), config, self.kernel, *params)


_streams = {}


def _stream_object(handle):
    """A cached ``cuda.core`` Stream wrapping a raw handle (making one costs microseconds)."""
    stream = _streams.get(handle)
    if stream is None:
        from cuda.core import Stream
        stream = _streams[handle] = Stream.from_handle(handle)
    return stream


_arch_of_process = []


def _current_arch():
    """The compute capability of the current device, as ``sm_XY`` (looked up once)."""
    if not _arch_of_process:
        from cuda.core import Device
        device = Device()
        device.set_current()
        major, minor = device.compute_capability
        _arch_of_process.append(f"sm_{major}{minor}")
    return _arch_of_process[0]


_INT32 = 2**31


def _quick_signature(kernel, kernel_args):
    """The launch cache key and flat parameter values, computed cheaply for the common
    arguments (CUDA torch tensors, CUDA-array-interface arrays, Python scalars, int/bool
    constants); None sends the launch through the full classification (first launches,
    errors, other argument kinds)."""
    key, flat = [], []
    for value, meta in zip(kernel_args, kernel.parameter_kind_list):
        kind = type(value)
        if isinstance(meta, ConstantAnnotation):
            if kind is not int and kind is not bool:
                return None
            key.append((kind, value))
            flat.append(value)
        elif kind is int or kind is float or kind is bool:
            if kind is int and not -_INT32 <= value < _INT32:
                return None  # the full path says it does not fit
            key.append(kind)
            flat.append(value)
        elif meta is not None:
            return None
        elif getattr(value, "is_cuda", False) and hasattr(value, "data_ptr"):  # torch
            shape, strides, pointer = value.shape, value.stride(), value.data_ptr()
            if value.numel() >= _INT32 or (strides and max(map(abs, strides)) >= _INT32):
                return None
            key.append((value.dtype, len(shape),
                        is_aligned(pointer, shape, strides, value.element_size())))
            flat.append(pointer)
            flat.extend(shape)
            flat.extend(strides)
        else:
            interface = getattr(value, "__cuda_array_interface__", None)
            if interface is None or interface.get("strides") is not None:
                return None
            shape, pointer = interface["shape"], interface["data"][0]
            step, strides = 1, []
            for n in reversed(shape):
                strides.append(step)
                step *= n
            if step >= _INT32:
                return None
            strides.reverse()
            itemsize = int(interface["typestr"][2:])
            key.append((interface["typestr"], len(shape),
                        is_aligned(pointer, shape, strides, itemsize)))
            flat.append(pointer)
            flat.extend(shape)
            flat.extend(strides)
    return tuple(key), flat


def launch_on_gpu(stream, grid, kernel, kernel_args, *, programmatic_dependent_launch=False):
    grid = tuple(grid) + (1,) * (3 - len(grid))
    handle = stream if type(stream) is int else stream_handle(stream)
    quick = _quick_signature(kernel, kernel_args)
    if quick is not None:
        loaded = kernel.gpu_cache.get(quick[0])
        if loaded is not None:
            loaded.launch(handle, grid, quick[1])
            return
    loaded, flat = _prepare(kernel, kernel_args)
    if quick is not None:
        kernel.gpu_cache[quick[0]] = loaded
    loaded.launch(handle, grid, flat)


def _prepare(kernel, kernel_args):
    """Classify every argument, compile (or find) the kernel for the signature."""
    for value in kernel_args:
        items = value if isinstance(value, (list, tuple)) else (value,)
        if any(_is_host_array(v) for v in items):
            raise ValueError("Input array is not on a CUDA device; pass a CuPy array, a CUDA "
                             "torch tensor or a numba device array, or set "
                             "NUMBA_TILE_INTERPRET=1 to run on the CPU")
    arch = _current_arch()
    arg_types, flat = [], []
    for name, value in zip(kernel.parameters, kernel_args):
        numba_type, values = _argument(name, value, kernel.parameter_kinds.get(name))
        arg_types.append(numba_type)
        flat.extend(values)
    key = (tuple(arg_types), arch)
    loaded = kernel.gpu_cache.get(key)
    if loaded is None:
        from .compiling import compile_for_types
        loaded = LoadedKernel(compile_for_types(kernel, key[0], arch), key[0])
        kernel.gpu_cache[key] = loaded
    return loaded, flat
