"""An all-gather fused with a matrix product, over arrays that live on several GPUs (issue 24):
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
