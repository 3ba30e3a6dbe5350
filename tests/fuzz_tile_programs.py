"""Running the random programs of ``tile_programs.py``: in the interpreter, compiled, on the
GPU, and comparing outputs (bit for bit where every op of a program is exact, within a few
units in the last place otherwise; the poison around the output always).

From the command line, a long run on a GPU spreads seeds over processes::

    python tests/fuzz_tile_programs.py --programs 20000 --workers 16 --report fuzz.json

Each program runs in the interpreter (checked against NumPy) and compiled on the GPU (checked
against the interpreter); the report lists every mismatch with its seed and source.

>>> import tile_programs
>>> program = tile_programs.generate(tile_programs.RandomChooser(7))
>>> expected = program.expected()
>>> mismatch(program, expected.copy(), expected, exact=True) is None
True
"""

import argparse
import collections
import importlib.util
import json
import os
import sys
import tempfile
import traceback

import numpy as np

import numba_tile as ct
from tile_programs import RandomChooser, generate

ARCHES = ("sm_80", "sm_90")


# ---- running and comparing ---------------------------------------------------------------

def load_kernel(program, folder):
    """Write the program's source to a module in ``folder`` and return its kernel."""
    name = f"tile_program_{abs(hash(program.source)):x}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as file:
        file.write(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


def run_interpreter(program, kernel):
    args, out_base = program.arguments()
    with ct.interpret():
        ct.launch(0, (program.grid,), kernel, args)
    return out_base


def compile_for_arches(program, kernel, arches=ARCHES):
    args, _ = program.arguments()
    for arch in arches:
        ct.compile(kernel, args, arch=arch)


def _to_gpu(array):
    if array.dtype == np.dtype(ct.bfloat16.numpy):  # CuPy has no bfloat16: PyTorch holds it
        import torch
        return torch.from_numpy(array.view(np.int16).copy()).cuda().view(torch.bfloat16)
    import cupy
    return cupy.asarray(array)


def _to_host(array, dtype):
    if type(array).__module__.startswith("torch"):
        import torch
        return array.view(torch.int16).cpu().numpy().view(dtype)
    return array.get()


def run_gpu(program, kernel):
    from numba import cuda
    args, out_base = program.arguments(_to_gpu)
    ct.launch(0, (program.grid,), kernel, args)
    cuda.synchronize()
    return _to_host(out_base, program.out.base.dtype)


def _tolerance(dtype):
    import ml_dtypes
    return 64 * float(ml_dtypes.finfo(dtype.numpy).eps) if dtype.is_float else 0.0


def mismatch(program, actual, expected, exact):
    """None if ``actual`` matches ``expected`` (whole output bases), else a description.
    Elements outside the output view must keep their poison bytes; written elements must be
    equal bit for bit (NaNs of any payload match) or, unless ``exact``, within a tolerance."""
    written = program.expected(mark_written=True)
    dtype = np.dtype(program.values[-1].dtype.numpy)
    bits = np.dtype(f"u{dtype.itemsize}")
    same = actual.view(bits) == expected.view(bits)
    if program.values[-1].dtype.is_float:
        same |= np.isnan(actual.astype(np.float64)) & np.isnan(expected.astype(np.float64))
    if not same[~written].all():
        return f"guard or unwritten elements changed at {np.argwhere(~same & ~written)[:4]}"
    if same[written].all():
        return None
    if exact:
        where = np.argwhere(~same & written)[:4]
        return (f"differs at {where.tolist()}: got {actual[tuple(where.T)]}, "
                f"expected {expected[tuple(where.T)]}")
    a = actual[written].astype(np.float64)
    e = expected[written].astype(np.float64)
    finite = np.isfinite(e)
    if not np.array_equal(np.isnan(a), np.isnan(e)) or \
            not np.array_equal(a[~finite & ~np.isnan(e)], e[~finite & ~np.isnan(e)]):
        return "NaN or infinity positions differ"
    scale = np.max(np.abs(e[finite]), initial=0.0) or 1.0
    error = np.max(np.abs(a[finite] - e[finite]), initial=0.0) / scale
    tolerance = _tolerance(program.values[-1].dtype)
    return None if error <= tolerance else f"relative error {error:.3g} > {tolerance:.3g}"


# ---- long runs on a GPU -------------------------------------------------------------------

def check_on_gpu(seed, folder):
    """Generate the program of ``seed`` and check it; returns ``(status, detail)``."""
    program = generate(RandomChooser(seed))
    try:
        kernel = load_kernel(program, folder)
        expected = program.expected()
        interpreted = run_interpreter(program, kernel)
        problem = mismatch(program, interpreted, expected, program.exact)
    except Exception as error:  # the generator draws valid programs only
        return "interpreter-error", _describe(error)
    if problem:
        return "interpreter-vs-numpy", problem
    try:
        on_gpu = run_gpu(program, kernel)
        problem = mismatch(program, on_gpu, interpreted, program.exact)
    except Exception as error:
        return "gpu-error", _describe(error)
    if problem:
        return "gpu-vs-interpreter", problem
    return "exact" if program.exact else "inexact", ""


def _describe(error):
    return f"{type(error).__name__}: {error}".splitlines()[0][:300] + "\n" + \
        "".join(traceback.format_exception(error)[-3:])


def _worker(arguments):
    seeds, folder = arguments
    return [(seed, *check_on_gpu(seed, folder)) for seed in seeds]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--report", default=None, help="write failures (JSON) here")
    options = parser.parse_args(argv)
    import multiprocessing
    seeds = list(range(options.first_seed, options.first_seed + options.programs))
    chunks = [(seeds[i:i + 50], tempfile.mkdtemp(prefix="tile-programs-"))
              for i in range(0, len(seeds), 50)]
    counts, failures = collections.Counter(), []
    with multiprocessing.get_context("spawn").Pool(options.workers) as pool:
        for results in pool.imap_unordered(_worker, chunks):
            for seed, status, detail in results:
                counts[status] += 1
                if detail:
                    failures.append({"seed": seed, "status": status, "detail": detail,
                                     "source": generate(RandomChooser(seed)).source})
            print(f"{sum(counts.values())} programs: " +
                  ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
                  file=sys.stderr, flush=True)
            if options.report:  # after every chunk, so a run cut short still reports
                with open(options.report, "w") as file:
                    json.dump({"counts": counts, "failures": failures}, file, indent=1)
    print(f"{sum(counts.values())} programs: " +
          ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    for failure in failures[:20]:
        print(f"--- seed {failure['seed']}: {failure['status']}: {failure['detail']}\n"
              f"{failure['source']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
