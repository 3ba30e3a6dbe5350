"""Tuple kernel arguments annotated item by item (``tuple[ct.Constant[int], int]``,
``tuple[ct.ScalarInt64, ...]``, nested): each item takes its own annotation, a constant item
is embedded (one compile per value), and what does not fit the annotation is refused at the
launch with cuTile's messages, in every mode. The arrays of a list argument share the shapes
and strides their ``ArrayAnnotation`` makes static (a ``ValueError`` otherwise)."""

import re
from collections import namedtuple
from typing import Annotated

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.runtime.arguments import classify_arguments


@ct.kernel
def partly_constant(a, out, cfg: tuple[tuple[ct.Constant[int], int], int]):
    ct.static_assert(cfg[0][0] == 8)  # the constant item is known when compiling
    t = ct.load(a, (0,), (cfg[0][0],))
    ct.store(out, (0,), t + cfg[0][1] + cfg[1])


def test_a_constant_item_is_embedded_and_the_others_run_time(run_kernel):
    a = np.arange(8, dtype=np.int32)
    out = np.zeros(8, np.int32)
    run_kernel(partly_constant, (1,), (a, out, ((8, 3), 5)))
    np.testing.assert_array_equal(out, a + 8)


def test_a_changed_constant_item_is_a_new_signature():
    a = np.zeros(8, np.int32)
    types = [classify_arguments(partly_constant, (a, a, cfg), on_device=False)[0]
             for cfg in (((8, 3), 5), ((8, 7), 6), ((16, 3), 5))]
    assert types[0] == types[1] != types[2]


@ct.kernel
def constant_items(out, addends: tuple[ct.Constant[int], ...]):
    ct.static_assert(addends[0] + addends[1] == 3)
    ct.scatter(out, (0,), addends[0] + addends[1] + len(addends))


def test_a_variable_length_annotation_applies_to_every_item(run_kernel):
    out = np.zeros(1, np.int32)
    run_kernel(constant_items, (1,), (out, (1, 2, 7)))
    assert out[0] == 6


@ct.kernel
def wide_and_narrow(a, scalars: tuple[ct.ScalarInt64, int], out):
    t = ct.load(a, (0,), (8,))
    ct.store(out, (0,), t + scalars[0] - scalars[1])


def test_scalar_items_take_their_own_dtype(run_kernel):
    a = np.zeros(8, np.int64)
    out = np.zeros(8, np.int64)
    run_kernel(wide_and_narrow, (1,), (a, (2**33 + 7, 5), out))
    np.testing.assert_array_equal(out, np.full(8, 2**33 + 2))
    with pytest.raises(ValueError, match=r"'scalars\[1\]' = 8589934599 does not fit int32"):
        run_kernel(wide_and_narrow, (1,), (a, (5, 2**33 + 7), out))


@ct.kernel
def indexed_items(pair: tuple[ct.IndexedWithInt64, object], out):
    ct.static_assert(pair[0].shape[0].dtype == ct.int64)
    ct.static_assert(pair[1].shape[0].dtype == ct.int32)
    ct.store(out, (0,), ct.load(pair[0], (0,), (8,)) + ct.load(pair[1], (0,), (8,)))


def test_array_items_take_their_own_index_dtype(run_kernel):
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    run_kernel(indexed_items, (1,), ((x, x), out))
    np.testing.assert_array_equal(out, 2 * x)


@ct.kernel
def pair_of_ints(out, p: tuple[int, ct.Constant[int]]):
    ct.scatter(out, (0,), p[0] + p[1])


@ct.kernel
def nested_pair(out, p: tuple[tuple[int, ct.Constant[int]], int]):
    ct.scatter(out, (0,), p[0][1] + p[1])


@ct.kernel
def anything(out, p):
    ct.scatter(out, (0,), p[0] + p[1][0])


@ct.kernel
def constant_tuple(out, c: ct.Constant[tuple]):
    pass


@ct.kernel
def constant_wide(out, c: ct.Constant[tuple[ct.ScalarInt64, int]]):
    pass


Point = namedtuple("Point", ["x", "y"])


@pytest.mark.parametrize("kernel,value,message", [
    (pair_of_ints, (1, 2, 3), "Invalid kernel argument #1: Received a tuple of length 3 for a "
                              "parameter annotated as a tuple of length 2"),
    (pair_of_ints, 4, "Invalid kernel argument #1: Received int for a parameter annotated as a "
                      "tuple"),
    (nested_pair, ((1, 2, 3), 4), "Invalid item #0 of kernel argument #1: Received a tuple of "
                                  "length 3"),
    (anything, Point(1, 2), "Invalid kernel argument #1: 'Point' is a subclass of 'tuple'. Only "
                            "plain tuples are accepted."),
    (anything, (1, Point(2, 3)), "Invalid item #1 of kernel argument #1: 'Point' is a subclass"),
    (constant_tuple, (np.zeros(2), 1), "Invalid item #0 of kernel argument #1: Could not "
                                       "interpret object of type 'ndarray' as a constant."),
    (constant_wide, (2**33, 1), "Constant annotation cannot be combined with "
                                "ScalarAnnotation/ScalarInt64"),
], ids=["too-long", "no-tuple", "nested-length", "namedtuple", "nested-namedtuple",
        "constant-array", "constant-scalar-annotation"])
