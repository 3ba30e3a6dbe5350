"""Atomics (``ct.atomic_*`` on index tiles, ``RawArrayMemory.atomic_*_offset``) and raw
memory loads and stores: values against NumPy for every dtype each operation takes, repeated
indices (a counter, a histogram), a spin lock across tile blocks (a split-k matmul), masks,
bounds, memory orders and scopes, and the errors cuTile raises.

Arrays are views into larger buffers whose guard elements must stay untouched; old values are
scattered into a poisoned output.
"""

import re

import ml_dtypes
import numpy as np
import pytest

import numba_tile as ct
from conftest import relative_error
from test_gather_scatter import guarded, guards_untouched

WORDS = (np.int32, np.int64, np.uint32, np.uint64)
FLOATS = (np.float32, np.float64)
RMW = {"xchg": WORDS + FLOATS, "add": WORDS + FLOATS + (np.float16, ml_dtypes.bfloat16),
       "max": WORDS, "min": WORDS, "and": WORDS, "or": WORDS, "xor": WORDS}
TILE, BLOCKS = 64, 3
N = TILE * BLOCKS


def _reference(op, x, update):
    if op == "xchg":
        return update.astype(x.dtype)
    if op == "add":
        if x.dtype.itemsize == 2:  # the exact sum rounded once
            return (x.astype(np.float64) + update.astype(np.float64)).astype(x.dtype)
        with np.errstate(over="ignore"):
            return (x + update.astype(x.dtype)).astype(x.dtype)
    return {"max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
            "xor": np.bitwise_xor}[op](x, update.astype(x.dtype))


def _random(rng, dtype, n):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -2**40), min(info.max, 2**40), n,
                            dtype=np.int64 if dtype.kind == "i" or dtype.itemsize < 8
                            else np.uint64).astype(dtype)
    return rng.uniform(-8, 8, n).astype(dtype)


@ct.kernel
def read_modify_write(x, y, old_out, T: ct.Constant[int], OP: ct.Constant[str],
                      RAW: ct.Constant[bool]):
    offsets = ct.arange(T, dtype=ct.int64) + ct.bid(0) * T
    v = ct.gather(y, offsets)
    m = x.get_raw_memory()
    if OP == "xchg":
        old = m.atomic_xchg_offset(offsets, v) if RAW else ct.atomic_xchg(x, offsets, v)
    elif OP == "add":
        old = m.atomic_add_offset(offsets, v) if RAW else ct.atomic_add(x, offsets, v)
    elif OP == "max":
        old = m.atomic_max_offset(offsets, v) if RAW else ct.atomic_max(x, offsets, v)
    elif OP == "min":
        old = m.atomic_min_offset(offsets, v) if RAW else ct.atomic_min(x, offsets, v)
    elif OP == "and":
        old = m.atomic_and_offset(offsets, v) if RAW else ct.atomic_and(x, offsets, v)
    elif OP == "or":
        old = m.atomic_or_offset(offsets, v) if RAW else ct.atomic_or(x, offsets, v)
    else:
        old = m.atomic_xor_offset(offsets, v) if RAW else ct.atomic_xor(x, offsets, v)
    ct.scatter(old_out, offsets, old)


@pytest.mark.parametrize("raw", [False, True], ids=["indices", "raw"])
@pytest.mark.parametrize("op,dtype", [(op, t) for op, types in RMW.items() for t in types],
                         ids=lambda v: getattr(v, "__name__", v))
def test_read_modify_write(run_kernel, rng, op, dtype, raw):
    buffer, x = guarded((N,), dtype, 77)
    x[...] = _random(rng, dtype, N)
    start = x.copy()
    y = _random(rng, dtype, N)
    old_buffer, old = guarded((N,), dtype, 55)
    run_kernel(read_modify_write, (BLOCKS,), (x, y, old, TILE, op, raw))
    np.testing.assert_array_equal(old.view(np.uint8), start.view(np.uint8))
    np.testing.assert_array_equal(x.view(np.uint8), _reference(op, start, y).view(np.uint8))
    assert guards_untouched(buffer, (N,), 77) and guards_untouched(old_buffer, (N,), 55)


