"""Load and launch kernels that :func:`numba_tile.compilation.export_kernel` wrote, where
numba_tile's compiler (and Numba) is not installed.

This module imports only the Python standard library and reaches the GPU through the CUDA
driver library (``libcuda``) with :mod:`ctypes`. It is one file on purpose: copy
``numba_tile/exported.py`` into another project (under any name) to launch exported kernels
there. Arrays may be of any library that exposes ``__cuda_array_interface__`` (CuPy, numba,
...) or PyTorch CUDA tensors; streams are raw handles (0: the default stream) or stream
objects of those libraries.

**The export file** is a ZIP archive holding ``manifest.json`` and one object file (cubin
or PTX) per *entry*; an entry is the kernel compiled for one signature. The manifest
(``"format": "numba_tile-export"``, ``"version": 1``) names the kernel, the architecture and
the object format, and describes each entry: its symbol, the object file, the kernel
parameters it takes (see :class:`ExportedEntry`), the struct codes of the parameter buffer
(the calling convention, ``numba_tile_v1``: each kernel parameter flattened to fields of
native alignment), the tensor maps the launch adds after them, the block size and the
dynamic shared memory to launch with.

>>> import io, numpy as np, numba_tile as ct
>>> from numba_tile import compilation, exported
>>> @ct.kernel
... def double(x, TILE: ct.Constant[int]):
...     ct.store(x, (ct.bid(0),), ct.load(x, (ct.bid(0),), (TILE,)) * 2)
>>> signature = compilation.KernelSignature.from_kernel_args(
...     double, (np.zeros(256, np.float32), 128))
>>> file = io.BytesIO()
>>> compilation.export_kernel(double, [signature], file, gpu_code="sm_80",
...                           output_format="ptx")
>>> kernels = exported.load(file)
>>> kernels.name, kernels.arch, [p["kind"] for p in kernels.entries[0].parameters]
('double', 'sm_80', ['array', 'constant'])
>>> kernels.launch(0, (2,), (cupy_array, 128))  # doctest: +SKIP
"""

import ctypes
import enum
import io
import json
import struct
import sys
import zipfile

FORMAT, VERSION = "numba_tile-export", 1
MANIFEST = "manifest.json"
MAP_BYTES, MAP_ALIGNMENT = 128, 64  # a tensor map and the alignment of its parameter
_INT32 = 2**31
_SMALL_SHARED_BYTES = 48 * 1024  # beyond this, a kernel opts in to more shared memory


def load(file):
    """The export file ``file`` (a path, a binary file object or the bytes) as an
    :class:`ExportedKernel`. Nothing touches the GPU until the first launch.

    >>> import io, zipfile
    >>> from numba_tile import exported
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as archive:
    ...     archive.writestr("manifest.json", '{"format": "numba_tile-export", "version": 9}')
    >>> exported.load(buffer)
    Traceback (most recent call last):
    ...
    ValueError: This file is a numba_tile export of version 9; this loader reads version 1: ...
    """
    if isinstance(file, (bytes, bytearray, memoryview)):
        file = io.BytesIO(file)
    with zipfile.ZipFile(file) as archive:
        try:
            manifest = json.loads(archive.read(MANIFEST))
        except KeyError:
            raise ValueError(f"{file!r} is not a numba_tile export: it has no {MANIFEST}") \
                from None
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{file!r} is not a numba_tile export (format "
                             f"{manifest.get('format')!r})")
        if manifest.get("version") != VERSION:
            raise ValueError(f"This file is a numba_tile export of version "
                             f"{manifest.get('version')}; this loader reads version "
                             f"{VERSION}: use the exported.py of the numba_tile that wrote it")
        objects = {entry["object"]: archive.read(entry["object"])
                   for entry in manifest["entries"]}
    return ExportedKernel(manifest, objects)


