"""``ct.partition`` and the grid inferred from it (a numba_tile extension, after cuTile
Rust's host-side partitions): each tile block's parameter is its own region of the array,
clipped at the array's edge, and ``grid=None`` runs one block per region.

Outputs are views of NaN buffers: the elements around them (their guards) and those no block
may write must stay NaN.
"""

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.runtime.arguments import classify_arguments, quick_signature
from numba_tile.compiler.types import PartitionType
from numba_tile.partitions import region_bounds
from test_arguments import FakeTensor, GPUArray
from test_memory_bounds import assert_only, guarded


# -- the seed's add: c partitioned, a and b loaded by block index --------------------------
@ct.kernel
def add(c, a, b, TILE: ct.Constant[tuple[int, int]]):
    index = (ct.bid(0), ct.bid(1))
    ct.store(c, (0, 0), ct.load(a, index, TILE) + ct.load(b, index, TILE))


@pytest.mark.parametrize("shape,tile", [((128, 256), (32, 64)), ((100, 60), (32, 16)),
                                        ((5, 3), (4, 4)), ((1, 70), (2, 32))],
                         ids=["multiple", "edges", "smaller_than_a_tile", "one_row"])
def test_add_with_the_grid_inferred(run_kernel, rng, shape, tile):
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    buffer, c = guarded(shape)
    run_kernel(add, None, (ct.partition(c, tile), a, b, tile))
    assert_only(buffer, c, a + b)


# -- 1-d, 2-d and 3-d: every block writes its index into its region ------------------------
@ct.kernel
def fill_1d(c, TILE: ct.Constant[int]):
    ct.store(c, (0,), ct.full((TILE,), ct.bid(0), ct.float32))


@ct.kernel
def fill_2d(c, TILE: ct.Constant[tuple[int, int]]):
    ct.store(c, (0, 0), ct.full(TILE, ct.bid(0) * 10 + ct.bid(1), ct.float32))


@ct.kernel
def fill_3d(c, TILE: ct.Constant[tuple[int, int, int]]):
    value = ct.bid(0) * 100 + ct.bid(1) * 10 + ct.bid(2)
    ct.store(c, (0, 0, 0), ct.full(TILE, value, ct.float32))


