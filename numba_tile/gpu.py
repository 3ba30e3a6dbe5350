"""The GPU path of ``launch``: compile once per argument signature, launch.

The arguments are GPU arrays of any library, scalars and constants, classified by
:mod:`numba_tile.arguments` (a fast path for the common kinds on cached launches). Kernels
are compiled for the current device's architecture, cached per kernel and argument
signature, loaded with ``cuda.core`` and launched on the caller's stream. In a process with
several GPUs a launch runs on the device of its arrays (:mod:`numba_tile.devices`).
"""

import ctypes
import os
import re
import struct

from llvmlite import ir

from .arguments import classify_arguments, quick_signature
from .errors import TileCompilerExecutionError
from .compiler.planning.tma import MAP_ALIGNMENT, MAP_BYTES
from .compiler.whole_program import needs_whole_program
from .devices import launch_device, make_current, several_gpus
from .exported import stream_handle
from .launch_plans import MAX_PLANS, make_plan
from .launcher import is_valid_grid
from .tensor_maps import encode_arguments


def compiler_available():
    """True when this build can compile tile kernels for the GPU."""
    return True


_stream_handles = {}  # id(stream) -> (stream, handle): streams recur from launch to launch


def _cached_stream_handle(stream):
    entry = _stream_handles.get(id(stream))
    if entry is not None and entry[0] is stream:
        return entry[1]
    handle = stream_handle(stream)
    if len(_stream_handles) >= 64:  # the entries keep their streams alive: keep few
        _stream_handles.clear()
    _stream_handles[id(stream)] = (stream, handle)
    return handle


_FORMAT_BY_BITS = {1: "?", 8: "b", 16: "h", 32: "i", 64: "q"}


def _struct_code(llvm_type):
    """The :mod:`struct` code of a kernel parameter (natively aligned, as CUDA lays out the
    parameter buffer)."""
    if isinstance(llvm_type, ir.PointerType):
        return "Q"
    if isinstance(llvm_type, ir.IntType):
        return _FORMAT_BY_BITS[llvm_type.width]
    if isinstance(llvm_type, ir.FloatType):
        return "f"
    if isinstance(llvm_type, ir.DoubleType):
        return "d"
    raise TypeError(f"Cannot pass a kernel parameter of LLVM type {llvm_type}")


class _LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute``: an id, then a 64-byte value (a union) 8 bytes in."""
    _fields_ = [("id", ctypes.c_int), ("padding", ctypes.c_char * 4),
                ("value", ctypes.c_char * 64)]


class _LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` of ``cuLaunchKernelEx``."""
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared_bytes", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attributes", ctypes.POINTER(_LaunchAttribute)),
                ("attribute_count", ctypes.c_uint)]


# CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, its int value 1: allowed
_ALLOW_EARLY_START = _LaunchAttribute(6, b"", (1).to_bytes(4, "little"))