class ExportedKernel:
    """An exported kernel: its entries (one per signature) and :meth:`launch`, which runs
    the first entry that takes the arguments.

    >>> from numba_tile.exported import ExportedKernel
    >>> manifest = {"kernel": "k", "arch": "sm_90", "object_format": "ptx", "entries": []}
    >>> ExportedKernel(manifest, {}).launch(0, (1,), ())
    Traceback (most recent call last):
    ...
    TypeError: No entry of exported kernel 'k' takes these arguments:
    """

    def __init__(self, manifest, objects):
        self.manifest = manifest
        self.name = manifest["kernel"]
        self.arch = manifest["arch"]
        self.entries = [ExportedEntry(self, entry, objects[entry["object"]])
                        for entry in manifest["entries"]]

    def entry_for(self, args):
        """The first entry that takes ``args`` (a tuple, as ``ct.launch`` takes them); a
        ``TypeError`` saying why each entry refuses them where none does."""
        reasons = []
        for entry in self.entries:
            reason = entry.mismatch(args)
            if reason is None:
                return entry
            reasons.append(f"\n  entry {len(reasons)}: {reason}")
        raise TypeError(f"No entry of exported kernel {self.name!r} takes these "
                        f"arguments:{''.join(reasons)}")

    def launch(self, stream, grid, args):
        """Run the kernel on ``grid`` blocks (1 to 3 ints) on ``stream`` with ``args``;
        asynchronous, like ``ct.launch``. See :meth:`ExportedEntry.launch`."""
        self.entry_for(args).launch(stream, grid, args)


class ExportedEntry:
    """The kernel compiled for one signature. ``parameters`` describes, in order, what each
    kernel parameter takes (dicts, as the manifest has them):

    * ``{"kind": "array", "dtype", "itemsize", "ndim", "index_dtype", "aligned",
      "static_shape", "static_strides"}``: a GPU array, passed as its data pointer, shape
      and strides in elements (``index_dtype`` fields); where ``aligned``, the data must be
      16-byte aligned, the last axis contiguous and a multiple of 16 bytes long, the other
      strides positive multiples of 16 bytes; ``static_shape``/``static_strides`` map axes
      to the only values allowed there;
    * ``{"kind": "scalar", "dtype"}``: a bool, int or float (float16 and bfloat16 travel
      as their bits);
    * ``{"kind": "constant", "value"}``: a compile-time constant, spelled as
      :func:`constant_text` spells it; its fields carry nothing;
    * ``{"kind": "tuple", "items"}`` and ``{"kind": "list", "item", "length"}``.

    Each also has ``"name"`` and ``"fields"``, the struct codes of its flattened values.

    >>> from numba_tile.exported import ExportedEntry
    >>> entry = ExportedEntry(None, {"symbol": "k", "block": [128, 1, 1], "fields": "fi",
    ...     "dynamic_shared_bytes": 0, "tensor_maps": [], "parameters": [
    ...         {"name": "a", "kind": "scalar", "dtype": "float32", "fields": "f"},
    ...         {"name": "n", "kind": "scalar", "dtype": "uint32", "fields": "i"}]}, b"")
    >>> entry.parameter_values((0.5, 2**32 - 1))
    [0.5, -1]
    >>> entry.mismatch((0.5, 1.5))
    "argument 'n' must be an integer of dtype uint32, got float"
    """

    def __init__(self, kernel, manifest_entry, object_code):
        self.kernel = kernel
        self.symbol = manifest_entry["symbol"]
        self.parameters = manifest_entry["parameters"]
        self.fields = manifest_entry["fields"]
        self.tensor_maps = manifest_entry["tensor_maps"]
        self.block = tuple(manifest_entry["block"])
        self.dynamic_shared_bytes = manifest_entry["dynamic_shared_bytes"]
        self.object_code = object_code
        self._functions = {}  # CUcontext -> CUfunction: a module loads into one context

    def mismatch(self, args):
        """Why this entry cannot take ``args``, or None where it can."""
        try:
            self.parameter_values(args)
        except (TypeError, ValueError) as error:
            return str(error)
        return None

    def parameter_values(self, args):
        """The flat values of the parameter buffer for ``args``, without the tensor maps
        (a ``TypeError`` or ``ValueError`` where an argument does not fit its parameter)."""
        if not isinstance(args, tuple) or len(args) != len(self.parameters):
            raise TypeError(f"it takes a tuple of {len(self.parameters)} arguments "
                            f"({', '.join(p['name'] for p in self.parameters)})")
        values = []
        for parameter, value in zip(self.parameters, args):
            values += _flat_values(parameter, value)
        return values

    def launch(self, stream, grid, args):
        """Run this entry on ``grid`` blocks on ``stream`` with ``args`` (GPU arrays of any
        library, scalars, and the constants it was exported for). The object code is loaded
        into the current CUDA context (the primary context of device 0 where none is) on the
        first launch there."""
        if stream is None:
            raise TypeError("Stream is required, got None: pass 0 for the default stream, or "
                            "a CuPy, PyTorch or numba stream")
        if not isinstance(grid, tuple) or not 1 <= len(grid) <= 3 or \
                any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in grid):
            raise TypeError(f"Grid must be a tuple of 1 to 3 positive ints, got {grid!r}")
        values = self.parameter_values(args)
        driver = _driver()
        function = self._function(driver)
        maps = [_encode_for(spec, values) for spec in self.tensor_maps]
        storage, addresses = _parameter_buffer(self.fields, values, maps)
        pointers = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
        padded = tuple(int(n) for n in grid) + (1,) * (3 - len(grid))
        driver.check(driver.cuLaunchKernel(function, *padded, *self.block,
                                           self.dynamic_shared_bytes, stream_handle(stream),
                                           pointers, None), "launching the kernel")
        del storage  # kept until here: the driver copies the parameters during the call

    def _function(self, driver):
        context = driver.current_context()
        function = self._functions.get(context)
        if function is None:
            module = ctypes.c_void_p()
            image = self.object_code if self.object_code.startswith(b"\x7fELF") else \
                self.object_code + b"\0"  # PTX text, NUL-terminated for the driver
            status = driver.cuModuleLoadData(ctypes.byref(module), image)
            if status:
                arch = self.kernel.arch if self.kernel is not None else "?"
                driver.check(status, f"loading the kernel (exported for {arch}) on a GPU of "
                                     f"compute capability {driver.compute_capability()}")
            function = ctypes.c_void_p()
            driver.check(driver.cuModuleGetFunction(ctypes.byref(function), module,
                                                    self.symbol.encode()), "finding the entry")
            if self.dynamic_shared_bytes > _SMALL_SHARED_BYTES:
                driver.check(driver.cuFuncSetAttribute(
                    function, _Driver.MAX_DYNAMIC_SHARED_SIZE_BYTES, self.dynamic_shared_bytes),
                    "asking for the kernel's shared memory")
            self._functions[context] = function
        return function


