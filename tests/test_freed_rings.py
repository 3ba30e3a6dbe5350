"""Stores after the last use of the rings go through the stages' shared memory
(:mod:`numba_tile.compiler.frontend.freed_rings`); stores that a ring's use can follow keep
to the scratch buffer.

Most kernels give ``num_stages=7`` to 128 x 128 x 64 float16 tiles: the ring takes 225 of
the 227 KiB of sm_90, too little for even the narrowest block of a store through the
scratch buffer, so a store goes through shared memory (``ld.shared.v4`` in the PTX) only
where it may take the stages. Values are compared with NumPy in float64 in every mode (on
the GPU where there is one); outputs are poisoned and guarded.
"""

import collections
import inspect

import numpy as np
import pytest

import numba_tile as ct
from conftest import guarded, guards_untouched, relative_error
from numba_tile.compiler import kernel_compiler
from numba_tile.compiler.frontend import freed_rings

TM = TN = 128
TK = 64


@ct.function
def _product(A, B, row, column, depth, TM, TN, TK):
    """``A[row block, :depth] @ B[:depth, column block]`` in float32, a k-loop."""
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(depth // TK):
        acc = ct.mma(ct.load(A, (row, k), (TM, TK)), ct.load(B, (k, column), (TK, TN)), acc)
    return acc


@ct.kernel(num_stages=7, num_warps=8)
def product_then_store(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                       TK: ct.Constant[int]):
    """``C = A @ B``, stored once the k-loop is over."""
    acc = _product(A, B, ct.bid(0), ct.bid(1), A.shape[1], TM, TN, TK)
    ct.store(C, (ct.bid(0), ct.bid(1)), acc.astype(C.dtype))


@ct.kernel(num_stages=7, num_warps=8)
def tiles_of_a_persistent_block(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int],
                                TK: ct.Constant[int]):
    """``C = A @ B``, one block taking every tile of ``C`` in turn: the next tile's copies
    follow each store."""
    columns = ct.cdiv(C.shape[1], TN)
    for tile in range(ct.cdiv(C.shape[0], TM) * columns):
        acc = _product(A, B, tile // columns, tile % columns, A.shape[1], TM, TN, TK)
        ct.store(C, (tile // columns, tile % columns), acc.astype(C.dtype))


@ct.kernel(num_stages=3, num_warps=8)
def store_between_two_loops(A, B, C, D, TM: ct.Constant[int], TN: ct.Constant[int],
                            TK: ct.Constant[int]):
    """``C = A @ B`` stored before a second k-loop computes ``D = A @ B`` again."""
    acc = _product(A, B, ct.bid(0), ct.bid(1), A.shape[1], TM, TN, TK)
    ct.store(C, (ct.bid(0), ct.bid(1)), acc.astype(C.dtype))
    again = _product(A, B, ct.bid(0), ct.bid(1), A.shape[1], TM, TN, TK)
    ct.store(D, (ct.bid(0), ct.bid(1)), again.astype(D.dtype))


@ct.kernel(num_stages=7, num_warps=8)
def product_of_first_columns(A, B, C, depth, TM: ct.Constant[int], TN: ct.Constant[int],
                             TK: ct.Constant[int]):
    """``C = A[:, :depth] @ B[:depth]`` with ``depth`` a multiple of ``TK``, 0 included (the
    loop runs no iteration: ``C`` is zero)."""
    acc = _product(A, B, ct.bid(0), ct.bid(1), depth, TM, TN, TK)
    ct.store(C, (ct.bid(0), ct.bid(1)), acc.astype(C.dtype))


def _operands(rng, depth=3 * TK):
    a = rng.standard_normal((2 * TM, depth)).astype(np.float16)
    b = rng.standard_normal((depth, 2 * TN)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _compiled(kernel, args, monkeypatch, rewrite=True):
    """``(PTX, dynamic shared memory, lines of the stores rewritten)`` of ``kernel`` for
    sm_90, compiled anew (a copy of it, the disk cache off and the lowered kernels kept in
    memory out of sight: they do not know whether the rewrite was left out);
    ``rewrite=False``: with the pass's rewrite left out."""
    lines = set()

    def rewrite_call(block, statement, function):
        lines.add(statement.loc.line)
        if rewrite:
            call_instead(block, statement, function)
    call_instead = freed_rings._call_instead
    with monkeypatch.context() as patches:
        patches.setenv("NUMBA_TILE_CACHE", "0")
        patches.setattr(kernel_compiler, "_LOWERED", collections.OrderedDict())
        patches.setattr(freed_rings, "_call_instead", rewrite_call)
        compiled = ct.compile(kernel.replace_hints(), args, arch="sm_90")
    return compiled.ptx, compiled.dynamic_shared_bytes, lines


def _line_of(kernel, text):
    """The line of ``text`` in ``kernel``'s source file (its last occurrence)."""
    source, first = inspect.getsourcelines(kernel.fn)
    return first + max(i for i, line in enumerate(source) if text in line)


def test_store_after_the_loop_takes_the_idle_stages(rng, monkeypatch):
    """Without the rewrite the ring leaves no room and the tile leaves from registers; with
    it the tile goes through the stages, and the launch asks for no more shared memory."""
    a, b, _ = _operands(rng)
    args = (a, b, np.zeros((2 * TM, 2 * TN), np.float16), TM, TN, TK)
    plain_ptx, plain_shared, _ = _compiled(product_then_store, args, monkeypatch,
                                           rewrite=False)
    ptx, shared, lines = _compiled(product_then_store, args, monkeypatch)
    assert lines == {_line_of(product_then_store, "ct.store(")}
    assert "ld.shared.v4" not in plain_ptx
    # 128 x 128 halves in 16-byte vectors, 8 a thread of 256
    assert ptx.count("ld.shared.v4") == ptx.count("st.global.v4") == 8
    assert shared == plain_shared


def test_store_of_a_persistent_block_keeps_to_the_scratch_buffer(rng, monkeypatch):
    """The next tile's copies follow the store: it leaves from registers."""
    a, b, _ = _operands(rng)
    ptx, _, lines = _compiled(tiles_of_a_persistent_block, (
        a, b, np.zeros((2 * TM, 2 * TN), np.float16), TM, TN, TK), monkeypatch)
    assert "cp.async.bulk.tensor" in ptx  # a ring the TMA fills
    assert lines == set()
    assert "ld.shared.v4" not in ptx


def test_store_before_a_second_loop_keeps_to_the_scratch_buffer(rng, monkeypatch):
    """Of the two stores, the one after the last loop alone may take the stages."""
    a, b, _ = _operands(rng)
    c, d = np.zeros((2 * TM, 2 * TN), np.float16), np.zeros((2 * TM, 2 * TN), np.float16)
    _, _, lines = _compiled(store_between_two_loops, (a, b, c, d, TM, TN, TK), monkeypatch)
    assert lines == {_line_of(store_between_two_loops, "ct.store(D")}


@pytest.mark.parametrize("depth", [0, TK, 3 * TK])
def test_values_of_a_store_after_the_loop(run_kernel, rng, depth):
    a, b, expected = _operands(rng, 3 * TK)
    expected = a[:, :depth].astype(np.float64) @ b[:depth].astype(np.float64)
    buffer, c = guarded((2 * TM, 2 * TN), np.float16)
    run_kernel(product_of_first_columns, (2, 2), (a, b, c, depth, TM, TN, TK))
    assert relative_error(c, expected) < 2e-3
    assert guards_untouched(buffer, c.shape)


def test_values_of_a_persistent_block(run_kernel, rng):
    a, b, expected = _operands(rng)
    buffer, c = guarded((2 * TM, 2 * TN), np.float16)
    run_kernel(tiles_of_a_persistent_block, (1,), (a, b, c, TM, TN, TK))
    assert relative_error(c, expected) < 2e-3
    assert guards_untouched(buffer, c.shape)


def test_values_of_a_store_between_two_loops(run_kernel, rng):
    a, b, expected = _operands(rng)
    (c_buffer, c), (d_buffer, d) = (guarded((2 * TM, 2 * TN), np.float16) for _ in range(2))
    run_kernel(store_between_two_loops, (2, 2), (a, b, c, d, TM, TN, TK))
    for buffer, out in ((c_buffer, c), (d_buffer, d)):
        assert relative_error(out, expected) < 2e-3
        assert guards_untouched(buffer, out.shape)
