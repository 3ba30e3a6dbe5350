"""The numba_tile kernels the benchmark times, and how each one is launched.

Each kernel is written the way a user would write it: one tile block handles one tile of a
vector, or a few whole rows of a matrix. Tile sizes and rows per block are ``Constant``
parameters, so each value compiles its own specialization and the benchmark can try several;
the warps per block are a kernel option (``num_warps``, see :class:`numba_tile.runtime.kernel_decorator.kernel`).

Each ``*_launch`` function returns ``(kernel, grid, args)`` for ``ct.launch(stream, grid,
kernel, args)``, so the benchmark, the tests and a reader all start the kernels the same way:

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.bench import kernels
>>> x = np.random.default_rng(0).standard_normal((4, 256)).astype(np.float32)
>>> y = np.full_like(x, np.nan)
>>> kernel, grid, args = kernels.softmax_launch(x, y, rows=2)
>>> grid
(2,)
>>> with ct.interpret():
...     ct.launch(0, grid, kernel, args)
>>> np.allclose(y.sum(axis=1), 1.0)
True
"""

import functools
import math

import numba_tile as ct
from .optional import torch


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    """``c = a + b`` on 1-D arrays, one tile of ``TILE`` elements per block."""
    i = ct.bid(0)
    ct.store(c, index=(i,), tile=ct.load(a, index=(i,), shape=(TILE,))
             + ct.load(b, index=(i,), shape=(TILE,)))


@ct.kernel
def softmax(x, y, ROWS: ct.Constant[int], TILE_N: ct.Constant[int]):
    """Softmax of each row of ``x`` into ``y``; a block handles ``ROWS`` whole rows
    (``TILE_N`` is at least the row length). Computed in float32 whatever the dtypes, with
    the fast approximate ``exp`` and division (``RoundingMode.APPROX``: a few ulp, as
    Triton's ``tl.exp`` and ``/``)."""
    # Padding with -inf makes the elements past the row's end vanish from max and sum.
    rows = ct.load(x, index=(ct.bid(0), 0), shape=(ROWS, TILE_N),
                   padding_mode=ct.PaddingMode.NEG_INF).astype(ct.float32)
    numerator = ct.exp(rows - ct.max(rows, axis=1, keepdims=True),
                       rounding_mode=ct.RoundingMode.APPROX)
    result = ct.truediv(numerator, ct.sum(numerator, axis=1, keepdims=True),
                        rounding_mode=ct.RoundingMode.APPROX, flush_to_zero=True)
    ct.store(y, index=(ct.bid(0), 0), tile=result.astype(y.dtype))


