"""Bad inputs that leaked raw Python exceptions from the interpreter (issue 52, items 1 and 5):
what tile-code objects lack (attributes, builtins, ``[]``, indices past a tuple's end), calls
of what tile code may not call (an annotation, another kernel), ``range`` misuse, a
combiner of the wrong arity, a tile of too many dimensions, writes into a read-only array,
and the host-side call errors of a Python list or a mistyped ``Constant``. Each fails alike
in the interpreter and in ``ct.compile(arch="sm_90")`` (tests/bad_inputs.py).
"""

import copy
import datetime
import json
import os
import random
import statistics
import sys
import textwrap
import time
import typing
from time import perf_counter

import numpy as np
import pytest

import numba_tile as ct
from bad_inputs import BadInput, arrays, check, interpret, module_file, statement_kernel

TTE, TVE = ct.TileTypeError, ct.TileValueError


def tile(x):
    """A loaded tile of the first 4 elements of ``x`` (a helper: not the failing line)."""
    return ct.load(x, (0,), (4,))


class ReadOnly:
    """A read-only host array known by its array interface (what a NumPy array with
    ``writeable=False`` or a JAX array is to a kernel), which the harness passes as it is."""

    def __init__(self, n=4, dtype=np.float32):
        self.array = np.ones(n, dtype)
        self.array.flags.writeable = False

    @property
    def __array_interface__(self):
        return self.array.__array_interface__


class ReadOnlyDevice:
    """A read-only array on the GPU (a JAX array's ``__cuda_array_interface__`` says
    read-only), for the launch; without a GPU, the same read-only array on the host."""

    def __init__(self, n=4):
        self.host = np.ones(n, np.float32)
        self.host.flags.writeable = False
        self.device = None

    @staticmethod
    def _gpu():
        from numba import cuda  # optional: only the GPU runs need numba-cuda's driver
        return cuda if cuda.is_available() else None

    @property
    def __cuda_array_interface__(self):
        cuda = self._gpu()
        if cuda is None:
            raise AttributeError("__cuda_array_interface__")
        if self.device is None:
            self.device = cuda.to_device(self.host)
        interface = dict(self.device.__cuda_array_interface__)
        interface["data"] = (interface["data"][0], True)
        return interface

    @property
    def __array_interface__(self):
        if self._gpu() is not None:
            raise AttributeError("__array_interface__")
        return self.host.__array_interface__

    def copy_to_host(self):
        return self.host

    def copy_to_device(self, host):
        pass


