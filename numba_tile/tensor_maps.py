"""Tensor maps for the TMA copies of a launch (see :mod:`numba_tile.compiler.hardware.tma`):
encoded on the host by the CUDA driver's ``cuTensorMapEncodeTiled`` from an array argument
(its address, shape and strides) and the box the kernel copies, and passed as kernel
parameters.

Encoding takes microseconds; a launch loop passes the same arrays again and again, so maps
are kept by what they are made from.

>>> from numba_tile.tensor_maps import encode_arguments
>>> callable(encode_arguments)
True
"""

import ctypes

from .compiler.hardware.tma import MAP_BYTES, TensorMapSpec

# CUtensorMapDataType by element size: the TMA copies bits, so unsigned integers of the
# element's width serve every dtype (zero fill outside the array is the same)
_DATA_TYPES = {1: 0, 2: 1, 4: 2, 8: 4}  # UINT8, UINT16, UINT32, UINT64
_TFLOAT32 = 11  # CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: float32 rounded to tfloat32 on the copy
_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # CU_TENSOR_MAP_SWIZZLE_*
_L2_PROMOTION_128B = 2
_MAX_KEPT = 4096

_driver = []
_kept = {}
_zeros = {}  # context handle -> device address of a few zero bytes


def _library():
    if not _driver:
        import sys
        _driver.append(ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else
                                   "libcuda.so.1"))
    return _driver[0]


def _encode_function():
    """``cuTensorMapEncodeTiled`` of the driver library, typed once."""
    function = _library().cuTensorMapEncodeTiled
    if function.argtypes is None:
        function.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                             ctypes.c_int]
        function.restype = ctypes.c_int
    return function


def _zero_bytes():
    """The device address of 16 zero bytes in the current context (allocated once): what
    the map of an empty array points at, since the TMA needs extents of at least 1."""
    library = _library()
    context = ctypes.c_void_p()
    library.cuCtxGetCurrent(ctypes.byref(context))
    address = _zeros.get(context.value)
    if address is None:
        pointer = ctypes.c_uint64()
        status = library.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(16))
        status = status or library.cuMemsetD8_v2(pointer, ctypes.c_ubyte(0),
                                                  ctypes.c_size_t(16))
        if status:
            raise RuntimeError(f"cannot allocate 16 bytes on the GPU: CUDA error {status}")
        address = _zeros[context.value] = pointer.value
    return address


def encode(spec, pointer, shape, strides):
    """The 128 bytes of the tensor map of ``spec`` (a :class:`TensorMapSpec`) over the array
    at ``pointer`` of ``shape`` and ``strides`` (in elements, the array's own axis order).
    Needs the CUDA driver.

    >>> import cupy  # doctest: +SKIP
    >>> a = cupy.zeros((256, 64), cupy.float16)  # doctest: +SKIP
    >>> len(encode((0, 2, 2, 64, 128, 128, False), a.data.ptr, a.shape, (64, 1)))  # doctest: +SKIP
    128
    """
    spec = TensorMapSpec(spec)
    ndim, itemsize = spec.ndim, spec.itemsize
    if 0 in shape:  # nothing inside: every copy reads zeros, but the map needs an element
        pointer, shape, strides = _zero_bytes(), (1,) * ndim, (16 // itemsize,) * ndim
    # the TMA counts axes from the innermost; its strides (in bytes) are those of the others,
    # positive: on an axis of length 1, whose stride is never used, the extent of the axes
    # inside it (rounded to 16 bytes) stands in
    dims = (ctypes.c_uint64 * ndim)(*reversed(shape))
    inner, stride_values = shape[-1] * itemsize, []
    for n, s in zip(reversed(shape[:-1]), reversed(strides[:-1])):
        stride_values.append(s * itemsize if n != 1 else -(-inner // 16) * 16)
        inner = stride_values[-1] * n
    byte_strides = (ctypes.c_uint64 * max(ndim - 1, 1))(*stride_values)
    box = (ctypes.c_uint32 * ndim)(spec.box_columns, spec.box_rows, *[1] * (ndim - 2))
    element_strides = (ctypes.c_uint32 * ndim)(*[1] * ndim)
    # 64-byte aligned, as the parameter it becomes
    storage = ctypes.create_string_buffer(MAP_BYTES + 64)
    address = -(-ctypes.addressof(storage) // 64) * 64
    data_type = _TFLOAT32 if spec.tfloat32 else _DATA_TYPES[itemsize]
    status = _encode_function()(address, data_type, ndim, pointer, dims,
                                byte_strides, box, element_strides, 0, _SWIZZLES[spec.swizzle],
                                _L2_PROMOTION_128B, 0)
    if status:
        raise ValueError(
            f"The TMA cannot copy from this array (shape {tuple(shape)}, strides "
            f"{tuple(strides)} elements, address {pointer:#x}): cuTensorMapEncodeTiled failed "
            f"with CUDA error {status}. Pass allow_tma=False to the loads of this array")
    return ctypes.string_at(address, MAP_BYTES)


def encode_arguments(specs, flat_values, offsets):
    """The maps of ``specs`` for a launch's flat parameter values: ``offsets[p]`` is where
    parameter ``p``'s values (pointer, shape, strides of an array) start. Needs the CUDA
    driver.

    >>> import cupy  # doctest: +SKIP
    >>> a = cupy.zeros((256, 64), cupy.float16)  # doctest: +SKIP
    >>> flat = [a.data.ptr, 256, 64, 64, 1]  # doctest: +SKIP
    >>> [len(m) for m in encode_arguments([(0, 2, 2, 64, 128, 128, False)], flat, [0])]  # doctest: +SKIP
    [128]
    """
    maps = []
    for spec in specs:
        start = offsets[spec[0]]
        ndim = spec[1]
        key = (spec, *flat_values[start:start + 1 + 2 * ndim])
        found = _kept.get(key)
        if found is None:
            if len(_kept) >= _MAX_KEPT:
                _kept.clear()
            found = _kept[key] = encode(spec, flat_values[start],
                                        flat_values[start + 1:start + 1 + ndim],
                                        flat_values[start + 1 + ndim:start + 1 + 2 * ndim])
        maps.append(found)
    return maps
