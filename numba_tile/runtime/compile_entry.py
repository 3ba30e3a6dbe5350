"""The compile entry: ``ct.compile`` (a kernel for a GPU architecture, without a GPU) and
what launches share with it: the options of a compile, ``ct.compiler_timeout``, and the
caches (in memory per kernel, then on disk) in front of the compiler.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def vadd(a, b, c, TILE: ct.Constant[int]):
...     i = ct.bid(0)
...     ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))
>>> x = np.zeros(1024, np.float32)
>>> compiled = ct.compile(vadd, (x, x, x, 256), arch="sm_90")
>>> ".target sm_90" in compiled.ptx and "ld.global" in compiled.ptx
True
"""

import contextlib
import contextvars
import os
import re
import sys
import threading
import warnings

from ..compiler.compile_options import CompileOptions
from ..compiler.kernel_compiler import CompiledKernel, compile_to_ptx, link_cubin
from ..compiler.whole_program import driver_report, needs_whole_program
from ..errors import TileCompilerTimeoutError, TileError
from . import disk_cache
from .arguments import argument_tuple_error, check_argument_count, classify_arguments
from .kernels import ByTarget, require_kernel

# the innermost ct.compiler_timeout's seconds: a context variable, so that each thread (and
# each asyncio task) sees only the blocks it entered
_timeout_seconds = contextvars.ContextVar("numba_tile_compiler_timeout", default=None)


@contextlib.contextmanager
def compiler_timeout(timeout_sec):
    """Bound the compile time of the launches (and ``ct.compile`` calls) inside the block,
    in seconds: a compile that takes longer raises ``TileCompilerTimeoutError``. Blocks
    nest (the innermost applies) and hold for the thread or task that entered them.
    Outside any block, ``CUDA_TILE_COMPILER_TIMEOUT_SEC`` (as cuTile reads it) bounds them.

    >>> import numba_tile as ct
    >>> from numba_tile.runtime.compile_entry import compile_options
    >>> @ct.kernel(num_warps=4)
    ... def k(x):
    ...     pass
    >>> with ct.compiler_timeout(60):
    ...     compile_options(k, "sm_90").timeout_seconds
    60
    """
    if not (isinstance(timeout_sec, (int, float)) and timeout_sec > 0):
        raise ValueError(f"compiler_timeout needs a positive number of seconds, got "
                         f"{timeout_sec!r}")
    token = _timeout_seconds.set(timeout_sec)
    try:
        yield
    finally:
        _timeout_seconds.reset(token)


def compile_options(kernel, arch):
    """The :class:`~numba_tile.compiler.compile_options.CompileOptions` of a compile of
    ``kernel`` for ``arch``: its options resolved for the architecture (a ``ByTarget``
    gives its value there), and the compile timeout in force.

    >>> import numba_tile as ct
    >>> from numba_tile.runtime.compile_entry import compile_options
    >>> @ct.kernel(num_warps=ct.ByTarget(sm_90=8, default=4))
    ... def k(x):
    ...     pass
    >>> compile_options(k, "sm_90").num_warps, compile_options(k, "sm_80").num_warps
    (8, 4)
    """
    def resolved(name):
        value = kernel.options.get(name)
        return value.resolve(arch) if isinstance(value, ByTarget) else value
    # (cuTile's num_worker_warps: the warps that compute, beside a producer the compiler
    # adds; numba_tile's num_warps, where that is not given)
    return CompileOptions(num_warps=resolved("num_warps") or resolved("num_worker_warps"),
                          occupancy=resolved("occupancy"),
                          num_stages=resolved("num_stages"),
                          warp_specialize=resolved("warp_specialize"),
                          opt_level=_opt_level(resolved("opt_level")),
                          keep_llvm_ir="CUTILEIR" in logged_irs(),
                          timeout_seconds=_timeout_seconds.get() or environment_timeout())


# what each value of CUDA_TILE_LOGS (cuTile's variable) prints on stderr for each compile:
# cuTile's own IR of the kernel is numba_tile's LLVM IR, and the Tile IR it hands to its
# backend compiler is numba_tile's PTX
_LOGS = {"CUTILEIR": "LLVM IR", "TILEIR": "PTX"}