@ct.kernel
def compare_and_swap(x, expected, desired, old_out, T: ct.Constant[int]):
    offsets = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T
    old = ct.atomic_cas(x, offsets, ct.gather(expected, offsets), ct.gather(desired, offsets))
    ct.scatter(old_out, offsets, old)


@pytest.mark.parametrize("dtype", WORDS + FLOATS, ids=lambda t: t.__name__)
def test_compare_and_swap_swaps_where_equal(run_kernel, rng, dtype):
    buffer, x = guarded((N,), dtype, 77)
    x[...] = _random(rng, dtype, N)
    start = x.copy()
    expected = np.where(rng.random(N) < 0.5, start, _random(rng, dtype, N)).astype(dtype)
    desired = _random(rng, dtype, N)
    old = np.full(N, 55, dtype)
    run_kernel(compare_and_swap, (BLOCKS,), (x, expected, desired, old, TILE))
    np.testing.assert_array_equal(old, start)
    np.testing.assert_array_equal(x, np.where(start == expected, desired, start))
    assert guards_untouched(buffer, (N,), 77)


# -- repeated indices ---------------------------------------------------------------------------
@ct.kernel
def take_a_ticket(counter, tickets):
    ticket = ct.atomic_add(counter, 0, 1)
    ct.scatter(tickets, ct.bid(0), ticket)


def test_a_scalar_atomic_runs_once_per_block(run_kernel):
    """Every block adds 1 once, whatever the number of threads holding the 0-d result; the
    old values each block sees are 0..blocks-1 in some order, and every thread of a block
    sees the same one (the scatter would store a replica's otherwise)."""
    counter, tickets = np.zeros(1, np.int32), np.full(100, -1, np.int32)
    run_kernel(take_a_ticket, (100,), (counter, tickets))
    assert counter[0] == 100
    np.testing.assert_array_equal(np.sort(tickets), np.arange(100))


@ct.kernel
def histogram(values, bins, T: ct.Constant[int]):
    offsets = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T
    # values past the end are masked off by gather's padding (-1): outside the bins
    ct.atomic_add(bins, ct.gather(values, offsets, padding_value=-1), 1,
                  memory_order=ct.MemoryOrder.RELAXED)


def test_histogram_with_repeated_and_outside_indices(run_kernel, rng):
    values = rng.integers(-3, 40, 1000).astype(np.int32)  # some below 0, some past 31
    bins = np.zeros(32, np.int32)
    run_kernel(histogram, (8,), (values, bins, 128))
    inside = values[(values >= 0) & (values < 32)]
    np.testing.assert_array_equal(bins, np.bincount(inside, minlength=32))


@ct.kernel
def add_rows(table, rows, update, T: ct.Constant[int], D: ct.Constant[int]):
    """A 2-d atomic: rows (T, 1) against columns (1, D), float32 updates (T, D)."""
    r = ct.reshape(ct.gather(rows, ct.arange(T, dtype=ct.int32)), (T, 1))
    c = ct.reshape(ct.arange(D, dtype=ct.int32), (1, D))
    value = ct.load(update, (0, 0), (T, D))
    ct.atomic_add(table, (r, c), value)


def test_two_dimensional_indices_with_repeats(run_kernel, rng):
    table = rng.standard_normal((8, 16)).astype(np.float32)
    rows = rng.integers(0, 8, 32).astype(np.int32)
    update = rng.standard_normal((32, 16)).astype(np.float32)
    expected = table.astype(np.float64)
    np.add.at(expected, rows, update.astype(np.float64))
    run_kernel(add_rows, (1,), (table, rows, update, 32, 16))
    assert relative_error(table, expected) < 1e-5


