"""The CUDA driver as a launch reaches it: ``cuLaunchKernel``/``cuLaunchKernelEx`` through
:mod:`ctypes` with the parameters packed in one buffer, the launch structures they take,
streams wrapped for ``cuda.core``, and the compute capability of a device.

>>> from numba_tile.runtime.driver import compute_capability, padded_grid
>>> compute_capability("sm_90a"), padded_grid((4, 2))
((9, 0), (4, 2, 1))
"""

import ctypes
import sys

from cuda.core import Device, Stream

from .devices import several_gpus


class LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute``: an id, then a 64-byte value (a union) 8 bytes in."""
    _fields_ = [("id", ctypes.c_int), ("padding", ctypes.c_char * 4),
                ("value", ctypes.c_char * 64)]


class LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` of ``cuLaunchKernelEx``."""
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared_bytes", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attributes", ctypes.POINTER(LaunchAttribute)),
                ("attribute_count", ctypes.c_uint)]


# CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, its int value 1: allowed
ALLOW_EARLY_START = LaunchAttribute(6, b"", (1).to_bytes(4, "little"))


class Driver:
    """``cuLaunchKernel`` of the CUDA driver, called through ctypes with the parameters
    packed into one buffer: a launch then costs one ``struct.pack_into`` and one foreign
    call (``cuda.core.launch`` boxes every parameter and takes several times longer)."""

    BUFFER_POINTER, BUFFER_SIZE, END = 1, 2, 0
    INVALID_CONTEXT = 201
    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # CUfunction_attribute

    def __init__(self):
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
        config = LaunchConfig((grid_x, grid_y, grid_z), (block_x, block_y, block_z),
                              shared_bytes, stream, ctypes.pointer(ALLOW_EARLY_START), 1)
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


def get_driver():
    """The driver entry points, or None where libcuda cannot be loaded this way."""
    if not _driver:
        try:
            _driver.append(Driver())
        except (OSError, AttributeError):
            _driver.append(None)
    return _driver[0]


_streams = {}


def stream_object(handle):
    """A cached ``cuda.core`` Stream wrapping a raw handle (making one costs microseconds)."""
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = Stream.from_handle(handle)
    return stream


_arch_of_device = {}


def current_arch(device=None):
    """The compute capability of ``device`` (default: the current one), as ``sm_XY`` (looked
    up once a device); the current device is made current in this thread."""
    arch = _arch_of_device.get(device)
    if arch is None:
        # with one GPU, it by number: Device() asks the driver for the current device, a
        # call that fails (an error compute-sanitizer reports) while no context is current
        found = Device(0 if device is None and not several_gpus() else device)
        found.set_current()
        major, minor = found.compute_capability
        arch = _arch_of_device[device] = f"sm_{major}{minor}"
    return arch


def padded_grid(grid):
    """``grid`` with axes of 1 up to three, as the driver takes it."""
    return tuple(grid) + (1,) * (3 - len(grid))


def compute_capability(arch):
    """``(9, 0)`` of ``"sm_90"`` (and of ``"sm_90a"``)."""
    digits = arch[3:].rstrip("abf")
    return int(digits[:-1]), int(digits[-1])
