"""``launch``: validate the grid, stream and arguments, then run the kernel.

With ``NUMBA_TILE_INTERPRET=1`` in the environment (or inside ``with ct.interpret():``) the
kernel runs on the CPU in the interpreter; otherwise it is compiled for the GPU.
"""

import contextlib
import os
import threading

from ..interpreter.runner import run
from .arguments import argument_tuple_error, check_argument_count
from .gpu_launch import launch_on_gpu
from .grids import check_grid, partition_grid
from .kernels import Kernel, require_kernel


class _ForcedMode(threading.local):
    """What ``interpret()`` forces in this thread: True, False, or None (the environment
    decides). A class attribute gives threads that never set it None without the exception
    a missing attribute costs (every launch reads it)."""
    value = None


_forced = _ForcedMode()


def interpret_mode():
    """True when launches run in the interpreter (the env var or :func:`interpret`).

    >>> import numba_tile as ct
    >>> with ct.interpret():
    ...     ct.interpret_mode()
    True
    """
    forced = _forced.value
    if forced is not None:
        return forced
    # (every launch asks: the dict behind os.environ where it can, since os.environ.get
    # encodes the key and decodes the value each time)
    data = getattr(os.environ, "_data", None)
    raw = os.environ.get("NUMBA_TILE_INTERPRET") if data is None or _ENV_KEY is None \
        else data.get(_ENV_KEY)
    if raw is None:
        return False
    enabled = _parsed_switches.get(raw)
    if enabled is None:  # every launch asks: parse each spelling once
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw or ""
        enabled = text.strip().lower() not in ("", "0", "false", "no", "off")
        if len(_parsed_switches) < 64:
            _parsed_switches[raw] = enabled
    return enabled


_parsed_switches = {}

try:
    _ENV_KEY = os.environ.encodekey("NUMBA_TILE_INTERPRET")
except AttributeError:
    _ENV_KEY = None


@contextlib.contextmanager
def interpret(enabled=True):
    """Run the launches in this block in interpreter mode (or not, with ``enabled=False``).

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x):
    ...     ct.store(x, (0,), ct.full((2,), 1.0, ct.float32))
    >>> a = np.zeros(2, np.float32)
    >>> with ct.interpret():
    ...     ct.launch(None, (1,), k, (a,))
    >>> a
    array([1., 1.], dtype=float32)
    """
    previous = _forced.value
    _forced.value = bool(enabled)
    try:
        yield
    finally:
        _forced.value = previous


def launch(stream, grid, kernel, kernel_args, /, *, programmatic_dependent_launch=False):
    """Start ``kernel`` on ``grid`` tile blocks with ``kernel_args`` (a tuple).

    ``stream`` is a PyTorch, CuPy or numba stream or a raw handle (0: the default stream);
    interpreter mode also takes None. Asynchronous on the GPU; the interpreter finishes
    before returning. ``grid=None`` runs one block for each region of the ``ct.partition``
    arguments (a numba_tile extension), none where they are empty.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def vadd(a, b, c, TILE: ct.Constant[int]):
    ...     i = ct.bid(0)
    ...     ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))
    >>> a, b = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    >>> c = np.empty_like(a)
    >>> ct.launch(0, (2,), vadd, (a, b, c, 4))
    >>> c
    array([1., 2., 3., 4., 5., 6., 7., 8.], dtype=float32)
    """
    if isinstance(kernel, Kernel) and kernel.launch_plans and not programmatic_dependent_launch \
            and not interpret_mode():
        for plan in kernel.launch_plans:  # a signature launched before: straight to the GPU
            if plan(stream, grid, kernel_args):
                return
    require_kernel(kernel)
    if grid is not None:
        grid = check_grid(grid)
    if not isinstance(kernel_args, tuple):
        raise argument_tuple_error(kernel_args)
    kernel.check_source()  # (its parameters, *args...: before the arguments are counted)
    check_argument_count(kernel, kernel_args)
    if grid is None:
        grid = partition_grid(kernel, kernel_args)
        if 0 in grid:  # an empty array: no region to write, no block to run
            return
    if interpret_mode():
        kernel.check_clusters()
        run(kernel, grid, kernel_args)
        return
    if stream is None:
        raise TypeError("Stream is required, got None: pass a CUDA stream (0 for the default "
                        "stream, or a CuPy, PyTorch or numba stream), or set "
                        "NUMBA_TILE_INTERPRET=1 (or use `with ct.interpret():`) to run on the "
                        "CPU")
    launch_on_gpu(stream, grid, kernel, kernel_args,
                  programmatic_dependent_launch=programmatic_dependent_launch)
