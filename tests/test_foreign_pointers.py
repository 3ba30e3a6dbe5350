"""Foreign pointers (cuTile 1.7): ``Array.foreign_pointer``, ``Array.from_foreign`` and
``ct.foreign_pointer_dtype``, in both executors, with cuTile's words for what it refuses; and
the interpreter's refusal to reach outside the memory a pointer came from."""

import pickle

import numpy as np
import pytest

import numba_tile as ct
from conftest import guarded
from numba_tile import Array

FP32 = ct.foreign_pointer_dtype(ct.float32)


def poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype)


# -- the dtype -----------------------------------------------------------------------------------
def test_dtype_names_its_pointee_and_is_one_object():
    assert str(FP32) == repr(FP32) == "foreign_pointer[float32]"
    assert FP32.bitwidth == 64 and FP32.pointee is ct.float32
    assert FP32 is ct.foreign_pointer_dtype(ct.float32)
    assert FP32 == ct.foreign_pointer_dtype(ct.float32)
    assert hash(FP32) == hash(ct.foreign_pointer_dtype(ct.float32))
    assert FP32 != ct.foreign_pointer_dtype(ct.float16) and FP32 != ct.float32
    assert isinstance(FP32, ct.DType) and not FP32.arithmetic and FP32.numpy is None
    assert pickle.loads(pickle.dumps(FP32)) is FP32


def test_dtype_refuses_what_is_not_a_pointee():
    with pytest.raises(TypeError, match=r"^nested foreign pointer dtypes are not supported$"):
        ct.foreign_pointer_dtype(FP32)
    with pytest.raises(TypeError, match=r"^pointee_dtype must be a cuda\.tile dtype$"):
        ct.foreign_pointer_dtype(3)


# -- arrays made from a pointer ------------------------------------------------------------------
@ct.kernel
def copy_through_pointer(x, out):
    p = x.foreign_pointer
    v = ct.Array.from_foreign(p, x.shape, x.strides)
    ct.store(out, (0,), ct.load(v, (0,), (4,)))


@ct.kernel
def copy_with_constant_shape(x, out):
    v = ct.Array.from_foreign(x.foreign_pointer, (4,), (1,))
    ct.store(out, (0,), ct.load(v, (0,), (4,)))


@ct.kernel
def copy_one_element(x, out):
    v = ct.Array.from_foreign(x.foreign_pointer, (1,), (1,))
    ct.store(out, (0,), ct.load(v, (0,), (4,)))