@ct.kernel
def add_shifted_rows(table, rows, update, shift, T: ct.Constant[int], D: ct.Constant[int]):
    """:func:`add_rows` at columns ``shift + (0..D)``, indices -1 and past the end skipped."""
    r = ct.reshape(ct.gather(rows, ct.arange(T, dtype=ct.int32)), (T, 1))
    c = ct.reshape(ct.arange(D, dtype=ct.int32) + shift, (1, D))
    ct.atomic_add(table, (r, c), ct.load(update, (0, 0), (T, D)),
                  memory_order=ct.MemoryOrder.RELAXED)


@pytest.mark.parametrize("columns,shift", [(16, 0), (13, 0), (16, 1), (16, 5), (40, 4)])
def test_runs_of_contiguous_adds_misaligned_or_partly_outside(run_kernel, rng, columns,
                                                              shift):
    """Whole aligned runs of four go as one vector atomic on sm_90; misaligned runs (odd
    row lengths, shifted columns) and runs that leave the array go element by element."""
    table = rng.standard_normal((8, columns)).astype(np.float32)
    rows = rng.integers(-1, 9, 32).astype(np.int32)
    update = rng.standard_normal((32, 16)).astype(np.float32)
    expected = table.astype(np.float64)
    for i, row in enumerate(rows):
        for j in range(16):
            if 0 <= row < 8 and shift + j < columns:
                expected[row, shift + j] += update[i, j]
    run_kernel(add_shifted_rows, (1,), (table, rows, update, shift, 32, 16))
    assert relative_error(table, expected) < 1e-5


# -- a lock across tile blocks ------------------------------------------------------------------
@ct.kernel
def split_k_matmul(A, B, C, locks, TM: ct.Constant[int], TN: ct.Constant[int],
                   TK: ct.Constant[int], SPLIT: ct.Constant[int]):
    """``C += A @ B``: each of ``SPLIT`` blocks per output tile sums every SPLIT-th k tile,
    then adds its partial sum into C inside a critical section guarded by a lock."""
    bm, bn, part = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(part, ct.num_tiles(A, axis=1, shape=(TM, TK)), SPLIT):
        acc = ct.mma(ct.load(A, (bm, k), (TM, TK)), ct.load(B, (k, bn), (TK, TN)), acc)
    lock = bm * ct.num_blocks(1) + bn
    while ct.atomic_cas(locks, lock, 0, 1, memory_order=ct.MemoryOrder.ACQUIRE) == 1:
        pass
    ct.store(C, (bm, bn), ct.load(C, (bm, bn), (TM, TN)) + acc)
    ct.atomic_xchg(locks, lock, 0, memory_order=ct.MemoryOrder.RELEASE)


def test_split_k_matmul_serialized_by_a_spin_lock(run_kernel, rng):
    a = rng.standard_normal((64, 256)).astype(np.float16)
    b = rng.standard_normal((256, 64)).astype(np.float16)
    c = rng.standard_normal((64, 64)).astype(np.float32)
    expected = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    locks = np.zeros(4, np.int32)
    run_kernel(split_k_matmul, (2, 2, 8), (a, b, c, locks, 32, 32, 32, 8))
    assert relative_error(c, expected) < 1e-3
    np.testing.assert_array_equal(locks, 0)


# -- bounds, masks, orders ----------------------------------------------------------------------
@ct.kernel
def outside_indices(x, old_out):
    i = ct.arange(8, dtype=ct.int32) * 3 - 4  # -4, -1, 2, 5, 8, 11, 14, 17
    ct.store(old_out, (0,), ct.atomic_cas(x, i, 0, 9))
    ct.store(old_out, (1,), ct.atomic_add(x, i, 1, memory_scope=ct.MemoryScope.BLOCK))


