"""Kernels that only the driver's compile of the whole program builds as written.

nvJitLink compiles PTX as relocatable code, and there ptxas ignores ``setmaxnreg`` (its note
C7504): a producer warpgroup could not hand its registers to the consumers
(:mod:`~numba_tile.compiler.lowering.warp_roles`). Such a kernel keeps no cubin: the
driver compiles its PTX when it is loaded, and the resource report is that of a compile by
the driver (:func:`driver_report`), made where a GPU is present.
"""

import ctypes
import re
import sys

_TRADES_REGISTERS = re.compile(r"^\s*setmaxnreg\.", re.MULTILINE)
# cuModuleLoadDataEx's options: the information log, its size, verbose
_INFO_LOG_BUFFER, _INFO_LOG_BUFFER_SIZE, _LOG_VERBOSE = 3, 4, 12
_LOG_BYTES = 1 << 16


def needs_whole_program(ptx):
    """Whether ``ptx`` has instructions that ptxas honours only compiling the whole program.

    >>> from numba_tile.compiler.whole_program import needs_whole_program
    >>> needs_whole_program("\\tsetmaxnreg.inc.sync.aligned.u32 240;"), needs_whole_program("ret;")
    (True, False)
    """
    return bool(_TRADES_REGISTERS.search(ptx))


def driver_report(ptx, name):
    """The driver's compile of ``ptx`` reported as nvJitLink reports a link (the registers
    and stack of kernel ``name``, and ptxas's notes where the driver compiled it now rather
    than finding it in its cache of compiled PTX), or None where no GPU can compile it here
    (no driver, no device, PTX for another GPU). The kernel's load then finds the compile
    in that cache.

    >>> from numba_tile.compiler.whole_program import driver_report
    >>> print(driver_report("not PTX", "k"))  # with a GPU or without
    None
    """
    try:
        driver = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
    except OSError:
        return None
    if driver.cuInit(0):
        return None
    context = ctypes.c_void_p()
    pushed = False
    if driver.cuCtxGetCurrent(ctypes.byref(context)) or not context.value:
        # no context in this thread: the first GPU's primary one, for the compile alone
        if driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0):
            return None
        pushed = not driver.cuCtxPushCurrent_v2(context)
        if not pushed:
            driver.cuDevicePrimaryCtxRelease_v2(0)
            return None
    try:
        return _compiled_report(driver, ptx, name)
    finally:
        if pushed:
            driver.cuCtxPopCurrent_v2(ctypes.byref(context))
            driver.cuDevicePrimaryCtxRelease_v2(0)


def _compiled_report(driver, ptx, name):
    log = ctypes.create_string_buffer(_LOG_BYTES)
    options = (ctypes.c_int * 3)(_INFO_LOG_BUFFER, _INFO_LOG_BUFFER_SIZE, _LOG_VERBOSE)
    values = (ctypes.c_void_p * 3)(ctypes.cast(log, ctypes.c_void_p), _LOG_BYTES, 1)
    module = ctypes.c_void_p()
    if driver.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(ptx.encode()), 3,
                                 options, values):
        return None
    try:
        function = ctypes.c_void_p()
        if driver.cuModuleGetFunction(ctypes.byref(function), module, name.encode()):
            return None
        found = {}
        for attribute, code in _ATTRIBUTES.items():
            value = ctypes.c_int()
            if driver.cuFuncGetAttribute(ctypes.byref(value), code, function):
                return None
            found[attribute] = value.value
    finally:
        driver.cuModuleUnload(module)
    # (the log is empty where the driver found the compile in its cache: the function's
    # attributes are the report then)
    return (log.value.decode(errors="replace") +
            f"\ninfo    : used {found['registers']} registers, {found['stack']} stack, "
            f"{found['shared']} bytes smem (the driver's compile)\n")


# CUfunction_attribute: static shared bytes, local (stack) bytes a thread, registers a thread
_ATTRIBUTES = {"shared": 1, "stack": 3, "registers": 4}