def logged_irs(environ=None):
    """The values ``CUDA_TILE_LOGS`` holds (comma-separated, as cuTile reads it): which IR of
    each kernel compiled is printed on stderr.

    >>> from numba_tile.runtime.compile_entry import logged_irs
    >>> logged_irs({"CUDA_TILE_LOGS": "tileir, CUTILEIR"}), logged_irs({})
    (('TILEIR', 'CUTILEIR'), ())
    >>> logged_irs({"CUDA_TILE_LOGS": "MLIR"})
    Traceback (most recent call last):
    ...
    RuntimeError: Unexpected value MLIR in CUDA_TILE_LOGS, supported values are ['CUTILEIR', 'TILEIR']
    """
    text = (os.environ if environ is None else environ).get("CUDA_TILE_LOGS", "")
    found = []
    for value in text.split(","):
        value = value.strip().upper()
        if not value:
            continue
        if value not in _LOGS:
            raise RuntimeError(f"Unexpected value {value} in CUDA_TILE_LOGS, supported values "
                               f"are {list(_LOGS)}")
        found.append(value)
    return tuple(found)


def _log(kernel, lowered, logged):
    for value in logged:
        text = lowered.llvm_ir if value == "CUTILEIR" else lowered.ptx
        sys.stderr.write(f"numba_tile: the {_LOGS[value]} of kernel {kernel.__name__!r} "
                         f"(CUDA_TILE_LOGS={value}):\n{text}\n")


def _opt_level(value):
    return 3 if value is None else value  # (a ByTarget without this target's value)


_TIMEOUT_VARIABLE = "CUDA_TILE_COMPILER_TIMEOUT_SEC"


def environment_timeout(environ=None):
    """The compile timeout ``CUDA_TILE_COMPILER_TIMEOUT_SEC`` sets (seconds, read as cuTile
    reads it), or None where it is not set.

    >>> from numba_tile.runtime.compile_entry import environment_timeout
    >>> environment_timeout({"CUDA_TILE_COMPILER_TIMEOUT_SEC": "2.5"}), environment_timeout({})
    (2.5, None)
    >>> environment_timeout({"CUDA_TILE_COMPILER_TIMEOUT_SEC": "0"})
    Traceback (most recent call last):
    ...
    ValueError: Value of CUDA_TILE_COMPILER_TIMEOUT_SEC must be positive, got '0'
    """
    text = (os.environ if environ is None else environ).get(_TIMEOUT_VARIABLE)
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is None or not seconds > 0:
        raise ValueError(f"Value of {_TIMEOUT_VARIABLE} must be positive, got {text!r}")
    return seconds


def compile(kernel, args, *, arch="sm_90"):
    """Compile ``kernel`` for ``args`` (host arrays do: only their dtype, rank and
    alignment matter) and ``arch``; works without a GPU. Returns an object with ``.ptx``,
    ``.cubin`` (None where no linker is available), ``.registers``, ``.spill_bytes`` and
    ``.shared_bytes``.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def double(x, TILE: ct.Constant[int]):
    ...     t = ct.load(x, (ct.bid(0),), (TILE,))
    ...     ct.store(x, (ct.bid(0),), t + t)
    >>> k = ct.compile(double, (np.zeros(64, np.float16), 64), arch="sm_80")
    >>> k.spill_bytes, ".target sm_80" in k.ptx
    (0, True)
    """
    return compile_for_types(kernel, argument_types(kernel, args), arch)


def argument_types(kernel, args):
    """The Numba types ``kernel`` is compiled for with ``args`` (a tuple; host arrays do, as
    for :func:`compile`), or the error a launch with them raises.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.runtime.compile_entry import argument_types
    >>> @ct.kernel
    ... def k(x, n):
    ...     pass
    >>> argument_types(k, (np.zeros(4, np.float32), 3))
    (TileArray(float32, 1, int32, aligned), int32)
    """
    require_kernel(kernel)
    kernel.check_source()  # (its parameters, *args...: before the arguments are counted)
    if not isinstance(args, tuple):  # (as a launch says it)
        raise argument_tuple_error(args)
    check_argument_count(kernel, args)
    return classify_arguments(kernel, args, on_device=False)[0]


def compile_for_types(kernel, arg_types, arch):
    """Compile ``kernel`` for Numba argument types (what ``compile`` and launches share).

    Results are cached in memory per kernel object, keyed by the argument types (constant
    values included) and the architecture; so are compile errors (ours and Numba's), which a
    second compile of the same signature raises again without recompiling. Below the memory
    cache, successful compiles are cached on disk (:mod:`numba_tile.runtime.disk_cache`),
    where a new kernel object or a new process finds them.
    """
    kernel.check_source()
    kernel.check_clusters(arch)
    key = (tuple(arg_types), arch)
    cached = kernel.compile_cache.get(key)
    if cached is None:
        options = compile_options(kernel, arch)
        cached = _within_timeout(
            kernel, options.timeout_seconds,
            lambda: _compile_through_disk_cache(kernel, key[0], arch, options))
        kernel.compile_cache[key] = cached
    if isinstance(cached, Exception):
        raise cached.with_traceback(None)
    return cached