@ct.kernel
def layer_norm(x, weight, bias, y, eps, ROWS: ct.Constant[int], TILE_N: ct.Constant[int]):
    """Layer normalization of each row of ``x`` (mean 0 and variance 1, then ``* weight +
    bias``) into ``y``; a block handles ``ROWS`` whole rows. Statistics in float32."""
    n = x.shape[1]
    rows = ct.load(x, index=(ct.bid(0), 0), shape=(ROWS, TILE_N),
                   padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    mean = ct.sum(rows, axis=1, keepdims=True) / n
    centered = rows - mean
    # Each of the TILE_N - n padding zeros adds mean**2 to the sum of squares: take it off.
    variance = (ct.sum(centered * centered, axis=1, keepdims=True)
                - (TILE_N - n) * mean * mean) / n
    w = ct.load(weight, index=(0,), shape=(TILE_N,), padding_mode=ct.PaddingMode.ZERO)
    b = ct.load(bias, index=(0,), shape=(TILE_N,), padding_mode=ct.PaddingMode.ZERO)
    result = centered * ct.rsqrt(variance + eps) * w.astype(ct.float32) + b.astype(ct.float32)
    ct.store(y, index=(ct.bid(0), 0), tile=result.astype(y.dtype))


@ct.kernel
def row_sum(x, out, ROWS: ct.Constant[int], TILE_N: ct.Constant[int]):
    """``out[i] = sum(x[i, :])``; a block walks ``ROWS`` rows in tiles of ``ROWS x TILE_N``,
    accumulating in float32."""
    total = ct.zeros((ROWS,), ct.float32)
    for j in range((x.shape[1] + TILE_N - 1) // TILE_N):
        tile = ct.load(x, index=(ct.bid(0), j), shape=(ROWS, TILE_N),
                       padding_mode=ct.PaddingMode.ZERO)
        total = total + ct.sum(tile.astype(ct.float32), axis=1)
    ct.store(out, index=(ct.bid(0),), tile=total.astype(out.dtype))


@ct.kernel
def row_cumsum(x, y, ROWS: ct.Constant[int], TILE_N: ct.Constant[int]):
    """The running sum of each row of ``x`` into ``y``; a block scans ``ROWS`` whole rows
    (``TILE_N`` is at least the row length; the zeros padding it change no sum)."""
    rows = ct.load(x, index=(ct.bid(0), 0), shape=(ROWS, TILE_N),
                   padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(ct.bid(0), 0), tile=ct.cumsum(rows, axis=1))


@ct.kernel
def row_scan(x, y, ROWS: ct.Constant[int], TILE_N: ct.Constant[int]):
    """:func:`row_cumsum` written with ``ct.scan`` and a user's combining function (here
    ``lambda a, b: a + b``): what a custom scan costs next to the built-in one."""
    rows = ct.load(x, index=(ct.bid(0), 0), shape=(ROWS, TILE_N),
                   padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(ct.bid(0), 0), tile=ct.scan(rows, 1, lambda a, b: a + b, 0))


@ct.function
def _grouped_tile(pid, num_m, num_n, GROUP):
    """Tile ``(bm, bn)`` number ``pid`` in a grouped order: ``GROUP`` rows of tiles at a
    time, column by column, so that the blocks running together share rows of A and columns
    of B in the L2 cache."""
    in_group = GROUP * num_n
    first_m = (pid // in_group) * GROUP
    rows = min(num_m - first_m, GROUP)
    return first_m + (pid % in_group) % rows, (pid % in_group) // rows


@ct.kernel
def matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
           GROUP: ct.Constant[int]):
    """``C = A @ B`` (2-d), one ``TM x TN`` tile of ``C`` per block (blocks in a grouped
    order, see :func:`_grouped_tile`), float32 accumulation: the k-loop of cuda.tile's
    matmul sample."""
    bm, bn = _grouped_tile(ct.bid(0), ct.cdiv(A.shape[0], TM), ct.cdiv(B.shape[1], TN),
                            GROUP)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel
def persistent_matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                      TK: ct.Constant[int], GROUP: ct.Constant[int]):
    """:func:`matmul` as a persistent kernel: a few blocks (one per multiprocessor), each
    taking every ``ct.num_blocks(0)``-th tile of ``C`` in the grouped order and running the
    k-loop for it, which the compiler pipelines as in :func:`matmul`."""
    num_m, num_n = ct.cdiv(A.shape[0], TM), ct.cdiv(B.shape[1], TN)
    for tile in range(ct.bid(0), num_m * num_n, ct.num_blocks(0)):
        bm, bn = _grouped_tile(tile, num_m, num_n, GROUP)
        acc = ct.full((TM, TN), 0, ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
            a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, b, acc)
        ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel
def matmul_tf32(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int],
                GROUP: ct.Constant[int]):
    """:func:`matmul` of float32 matrices with the operands rounded to tfloat32 for the
    tensor cores."""
    bm, bn = _grouped_tile(ct.bid(0), ct.cdiv(A.shape[0], TM), ct.cdiv(B.shape[1], TN),
                            GROUP)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.astype(ct.tfloat32), b.astype(ct.tfloat32), acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