def test_indices_outside_the_array_touch_nothing(run_kernel):
    buffer, x = guarded((12,), np.int32, 77)
    x[...] = 0
    old = np.full((2, 8), 55, np.int32)
    run_kernel(outside_indices, (1,), (x, old.reshape(-1)))
    inside = np.array([2, 5, 8, 11])
    np.testing.assert_array_equal(x[inside], 10)
    assert (np.delete(x, inside) == 0).all() and guards_untouched(buffer, (12,), 77)
    # outside: cas returns expected (0), the others 0
    np.testing.assert_array_equal(old, [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 9, 9, 9, 9, 0, 0]])


@ct.kernel
def masked_raw(x, out, T: ct.Constant[int]):
    memory = x.get_raw_memory()
    offsets = ct.arange(T, dtype=ct.int64)
    even = offsets % 2 == 0
    old = memory.atomic_cas_offset(offsets, 0, 5, mask=offsets < T // 2,
                                   memory_order=ct.MemoryOrder.RELAXED,
                                   memory_scope=ct.MemoryScope.SYS)
    memory.atomic_or_offset(offsets, ct.int32(16), mask=even)
    loaded = memory.load_offset(offsets + 1, mask=offsets < T - 1, padding_value=-7)
    out.get_raw_memory().store_offset(offsets, old * 100 + loaded, mask=offsets != 3)


def test_raw_memory_masks(run_kernel):
    x = np.zeros(16, np.int32)
    x[1] = 3
    out = np.full(16, 55, np.int32)
    run_kernel(masked_raw, (1,), (x, out, 16))
    after = np.where(np.arange(16) < 8, 5, 0)
    after[1] = 3
    after = np.where(np.arange(16) % 2 == 0, after | 16, after)
    np.testing.assert_array_equal(x, after)
    old = np.where(np.arange(16) < 8, 0, 0)
    old[1] = 3
    loaded = np.append(after[1:], -7)
    expected = old * 100 + loaded
    expected[3] = 55
    np.testing.assert_array_equal(out, expected)


@ct.kernel
def raw_on_a_strided_view(x, out):
    """Offsets count elements from the view's first one, through the memory between rows."""
    memory = x.get_raw_memory()
    ct.store(out, (0,), memory.load_offset(ct.arange(8, dtype=ct.int32) * 2))
    memory.store_offset(1, ct.float32(-1.0))


def test_raw_offsets_run_through_the_memory_of_a_strided_view(run_kernel):
    base = np.arange(64, dtype=np.float32).reshape(8, 8)
    view = base[2:6, 1:5]  # first element 17; rows 8 apart
    out = np.full(8, np.nan, np.float32)
    run_kernel(raw_on_a_strided_view, (1,), (view, out))
    np.testing.assert_array_equal(out, 17 + 2 * np.arange(8))
    assert base[2, 2] == -1.0
    assert (np.delete(base.reshape(-1), 18) == np.delete(np.arange(64), 18)).all()


@ct.kernel
def raw_dtype(x):
    memory = x.get_raw_memory()
    ct.static_assert(memory.dtype == x.dtype)
    ct.scatter(x, 0, ct.static_eval(memory.dtype == x.dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float64],
                         ids=lambda t: t.__name__)
def test_raw_memory_has_the_arrays_dtype(run_kernel, dtype):
    x = np.zeros(4, dtype)
    run_kernel(raw_dtype, (1,), (x,))
    assert x[0] == 1


@ct.kernel
def raw_outside(x):
    x.get_raw_memory().load_offset(ct.arange(8, dtype=ct.int32) + 10)


def test_the_interpreter_names_a_raw_offset_outside_the_memory():
    with ct.interpret(), pytest.raises(ct.TileValueError, match="offset 16 is outside"):
        ct.launch(0, (1,), raw_outside, (np.zeros(16, np.int32),))


@pytest.mark.parametrize("order", [ct.MemoryOrder.RELAXED, ct.MemoryOrder.ACQUIRE,
                                   ct.MemoryOrder.RELEASE, ct.MemoryOrder.ACQ_REL])
@pytest.mark.parametrize("scope", [ct.MemoryScope.BLOCK, ct.MemoryScope.DEVICE,
                                   ct.MemoryScope.SYS])
