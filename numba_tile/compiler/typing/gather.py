"""Typing of ``gather`` and ``scatter``, ``ct.Slice`` and ``load_advanced_indexing`` /
``store_advanced_indexing`` (the rules: :mod:`numba_tile.rules.gather`).

The result of ``gather`` takes the layout of its index tiles where one has the full shape
(``ct.arange``'s, most often), so that the indices need no conversion; all-scalar indices
give a 0-d tile."""

from numba.core import types

from ...language import gather
from ...rules import gather as gather_rules
from ..abstract import operand
from ..compile_state import current
from ..types import SliceType, TileType
from .templates import constant_value, register_template, result_tile


def _index_types(indices):
    return tuple(indices) if isinstance(indices, types.BaseTuple) else (indices,)


def element_type(dtype, shape, indices):
    """The tile type of a gather's result (a scatter's elements): the layout of a full-shape
    index tile, else the default one."""
    tiles = [t for t in _index_types(indices) if isinstance(t, TileType)]
    found = result_tile(dtype, tiles) if tiles else None
    if isinstance(found, TileType) and found.shape == tuple(shape):
        return found
    return TileType(dtype, tuple(shape), current().num_warps)


def infer_gather(values):
    dtype, shape, _, _, _ = gather_rules.gather(
        operand(values["array"]), operand(values["indices"]), operand(values["mask"]),
        operand(values["padding_value"]), constant_value(values["check_bounds"]),
        operand(values["latency"]))
    return element_type(dtype, shape, values["indices"])


def infer_scatter(values):
    gather_rules.scatter(operand(values["array"]), operand(values["indices"]),
                         operand(values["value"]), operand(values["mask"]),
                         constant_value(values["check_bounds"]), operand(values["latency"]))
    return types.none


register_template(gather.gather, infer_gather)
register_template(gather.scatter, infer_scatter)


def infer_slice(values):
    _, length = gather_rules.slice_parts(operand(values["start"]), operand(values["length"]))
    return SliceType(length)


def infer_load_advanced_indexing(values):
    """The result takes the default layout: its last axis, a slice of a row in the common
    case, is what vectorizes."""
    dtype, shape, _, _, _, _ = gather_rules.load_advanced_indexing(
        operand(values["array"]), operand(values["indices"]), operand(values["padding_mode"]))
    return TileType(dtype, shape, current().num_warps)


def infer_store_advanced_indexing(values):
    gather_rules.store_advanced_indexing(operand(values["array"]), operand(values["indices"]),
                                         operand(values["tile"]))
    return types.none


register_template(gather.Slice, infer_slice)
register_template(gather.load_advanced_indexing, infer_load_advanced_indexing)
register_template(gather.store_advanced_indexing, infer_store_advanced_indexing)
