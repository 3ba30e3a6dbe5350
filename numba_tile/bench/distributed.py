"""An all-gather fused with a matrix product, over arrays that live on several GPUs:
``out = concatenate(inputs) @ w``, where ``inputs`` holds one array per rank (each rank's
rows, read where they are: a peer's buffer from ``torch.distributed``'s symmetric memory,
or an array of this GPU), and a tile block picks its rank's array with a run-time index
inside the k-loop, as cuTile's samples do.

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.bench.distributed import all_gather_matmul_launch
>>> rng = np.random.default_rng(0)
>>> inputs = [rng.standard_normal((32, 16)).astype(np.float32) for _ in range(2)]
>>> w = rng.standard_normal((16, 16)).astype(np.float32)
>>> out = np.full((64, 16), np.nan, np.float32)
>>> kernel, grid, args = all_gather_matmul_launch(inputs, w, out, tile=(16, 16, 16))
>>> with ct.interpret():
...     ct.launch(0, grid, kernel, args)
>>> bool(np.allclose(out, np.concatenate(inputs) @ w, atol=1e-4))
True
"""

import numba_tile as ct
from .kernels import _grouped_tile
from .optional import torch


@ct.kernel
def all_gather_matmul(inputs, w, out, TM: ct.Constant[int], TN: ct.Constant[int],
                      TK: ct.Constant[int]):
    """``out = concatenate(inputs) @ w`` for ``inputs`` a list of ``(M, K)`` arrays, one per
    rank: block row ``bid(0)`` holds rows of rank ``bid(0) // (M // TM)`` (``M`` a multiple
    of ``TM``); products accumulate in float32."""
    blocks_per_rank = inputs[0].shape[0] // TM
    rank = ct.bid(0) // blocks_per_rank
    row = ct.bid(0) % blocks_per_rank
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.num_tiles(w, 0, (TK, TN))):
        a = ct.load(inputs[rank], (row, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(w, (k, ct.bid(1)), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(out, (ct.bid(0), ct.bid(1)), acc.astype(out.dtype))


def all_gather_matmul_launch(inputs, w, out, *, tile=(128, 128, 64), num_warps=None):
    """``(kernel, grid, args)`` of :func:`all_gather_matmul` (see the module's example)."""
    tm, tn, tk = tile
    kernel = all_gather_matmul.replace_hints(num_warps=num_warps) if num_warps \
        else all_gather_matmul
    rows = inputs[0].shape[0]
    if rows % tm:
        raise ValueError(f"each rank's rows ({rows}) must be a multiple of the tile's ({tm})")
    return (kernel, (len(inputs) * rows // tm, ct.cdiv(w.shape[1], tn)),
            (list(inputs), w, out, tm, tn, tk))


@ct.kernel
def all_gather_matmul_copied(inputs, me, sources, w, out, ready, target,
                             TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
                             GROUP: ct.Constant[int], COPIERS: ct.Constant[int]):
    """:func:`all_gather_matmul` that reads each peer's rows once over NVLink. The first
    ``COPIERS`` blocks copy the peers' rows, ``TM x TN`` chunks in turn, into
    ``sources[1]`` (``(ranks * M, K)``, on this GPU), counting each chunk in ``ready``
    (one int32 counter per band of ``TM`` rows). The other blocks take the tiles of
    ``out``: first those of this rank's own rows (from ``sources[0]``, which is
    ``inputs[me]``), then each peer's, whose blocks first wait until their band's counter
    reaches ``target`` (the chunks of a band times the launches so far: the counters are
    never reset); block ``bid(0)`` takes tile ``bid(0) - COPIERS`` (blocks past the last
    tile do nothing). A block waits only for blocks of lower numbers, which start before
    it. (A persistent grid, every block taking many tiles, cost 100 more registers a
    thread and was slower. Reading the peers' rows in place, as
    :func:`all_gather_matmul` does, reads each once per column of tiles of ``out``.)

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.distributed import all_gather_matmul_copied
    >>> rng = np.random.default_rng(0)
    >>> inputs = [rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2)]
    >>> w = rng.standard_normal((32, 16)).astype(np.float32)
    >>> gathered = np.zeros((64, 32), np.float32); ready = np.zeros(4, np.int32)
    >>> out = np.full((64, 16), np.nan, np.float32)
    >>> args = (inputs, 0, [inputs[0], gathered], w, out, ready, 2, 16, 16, 16, 2, 1)
    >>> with ct.interpret():  # 1 copier block, then 4 tiles of 16 x 16
    ...     ct.launch(0, (1 + 4,), all_gather_matmul_copied, args)
    >>> bool(np.allclose(out, np.concatenate(inputs) @ w, atol=1e-4)), ready.tolist()
    (True, [0, 0, 2, 2])
    """
    ranks = len(inputs)
    per_rank = sources[0].shape[0] // TM
    num_n = ct.cdiv(w.shape[1], TN)
    chunks = ct.cdiv(sources[0].shape[1], TN)
    own_tiles = per_rank * num_n
    if ct.bid(0) < COPIERS:
        for chunk in range(ct.bid(0), (ranks - 1) * per_rank * chunks, COPIERS):
            peer = (me + 1 + chunk // (per_rank * chunks)) % ranks
            band = chunk % (per_rank * chunks) // chunks
            column = chunk % chunks
            part = ct.load(inputs[peer], (band, column), (TM, TN))
            ct.store(sources[1], (peer * per_rank + band, column), part)
            ct.atomic_add(ready, peer * per_rank + band, 1,
                          memory_order=ct.MemoryOrder.RELEASE)
    elif ct.bid(0) - COPIERS < ranks * own_tiles:  # (blocks past the tiles: none to do)
        t = ct.bid(0) - COPIERS
        turn = t // own_tiles  # 0: this rank's rows, then each peer's
        rank = (me + turn) % ranks
        bm, bn = _grouped_tile(t % own_tiles, per_rank, num_n, GROUP)
        if turn > 0:
            while ct.atomic_add(ready, rank * per_rank + bm, 0,
                                memory_order=ct.MemoryOrder.ACQUIRE) < target:
                pass
        which = min(turn, 1)
        row = bm + which * rank * per_rank
        acc = ct.zeros((TM, TN), ct.float32)
        for k in range(ct.num_tiles(w, 0, (TK, TN))):
            a = ct.load(sources[which], (row, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(w, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, b, acc)
        ct.store(out, (rank * per_rank + bm, bn), acc.astype(out.dtype))


class CopiedAllGatherMatmul:
    """Launches of :func:`all_gather_matmul_copied` on one rank: ``inputs`` (every rank's
    buffer, as symmetric memory maps them), ``me`` (this rank), ``w`` and ``out``; the
    gathered rows and the counters are kept from launch to launch. ``copiers``: the blocks
    that copy (one block per tile of ``out`` besides).

    >>> import torch  # doctest: +SKIP
    >>> from numba_tile.bench.distributed import CopiedAllGatherMatmul
    >>> parts = [torch.randn(256, 128, device="cuda") for _ in range(2)]  # doctest: +SKIP
    >>> w = torch.randn(128, 128, device="cuda")  # doctest: +SKIP
    >>> out = torch.empty(512, 128, device="cuda")  # doctest: +SKIP
    >>> fused = CopiedAllGatherMatmul(parts, 0, w, out, tile=(64, 64, 32))  # doctest: +SKIP
    >>> fused.launch(torch.cuda.current_stream())  # doctest: +SKIP
    >>> torch.allclose(out, torch.cat(parts) @ w, atol=1e-2)  # doctest: +SKIP
    True
    """

    def __init__(self, inputs, me, w, out, *, tile=(128, 256, 64), num_warps=8, group=8,
                 copiers=16):
        tm, tn, tk = tile
        rows, k = inputs[me].shape
        if rows % tm or k % tn:
            raise ValueError(f"each rank's rows ({rows}) must be a multiple of {tm} and its "
                             f"columns ({k}) of {tn}")
        self.gathered = torch.empty((len(inputs) * rows, k), dtype=inputs[me].dtype,
                                    device=out.device)
        self.ready = torch.zeros(len(inputs) * rows // tm, dtype=torch.int32,
                                 device=out.device)
        self.kernel = all_gather_matmul_copied.replace_hints(num_warps=num_warps)
        tiles = len(inputs) * rows // tm * ct.cdiv(w.shape[1], tn)
        self.grid, self.chunks, self.launches = (copiers + tiles,), k // tn, 0
        self.arguments = [list(inputs), me, [inputs[me], self.gathered], w, out, self.ready,
                          0, tm, tn, tk, group, copiers]

    def launch(self, stream):
        """One launch on ``stream``: ``out`` gets ``concatenate(inputs) @ w``."""
        self.launches += 1
        self.arguments[6] = self.launches * self.chunks
        ct.launch(stream, self.grid, self.kernel, tuple(self.arguments))