def test_every_order_and_scope(run_kernel, order, scope):
    @ct.kernel
    def count(x, T: ct.Constant[int]):
        ct.atomic_add(x, ct.arange(T, dtype=ct.int32) % 4, 1, memory_order=order,
                      memory_scope=scope)
    x = np.zeros(4, np.int32)
    run_kernel(count, (5,), (x, 64))
    np.testing.assert_array_equal(x, 80)


# -- TiledView.atomic_store_<op> -------------------------------------------------------------------
def _tiles(x, TM, TN):
    """The tiled view and the tile indices every block updates: its row of tiles (a partial
    last one too), so that the blocks' updates meet on each element."""
    view = x.tiled_view((TM, TN))
    return view, ct.bid(0) % view.num_tiles(0), view.num_tiles(1)


@ct.kernel
def store_add(x, u, TM: ct.Constant[int], TN: ct.Constant[int]):
    view, i, n = _tiles(x, TM, TN)
    for j in range(n):
        view.atomic_store_add((i, j), ct.load(u, (0, 0), (TM, TN)))


@ct.kernel
def store_max(x, u, TM: ct.Constant[int], TN: ct.Constant[int]):
    view, i, n = _tiles(x, TM, TN)
    for j in range(n):
        view.atomic_store_max((i, j), ct.load(u, (0, 0), (TM, TN)))


@ct.kernel
def store_min(x, u, TM: ct.Constant[int], TN: ct.Constant[int]):
    view, i, n = _tiles(x, TM, TN)
    for j in range(n):
        view.atomic_store_min((i, j), ct.load(u, (0, 0), (TM, TN)))


@ct.kernel
def store_and(x, u, TM: ct.Constant[int], TN: ct.Constant[int]):
    view, i, n = _tiles(x, TM, TN)
    for j in range(n):
        view.atomic_store_and((i, j), ct.load(u, (0, 0), (TM, TN)))


@ct.kernel
def store_or(x, u, TM: ct.Constant[int], TN: ct.Constant[int]):
    view, i, n = _tiles(x, TM, TN)
    for j in range(n):
        view.atomic_store_or((i, j), ct.load(u, (0, 0), (TM, TN)))


@ct.kernel
def store_xor(x, u, TM: ct.Constant[int], TN: ct.Constant[int]):
    view, i, n = _tiles(x, TM, TN)
    for j in range(n):
        view.atomic_store_xor((i, j), ct.load(u, (0, 0), (TM, TN)))


_update_tiles = {"add": store_add, "max": store_max, "min": store_min, "and": store_and,
                 "or": store_or, "xor": store_xor}


@pytest.mark.parametrize("op,dtype", [("add", np.float32), ("add", np.int64),
                                      ("add", np.float64), ("max", np.int32),
                                      ("min", np.uint64), ("and", np.int32), ("or", np.uint32),
                                      ("xor", np.int64)])
def test_view_atomic_store(run_kernel, rng, op, dtype):
    blocks = 6
    buffer, x = guarded((10, 20), dtype, 17)
    x[...] = _random(rng, dtype, (10, 20))
    u = _random(rng, dtype, (4, 8))
    expected = x.copy()
    for b in range(blocks):
        row = (b % 3) * 4
        for j in range(3):
            part = expected[row:row + 4, j * 8:j * 8 + 8]
            part[...] = _reference(op, part, u[:part.shape[0], :part.shape[1]])
    run_kernel(_update_tiles[op], (blocks,), (x, u, 4, 8))
    if np.dtype(dtype).kind == "f":
        assert relative_error(x, expected) < 1e-12
    else:
        np.testing.assert_array_equal(x, expected)
    assert guards_untouched(buffer, (10, 20), 17)


@ct.kernel
def count_into_a_view(x):
    x.tiled_view((4,)).atomic_store_add((1,), 1)