class _Driver:
    """``cuLaunchKernel`` of the CUDA driver, called through ctypes with the parameters
    packed into one buffer: a launch then costs one ``struct.pack_into`` and one foreign
    call (``cuda.core.launch`` boxes every parameter and takes several times longer)."""

    BUFFER_POINTER, BUFFER_SIZE, END = 1, 2, 0
    INVALID_CONTEXT = 201
    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # CUfunction_attribute

    def __init__(self):
        import sys
        library = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
        # no argtypes: the callers pass ready C values (converting 11 arguments on every
        # call costs more than the call); dimensions are plain ints (C unsigned int)
        self.launch_kernel = library.cuLaunchKernel
        self.launch_kernel.restype = ctypes.c_int
        self.error_string = library.cuGetErrorString
        self.error_string.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        # kernels come from cuda.core as CUkernel handles (they launch as CUfunctions)
        self._set_kernel_attribute = library.cuKernelSetAttribute
        self._set_kernel_attribute.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                               ctypes.c_int]
        self._set_kernel_attribute.restype = ctypes.c_int
        self._current_device = library.cuCtxGetDevice
        self._current_device.argtypes = [ctypes.POINTER(ctypes.c_int)]
        self._current_device.restype = ctypes.c_int
        # a launch with attributes (CUDA 12), whose configuration is one structure: plain
        # launches take it too (a call with fewer arguments costs less), and programmatic
        # dependent launches need it
        self.launch_kernel_ex = getattr(library, "cuLaunchKernelEx", None)
        if self.launch_kernel_ex is not None:
            self.launch_kernel_ex.restype = ctypes.c_int
        self._current_context = library.cuCtxGetCurrent
        self._current_context.restype = ctypes.c_int
        self._streams = {}

    @property
    def dependent_launches(self):
        """True where the driver can launch a kernel early (``cuLaunchKernelEx``)."""
        return self.launch_kernel_ex is not None

    def launch_dependent(self, kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z,
                         shared_bytes, stream, kernel_params, extra):
        """``cuLaunchKernel``'s arguments, launched with programmatic stream serialization
        allowed: the kernel may start before the one ahead of it on the stream has finished
        (its blocks wait for it in ``griddepcontrol.wait``)."""
        config = _LaunchConfig((grid_x, grid_y, grid_z), (block_x, block_y, block_z),
                               shared_bytes, stream, ctypes.pointer(_ALLOW_EARLY_START), 1)
        return self.launch_kernel_ex(ctypes.byref(config), kernel, kernel_params, extra)

    def stream(self, handle):
        """A CUstream argument for the raw stream handle ``handle`` (cached)."""
        value = self._streams.get(handle)
        if value is None:
            if len(self._streams) > 1024:
                self._streams.clear()
            value = self._streams[handle] = ctypes.c_void_p(handle)
        return value

    def context_is_current(self):
        """Whether this thread has a current CUDA context."""
        context = ctypes.c_void_p()
        return not self._current_context(ctypes.byref(context)) and context.value is not None

    def set_attribute(self, kernel, attribute, value):
        """``cuKernelSetAttribute`` for the current device; the CUDA status."""
        device = ctypes.c_int()
        status = self._current_device(ctypes.byref(device))
        if status:
            return status
        return self._set_kernel_attribute(attribute, value, kernel, device.value)

    def check(self, status):
        if status:
            text = ctypes.c_char_p()
            self.error_string(status, ctypes.byref(text))
            name = text.value.decode() if text.value else "unknown error"
            raise RuntimeError(f"Kernel launch failed: CUDA error {status}: {name}")


_driver = []


def _get_driver():
    """The driver entry points, or None where libcuda cannot be loaded this way."""
    if not _driver:
        try:
            _driver.append(_Driver())
        except (OSError, AttributeError):
            _driver.append(None)
    return _driver[0]


def _object_code(object_code, compiled):
    """The kernel's module: its cubin, or where there is none (nvJitLink could not link
    one, or the kernel needs the whole program compiled), its PTX for the driver to
    compile; a TileCompilerExecutionError naming the likely cause when neither loads."""
    try:
        if compiled.cubin is not None:
            return object_code.from_cubin(compiled.cubin)
        return object_code.from_ptx(compiled.ptx.encode())  # (a str would name a file)
    except Exception as error:
        home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
        hint = (f"CUDA_HOME={home} may point at another or a partial CUDA toolkit: unset it "
                f"to use the libraries of numba-cuda's cu12/cu13 extra" if home else
                "install numba-tile with its cu12 or cu13 extra (the CUDA libraries that "
                "match the driver)")
        unlinked = compiled.cubin is None and not needs_whole_program(compiled.ptx)
        raise TileCompilerExecutionError(
            f"The kernel compiled to PTX for {compiled.arch} but could not be loaded on the "
            f"GPU ({'no cubin: nvJitLink is unavailable, and ' if unlinked else ''}"
            f"{type(error).__name__}: {error}); {hint}") from error


