"""The GPU path of ``launch``: compile once per argument signature, launch.

The arguments are GPU arrays of any library, scalars and constants, classified by
:mod:`numba_tile.runtime.arguments` (a fast path for the common kinds on cached launches).
Kernels are compiled for the current device's architecture
(:mod:`numba_tile.runtime.compile_entry`), cached per kernel and argument signature, loaded
(:mod:`numba_tile.runtime.loaded_kernels`) and launched on the caller's stream. In a process
with several GPUs a launch runs on the device of its arrays
(:mod:`numba_tile.runtime.devices`).

>>> from numba_tile.runtime.gpu_launch import compiler_available
>>> compiler_available()
True
"""

import struct

from ..exported import stream_handle
from .arguments import classify_arguments, quick_signature
from .compile_entry import compile_for_types
from .devices import launch_device, make_current, several_gpus
from .driver import current_arch
from .grids import is_valid_grid
from .launch_plans import MAX_PLANS, make_plan
from .loaded_kernels import LoadedKernel


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


def launch_on_gpu(stream, grid, kernel, kernel_args, *, programmatic_dependent_launch=False):
    """Launch on the GPU (``launch``'s arguments, checked): with the kernel loaded for this
    signature where it is, else after compiling it; the next launches of a signature that
    launched this way take its launch plan (:mod:`numba_tile.runtime.launch_plans`)."""
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
    arch = current_arch(device)
    key = (arg_types, arch) if device is None else (arg_types, arch, device)
    loaded = kernel.gpu_cache.get(key)
    if loaded is None:
        loaded = LoadedKernel(compile_for_types(kernel, arg_types, arch), arg_types)
        kernel.gpu_cache[key] = loaded
    return loaded, flat
