"""Kernels loaded on the device: a compiled kernel's module loaded with ``cuda.core``, the
layout of its parameter buffer (struct codes of the flattened parameters, then its tensor
maps), and its launch through the driver (:mod:`numba_tile.runtime.driver`).

>>> from llvmlite import ir
>>> from numba_tile.runtime.loaded_kernels import struct_code
>>> struct_code(ir.IntType(32)), struct_code(ir.IntType(8).as_pointer())
('i', 'Q')
"""

import ctypes
import os
import re
import struct
import threading

from cuda.core import Device, LaunchConfig as CudaCoreLaunchConfig, ObjectCode
from cuda.core import launch as cuda_core_launch
from llvmlite import ir

from ..compiler.contexts import contexts
from ..compiler.planning.tma import MAP_ALIGNMENT, MAP_BYTES
from ..compiler.whole_program import needs_whole_program
from ..errors import TileCompilerExecutionError
from .driver import Driver, LaunchConfig, compute_capability, get_driver, padded_grid, \
    stream_object
from .tensor_maps import encode_arguments


_FORMAT_BY_BITS = {1: "?", 8: "b", 16: "h", 32: "i", 64: "q"}


def struct_code(llvm_type):
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


def object_code(object_code, compiled):
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
        self.compiled = compiled
        self.kernel = object_code(ObjectCode, compiled).get_kernel(compiled.name)
        packer = contexts()[1].get_arg_packer(list(arg_types))
        layout = "@" + "".join(struct_code(t) for t in packer.argument_types)
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
                Driver.BUFFER_POINTER, start, Driver.BUFFER_SIZE,
                ctypes.addressof(self._size), Driver.END)
        self.lock = threading.Lock()  # one parameter buffer: one launch packs it at a time
        self.arguments = {}  # (grid, stream handle) -> the arguments of the driver call
        self.buffer, self.pack = self._buffer, self.layout.pack_into  # what plans use
        self._handle = self.start = None
        driver = get_driver()
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
                                              Driver.MAX_DYNAMIC_SHARED_SIZE_BYTES,
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
        padded = padded_grid(grid)
        if self.start is get_driver().launch_kernel_ex:  # 4 arguments to convert, not 11
            config = LaunchConfig(padded, self.block, self.compiled.dynamic_shared_bytes,
                                  handle, None, 0)
            # the kernel's (library) handle, which launches in whatever context is current:
            # its function of one context (cuKernelGetFunction) launches faster, but fails
            # in a thread with another context current (docs/performance)
            return (ctypes.pointer(config), self._handle, self._kernel_params, self._extra)
        return self._plain_arguments(padded, handle)

    def _plain_arguments(self, padded, handle):
        """``cuLaunchKernel``'s arguments for the grid ``padded`` to 3 axes."""
        return (self._handle, *padded, *self.block, self.compiled.dynamic_shared_bytes,
                get_driver().stream(handle), self._kernel_params, self._extra)

    def encode_maps(self, flat_values):
        """The tensor maps of a launch with ``flat_values`` (the parameters after them)."""
        return encode_arguments(self.tensor_maps, flat_values, self._argument_starts)

    def failed(self, status):
        """After a launch's driver call returned ``status`` (not 0): False where the launch
        can go the general way, whose :meth:`launch` recovers (no context was current), else
        the error raised."""
        if status != Driver.INVALID_CONTEXT:
            get_driver().check(status)
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
        dependent = dependent and get_driver().dependent_launches and \
            compute_capability(self.compiled.arch) >= (9, 0)
        with self.lock:
            self._pack(flat_values)
            status = self._start(grid, stream, dependent)
            if status == Driver.INVALID_CONTEXT and self._made_a_context_current():
                status = self._start(grid, stream, dependent)
        if status:
            get_driver().check(status)

    def _made_a_context_current(self):
        """In a thread with no current context (the launch failed for that), make the
        device's primary context current: True where it did."""
        if get_driver().context_is_current():
            return False
        # the one GPU of the process (with several, the launch made its arrays' device
        # current first); Device() would ask the driver for the current device, a failing
        # call that compute-sanitizer reports
        Device(0).set_current()
        return True

    def _start(self, grid, stream, dependent):
        """The driver call of a launch, the parameters packed; its CUDA status."""
        if dependent:
            return get_driver().launch_dependent(*self._plain_arguments(padded_grid(grid), stream))
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
        if self.tensor_maps:
            raise RuntimeError("This kernel copies with the TMA, whose tensor maps need the "
                               "CUDA driver library (libcuda) to launch with")
        config = self._configs.get(grid)
        if config is None:
            config = self._configs[grid] = CudaCoreLaunchConfig(
                grid=grid, block=self.block, shmem_size=self.compiled.dynamic_shared_bytes)
        self._pack(flat_values)
        params = [getattr(ctypes, _CTYPES[code]).from_buffer_copy(
            self._buffer, offset) for code, offset in self._fields()]
        cuda_core_launch(stream_object(stream), config, self.kernel, *params)

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
