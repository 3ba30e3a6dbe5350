"""Typing of the grid queries, ``load``/``store``, array views (``slice``, ``tiled_view``
and the views' methods, the regions of ``ct.partition`` arguments) and the grid helpers
``num_tiles`` and ``cdiv``."""

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, AttributeTemplate

from ...enums import MemoryOrder, MemoryScope, PaddingMode
from ...language import memory
from ...rules import memory as memory_rules
from ...rules.core import as_operand, not_a_tile_or_scalar
from ..abstract import operand
from ..compile_state import current
from ..intrinsics import partition_region, store_after_rings
from ..types import ArrayType, ConstantType, PartitionType, TiledViewType, TileType, \
    scalar_type
from .elementwise import infer_binary
from .templates import REQUIRED, bound_method, compile_time_value, constant_value, folded_type, \
    register_template, is_constant, is_scalar, registry


def infer_grid(op):
    def infer(values):
        memory_rules.grid_axis(operand(values["axis"]), op)
        return types.int32
    return infer


def _memory_options(values):
    """``(memory_order, memory_scope)`` of a load or store (the defaults where the call is
    an intrinsic standing for one, which has none)."""
    return (constant_value(values.get("memory_order", types.Omitted(MemoryOrder.WEAK))),
            constant_value(values.get("memory_scope", types.Omitted(MemoryScope.NONE))))


#: the hints of loads and stores (of arrays and tiled views), with their defaults
_VIEW_OPTIONS = (("check_bounds", True), ("latency", None), ("allow_tma", None))


def _check_hints(op, values):
    memory_rules.check_hints(op, *(operand(values[name]) if name in values else default
                                   for name, default in _VIEW_OPTIONS))


def infer_load(values):
    memory_rules.memory_options("load", *_memory_options(values))
    _check_hints("load()", values)
    spec, _, _, _ = memory_rules.load(operand(values["array"]), operand(values["index"]),
                                      constant_value(values["shape"]), constant_value(values["order"]),
                                      constant_value(values["padding_mode"]))
    if spec.shape == ():
        return scalar_type(spec.dtype)
    return TileType(spec.dtype, spec.shape, current().num_warps)


def infer_store(values):
    memory_rules.memory_options("store", *_memory_options(values))
    _check_hints("store()", values)
    tile = values["tile"]
    if not (isinstance(tile, TileType) or is_scalar(tile)):
        # (the interpreter's words, where it makes the value a tile)
        raise not_a_tile_or_scalar(operand(tile))
    memory_rules.store(operand(values["array"]), operand(values["index"]), operand(tile),
                       constant_value(values["order"]))
    return types.none


register_template(memory.bid, infer_grid("bid"))
register_template(memory.num_blocks, infer_grid("num_blocks"))
register_template(memory.load, infer_load)
register_template(memory.store, infer_store)
register_template(store_after_rings, infer_store, like=memory.store)


def infer_num_tiles(values):
    array = operand(values["array"])
    memory_rules.num_tiles(array, constant_value(values["axis"]), constant_value(values["shape"]),
                           constant_value(values["order"]))
    return array.index


def infer_cdiv(values):
    x, y = values["x"], values["y"]
    if is_constant(x) and is_constant(y):
        return folded_type(memory.cdiv(constant_value(x), constant_value(y)))
    if not (isinstance(x, TileType) or is_scalar(x)):  # (negated first, as the interpreter does)
        as_operand(operand(x))
    return infer_binary("floordiv")({"x": x, "y": y})



register_template(memory.num_tiles, infer_num_tiles)
register_template(memory.cdiv, infer_cdiv)


def infer_assume_divisible_by(values):
    x = values["x"]
    memory_rules.assume_divisible_by(operand(x), operand(values["divisor"]))
    return x


register_template(memory.assume_divisible_by, infer_assume_divisible_by)


@registry.register_attr
class ArrayAttributes(AttributeTemplate):
    key = ArrayType

    def resolve_dtype(self, array):
        return ConstantType(array.dtype)

    def resolve_ndim(self, array):
        return types.IntegerLiteral(array.ndim)

    def resolve_shape(self, array):
        return array.values_type("shape")

    def resolve_strides(self, array):
        return array.values_type("strides")


def infer_slice(array, values):
    axis = memory_rules.slice_axis(compile_time_value(values["axis"], "slice(axis=...)"),
                                   array.ndim)
    bounds = []
    for name in ("start", "stop"):
        bound = memory_rules.index_value(operand(values[name]), name)
        bounds.append(memory_rules.constant_value(bound, None))
    # constant bounds are checked now; the rest, with the length, when the kernel runs
    memory_rules.check_constant_slice_bounds(*bounds)
    return array.sliced(axis)


def infer_tiled_view(array, values):
    shape, steps, padding = memory_rules.tiled_view(
        array, constant_value(values["tile_shape"]), constant_value(values["padding_mode"]),
        constant_value(values["traversal_steps"]))
    return TiledViewType(array, shape, steps, padding)


class _PartitionRegionTemplate(AbstractTemplate):
    """The block's region of a ``ct.partition`` argument (the call the kernel's entry makes,
    :mod:`..frontend.partitions`): an array of :attr:`PartitionType.region`."""

    key = partition_region

    def generic(self, args, kws):
        if len(args) != 1 or kws or not isinstance(args[0], PartitionType):
            return None
        return signature(args[0].region, *args)


registry.register_global(partition_region)(_PartitionRegionTemplate)


ArrayAttributes.resolve_slice = bound_method("array.slice", (("axis", REQUIRED), ("start", REQUIRED),
                                                       ("stop", REQUIRED)), infer_slice)
ArrayAttributes.resolve_tiled_view = bound_method(
    "array.tiled_view", (("tile_shape", REQUIRED), ("padding_mode", PaddingMode.UNDETERMINED),
                         ("traversal_steps", None)), infer_tiled_view)


def infer_view_load(view, values):
    _check_hints("load()", values)
    memory_rules.tile_index(operand(values["index"]), view.array.ndim, "tiled view")
    return TileType(view.dtype, view.tile_shape, current().num_warps)


def infer_view_store(view, values):
    _check_hints("store()", values)
    memory_rules.tile_index(operand(values["index"]), view.array.ndim, "tiled view", "store")
    tile = values["tile"]
    if not (isinstance(tile, TileType) or is_scalar(tile)):
        raise not_a_tile_or_scalar(operand(tile))  # (as for ct.store, in the interpreter's words)
    memory_rules.view_store_tile(view, operand(tile))
    return types.none


def infer_view_num_tiles(view, values):
    memory_rules.slice_axis(compile_time_value(values["axis"], "num_tiles(axis=...)"),
                            view.array.ndim)
    return view.array.index


@registry.register_attr
class TiledViewAttributes(AttributeTemplate):
    key = TiledViewType

    def resolve_dtype(self, view):
        return ConstantType(view.dtype)

    def resolve_tile_shape(self, view):
        return types.Tuple([types.IntegerLiteral(n) for n in view.tile_shape])

    def resolve_traversal_steps(self, view):
        return types.Tuple([types.IntegerLiteral(n) for n in view.steps])

    def resolve_padding_mode(self, view):
        return ConstantType(view.padding_mode)

    resolve_load = bound_method("view.load", (("index", REQUIRED),) + _VIEW_OPTIONS, infer_view_load)
    resolve_store = bound_method("view.store", (("index", REQUIRED), ("tile", REQUIRED)) + _VIEW_OPTIONS,
                           infer_view_store)
    resolve_num_tiles = bound_method("view.num_tiles", (("axis", REQUIRED),), infer_view_num_tiles)