def test_view_atomic_store_of_a_scalar_from_every_block(run_kernel):
    x = np.zeros(8, np.int32)
    run_kernel(count_into_a_view, (5,), (x,))
    np.testing.assert_array_equal(x, [0, 0, 0, 0, 5, 5, 5, 5])


# -- errors -------------------------------------------------------------------------------------
def _rejects(run_kernel, body, array, error, match):
    kernel = ct.kernel(body)
    with pytest.raises(error, match=match):
        run_kernel(kernel, (1,), (array,))


@pytest.mark.parametrize("body,dtype,error,match", [
    (lambda x: ct.atomic_and(x, 0, ct.float32(1.0)), np.float32, ct.TileTypeError,
     "Unsupported array dtype: float32"),
    (lambda x: ct.atomic_max(x, 0, 1.0), np.float32, ct.TileTypeError,
     "Unsupported array dtype: float32"),
    (lambda x: ct.atomic_xchg(x, 0, 1), np.int16, ct.TileTypeError,
     "Unsupported array dtype: int16"),
    (lambda x: ct.atomic_or(x, 0, ct.int64(1)), np.int32, ct.TileTypeError,
     r"update dtype \(int64\) to exactly match the target dtype \(int32\)"),
    (lambda x: ct.atomic_add(x, 0, ct.float32(1.0)), np.int32, ct.TileTypeError,
     "cannot implicitly cast float32"),
    (lambda x: ct.atomic_cas(x, 0, 0, 1, memory_order=ct.MemoryOrder.WEAK), np.int32,
     ct.TileTypeError, "Invalid memory order for tile_atomic_cas"),
    (lambda x: ct.atomic_add(x, 0, 1, memory_order=ct.MemoryOrder.WEAK), np.int32,
     ct.TileTypeError, "Invalid memory order for tile_atomic_rmw"),
    (lambda x: ct.atomic_add(x, 0, 1, memory_scope=ct.MemoryScope.NONE), np.int32,
     ct.TileTypeError, "tile_atomic_rmw with ACQ_REL memory ordering requires a memory scope"),
    (lambda x: ct.atomic_add(x, ct.full((4,), 1.0, ct.float32), 1), np.int32,
     ct.TileTypeError, "indices must be integer"),
    (lambda x: ct.atomic_add(x, ct.arange(4, dtype=ct.int32), ct.full((8,), 1, ct.int32)),
     np.int32, ct.TileTypeError, "not broadcastable"),
    (lambda x: x.get_raw_memory().atomic_add_offset(0.5, 1), np.int32, ct.TileTypeError,
     "offset of atomic_add_offset"),
    (lambda x: x.get_raw_memory().atomic_cas_offset(0, 0, 1, mask=1), np.int32,
     ct.TileTypeError, "mask of atomic_cas_offset"),
    (lambda x: x.get_raw_memory().load_offset(0, padding_value=0.5), np.int32,
     ct.TileTypeError, "cannot implicitly cast"),
    (lambda x: x.tiled_view((4,)).atomic_store_max((0,), 1.0), np.float32, ct.TileTypeError,
     r"Unsupported tiled view dtype: float32 \(TiledView.atomic_store_max\(\) takes"),
    (lambda x: x.tiled_view((4,)).atomic_store_xor((0,), ct.full((4,), 1, ct.int64)), np.int32,
     ct.TileTypeError, r"update dtype \(int64\) to exactly match"),
    (lambda x: x.tiled_view((4,)).atomic_store_add((0,), ct.full((8,), 1, ct.int32)), np.int32,
     ct.TileTypeError, "not broadcastable"),
    (lambda x: x.tiled_view((4,)).atomic_store_add((0, 0), 1), np.int32, ct.TileTypeError,
     "Index size 2 does not match the tiled view rank 1"),
], ids=range(17))
def test_errors(run_kernel, body, dtype, error, match):
    _rejects(run_kernel, body, np.zeros(8, dtype), error, match)


