"""The two-GPU case of the benchmark, ``all_gather_matmul_bf16``: ``python -m
numba_tile.bench.two_gpus [--rows M] [--size K] [--repeats R] [--out DIR]``.

Each of two processes (one per GPU, ``torch.distributed`` over NCCL, NVLink multicast off)
holds ``M`` rows of ``A`` (bfloat16, in symmetric memory) and a ``K x K`` matrix ``W``, and
computes ``concatenate(A of every rank) @ W``. Timed side by side in one run, each result
checked against float64 first (its output filled with NaN before):

* ``torch``: ``all_gather_into_tensor`` then ``torch.matmul`` (the unfused sequence, the
  reference of the ratios);
* ``torch_fused``: ``torch.ops.symm_mem.fused_all_gather_matmul``, where PyTorch has it;
* ``numba_tile``: :class:`~numba_tile.bench.distributed.CopiedAllGatherMatmul`, one tile
  kernel that copies the peer's rows while it multiplies its own;
* ``numba_tile_pull``: :func:`~numba_tile.bench.distributed.all_gather_matmul`, which
  reads the peer's rows in place over NVLink in its k-loop.

Times are the median over ``R`` runs, timed as every case of the benchmark is
(:func:`~numba_tile.bench.timing.time_on_gpu`: CUDA events around each run, the L2 cache
flushed before it), the ranks' runs lined up by a barrier before each; rank 0 prints the
table, and ``--out`` writes it to ``two_gpus.json``.

``--one-gpu`` runs the same kernels in one process with both ranks' rows on one GPU (no
NVLink: what the kernels cost besides it), next to ``torch.matmul`` and numba_tile's matmul
of the concatenated rows.

>>> from numba_tile.bench.two_gpus import tflops
>>> round(tflops(2, 8192, 8192, 8192, 3.0), 1)
733.0
"""

import argparse
import datetime
import json
import os
import pathlib
import queue
import socket
import sys

import numba_tile as ct
from . import optional
from .distributed import CopiedAllGatherMatmul, all_gather_matmul_launch
from .kernels import matmul_launch
from .optional import torch
from .timing import time_on_gpu

try:  # optional, as PyTorch is; what only the run on two GPUs needs (some builds lack it)
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem
    import torch.multiprocessing as mp
except Exception:  # PyTorch not installed or broken (optional.TORCH_IMPORT_ERROR says)
    dist = symm_mem = mp = None

CASE = "all_gather_matmul_bf16"
TOLERANCE = 1e-2  # bfloat16 outputs
RANK_TIMEOUT = 600  # seconds a rank may take to compile, check and time everything


def tflops(ranks, rows, k, n, milliseconds):
    """The TFLOPS of ``concatenate(ranks x (rows, k)) @ (k, n)`` in ``milliseconds``."""
    return 2 * ranks * rows * k * n / milliseconds / 1e9


def _rank(rank, ranks, port, rows, size, repeats, results):
    try:
        results.put((rank, _measure(rank, ranks, port, rows, size, repeats)))
    except Exception as error:  # the parent reports it
        results.put((rank, f"{type(error).__name__}: {error}"))
        results.close()
        results.join_thread()  # the message is sent before the process ends
        sys.stdout.flush()
        os._exit(1)  # the other rank may wait in a collective: do not wait for it


