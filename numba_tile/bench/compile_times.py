"""Compile times of the benchmark's matmul and attention kernels (issue 22): a cold compile
(a new process with numba_tile imported and an empty disk cache) and a disk-cache hit
(another new process finding what the first one wrote), each timed around ``ct.compile``
for the GPU's architecture. Targets: a cold compile under 2 s, a disk-cache hit under 50 ms.

>>> from numba_tile.bench import compile_times
>>> sorted(compile_times.KERNELS)
['attention_f16', 'matmul_f16']
>>> kernel, args = compile_times.kernel_and_args("matmul_f16")
>>> kernel.__name__, args[3:]
('matmul', (128, 256, 64, 8))
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

from . import kernels

COLD_TARGET_S, HIT_TARGET_S = 2.0, 0.05

#: the kernels timed, with the first (default) variant of their benchmark cases
KERNELS = {
    "matmul_f16": ("matmul", {"tile_m": 128, "tile_n": 256, "tile_k": 64, "num_warps": 8}),
    "attention_f16": ("attention", {"tile_m": 128, "tile_n": 64, "num_warps": 8}),
}


def kernel_and_args(name):
    """The kernel object and arguments (host arrays: only their dtype, rank and alignment
    matter to a compile) of the timed kernel ``name``."""
    kind, params = KERNELS[name]
    if kind == "matmul":
        a, b, c = (np.zeros((256, 256), np.float16) for _ in range(3))
        kernel, _, args = kernels.matmul_launch(a, b, c, **params)
    else:
        q, k, v, out = (np.zeros((1, 2, 256, 128), np.float16) for _ in range(4))
        kernel, _, args = kernels.attention_launch(q, k, v, out, **params)
    return kernel, args


_CHILD = """
import sys, time
import numba_tile as ct
from numba_tile.bench.compile_times import kernel_and_args
kernel, args = kernel_and_args(sys.argv[1])
start = time.perf_counter()
ct.compile(kernel, args, arch=sys.argv[2])
print(time.perf_counter() - start)
"""


def _timed_compile(name, arch, cache):
    environment = dict(os.environ, NUMBA_TILE_CACHE_DIR=cache, NUMBA_TILE_CACHE="1")
    child = subprocess.run([sys.executable, "-c", _CHILD, name, arch], capture_output=True,
                           text=True, env=environment, timeout=600)
    if child.returncode:
        raise RuntimeError(f"compiling {name} failed:\n{child.stderr[-2000:]}")
    return float(child.stdout.strip().splitlines()[-1])


def measure(arch):
    """``{name: {"cold_s": ..., "disk_hit_s": ...}}`` for every kernel of :data:`KERNELS`."""
    found = {}
    for name in KERNELS:
        with tempfile.TemporaryDirectory() as cache:
            cold = _timed_compile(name, arch, cache)
            found[name] = {"cold_s": cold, "disk_hit_s": _timed_compile(name, arch, cache)}
    return found


def report_lines(times):
    """The lines of the text report for ``times`` (of :func:`measure`).

    >>> from numba_tile.bench.compile_times import report_lines
    >>> report_lines({"matmul_f16": {"cold_s": 1.5, "disk_hit_s": 0.02}})[0]
    '  matmul_f16 compile: cold 1.50 s (< 2 s: met), disk-cache hit 20 ms (< 50 ms: met)'
    """
    lines = []
    for name, found in times.items():
        cold, hit = found["cold_s"], found["disk_hit_s"]
        lines.append(f"  {name} compile: cold {cold:.2f} s (< {COLD_TARGET_S:g} s: "
                     f"{'met' if cold < COLD_TARGET_S else 'NOT met'}), disk-cache hit "
                     f"{hit * 1e3:.0f} ms (< {HIT_TARGET_S * 1e3:.0f} ms: "
                     f"{'met' if hit < HIT_TARGET_S else 'NOT met'})")
    return lines
