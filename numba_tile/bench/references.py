"""The implementations numba_tile is compared with: PyTorch, and Triton when it is installed.

The PyTorch functions return a new tensor, as PyTorch's operators do. The Triton functions
write into a given output, as the numba_tile kernels do; their kernels are written here the
way the numba_tile ones are (whole rows per program for the row-wise cases, statistics in
float32), so that both sides get the same algorithm and differ in the compiler. Their block
sizes and warps are parameters, tried like the numba_tile ones.

Everything here needs PyTorch and a CUDA GPU, except :func:`triton_version`:

>>> from numba_tile.bench import references
>>> references.triton_version() is None or isinstance(references.triton_version(), str)
True
"""

from .optional import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # Triton is optional: the benchmark leaves its column out
    triton = None


def triton_version():
    """The installed Triton's version, or None where Triton cannot be imported.

    >>> from numba_tile.bench.references import triton_version
    >>> triton_version() is None or triton_version()[0].isdigit()
    True
    """
    return None if triton is None else triton.__version__


def torch_vector_add(a, b):
    """``a + b`` with PyTorch.

    >>> import torch  # doctest: +SKIP
    >>> torch_vector_add(torch.ones(3), torch.ones(3))  # doctest: +SKIP
    tensor([2., 2., 2.])
    """
    return torch.add(a, b)


def torch_softmax(x):
    """Softmax of each row with PyTorch (float32 arithmetic for float16 inputs).

    >>> import torch  # doctest: +SKIP
    >>> torch_softmax(torch.zeros(1, 4))  # doctest: +SKIP
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """
    return torch.softmax(x, dim=1)


def torch_layer_norm(x, weight, bias, *, eps=1e-5):
    """Layer normalization of each row with PyTorch.

    >>> import torch  # doctest: +SKIP
    >>> torch_layer_norm(torch.tensor([[1., 3.]]), torch.ones(2), torch.zeros(2))  # doctest: +SKIP
    tensor([[-1.0000,  1.0000]])
    """
    return torch.nn.functional.layer_norm(x, (x.shape[1],), weight, bias, eps)


def torch_row_sum(x):
    """The sum of each row with PyTorch, in float32.

    >>> import torch  # doctest: +SKIP
    >>> torch_row_sum(torch.ones(2, 3))  # doctest: +SKIP
    tensor([3., 3.])
    """
    return torch.sum(x, dim=1, dtype=torch.float32)


def torch_cumsum(x):
    """The running sum of each row with PyTorch.

    >>> import torch  # doctest: +SKIP
    >>> torch_cumsum(torch.ones(1, 3))  # doctest: +SKIP
    tensor([[1., 2., 3.]])
    """
    return torch.cumsum(x, dim=1)


