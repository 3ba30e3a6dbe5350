"""Which GPU a launch runs on, in a process that sees several: the one that holds its arrays.

With one GPU (the common case) nothing here runs on a launch. With several, each launch asks
the driver where its arrays' memory lives (``cuPointerGetAttribute``, for arrays of any
library), makes that device current, and uses the kernel compiled and loaded for it; arrays
on different devices, or a stream of another device, are a ``ValueError`` naming them.

>>> from numba_tile.runtime.devices import describe_devices
>>> describe_devices({0: ["x"], 1: ["y", "out"]})
'device 0 (x), device 1 (y, out)'
"""

import ctypes
import sys

from cuda.core import Device

from ..partitions import Partition

_POINTER_DEVICE_ORDINAL = 9  # CUpointer_attribute CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
_PEER_ACCESS_ALREADY_ENABLED = 704  # CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED


class _DeviceQueries:
    """The driver calls this module needs, through ctypes."""

    def __init__(self):
        library = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
        library.cuInit(0)
        count = ctypes.c_int()
        status = library.cuDeviceGetCount(ctypes.byref(count))
        self.count = count.value if status == 0 else 1
        self._pointer_attribute = library.cuPointerGetAttribute
        self._pointer_attribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
        self._pointer_attribute.restype = ctypes.c_int
        self._stream_device = getattr(library, "cuStreamGetDevice", None)  # CUDA 12.8 on
        if self._stream_device is not None:
            self._stream_device.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            self._stream_device.restype = ctypes.c_int
        self._is_capturing = library.cuStreamIsCapturing
        self._is_capturing.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        self._is_capturing.restype = ctypes.c_int
        self._library = library
        self.peers_reached = set()  # (device, peer): peer access turned on

    def pointer_device(self, pointer):
        """The ordinal of the device whose memory holds ``pointer``, or None (not device
        memory, or no answer)."""
        ordinal = ctypes.c_int()
        status = self._pointer_attribute(ctypes.byref(ordinal), _POINTER_DEVICE_ORDINAL,
                                         pointer)
        return ordinal.value if status == 0 else None

    def has_context(self, device):
        """Whether this process has made ``device``'s primary context (memory it allocated
        there is then in it)."""
        flags, active = ctypes.c_uint(), ctypes.c_int()
        status = self._library.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags),
                                                          ctypes.byref(active))
        return status == 0 and bool(active.value)

    def enable_peer_access(self, device, peer):
        """Let ``device`` (its primary context made current) read the memory of ``peer``'s
        primary context; False where the two GPUs have no peer access."""
        library = self._library
        possible = ctypes.c_int()
        if library.cuDeviceCanAccessPeer(ctypes.byref(possible), device, peer) or \
                not possible.value:
            return False
        make_current(device)
        context = ctypes.c_void_p()
        if library.cuDevicePrimaryCtxRetain(ctypes.byref(context), peer):
            return False
        status = library.cuCtxEnablePeerAccess(context, 0)
        # the peer's context stays retained: its memory is read from now on
        return status in (0, _PEER_ACCESS_ALREADY_ENABLED)

    def stream_device(self, handle):
        """The ordinal of the device of the stream ``handle`` (None for the legacy and
        per-thread default streams, which belong to the current device, for a stream being
        captured into a graph, or where the driver cannot tell)."""
        if self._stream_device is None or handle in (0, 1, 2):
            return None
        capturing = ctypes.c_int()
        # asking a capturing stream for its device ends the capture with an error
        if self._is_capturing(ctypes.c_void_p(handle), ctypes.byref(capturing)) or \
                capturing.value:
            return None
        ordinal = ctypes.c_int()
        status = self._stream_device(ctypes.c_void_p(handle), ctypes.byref(ordinal))
        return ordinal.value if status == 0 else None


_queries = []


def _get_queries():
    if not _queries:
        try:
            _queries.append(_DeviceQueries())
        except (OSError, AttributeError):
            _queries.append(None)
    return _queries[0]


def several_gpus():
    """True when this process sees more than one GPU (then launches choose their device)."""
    queries = _get_queries()
    return queries is not None and queries.count > 1


def _data_pointer(value):
    if isinstance(value, Partition):
        value = value.array
    if hasattr(value, "data_ptr"):  # torch (whose interface refuses tensors needing grad)
        return value.data_ptr() if getattr(value, "is_cuda", False) else None
    interface = getattr(value, "__cuda_array_interface__", None)
    return interface["data"][0] if interface is not None else None


def describe_devices(names_by_device):
    """``device 0 (x), device 1 (y, out)``: where the named arrays are."""
    return ", ".join(f"device {device} ({', '.join(names)})"
                     for device, names in sorted(names_by_device.items()))


def launch_device(parameters, kernel_args, stream_handle):
    """The device a launch runs on: the one holding every array among ``kernel_args``
    outside lists and tuples (else the stream's device, else the current one). Arrays on
    several devices, or a stream of another device, are a ``ValueError``; arrays in lists
    and tuples on other devices are read through peer access (:func:`_reach_peers`)."""
    queries = _get_queries()
    found, listed = {}, []
    for name, value in zip(parameters, kernel_args):
        in_list = isinstance(value, (tuple, list))
        for item in value if in_list else (value,):
            pointer = _data_pointer(item)
            device = queries.pointer_device(pointer) if pointer else None
            if device is None:
                continue
            if in_list:
                listed.append((name, device))
            else:
                found.setdefault(device, []).append(name)
    if len(found) > 1:
        raise ValueError(f"The kernel's arrays are on different GPUs: "
                         f"{describe_devices(found)}; move them to one device")
    device = next(iter(found), None)
    stream_device = queries.stream_device(stream_handle)
    if device is None:
        device = stream_device
    elif stream_device is not None and stream_device != device:
        raise ValueError(f"The stream belongs to GPU {stream_device}, but the kernel's arrays "
                         f"are on GPU {device}; launch on a stream of device {device}")
    if device is None:
        listed_devices = {item_device for _, item_device in listed}
        if len(listed_devices) == 1:
            device = listed_devices.pop()
        else:
            device = Device().device_id
    _reach_peers(queries, device, listed)
    return device


def _reach_peers(queries, device, listed):
    """Turn on peer access from ``device`` to the GPUs of the ``(name, device)`` arrays of
    lists, once a pair, a ``ValueError`` where the two have none. Only where this
    process holds the other GPU's context: memory of another process (symmetric memory, an
    IPC handle) is mapped for ``device`` by whoever mapped it."""
    for name, peer in listed:
        if peer == device or (device, peer) in queries.peers_reached or \
                not queries.has_context(peer):
            continue
        if not queries.enable_peer_access(device, peer):
            raise ValueError(f"Argument '{name}': an array on GPU {peer}, which GPU {device} "
                             f"(where the launch runs) cannot read: the two GPUs have no peer "
                             f"access")
        queries.peers_reached.add((device, peer))


def make_current(device):
    """Make ``device``'s primary context current in this thread."""
    Device(device).set_current()