def _flat_values(parameter, value):
    """The values ``value`` passes for ``parameter`` (a manifest description)."""
    name, kind = parameter["name"], parameter["kind"]
    if kind == "constant":
        if constant_text(value) != parameter["value"]:
            raise ValueError(f"argument {name!r} is the constant {parameter['value']}, got "
                             f"{constant_text(value)}")
        return [0] * len(parameter["fields"])
    if kind == "scalar":
        return [_scalar_value(name, parameter["dtype"], value)]
    if kind == "array":
        return _array_values(parameter, value)
    items = parameter["items"] if kind == "tuple" else [parameter["item"]] * parameter["length"]
    wanted = tuple if kind == "tuple" else list
    if not isinstance(value, wanted) or len(value) != len(items):
        raise TypeError(f"argument {name!r} must be a {wanted.__name__} of {len(items)} items, "
                        f"got {type(value).__name__}")
    return [v for item, part in zip(items, value) for v in _flat_values(item, part)]


def _scalar_value(name, dtype, value):
    """The field value of a scalar argument of ``dtype``: unsigned integers as the signed
    integer of their bits, float16 and bfloat16 as their 16 bits (the fields are signed)."""
    given = getattr(getattr(value, "dtype", None), "name", None)  # NumPy scalars
    if given is not None and _DTYPE_ALIASES.get(given, given) != dtype:
        raise TypeError(f"argument {name!r} must be of dtype {dtype}, got {given}")
    if dtype == "bool_":
        if not isinstance(value, bool) and given is None:
            raise TypeError(f"argument {name!r} must be a bool, got {type(value).__name__}")
        return bool(value)
    if dtype.startswith(("int", "uint")):
        if isinstance(value, (bool, float)) or not hasattr(value, "__index__"):
            raise TypeError(f"argument {name!r} must be an integer of dtype {dtype}, got "
                            f"{type(value).__name__}")
        bits, value = int(dtype.lstrip("uint")), int(value)
        low = 0 if dtype.startswith("u") else -(1 << (bits - 1))
        if not low <= value < low + (1 << bits):
            raise ValueError(f"argument {name!r} = {value} does not fit {dtype}")
        return value - (1 << bits) if value >= 1 << (bits - 1) else value
    if isinstance(value, bool) or not isinstance(value, float) and given is None:
        raise TypeError(f"argument {name!r} must be a float of dtype {dtype}, got "
                        f"{type(value).__name__}")
    value = float(value)
    if dtype == "float16":
        return struct.unpack("<h", struct.pack("<e", value))[0]
    if dtype == "bfloat16":  # float32's upper half, rounded to nearest even
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        half = 0x7FC0 if value != value else (bits + 0x7FFF + (bits >> 16 & 1)) >> 16
        return half - (1 << 16) if half >= 1 << 15 else half
    return value