def _within_timeout(kernel, seconds, compile_kernel):
    """``compile_kernel()``, or ``TileCompilerTimeoutError`` once it has run longer than
    ``seconds`` (None: no limit). The compile goes on in a background thread (NVVM cannot
    be interrupted) and its result is dropped; nothing is cached, so a later launch with a
    longer timeout compiles again."""
    if seconds is None:
        return compile_kernel()
    outcome = {}

    def run():
        try:
            outcome["result"] = compile_kernel()
        except BaseException as error:  # handed to the caller's thread below
            outcome["error"] = error
    worker = threading.Thread(target=run, name=f"compile {kernel.__name__}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TileCompilerTimeoutError(
            f"Compiling kernel {kernel.__name__!r} took longer than the {seconds} s that "
            f"ct.compiler_timeout (or {_TIMEOUT_VARIABLE}) allows; raise the limit, or use "
            f"smaller tiles")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _compile_through_disk_cache(kernel, arg_types, arch, options):
    """The disk cache's entry, else a fresh compile (stored on disk), else the compile error."""
    directory = disk_cache.cache_directory()
    disk_key = disk_cache.kernel_key(kernel, arg_types, arch) if directory else None
    if disk_key is not None:
        found = disk_cache.load(disk_key, directory)
        if found is not None:
            warn_of_serialized_products(found)
            return found
    try:
        lowered = compile_to_ptx(kernel.fn, arg_types, arch, options)
        _log(kernel, lowered, logged_irs())
        cubin, log, kernels_own_report = _linked(lowered.ptx, lowered.entry, arch,
                                                 options.opt_level)
        compiled = CompiledKernel(lowered.entry, arch, lowered.ptx, cubin, log,
                                  lowered.num_warps, lowered.scratch_bytes, lowered.tensor_maps,
                                  python_name=kernel.fn.__name__)
    except Exception as error:
        if not _is_compile_error(error):
            raise
        return error
    warn_of_serialized_products(compiled)
    # a link without its resource report (seen when another library loaded an older
    # nvJitLink first) is not kept: a later process may get the full report
    # (nor is nvJitLink's report of a kernel that the driver compiles)
    if disk_key is not None and kernels_own_report and "registers" in (compiled.info_log or ""):
        disk_cache.store(disk_key, compiled, directory)
    return compiled


def warn_of_serialized_products(compiled):
    """Warn where the linker reports that it runs the kernel's ``wgmma`` one after another
    (ptxas's C7509), which costs a product-heavy kernel much of its speed: most often a
    call to a slow path, such as an IEEE float division's, anywhere in the kernel.

    >>> import warnings
    >>> from numba_tile.compiler.kernel_compiler import CompiledKernel
    >>> from numba_tile.runtime.compile_entry import warn_of_serialized_products
    >>> log = ("ptxas info    : (C7509) Potential Performance Loss: wgmma.mma_async "
    ...        "instructions are serialized due to the presence of Extern calls in the "
    ...        "function 'k'")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_of_serialized_products(CompiledKernel("k", "sm_90", "", b"", log, 4))
    >>> "Extern calls" in str(caught[0].message)
    True
    """
    found = re.search(r"wgmma\.mma_async instructions are serialized due to ([^']*?)"
                      r"(?: in the function|$)", compiled.info_log or "", re.MULTILINE)
    if found is None:
        return
    warnings.warn(
        f"numba_tile: the tensor-core products (wgmma) of kernel {compiled.kernel_name} run "
        f"one after another, slower than they could, as ptxas reports: serialized due to "
        f"{found.group(1).strip()}. A float division or square root with IEEE rounding (the "
        f"default) calls a slow path; rounding_mode=ct.RoundingMode.FULL (division) or "
        f"APPROX does not.", RuntimeWarning, stacklevel=4)


def _linked(ptx, entry, arch, opt_level=3):
    """``(cubin, resource report, whether the report is the kernel's own)`` of ``ptx``
    (ptxas at ``opt_level``).
    nvJitLink's relocatable compile would ignore a ``setmaxnreg``: such a kernel keeps no
    cubin (the driver compiles its PTX when it is loaded) and its report is a compile by
    the driver, or where no GPU can make one here, nvJitLink's (not the kernel's own)."""
    if not needs_whole_program(ptx):
        cubin, log = link_cubin(ptx, arch, opt_level)
        return cubin, log, True
    log = driver_report(ptx, entry)
    if log is not None:
        return None, log, True
    return None, link_cubin(ptx, arch, opt_level)[1], False


def _is_compile_error(error):
    """Errors that belong to the kernel's signature: ours, and Numba's typing errors."""
    return isinstance(error, TileError) or (type(error).__module__ or "").startswith("numba.")