F32 = arrays(np.float32, np.float32)
I32 = arrays(np.int32, np.int32)
TWO_D = (np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
NO_ATTRIBUTE = r"has no attribute '{}'"
CASES = []


def case(name, kernel, args, error, message, line, **kwargs):
    CASES.append(BadInput(name, kernel, args, error, message, line, **kwargs))


# -- attributes a tile-code object does not have --------------------------------------------
case("tile_has_no_T", statement_kernel(lambda x, out: tile(x).T), F32, TTE,
     r"^Tile has no attribute 'T'$", "tile(x).T")
case("tile_has_no_size", statement_kernel(lambda x, out: tile(x).size), F32, TTE,
     r"^Tile has no attribute 'size'$", "tile(x).size")
case("tile_has_no_slice", statement_kernel(lambda x, out: tile(x).slice), F32, TTE,
     r"^Tile has no attribute 'slice'$", "tile(x).slice")
case("tile_has_no_get_raw_memory",
     statement_kernel(lambda x, out: tile(x).get_raw_memory), F32, TTE,
     r"^Tile has no attribute 'get_raw_memory'$", "tile(x).get_raw_memory")
case("tile_has_no_tiled_view", statement_kernel(lambda x, out: tile(x).tiled_view), F32, TTE,
     r"^Tile has no attribute 'tiled_view'$", "tile(x).tiled_view")
case("tile_has_no_mT", statement_kernel(lambda x, out: tile(x).mT), F32, TTE,
     r"^Tile has no attribute 'mT'$", "tile(x).mT")
case("tile_has_no_real", statement_kernel(lambda x, out: tile(x).real), F32, TTE,
     r"^Tile has no attribute 'real'$", "tile(x).real")
case("tile_has_no_flatten", statement_kernel(lambda x, out: tile(x).flatten), F32, TTE,
     r"^Tile has no attribute 'flatten'$", "tile(x).flatten")
case("tile_has_no_numpy", statement_kernel(lambda x, out: tile(x).numpy), F32, TTE,
     r"^Tile has no attribute 'numpy'$", "tile(x).numpy")
case("tile_has_no_tolist", statement_kernel(lambda x, out: tile(x).tolist), F32, TTE,
     r"^Tile has no attribute 'tolist'$", "tile(x).tolist")
case("tile_has_no_nbytes", statement_kernel(lambda x, out: tile(x).nbytes), F32, TTE,
     r"^Tile has no attribute 'nbytes'$", "tile(x).nbytes")
case("tile_has_no_itemsize", statement_kernel(lambda x, out: tile(x).itemsize), F32, TTE,
     r"^Tile has no attribute 'itemsize'$", "tile(x).itemsize")
case("tile_has_no_device", statement_kernel(lambda x, out: tile(x).device), F32, TTE,
     r"^Tile has no attribute 'device'$", "tile(x).device")
case("tile_has_no_data", statement_kernel(lambda x, out: tile(x).data), F32, TTE,
     r"^Tile has no attribute 'data'$", "tile(x).data")
case("tile_has_no_load", statement_kernel(lambda x, out: tile(x).load), F32, TTE,
     r"^Tile has no attribute 'load'$", "tile(x).load")
case("tile_has_no_strides", statement_kernel(lambda x, out: tile(x).strides), F32, TTE,
     r"^Tile has no attribute 'strides'$", "tile(x).strides")
case("t_T", statement_kernel(lambda x, out: ct.store(out, (0,), tile(x).T)), F32, TTE,
     r"^Tile has no attribute 'T'$", "tile(x).T")
case("t_slice_call", statement_kernel(lambda x, out: tile(x).slice(0, 0, 2)), F32, TTE,
     r"^Tile has no attribute 'slice'$", "tile(x).slice(0, 0, 2)")
case("t_get_raw_memory_call", statement_kernel(lambda x, out: tile(x).get_raw_memory()), F32,
     TTE, r"^Tile has no attribute 'get_raw_memory'$", "tile(x).get_raw_memory()")
case("x_size",
     statement_kernel(lambda x, out: ct.store(out, (0,), ct.full((4,), x.size, ct.float32))),
     F32, TTE, r"^Array has no attribute 'size'$", "x.size")
case("array_has_no_size", statement_kernel(lambda x, out: x.size), F32, TTE,
     r"^Array has no attribute 'size'$", "x.size")
case("array_has_no_T", statement_kernel(lambda x, out: x.T), F32, TTE,
     r"^Array has no attribute 'T'$", "x.T")
case("array_has_no_load", statement_kernel(lambda x, out: x.load), F32, TTE,
     r"^Array has no attribute 'load'$", "x.load")
case("array_has_no_store", statement_kernel(lambda x, out: x.store), F32, TTE,
     r"^Array has no attribute 'store'$", "x.store")
case("array_has_no_item", statement_kernel(lambda x, out: x.item), F32, TTE,
     r"^Array has no attribute 'item'$", "x.item")
case("array_has_no_reshape", statement_kernel(lambda x, out: x.reshape), F32, TTE,
     r"^Array has no attribute 'reshape'$", "x.reshape")
case("array_has_no_nbytes", statement_kernel(lambda x, out: x.nbytes), F32, TTE,
     r"^Array has no attribute 'nbytes'$", "x.nbytes")
case("array_has_no_itemsize", statement_kernel(lambda x, out: x.itemsize), F32, TTE,
     r"^Array has no attribute 'itemsize'$", "x.itemsize")
case("array_has_no_astype", statement_kernel(lambda x, out: x.astype), F32, TTE,
     r"^Array has no attribute 'astype'$", "x.astype")
case("array_has_no_flatten", statement_kernel(lambda x, out: x.flatten), F32, TTE,
     r"^Array has no attribute 'flatten'$", "x.flatten")
case("array_has_no_copy", statement_kernel(lambda x, out: x.copy), F32, TTE,
     r"^Array has no attribute 'copy'$", "x.copy")
case("array_has_no_sum", statement_kernel(lambda x, out: x.sum), F32, TTE,
     r"^Array has no attribute 'sum'$", "x.sum")
case("array_has_no_fill", statement_kernel(lambda x, out: x.fill), F32, TTE,
     r"^Array has no attribute 'fill'$", "x.fill")


@ct.kernel
def view_attribute(x, out):
    tv = x.tiled_view((4,))
    print(tv.shape)


@ct.kernel
def view_method(x, out):
    tv = x.tiled_view((4,))
    tv.load_tile((0,))


@ct.kernel
def raw_memory_attribute(x, out):
    memory = x.get_raw_memory()
    print(memory.shape)


@ct.kernel
def list_attribute(xs, out):
    print(xs.dtype)


@ct.kernel
def list_method(xs, out):
    xs.append(out)


case("tiled_view_has_no_shape", view_attribute, F32, TTE,
     r"^TiledView has no attribute 'shape'$", "tv.shape")
case("tiled_view_has_no_load_tile", view_method, F32, TTE,
     r"^TiledView has no attribute 'load_tile'$", "tv.load_tile")
case("raw_memory_has_no_shape", raw_memory_attribute, F32, TTE,
     r"^RawArrayMemory has no attribute 'shape'$", "memory.shape")
case("list_has_no_dtype", list_attribute, ([F32[0], F32[1]], F32[1]), TTE,
     r"^List has no attribute 'dtype'$", "xs.dtype")
case("list_has_no_append", list_method, ([F32[0], F32[1]], F32[1]), TTE,
     r"^List has no attribute 'append'$", "xs.append")


# -- indices past the end of a shape, strides or a list argument ----------------------------
@ct.kernel
def shape_index_5(x, out):
    print(x.shape[5])


@ct.kernel
def strides_index_minus_3(x, out):
    print(x.strides[-3])


@ct.kernel
def shape_index_of_2d(x, out):
    print(x.shape[2])


@ct.kernel
def tile_shape_index(x, out):
    print(tile(x).shape[1])


@ct.kernel
def tile_shape_index_negative(x, out):
    print(tile(x).shape[-2])


@ct.kernel
def view_tile_shape_index(x, out):
    print(x.tiled_view((4,)).tile_shape[3])


@ct.kernel
def list_index_5(xs, out):
    ct.store(out, (0,), ct.load(xs[5], (0,), (4,)))


@ct.kernel
def list_index_minus_3(xs, out):
    ct.store(out, (0,), ct.load(xs[-3], (0,), (4,)))


@ct.kernel
def tuple_index_2(x, out):
    print((1, 2)[2])


@ct.kernel
def shape_tuple_index_in_loop(x, out):
    for i in ct.static_iter(range(3)):
        print(x.shape[i])


case("shape_index_5", shape_index_5, F32, TTE,
     r"^Index 5 is out of range for a tuple of length 1$", "x.shape[5]")
case("strides_index_minus_3", strides_index_minus_3, F32, TTE,
     r"^Index -3 is out of range for a tuple of length 1$", "x.strides[-3]")
case("shape_index_of_2d", shape_index_of_2d, TWO_D, TTE,
     r"^Index 2 is out of range for a tuple of length 2$", "x.shape[2]")
case("tile_shape_index", tile_shape_index, F32, TTE,
     r"^Index 1 is out of range for a tuple of length 1$", "tile(x).shape[1]")
case("tile_shape_index_negative", tile_shape_index_negative, F32, TTE,
     r"^Index -2 is out of range", "tile(x).shape[-2]")
case("view_tile_shape_index", view_tile_shape_index, F32, TTE,
     r"^Index 3 is out of range", "tile_shape[3]")
case("list_index_5", list_index_5, ([F32[0], F32[1]], F32[1]), TTE,
     r"^Index 5 is out of range for a tuple of length 2$", "xs[5]")
case("list_index_minus_3", list_index_minus_3, ([F32[0], F32[1]], F32[1]), TTE,
     r"^Index -3 is out of range for a tuple of length 2$", "xs[-3]")
case("tuple_index_2", tuple_index_2, F32, TTE,
     r"^Index 2 is out of range for a tuple of length 2$", "(1, 2)[2]")
case("shape_index_in_static_loop", shape_tuple_index_in_loop, TWO_D, TTE,
     r"^Index 2 is out of range for a tuple of length 2$", "x.shape[i]")
case("shape_index_5_in_a_lambda",
     statement_kernel(lambda x, out: ct.full((4,), x.shape[5], ct.float32)), F32, TTE,
     r"^Index 5 is out of range", "x.shape[5]")
case("strides_index_in_a_lambda",
     statement_kernel(lambda x, out: ct.full((4,), x.strides[-3], ct.float32)), F32, TTE,
     r"^Index -3 is out of range", "x.strides[-3]")


# -- [] of an array or a view ---------------------------------------------------------------
INDEXED = r"^An? {} cannot be indexed with \[\]; load a tile from it with ct.load"
ARRAY_INDEXED = r"^Arrays are not directly subscriptable. Use load\(\) or gather\(\) instead"


@ct.kernel
def view_indexed(x, out):
    tv = x.tiled_view((4,))
    print(tv[0])


@ct.kernel
def list_item_indexed(xs, out):
    print(xs[0][0])


@ct.kernel
def raw_memory_indexed(x, out):
    memory = x.get_raw_memory()
    print(memory[0])


case("x_index_0", statement_kernel(lambda x, out: ct.full((4,), x[0], ct.float32)), F32, TTE,
     ARRAY_INDEXED, "x[0]")
case("x_index_2d", statement_kernel(lambda x, out: x[0, 1]), TWO_D, TTE,
     ARRAY_INDEXED, "x[0, 1]")
case("x_index_slice", statement_kernel(lambda x, out: x[0:2]), F32, TTE,
     ARRAY_INDEXED, "x[0:2]")
case("x_index_bid", statement_kernel(lambda x, out: x[ct.bid(0)]), F32, TTE,
     ARRAY_INDEXED, "x[ct.bid(0)]")
case("x_index_tile", statement_kernel(lambda x, out: x[ct.arange(4, dtype=ct.int32)]), F32,
     TTE, ARRAY_INDEXED, "x[ct.arange")
case("view_indexed", view_indexed, F32, TTE, INDEXED.format("TiledView"), "tv[0]")
case("list_item_indexed", list_item_indexed, ([F32[0], F32[1]], F32[1]), TTE,
     ARRAY_INDEXED, "xs[0][0]")
case("raw_memory_indexed", raw_memory_indexed, F32, TTE, INDEXED.format("RawArrayMemory"),
     "memory[0]")


# -- builtins that do not apply to an array, a view, a tile ----------------------------------
MEMORY = r"^{}\(\) of an Array is not supported in tile code; it is memory, not values"
#: builtins that make Python containers: refused whatever they are given
REFUSED = r"^{}\(\) is not supported in device code$"
ITERATED_ARRAY = r"^An Array cannot be iterated; load a tile from it \(ct.load\)"
ITERATED_TILE = r"^Tiles cannot be iterated; use ct.extract or a reduction$"
LEN = r"^len\(\) of an? {} is not supported in tile code; use its .shape$"

case("len_x", statement_kernel(lambda x, out: ct.full((4,), len(x), ct.float32)), F32, TTE,
     LEN.format("Array"), "len(x)")
case("len_t", statement_kernel(lambda x, out: ct.full((4,), len(tile(x)), ct.float32)), F32,
     TTE, LEN.format("Tile"), "len(tile(x))")
case("len_raw_memory", statement_kernel(lambda x, out: len(x.get_raw_memory())), F32, TTE,
     LEN.format("RawArrayMemory"), "len(x.get_raw_memory())")
case("len_view", statement_kernel(lambda x, out: len(x.tiled_view((4,)))), F32, TTE,
     LEN.format("TiledView"), "len(x.tiled_view")
case("len_2d_x", statement_kernel(lambda x, out: len(x)), TWO_D, TTE, LEN.format("Array"),
     "len(x)")
case("float_x", statement_kernel(lambda x, out: float(x)), F32, TTE, MEMORY.format("float"),
     "float(x)")
case("int_x", statement_kernel(lambda x, out: int(x)), F32, TTE, MEMORY.format("int"),
     "int(x)")
case("bool_x", statement_kernel(lambda x, out: bool(x)), F32, TTE, MEMORY.format("bool"),
     "bool(x)")
case("abs_x", statement_kernel(lambda x, out: abs(x)), F32, TTE, MEMORY.format("abs"),
     "abs(x)")
case("round_x", statement_kernel(lambda x, out: round(x)), F32, TTE, MEMORY.format("round"),
     "round(x)")
case("hash_x", statement_kernel(lambda x, out: hash(x)), F32, TTE, MEMORY.format("hash"),
     "hash(x)")
case("hex_x", statement_kernel(lambda x, out: hex(x)), F32, TTE, MEMORY.format("hex"),
     "hex(x)")
case("oct_x", statement_kernel(lambda x, out: oct(x)), F32, TTE, MEMORY.format("oct"),
     "oct(x)")
case("bin_x", statement_kernel(lambda x, out: bin(x)), F32, TTE, MEMORY.format("bin"),
     "bin(x)")
case("chr_x", statement_kernel(lambda x, out: chr(x)), F32, TTE, MEMORY.format("chr"),
     "chr(x)")
case("ord_x", statement_kernel(lambda x, out: ord(x)), F32, TTE, MEMORY.format("ord"),
     "ord(x)")
case("complex_x", statement_kernel(lambda x, out: complex(x)), F32, TTE, MEMORY.format("complex"),
     "complex(x)")
case("float_x_in_full",
     statement_kernel(lambda x, out: ct.full((4,), float(x), ct.float32)), F32, TTE,
     MEMORY.format("float"), "float(x)")
case("divmod_x", statement_kernel(lambda x, out: divmod(x, 2)), F32, TTE,
     MEMORY.format("divmod"), "divmod(x, 2)")
case("pow_x", statement_kernel(lambda x, out: pow(x, 2)), F32, TTE, MEMORY.format("pow"),
     "pow(x, 2)")
case("min_of_x_and_tile", statement_kernel(lambda x, out: min(x, tile(out))), F32, TTE,
     MEMORY.format("min"), "min(x, tile(out))")
case("max_of_tile_and_x", statement_kernel(lambda x, out: max(tile(out), x)), F32, TTE,
     MEMORY.format("max"), "max(tile(out), x)")
case("int_of_view", statement_kernel(lambda x, out: int(x.tiled_view((4,)))), F32, TTE,
     r"^int\(\) of a TiledView is not supported in tile code", "int(x.tiled_view")
case("float_of_list", statement_kernel(lambda xs, out: float(xs)), ([F32[0], F32[1]], F32[1]),
     TTE, r"^float\(\) of a List is not supported in tile code; a list argument holds arrays",
     "float(xs)")
case("abs_of_list", statement_kernel(lambda xs, out: abs(xs)), ([F32[0], F32[1]], F32[1]),
     TTE, r"^abs\(\) of a List is not supported", "abs(xs)")
case("iter_x", statement_kernel(lambda x, out: iter(x)), F32, TTE, ITERATED_ARRAY, "iter(x)")
case("iter_t", statement_kernel(lambda x, out: iter(tile(x))), F32, TTE, ITERATED_TILE,
     "iter(tile(x))")
case("sum_x", statement_kernel(lambda x, out: sum(x)), F32, TTE, ITERATED_ARRAY, "sum(x)")
case("sum_t", statement_kernel(lambda x, out: sum(tile(x))), F32, TTE, ITERATED_TILE,
     "sum(tile(x))")
case("min_x", statement_kernel(lambda x, out: min(x)), F32, TTE, ITERATED_ARRAY, "min(x)")
case("min_t", statement_kernel(lambda x, out: min(tile(x))), F32, TTE, ITERATED_TILE,
     "min(tile(x))")
case("max_x", statement_kernel(lambda x, out: max(x)), F32, TTE, ITERATED_ARRAY, "max(x)")
case("max_t", statement_kernel(lambda x, out: max(tile(x))), F32, TTE, ITERATED_TILE,
     "max(tile(x))")
case("sorted_x", statement_kernel(lambda x, out: sorted(x)), F32, TTE, ITERATED_ARRAY, "sorted(x)")
case("sorted_t", statement_kernel(lambda x, out: sorted(tile(x))), F32, TTE, ITERATED_TILE,
     "sorted(tile(x))")
case("tuple_x", statement_kernel(lambda x, out: tuple(x)), F32, TTE, ITERATED_ARRAY, "tuple(x)")
case("tuple_t", statement_kernel(lambda x, out: tuple(tile(x))), F32, TTE, ITERATED_TILE,
     "tuple(tile(x))")
case("list_x", statement_kernel(lambda x, out: list(x)), F32, TTE,
     REFUSED.format("list"), "list(x)")
case("list_t", statement_kernel(lambda x, out: list(tile(x))), F32, TTE, REFUSED.format("list"),
     "list(tile(x))")
case("set_x", statement_kernel(lambda x, out: set(x)), F32, TTE, REFUSED.format("set"), "set(x)")
case("set_t", statement_kernel(lambda x, out: set(tile(x))), F32, TTE, REFUSED.format("set"),
     "set(tile(x))")
case("frozenset_x", statement_kernel(lambda x, out: frozenset(x)), F32, TTE,
     REFUSED.format("frozenset"),
     "frozenset(x)")
case("frozenset_t", statement_kernel(lambda x, out: frozenset(tile(x))), F32, TTE,
     REFUSED.format("frozenset"),
     "frozenset(tile(x))")
case("enumerate_x", statement_kernel(lambda x, out: enumerate(x)), F32, TTE, ITERATED_ARRAY,
     "enumerate(x)")
case("enumerate_t", statement_kernel(lambda x, out: enumerate(tile(x))), F32, TTE, ITERATED_TILE,
     "enumerate(tile(x))")
case("any_x", statement_kernel(lambda x, out: any(x)), F32, TTE, ITERATED_ARRAY, "any(x)")
case("any_t", statement_kernel(lambda x, out: any(tile(x))), F32, TTE, ITERATED_TILE,
     "any(tile(x))")
case("all_x", statement_kernel(lambda x, out: all(x)), F32, TTE, ITERATED_ARRAY, "all(x)")
case("all_t", statement_kernel(lambda x, out: all(tile(x))), F32, TTE, ITERATED_TILE,
     "all(tile(x))")
case("reversed_x", statement_kernel(lambda x, out: reversed(x)), F32, TTE, ITERATED_ARRAY,
     "reversed(x)")
case("reversed_t", statement_kernel(lambda x, out: reversed(tile(x))), F32, TTE, ITERATED_TILE,
     "reversed(tile(x))")
case("next_x", statement_kernel(lambda x, out: next(x)), F32, TTE, ITERATED_ARRAY, "next(x)")
case("next_t", statement_kernel(lambda x, out: next(tile(x))), F32, TTE, ITERATED_TILE,
     "next(tile(x))")
case("zip_x", statement_kernel(lambda x, out: zip(x)), F32, TTE, ITERATED_ARRAY, "zip(x)")
case("zip_t", statement_kernel(lambda x, out: zip(tile(x))), F32, TTE, ITERATED_TILE,
     "zip(tile(x))")
case("dict_x", statement_kernel(lambda x, out: dict(x)), F32, TTE,
     REFUSED.format("dict"), "dict(x)")
case("dict_t", statement_kernel(lambda x, out: dict(tile(x))), F32, TTE, REFUSED.format("dict"),
     "dict(tile(x))")
case("sum_x_start", statement_kernel(lambda x, out: sum(x, 0)), F32, TTE, ITERATED_ARRAY,
     "sum(x, 0)")
case("map_t", statement_kernel(lambda x, out: map(abs, tile(x))), F32, TTE, ITERATED_TILE,
     "map(abs, tile(x))")
case("filter_t", statement_kernel(lambda x, out: filter(None, tile(x))), F32, TTE,
     ITERATED_TILE, "filter(None, tile(x))")
case("iter_view", statement_kernel(lambda x, out: iter(x.tiled_view((4,)))), F32, TTE,
     r"^A TiledView cannot be iterated", "iter(x.tiled_view")
case("round_t", statement_kernel(lambda x, out: round(tile(x))), F32, TTE,
     r"^round\(\) of a Tile is not supported in tile code; use astype\(\)", "round(tile(x))")
case("hash_t", statement_kernel(lambda x, out: hash(tile(x))), F32, TTE,
     r"^hash\(\) of a Tile is not supported in tile code; use astype\(\)", "hash(tile(x))")
case("complex_t", statement_kernel(lambda x, out: complex(tile(x))), F32, TTE,
     r"^complex\(\) of a Tile is not supported in tile code; use astype\(\)", "complex(tile(x))")
case("hex_t", statement_kernel(lambda x, out: hex(tile(x))), F32, TTE,
     r"^hex\(\) of a Tile is not supported in tile code; use astype\(\)", "hex(tile(x))")
case("chr_t", statement_kernel(lambda x, out: chr(tile(x))), F32, TTE,
     r"^chr\(\) of a Tile is not supported in tile code; use astype\(\)", "chr(tile(x))")
case("len_of_scalar", statement_kernel(lambda x, out: len(ct.bid(0))), F32, TTE,
     LEN.format("Tile"), "len(ct.bid(0))")
case("round_of_scalar", statement_kernel(lambda x, out: round(ct.bid(0))), F32, TTE,
     r"^round\(\) of a Tile is not supported", "round(ct.bid(0))")
case("sum_of_scalar", statement_kernel(lambda x, out: sum(ct.bid(0))), F32, TTE,
     ITERATED_TILE, "sum(ct.bid(0))")


# -- operators on memory, calls of values, loops over arrays and tiles -----------------------
OPERATOR = r"^Operator '{}' is not supported on an? {}: it is memory, not values; load a " \
           r"tile from it first \(ct.load\)$"
ITERATED_VIEW = r"^A TiledView cannot be iterated"


@ct.kernel
def arrays_compared(x, out):
    if x == out:
        pass


@ct.kernel
def arrays_not_equal(x, out):
    print(x != out)


@ct.kernel
def array_compared_to_number(x, out):
    print(x == 1)


@ct.kernel
def loop_over_array(x, out):
    for v in x:
        pass


@ct.kernel
def loop_over_tile(x, out):
    for v in tile(x):
        pass


@ct.kernel
def loop_over_view(x, out):
    for v in x.tiled_view((4,)):
        pass


@ct.kernel
def number_in_array(x, out):
    if 1 in x:
        pass


@ct.kernel
def augmented_array(x, out):
    x += 1


case("x_plus_1", statement_kernel(lambda x, out: x + 1), F32, TTE, OPERATOR.format(r"\+", "Array"),
     "x + 1")
case("1_plus_x", statement_kernel(lambda x, out: 1 + x), F32, TTE, OPERATOR.format(r"\+", "Array"),
     "1 + x")
case("x_minus_tile", statement_kernel(lambda x, out: x - tile(out)), F32, TTE,
     OPERATOR.format("-", "Array"), "x - tile(out)")
case("tile_times_x", statement_kernel(lambda x, out: tile(out) * x), F32, TTE,
     r"^Expected a tile or a scalar for the right operand, got 1-d float32 array$",
     "tile(out) * x")
case("x_div_2", statement_kernel(lambda x, out: x / 2), F32, TTE, OPERATOR.format("/", "Array"),
     "x / 2")
case("x_floordiv_2", statement_kernel(lambda x, out: x // 2), F32, TTE,
     OPERATOR.format("//", "Array"), "x // 2")
case("x_mod_2", statement_kernel(lambda x, out: x % 2), F32, TTE, OPERATOR.format("%", "Array"),
     "x % 2")
case("x_pow_2", statement_kernel(lambda x, out: x ** 2), F32, TTE,
     OPERATOR.format(r"\*\*", "Array"), "x ** 2")
case("x_and_1", statement_kernel(lambda x, out: x & 1), I32, TTE, OPERATOR.format("&", "Array"),
     "x & 1")
case("x_or_1", statement_kernel(lambda x, out: x | 1), I32, TTE,
     OPERATOR.format(r"\|", "Array"), "x | 1")
case("x_xor_1", statement_kernel(lambda x, out: x ^ 1), I32, TTE,
     OPERATOR.format(r"\^", "Array"), "x ^ 1")
case("x_shift_1", statement_kernel(lambda x, out: x << 1), I32, TTE,
     OPERATOR.format("<<", "Array"), "x << 1")
case("x_rshift_1", statement_kernel(lambda x, out: x >> 1), I32, TTE,
     OPERATOR.format(">>", "Array"), "x >> 1")
case("neg_x", statement_kernel(lambda x, out: -x), F32, TTE, OPERATOR.format("-", "Array"), "-x")
case("invert_x", statement_kernel(lambda x, out: ~x), I32, TTE, OPERATOR.format("~", "Array"),
     "~x")
case("x_less_than_1", statement_kernel(lambda x, out: x < 1), F32, TTE,
     OPERATOR.format("<", "Array"), "x < 1")
case("x_at_least_tile", statement_kernel(lambda x, out: x >= tile(out)), F32, TTE,
     OPERATOR.format(">=", "Array"), "x >= tile(out)")
case("view_plus_1", statement_kernel(lambda x, out: x.tiled_view((4,)) + 1), F32, TTE,
     OPERATOR.format(r"\+", "TiledView"), "x.tiled_view((4,)) + 1")
case("raw_memory_times_2", statement_kernel(lambda x, out: x.get_raw_memory() * 2), F32, TTE,
     OPERATOR.format(r"\*", "RawArrayMemory"), "x.get_raw_memory() * 2")
case("arrays_compared", arrays_compared, F32, TTE, OPERATOR.format("==", "Array"), "x == out")
case("arrays_not_equal", arrays_not_equal, F32, TTE, OPERATOR.format("!=", "Array"), "x != out")
case("array_compared_to_number", array_compared_to_number, F32, TTE,
     OPERATOR.format("==", "Array"), "x == 1")
case("augmented_array", augmented_array, F32, TTE, OPERATOR.format(r"\+", "Array"), "x += 1")
case("call_x", statement_kernel(lambda x, out: x(1)), F32, TTE,
     r"^Cannot call an object of type Array$", "x(1)")
case("call_tile", statement_kernel(lambda x, out: tile(x)(0)), F32, TTE,
     r"^Cannot call an object of type Tile$", "tile(x)(0)")
case("call_scalar", statement_kernel(lambda x, out: ct.bid(0)()), F32, TTE,
     r"^Cannot call an object of type Tile$", "ct.bid(0)()")
case("call_view", statement_kernel(lambda x, out: x.tiled_view((4,))(0)), F32, TTE,
     r"^Cannot call an object of type TiledView$", "x.tiled_view((4,))(0)")
case("loop_over_array", loop_over_array, F32, TTE, ITERATED_ARRAY, "for v in x")
case("loop_over_tile", loop_over_tile, F32, TTE, ITERATED_TILE, "for v in tile(x)")
case("loop_over_view", loop_over_view, F32, TTE, ITERATED_VIEW, "for v in x.tiled_view")
case("number_in_array", number_in_array, F32, TTE, ITERATED_ARRAY, "1 in x")


# -- calls of what tile code may not call --------------------------------------------------
@ct.kernel
def other(x, out):
    ct.store(out, (0,), tile(x))


@ct.kernel
def calls_another_kernel(x, out):
    other(x, out)


@ct.kernel
def calls_itself(x, out):
    calls_itself(x, out)


def helper_calling_a_kernel(x, out):
    other(x, out)


@ct.kernel
def helper_calls_a_kernel(x, out):
    helper_calling_a_kernel(x, out)


ANNOTATION = r"is a kernel parameter annotation \(n: ct.Constant\[int\]\); it cannot be " \
             r"called in tile code$"
KERNEL_CALL = r"^Tile kernel '{}' cannot be called from tile code; a kernel is started with " \
              r"ct.launch\(\)"

case("ct_Constant_call",
     statement_kernel(lambda x, out: ct.full((4,), ct.Constant(4), ct.float32)), F32, TTE,
     r"^ct.Constant " + ANNOTATION, "ct.Constant(4)")
case("ct_Constant_int_call", statement_kernel(lambda x, out: ct.Constant[int](4)), F32, TTE,
     r"^typing.Annotated\[int, ConstantAnnotation\(\)\] " + ANNOTATION,
     "ct.Constant[int](4)")
case("ct_ScalarInt64_call", statement_kernel(lambda x, out: ct.ScalarInt64(4)), F32, TTE,
     ANNOTATION, "ct.ScalarInt64(4)")
case("ct_IndexedWithInt64_call", statement_kernel(lambda x, out: ct.IndexedWithInt64(x)),
     F32, TTE, ANNOTATION, "ct.IndexedWithInt64(x)")
case("ct_ArrayAnnotation_call", statement_kernel(lambda x, out: ct.ArrayAnnotation()), F32,
     TTE, r"^ct.ArrayAnnotation " + ANNOTATION, "ct.ArrayAnnotation()")
case("ct_ConstantAnnotation_call", statement_kernel(lambda x, out: ct.ConstantAnnotation()),
     F32, TTE, r"^ct.ConstantAnnotation " + ANNOTATION, "ct.ConstantAnnotation()")
case("ct_ScalarAnnotation_call",
     statement_kernel(lambda x, out: ct.ScalarAnnotation(dtype=ct.int64)), F32, TTE,
     r"^ct.ScalarAnnotation " + ANNOTATION, "ct.ScalarAnnotation(dtype=ct.int64)")
case("another_kernel", calls_another_kernel, F32, TTE, KERNEL_CALL.format("other"),
     "other(x, out)")
case("kernel_calls_itself", calls_itself, F32, TTE, KERNEL_CALL.format("calls_itself"),
     "calls_itself(x, out)")
case("helper_calls_a_kernel", helper_calls_a_kernel, F32, TTE, KERNEL_CALL.format("other"),
     "other(x, out)")
case("kernel_in_a_lambda", statement_kernel(lambda x, out: other(x, out)), F32, TTE,
     KERNEL_CALL.format("other"), "other(x, out)")

LIBRARY = r"^{}\(\) is not supported in device code: tile code calls tile operations \(ct.\*\), " \
          r"math functions and its own helper functions$"
case("time_time", statement_kernel(lambda x, out: time.time()), F32, TTE,
     LIBRARY.format(r"time\.time"), "time.time()")
case("perf_counter_imported", statement_kernel(lambda x, out: perf_counter()), F32, TTE,
     LIBRARY.format(r"time\.perf_counter"), "perf_counter()")
case("random_random", statement_kernel(lambda x, out: random.random()), F32, TTE,
     LIBRARY.format(r"random\.random"), "random.random()")
case("random_randint", statement_kernel(lambda x, out: random.randint(0, 4)), F32, TTE,
     LIBRARY.format(r"random\.randint"), "random.randint(0, 4)")
case("os_getpid", statement_kernel(lambda x, out: os.getpid()), F32, TTE,
     LIBRARY.format(r"\w+\.getpid"), "os.getpid()")
case("statistics_mean", statement_kernel(lambda x, out: statistics.mean((1, 2))), F32, TTE,
     LIBRARY.format(r"statistics\.mean"), "statistics.mean((1, 2))")
case("copy_copy", statement_kernel(lambda x, out: copy.copy(x)), F32, TTE,
     LIBRARY.format(r"copy\.copy"), "copy.copy(x)")
case("textwrap_dedent", statement_kernel(lambda x, out: textwrap.dedent("a")), F32, TTE,
     LIBRARY.format(r"textwrap\.dedent"), 'textwrap.dedent("a")')
case("json_dumps", statement_kernel(lambda x, out: json.dumps(1)), F32, TTE,
     LIBRARY.format(r"json\.dumps"), "json.dumps(1)")
case("sys_getsizeof", statement_kernel(lambda x, out: sys.getsizeof(x)), F32, TTE,
     LIBRARY.format(r"sys\.getsizeof"), "sys.getsizeof(x)")
case("datetime_now", statement_kernel(lambda x, out: datetime.datetime.now()), F32, TTE,
     LIBRARY.format(r"datetime\.now"), "datetime.datetime.now()")


# -- range -----------------------------------------------------------------------------------
@ct.kernel
def range_of_four(x, out):
    for i in range(0, 8, 1, 1):
        pass


@ct.kernel
def range_of_none(x, out):
    for i in range():
        pass


@ct.kernel
def range_step_zero(x, out):
    for i in range(0, 8, 0):
        ct.store(out, (0,), tile(x))


@ct.kernel
def range_constant_step_zero(x, out, STEP: ct.Constant[int]):
    for i in range(0, 8, STEP):
        ct.store(out, (0,), tile(x))


@ct.kernel
def range_keyword(x, out):
    for i in range(stop=4):
        pass


@ct.kernel
def range_folded_step_zero(x, out):
    for i in range(0, 8, 2 - 2):
        pass


RANGE_ARGUMENTS = r"^Invalid number of arguments: {}: range\(\) takes 1 to 3 \(stop; start, " \
                  r"stop; or start, stop, step\)$"
case("range_of_four", range_of_four, F32, TTE, RANGE_ARGUMENTS.format(4), "range(0, 8, 1, 1)")
case("range_of_none", range_of_none, F32, TTE, RANGE_ARGUMENTS.format(0), "range()")
case("range_step_zero", range_step_zero, F32, TTE, r"^Step must be positive, got 0$",
     "range(0, 8, 0)")
case("range_constant_step_zero", range_constant_step_zero, F32 + (0,), TTE,
     r"^Step must be positive, got 0", "range(0, 8, STEP)")
case("range_folded_step_zero", range_folded_step_zero, F32, TTE,
     r"^Step must be positive, got 0$", "range(0, 8, 2 - 2)")
case("range_keyword", range_keyword, F32, TTE,
     r"^range\(\) takes no keyword arguments, got 'stop'$", "range(stop=4)")

# -- keepdims (and the other constant flags checked by their kind) --------------------------
case("sum_keepdims_yes",
     statement_kernel(lambda x, out: ct.sum(tile(x), axis=0, keepdims="yes")), F32, TTE,
     r"^Invalid argument \"keepdims\" of sum\(\): Expected a boolean constant, got str 'yes'$",
     'keepdims="yes"')
case("prod_keepdims_yes",
     statement_kernel(lambda x, out: ct.prod(tile(x), axis=0, keepdims="yes")), F32, TTE,
     r"^Invalid argument \"keepdims\" of prod\(\): Expected a boolean constant, got str 'yes'$",
     'keepdims="yes"')
case("max_keepdims_yes",
     statement_kernel(lambda x, out: ct.max(tile(x), axis=0, keepdims="yes")), F32, TTE,
     r"^Invalid argument \"keepdims\" of max\(\): Expected a boolean constant, got str 'yes'$",
     'keepdims="yes"')
case("min_keepdims_yes",
     statement_kernel(lambda x, out: ct.min(tile(x), axis=0, keepdims="yes")), F32, TTE,
     r"^Invalid argument \"keepdims\" of min\(\): Expected a boolean constant, got str 'yes'$",
     'keepdims="yes"')
case("argmax_keepdims_yes",
     statement_kernel(lambda x, out: ct.argmax(tile(x), axis=0, keepdims="yes")), F32, TTE,
     r"^Invalid argument \"keepdims\" of argmax\(\): Expected a boolean constant, got str 'yes'$",
     'keepdims="yes"')
case("argmin_keepdims_yes",
     statement_kernel(lambda x, out: ct.argmin(tile(x), axis=0, keepdims="yes")), F32, TTE,
     r"^Invalid argument \"keepdims\" of argmin\(\): Expected a boolean constant, got str 'yes'$",
     'keepdims="yes"')
case("sum_keepdims_int", statement_kernel(lambda x, out: ct.sum(tile(x), 0, keepdims=1)), F32,
     TTE, r'^Invalid argument "keepdims" of sum\(\): Expected a boolean constant, got '
          r"constant 1$", "keepdims=1")
case("sum_keepdims_none",
     statement_kernel(lambda x, out: ct.sum(tile(x), 0, keepdims=None)), F32, TTE,
     r'^Invalid argument "keepdims" of sum\(\): Expected a boolean constant, got NoneType None$',
     "keepdims=None")
case("sum_keepdims_in_store",
     statement_kernel(lambda x, out: ct.store(out, (0,), ct.sum(tile(x), 0, keepdims="y"))),
     F32, TTE, r'keepdims', 'keepdims="y"')


# -- a combining function of the wrong arity -------------------------------------------------
def three(a, b, c):
    return a + b


def one(a):
    return a


def four(a, b, c, d):
    return a + c, b + d


def two_of_three_required(a, b, c, d=0):
    return a + b


ARITY = r"^func of {}\(\) is called with {} arguments \({}\), but {}\(\) takes {} positional " \
        r"arguments$"
case("scan_combiner_of_three", statement_kernel(lambda x, out: ct.scan(tile(x), 0, three, 0)),
     F32, TTE, ARITY.format("scan", 2, "two values", "three", 3), "ct.scan(tile(x), 0, three, 0)")
case("scan_combiner_of_one", statement_kernel(lambda x, out: ct.scan(tile(x), 0, one, 0)), F32,
     TTE, ARITY.format("scan", 2, "two values", "one", 1), "ct.scan(tile(x), 0, one, 0)")
case("scan_combiner_of_four_for_one_tile",
     statement_kernel(lambda x, out: ct.scan(tile(x), 0, four, 0)), F32, TTE,
     ARITY.format("scan", 2, "two values", "four", 4), "ct.scan(tile(x), 0, four, 0)")
case("scan_combiner_of_two_for_two_tiles",
     statement_kernel(lambda x, out: ct.scan((tile(x), tile(out)), 0, operator_add, (0, 0))),
     F32, TTE, ARITY.format("scan", 4, "two groups of 2 values, one per tile", "operator_add", 2),
     "operator_add")
case("scan_combiner_with_defaults",
     statement_kernel(lambda x, out: ct.scan(tile(x), 0, two_of_three_required, 0)), F32, TTE,
     ARITY.format("scan", 2, "two values", "two_of_three_required", "3 to 4"),
     "two_of_three_required")
case("scan_lambda_of_three",
     statement_kernel(lambda x, out: ct.scan(tile(x), 0, lambda a, b, c: a, 0)), F32, TTE,
     ARITY.format("scan", 2, "two values", "<lambda>", 3), "lambda a, b, c: a")
case("reduce_combiner_of_three",
     statement_kernel(lambda x, out: ct.reduce(tile(x), 0, three, 0)), F32, TTE,
     ARITY.format("reduce", 2, "two values", "three", 3), "ct.reduce(tile(x), 0, three, 0)")
case("reduce_combiner_of_one", statement_kernel(lambda x, out: ct.reduce(tile(x), 0, one, 0)), F32,
     TTE, ARITY.format("reduce", 2, "two values", "one", 1), "ct.reduce(tile(x), 0, one, 0)")
case("reduce_combiner_of_four_for_one_tile",
     statement_kernel(lambda x, out: ct.reduce(tile(x), 0, four, 0)), F32, TTE,
     ARITY.format("reduce", 2, "two values", "four", 4), "ct.reduce(tile(x), 0, four, 0)")
case("reduce_combiner_of_two_for_two_tiles",
     statement_kernel(lambda x, out: ct.reduce((tile(x), tile(out)), 0, operator_add, (0, 0))),
     F32, TTE, ARITY.format("reduce", 4, "two groups of 2 values, one per tile", "operator_add", 2),
     "operator_add")
case("reduce_combiner_with_defaults",
     statement_kernel(lambda x, out: ct.reduce(tile(x), 0, two_of_three_required, 0)), F32, TTE,
     ARITY.format("reduce", 2, "two values", "two_of_three_required", "3 to 4"),
     "two_of_three_required")
case("reduce_lambda_of_three",
     statement_kernel(lambda x, out: ct.reduce(tile(x), 0, lambda a, b, c: a, 0)), F32, TTE,
     ARITY.format("reduce", 2, "two values", "<lambda>", 3), "lambda a, b, c: a")


def operator_add(a, b):
    return a + b


@ct.kernel
def scan_with_a_closure_of_three(x, out):
    t = tile(x)
    ct.store(out, (0,), ct.scan(t, 0, lambda a, b, c: a + b + c, 0))


case("scan_closure_in_kernel_of_three", scan_with_a_closure_of_three, F32, TTE,
     ARITY.format("scan", 2, "two values", "<lambda>", 3), "ct.scan(t, 0, lambda")


# -- a tile of too many dimensions ----------------------------------------------------------
RANK = r"^A tile of {} dimensions has too many; a tile may have at most 32$"


@ct.kernel
def reshaped_to_rank_40(x, out):
    print(ct.reshape(tile(x), (4,) + (1,) * 39))


@ct.kernel
def expanded_to_rank_33(x, out):
    t = tile(x)
    for i in ct.static_iter(range(32)):
        t = ct.expand_dims(t, 0)


case("full_rank_100", statement_kernel(lambda x, out: ct.full((1,) * 100, 0, ct.float32)),
     F32, TVE, RANK.format(100), "ct.full((1,) * 100")
case("zeros_rank_33", statement_kernel(lambda x, out: ct.zeros((1,) * 33, ct.float32)), F32,
     TVE, RANK.format(33), "ct.zeros((1,) * 33")
case("ones_rank_64", statement_kernel(lambda x, out: ct.ones((1,) * 64, ct.int32)), F32, TVE,
     RANK.format(64), "ct.ones((1,) * 64")
case("reshaped_to_rank_40", reshaped_to_rank_40, F32, TVE, RANK.format(40), "ct.reshape")
case("broadcast_to_rank_33",
     statement_kernel(lambda x, out: ct.broadcast_to(tile(x), (1,) * 32 + (4,))), F32, TVE,
     RANK.format(33), "ct.broadcast_to")
case("expanded_to_rank_33", expanded_to_rank_33, F32, TVE, RANK.format(33),
     "ct.expand_dims(t, 0)")

# -- writes into a read-only array ----------------------------------------------------------
READ_ONLY = r"^{}\(\) writes into a read-only array \(a NumPy array with writeable=False, a " \
            r"JAX array...\); pass a writable array"


@ct.kernel
def store_into_view(x, out):
    tv = out.tiled_view((4,))
    tv.store((0,), tile(x))


@ct.kernel
def atomic_into_view(x, out):
    tv = out.tiled_view((4,))
    tv.atomic_store_add((0,), tile(x))


@ct.kernel
def store_into_slice(x, out):
    part = out.slice(0, 0, 4)
    ct.store(part, (0,), tile(x))


INDICES = "ct.arange(4, dtype=ct.int32)"
case("store_read_only", statement_kernel(lambda x, out: ct.store(out, (0,), tile(x))),
     (F32[0], ReadOnly()), TTE, READ_ONLY.format("store"), "ct.store(out, (0,), tile(x))")
case("store_scalar_read_only", statement_kernel(lambda x, out: ct.store(out, (0,), 1.0)),
     (F32[0], ReadOnly()), TTE, READ_ONLY.format("store"), "ct.store(out, (0,), 1.0)")
case("scatter_read_only",
     statement_kernel(lambda x, out: ct.scatter(out, ct.arange(4, dtype=ct.int32), tile(x))),
     (F32[0], ReadOnly()), TTE, READ_ONLY.format("scatter"), "ct.scatter(out")
case("atomic_add_read_only",
     statement_kernel(lambda x, out: ct.atomic_add(out, ct.arange(4, dtype=ct.int32),
                                                   tile(x))),
     (F32[0], ReadOnly()), TTE, READ_ONLY.format("atomic_add"), "ct.atomic_add(out")
case("atomic_max_read_only",
     statement_kernel(lambda x, out: ct.atomic_max(out, ct.arange(4, dtype=ct.int32),
                                                   tile(x))),
     (I32[0], ReadOnly(dtype=np.int32)), TTE, READ_ONLY.format("atomic_max"),
     "ct.atomic_max(out")
case("atomic_xchg_read_only",
     statement_kernel(lambda x, out: ct.atomic_xchg(out, ct.arange(4, dtype=ct.int32),
                                                    tile(x))),
     (I32[0], ReadOnly(dtype=np.int32)), TTE, READ_ONLY.format("atomic_xchg"),
     "ct.atomic_xchg(out")
case("atomic_cas_read_only",
     statement_kernel(lambda x, out: ct.atomic_cas(out, ct.arange(4, dtype=ct.int32),
                                                   tile(x), tile(x))),
     (I32[0], ReadOnly(dtype=np.int32)), TTE, READ_ONLY.format("atomic_cas"),
     "ct.atomic_cas(out")
case("store_advanced_indexing_read_only",
     statement_kernel(lambda x, out: ct.store_advanced_indexing(
         out, (ct.arange(4, dtype=ct.int32),), tile(x))),
     (F32[0], ReadOnly()), TTE, READ_ONLY.format("store_advanced_indexing"),
     "ct.store_advanced_indexing(")
case("view_store_read_only", store_into_view, (F32[0], ReadOnly()), TTE,
     READ_ONLY.format("TiledView.store"), "tv.store((0,), tile(x))")
case("view_atomic_read_only", atomic_into_view, (F32[0], ReadOnly()), TTE,
     READ_ONLY.format("TiledView.atomic_store_add"), "tv.atomic_store_add")
case("store_into_slice_read_only", store_into_slice, (F32[0], ReadOnly()), TTE,
     READ_ONLY.format("store"), "ct.store(part, (0,), tile(x))")
case("store_into_read_only_gpu_array", store_into_view, (F32[0], ReadOnlyDevice()), TTE,
     READ_ONLY.format("TiledView.store"), "tv.store((0,), tile(x))",
     runs=("interpret", "launch"))


# -- host-side call errors: a Python list where an array goes, a mistyped Constant ---------
@ct.kernel
def takes_constant(x, out, N: ct.Constant[int]):
    ct.store(out, (0,), tile(x))


@ct.kernel
def takes_float_constant(x, out, SCALE: ct.Constant[float]):
    ct.store(out, (0,), tile(x) * SCALE)


@ct.kernel
def takes_bool_constant(x, out, FLAG: ct.Constant[bool]):
    ct.store(out, (0,), tile(x))


@ct.kernel
def takes_str_constant(x, out, MODE: ct.Constant[str]):
    ct.store(out, (0,), tile(x))


@ct.kernel
def takes_constant_tuple(x, out, cfg: tuple[ct.Constant[int], int]):
    ct.store(out, (0,), tile(x))


@ct.kernel
def takes_a_list(xs: typing.Annotated[list, ct.ListAnnotation(element=ct.ArrayAnnotation())],
                 out):
    ct.store(out, (0,), ct.load(xs[0], (0,), (4,)))


LOAD = statement_kernel(lambda x, out: ct.store(out, (0,), tile(x)))
LIST = r"^Argument '{}' is a Python list of {}: pass a NumPy, CuPy or torch array " \
       r"\(np.asarray\({}\)\) where the kernel takes an array; a list argument holds arrays$"
CONSTANT = r"^Argument '{}' is annotated ct.Constant\[{}\] but was given {} \({}\): pass an? {}$"
case("list_of_floats_as_array", LOAD, ([1.0, 2.0, 3.0, 4.0], F32[1]), TypeError,
     LIST.format("x", "float", "x"), None)
case("list_of_ints_as_array", LOAD, ([1, 2, 3, 4], F32[1]), TypeError,
     LIST.format("x", "int", "x"), None)
case("list_as_output", LOAD, (F32[0], [0.0] * 4), TypeError,
     LIST.format("out", "float", "out"), None)
case("nested_list_as_array", LOAD, ([[1.0, 2.0], [3.0, 4.0]], F32[1]), TypeError,
     LIST.format("x", "list", "x"), None)
case("list_of_an_array_and_a_float", LOAD, ([F32[0], 1.0], F32[1]), TypeError,
     LIST.format("x", "float", "x"), None)
case("list_of_bools_as_array", LOAD, ([True, False], F32[1]), TypeError,
     LIST.format("x", "bool", "x"), None)
case("annotated_list_of_floats", takes_a_list, ([1.0, 2.0], F32[1]), TypeError,
     LIST.format("xs", "float", "xs"), None)
case("constant_int_given_float", takes_constant, F32 + (64.0,), TypeError,
     CONSTANT.format("N", "int", "64.0", "float", "int"), None)
case("constant_int_given_str", takes_constant, F32 + ("64",), TypeError,
     CONSTANT.format("N", "int", "'64'", "str", "int"), None)
case("constant_int_given_numpy_float", takes_constant, F32 + (np.float32(64),), TypeError,
     CONSTANT.format("N", "int", "64.0", "float", "int"), None)
case("constant_float_given_str", takes_float_constant, F32 + ("0.5",), TypeError,
     CONSTANT.format("SCALE", "float", "'0.5'", "str", "float"), None)
case("constant_float_given_none", takes_float_constant, F32 + (None,), TypeError,
     CONSTANT.format("SCALE", "float", "None", "NoneType", "float"), None)
case("constant_bool_given_int", takes_bool_constant, F32 + (1,), TypeError,
     CONSTANT.format("FLAG", "bool", "1", "int", "bool"), None)
case("constant_str_given_int", takes_str_constant, F32 + (3,), TypeError,
     CONSTANT.format("MODE", "str", "3", "int", "str"), None)
case("constant_tuple_item_given_float", takes_constant_tuple, F32 + ((2.5, 3),), TypeError,
     CONSTANT.format(r"cfg\[0\]", "int", "2.5", "float", "int"), None)

# what is no argument of a kernel at all: the same words from the launch and the compile
UNSUPPORTED = r"^Argument '{}' of type {} is not supported: pass arrays, bool, int, float, " \
              r"dtypes or tuples of those$"
for _name, _value in [("object", object()), ("bytes", b"ab"), ("set", {1.0}),
                      ("complex", 1j), ("dict", {"a": 1}), ("type", int)]:
    case(f"{_name}_as_array", LOAD, (_value, F32[1]), TypeError,
         UNSUPPORTED.format("x", _name), None)
MIXED = r"^Argument 'xs': a list must hold items of one kind \(arrays of one dtype and rank\), " \
        r"got {}; pass a tuple to mix them$"
case("list_of_two_dtypes", takes_a_list, ([F32[0], I32[0]], F32[1]), TypeError,
     MIXED.format("float32 1-d array, int32 1-d array"), None)
case("list_of_two_ranks", takes_a_list, ([F32[0], np.ones((2, 2), np.float32)], F32[1]),
     TypeError, MIXED.format("float32 1-d array, float32 2-d array"), None)


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_fails_alike(case):
    check(case, module_file(__name__))


def test_the_catalogue_is_large():
    assert len(CASES) >= 110


# -- what is accepted alike ------------------------------------------------------------------
LONG_SUM = "t" + " + t" * 399


exec(f"""
@ct.kernel
def long_expression(x, out):
    t = tile(x)
    ct.store(out, (0,), {LONG_SUM})
""")


def test_an_expression_of_400_terms_runs_in_both():
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), long_expression, (x, out))  # noqa: F821 (made by exec above)
    assert (out == 400).all()
    ct.compile(long_expression, (x, out), arch="sm_90")  # noqa: F821


