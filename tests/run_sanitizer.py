"""Run the GPU test suite (or the benchmark kernels) under NVIDIA's compute-sanitizer.

The suite is split into shards that run side by side, each one pytest process in gpu mode
under the chosen tool; every shard's log must end with ``ERROR SUMMARY: 0 errors`` and every
test must pass::

    python tests/run_sanitizer.py --tool memcheck --shards 14
    python tests/run_sanitizer.py --tool racecheck --shards 14
    python tests/run_sanitizer.py --tool synccheck --shards 14
    python tests/run_sanitizer.py --tool memcheck --bench

Kernels that stop on purpose with a device assertion run in child processes of their tests,
outside the sanitizer (a failed assertion is what they check). ``--bench`` runs the benchmark
cases at their ``--quick`` sizes, once each, with numba_tile's kernels instrumented.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IGNORED = ("--ignore", os.path.join(HERE, "test_docs.py"),
           "--ignore", os.path.join(HERE, "test_notebooks.py"))
PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
          "-p", "no:benchmark")


def _collect(extra):
    listing = subprocess.run(PYTEST + ("--collect-only", HERE) + IGNORED + tuple(extra),
                             capture_output=True, text=True, cwd=ROOT, env=_environment())
    ids = [line for line in listing.stdout.splitlines() if "::" in line]
    if not ids:
        sys.exit(f"no tests collected:\n{listing.stdout}\n{listing.stderr}")
    return ids


def _environment():
    return dict(os.environ, NUMBA_TILE_TEST_MODES="gpu")


def _sanitizer(tool, log):
    # (application-only: the child processes of deliberate device assertions stay outside)
    return ("compute-sanitizer", "--tool", tool, "--error-exitcode", "99",
            "--target-processes", "application-only", "--log-file", log)


def _summaries(log):
    with open(log, errors="replace") as file:
        text = file.read()
    # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
    # "RACECHECK SUMMARY: N hazards displayed (N errors, N warnings)"
    found = re.findall(r"ERROR SUMMARY: (\d+) error", text) + \
        re.findall(r"RACECHECK SUMMARY: .*?\((\d+) error", text)
    return [int(n) for n in found], text


def run_suite(tool, shards, folder, extra):
    ids = _collect(extra)
    processes = []
    for shard in range(shards):
        chosen = ids[shard::shards]
        if not chosen:
            continue
        log = os.path.join(folder, f"{tool}-{shard}.log")
        output = open(os.path.join(folder, f"{tool}-{shard}.pytest.txt"), "w")
        command = _sanitizer(tool, log) + PYTEST + tuple(chosen)
        processes.append((shard, log, output, subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, cwd=ROOT, env=_environment())))
    failed = False
    for shard, log, output, process in processes:
        process.wait()
        output.close()
        errors, _ = _summaries(log)
        with open(output.name) as file:
            last = file.read().strip().splitlines()[-1:] or ["(no pytest output)"]
        print(f"shard {shard}: exit {process.returncode}, sanitizer errors {sum(errors)}, "
              f"{last[0]}")
        failed |= process.returncode != 0 or sum(errors) != 0 or not errors
    print(f"{len(ids)} tests in {len(processes)} shards under {tool}: "
          f"{'FAILED' if failed else 'clean'}")
    return 1 if failed else 0


def run_bench(tool, folder, extra):
    log = os.path.join(folder, f"{tool}-bench.log")
    # numba_tile's kernels only (their mangled names hold the package's), and no report of
    # host API return codes: the CUDA Python bindings probe driver entry points the driver
    # may lack (cuGetProcAddress), which is no error of a kernel
    command = _sanitizer(tool, log) + ("--kernel-name", "kns=numba_tile",
                                       "--report-api-errors", "no", sys.executable, "-m",
                                       "numba_tile.bench", "--quick", "--repeats", "1",
                                       "--warmup", "0", "--out", folder) + tuple(extra)
    process = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    errors, _ = _summaries(log)
    print(process.stdout[-3000:], process.stderr[-2000:])
    print(f"benchmark kernels under {tool}: exit {process.returncode}, sanitizer errors "
          f"{sum(errors)}")
    return 1 if process.returncode or sum(errors) or not errors else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", default="memcheck",
                        choices=("memcheck", "racecheck", "synccheck", "initcheck"))
    parser.add_argument("--shards", type=int, default=os.cpu_count())
    parser.add_argument("--bench", action="store_true", help="the benchmark kernels instead")
    parser.add_argument("--logs", default=None, help="keep the logs in this directory")
    options, extra = parser.parse_known_args(argv)
    folder = options.logs or tempfile.mkdtemp(prefix="numba_tile-sanitizer-")
    os.makedirs(folder, exist_ok=True)
    start = time.time()
    status = run_bench(options.tool, folder, extra) if options.bench else \
        run_suite(options.tool, options.shards, folder, extra)
    print(f"{time.time() - start:.0f} s; logs in {folder}")
    return status


if __name__ == "__main__":
    sys.exit(main())
