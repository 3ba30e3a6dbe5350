"""cuTile's rules of tile indices and sub-tiles (issue 53, items 6, 7 and 10), in every mode:
the ``index`` of a load, a store, ``extract`` and ``insert`` holds signed integers; ``extract``
of shape ``()`` is the element at ``index`` (a 0-d tile); ``insert`` takes a 0-d tile or a
scalar as a unit sub-tile, of the tile's own dtype; loads and stores take the memory orders and
scopes cuTile's operations do. The messages are cuTile's."""

import numpy as np
import pytest

import numba_tile as ct
from bad_inputs import statement_kernel

ORDER, SCOPE = ct.MemoryOrder, ct.MemoryScope
X = np.arange(1, 33, dtype=np.float32).reshape(4, 8)


def _kernel(expression):
    """A kernel storing ``expression(t)`` of the (4, 8) tile of ``x`` into ``out``."""
    @ct.kernel
    def kernel(x, out):
        t = ct.load(x, (0, 0), (4, 8))
        ct.store(out, (0, 0), ct.full((4, 8), 0, ct.float32) + expression(t))
    return kernel


def _poisoned():
    return np.full((4, 8), np.nan, np.float32)


def test_extract_of_shape_nothing_is_the_element(run_kernel):
    out = _poisoned()
    run_kernel(_kernel(lambda t: ct.extract(t, (3, 2), ())), (1,), (X, out))
    np.testing.assert_array_equal(out, np.full((4, 8), X[3, 2]))


@pytest.mark.parametrize("value", ["zero-d tile", "python float", "scalar"])
def test_insert_of_one_element_is_a_unit_subtile(run_kernel, value):
    make = {"zero-d tile": lambda t: ct.full((), -5.0, ct.float32),
            "python float": lambda t: -5.0,
            "scalar": lambda t: ct.float32(-5.0)}[value]
    out = _poisoned()
    run_kernel(_kernel(lambda t: ct.insert(t, (1, 6), make(t))), (1,), (X, out))
    expected = X.copy()
    expected[1, 6] = -5.0
    np.testing.assert_array_equal(out, expected)


def test_insert_method_of_a_subtile(run_kernel):
    out = _poisoned()
    run_kernel(_kernel(lambda t: t.insert((1, 1), ct.full((2, 4), 7.0, ct.float32))), (1,),
               (X, out))
    expected = X.copy()
    expected[2:4, 4:8] = 7.0
    np.testing.assert_array_equal(out, expected)


REFUSED = [
    ("insert int32 into float32", lambda t: ct.insert(t, (0, 0), ct.full((2, 2), 1, ct.int32)),
     "Cannot insert a tile of dtype int32 into a tile of dtype float32"),
    ("insert python int into float32", lambda t: ct.insert(t, (0, 0), 1),
     "Cannot insert a tile of dtype int32 into a tile of dtype float32"),
    ("insert rank 1 into rank 2", lambda t: ct.insert(t, (0, 0), ct.full((2,), 1.0, ct.float32)),
     "Value rank 1 does not match the tile rank 2"),
    ("insert index outside", lambda t: ct.insert(t, (2, 0), ct.full((2, 8), 1.0, ct.float32)),
     r"Index 2 out of bounds at dimension #0: valid range is \[0, 2\) in tile space \(input "
     r"shape \(4, 8\), value shape \(2, 8\)\)"),
    ("extract index size", lambda t: ct.extract(t, (0,), (2, 2)),
     "Index size 1 does not match the tile rank 2"),
    ("extract shape rank", lambda t: ct.extract(t, (0, 0), (2,)),
     r'Invalid argument "shape" of extract\(\): Expected shape length to be 2, got 1'),
    ("extract larger than the tile", lambda t: ct.extract(t, (0, 0), (8, 8)),
     r"Input shape \(4, 8\) is not divisible by result shape \(8, 8\) at dimension #0"),
    ("extract negative index", lambda t: ct.extract(t, (0, -1), (2, 2)),
     r"Index -1 out of bounds at dimension #1: valid range is \[0, 4\)"),
    ("extract unsigned index", lambda t: ct.extract(t, (ct.uint32(0), 0), (2, 2)),
     r'Invalid argument "index" of extract\(\): Expected a tuple of signed integers or a '
     r"single signed integer scalar, but item #0 has type Tile\[uint32,\(\)\]"),
    ("insert float index", lambda t: ct.insert(t, (0, 1.0), ct.full((2, 2), 1.0, ct.float32)),
     r'Invalid argument "index" of insert\(\): Expected a tuple of signed integers or a '
     r"single signed integer scalar, but item #1 has type Tile\[float32,\(\)\]"),
]