class LoadedKernel:
    """A compiled kernel loaded on the device, with the layout of its parameter buffer."""

    def __init__(self, compiled, arg_types):
        import threading

        from cuda.core import ObjectCode
        from .compiler.contexts import contexts
        self.compiled = compiled
        self.kernel = _object_code(ObjectCode, compiled).get_kernel(compiled.name)
        packer = contexts()[1].get_arg_packer(list(arg_types))
        layout = "@" + "".join(_struct_code(t) for t in packer.argument_types)
        # tensor maps (TMA copies) follow the arguments, 64-byte aligned; each is made from
        # an array argument, found by where its values start among the flat values
        self.tensor_maps = getattr(compiled, "tensor_maps", ())
        self._argument_starts = []
        if self.tensor_maps:
            start = 0
            for arg_type in arg_types:
                self._argument_starts.append(start)
                start += len(contexts()[1].get_arg_packer([arg_type]).argument_types)
            layout += f"{-struct.calcsize(layout) % MAP_ALIGNMENT}x" + \
                f"{MAP_BYTES}s" * len(self.tensor_maps)
        self.layout = struct.Struct(layout)
        self.block = (32 * compiled.num_warps, 1, 1)
        self._configs = {}
        self._storage = ctypes.create_string_buffer(max(self.layout.size, 1) + MAP_ALIGNMENT)
        # the parameters 64-byte aligned, as the tensor maps among them must be
        start = -(-ctypes.addressof(self._storage) // MAP_ALIGNMENT) * MAP_ALIGNMENT
        self._buffer = (ctypes.c_char * max(self.layout.size, 1)).from_address(start)
        self._size = ctypes.c_size_t(self.layout.size)
        if self.tensor_maps:
            # the driver refuses a parameter buffer holding 64-byte aligned parameters
            # (CUDA error 701): each parameter is passed by its address instead
            self._kernel_params = (ctypes.c_void_p * len(self._fields()))(
                *[start + offset for _, offset in self._fields()])
            self._extra = None
        else:
            self._kernel_params = None
            self._extra = (ctypes.c_void_p * 5)(
                _Driver.BUFFER_POINTER, start, _Driver.BUFFER_SIZE,
                ctypes.addressof(self._size), _Driver.END)
        self.lock = threading.Lock()  # one parameter buffer: one launch packs it at a time
        self.arguments = {}  # (grid, stream handle) -> the arguments of the driver call
        self.buffer, self.pack = self._buffer, self.layout.pack_into  # what plans use
        self._handle = self.start = None
        driver = _get_driver()
        if driver is not None:
            try:
                self._handle = ctypes.c_void_p(int(self.kernel.handle))
            except (TypeError, AttributeError):
                pass
            # the driver call a launch makes with driver_arguments
            self.start = driver.launch_kernel_ex or driver.launch_kernel
        if compiled.dynamic_shared_bytes > 48 * 1024:  # beyond 48 KB a kernel opts in
            if driver is None or self._handle is None:
                raise RuntimeError("This kernel needs more than 48 KB of shared memory, which "
                                   "needs the CUDA driver library (libcuda) to ask for")
            driver.check(driver.set_attribute(self._handle,
                                              _Driver.MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              compiled.dynamic_shared_bytes))

    def driver_arguments(self, grid, handle):
        """The driver call's arguments for a launch on ``grid`` (a valid grid, as given) on
        the stream ``handle``, made once for each."""
        arguments = self.arguments.get((grid, handle))
        if arguments is None:
            if len(self.arguments) >= 64:
                self.arguments.clear()
            arguments = self.arguments[grid, handle] = self._make_arguments(grid, handle)
        return arguments

    def _make_arguments(self, grid, handle):
        padded = _padded(grid)
        if self.start is _get_driver().launch_kernel_ex:  # 4 arguments to convert, not 11
            config = _LaunchConfig(padded, self.block, self.compiled.dynamic_shared_bytes,
                                   handle, None, 0)
            # the kernel's (library) handle, which launches in whatever context is current:
            # its function of one context (cuKernelGetFunction) launches faster, but fails
            # in a thread with another context current (docs/performance)
            return (ctypes.pointer(config), self._handle, self._kernel_params, self._extra)
        return self._plain_arguments(padded, handle)

    def _plain_arguments(self, padded, handle):
        """``cuLaunchKernel``'s arguments for the grid ``padded`` to 3 axes."""
        return (self._handle, *padded, *self.block, self.compiled.dynamic_shared_bytes,
                _get_driver().stream(handle), self._kernel_params, self._extra)

    def encode_maps(self, flat_values):
        """The tensor maps of a launch with ``flat_values`` (the parameters after them)."""
        return encode_arguments(self.tensor_maps, flat_values, self._argument_starts)

    def failed(self, status):
        """After a launch's driver call returned ``status`` (not 0): False where the launch
        can go the general way, whose :meth:`launch` recovers (no context was current), else
        the error raised."""
        if status != _Driver.INVALID_CONTEXT:
            _get_driver().check(status)
        return False

    def launch(self, stream, grid, flat_values, dependent=False):
        """Launch on ``grid`` (valid, as given) on the stream handle ``stream``;
        ``dependent``: with programmatic dependent launch, where the kernel was compiled for
        compute capability 9.0 or later (elsewhere a plain launch: its ``griddepcontrol``
        instructions were left out)."""
        if self.tensor_maps:
            flat_values = [*flat_values, *self.encode_maps(flat_values)]
        if self._handle is None:
            return self._launch_with_cuda_core(stream, grid, flat_values)
        dependent = dependent and _get_driver().dependent_launches and \
            _compute_capability(self.compiled.arch) >= (9, 0)
        with self.lock:
            self._pack(flat_values)
            status = self._start(grid, stream, dependent)
            if status == _Driver.INVALID_CONTEXT and self._made_a_context_current():
                status = self._start(grid, stream, dependent)
        if status:
            _get_driver().check(status)

    def _made_a_context_current(self):
        """In a thread with no current context (the launch failed for that), make the
        device's primary context current: True where it did."""
        if _get_driver().context_is_current():
            return False
        from cuda.core import Device
        # the one GPU of the process (with several, the launch made its arrays' device
        # current first); Device() would ask the driver for the current device, a failing
        # call that compute-sanitizer reports
        Device(0).set_current()
        return True

    def _start(self, grid, stream, dependent):
        """The driver call of a launch, the parameters packed; its CUDA status."""
        if dependent:
            return _get_driver().launch_dependent(*self._plain_arguments(_padded(grid), stream))
        return self.start(*self.driver_arguments(grid, stream))

    def _pack(self, flat_values):
        """Fill the parameter buffer; ``struct.error`` where a value does not fit its field
        (a shape beyond int32)."""
        try:
            self.layout.pack_into(self._buffer, 0, *flat_values)
        except struct.error:  # unsigned 64-bit scalars above 2**63 travel as their bits
            wrapped = [v - (1 << 64) if type(v) is int and v >= 1 << 63 else v
                       for v in flat_values]
            if wrapped == flat_values:
                raise
            self.layout.pack_into(self._buffer, 0, *wrapped)

    def _launch_with_cuda_core(self, stream, grid, flat_values):
        from cuda.core import LaunchConfig, launch
        if self.tensor_maps:
            raise RuntimeError("This kernel copies with the TMA, whose tensor maps need the "
                               "CUDA driver library (libcuda) to launch with")
        config = self._configs.get(grid)
        if config is None:
            config = self._configs[grid] = LaunchConfig(
                grid=grid, block=self.block, shmem_size=self.compiled.dynamic_shared_bytes)
        self._pack(flat_values)
        params = [getattr(ctypes, _CTYPES[code]).from_buffer_copy(
            self._buffer, offset) for code, offset in self._fields()]
        launch(_stream_object(stream), config, self.kernel, *params)

    def _fields(self):
        """``(struct code, offset)`` of each parameter in the buffer (a tensor map:
        ``128s``, after its padding)."""
        fields, offset = [], 0
        for code in re.findall(r"\d*[a-zA-Z?]", self.layout.format[1:]):
            if code.endswith("x"):  # padding before the tensor maps
                offset += int(code[:-1] or 1)
                continue
            size = struct.calcsize(code)
            if not code.endswith("s"):
                offset = -(-offset // size) * size
            fields.append((code, offset))
            offset += size
        return fields


_CTYPES = {"?": "c_bool", "b": "c_int8", "h": "c_int16", "i": "c_int32", "q": "c_int64",
           "Q": "c_uint64", "f": "c_float", "d": "c_double"}


_streams = {}


def _stream_object(handle):
    """A cached ``cuda.core`` Stream wrapping a raw handle (making one costs microseconds)."""
    stream = _streams.get(handle)
    if stream is None:
        from cuda.core import Stream
        stream = _streams[handle] = Stream.from_handle(handle)
    return stream


_arch_of_device = {}


def _current_arch(device=None):
    """The compute capability of ``device`` (default: the current one), as ``sm_XY`` (looked
    up once a device); the current device is made current in this thread."""
    arch = _arch_of_device.get(device)
    if arch is None:
        from cuda.core import Device
        # with one GPU, it by number: Device() asks the driver for the current device, a
        # call that fails (an error compute-sanitizer reports) while no context is current
        found = Device(0 if device is None and not several_gpus() else device)
        found.set_current()
        major, minor = found.compute_capability
        arch = _arch_of_device[device] = f"sm_{major}{minor}"
    return arch


def _padded(grid):
    """``grid`` with axes of 1 up to three, as the driver takes it."""
    return tuple(grid) + (1,) * (3 - len(grid))


def _compute_capability(arch):
    """``(9, 0)`` of ``"sm_90"`` (and of ``"sm_90a"``)."""
    digits = arch[3:].rstrip("abf")
    return int(digits[:-1]), int(digits[-1])


def launch_on_gpu(stream, grid, kernel, kernel_args, *, programmatic_dependent_launch=False):
    """Launch on the GPU (``launch``'s arguments, checked): with the kernel loaded for this
    signature where it is, else after compiling it; the next launches of a signature that
    launched this way take its launch plan (:mod:`numba_tile.launch_plans`)."""
    handle = stream if type(stream) is int else _cached_stream_handle(stream)
    device = None
    if several_gpus():  # on the device of the arrays, with the kernel loaded there
        device = launch_device(kernel.parameters, kernel_args, handle)
        make_current(device)
    quick, loaded = quick_signature(kernel, kernel_args), None
    if quick is not None:
        key = quick[0] if device is None else (quick[0], device)
        loaded = kernel.gpu_cache.get(key)
        if loaded is not None:
            try:
                loaded.launch(handle, grid, quick[1], programmatic_dependent_launch)
            except struct.error:  # a shape or stride beyond int32: the full path says so
                loaded = None
    if loaded is None:
        loaded, flat = _prepare(kernel, kernel_args, device)
        if quick is not None:
            kernel.gpu_cache[key] = loaded
        loaded.launch(handle, grid, flat, programmatic_dependent_launch)
    if quick is not None and device is None and not programmatic_dependent_launch:
        _add_plan(kernel, quick[0], kernel_args, loaded)


def _add_plan(kernel, key, kernel_args, loaded):
    """Write the launch plan of a signature that launched the general way, where it takes
    one: up to ``MAX_PLANS`` a kernel, kept (a loop over more signatures than that
    would otherwise write plans over and over)."""
    plans = kernel.launch_plans
    key = (key, *map(type, kernel_args))  # a plan takes the classes it was written for
    if len(plans) >= MAX_PLANS or loaded.start is None or any(p.key == key for p in plans):
        return
    plan = make_plan(key[0], kernel_args, loaded, stream_handle=_cached_stream_handle,
                     valid_grid=is_valid_grid)
    if plan is not None:
        plan.key = key
        kernel.launch_plans = [*plans, plan]  # a new list: other threads may be reading


def _prepare(kernel, kernel_args, device=None):
    """Classify every argument, compile (or find) the kernel for the signature and the
    device (``None``: the current one)."""
    arg_types, flat = classify_arguments(kernel, kernel_args)
    arch = _current_arch(device)
    key = (arg_types, arch) if device is None else (arg_types, arch, device)
    loaded = kernel.gpu_cache.get(key)
    if loaded is None:
        from .compiling import compile_for_types
        loaded = LoadedKernel(compile_for_types(kernel, arg_types, arch), arg_types)
        kernel.gpu_cache[key] = loaded
    return loaded, flat