def torch_embedding(table, indices):
    """Rows ``indices`` of ``table`` with PyTorch (``index_select``).

    >>> import torch  # doctest: +SKIP
    >>> torch_embedding(torch.eye(3), torch.tensor([2, 0]))  # doctest: +SKIP
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    return torch.index_select(table, 0, indices)


def torch_scatter_add(table, indices, source):
    """``table`` with row ``i`` of ``source`` added to its row ``indices[i]``, a new tensor
    (``torch.index_add``: a copy, then ``index_add_``).

    >>> import torch  # doctest: +SKIP
    >>> torch_scatter_add(torch.zeros(2, 1), torch.tensor([1, 1]),
    ...                   torch.ones(2, 1))  # doctest: +SKIP
    tensor([[0.],
            [2.]])
    """
    return torch.index_add(table, 0, indices, source)


def torch_histogram(values, *, bins):
    """The count of each value in ``[0, bins)`` with PyTorch (``bincount``).

    >>> import torch  # doctest: +SKIP
    >>> torch_histogram(torch.tensor([1, 1, 0]), bins=3)  # doctest: +SKIP
    tensor([1, 2, 0])
    """
    return torch.bincount(values, minlength=bins)


def triton_vector_add(a, b, c, *, block=1024, num_warps=4):
    """``c = a + b`` with Triton, ``block`` elements per program.

    >>> a = torch.ones(3, device="cuda"); c = torch.empty_like(a)  # doctest: +SKIP
    >>> triton_vector_add(a, a, c); c  # doctest: +SKIP
    tensor([2., 2., 2.], device='cuda:0')
    """
    n = a.numel()
    _vector_add_kernel[(triton.cdiv(n, block),)](a, b, c, n, BLOCK=block, num_warps=num_warps)


def triton_softmax(x, y, *, num_warps=8):
    """Softmax of each row of ``x`` into ``y`` with Triton, one row per program.

    >>> x = torch.zeros(2, 4, device="cuda"); y = torch.empty_like(x)  # doctest: +SKIP
    >>> triton_softmax(x, y); y[0]  # doctest: +SKIP
    tensor([0.2500, 0.2500, 0.2500, 0.2500], device='cuda:0')
    """
    n_rows, n_cols = x.shape
    _softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0),
                               BLOCK_N=triton.next_power_of_2(n_cols), num_warps=num_warps)


def triton_layer_norm(x, weight, bias, y, *, eps=1e-5, num_warps=8):
    """Layer normalization of each row of ``x`` into ``y`` with Triton, one row per program.

    >>> x = torch.tensor([[1., 3.]], device="cuda"); y = torch.empty_like(x)  # doctest: +SKIP
    >>> w, b = torch.ones(2, device="cuda"), torch.zeros(2, device="cuda")  # doctest: +SKIP
    >>> triton_layer_norm(x, w, b, y); y  # doctest: +SKIP
    tensor([[-1.0000,  1.0000]], device='cuda:0')
    """
    n_rows, n_cols = x.shape
    _layer_norm_kernel[(n_rows,)](x, weight, bias, y, n_cols, x.stride(0), y.stride(0), eps,
                                  BLOCK_N=triton.next_power_of_2(n_cols), num_warps=num_warps)


def triton_row_sum(x, out, *, rows=1, block_n=None, num_warps=4):
    """The sum of each row of ``x`` into ``out`` (float32) with Triton: ``rows`` rows per
    program, in tiles of ``block_n`` columns (default: the whole row).

    >>> x = torch.ones(3, 5, device="cuda"); out = torch.empty(3, device="cuda")  # doctest: +SKIP
    >>> triton_row_sum(x, out, rows=2, block_n=2); out  # doctest: +SKIP
    tensor([5., 5., 5.], device='cuda:0')
    """
    n_rows, n_cols = x.shape
    block_n = triton.next_power_of_2(n_cols) if block_n is None else block_n
    _row_sum_kernel[(triton.cdiv(n_rows, rows),)](x, out, n_rows, n_cols, x.stride(0),
                                                  ROWS=rows, BLOCK_N=block_n,
                                                  num_warps=num_warps)


def torch_matmul(a, b, *, tf32=False):
    """``a @ b`` with PyTorch (cuBLAS; ``tf32``: float32 products on tensor cores in
    tfloat32, as ``torch.backends.cuda.matmul.allow_tf32`` allows).

    >>> torch_matmul(torch.ones(2, 3, device="cuda"), torch.ones(3, 2, device="cuda"))  # doctest: +SKIP
    tensor([[3., 3.],
            [3., 3.]], device='cuda:0')
    """
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        return torch.matmul(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def torch_attention(q, k, v, *, causal=False):
    """``softmax(q k^T / sqrt(d)) v`` with PyTorch's ``scaled_dot_product_attention`` (its
    flash-attention kernel for these shapes).

    >>> q = torch.ones(1, 1, 4, 8, device="cuda", dtype=torch.float16)  # doctest: +SKIP
    >>> torch_attention(q, q, q).shape  # doctest: +SKIP
    torch.Size([1, 1, 4, 8])
    """
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def triton_matmul(a, b, c, *, block_m=128, block_n=128, block_k=64, num_warps=4,
                  num_stages=3, group=8):
    """``c = a @ b`` with Triton (2-d, or 3-d batched), one ``block_m x block_n`` tile of
    ``c`` per program, programs in groups of ``group`` rows of tiles as the numba_tile
    kernel's blocks, float32 accumulation (float32 operands: products in tfloat32, as
    ``tl.dot`` does by default).

    >>> a = torch.ones(2, 3, device="cuda", dtype=torch.float16)  # doctest: +SKIP
    >>> c = torch.empty(2, 2, device="cuda", dtype=torch.float16)  # doctest: +SKIP
    >>> triton_matmul(a, a.T.contiguous(), c, block_m=16, block_n=16, block_k=16); c  # doctest: +SKIP
    tensor([[3., 3.],
            [3., 3.]], device='cuda:0', dtype=torch.float16)
    """
    batched = a.dim() == 3
    a3, b3, c3 = (x if batched else x.unsqueeze(0) for x in (a, b, c))
    batch, m, k = a3.shape
    n = b3.shape[2]
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    _matmul_kernel[grid](a3, b3, c3, m, n, k, *a3.stride(), *b3.stride(), *c3.stride(),
                         BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                         GROUP=group if not batched else 1, num_warps=num_warps,
                         num_stages=num_stages)


def triton_attention(q, k, v, out, *, causal=False, block_m=128, block_n=64, num_warps=4,
                     num_stages=3):
    """Flash-attention forward with Triton, written as the numba_tile kernel is: one
    ``block_m``-row block of queries of one head per program, online softmax in float32
    with base-2 exponentials. ``q, k, v, out``: ``(batch, heads, seq, head_dim)``,
    contiguous, ``seq`` a multiple of the blocks.

    >>> q = torch.ones(1, 1, 64, 16, device="cuda", dtype=torch.float16)  # doctest: +SKIP
    >>> out = torch.empty_like(q)  # doctest: +SKIP
    >>> triton_attention(q, q, q, out, block_m=64, block_n=64); float(out[0, 0, 5, 0])  # doctest: +SKIP
    1.0
    """
    batch, heads, seq, head_dim = q.shape
    scale = 1.4426950408889634 / head_dim ** 0.5
    grid = (triton.cdiv(seq, block_m), batch * heads)
    _attention_kernel[grid](q, k, v, out, scale, seq, HEAD_DIM=head_dim, BLOCK_M=block_m,
                            BLOCK_N=block_n, CAUSAL=causal, num_warps=num_warps,
                            num_stages=num_stages)


if triton is not None:
    @triton.jit
    def _matmul_kernel(a_ptr, b_ptr, c_ptr, m, n, k, a_batch, a_row, a_col, b_batch, b_row,
                       b_col, c_batch, c_row, c_col, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP: tl.constexpr):
        pid = tl.program_id(0)
        num_m, num_n = tl.cdiv(m, BLOCK_M), tl.cdiv(n, BLOCK_N)
        in_group = GROUP * num_n
        first_m = (pid // in_group) * GROUP
        group_rows = min(num_m - first_m, GROUP)
        rows = (first_m + (pid % in_group) % group_rows) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = ((pid % in_group) // group_rows) * BLOCK_N + tl.arange(0, BLOCK_N)
        depth = tl.arange(0, BLOCK_K)
        batch = tl.program_id(1)
        a_ptr += batch * a_batch
        b_ptr += batch * b_batch
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for start in range(0, k, BLOCK_K):
            kk = start + depth
            a = tl.load(a_ptr + rows[:, None] * a_row + kk[None, :] * a_col,
                        mask=(rows[:, None] < m) & (kk[None, :] < k), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * b_row + cols[None, :] * b_col,
                        mask=(kk[:, None] < k) & (cols[None, :] < n), other=0.0)
            acc = tl.dot(a, b, acc)  # float32 operands: tfloat32 products, Triton's default
        tl.store(c_ptr + batch * c_batch + rows[:, None] * c_row + cols[None, :] * c_col,
                 acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < m) & (cols[None, :] < n))

    @triton.jit
    def _attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq, HEAD_DIM: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
        block = tl.program_id(0)
        head_start = tl.program_id(1).to(tl.int64) * seq * HEAD_DIM
        rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
        dims = tl.arange(0, HEAD_DIM)
        keys = tl.arange(0, BLOCK_N)
        q = tl.load(q_ptr + head_start + rows[:, None] * HEAD_DIM + dims[None, :])
        m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
        l_i = tl.zeros((BLOCK_M,), tl.float32)
        acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
        end = (block + 1) * BLOCK_M if CAUSAL else seq
        for start in range(0, end, BLOCK_N):
            columns = start + keys
            k_t = tl.load(k_ptr + head_start + columns[None, :] * HEAD_DIM + dims[:, None])
            scores = tl.dot(q, k_t) * scale
            if CAUSAL:
                scores = tl.where(columns[None, :] <= rows[:, None], scores, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(scores, 1))
            p = tl.math.exp2(scores - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + head_start + columns[:, None] * HEAD_DIM + dims[None, :])
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
            m_i = m_new
        out = acc / l_i[:, None]
        tl.store(o_ptr + head_start + rows[:, None] * HEAD_DIM + dims[None, :],
                 out.to(o_ptr.dtype.element_ty))

    @triton.jit
    def _vector_add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < n
        a = tl.load(a_ptr + offsets, mask=inside)
        b = tl.load(b_ptr + offsets, mask=inside)
        tl.store(c_ptr + offsets, a + b, mask=inside)

    @triton.jit
    def _softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride,
                        BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        inside = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=inside, other=-float("inf"))
        x = x.to(tl.float32)
        numerator = tl.exp(x - tl.max(x, axis=0))
        y = numerator / tl.sum(numerator, axis=0)
        tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=inside)

    @triton.jit
    def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, x_row_stride, y_row_stride,
                           eps, BLOCK_N: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        inside = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=inside, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        centered = tl.where(inside, x - mean, 0.0)
        variance = tl.sum(centered * centered, axis=0) / n_cols
        w = tl.load(w_ptr + cols, mask=inside, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=inside, other=0.0).to(tl.float32)
        y = centered * tl.rsqrt(variance + eps) * w + b
        tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=inside)

    @triton.jit
    def _row_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, x_row_stride,
                        ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
        rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
        cols = tl.arange(0, BLOCK_N)
        total = tl.zeros((ROWS,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            inside = (rows[:, None] < n_rows) & (start + cols[None, :] < n_cols)
            tile = tl.load(x_ptr + rows[:, None] * x_row_stride + start + cols[None, :],
                           mask=inside, other=0.0)
            total += tl.sum(tile.to(tl.float32), axis=1)
        tl.store(out_ptr + rows, total, mask=rows < n_rows)
