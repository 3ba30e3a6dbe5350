"""Run each tensor-core kernel of the benchmark (matmul, batched matmul, attention: the
``wgmma`` pipelines) under NVIDIA's compute-sanitizer, one kernel configuration per process,
and check its result against float64.

``run_sanitizer.py --bench`` runs the whole benchmark under one sanitizer process; racecheck
stops there with an internal error of the tool ("failed to handle a hardware exception")
before reaching numba_tile's large-tile kernels. Here each configuration runs alone, at the
benchmark's ``--quick`` sizes, with the tile shapes, warps, stages and options its cases use::

    python tests/sanitize_bench_kernels.py --tool racecheck
    python tests/sanitize_bench_kernels.py --tool memcheck

(``--one KIND OPTION=VALUE...`` is what each child process runs.) Racecheck reports hazards
for attention with 128 x 128 tiles and a producer warpgroup, whose consumer warpgroups take
turns on named barriers: ``tests/racecheck_named_barriers.py`` shows it reporting them for
any kernel with such turns, race free or not.
"""

import argparse
import re
import subprocess
import sys

CONFIGURATIONS = (
    "matmul tile_m=128 tile_n=256 tile_k=64 num_warps=8",
    "matmul tile_m=128 tile_n=256 tile_k=64 num_warps=8 num_stages=4",
    "matmul tile_m=256 tile_n=128 tile_k=64 num_warps=8 num_stages=2",
    "matmul tile_m=128 tile_n=128 tile_k=64 num_warps=4 num_stages=3",
    "bmm tile_m=128 tile_n=128 tile_k=64 num_warps=4",
    "bmm tile_m=128 tile_n=256 tile_k=64 num_warps=8",
    "attention64 tile_m=128 tile_n=64 num_warps=8",
    "attention64 tile_m=128 tile_n=64 num_warps=8 pipelined=True occupancy=2 causal=True",
    "attention128 tile_m=128 tile_n=64 num_warps=8 pipelined=True",
    "attention128 tile_m=128 tile_n=128 num_warps=8 causal=True",
    "attention128 tile_m=128 tile_n=128 num_warps=8 num_stages=3 warp_specialize=True",
    # the result through the scratch buffer beside the rings, the consumers meeting at a
    # named barrier of their own (a producer warpgroup), as the 128 x 128 causal kernel's
    # result through the idle stages: racecheck reports both alike
    "attention128 tile_m=128 tile_n=128 num_warps=8 num_stages=2 warp_specialize=True",
    "attention128 tile_m=128 tile_n=128 num_warps=8 num_stages=3 warp_specialize=True "
    "causal=True persistent_blocks=5",
)


def _options(words):
    return {k: (v == "True" if v in ("True", "False") else int(v))
            for k, v in (w.split("=") for w in words)}


def run_one(kind, options):
    """Launch one configuration and return its relative error against float64."""
    import cupy as cp
    import numba_tile as ct
    from numba_tile.bench import kernels
    stream = cp.cuda.get_current_stream()
    if kind in ("matmul", "bmm"):
        shape = (1024, 1024) if kind == "matmul" else (4, 512, 512)
        a, b = (cp.random.rand(*shape).astype(cp.float16) for _ in range(2))
        c = cp.zeros(shape, cp.float16)
        launch = kernels.matmul_launch if kind == "matmul" else kernels.batched_matmul_launch
        kernel, grid, args = launch(a, b, c, **options)
        ct.launch(stream, grid, kernel, args)
        expected = a.astype(cp.float64) @ b.astype(cp.float64)
        actual = c
    else:
        head_dim = int(kind[len("attention"):])
        q, k, v = (cp.random.randn(1, 2, 1024, head_dim).astype(cp.float16) for _ in range(3))
        out = cp.zeros_like(q)
        kernel, grid, args = kernels.attention_launch(q, k, v, out, **options)
        ct.launch(stream, grid, kernel, args)
        scores = (q.astype(cp.float64) @ k.astype(cp.float64).transpose(0, 1, 3, 2)) \
            / head_dim ** 0.5
        if options.get("causal"):
            scores = scores + cp.triu(cp.full((1024, 1024), -cp.inf), 1)
        weights = cp.exp(scores - scores.max(-1, keepdims=True))
        expected = weights / weights.sum(-1, keepdims=True) @ v.astype(cp.float64)
        actual = out
    cp.cuda.Device().synchronize()
    return float(cp.abs(actual.astype(cp.float64) - expected).max() / cp.abs(expected).max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", default="racecheck",
                        choices=("memcheck", "racecheck", "synccheck", "initcheck"))
    parser.add_argument("--one", nargs="+", metavar="WORD", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.one:
        error = run_one(options.one[0], _options(options.one[1:]))
        print(f"relative error {error:.2e}")
        return 0 if error < 1e-2 else 1
    failed = False
    for configuration in CONFIGURATIONS:
        child = subprocess.run(
            # (no report of host API return codes: the CUDA Python bindings probe driver
            # entry points the driver may lack, which is no error of a kernel)
            ["compute-sanitizer", "--tool", options.tool, "--error-exitcode", "99",
             "--report-api-errors", "no", sys.executable, __file__, "--one",
             *configuration.split()],
            capture_output=True, text=True, timeout=600)
        report = child.stdout + child.stderr
        summary = re.findall(r"(?:ERROR|RACECHECK) SUMMARY: .*", report)
        error = re.findall(r"relative error \S+", report)
        ok = child.returncode == 0 and bool(summary) and bool(error)
        failed |= not ok
        print(f"{'ok    ' if ok else 'FAILED'} {configuration}: "
              f"{(error or ['no result'])[0]}; {(summary or ['no summary'])[0]}")
        if not ok:
            print(report[-3000:])
    print(f"{len(CONFIGURATIONS)} kernels under {options.tool}: "
          f"{'FAILED' if failed else 'clean'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
