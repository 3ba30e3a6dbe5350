"""Tuples in tile code keep cuTile's rules in every mode (``numba_tile.rules.tuples``): a
constant index, ``len`` a constant, ``==``/``!=`` of scalar elements (folded where they are
constants), no ordering, ``in`` item by item stopping at a constant match, no item
assignment to tuples or tiles, ``*`` only of tuples; a list argument is indexed at run time."""

import numpy as np
import pytest

import numba_tile as ct


def _helper(*items):
    return len(items)


@ct.kernel
def compared(x, M: ct.Constant[int]):
    a = ct.bid(0)
    ct.scatter(x, (a, 0), ct.where((a, 1) == (0, 1), 1, 0))  # a run-time comparison
    ct.scatter(x, (a, 1), ct.where(((a, 1), 2) != ((1, 1), 2), 1, 0))  # nested
    ones = ct.ones((4,), dtype=ct.int32)
    # compile-time constants: constants fold; lengths differ whatever a is; the search stops
    # at the constant match, before the tile
    ct.ensure_constant((M, 8) == (4, 8) and (a, 1) != (a, 1, 2) and () == () and
                       2 in (1, 2, ones) and 5 not in ())
    ct.scatter(x, (a, 2), ct.where(a in (0, 2), 1, 0))
    ct.scatter(x, (a, 3), ct.where((a, 1) in ((3, 1), (2, 1)), 1, 0))
    t = (a,) + (a + 1, a + 2)
    ct.scatter(x, (a, 4), len(t) + t[2])  # len is a constant int, stored as int32


def test_comparisons_and_membership(run_kernel):
    x = np.zeros((4, 5), np.int32)
    run_kernel(compared, (4,), (x, 4))
    np.testing.assert_array_equal(x, [[1, 1, 1, 0, 5], [0, 0, 0, 0, 6], [0, 1, 1, 1, 7],
                                      [0, 1, 0, 1, 8]])


@ct.kernel
def listed(arrays, out):
    total = ct.zeros((4,), dtype=ct.float32)
    for i in range(len(arrays)):
        total += ct.load(arrays[i], (0,), (4,))  # a list takes a run-time index
    ct.store(out, (0,), total)


def test_a_list_argument_takes_a_run_time_index(run_kernel):
    out = np.zeros(4, np.float32)
    run_kernel(listed, (1,), ([np.ones(4, np.float32), np.full(4, 2, np.float32)], out))
    np.testing.assert_array_equal(out, np.full(4, 3))


@ct.kernel
def listed_by_tiles(arrays, out):
    first = ct.full((), 0, dtype=ct.int16)  # 0-d tiles of any integer dtype index a list
    total = ct.load(arrays[first], (0,), (4,)) + ct.load(arrays[first + 2], (0,), (4,))
    ct.store(out, (0,), total + ct.load(arrays[ct.bid(0) + first + 1], (0,), (4,)))


def test_a_list_argument_takes_a_0d_tile_index(run_kernel):
    out = np.zeros(4, np.float32)
    arrays = [np.full(4, 10.0 ** i, np.float32) for i in range(3)]
    run_kernel(listed_by_tiles, (1,), (arrays, out))
    np.testing.assert_array_equal(out, np.full(4, 111))


@ct.kernel
def list_index_float(arrays, out):
    ct.store(out, (0,), ct.load(arrays[ct.bid(0) + 0.5], (0,), (4,)))


@ct.kernel
def list_index_1d_tile(arrays, out):
    ct.store(out, (0,), ct.load(arrays[ct.ones((1,), dtype=ct.int32)], (0,), (4,)))


@pytest.mark.parametrize("kernel", [list_index_float, list_index_1d_tile],
                         ids=lambda k: k.__name__)
def test_a_list_index_is_an_integer_scalar(run_kernel, kernel):
    arrays = [np.ones(4, np.float32), np.ones(4, np.float32)]
    with pytest.raises(ct.TileTypeError, match="Tuple indices must be integers or slices, not"):
        run_kernel(kernel, (1,), (arrays, np.zeros(4, np.float32)))


@ct.kernel
def bad_index_float(x):
    t = (1, 2, 3)
    ct.scatter(x, 0, t[1.0])


@ct.kernel
def bad_index_tile(x):
    t = (1, 2, 3)
    ct.scatter(x, 0, t[ct.ones((2,), dtype=ct.int32)])


