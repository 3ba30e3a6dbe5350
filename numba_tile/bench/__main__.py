"""Command line of the benchmark: ``python -m numba_tile.bench [--only NAMES] [--quick]
[--compare OLD.json]``, or ``--load RESULTS.json`` to remake the report of a saved run (no
GPU needed).

Exit status: 0 when every implementation passed its check, 1 when one failed or raised
(its row says ``FAIL`` or ``ERROR``), 2 when the benchmark cannot run here (no PyTorch, no
CUDA GPU) or the arguments are wrong (an unreadable ``--compare`` or ``--load`` file too).
"""

import argparse
import pathlib
import sys

from . import cases, chart, compare, optional, report
from .runner import run_benchmarks

COMPARISON_PNG = "comparison.png"
DEFAULT_REPEATS, DEFAULT_WARMUP = 100, 10


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m numba_tile.bench",
        description="Time numba_tile kernels side by side with PyTorch (and Triton and "
                    "cuTile where installed) on the GPU: effective GB/s and the fraction of "
                    "the measured device-to-device copy bandwidth (TFLOPS for matrix products "
                    "and attention), after checking each result against float64.")
    parser.add_argument("--only", metavar="NAME[,NAME]",
                        help="run only these cases: full names ("
                             + ", ".join(case.name for case in cases.all_cases())
                             + ") or the start of names (softmax, matmul_f16, attention, ...)")
    parser.add_argument("--out", default="bench-results", metavar="DIR",
                        help="directory for results.json, results.png and comparison.png "
                             "(default: %(default)s)")
    parser.add_argument("--repeats", type=int,
                        help="timed runs per variant; the median is reported "
                             f"(default: {DEFAULT_REPEATS})")
    parser.add_argument("--warmup", type=int,
                        help=f"untimed runs before timing (default: {DEFAULT_WARMUP})")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (2**24 elements, 1024 rows, 1024 x 1024 matrices, "
                             "sequences of 1024) and default parameters only: a smoke run, not "
                             "the figures of record")
    parser.add_argument("--compare", metavar="OLD.json",
                        help="also print the change against an earlier run's results.json "
                             "(per case and implementation: old, new, new/old) and draw it "
                             "into comparison.png")
    parser.add_argument("--load", metavar="RESULTS.json",
                        help="do not run: print the table of a saved results.json and draw "
                             "its chart (with --compare: its change against OLD.json); no "
                             "GPU needed")
    return parser


def _gpu_missing():
    """Why the benchmark cannot run here, or None."""
    error = optional.TORCH_IMPORT_ERROR
    if isinstance(error, ImportError):
        return "PyTorch is not installed; the benchmark needs PyTorch with a CUDA GPU"
    if error is not None:  # a broken installation, e.g. missing CUDA libraries
        return f"PyTorch cannot be imported ({type(error).__name__}: {error})".splitlines()[0]
    if not optional.torch.cuda.is_available():
        return "no CUDA GPU found (torch.cuda.is_available() is False); the benchmark needs one"
    return None


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(argv)
    old = _read(parser, "--compare", options.compare)
    if options.load:
        given = [name for name, value in (("--only", options.only), ("--quick", options.quick),
                                          ("--repeats", options.repeats),
                                          ("--warmup", options.warmup))
                 if value is not None and value is not False]
        if given:
            parser.error(f"--load remakes the report of a saved run: {', '.join(given)} "
                         f"cannot apply")
        return _report(_read(parser, "--load", options.load), options, old, with_json=False)
    repeats = DEFAULT_REPEATS if options.repeats is None else options.repeats
    warmup = DEFAULT_WARMUP if options.warmup is None else options.warmup
    if repeats < 1 or warmup < 0:
        parser.error("--repeats must be at least 1 and --warmup at least 0")
    selected = cases.all_cases(quick=options.quick)
    if options.only:
        try:
            selected = cases.select(selected, [n.strip() for n in options.only.split(",")
                                               if n.strip()])
        except ValueError as error:
            parser.error(str(error))
    missing = _gpu_missing()
    if missing:
        print(f"numba_tile.bench: {missing}", file=sys.stderr)
        return 2
    results = run_benchmarks(selected, repeats=repeats, warmup=warmup,
                             tune=not options.quick,
                             copy_bytes=(256 << 20) if options.quick else (1 << 30))
    results["settings"]["quick"] = options.quick
    print()
    return _report(results, options, old)


def _read(parser, option, path):
    """The results in ``path`` (None for no path); a usage error where it cannot be read."""
    if path is None:
        return None
    try:
        return compare.load_results(path)
    except ValueError as error:
        parser.error(f"{option}: {error}")


def _report(results, options, old, *, with_json=True):
    """Print the table (and the comparison with ``old``), write the files; the exit status."""
    print(report.format_table(results))
    done = report.write_report(results, options.out, with_json=with_json)
    if old is not None:
        print()
        print(compare.format_comparison(old, results, options.compare))
        path = pathlib.Path(options.out) / COMPARISON_PNG
        title = (f"this run ({results['environment'].get('date')}) against "
                 f"{options.compare} ({old['environment'].get('date')})")
        if chart.write_comparison_chart(compare.compare(old, results), path, title):
            done.append(f"wrote {path}")
    for line in done:
        print(line)
    return 1 if report.failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
