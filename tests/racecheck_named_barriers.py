"""Does compute-sanitizer's racecheck follow named barriers? A probe of the tool, not of
numba_tile: a small CUDA C kernel (CuPy) shaped like numba_tile's warp-specialized attention,
run under racecheck in each of its forms.

The block has 384 threads: warpgroups 0 and 1 are the consumers, warpgroup 2 a producer that
does nothing (or exits at once). Each consumer thread writes one float to shared memory, the
256 consumer threads meet at named barrier 1 (``bar.sync 1, 256``), and each reads the value
another warpgroup wrote. With ``pingpong``, the consumers first take turns on barriers 2 and
3 as numba_tile's consumer warpgroups do (one waits with ``bar.sync`` while the other signals
with ``bar.arrive``, the turns balanced at the end); the turns touch no shared memory. Every
form is race free by PTX's rules but ``none``, which leaves the barrier out (the control:
racecheck must report it). Run on a GPU::

    python tests/racecheck_named_barriers.py

On an H100 (the device's compute-sanitizer, 2026-12-06) racecheck reported the control and
every form with turns (a hazard between the write and the read across barrier 1), and
nothing for the forms without turns: a report on a kernel whose consumers take turns is not
evidence of a race on its own. (``--one BARRIER PINGPONG EXIT`` is what each child runs.)
"""

import argparse
import itertools
import subprocess
import sys

_SOURCE = r'''
extern "C" __global__ void probe(float* out, int turns) {
    __shared__ float values[256];
    int t = threadIdx.x;
    if (t >= 256) {  // the producer warpgroup
        PRODUCER
        return;
    }
    int warpgroup = t >> 7;
    float carried = 0.f;
    TURNS
    values[t] = (float)(t * 3 + blockIdx.x) + carried;
    asm volatile("BARRIER" ::: "memory");
    out[blockIdx.x * 256 + t] = values[(t + 128) % 256];
}
'''

_TURNS = r'''
    if (warpgroup == 1) asm volatile("bar.arrive 2, 256;" ::: "memory");
    for (int i = 0; i < turns; ++i) {
        asm volatile("bar.sync %0, 256;" :: "r"(2 + warpgroup) : "memory");
        carried += 0.f * i;
        asm volatile("bar.arrive %0, 256;" :: "r"(warpgroup ^ 3) : "memory");
    }
    if (warpgroup == 0) asm volatile("bar.sync 2, 256;" ::: "memory");
'''

BARRIERS = {"bar": "bar.sync 1, 256;", "barrier": "barrier.sync 1, 256;", "none": ""}


def run_one(barrier, pingpong, exit_early):
    """Launch one form; return whether every consumer read what the other wrote."""
    import cupy as cp
    source = (_SOURCE.replace("BARRIER", BARRIERS[barrier])
              .replace("TURNS", _TURNS if pingpong else "")
              .replace("PRODUCER", "" if exit_early else
                       "for (int i = 0; i < 1000; ++i) __nanosleep(10);"))
    kernel = cp.RawKernel(source, "probe")
    blocks = 4
    out = cp.zeros(blocks * 256, cp.float32)
    kernel((blocks,), (384,), (out, cp.int32(8)))
    cp.cuda.Device().synchronize()
    expected = cp.asarray([((t + 128) % 256) * 3 + b for b in range(blocks) for t in range(256)],
                          cp.float32)
    return bool((out == expected).all())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=3, metavar=("BARRIER", "PINGPONG", "EXIT"))
    args = parser.parse_args(argv)
    if args.one:
        barrier, pingpong, exit_early = args.one
        print("values as expected:", run_one(barrier, pingpong == "1", exit_early == "1"))
        return 0
    for barrier, pingpong, exit_early in itertools.product(BARRIERS, "01", "01"):
        child = subprocess.run(
            ["compute-sanitizer", "--tool", "racecheck", "--error-exitcode", "99",
             sys.executable, __file__, "--one", barrier, pingpong, exit_early],
            capture_output=True, text=True, timeout=120)
        summary = [line.split("SUMMARY:")[-1].strip() for line in child.stdout.splitlines()
                   if "SUMMARY" in line]
        values = [line for line in child.stdout.splitlines() if "as expected" in line]
        print(f"barrier={barrier:8s} turns={pingpong} producer exits={exit_early}: "
              f"{summary[0] if summary else 'no summary'}; "
              f"{values[0] if values else 'no result'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
