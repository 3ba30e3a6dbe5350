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
from conftest import guarded, guards_untouched
from numba_tile.bench.distributed import CopiedAllGatherMatmul, all_gather_matmul, \
    all_gather_matmul_copied, all_gather_matmul_launch


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


@ct.kernel
def gather_along_k(inputs, w, out, TM: ct.Constant[int], TN: ct.Constant[int],
                   TK: ct.Constant[int]):
    """``out = concatenate(inputs, axis=1) @ w``: the k-loop walks the items one after the
    other, the item picked by the loop variable (cuTile's all-gather along K)."""
    per_item = ct.num_tiles(inputs[0], 1, (TM, TK))
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(per_item * len(inputs)):
        a = ct.load(inputs[k // per_item], (ct.bid(0), k % per_item), (TM, TK))
        b = ct.load(w, (k, ct.bid(1)), (TK, TN))
        acc = ct.mma(a, b, acc)
    ct.store(out, (ct.bid(0), ct.bid(1)), acc)


def test_an_item_picked_by_the_loop_variable(run_kernel, rng):
    inputs = [rng.standard_normal((64, 64)).astype(np.float16) for _ in range(3)]
    w = rng.standard_normal((192, 64)).astype(np.float16)
    out = np.full((64, 64), np.nan, np.float32)
    run_kernel(gather_along_k, (2, 2), (inputs, w, out, 32, 32, 32))
    expected = np.concatenate(inputs, axis=1).astype(np.float64) @ w.astype(np.float64)
    assert relative_error(out, expected) < 1e-3


def test_the_tma_copies_from_each_item_of_a_list():
    """On sm_90 every item of the list gets its own tensor map (the copy picks the item's
    at run time); no tile of the k-loop is loaded without the TMA."""
    inputs = [np.zeros((256, 128), np.float16) for _ in range(3)]
    w = np.zeros((128, 128), np.float16)
    out = np.zeros((768, 128), np.float16)
    kernel, _, args = all_gather_matmul_launch(inputs, w, out, tile=(128, 128, 64))
    compiled = ct.compile(kernel, args, arch="sm_90")
    assert len(compiled.tensor_maps) == 4
    assert sorted(spec[0] for spec in compiled.tensor_maps
                  if not isinstance(spec[0], int)) == [(0, 0), (0, 1), (0, 2)]
    assert "ld.global" not in compiled.ptx and "ld.v4" not in compiled.ptx


@pytest.mark.parametrize("me,extra_blocks", [(0, 0), (2, 0), (1, 3)])
def test_the_copying_all_gather_matmul(run_kernel, rng, me, extra_blocks):
    """Three ranks' rows on one device: copier blocks copy the peers' rows and count them,
    the blocks of the peers' tiles wait for their bands' counts (blocks past the last tile
    do nothing). Output guarded and poisoned; the gathered rows hold the peers' rows (this
    rank's band stays as it was)."""
    ranks, rows, k, n, tile = 3, 64, 64, 96, 32
    inputs = [rng.standard_normal((rows, k)).astype(np.float16) for _ in range(ranks)]
    w = rng.standard_normal((k, n)).astype(np.float16)
    gathered = np.full((ranks * rows, k), np.nan, np.float16)
    ready = np.zeros(ranks * rows // tile, np.int32)
    buffer, out = guarded((ranks * rows, n))
    chunks = k // tile
    tiles = ranks * rows // tile * (n // tile)
    run_kernel(all_gather_matmul_copied, (2 + tiles + extra_blocks,),
               (inputs, me, [inputs[me], gathered], w, out, ready, chunks, tile, tile, tile,
                4, 2))
    expected = np.concatenate(inputs).astype(np.float64) @ w.astype(np.float64)
    assert relative_error(out, expected) < 1e-3
    assert guards_untouched(buffer, out.shape)
    mine = slice(me * rows, (me + 1) * rows)
    assert np.isnan(gathered[mine].astype(np.float32)).all()
    peers = np.ones(ranks * rows, bool)
    peers[mine] = False
    assert np.array_equal(gathered[peers], np.concatenate(inputs)[peers])
    per_band = np.full(ranks, chunks)
    per_band[me] = 0
    assert np.array_equal(ready, np.repeat(per_band, rows // tile))


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
        copied_out = torch.full_like(out, float("nan"))
        copying = CopiedAllGatherMatmul(peers, rank, w, copied_out, tile=(128, 128, 64))
        for launch in range(2):  # the counters carry on from one launch to the next
            copied_out.fill_(float("nan"))
            handle.barrier()
            copying.launch(torch.cuda.current_stream())
            torch.cuda.synchronize()
            for name, result in (("all_gather_matmul", out),
                                 (f"CopiedAllGatherMatmul, launch {launch}", copied_out)):
                error = ((result.double() - expected).abs().max() /
                         expected.abs().max()).item()
                if not error < 1e-2:
                    errors.put(f"rank {rank}, {name}: relative error {error}")
    except Exception as error:  # reported by the parent, which asserts
        errors.put(f"rank {rank}: {type(error).__name__}: {error}")
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs")
@pytest.mark.parametrize("device,peer", [(0, 1), (1, 0)])
def test_a_list_holding_another_gpus_array_reads_it_through_peer_access(device, peer):
    """Plain tensors (no symmetric memory) of two GPUs in one list: the launch runs where
    ``w`` and ``out`` are and reads the other GPU's rows over peer access."""
    import torch
    generator = torch.Generator().manual_seed(3)
    rows = [torch.randn((64, 96), generator=generator).to(torch.float16) for _ in range(2)]
    w = torch.randn((96, 64), generator=generator).to(torch.float16)
    inputs = [rows[0].to(f"cuda:{device}"), rows[1].to(f"cuda:{peer}")]
    out = torch.full((128, 64), float("nan"), device=f"cuda:{device}")
    kernel, grid, args = all_gather_matmul_launch(inputs, w.to(f"cuda:{device}"), out,
                                                  tile=(32, 32, 32))
    torch.cuda.set_device(peer)  # the current device is not the launch's
    ct.launch(torch.cuda.current_stream(device), grid, kernel, args)
    torch.cuda.synchronize(device)
    expected = torch.cat(rows).double() @ w.double()
    assert relative_error(out.cpu().numpy(), expected.numpy()) < 1e-3


@pytest.mark.skipif(not _two_gpus(), reason="needs two GPUs and PyTorch's symmetric memory")
def test_all_gather_matmul_across_two_gpus_over_symmetric_memory():
    import torch.multiprocessing as mp
    errors = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_rank, args=(2, _free_port(), errors), nprocs=2, join=True)
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert not problems, problems
