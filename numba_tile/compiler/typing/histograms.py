"""Typing of ``histogram`` (the rule: :mod:`numba_tile.rules.histograms`): an int32 tile of
shape ``(bins,)`` in the default layout."""

from ... import dtypes as d
from ...language import histograms
from ...rules.histograms import histogram as histogram_rule
from ..types import TileType
from .templates import constant_value, register_template, tile_argument


def _infer(values):
    x = tile_argument(values, "histogram")
    return TileType(d.int32, histogram_rule(x.dtype, constant_value(values["bins"])),
                    x.num_warps)


register_template(histograms.histogram, _infer)