@ct.kernel
def numpy_scalar(x, out):
    ct.store(out, (0,), tile(x) * np.float32(2))


def test_a_numpy_scalar_is_a_constant_of_its_dtype_in_both():
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    interpret(numpy_scalar, (x, out))
    with ct.interpret():
        ct.launch(0, (1,), numpy_scalar, (x, out))
    assert (out == x * 2).all()
    ct.compile(numpy_scalar, (x, out), arch="sm_90")


@pytest.mark.parametrize("combiner", [lambda a, b, c=0: a + b, lambda *values: values[0]])
def test_combiners_that_take_two_values_are_accepted(combiner):
    @ct.kernel
    def scan_it(x, out):
        ct.store(out, (0,), ct.scan(tile(x), 0, combiner, 0))
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), scan_it, (x, out))
    ct.compile(scan_it, (x, out), arch="sm_90")


def test_reading_a_read_only_array_is_accepted():
    kernel = statement_kernel(lambda x, out: ct.store(out, (0,), tile(x)))
    out = np.zeros(4, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), kernel, (ReadOnly(), out))
    assert (out == 1).all()
    ct.compile(kernel, (ReadOnly(), out), arch="sm_90")


def test_lists_of_arrays_are_still_accepted():
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), takes_a_list, ([x, x], out))
    assert (out == 1).all()
    ct.compile(takes_a_list, ([x, x], out), arch="sm_90")


@pytest.mark.parametrize("args", [F32[0], None, [F32[0], F32[1]]], ids=["array", "none", "list"])
def test_kernel_arguments_that_are_no_tuple_fail_alike(args):
    messages = set()
    for action in (lambda: ct.launch(0, (1,), LOAD, args), lambda: ct.compile(LOAD, args)):
        with pytest.raises(TypeError, match=r"^kernel_args must be a tuple \(one item per kernel "
                                            r"parameter\), got ") as caught, ct.interpret():
            action()
        messages.add(str(caught.value))
    assert len(messages) == 1, messages
