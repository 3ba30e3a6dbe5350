"""Attention written the way cuTile's documentation teaches, with nothing of numba_tile's own.

:func:`attention_as_documented` is what a cuTile user writes: four-dimensional
``(batch, heads, seq, head_dim)`` arrays read one ``(1, 1, rows, head_dim)`` box at a time
and reshaped, ``K`` read transposed with ``order=``, ``latency=`` hints on the streamed
loads, the online softmax in base 2 with ``ct.exp2(..., flush_to_zero=True)``, the mask
added as ``0`` or ``-inf``, Python's ``max`` on tiles, the final division with
``RoundingMode.APPROX``, and ``occupancy=2`` as its only kernel option (no warps, no stages:
the compiler chooses those). The benchmark times it next to PyTorch's sdpa, unchanged, so its
figure is what such a kernel gets from numba_tile.

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.bench.documented_attention import documented_attention_launch
>>> rng = np.random.default_rng(1)
>>> q, k, v = (rng.standard_normal((1, 2, 32, 16)).astype(np.float16) for _ in range(3))
>>> out = np.full_like(q, np.nan)
>>> kernel, grid, args = documented_attention_launch(q, k, v, out, causal=True, tile_m=16,
...                                                  tile_n=16)
>>> grid
(2, 2, 1)
>>> with ct.interpret():
...     ct.launch(0, grid, kernel, args)
>>> bool(np.array_equal(out[0, 1, 0], v[0, 1, 0]))  # the first query sees the first key
True
"""

import math

import numpy as np

import numba_tile as ct

LOG2_E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))


@ct.kernel(occupancy=2)
def attention_as_documented(Q, K, V, Out, sm_scale, TILE_M: ct.Constant[int],
                            TILE_N: ct.Constant[int], HEAD_DIM: ct.Constant[int],
                            CAUSAL: ct.Constant[bool]):
    """``Out = softmax(Q K^T * sm_scale) V`` for one ``TILE_M``-row block of one head."""
    row_block = ct.bid(0)
    batch = ct.bid(1) // Q.shape[1]
    head = ct.bid(1) % Q.shape[1]
    scale = sm_scale * LOG2_E
    q = ct.load(Q, index=(batch, head, row_block, 0),
                shape=(1, 1, TILE_M, HEAD_DIM)).reshape((TILE_M, HEAD_DIM))
    query_pos = row_block * TILE_M + ct.arange(TILE_M, dtype=np.int32)[:, None]
    key_offsets = ct.arange(TILE_N, dtype=np.int32)[None, :]
    m_i = ct.full((TILE_M, 1), -np.inf, dtype=np.float32)
    l_i = ct.full((TILE_M, 1), 0.0, dtype=np.float32)
    acc = ct.full((TILE_M, HEAD_DIM), 0.0, dtype=np.float32)
    keys = K.shape[2]
    if CAUSAL:
        key_blocks = ct.cdiv(min((row_block + 1) * TILE_M, keys), TILE_N)
        first_masked = row_block * TILE_M // TILE_N
    else:
        key_blocks = ct.cdiv(keys, TILE_N)
        first_masked = key_blocks
    for j in range(key_blocks):
        k_t = ct.load(K, index=(batch, head, 0, j), shape=(1, 1, HEAD_DIM, TILE_N),
                      order=(0, 1, 3, 2), latency=2).reshape((HEAD_DIM, TILE_N))
        s = ct.mma(q, k_t, ct.full((TILE_M, TILE_N), 0.0, dtype=np.float32))
        if CAUSAL and j >= first_masked:
            s += ct.where(query_pos >= j * TILE_N + key_offsets, 0.0, -np.inf)
        m_new = max(m_i, ct.max(s, axis=-1, keepdims=True) * scale)
        p = ct.exp2(s * scale - m_new, flush_to_zero=True)
        alpha = ct.exp2(m_i - m_new, flush_to_zero=True)
        l_i = l_i * alpha + ct.sum(p, axis=-1, keepdims=True)
        v = ct.load(V, index=(batch, head, j, 0), shape=(1, 1, TILE_N, HEAD_DIM),
                    latency=4).reshape((TILE_N, HEAD_DIM))
        acc = ct.mma(p.astype(Q.dtype), v, acc * alpha)
        m_i = m_new
    out = ct.truediv(acc, l_i, flush_to_zero=True, rounding_mode=ct.RoundingMode.APPROX)
    ct.store(Out, index=(batch, head, row_block, 0),
             tile=out.reshape((1, 1, TILE_M, HEAD_DIM)).astype(Out.dtype))


def documented_attention_launch(q, k, v, out, *, causal=False, tile_m=128, tile_n=64):
    """``(kernel, grid, args)`` writing attention of ``q, k, v`` (``(batch, heads, seq,
    head_dim)``) into ``out`` with :func:`attention_as_documented`, scale
    ``1 / sqrt(head_dim)``: a block for each row block of each head.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench.documented_attention import documented_attention_launch
    >>> q = np.ones((2, 3, 64, 16), np.float16)
    >>> v = np.arange(2 * 3 * 64 * 16, dtype=np.float16).reshape(q.shape) % 8
    >>> out = np.full_like(q, np.nan)
    >>> kernel, grid, args = documented_attention_launch(q, q, v, out, tile_m=32, tile_n=32)
    >>> grid
    (2, 6, 1)
    >>> with ct.interpret():
    ...     ct.launch(0, grid, kernel, args)
    >>> bool(np.allclose(out[1, 2, 0], v[1, 2].astype(np.float32).mean(axis=0), rtol=1e-3))
    True
    """
    batch, heads, seq, head_dim = q.shape
    grid = (ct.cdiv(seq, tile_m), batch * heads, 1)
    return (attention_as_documented, grid,
            (q, k, v, out, 1 / math.sqrt(head_dim), tile_m, tile_n, head_dim, bool(causal)))
