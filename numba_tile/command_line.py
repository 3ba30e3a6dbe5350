"""``python -m numba_tile``: what this installation runs on, and its compile cache.

``info`` prints the versions of numba_tile and what it builds on, the CUDA driver and the GPUs
found (with their compute capability), where the CUDA compiler libraries (NVVM, libdevice,
NVRTC, nvJitLink) come from and whether ``CUDA_HOME`` chose them, and the compile cache's
directory and size. ``cache clear`` empties the compile cache; ``cache info`` describes it.
Each probe that fails says why in its line instead of stopping the report.

>>> from numba_tile.command_line import main
>>> main(["cache", "info", "--directory", "/nonexistent/numba_tile"])
compile cache: /nonexistent/numba_tile (not created yet)
0
"""

import argparse
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

import numpy
from cuda.bindings import driver
from numba import cuda
from numba.cuda import cuda_paths

from . import __version__
from .runtime import disk_cache


def _version(distribution):
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _probe(describe):
    """``describe()``'s text, or why it could not be found out."""
    try:
        return describe()
    except Exception as error:  # a report line, never a crash
        missing = isinstance(error, OSError) or "NotFound" in type(error).__name__
        return (f"{'not found' if missing else 'unknown'} ({type(error).__name__}: "
                f"{str(error).splitlines()[0][:100]})")


def _driver_version():
    status, version = driver.cuDriverGetVersion()
    if int(status) != 0:
        raise RuntimeError(f"cuDriverGetVersion: {status}")
    return f"{version // 1000}.{version % 1000 // 10}"


def _gpus():
    if not cuda.is_available():
        return ["none found (kernels run in interpreter mode: NUMBA_TILE_INTERPRET=1)"]
    return [f"{i}: {gpu.name.decode() if isinstance(gpu.name, bytes) else gpu.name}, "
            f"compute capability {gpu.compute_capability[0]}.{gpu.compute_capability[1]}"
            for i, gpu in enumerate(cuda.gpus)]


def _library_sources():
    """Where numba-cuda takes NVVM, libdevice and NVRTC from, and nvJitLink's library."""
    found = cuda_paths.get_cuda_paths()
    lines = [f"{name}: {found[name].info} (found by: {found[name].by})"
             for name in ("nvvm", "libdevice", "nvrtc") if found.get(name) is not None]
    lines.append("nvjitlink: " + _probe(_nvjitlink))
    return lines


def _nvjitlink():
    # optional: where nvJitLink's library is missing, importing its binding fails, and
    # that is a line of the report
    from cuda.bindings import nvjitlink
    major, minor = nvjitlink.version()
    try:  # (optional too: cuda.pathfinder comes with some cuda-bindings releases only)
        from cuda.pathfinder import load_nvidia_dynamic_lib
        where = load_nvidia_dynamic_lib("nvJitLink").abs_path
    except Exception:  # the version is what matters; the path is a courtesy
        where = "(path unknown)"
    return f"{where} (version {major}.{minor})"


def _cache_report(directory):
    if directory is None:
        return "compile cache: off (NUMBA_TILE_CACHE=0)"
    if not directory.is_dir():
        return f"compile cache: {directory} (not created yet)"
    entries = [p for p in directory.iterdir()
               if p.name.endswith(disk_cache.ENTRY_SUFFIX) and p.is_file()]
    size = sum(p.stat().st_size for p in entries)
    return f"compile cache: {directory} ({len(entries)} kernels, {size / 2**20:.1f} MiB)"


def info(directory=None):
    """Print the report of ``python -m numba_tile info``."""
    print(f"numba_tile {__version__}")
    print(f"python {platform.python_version()} ({sys.executable})")
    for name in ("numba", "numba-cuda", "llvmlite", "numpy", "ml_dtypes", "cuda-bindings",
                 "cuda-core"):
        shown = numpy.__version__ if name == "numpy" else _version(name)
        print(f"{name} {shown}")
    print(f"CUDA driver: {_probe(_driver_version)}")
    gpus = _probe(_gpus)
    for line in gpus if isinstance(gpus, list) else [gpus]:
        print(f"GPU {line}")
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    print(f"CUDA_HOME: {home} (it chooses the CUDA libraries below where it holds them)"
          if home else "CUDA_HOME: not set (the CUDA libraries of the cu12/cu13 extra are used)")
    sources = _probe(_library_sources)
    for line in sources if isinstance(sources, list) else [f"CUDA libraries: {sources}"]:
        print(line)
    print(_cache_report(Path(directory) if directory else disk_cache.cache_directory()))
    return 0


def cache(action, directory=None):
    """``cache info`` or ``cache clear`` (the compiled kernels; the cache's key file stays)."""
    folder = Path(directory) if directory else disk_cache.cache_directory()
    if action == "clear" and folder is not None and folder.is_dir():
        removed = 0
        for path in folder.iterdir():
            if path.name.endswith(disk_cache.ENTRY_SUFFIX) and not path.is_symlink() and \
                    path.is_file():
                path.unlink()
                removed += 1
        print(f"removed {removed} compiled kernels from {folder}")
        return 0
    print(_cache_report(folder))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m numba_tile",
        description="numba_tile: the tile programming model (cuda.tile) for Numba.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("info", help="versions, CUDA driver, GPUs, CUDA libraries, cache",
                        description="Print what this installation runs on.")
    cache_parser = commands.add_parser(
        "cache", help="the compile cache: info or clear",
        description="The on-disk cache of compiled kernels (NUMBA_TILE_CACHE_DIR, else "
                    "$XDG_CACHE_HOME/numba_tile or ~/.cache/numba_tile).")
    cache_parser.add_argument("action", choices=("info", "clear"))
    cache_parser.add_argument("--directory", default=None,
                              help="a cache directory other than the configured one")
    options = parser.parse_args(argv)
    if options.command == "info":
        return info()
    if options.command == "cache":
        return cache(options.action, options.directory)
    parser.print_help()
    return 0