@ct.kernel
def bfloat16_add(x):
    ct.atomic_add(x, 0, ct.bfloat16(1.0))


def test_bfloat16_add_needs_sm_90():
    x = np.zeros(4, ml_dtypes.bfloat16)
    with pytest.raises(ct.TileUnsupportedFeatureError, match="needs compute capability 9.0"):
        ct.compile(bfloat16_add, (x,), arch="sm_80")
    ct.compile(bfloat16_add, (x,), arch="sm_90")


def _instructions(ptx, name):
    return [line for line in ptx.splitlines() if re.search(rf"\b{name}\.", line)]


def test_an_atomic_whose_old_values_are_unused_is_a_reduction():
    """PTX ``red`` where nothing reads the old values (the benchmark's histogram, a 2-d
    float add of vector runs), ``atom`` where they are read (or stored)."""
    from numba_tile.bench.memory_kernels import histogram as counted_in_copies
    from numba_tile.bench.memory_kernels import scatter_add_rows
    values, copies = np.zeros(1 << 16, np.int32), np.zeros((4, 32), np.int32)
    ptx = ct.compile(counted_in_copies, (values, copies, 4096), arch="sm_90").ptx
    assert _instructions(ptx, "red") and not _instructions(ptx, "atom"), ptx
    ptx = ct.compile(scatter_add_rows, (np.zeros((8, 1024), np.float32), np.zeros(4, np.int32),
                                        np.zeros((4, 1024), np.float32), 1, 1024),
                     arch="sm_90").ptx
    assert any(".v4.f32" in line for line in _instructions(ptx, "red")), ptx
    assert not _instructions(ptx, "atom"), ptx
    x = np.zeros(N, np.int32)
    ptx = ct.compile(read_modify_write, (x, x, x, TILE, "add", False), arch="sm_90").ptx
    assert _instructions(ptx, "atom") and not _instructions(ptx, "red"), ptx


@pytest.mark.parametrize("line,expected", [
    ("atom.relaxed.gpu.add.u32 %r1, [%rd1], %r2;", "red.relaxed.gpu.add.u32 [%rd1], %r2;"),
    ("atom.release.sys.max.s64 %rd3, [%rd1], %rd2;", "red.release.sys.max.s64 [%rd1], %rd2;"),
    ("atom.relaxed.gpu.add.noftz.bf16 %rs1, [%rd1], %rs2;",
     "red.relaxed.gpu.add.noftz.bf16 [%rd1], %rs2;"),
    ("atom.relaxed.gpu.global.add.v4.f32 {%f1,%f2,%f3,%f4}, [ga], {%f5,%f6,%f7,%f8};",
     "red.relaxed.gpu.global.add.v4.f32 [ga], {%f5,%f6,%f7,%f8};"),
    # red has neither acquire orders nor exchanges
    ("atom.acquire.gpu.add.u32 %r1, [%rd1], %r2;", None),
    ("atom.acq_rel.gpu.or.b32 %r1, [%rd1], %r2;", None),
    ("atom.relaxed.gpu.exch.b32 %r1, [%rd1], %r2;", None),
    ("atom.relaxed.gpu.cas.b32 %r1, [%rd1], %r2, %r3;", None),
])
def test_the_rewrite_of_unused_atomics(line, expected):
    from numba_tile.compiler.ptx_rewrites import unused_atomics_as_reductions
    function = ".visible .entry k()\n{\n\t%s\n\tst.u32 [%%rd9], %%r10;\n}\n"
    assert unused_atomics_as_reductions(function % line) == function % (expected or line)
    # a read of one of the old values (%r1, %f4 ... not %r10, %f40) keeps the atom
    read = "mov.b32 %%r11, %s;" % re.search(r"(%\w+)[,}]", line.replace("{", "")).group(1)
    kept = ".visible .entry k()\n{\n\t%s\n\t%s\n}\n" % (line, read)
    assert unused_atomics_as_reductions(kept) == kept