@ct.kernel
def batched_matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    """``C[i] = A[i] @ B[i]`` (3-d), one ``TM x TN`` tile of one matrix per block."""
    bm, bn, batch = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((1, TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=2, shape=(1, TM, TK))):
        a = ct.load(A, (batch, bm, k), (1, TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (batch, k, bn), (1, TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, (batch, bm, bn), acc.astype(C.dtype))


# Causal row blocks are launched a group of this many heads at a time. Blocks of the same
# head read the same keys and values; a wave of blocks that spans every head (64 heads of
# 4096 x 128: 128 MiB of keys and values) reads them from DRAM, one that spans 8 heads (16
# MiB) from L2. Measured on an H100 (docs/performance, "The causal blocks' order"): head
# dim 128 went from 0.88 to 0.95 of sdpa, head dim 64 stayed at 1.03 to 1.04.
CAUSAL_GROUP_HEADS = 8


@ct.function
def _causal_row_block(tile, heads, row_blocks):
    """``(head, row block)`` of the ``tile``-th causal row block in launch order: groups of
    :data:`CAUSAL_GROUP_HEADS` heads, one after the other; in a group the longest rows
    (the last row blocks) first, the group's heads side by side."""
    group_tiles = CAUSAL_GROUP_HEADS * row_blocks
    first_head = tile // group_tiles * CAUSAL_GROUP_HEADS
    group_heads = min(CAUSAL_GROUP_HEADS, heads - first_head)  # the last group may be short
    within = tile % group_tiles
    return first_head + within % group_heads, row_blocks - 1 - within // group_heads


@ct.function
def _attention_block(SEQ, TM, CAUSAL):
    """``(head, row block)`` of this block: a causal grid is one axis of every head's row
    blocks in :func:`_causal_row_block`'s order, a plain one ``(row blocks, heads)``."""
    if CAUSAL:
        row_blocks = SEQ // TM
        return _causal_row_block(ct.bid(0), ct.num_blocks(0) // row_blocks, row_blocks)
    return ct.bid(1), ct.bid(0)


@ct.function
def _attention_rows(Q, K, V, Out, qk_scale, head, bm, SEQ, TM, TN, D, CAUSAL):
    """Flash-attention forward for the ``TM`` queries of row block ``bm`` of ``head``:
    ``softmax(Q K^T * scale) V``, streaming ``TN`` keys at a time with the online softmax
    (running maximum and sum in float32, base-2 exponentials with the scale folded in)."""
    row_tile = head * (SEQ // TM) + bm
    q = ct.load(Q, (row_tile, 0), (TM, D))
    m_i = ct.full((TM, 1), -math.inf, ct.float32)
    l_i = ct.full((TM, 1), 0, ct.float32)
    acc = ct.full((TM, D), 0, ct.float32)
    rows = bm * TM + ct.arange(TM, dtype=ct.int32)[:, None]
    end = (bm + 1) * TM if CAUSAL else SEQ
    unmasked = bm * TM // TN  # the key blocks wholly left of the diagonal
    for j in range(ct.cdiv(end, TN)):
        key_tile = head * (SEQ // TN) + j
        # K^T read directly: tile axis 0 is the array's axis 1 (D), axis 1 its rows
        k_t = ct.load(K, (0, key_tile), (D, TN), order=(1, 0))
        scores = ct.mma(q, k_t, ct.full((TM, TN), 0, ct.float32))
        if CAUSAL and j >= unmasked:  # masks only where the block meets the diagonal
            columns = j * TN + ct.arange(TN, dtype=ct.int32)[None, :]
            scores = ct.where(columns <= rows, scores, -math.inf)
        # scaled after the maximum (the scale is positive): one fused multiply-add a score
        m_new = ct.maximum(m_i, ct.max(scores, axis=1, keepdims=True) * qk_scale)
        # exponentials below 2**-126 are 0 to softmax: the flushing form is one instruction
        p = ct.exp2(scores * qk_scale - m_new, flush_to_zero=True)
        alpha = ct.exp2(m_i - m_new, flush_to_zero=True)
        l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, (key_tile, 0), (TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        m_i = m_new
    # div.full: an IEEE division calls a slow path, and a call makes ptxas run every
    # wgmma of the kernel one after another
    out = ct.truediv(acc, l_i, rounding_mode=ct.RoundingMode.FULL)
    ct.store(Out, (row_tile, 0), out.astype(Out.dtype))


@ct.kernel
def attention(Q, K, V, Out, qk_scale, SEQ: ct.Constant[int], TM: ct.Constant[int],
              TN: ct.Constant[int], D: ct.Constant[int], CAUSAL: ct.Constant[bool]):
    """Flash-attention forward (:func:`_attention_rows`) for one ``TM``-row block of
    queries of one head per block. ``Q, K, V, Out`` are ``(heads * SEQ, D)``: a head's rows
    one after the other. A causal grid has one axis: groups of heads, the longest rows of a
    group first (see :func:`_causal_row_block`)."""
    head, bm = _attention_block(SEQ, TM, CAUSAL)
    _attention_rows(Q, K, V, Out, qk_scale, head, bm, SEQ, TM, TN, D, CAUSAL)


@ct.kernel
def persistent_attention(Q, K, V, Out, qk_scale, SEQ: ct.Constant[int],
                         TM: ct.Constant[int], TN: ct.Constant[int], D: ct.Constant[int],
                         CAUSAL: ct.Constant[bool]):
    """:func:`attention` as a persistent kernel: a few blocks (one per multiprocessor)
    take the row blocks in rounds of one each, forward in even rounds and backward in odd
    ones; causal row blocks go every head's longest rows first, so that each block's share
    of the causal work comes out nearly even (every ``ct.num_blocks(0)``-th row block would
    give block 0 the longest of each round, 6% more than the mean; :func:`attention`'s
    groups of heads, each group's longest rows first, would give it the longest of each
    group: 0.60 of sdpa against 0.86 at head dim 128 on an H100). With a producer warp
    (``warp_specialize``), it loads the queries, keys and values of a block's next rows
    while the block finishes the last ones."""
    row_blocks = SEQ // TM
    heads = Q.shape[0] // SEQ
    tiles, blocks = heads * row_blocks, ct.num_blocks(0)
    rounds = tiles // blocks
    mirrored = blocks - 1 - 2 * ct.bid(0)  # from this block's place to its mirror's
    last = ct.bid(0) + rounds % 2 * mirrored  # its place in the last, partial round
    for step in range(rounds + min(max(tiles % blocks - last, 0), 1)):
        tile = step * blocks + ct.bid(0) + step % 2 * mirrored
        if CAUSAL:  # every head's longest rows first: the rounds balance only that order
            head, bm = tile % heads, row_blocks - 1 - tile // heads
        else:
            head, bm = tile // row_blocks, tile % row_blocks
        _attention_rows(Q, K, V, Out, qk_scale, head, bm, SEQ, TM, TN, D, CAUSAL)


@ct.kernel
def attention_pipelined(Q, K, V, Out, qk_scale, SEQ: ct.Constant[int], TM: ct.Constant[int],
                        TN: ct.Constant[int], D: ct.Constant[int],
                        CAUSAL: ct.Constant[bool]):
    """:func:`attention` with its loop turned as FlashAttention-3 does: iteration ``j``
    starts the scores of key block ``j`` and the product of block ``j - 1``'s
    probabilities with its values, then computes the softmax of block ``j``. Compiled for
    Hopper, each product is waited for where its result is first read, so the tensor cores
    run ``P V`` while the warps compute the exponentials (the first block's softmax comes
    before the loop, the last block's product after it)."""
    head, bm = _attention_block(SEQ, TM, CAUSAL)
    row_tile = head * (SEQ // TM) + bm
    q = ct.load(Q, (row_tile, 0), (TM, D))
    acc = ct.full((TM, D), 0, ct.float32)
    rows = bm * TM + ct.arange(TM, dtype=ct.int32)[:, None]
    end = (bm + 1) * TM if CAUSAL else SEQ
    unmasked = bm * TM // TN
    first_key = head * (SEQ // TN)
    blocks = ct.cdiv(end, TN)
    scores = ct.mma(q, ct.load(K, (0, first_key), (D, TN), order=(1, 0)),
                    ct.full((TM, TN), 0, ct.float32))
    if CAUSAL and unmasked == 0:
        scores = ct.where(ct.arange(TN, dtype=ct.int32)[None, :] <= rows, scores, -math.inf)
    m_i = ct.max(scores, axis=1, keepdims=True) * qk_scale
    p = ct.exp2(scores * qk_scale - m_i, flush_to_zero=True)
    l_i = ct.sum(p, axis=1, keepdims=True)
    alpha = ct.full((TM, 1), 1, ct.float32)
    for j in range(1, blocks):
        key_tile = first_key + j
        k_t = ct.load(K, (0, key_tile), (D, TN), order=(1, 0))
        scores = ct.mma(q, k_t, ct.full((TM, TN), 0, ct.float32))
        v = ct.load(V, (key_tile - 1, 0), (TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        if CAUSAL and j >= unmasked:
            columns = j * TN + ct.arange(TN, dtype=ct.int32)[None, :]
            scores = ct.where(columns <= rows, scores, -math.inf)
        m_new = ct.maximum(m_i, ct.max(scores, axis=1, keepdims=True) * qk_scale)
        p = ct.exp2(scores * qk_scale - m_new, flush_to_zero=True)
        alpha = ct.exp2(m_i - m_new, flush_to_zero=True)
        l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
        m_i = m_new
    v_last = ct.load(V, (first_key + blocks - 1, 0), (TN, D))
    acc = ct.mma(p.astype(V.dtype), v_last, acc * alpha)
    out = ct.truediv(acc, l_i, rounding_mode=ct.RoundingMode.FULL)
    ct.store(Out, (row_tile, 0), out.astype(Out.dtype))


def matmul_launch(a, b, c, *, tile_m=128, tile_n=128, tile_k=64, num_warps=None,
                  num_stages=None, tf32=False, group=8, persistent_blocks=None):
    """``(kernel, grid, args)`` computing ``c = a @ b`` in ``tile_m x tile_n`` tiles, the
    blocks in groups of ``group`` rows of tiles; ``persistent_blocks``: that many blocks of
    :func:`persistent_matmul` (where there are more tiles), instead of one per tile
    (``"multiprocessors"``: one per multiprocessor of the GPU of ``a``, a PyTorch tensor).

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.kernels import matmul_launch
    >>> a = np.arange(6, dtype=np.float16).reshape(2, 3); b = np.ones((3, 2), np.float16)
    >>> c = np.full((2, 2), np.nan, np.float16)
    >>> kernel, grid, args = matmul_launch(a, b, c, tile_m=16, tile_n=16, tile_k=16)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> c
    array([[ 3.,  3.],
           [12., 12.]], dtype=float16)
    >>> a = np.ones((64, 16), np.float16); c = np.full((64, 64), np.nan, np.float16)
    >>> kernel, grid, args = matmul_launch(a, a.T.copy(), c, tile_m=16, tile_n=16,
    ...                                    tile_k=16, persistent_blocks=3)
    >>> kernel.__name__, grid  # 3 blocks for the 16 tiles of c
    ('persistent_matmul', (3,))
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> np.unique(c)
    array([16.], dtype=float16)
    """
    grid = (ct.cdiv(a.shape[0], tile_m) * ct.cdiv(b.shape[1], tile_n),)
    kernel = matmul_tf32 if tf32 else matmul
    if persistent_blocks is not None and not tf32:
        kernel = persistent_matmul
        grid = (min(grid[0], _block_count(persistent_blocks, a)),)
    return (_with_warps(kernel, num_warps, num_stages=num_stages), grid,
            (a, b, c, tile_m, tile_n, tile_k, group))


def batched_matmul_launch(a, b, c, *, tile_m=128, tile_n=128, tile_k=64, num_warps=None,
                          num_stages=None):
    """``(kernel, grid, args)`` computing ``c[i] = a[i] @ b[i]``.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.kernels import batched_matmul_launch
    >>> a = np.ones((2, 2, 3), np.float16); b = np.ones((2, 3, 2), np.float16)
    >>> c = np.full((2, 2, 2), np.nan, np.float16)
    >>> kernel, grid, args = batched_matmul_launch(a, b, c, tile_m=16, tile_n=16, tile_k=16)
    >>> grid
    (1, 1, 2)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> c[1]
    array([[3., 3.],
           [3., 3.]], dtype=float16)
    """
    grid = (ct.cdiv(a.shape[1], tile_m), ct.cdiv(b.shape[2], tile_n), a.shape[0])
    return (_with_warps(batched_matmul, num_warps, num_stages=num_stages), grid,
            (a, b, c, tile_m, tile_n, tile_k))


def attention_launch(q, k, v, out, *, causal=False, tile_m=128, tile_n=64, num_warps=None,
                     num_stages=None, pipelined=False, occupancy=None, warp_specialize=None,
                     persistent_blocks=None):
    """``(kernel, grid, args)`` writing attention of ``q, k, v`` (``(batch, heads, seq,
    head_dim)``, contiguous) into ``out``, with the scale ``1 / sqrt(head_dim)``;
    ``pipelined``: the kernel :func:`attention_pipelined`; ``warp_specialize``: the kernel
    option of that name (a producer warp starts the copies of the keys and values). A
    causal grid has one axis, a group of heads after another, the longest rows of a group
    first (:func:`_causal_row_block`): the group's blocks share its keys and values in L2,
    and the short ones fill the group's last wave. ``persistent_blocks``: that many
    blocks of :func:`persistent_attention` (``"multiprocessors"``: one per multiprocessor
    of the GPU of ``q``, a PyTorch tensor) instead of one per row block.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.kernels import attention_launch
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((1, 2, 32, 16)).astype(np.float16) for _ in range(3))
    >>> out = np.full_like(q, np.nan)
    >>> kernel, grid, args = attention_launch(q, k, v, out, causal=True, tile_m=16,
    ...                                       tile_n=16)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> bool(np.array_equal(out[0, 0, 0], v[0, 0, 0]))  # the first query sees the first key
    True
    """
    batch, heads, seq, head_dim = q.shape
    rows = (batch * heads * seq, head_dim)
    flat = [x.reshape(rows) for x in (q, k, v, out)]
    scale = 1.4426950408889634 / math.sqrt(head_dim)  # log2(e): exp2 in the kernel
    row_blocks = ct.cdiv(seq, tile_m)
    # a causal grid has one axis, in _causal_row_block's order
    grid = (row_blocks * batch * heads,) if causal else (row_blocks, batch * heads)
    kernel = attention_pipelined if pipelined else attention
    if persistent_blocks is not None and not pipelined:
        kernel = persistent_attention
        grid = (min(row_blocks * batch * heads, _block_count(persistent_blocks, q)),)
    return (_with_warps(kernel, num_warps, occupancy, num_stages, warp_specialize), grid,
            (*flat, scale, seq, tile_m, tile_n, head_dim, bool(causal)))


def vector_add_launch(a, b, c, *, tile=1024, num_warps=None):
    """``(kernel, grid, args)`` computing ``c = a + b`` with tiles of ``tile`` elements.

    >>> import numpy as np, numba_tile as ct
    >>> a, b = np.arange(6, dtype=np.float32), np.ones(6, np.float32)
    >>> c = np.full(6, np.nan, np.float32)
    >>> from numba_tile.bench.kernels import vector_add_launch
    >>> kernel, grid, args = vector_add_launch(a, b, c, tile=4)
    >>> grid
    (2,)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> c
    array([1., 2., 3., 4., 5., 6.], dtype=float32)
    """
    return (_with_warps(vector_add, num_warps), (ct.cdiv(a.shape[0], tile),), (a, b, c, tile))


def softmax_launch(x, y, *, rows=1, num_warps=None):
    """``(kernel, grid, args)`` writing the softmax of each row of ``x`` into ``y``, ``rows``
    rows per block.

    >>> import numpy as np, numba_tile as ct
    >>> x = np.log(np.array([[1, 1, 2], [1, 3, 4]], np.float32))
    >>> y = np.full_like(x, np.nan)
    >>> from numba_tile.bench.kernels import softmax_launch
    >>> kernel, grid, args = softmax_launch(x, y)
    >>> args[2:]  # ROWS, TILE_N
    (1, 4)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> y.round(3)
    array([[0.25 , 0.25 , 0.5  ],
           [0.125, 0.375, 0.5  ]], dtype=float32)
    """
    return (_with_warps(softmax, num_warps), (ct.cdiv(x.shape[0], rows),),
            (x, y, rows, _row_tile(x.shape[1])))


def layer_norm_launch(x, weight, bias, y, *, eps=1e-5, rows=1, num_warps=None,
                      occupancy=None):
    """``(kernel, grid, args)`` writing the layer normalization of each row of ``x`` into
    ``y``, ``rows`` rows per block.

    >>> import numpy as np, numba_tile as ct
    >>> x = np.array([[1, 2, 3], [2, 2, 8]], np.float16)
    >>> weight, bias = np.full(3, 2, np.float16), np.ones(3, np.float16)
    >>> y = np.full_like(x, np.nan)
    >>> from numba_tile.bench.kernels import layer_norm_launch
    >>> kernel, grid, args = layer_norm_launch(x, weight, bias, y, eps=0.0)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> y  # (x - mean) / std * 2 + 1
    array([[-1.449 ,  1.    ,  3.45  ],
           [-0.4143, -0.4143,  3.828 ]], dtype=float16)
    """
    return (_with_warps(layer_norm, num_warps, occupancy), (ct.cdiv(x.shape[0], rows),),
            (x, weight, bias, y, float(eps), rows, _row_tile(x.shape[1])))


def row_sum_launch(x, out, *, rows=1, tile_n=None, num_warps=None):
    """``(kernel, grid, args)`` writing the sum of each row of ``x`` into ``out``: ``rows``
    rows per block, in tiles of ``tile_n`` columns (default: the whole row in one tile).

    >>> import numpy as np, numba_tile as ct
    >>> x = np.arange(15, dtype=np.float32).reshape(3, 5)
    >>> out = np.full(3, np.nan, np.float32)
    >>> from numba_tile.bench.kernels import row_sum_launch
    >>> kernel, grid, args = row_sum_launch(x, out, rows=2, tile_n=2)
    >>> grid, args[2:]
    ((2,), (2, 2))
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> out
    array([10., 35., 60.], dtype=float32)
    """
    tile_n = _row_tile(x.shape[1]) if tile_n is None else tile_n
    return (_with_warps(row_sum, num_warps), (ct.cdiv(x.shape[0], rows),),
            (x, out, rows, tile_n))


def row_cumsum_launch(x, y, *, rows=1, num_warps=None):
    """``(kernel, grid, args)`` writing the running sum of each row of ``x`` into ``y``,
    ``rows`` whole rows per block.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.kernels import row_cumsum_launch
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> y = np.full_like(x, np.nan)
    >>> kernel, grid, args = row_cumsum_launch(x, y)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> y
    array([[ 0.,  1.,  3.],
           [ 3.,  7., 12.]], dtype=float32)
    """
    return _rows_launch(row_cumsum, x, y, rows, num_warps)


def row_scan_launch(x, y, *, rows=1, num_warps=None):
    """``(kernel, grid, args)`` of :func:`row_scan`: ``row_cumsum_launch`` with a custom
    scan.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.kernels import row_scan_launch
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> y = np.full_like(x, np.nan)
    >>> kernel, grid, args = row_scan_launch(x, y)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> y
    array([[ 0.,  1.,  3.],
           [ 3.,  7., 12.]], dtype=float32)
    """
    return _rows_launch(row_scan, x, y, rows, num_warps)


def _rows_launch(kernel, x, y, rows, num_warps):
    """A launch of a row kernel that takes ``rows`` whole rows of ``x`` a block."""
    return (_with_warps(kernel, num_warps), (ct.cdiv(x.shape[0], rows),),
            (x, y, rows, _row_tile(x.shape[1])))


def _row_tile(n):
    """The smallest power of two holding a row of ``n`` elements (tile sizes are powers of
    two)."""
    return 1 << max(n - 1, 0).bit_length()


def _block_count(blocks, tensor):
    """``blocks``, or for ``"multiprocessors"`` the multiprocessors of the GPU that holds
    ``tensor`` (a PyTorch tensor)."""
    if blocks != "multiprocessors":
        return blocks
    return torch.cuda.get_device_properties(tensor.device).multi_processor_count


@functools.lru_cache(maxsize=None)
def _with_warps(kernel, num_warps, occupancy=None, num_stages=None, warp_specialize=None):
    """``kernel`` with the ``num_warps``, ``occupancy``, ``num_stages`` and
    ``warp_specialize`` options (one object per value, so that each keeps its compile cache
    across launches)."""
    hints = {name: value for name, value in (("num_warps", num_warps),
                                             ("occupancy", occupancy),
                                             ("num_stages", num_stages),
                                             ("warp_specialize", warp_specialize))
             if value is not None}
    return kernel.replace_hints(**hints) if hints else kernel
