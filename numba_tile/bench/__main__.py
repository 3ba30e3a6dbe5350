"""Command line of the benchmark: ``python -m numba_tile.bench [--only NAMES] [--quick]``.

Exit status: 0 when every implementation passed its check, 1 when one failed or raised
(its row says ``FAIL`` or ``ERROR``), 2 when the benchmark cannot run here (no PyTorch, no
CUDA GPU) or the arguments are wrong.
"""

import argparse
import sys

from . import cases, report


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m numba_tile.bench",
        description="Time numba_tile kernels side by side with PyTorch (and Triton when it "
                    "is installed) on the GPU: effective GB/s and the fraction of the measured "
                    "device-to-device copy bandwidth (TFLOPS for matrix products and "
                    "attention), after checking each result against float64.")
    parser.add_argument("--only", metavar="NAME[,NAME]",
                        help="run only these cases: full names ("
                             + ", ".join(case.name for case in cases.all_cases())
                             + ") or the start of names (softmax, matmul_f16, attention, ...)")
    parser.add_argument("--out", default="bench-results", metavar="DIR",
                        help="directory for results.json and results.png "
                             "(default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=100,
                        help="timed runs per variant; the median is reported "
                             "(default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=10,
                        help="untimed runs before timing (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (2**24 elements, 1024 rows, 1024 x 1024 matrices, "
                             "sequences of 1024) and default parameters only: a smoke run, not "
                             "the figures of record")
    return parser


def _gpu_missing():
    """Why the benchmark cannot run here, or None."""
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed; the benchmark needs PyTorch with a CUDA GPU"
    except Exception as error:  # a broken installation, e.g. missing CUDA libraries
        return f"PyTorch cannot be imported ({type(error).__name__}: {error})".splitlines()[0]
    if not torch.cuda.is_available():
        return "no CUDA GPU found (torch.cuda.is_available() is False); the benchmark needs one"
    return None


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(argv)
    if options.repeats < 1 or options.warmup < 0:
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
    from .runner import run_benchmarks
    results = run_benchmarks(selected, repeats=options.repeats, warmup=options.warmup,
                             tune=not options.quick,
                             copy_bytes=(256 << 20) if options.quick else (1 << 30))
    results["settings"]["quick"] = options.quick
    print()
    print(report.format_table(results))
    for line in report.write_report(results, options.out):
        print(line)
    return 1 if report.failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
