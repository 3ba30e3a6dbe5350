"""Kernel arguments (``numba_tile.runtime.arguments``): the fast path of cached launches agrees with
the full classification, and launches and ``ct.compile`` accept what they should.

No GPU is needed: the classification only reads attributes, so GPU arrays are stood in for by
objects exposing ``__cuda_array_interface__`` and by fake CUDA torch tensors (a class of a
``torch`` module with the attributes a tensor has).
"""

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.runtime.arguments import classify_arguments, quick_signature
from numba_tile.compiler.types import ArrayType


class GPUArray:
    """A device array known only through ``__cuda_array_interface__`` (no memory behind)."""

    def __init__(self, shape, typestr="<f4", pointer=0x7f0000, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (pointer, False), "version": 3}


class _Device:
    def __init__(self, kind):
        self.type = kind


class FakeTorchDtype:
    __module__ = "torch"

    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __str__(self):
        return f"torch.{self.name}"


TORCH_FLOAT32, TORCH_FLOAT16 = FakeTorchDtype("float32", 4), FakeTorchDtype("float16", 2)


class FakeTensor:
    """What the launch reads of a torch tensor."""

    __module__ = "torch"

    def __init__(self, shape, strides, dtype=TORCH_FLOAT32, pointer=0x7f0000, device="cuda"):
        self.shape, self._strides, self.dtype, self._pointer = shape, strides, dtype, pointer
        self.device, self.is_cuda = _Device(device), device == "cuda"

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self._pointer

    def element_size(self):
        return self.dtype.itemsize


@ct.kernel
def plain(x):
    pass


@ct.kernel
def constant(x: ct.Constant):
    pass


@ct.kernel
def int64_scalar(x: ct.ScalarInt64):
    pass


@ct.kernel
def int64_indexed(x: ct.IndexedWithInt64):
    pass


HANDLED = {
    plain: [
        GPUArray((4096, 1024)), GPUArray([64, 32]), GPUArray((7, 5)), GPUArray((12,), "<f2"),
        GPUArray((16,), pointer=0x7f0004), GPUArray((3, 1, 8), "<f8"), GPUArray(()),
        GPUArray((0, 16)), GPUArray((32,), "|b1"), GPUArray((2, 48), "|i1"),
        GPUArray((2**15, 2**15 - 1), "<u2"),
        FakeTensor((64, 32), (32, 1)), FakeTensor((64, 32), (1, 64)),
        FakeTensor((8, 12), (12, 1), TORCH_FLOAT16), FakeTensor((8, 16), (16, 1), pointer=8),
        FakeTensor((4, 8), (-8, 1), pointer=0x7f0060), FakeTensor((1, 8), (0, 1)),
        FakeTensor((2, 8), (0, 1)), FakeTensor((8, 16), (32, 2)),
        FakeTensor((16,), (1,), TORCH_FLOAT16),
        0, 7, -3, 2**31 - 1, -2**31, True, False, 0.5, -1e30, float("inf"),
    ],
    constant: [0, 64, -5, 2**40, True, False],
}

NOT_HANDLED = [
    (plain, 2**31), (plain, -2**31 - 1), (plain, np.float32(1.0)), (plain, np.int64(3)),
    (plain, GPUArray((4, 8), strides=(32, 4))), (plain, GPUArray((2**16, 2**15))),
    (plain, FakeTensor((8,), (1,), device="cpu")), (plain, FakeTensor((), ())),
    (plain, (1, 2)), (plain, [GPUArray((8,))]), (plain, None), (plain, np.zeros(4)),
    (constant, 2.0), (constant, "abc"), (constant, None), (constant, (1, 2)),
    (constant, ct.float16), (int64_scalar, 5), (int64_indexed, GPUArray((8,))),
    (int64_indexed, FakeTensor((8,), (1,))),
]


def _cases(table):
    return [(kernel, value) for kernel, values in table.items() for value in values]


def _ids(cases):
    return [f"{kernel.__name__}-{type(value).__name__}-{i}" for i, (kernel, value)
            in enumerate(cases)]


@pytest.mark.parametrize("kernel,value", _cases(HANDLED), ids=_ids(_cases(HANDLED)))
def test_fast_path_flat_values_are_the_full_classifications(kernel, value):
    quick = quick_signature(kernel, (value,))
    assert quick is not None
    assert quick[1] == classify_arguments(kernel, (value,))[1]


@pytest.mark.parametrize("kernel", list(HANDLED), ids=lambda k: k.__name__)
def test_fast_path_keys_determine_the_full_types(kernel):
    """The fast path's key finds a kernel compiled for the full classification's types: one
    key never stands for two signatures."""
    types_by_key = {}
    for value in HANDLED[kernel]:
        key = quick_signature(kernel, (value,))[0]
        arg_types = classify_arguments(kernel, (value,))[0]
        assert types_by_key.setdefault(key, arg_types) == arg_types, value


def test_fast_path_of_several_arguments():
    @ct.kernel
    def mixed(a, n, x, flag, t, TILE: ct.Constant[int]):
        pass
    args = (GPUArray((64, 16), pointer=0x10000), 3, 0.25, True,
            FakeTensor((8, 4), (4, 1), pointer=0x20000), 128)
    assert quick_signature(mixed, args)[1] == classify_arguments(mixed, args)[1]


@pytest.mark.parametrize("kernel,value", NOT_HANDLED, ids=_ids(NOT_HANDLED))
def test_fast_path_leaves_other_kinds_to_the_full_classification(kernel, value):
    assert quick_signature(kernel, (value,)) is None


def test_arrays_need_int64_indices_at_a_launch():
    big = GPUArray((2**31,), "|i1")
    with pytest.raises(ValueError, match="needs int64 shapes or strides"):
        classify_arguments(plain, (big,))
    assert classify_arguments(int64_indexed, (big,))[1] == [0x7f0000, 2**31, 1]


@pytest.mark.parametrize("value", [np.zeros(8, np.float32), (np.zeros(8, np.float32), 2),
                                   [np.zeros(8, np.float32)]], ids=["array", "tuple", "list"])
def test_host_arrays_are_compiled_for_but_not_launched(value):
    with pytest.raises(ValueError, match="Input array is not on a CUDA device"):
        classify_arguments(plain, (value,))
    arg_types, _ = classify_arguments(plain, (value,), on_device=False)
    assert "TileArray(float32, 1, int32" in str(arg_types[0])


def test_what_is_no_argument_says_so_in_each_mode():
    with pytest.raises(TypeError, match="'x' of type object is not supported: pass GPU arrays"):
        classify_arguments(plain, (object(),))
    with pytest.raises(TypeError, match="'x' of type object is not supported: pass arrays, bool, "
                                        "int, float, dtypes or tuples of those$"):
        classify_arguments(plain, (object(),), on_device=False)


def test_an_array_type_stands_for_its_arrays_in_compile_only():
    array_type = ArrayType(ct.float16, 2, aligned=True)
    assert classify_arguments(plain, (array_type,), on_device=False)[0] == (array_type,)
    with pytest.raises(TypeError, match="is not supported"):
        classify_arguments(plain, (array_type,))


def test_strides_of_part_elements_are_not_aligned():
    odd = GPUArray((4, 8), "<f4", strides=(34, 4))
    assert classify_arguments(plain, (odd,))[0][0] == ArrayType(ct.float32, 2)