def _measure(rank, ranks, port, rows, size, repeats):
    """``{implementation: (milliseconds, relative error)}`` on this rank."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0",
                      TORCH_SYMM_MEM_DISABLE_MULTICAST="1")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=ranks,
                            timeout=datetime.timedelta(seconds=120))
    try:
        group = dist.group.WORLD.group_name
        generator = torch.Generator(device="cuda").manual_seed(100 + rank)
        local = symm_mem.empty((rows, size), dtype=torch.bfloat16, device="cuda")
        local.copy_(torch.randn((rows, size), generator=generator, device="cuda"))
        handle = symm_mem.rendezvous(local, group)
        w = torch.randn((size, size), generator=generator, device="cuda").to(torch.bfloat16)
        out = torch.empty((ranks * rows, size), dtype=torch.bfloat16, device="cuda")
        gathered = torch.empty((ranks * rows, size), dtype=torch.bfloat16, device="cuda")
        peers = [handle.get_buffer(r, (rows, size), torch.bfloat16) for r in range(ranks)]
        stream = torch.cuda.current_stream()
        dist.all_gather_into_tensor(gathered, local)
        expected = gathered.double() @ w.double()

        def unfused():
            dist.all_gather_into_tensor(gathered, local)
            torch.matmul(gathered, w, out=out)
        copied = CopiedAllGatherMatmul(peers, rank, w, out)
        pull_kernel, pull_grid, pull_args = all_gather_matmul_launch(peers, w, out,
                                                                     tile=(128, 256, 64),
                                                                     num_warps=8)
        runs = {"torch": unfused,
                "numba_tile": lambda: copied.launch(stream),
                "numba_tile_pull": lambda: ct.launch(stream, pull_grid, pull_kernel,
                                                     pull_args)}
        fused = getattr(getattr(torch.ops, "symm_mem", None), "fused_all_gather_matmul", None)
        if fused is not None:
            runs["torch_fused"] = lambda: fused(local, [w], 0, group)
        measured = {}
        for name, run in runs.items():
            out.fill_(float("nan"))
            dist.barrier()
            result = run()
            torch.cuda.synchronize()
            result = result[1][0] if name == "torch_fused" else out
            error = ((result.double() - expected).norm() / expected.norm()).item()
            milliseconds = time_on_gpu(run, repeats=repeats if name != "numba_tile_pull" else
                                       max(3, repeats // 10), warmup=3,
                                       before_each=dist.barrier).median_ms
            measured[name] = (milliseconds, error)
        return measured
    finally:
        dist.destroy_process_group()


def run_on_one_gpu(rows=8192, size=8192, repeats=20):
    """The kernels with both ranks' rows on the current GPU: ``{implementation: {"ms",
    "tflops", "error", "ok"}}`` (``numba_tile``: rank 0's launch). Needs PyTorch and a GPU.

    >>> from numba_tile.bench.two_gpus import run_on_one_gpu
    >>> sorted(run_on_one_gpu(1024, 1024, repeats=3))  # doctest: +SKIP
    ['numba_tile', 'numba_tile_matmul', 'numba_tile_pull', 'torch_matmul']
    """
    generator = torch.Generator(device="cuda").manual_seed(100)
    parts = [torch.randn((rows, size), generator=generator, device="cuda")
             .to(torch.bfloat16) for _ in range(2)]
    w = torch.randn((size, size), generator=generator, device="cuda").to(torch.bfloat16)
    out = torch.empty((2 * rows, size), dtype=torch.bfloat16, device="cuda")
    joined = torch.cat(parts)
    expected = joined.double() @ w.double()
    stream = torch.cuda.current_stream()
    copied = CopiedAllGatherMatmul(parts, 0, w, out)
    pull = all_gather_matmul_launch(parts, w, out, tile=(128, 256, 64), num_warps=8)
    matmul = matmul_launch(joined, w, out, tile_m=128, tile_n=256, tile_k=64, num_warps=8)
    runs = {"torch_matmul": lambda: torch.matmul(joined, w, out=out),
            "numba_tile_matmul": lambda: ct.launch(stream, matmul[1], matmul[0], matmul[2]),
            "numba_tile": lambda: copied.launch(stream),
            "numba_tile_pull": lambda: ct.launch(stream, pull[1], pull[0], pull[2])}
    table = {}
    for name, run_once in runs.items():
        out.fill_(float("nan"))
        run_once()
        torch.cuda.synchronize()
        error = ((out.double() - expected).norm() / expected.norm()).item()
        milliseconds = time_on_gpu(run_once, repeats=repeats, warmup=3).median_ms
        table[name] = {"ms": milliseconds, "tflops": tflops(2, rows, size, size, milliseconds),
                       "error": error, "ok": error < TOLERANCE}
    return table


def run(rows=8192, size=8192, repeats=20):
    """Measure the case on two GPUs: ``{implementation: {"ms", "tflops", "error", "ok"}}``
    (rank 0's figures, the error the larger of the two ranks'). Needs PyTorch with NCCL
    and two GPUs.

    >>> from numba_tile.bench.two_gpus import run
    >>> run(1024, 1024, repeats=3)["numba_tile"]["ok"]  # doctest: +SKIP
    True
    """
    context = mp.get_context("spawn")
    results = context.Queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    processes = [context.Process(target=_rank, args=(rank, 2, port, rows, size, repeats,
                                                     results)) for rank in range(2)]
    for process in processes:
        process.start()
    try:  # a rank that dies without a word (a crash) must not leave the parent waiting
        by_rank = dict(results.get(timeout=RANK_TIMEOUT) for _ in processes)
    except queue.Empty:
        raise RuntimeError(f"a rank gave no result in {RANK_TIMEOUT} s (see its output)")
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.terminate()
    failed = [f"rank {rank}: {value}" for rank, value in by_rank.items()
              if isinstance(value, str)]
    if failed:
        raise RuntimeError("; ".join(failed))
    table = {}
    for name, (milliseconds, error) in by_rank[0].items():
        error = max(error, by_rank[1][name][1])
        table[name] = {"ms": milliseconds, "tflops": tflops(2, rows, size, size, milliseconds),
                       "error": error, "ok": error < TOLERANCE}
    return table


def main(argv=None):
    """The command line (see the module's docstring); its exit status: 0 where every
    result passed its check, 1 where one did not, 2 where the GPUs are missing.

    >>> from numba_tile.bench.two_gpus import main
    >>> main(["--one-gpu", "--rows", "1024", "--size", "1024"])  # doctest: +SKIP
    0
    """
    parser = argparse.ArgumentParser(prog="python -m numba_tile.bench.two_gpus",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--rows", type=int, default=8192, help="rows of A per rank")
    parser.add_argument("--size", type=int, default=8192, help="K = N")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", metavar="DIR", help="write two_gpus.json there")
    parser.add_argument("--one-gpu", action="store_true",
                        help="both ranks' rows on one GPU, in one process")
    args = parser.parse_args(argv)
    if torch is None:  # as the import of PyTorch failed
        raise optional.TORCH_IMPORT_ERROR
    if torch.cuda.device_count() < (1 if args.one_gpu else 2):
        print(f"two_gpus: this needs {'a GPU' if args.one_gpu else 'two GPUs'}",
              file=sys.stderr)
        return 2
    if args.one_gpu:
        table = run_on_one_gpu(args.rows, args.size, args.repeats)
        reference_name, where = "torch_matmul", "2 ranks on 1 GPU"
    else:
        table = run(args.rows, args.size, args.repeats)
        reference_name, where = "torch", "2 GPUs"
    reference = table[reference_name]["ms"]
    print(f"{CASE}: {args.rows} rows per rank x {where}, K = N = {args.size} "
          f"({torch.cuda.get_device_name(0)})")
    for name, row in table.items():
        print(f"  {name:16s} {row['ms']:8.3f} ms {row['tflops']:7.1f} TFLOPS  "
              f"{reference / row['ms']:5.2f}x {reference_name}  error {row['error']:.1e}"
              f"{'' if row['ok'] else '  FAIL'}")
    if args.out:
        path = pathlib.Path(args.out)
        path.mkdir(parents=True, exist_ok=True)
        (path / "two_gpus.json").write_text(json.dumps(
            {"case": CASE, "rows": args.rows, "size": args.size, "one_gpu": args.one_gpu,
             "results": table}, indent=1))
    return 0 if all(row["ok"] for row in table.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