def _array_values(parameter, value):
    """Data pointer, shape and strides of an array argument, checked against what the
    entry was compiled for."""
    name = parameter["name"]
    view = array_view(value)
    if view is None:
        raise TypeError(f"argument {name!r} must be a GPU array (CuPy, PyTorch, numba, ...), "
                        f"got {type(value).__name__}")
    dtype, pointer, shape, strides = view
    if dtype != parameter["dtype"] or len(shape) != parameter["ndim"]:
        raise TypeError(f"argument {name!r} must be a {parameter['ndim']}-d {parameter['dtype']} "
                        f"array, got a {len(shape)}-d {dtype} array")
    if parameter["aligned"] and not is_aligned(pointer, shape, strides, parameter["itemsize"]):
        raise ValueError(f"argument {name!r}: this entry needs arrays whose data and rows are "
                         f"16-byte aligned (export a signature from an unaligned array too)")
    for key, values in (("static_shape", shape), ("static_strides", strides)):
        for axis, wanted in parameter[key]:
            if values[axis] != wanted:
                raise ValueError(f"argument {name!r}: {key[7:]}[{axis}] must be {wanted}, got "
                                 f"{values[axis]}")
    if parameter["index_dtype"] == "int32" and any(not -_INT32 <= n < _INT32
                                                   for n in shape + strides):
        raise ValueError(f"argument {name!r} needs int64 shapes or strides; export the kernel "
                         f"with it annotated ct.IndexedWithInt64")
    return [pointer, *shape, *strides]


# typestr codes of __cuda_array_interface__, and library dtype names, as numba_tile names them
_TYPESTR_DTYPES = {"b1": "bool_", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
                   "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
                   "f2": "float16", "f4": "float32", "f8": "float64"}
_DTYPE_ALIASES = {"bool": "bool_"}


