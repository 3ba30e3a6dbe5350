"""Arrays of several ranks in one kernel (issue 24): a list of arrays indexed at run time
inside the k-loop (``numba_tile.bench.distributed.all_gather_matmul``), checked against
NumPy in float64 in every mode with the ranks' arrays on one device; the errors of lists
whose arrays differ; and, with two GPUs, the all-gather fused with the product over
``torch.distributed`` symmetric memory, one process per GPU, checked against
``all_gather_into_tensor`` followed by ``torch.matmul``.
"""

import os
import socket

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error
from numba_tile.bench.distributed import all_gather_matmul, all_gather_matmul_launch


@pytest.mark.parametrize("ranks,rows,k,n,dtype", [
    (2, 64, 96, 64, np.float16), (3, 32, 64, 48, ml_dtypes.bfloat16),
    (4, 32, 32, 32, np.float32)])
def test_all_gather_matmul_over_a_list_of_arrays(run_kernel, rng, ranks, rows, k, n, dtype):
    inputs = [rng.standard_normal((rows, k)).astype(dtype) for _ in range(ranks)]
    w = rng.standard_normal((k, n)).astype(dtype)
    out = np.full((ranks * rows, n), np.nan, np.float32)
    kernel, grid, args = all_gather_matmul_launch(inputs, w, out, tile=(32, 32, 32))
    run_kernel(kernel, grid, args)
    expected = np.concatenate(inputs).astype(np.float64) @ w.astype(np.float64)
    tolerance = 1e-5 if dtype == np.float32 else 1e-2
    assert relative_error(out, expected) < tolerance


def test_list_arrays_of_another_dtype_or_rank_are_type_errors(run_kernel):
    w = np.zeros((32, 32), np.float32)
    out = np.zeros((64, 32), np.float32)
    for other in (np.zeros((32, 32), np.float16), np.zeros(32, np.float32)):
        inputs = [np.zeros((32, 32), np.float32), other]
        with pytest.raises(TypeError, match="Argument 'inputs': a list must hold items of one "
                                            "kind"):
            run_kernel(all_gather_matmul, (2, 1), (inputs, w, out, 32, 32, 32))


# -- two GPUs: one process each, symmetric memory ------------------------------------------
ROWS, K, N = 256, 512, 256


def _two_gpus():
    try:
        import torch
        import torch.distributed._symmetric_memory  # noqa: F401
    except ImportError:
        return False
    return torch.cuda.device_count() >= 2


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank, world, port, errors):
    """One rank: its rows in symmetric memory, the fused kernel over every rank's buffer,
    compared with NCCL's all-gather followed by ``torch.matmul``."""
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0",
                      TORCH_SYMM_MEM_DISABLE_MULTICAST="1")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    try:
        generator = torch.Generator(device="cuda").manual_seed(1000 + rank)
        local = symm_mem.empty((ROWS, K), dtype=torch.bfloat16, device=f"cuda:{rank}")
        local.copy_(torch.randn((ROWS, K), generator=generator, device="cuda"))
        handle = symm_mem.rendezvous(local, dist.group.WORLD.group_name)
        w = torch.randn((K, N), generator=torch.Generator(device="cuda").manual_seed(7),
                        device="cuda").to(torch.bfloat16)
        out = torch.full((world * ROWS, N), float("nan"), dtype=torch.bfloat16, device="cuda")
        handle.barrier()
        peers = [handle.get_buffer(r, (ROWS, K), torch.bfloat16) for r in range(world)]
        kernel, grid, args = all_gather_matmul_launch(peers, w, out)
        ct.launch(torch.cuda.current_stream(), grid, kernel, args)
        torch.cuda.synchronize()
        handle.barrier()
        gathered = torch.empty((world * ROWS, K), dtype=torch.bfloat16, device="cuda")
        dist.all_gather_into_tensor(gathered, local)
        expected = gathered.double() @ w.double()
        error = ((out.double() - expected).abs().max() / expected.abs().max()).item()
        if not error < 1e-2:
            errors.put(f"rank {rank}: relative error {error}")
    except Exception as error:  # reported by the parent, which asserts
        errors.put(f"rank {rank}: {type(error).__name__}: {error}")
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs and PyTorch's symmetric memory")
def test_all_gather_matmul_across_two_gpus_over_symmetric_memory():
    import torch.multiprocessing as mp
    errors = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_rank, args=(2, _free_port(), errors), nprocs=2, join=True)
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert not problems, problems