def block_indices(shape, tile):
    """What the fill kernels write: each element's block index, ``100 x + 10 y + z``."""
    grids = np.meshgrid(*[np.arange(n) // t for n, t in zip(shape, tile)], indexing="ij")
    weights = (1,) if len(shape) == 1 else (10, 1) if len(shape) == 2 else (100, 10, 1)
    return sum(w * g for w, g in zip(weights, grids)).astype(np.float32)


@pytest.mark.parametrize("shape,tile", [((100,), (16,)), ((64,), (64,)), ((3,), (8,))])
def test_1d(run_kernel, shape, tile):
    buffer, c = guarded(shape)
    run_kernel(fill_1d, None, (ct.partition(c, tile), tile[0]))
    assert_only(buffer, c, block_indices(shape, tile))


@pytest.mark.parametrize("shape,tile", [((33, 17), (8, 4)), ((16, 16), (16, 16))])
def test_2d(run_kernel, shape, tile):
    buffer, c = guarded(shape)
    run_kernel(fill_2d, None, (ct.partition(c, tile), tile))
    assert_only(buffer, c, block_indices(shape, tile))


@pytest.mark.parametrize("shape,tile", [((5, 6, 7), (2, 4, 4)), ((4, 8, 16), (2, 2, 8))])
def test_3d(run_kernel, shape, tile):
    buffer, c = guarded(shape)
    run_kernel(fill_3d, None, (ct.partition(c, tile), tile))
    assert_only(buffer, c, block_indices(shape, tile))


@ct.kernel
def region_facts(c, facts):
    """Each block records its region's shape and the grid it runs on."""
    row = (ct.bid(0), ct.bid(1), 0)
    ct.store(facts, row, ct.full((1, 1, 1), c.shape[0], ct.int32))
    ct.store(facts, (ct.bid(0), ct.bid(1), 1), ct.full((1, 1, 1), c.shape[1], ct.int32))
    ct.store(facts, (ct.bid(0), ct.bid(1), 2), ct.full((1, 1, 1), ct.num_blocks(0), ct.int32))
    ct.store(facts, (ct.bid(0), ct.bid(1), 3), ct.full((1, 1, 1), ct.num_blocks(1), ct.int32))


def test_the_region_is_the_tile_shape_clipped_at_the_edge(run_kernel):
    c = np.zeros((10, 7), np.float32)
    facts = np.full((3, 2, 4), -1, np.int32)
    run_kernel(region_facts, None, (ct.partition(c, (4, 5)), facts))
    rows, columns = [4, 4, 2], [5, 2]
    expected = [[[rows[x], columns[y], 3, 2] for y in range(2)] for x in range(3)]
    np.testing.assert_array_equal(facts, expected)


@ct.kernel
def double_in_place(c, TILE: ct.Constant[tuple[int, int]]):
    ct.store(c, (0, 0), ct.load(c, (0, 0), TILE, padding_mode=ct.PaddingMode.NAN) * 2)


def test_a_region_is_read_as_well(run_kernel, rng):
    values = rng.standard_normal((9, 13)).astype(np.float32)
    buffer, c = guarded(values.shape)
    c[...] = values
    run_kernel(double_in_place, None, (ct.partition(c, (4, 8)), (4, 8)))
    assert_only(buffer, c, values * 2)


def quarter_of(region, row, column):
    """A helper that takes the region as any array: one 2 x 2 tile of it."""
    return region.tiled_view((2, 2)), (row, column)


@ct.kernel
def number_quarters(c):
    for i in range(ct.num_tiles(c, 0, (2, 2))):
        for j in range(ct.num_tiles(c, 1, (2, 2))):
            view, index = quarter_of(c, i, j)
            view.store(index, ct.full((2, 2), i * 2 + j, ct.float32))


def test_the_region_is_an_array_like_any_other(run_kernel):
    """Views, helpers and num_tiles take the region (here 4 x 4, 3 x 4, ... at the edge)."""
    buffer, c = guarded((7, 6))
    run_kernel(number_quarters, None, (ct.partition(c, (4, 4)),))
    rows = (np.arange(7) % 4) // 2
    columns = (np.arange(6) % 4) // 2
    assert_only(buffer, c, (rows[:, None] * 2 + columns[None, :]).astype(np.float32))


# -- an explicit grid overrides the partition's --------------------------------------------
@pytest.mark.parametrize("grid", [(6, 5), (6, 5, 2), (2, 1), (3,)],
                         ids=["larger", "larger_with_z", "smaller", "1d"])
def test_an_explicit_grid_runs_as_given(run_kernel, grid):
    """Blocks past the partition's grid get an empty region (they write nothing); regions
    of blocks the grid lacks are not written."""
    shape, tile = (10, 7), (4, 4)
    buffer, c = guarded(shape)
    run_kernel(fill_2d, grid, (ct.partition(c, tile), tile))
    expected = block_indices(shape, tile)
    grid2 = tuple(grid) + (1,) * (2 - len(grid))
    expected[grid2[0] * 4:, :] = np.nan
    expected[:, grid2[1] * 4:] = np.nan
    assert_only(buffer, c, expected)


def test_region_bounds_clip_and_empty():
    assert region_bounds(0, 4, 10) == (0, 4)
    assert region_bounds(2, 4, 10) == (8, 10)
    assert region_bounds(3, 4, 10) == (10, 10)
    assert region_bounds(7, 4, 0) == (0, 0)
    assert region_bounds(2**31 - 1, 2**40, 5) == (5, 5)


# -- arrays the kernel reads the same way, views, annotations ------------------------------
def test_partitions_of_strided_views(run_kernel, rng):
    shape, tile = (24, 20), (8, 8)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    buffer = np.full((24 * 2, 20 * 3), np.nan, np.float32)
    c = buffer[::2, 1::3]  # strided along both axes
    run_kernel(add, None, (ct.partition(c, tile), a, b, tile))
    np.testing.assert_array_equal(c, a + b)
    untouched = np.ones(buffer.shape, bool)
    untouched[::2, 1::3] = False
    assert np.isnan(buffer[untouched]).all()


def test_partition_of_a_transposed_array(run_kernel, rng):
    a = rng.standard_normal((12, 20)).astype(np.float32)
    b = rng.standard_normal((12, 20)).astype(np.float32)
    storage = np.full((20, 12), np.nan, np.float32)
    c = storage.T  # column-major view
    run_kernel(add, None, (ct.partition(c, (8, 8)), a, b, (8, 8)))
    np.testing.assert_array_equal(c, a + b)


@ct.kernel
def fill_int64_indexed(c: ct.IndexedWithInt64, TILE: ct.Constant[int]):
    ct.store(c, (0,), ct.full((TILE,), ct.bid(0), ct.float32))


def test_an_int64_indexed_partition(run_kernel):
    buffer, c = guarded((50,))
    run_kernel(fill_int64_indexed, None, (ct.partition(c, 16), 16))
    assert_only(buffer, c, block_indices((50,), (16,)))


@ct.kernel
def scale_rows(c, a, factor, TILE: ct.Constant[int]):
    t = ct.load(a, (ct.bid(0), 0), (TILE, 8))
    ct.store(c, (0, 0), t * factor)


def test_one_kernel_with_several_tile_shapes(run_kernel, rng):
    """The tile shape is part of the signature: each compiles a kernel of its own."""
    a = rng.standard_normal((20, 8)).astype(np.float32)
    for tile in (4, 8, 16):
        buffer, c = guarded((20, 8))
        run_kernel(scale_rows, None, (ct.partition(c, (tile, 8)), a, 2.0, tile))
        assert_only(buffer, c, a * 2)


def test_an_empty_array_runs_no_block(run_kernel):
    c = np.zeros((0, 8), np.float32)
    run_kernel(fill_2d, None, (ct.partition(c, (4, 8)), (4, 8)))
    assert c.shape == (0, 8)


# -- errors: the launch's, shared by the executors -----------------------------------------
@ct.kernel
def two_outputs(c, d, TILE: ct.Constant[int]):
    ct.store(c, (0,), ct.full((TILE,), 1.0, ct.float32))
    ct.store(d, (0,), ct.full((TILE,), 2.0, ct.float32))


def test_partitions_of_the_same_grid_are_filled_together(run_kernel):
    c, d = np.zeros(40, np.float32), np.zeros(20, np.float32)
    run_kernel(two_outputs, None, (ct.partition(c, 8), ct.partition(d, 4), 8))
    np.testing.assert_array_equal(c, 1.0)
    np.testing.assert_array_equal(d[:4 * 5], 2.0)


def test_partitions_that_disagree_name_their_grids(run_kernel):
    c, d = np.zeros(40, np.float32), np.zeros(40, np.float32)
    with pytest.raises(ValueError, match=r"different grids: c \(5, 1, 1\), d \(10, 1, 1\)"):
        run_kernel(two_outputs, None, (ct.partition(c, 8), ct.partition(d, 4), 8))
    assert not c.any() and not d.any()


def test_an_explicit_grid_needs_no_agreement(run_kernel):
    c, d = np.zeros(40, np.float32), np.zeros(40, np.float32)
    run_kernel(two_outputs, (5,), (ct.partition(c, 8), ct.partition(d, 4), 8))
    np.testing.assert_array_equal(c, 1.0)
    np.testing.assert_array_equal(d, np.where(np.arange(40) < 20, 2.0, 0.0))


def test_no_grid_and_no_partition(run_kernel):
    with pytest.raises(TypeError, match="Grid must be a tuple of 1 to 3 positive ints, got "
                                        "None, and no kernel argument is a ct.partition"):
        run_kernel(fill_1d, None, (np.zeros(8, np.float32), 8))


def test_an_inferred_grid_beyond_the_limits():
    c = np.zeros((1, 70000), np.int8)
    with pytest.raises(ValueError, match=r"grid \(1, 70000, 1\) inferred from the partitions "
                                         r"is too large: Grid\[1\] = 70000"):
        ct.launch(0, None, fill_2d, (ct.partition(c, (1, 1)), (1, 1)))


@ct.kernel
def first_of(outs, TILE: ct.Constant[int]):
    ct.store(outs[0], (ct.bid(0),), ct.full((TILE,), 1.0, ct.float32))


@pytest.mark.parametrize("grid", [(2,), None], ids=["explicit_grid", "inferred_grid"])
@pytest.mark.parametrize("container", [tuple, list])
def test_a_partition_inside_a_tuple_or_list_is_refused(run_kernel, grid, container):
    c = np.zeros(8, np.float32)
    outs = container([ct.partition(c, 4), np.zeros(8, np.float32)])
    with pytest.raises(TypeError, match=r"item #0 of kernel argument #0 \(outs\[0\]\): a "
                                        r"ct.partition must be a kernel argument of its own"):
        run_kernel(first_of, grid, (outs, 4))


@ct.kernel
def constant_output(c: ct.Constant):
    pass


def test_a_partition_for_a_constant_parameter_is_refused(run_kernel):
    with pytest.raises(TypeError, match="a ct.partition cannot be passed for a parameter "
                                        "annotated as a Constant"):
        run_kernel(constant_output, (1,), (ct.partition(np.zeros(8), 4),))


def test_both_executors_raise_the_same_errors():
    """The interpreter and ct.compile (the compiler's classification of the arguments)
    refuse a partition where none may be with the same error."""
    for args in (((ct.partition(np.zeros(8, np.float32), 4),), 4),):
        with ct.interpret(), pytest.raises(TypeError) as interpreted:
            ct.launch(0, (1,), first_of, args)
        with pytest.raises(TypeError) as compiled:
            ct.compile(first_of, args, arch="sm_80")
        assert str(interpreted.value) == str(compiled.value)
    with ct.interpret(), pytest.raises(TypeError) as interpreted:
        ct.launch(0, (1,), constant_output, (ct.partition(np.zeros(8), 4),))
    with pytest.raises(TypeError) as compiled:
        ct.compile(constant_output, (ct.partition(np.zeros(8), 4),), arch="sm_80")
    assert str(interpreted.value) == str(compiled.value)


# -- ct.partition's own checks ---------------------------------------------------------------
@pytest.mark.parametrize("array,tile_shape,error,match", [
    (np.zeros((8, 8)), [4, 4], TypeError, "tile_shape must be a tuple of positive ints"),
    (np.zeros((8, 8)), 4, TypeError, "tile_shape must be a tuple of positive ints"),
    (np.zeros((8, 8)), (4,), ValueError, r"tile_shape \(4,\) has 1 entry, but the array has "
                                         r"2 axes \(shape \(8, 8\)\)"),
    (np.zeros(8), (4, 4), ValueError, "has 2 entries, but the array has 1 axes"),
    (np.zeros((8, 8)), (4, 0), ValueError, r"tile_shape\[1\] = 0 must be positive"),
    (np.zeros((8, 8)), (-4, 4), ValueError, r"tile_shape\[0\] = -4 must be positive"),
    (np.zeros((8, 8)), (4, 2.0), TypeError, r"tile_shape\[1\] must be an int, got float"),
    (np.zeros((8, 8)), (True, 4), TypeError, r"tile_shape\[0\] must be an int, got bool"),
    (np.zeros(8), True, TypeError, "tile_shape must be a tuple"),
    (np.zeros((2, 2, 2, 2)), (1, 1, 1, 1), ValueError, "needs an array of 1 to 3 axes"),
    (np.float32(1.0), (), ValueError, "needs an array of 1 to 3 axes"),
    ([1, 2, 3], (2,), TypeError, r"needs an array \(NumPy, CuPy, PyTorch or numba\), got list"),
    (None, (2,), TypeError, "needs an array"),
], ids=["list", "int_for_2d", "short", "long", "zero", "negative", "float", "bool",
        "bool_for_1d", "rank_4", "scalar", "python_list", "none"])
def test_bad_partitions(array, tile_shape, error, match):
    with pytest.raises(error, match=match):
        ct.partition(array, tile_shape)


def test_a_partition_of_a_partition():
    with pytest.raises(TypeError, match="got a Partition: partition the array itself"):
        ct.partition(ct.partition(np.zeros(8), 4), 2)


def test_what_a_partition_is():
    c = np.zeros((100, 60), np.float32)
    p = ct.partition(c, (32, np.int64(16)))
    assert isinstance(p, ct.Partition) and p.array is c
    assert p.tile_shape == (32, 16) and type(p.tile_shape[1]) is int
    assert p.grid == (4, 4, 1)
    assert repr(p) == "<Partition of a (100, 60) float32 array into (32, 16) tiles: grid " \
                      "(4, 4, 1)>"
    assert ct.partition(np.zeros(10), 3).tile_shape == (3,)
    assert ct.partition(np.zeros((3, 4, 5)), (2, 2, 2)).grid == (2, 2, 3)


def test_a_partition_pickles():
    import pickle
    p = pickle.loads(pickle.dumps(ct.partition(np.arange(8.0), 4)))
    assert p.tile_shape == (4,) and p.grid == (2, 1, 1) and list(p.array) == list(range(8))


# -- the compiled signature and the launch's fast path -------------------------------------
def test_the_signature_holds_the_tile_shape():
    c = np.zeros((64, 64), np.float32)
    arg_types, flat = classify_arguments(add, (ct.partition(c, (16, 16)), c, c, (16, 16)),
                                         on_device=False)
    assert isinstance(arg_types[0], PartitionType) and arg_types[0].tile_shape == (16, 16)
    other, _ = classify_arguments(add, (ct.partition(c, (16, 32)), c, c, (16, 32)),
                                  on_device=False)
    assert other[0] != arg_types[0]


@pytest.mark.parametrize("tile,aligned", [((16, 16), True), ((16, 3), False),
                                          ((1, 4), True)])
def test_regions_stay_aligned_where_every_one_starts_on_16_bytes(tile, aligned):
    array = GPUArray((64, 64), pointer=0x10000)
    arg_types, _ = classify_arguments(fill_2d, (ct.partition(array, tile), tile))
    assert arg_types[0].array.aligned
    assert arg_types[0].region.aligned is aligned


def test_host_arrays_in_partitions_are_not_launched_on_the_gpu():
    with pytest.raises(ValueError, match="Input array is not on a CUDA device"):
        classify_arguments(fill_1d, (ct.partition(np.zeros(8, np.float32), 4), 4))


@ct.kernel
def output_and_size(c, n):
    pass


@pytest.mark.parametrize("array", [GPUArray((64, 32), pointer=0x10000), GPUArray((7, 5)),
                                   FakeTensor((64, 32), (32, 1)),
                                   FakeTensor((64, 32), (1, 64))],
                         ids=["aligned", "unaligned", "tensor", "tensor_transposed"])
def test_the_fast_path_of_partitions(array):
    """The fast path gives the full classification's flat values, and its key tells tile
    shapes apart."""
    keys = set()
    for tile in ((8, 8), (8, 16)):
        args = (ct.partition(array, tile), 8)
        quick = quick_signature(output_and_size, args)
        assert quick is not None
        assert quick[1] == classify_arguments(output_and_size, args)[1]
        keys.add(quick[0])
    assert len(keys) == 2
    assert quick_signature(output_and_size, (array, 8))[0] not in keys


@ct.kernel
def int64_output(c: ct.IndexedWithInt64, TILE: ct.Constant[int]):
    pass


def test_annotated_partitions_take_the_full_path():
    args = (ct.partition(GPUArray((64,)), 16), 16)
    assert quick_signature(int64_output, args) is None
    arg_types, _ = classify_arguments(int64_output, args)
    assert "int64" in str(arg_types[0].region)