def array_view(value):
    """``(dtype name, data pointer, shape, strides in elements)`` of a GPU array: a CUDA
    PyTorch tensor or an object with ``__cuda_array_interface__``; None for anything else.

    >>> from numba_tile.exported import array_view
    >>> class GPUArray:
    ...     __cuda_array_interface__ = {"shape": (4, 8), "typestr": "<f2", "strides": None,
    ...                                 "data": (0x10000, False), "version": 3}
    >>> array_view(GPUArray())
    ('float16', 65536, (4, 8), (8, 1))
    """
    if (type(value).__module__ or "").startswith("torch") and hasattr(value, "data_ptr"):
        if not value.is_cuda:
            return None
        name = str(value.dtype).replace("torch.", "")
        return (_DTYPE_ALIASES.get(name, name), value.data_ptr(), tuple(value.shape),
                tuple(value.stride()))
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None:
        return None
    dtype = _TYPESTR_DTYPES.get(interface["typestr"][1:], interface["typestr"])
    itemsize, shape = int(interface["typestr"][2:]), tuple(interface["shape"])
    if interface.get("strides") is None:  # C-contiguous
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= n
        strides = tuple(strides)
    else:
        strides = tuple(s // itemsize for s in interface["strides"])
    return dtype, interface["data"][0], shape, strides


def is_aligned(pointer, shape, strides, itemsize):
    """True where 16-byte vectors along the array's last axis never straddle a 16-byte
    boundary (what entries exported as ``aligned`` rely on).

    >>> from numba_tile.exported import is_aligned
    >>> is_aligned(0x10000, (8, 64), (64, 1), 4), is_aligned(0x10004, (8, 64), (64, 1), 4)
    (True, False)
    """
    if not shape or pointer % 16 or strides[-1] != 1 or shape[-1] * itemsize % 16:
        return False
    return all(stride * itemsize % 16 == 0 and (stride > 0 or n == 1)
               for stride, n in zip(strides[:-1], shape[:-1]))


def constant_text(value):
    """How a manifest spells the value of a constant parameter: what a launch must pass
    there (NumPy scalars as Python numbers, dtypes of any library by name, enum members as
    ``Class.MEMBER``).

    >>> from numba_tile.exported import constant_text
    >>> constant_text(64), constant_text(True), constant_text((1, 2.0)), constant_text(None)
    ('64', 'True', '(1, 2.0)', 'None')
    """
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if hasattr(value, "item") and hasattr(value, "dtype") and not isinstance(value, type):
        value = value.item()  # a NumPy scalar
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(map(constant_text, value)) + ("," if len(value) == 1 else "") + ")"
    name = getattr(value, "name", None)  # numba_tile and NumPy dtypes
    if not isinstance(name, str):
        name = getattr(value, "__name__", None) or str(value).replace("torch.", "")
    return "dtype " + _DTYPE_ALIASES.get(name, name)


def _parameter_buffer(fields, values, maps):
    """A buffer holding ``values`` packed as ``fields`` (native alignment, as CUDA lays out
    parameters) and then the tensor maps (64-byte aligned), and the address of each
    parameter in it, for ``cuLaunchKernel``'s ``kernelParams``."""
    layout = struct.Struct("@" + fields)
    maps_at = -(-layout.size // MAP_ALIGNMENT) * MAP_ALIGNMENT
    size = maps_at + MAP_BYTES * len(maps)
    storage = ctypes.create_string_buffer(size + MAP_ALIGNMENT)
    start = -(-ctypes.addressof(storage) // MAP_ALIGNMENT) * MAP_ALIGNMENT
    buffer = (ctypes.c_char * max(size, 1)).from_address(start)
    layout.pack_into(buffer, 0, *values)
    addresses, offset = [], 0
    for code in fields:
        width = struct.calcsize(code)
        offset = -(-offset // width) * width
        addresses.append(start + offset)
        offset += width
    for number, encoded in enumerate(maps):
        ctypes.memmove(start + maps_at + number * MAP_BYTES, encoded, MAP_BYTES)
        addresses.append(start + maps_at + number * MAP_BYTES)
    return storage, addresses


def _encode_for(spec, values):
    """The tensor map ``spec`` (a manifest dict) of the array whose values start at
    ``spec["first_field"]``."""
    start, ndim = spec["first_field"], spec["ndim"]
    return encode_tensor_map((spec["parameter"], ndim, spec["itemsize"], spec["box_columns"],
                              spec["box_rows"], spec["swizzle"], spec["tfloat32"]),
                             values[start], values[start + 1:start + 1 + ndim],
                             values[start + 1 + ndim:start + 1 + 2 * ndim])


# CUtensorMapDataType by element size: the TMA copies bits, so unsigned integers of the
# element's width serve every dtype (zero fill outside the array is the same)
_MAP_DATA_TYPES = {1: 0, 2: 1, 4: 2, 8: 4}  # UINT8, UINT16, UINT32, UINT64
_MAP_TFLOAT32 = 11  # CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: float32 rounded to tfloat32 on the copy
_MAP_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # CU_TENSOR_MAP_SWIZZLE_*
_MAP_L2_PROMOTION_128B = 2


def map_source_start(spec, starts):
    """Where the values (address, shape, strides) of the array of tensor map ``spec`` start
    among a launch's flat parameter values, given where each parameter's start: ``spec[0]``
    is the parameter, or ``(parameter, item)`` for an item of a list parameter, whose items
    follow one another.

    >>> from numba_tile.exported import map_source_start
    >>> map_source_start((1, 2), [0, 5]), map_source_start(((1, 2), 2), [0, 5])
    (5, 15)
    """
    parameter, ndim = spec[0], spec[1]
    if isinstance(parameter, int):
        return starts[parameter]
    number, item = parameter
    return starts[number] + item * (1 + 2 * ndim)


def encode_tensor_map(spec, pointer, shape, strides):
    """The 128 bytes of a tensor map (a TMA copy's description) over the array at
    ``pointer`` of ``shape`` and ``strides`` (in elements, the array's own axis order).
    ``spec`` is ``(parameter, ndim, itemsize, box_columns, box_rows, swizzle_bytes,
    tfloat32)``: the box of one copy, ``box_columns`` elements of ``box_rows`` rows. Needs
    the CUDA driver; launches of numba_tile encode their maps here too.

    >>> import cupy  # doctest: +SKIP
    >>> a = cupy.zeros((256, 64), cupy.float16)  # doctest: +SKIP
    >>> spec = (0, 2, 2, 64, 128, 128, False)  # doctest: +SKIP
    >>> len(encode_tensor_map(spec, a.data.ptr, a.shape, (64, 1)))  # doctest: +SKIP
    128
    """
    _, ndim, itemsize, box_columns, box_rows, swizzle, tfloat32 = spec
    driver = _driver()
    if 0 in shape:  # nothing inside: every copy reads zeros, but the map needs an element
        pointer, shape, strides = driver.zero_bytes(), (1,) * ndim, (16 // itemsize,) * ndim
    # the TMA counts axes from the innermost; its strides (in bytes) are those of the others,
    # positive: on an axis of length 1, whose stride is never used, the extent of the axes
    # inside it (rounded to 16 bytes) stands in
    dims = (ctypes.c_uint64 * ndim)(*reversed(shape))
    inner, stride_values = shape[-1] * itemsize, []
    for n, s in zip(reversed(shape[:-1]), reversed(strides[:-1])):
        stride_values.append(s * itemsize if n != 1 else -(-inner // 16) * 16)
        inner = stride_values[-1] * n
    byte_strides = (ctypes.c_uint64 * max(ndim - 1, 1))(*stride_values)
    box = (ctypes.c_uint32 * ndim)(box_columns, box_rows, *[1] * (ndim - 2))
    element_strides = (ctypes.c_uint32 * ndim)(*[1] * ndim)
    storage = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGNMENT)  # the map, 64-aligned
    address = -(-ctypes.addressof(storage) // MAP_ALIGNMENT) * MAP_ALIGNMENT
    data_type = _MAP_TFLOAT32 if tfloat32 else _MAP_DATA_TYPES[itemsize]
    status = driver.cuTensorMapEncodeTiled(address, data_type, ndim, pointer, dims,
                                           byte_strides, box, element_strides, 0,
                                           _MAP_SWIZZLES[swizzle], _MAP_L2_PROMOTION_128B, 0)
    if status:
        raise ValueError(
            f"The TMA cannot copy from this array (shape {tuple(shape)}, strides "
            f"{tuple(strides)} elements, address {pointer:#x}): cuTensorMapEncodeTiled failed "
            f"with CUDA error {status}. Pass allow_tma=False to the loads of this array")
    return ctypes.string_at(address, MAP_BYTES)


def stream_handle(stream):
    """The raw CUstream of a PyTorch, CuPy, numba or cuda.core stream, or of an int.

    >>> from numba_tile.exported import stream_handle
    >>> class TorchLikeStream:
    ...     cuda_stream = 0x5000
    >>> stream_handle(TorchLikeStream()), stream_handle(0)
    (20480, 0)
    """
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


class _Driver:
    """The CUDA driver calls of loading, launching and encoding tensor maps, typed once."""

    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # CUfunction_attribute
    COMPUTE_CAPABILITY_MAJOR, COMPUTE_CAPABILITY_MINOR = 75, 76  # CUdevice_attribute
    _SIGNATURES = {
        "cuInit": [ctypes.c_uint],
        "cuCtxGetCurrent": [ctypes.c_void_p],
        "cuCtxSetCurrent": [ctypes.c_void_p],
        "cuCtxGetDevice": [ctypes.c_void_p],
        "cuDeviceGet": [ctypes.c_void_p, ctypes.c_int],
        "cuDeviceGetAttribute": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
        "cuDevicePrimaryCtxRetain": [ctypes.c_void_p, ctypes.c_int],
        "cuModuleLoadData": [ctypes.c_void_p, ctypes.c_char_p],
        "cuModuleGetFunction": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p],
        "cuFuncSetAttribute": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
        "cuLaunchKernel": [ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_void_p],
        "cuMemAlloc_v2": [ctypes.c_void_p, ctypes.c_size_t],
        "cuMemsetD8_v2": [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t],
        "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
        "cuTensorMapEncodeTiled": [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32,
                                   *[ctypes.c_void_p] * 5, *[ctypes.c_int] * 4],
    }

    def __init__(self):
        library = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
        for name, argtypes in self._SIGNATURES.items():
            function = getattr(library, name, None)  # tensor maps: drivers of CUDA 12 on
            if function is not None:
                function.argtypes, function.restype = argtypes, ctypes.c_int
                setattr(self, name, function)
        self.check(self.cuInit(0), "starting the CUDA driver")
        self._zeros = {}  # context -> device address of 16 zero bytes

    def check(self, status, doing):
        if status:
            name = ctypes.c_char_p()
            self.cuGetErrorName(status, ctypes.byref(name))
            raise RuntimeError(f"CUDA error {status} ({(name.value or b'?').decode()}) "
                               f"{doing}")

    def current_context(self):
        """The current CUDA context; where there is none, device 0's primary context, made
        current (the one CuPy, PyTorch and numba use)."""
        context = ctypes.c_void_p()
        self.check(self.cuCtxGetCurrent(ctypes.byref(context)), "finding the context")
        if not context.value:
            device = ctypes.c_int()
            self.check(self.cuDeviceGet(ctypes.byref(device), 0), "finding device 0")
            self.check(self.cuDevicePrimaryCtxRetain(ctypes.byref(context), device.value),
                       "creating a context")
            self.check(self.cuCtxSetCurrent(context), "making the context current")
        return context.value

    def compute_capability(self):
        device, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self.cuCtxGetDevice(ctypes.byref(device))
        self.cuDeviceGetAttribute(ctypes.byref(major), self.COMPUTE_CAPABILITY_MAJOR,
                                  device.value)
        self.cuDeviceGetAttribute(ctypes.byref(minor), self.COMPUTE_CAPABILITY_MINOR,
                                  device.value)
        return f"{major.value}.{minor.value}"

    def zero_bytes(self):
        """The device address of 16 zero bytes in the current context (allocated once):
        what the map of an empty array points at, since the TMA needs extents of at least 1."""
        context = self.current_context()
        address = self._zeros.get(context)
        if address is None:
            pointer = ctypes.c_uint64()
            self.check(self.cuMemAlloc_v2(ctypes.byref(pointer), 16), "allocating 16 bytes")
            self.check(self.cuMemsetD8_v2(pointer.value, 0, 16), "zeroing 16 bytes")
            address = self._zeros[context] = pointer.value
        return address


_drivers = []


def _driver():
    if not _drivers:
        _drivers.append(_Driver())
    return _drivers[0]