def test_array_from_its_own_pointer(run_kernel):
    x = np.arange(4, dtype=np.float32) + 1
    out = poisoned(4)
    run_kernel(copy_through_pointer, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


def test_array_of_constant_shape(run_kernel):
    x = np.arange(4, dtype=np.float32) + 1
    out = poisoned(4)
    run_kernel(copy_with_constant_shape, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


def test_array_of_one_element_pads_the_load(run_kernel):
    x = np.arange(4, dtype=np.float32) + 1
    out = poisoned(4)
    run_kernel(copy_one_element, (1,), (x, out))
    np.testing.assert_array_equal(out, [1, 0, 0, 0])


@ct.kernel
def transpose_through_pointer(x, out):
    v = ct.Array.from_foreign(x.foreign_pointer, (x.shape[1], x.shape[0]),
                              (x.strides[1], x.strides[0]))
    ct.store(out, (0, 0), ct.load(v, (0, 0), (8, 4)))


def test_two_dimensional_array_from_shape_items(run_kernel):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = poisoned((8, 4))
    run_kernel(transpose_through_pointer, (1,), (x, out))
    np.testing.assert_array_equal(out, x.T)


@ct.kernel
def int64_extents(x, out):
    v = ct.Array.from_foreign(x.foreign_pointer, (ct.int64(4),), (1,))
    ct.static_assert(v.shape[0].dtype == ct.int64)
    ct.static_assert(v.strides[0].dtype == ct.int64)
    w = ct.Array.from_foreign(x.foreign_pointer, (4,), (ct.int32(1),))
    ct.static_assert(w.shape[0].dtype == ct.int32)
    ct.store(out, (0,), ct.load(v, (0,), (4,)))


def test_an_int64_item_makes_int64_indices(run_kernel):
    x = np.arange(4, dtype=np.float32) + 1
    out = poisoned(4)
    run_kernel(int64_extents, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


@ct.kernel
def pointer_attributes(x, out):
    p = x.foreign_pointer
    ct.static_assert(p.dtype == ct.foreign_pointer_dtype(ct.float32))
    ct.static_assert(p.shape == ())
    ct.static_assert(p.ndim == 0)
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


def test_pointer_dtype_and_shape_are_constants(run_kernel):
    x = np.arange(4, dtype=np.float32)
    out = poisoned(4)
    run_kernel(pointer_attributes, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


@ct.kernel
def pointer_chosen_at_run_time(x, out):
    p = x.foreign_pointer
    if ct.bid(0) == 0:
        p = out.foreign_pointer
    v = ct.Array.from_foreign(p, (4,), (1,))
    ct.store(v, (0,), ct.load(x, (0,), (4,)) * 2)


def test_pointer_reassigned_under_a_run_time_condition(run_kernel):
    x = np.arange(4, dtype=np.float32) + 1
    out = poisoned(4)
    run_kernel(pointer_chosen_at_run_time, (1,), (x, out))
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(x, np.arange(4, dtype=np.float32) + 1)


@ct.kernel
def strided_view(x, out, n, step):
    v = ct.Array.from_foreign(x.foreign_pointer, (n,), (step,))
    ct.store(out, (0,), ct.load(v, (0,), (4,)))


def test_run_time_shape_and_strides(run_kernel):
    x = np.arange(8, dtype=np.float32)
    out = poisoned(4)
    run_kernel(strided_view, (1,), (x, out, 4, 2))
    np.testing.assert_array_equal(out, [0, 2, 4, 6])


@ct.function
def _pointer_of(x):
    return x.foreign_pointer


@ct.function
def _vector_at(p, n):
    return Array.from_foreign(p, (n,), (1,))


@ct.kernel
def pointer_through_helpers(x, out):
    ct.store(out, (0,), ct.load(_vector_at(_pointer_of(x), 4), (0,), (4,)))


@ct.kernel
def pointer_chosen_by_where(x, out):
    p = ct.where(ct.bid(0) == 0, out.foreign_pointer, x.foreign_pointer)
    q = ct.reshape(ct.reshape(p, (1,)), ())
    ct.store(ct.Array.from_foreign(q, (4,), (1,)), (0,), ct.load(x, (0,), (4,)) + 1)


def test_pointer_through_helpers_and_the_class_as_a_global(run_kernel):
    x = np.arange(4, dtype=np.float32) + 1
    out = poisoned(4)
    run_kernel(pointer_through_helpers, (1,), (x, out))
    np.testing.assert_array_equal(out, x)


def test_pointer_chosen_by_where_and_reshaped(run_kernel):
    x = np.arange(4, dtype=np.float32)
    out = poisoned(4)
    run_kernel(pointer_chosen_by_where, (1,), (x, out))
    np.testing.assert_array_equal(out, x + 1)


# -- what the interpreter refuses at run time ----------------------------------------------------
def test_interpreter_refuses_memory_past_the_array(run_kernel):
    """The pointer's array is 4 elements of a larger buffer: an array of 5 from it would
    reach the buffer's next element, which is not the kernel's."""
    buffer, x = guarded((4,))
    out = poisoned(4)
    with pytest.raises(ct.TileValueError, match=r"^from_foreign\(\): an array of shape \(4,\) "
                                                r"and strides \(2,\) reaches element 6"):
        run_kernel(strided_view, (1,), (x, out, 4, 2))
    assert np.isnan(out).all()


def test_interpreter_refuses_a_negative_run_time_extent(run_kernel):
    x = np.arange(8, dtype=np.float32)
    out = poisoned(4)
    with pytest.raises(ct.TileValueError, match=r"^from_foreign\(\): shape\[0\] is -4; it "
                                                r"must be non-negative"):
        run_kernel(strided_view, (1,), (x, out, -4, 1))
    with pytest.raises(ct.TileValueError, match=r"^from_foreign\(\): strides\[0\] is -1"):
        run_kernel(strided_view, (1,), (x, out, 4, -1))


def test_an_array_of_no_elements_reaches_nothing(run_kernel):
    x = np.arange(4, dtype=np.float32)
    out = poisoned(4)
    run_kernel(strided_view, (1,), (x, out, 0, 100))
    np.testing.assert_array_equal(out, [0, 0, 0, 0])


# -- what both executors refuse, in cuTile's words -----------------------------------------------
@ct.kernel
def negative_constant_shape(x):
    ct.load(ct.Array.from_foreign(x.foreign_pointer, (-4,), (1,)), (0,), (4,))


@ct.kernel
def ranks_differ(x):
    ct.load(ct.Array.from_foreign(x.foreign_pointer, (4, 1), (1,)), (0, 0), (4, 1))


@ct.kernel
def tile_as_pointer(x):
    ct.load(ct.Array.from_foreign(ct.load(x, (0,), (4,)), (4,), (1,)), (0,), (4,))


@ct.kernel
def float_shape(x):
    ct.load(ct.Array.from_foreign(x.foreign_pointer, (4.0,), (1,)), (0,), (4,))


@ct.kernel
def unsigned_shape(x):
    ct.load(ct.Array.from_foreign(x.foreign_pointer, (ct.uint32(4),), (1,)), (0,), (4,))


@ct.kernel
def shape_not_a_tuple(x):
    ct.load(ct.Array.from_foreign(x.foreign_pointer, 4, (1,)), (0,), (4,))


@ct.kernel
def pointer_arithmetic(x):
    x.foreign_pointer + 1


@ct.kernel
def print_pointer(x):
    print(x.foreign_pointer)


@ct.kernel
def full_of_pointers(x):
    ct.full((4,), 0, ct.foreign_pointer_dtype(ct.float32))


@ct.kernel
def pointer_astype(x):
    x.foreign_pointer.astype(ct.int64)


@ct.kernel
def pointers_tile_as_pointer(x):
    p = ct.broadcast_to(x.foreign_pointer, (4,))
    ct.load(ct.Array.from_foreign(p, (4,), (1,)), (0,), (4,))


@ct.kernel
def pointers_compared(x):
    x.foreign_pointer == x.foreign_pointer


@ct.kernel
def pointer_as_condition(x):
    if x.foreign_pointer:
        ct.store(x, (0,), ct.zeros((4,), ct.float32))


@ct.kernel
def pointer_in_fstring(x):
    print(f"{x.foreign_pointer}")


@ct.kernel
def pointer_printf(x):
    ct.printf("%lld", x.foreign_pointer)


@ct.kernel
def pointer_bitcast(x):
    ct.bitcast(x.foreign_pointer, ct.int64)


@ct.kernel
def pointer_dtype_called(x):
    ct.foreign_pointer_dtype(ct.float32)(0)


@pytest.mark.parametrize("kernel,message", [
    (negative_constant_shape, r"shape\[0\] must be non-negative"),
    (ranks_differ, r"shape and strides must have the same rank"),
    (tile_as_pointer, r"expected a foreign pointer tile, got Tile\[float32,\(4,\)\]"),
    (pointers_tile_as_pointer,
     r"expected a scalar foreign pointer, got Tile\[foreign_pointer\[float32\],\(4,\)\]"),
    (float_shape, r"shape\[0\] must be a signed integer; got Tile\[float32,\(\)\]"),
    (unsigned_shape, r"shape\[0\] must be a signed integer; got Tile\[uint32,\(\)\]"),
    (shape_not_a_tuple, r'Invalid argument "shape" of from_foreign\(\): Expected a tuple, but '
                        r'given value has type Tile\[int32,\(\)\]'),
    (pointer_arithmetic, r"Left-hand side has non-arithmetic dtype foreign_pointer\[float32\]"),
    (print_pointer, r"print\(\): cannot infer format for dtype foreign_pointer\[float32\]"),
    (full_of_pointers, r'Invalid argument "dtype" of full\(\): Expected a numeric dtype, got '
                       r'foreign_pointer\[float32\]'),
    (pointer_astype, r"astype\(\) of a foreign_pointer\[float32\] is not supported"),
    (pointers_compared, r"Left-hand side has non-arithmetic dtype foreign_pointer\[float32\]"),
    (pointer_as_condition, r"astype\(\) of a foreign_pointer\[float32\] is not supported"),
    (pointer_in_fstring, r"print\(\): cannot infer format for dtype foreign_pointer\[float32\]"),
    (pointer_printf, r"Format %d for arg #0 got unexpected type of "
                     r"Tile\[foreign_pointer\[float32\],\(\)\]"),
    (pointer_bitcast, r"bitcast\(\) of a foreign_pointer\[float32\] is not supported"),
    (pointer_dtype_called, r"Cannot call an object of type DTypeSpec"),
], ids=lambda value: getattr(value, "__name__", None) or "")
def test_refused_in_both_executors(run_kernel, kernel, message):
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(ct.TileTypeError, match="^" + message):
        run_kernel(kernel, (1,), (x,))