@ct.kernel
def bad_index_tuple(x):
    t = (1, 2, 3)
    ct.scatter(x, 0, t[(0, 1)])


@ct.kernel
def run_time_index(x):
    t = (1, 2, 3)
    ct.scatter(x, 0, t[ct.bid(0)])


@ct.kernel
def run_time_shape_index(x):
    for i in range(1):
        ct.scatter(x, 0, x.shape[i])


@ct.kernel
def ordered(x):
    if (1, 2) < (3, 4):
        ct.scatter(x, 0, 1)


@ct.kernel
def tile_elements(x):
    t = ct.ones((4,), dtype=ct.int32)
    if (t,) == (t,):
        ct.scatter(x, 0, 1)


@ct.kernel
def array_elements(x):
    if (x,) == (x,):
        ct.scatter(x, 0, 1)


@ct.kernel
def tile_needle(x):
    ct.scatter(x, 0, ct.where(ct.ones((4,), dtype=ct.int32) in (1, 2), 1, 0))


@ct.kernel
def tile_before_match(x):
    ct.scatter(x, 0, ct.where(2 in (ct.ones((4,), dtype=ct.int32), 2), 1, 0))


@ct.kernel
def tuple_item_assignment(x):
    t = (1, 2, 3)
    t[0] = 7


@ct.kernel
def tile_item_assignment(x):
    t = ct.ones((8,), dtype=ct.int32)
    t[0] = 7


@ct.kernel
def tile_unpacked(x):
    ct.scatter(x, 0, _helper(*ct.ones((4,), dtype=ct.int32)))


@pytest.mark.parametrize("kernel,message", [
    (bad_index_float, "Tuple indices must be integers or slices, not float"),
    (bad_index_tile, "Tuple indices must be integers or slices, not int32 tile of shape"),
    (bad_index_tuple, "Tuple indices must be integers or slices, not tuple"),
    (run_time_index, "Tuple indices must be constant, got a run-time int32 scalar"),
    (run_time_shape_index, "Tuple indices must be constant"),
    (ordered, "Operator '<' is not supported for tuples"),
    (tile_elements, "Tuple comparison is not supported for non-scalar elements"),
    (array_elements, "Tuple comparison is not supported for elements of type 1-d int32 array"),
    (tile_needle, "'in' requires scalar operands"),
    (tile_before_match, "'in' requires scalar operands"),
    (tuple_item_assignment, "Tuples are immutable: item assignment is not supported"),
    (tile_item_assignment, "Tiles are immutable: item assignment is not supported"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_tuples_do_not_take_is_a_type_error(run_kernel, kernel, message):
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(kernel, (1,), (np.zeros(1, np.int32),))


def _store_items(x, first, *items):
    for i, v in ct.static_iter(enumerate((first,) + items)):
        ct.scatter(x, i, v)


@ct.kernel
def several_unpacked(x):
    a = (10, 20)
    _store_items(x, 123, *a, 456, *(30,), *a)


def test_several_tuples_unpack_into_a_helper(run_kernel):
    x = np.zeros(7, np.int32)
    run_kernel(several_unpacked, (1,), (x,))
    np.testing.assert_array_equal(x, [123, 10, 20, 456, 30, 10, 20])


AXES = (1, 0)


@ct.kernel
def unpacked_into_ops(x, out, where):
    # a global tuple keeps its constants; a kernel parameter's items are run-time values
    ct.store(out, (0, 0), ct.transpose(ct.load(x, (0, 0), (2, 4)), *AXES))
    ct.scatter(out, *where)


def test_tuples_unpack_into_ops(run_kernel):
    x = np.arange(8, dtype=np.int32).reshape(2, 4)
    out = np.zeros((4, 2), np.int32)
    run_kernel(unpacked_into_ops, (1,), (x, out, ((3, 1), 99)))
    np.testing.assert_array_equal(out, [[0, 4], [1, 5], [2, 6], [3, 99]])


@ct.kernel
def tile_unpacked_among_others(x):
    _store_items(x, 1, *(2, 3), *ct.ones((4,), dtype=ct.int32))


def test_only_a_tuple_unpacks(run_kernel):
    for kernel in (tile_unpacked, tile_unpacked_among_others):
        with pytest.raises(ct.TileTypeError, match=r"Expected a tuple after \*, got a int32 "
                                                   r"tile of shape \(4,\)"):
            run_kernel(kernel, (1,), (np.zeros(1, np.int32),))