def test_what_the_annotation_does_not_take_is_refused(run_kernel, kernel, value, message):
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(".", r"\.")):
        run_kernel(kernel, (1,), (np.zeros(1, np.int32), value))


@ct.kernel
def listed(arrays: Annotated[list, ct.ListAnnotation(element=ct.IndexedWithInt64)], out):
    ct.static_assert(arrays[0].shape[0].dtype == ct.int64)
    ct.store(out, (0,), ct.load(arrays[0], (0,), (4,)) + ct.load(arrays[1], (0,), (4,)))


def test_a_list_annotation_applies_to_the_list_items(run_kernel):
    xs = [np.ones(4, np.float32), np.full(4, 2, np.float32)]
    out = np.zeros(4, np.float32)
    run_kernel(listed, (1,), (xs, out))
    np.testing.assert_array_equal(out, np.full(4, 3))


@ct.kernel
def bare_tuple_item(out, addends: tuple[tuple, ct.Constant[int]]):
    ct.scatter(out, (0,), addends[0][0] + addends[1])


@ct.kernel
def open_length_item(out, addends: tuple[tuple[int, ...], ct.Constant[int]]):
    ct.scatter(out, (0,), addends[0][0] + addends[1])


@ct.kernel
def structured_items(out, addends: tuple[tuple[int, ct.Constant[int]], ...]):
    ct.static_assert(addends[0][1] + addends[1][1] == 6)
    ct.scatter(out, (0,), addends[0][0] + addends[1][0])


@pytest.mark.parametrize("kernel,values,result", [
    (bare_tuple_item, [((1, 2), 3), ((5, 6), 3), ((5, 6), 7)], [4, 8, 12]),
    (open_length_item, [((1, 2), 3), ((5, 6), 3), ((5, 6), 7)], [4, 8, 12]),
    (structured_items, [((1, 2), (3, 4)), ((5, 2), (6, 4)), ((5, 1), (6, 5))], [4, 11, 11]),
], ids=["bare-tuple", "open-length-item", "structured-items"])
def test_only_the_constant_items_make_a_new_signature(run_kernel, kernel, values, result):
    out = np.zeros(1, np.int32)
    types = [classify_arguments(kernel, (out, v), on_device=False)[0] for v in values]
    assert types[0] == types[1] != types[2]
    for value, expected in zip(values, result):
        run_kernel(kernel, (1,), (out, value))
        assert out[0] == expected


static_shapes = Annotated[list, ct.ListAnnotation(element=ct.ArrayAnnotation(
    static_shape_dims=(0, 1)))]
static_strides = Annotated[list, ct.ListAnnotation(element=ct.ArrayAnnotation(
    static_stride_dims=(0,)))]


@ct.kernel
def summed_static_shapes(arrays: static_shapes, out):
    ct.static_assert(arrays[0].shape[0] >= 16)
    res = ct.zeros((16, 16), dtype=out.dtype)
    for i in range(len(arrays)):
        res += ct.load(arrays[i], (0, 0), (16, 16))
    ct.store(out, (0, 0), res)


@ct.kernel
def summed_static_strides(arrays: static_strides, out):
    ct.static_assert(arrays[0].strides[0] == 10)
    res = ct.zeros((4, 8), dtype=out.dtype)
    for i in range(len(arrays)):
        res += ct.load(arrays[i], (0, 0), (4, 8))
    ct.store(out, (0, 0), res)


def _padded(pitch, fill):
    return np.full((4, pitch), fill, np.int32)[:, :8]


def test_list_items_share_their_static_shapes_and_strides(run_kernel):
    arrays = [np.full((32, 16), v, np.int32) for v in (1, 2, 3)]
    out = np.zeros((16, 16), np.int32)
    run_kernel(summed_static_shapes, (1,), (arrays, out))
    np.testing.assert_array_equal(out, np.full((16, 16), 6))
    arrays = [_padded(10, v) for v in (1, 2, 3)]
    out = np.zeros((4, 8), np.int32)
    run_kernel(summed_static_strides, (1,), (arrays, out))
    np.testing.assert_array_equal(out, np.full((4, 8), 6))


@pytest.mark.parametrize("kernel,arrays,out,message", [
    (summed_static_shapes, [np.zeros((16, 16), np.int32), np.zeros((32, 16), np.int32)],
     np.zeros((16, 16), np.int32), "vary in static shape at axis 0 (16 and 32)"),
    (summed_static_strides, [_padded(10, 1), _padded(12, 2)], np.zeros((4, 8), np.int32),
     "vary in static stride at axis 0 (10 and 12)"),
], ids=["shape", "stride"])
def test_list_items_that_differ_in_a_static_value_are_refused(run_kernel, kernel, arrays, out,
                                                              message):
    with pytest.raises(ValueError, match=re.escape(message)):
        run_kernel(kernel, (1,), (arrays, out))