@pytest.mark.parametrize("name,expression,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_subtiles_cutile_refuses(run_kernel, name, expression, message):
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(_kernel(expression), (1,), (X, _poisoned()))


INDEX = (r'Invalid argument "index" of {}\(\): Expected a tuple of signed integers or a '
         r"single signed integer scalar, but {} has type {}")
MEMORY_REFUSED = [
    ("load unsigned index", lambda x, out: ct.load(x, (ct.uint32(0), 0), (4, 8)),
     INDEX.format("load", "item #0", r"Tile\[uint32,\(\)\]")),
    ("load float index", lambda x, out: ct.load(x, (0, 1.0), (4, 8)),
     INDEX.format("load", "item #1", r"Tile\[float32,\(\)\]")),
    ("store index of a 1-element tile",
     lambda x, out: ct.store(out, (ct.full((1,), 0, ct.int32), 0), ct.load(x, (0, 0), (4, 8))),
     INDEX.format("store", "item #0", r"Tile\[int32,\(1,\)\]")),
    ("load index not a tuple", lambda x, out: ct.load(x, ct.uint8(0), (4, 8)),
     INDEX.format("load", "given value", r"Tile\[uint8,\(\)\]")),
    ("tiled view load unsigned index",
     lambda x, out: x.tiled_view((4, 8)).load((0, ct.uint64(0))),
     INDEX.format("load", "item #1", r"Tile\[uint64,\(\)\]")),
    ("load relaxed without scope", lambda x, out: ct.load(x, (0, 0), (4, 8),
                                                          memory_order=ORDER.RELAXED),
     "tile_load with RELAXED memory ordering requires a memory scope"),
    ("store weak with a scope",
     lambda x, out: ct.store(out, (0, 0), ct.load(x, (0, 0), (4, 8)), memory_scope=SCOPE.BLOCK),
     "tile_store with WEAK memory ordering cannot specify a memory scope"),
    ("load cluster scope", lambda x, out: ct.load(x, (0, 0), (4, 8), memory_order=ORDER.ACQUIRE,
                                                  memory_scope=SCOPE.CLUSTER),
     r"Invalid memory scope for tile_load. Got MemoryScope.CLUSTER, expected one of "
     r"MemoryScope.NONE, MemoryScope.BLOCK, MemoryScope.DEVICE, MemoryScope.SYS"),
    ("store acquire", lambda x, out: ct.store(out, (0, 0), ct.load(x, (0, 0), (4, 8)),
                                              memory_order=ORDER.ACQUIRE,
                                              memory_scope=SCOPE.DEVICE),
     r"Invalid memory order for tile_store. Got MemoryOrder.ACQUIRE, expected one of "
     r"MemoryOrder.RELAXED, MemoryOrder.RELEASE, MemoryOrder.WEAK"),
    ("atomic add with cluster scope",
     lambda x, out: ct.atomic_add(out, (0, 0), 1.0, memory_scope=SCOPE.CLUSTER),
     r"Invalid memory scope for tile_atomic_rmw. Got MemoryScope.CLUSTER"),
]


@pytest.mark.parametrize("name,statement,message", MEMORY_REFUSED,
                         ids=[r[0] for r in MEMORY_REFUSED])
def test_memory_cutile_refuses(run_kernel, name, statement, message):
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(statement_kernel(statement), (1,), (X, _poisoned()))


@pytest.mark.parametrize("load_order,store_order,scope", [
    (ORDER.ACQUIRE, ORDER.RELEASE, SCOPE.DEVICE),
    (ORDER.RELAXED, ORDER.RELAXED, SCOPE.BLOCK),
    (ORDER.ACQUIRE, ORDER.RELAXED, SCOPE.SYS),
])
def test_memory_orders_cutile_takes(run_kernel, load_order, store_order, scope):
    @ct.kernel
    def copy(x, out):
        t = ct.load(x, (0, ct.bid(0)), (4, 4), memory_order=load_order, memory_scope=scope)
        ct.store(out, (0, ct.bid(0)), t, memory_order=store_order, memory_scope=scope)
    out = _poisoned()
    run_kernel(copy, (2,), (X, out))
    np.testing.assert_array_equal(out, X)


def test_cat_of_one_tile_is_the_tile(run_kernel):
    """cuTile's ``cat`` of a tuple of one tile returns it."""
    out = _poisoned()
    run_kernel(_kernel(lambda t: ct.cat((t,), 1)), (1,), (X, out))
    np.testing.assert_array_equal(out, X)


def test_cat_of_three_tiles_is_refused(run_kernel):
    with pytest.raises(ct.TileTypeError, match="cat\\(\\) supports at most 2 tiles, got 3"):
        run_kernel(_kernel(lambda t: ct.cat((t, t, t), 0)), (1,), (X, _poisoned()))
