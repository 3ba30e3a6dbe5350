"""Typing of the reductions: sum, prod, max, min, argmax, argmin."""

from ...language import reductions
from ...rules import reductions as reduction_rules
from ..types import TileType
from .templates import constant_value, register_template, tile_argument, float_options


def infer_reduction(op):
    def infer(values):
        x = tile_argument(values, op)
        float_options(op, values, x.dtype)  # (of the input, as cuTile checks them)
        keepdims = constant_value(values["keepdims"])
        spec, axes = reduction_rules.reduction(op, x, constant_value(values["axis"]), keepdims)
        layout = x.layout.collapse(axes)
        if not keepdims:  # the collapsed coordinates are all 0: dropping them moves nothing
            for axis in sorted(axes, reverse=True):
                layout = layout.slice(axis)
        return TileType(spec.dtype, spec.shape, x.num_warps, layout)
    return infer


for _op in reduction_rules.REDUCTIONS:
    register_template(getattr(reductions, _op), infer_reduction(_op))
