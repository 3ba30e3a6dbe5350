"""Typing of the calls of pipelined loads (:mod:`~numba_tile.compiler.frontend.pipelining`
writes them; :mod:`~numba_tile.compiler.planning.staged_loads` plans their stages)."""

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ... import dtypes as d
from ...enums import PaddingMode
from ...language import memory
from ..abstract import constant_of
from ..compile_state import current
from ..planning.staged_loads import StagedTileType, grouped_loads, pipeline_type, resident_type
from ..intrinsics import pipeline_advance, pipeline_begin, pipeline_distance, pipeline_end, \
    pipeline_issue, pipeline_last, pipeline_prepare, pipeline_produce, pipeline_producer, \
    pipeline_tile, pipeline_wait, producer_registers, consumer_registers, producer_exit, \
    consumer_turns_begin, consumer_turn_take, consumer_turn_give, consumer_turns_end, \
    resident_produce, resident_release, resident_tile, staged_as_tfloat32, staged_reshape
from ..types import TileType
from .memory import infer_load
from .shapes import infer_reshape
from .templates import constant_value, registry


class _PipelineTemplate(AbstractTemplate):
    prefer_literal = True


@registry.register_global(pipeline_begin)
class PipelineBeginTemplate(_PipelineTemplate):
    key = pipeline_begin

    def generic(self, args, kws):
        pipeline_id = constant_of(args[0])
        return signature(pipeline_type(pipeline_id, grouped_loads(args[1:])), *args)


def _register_fixed_result(fn, result):
    """A template typing every call of ``fn`` as returning ``result``."""
    class Template(_PipelineTemplate):
        key = fn

        def generic(self, args, kws):
            return signature(result, *args)
    Template.__name__ = f"Pipeline_{fn.__name__}"
    registry.register_global(fn)(Template)


for _fn, _result in ((pipeline_prepare, types.none),
                     (pipeline_distance, types.int32), (pipeline_wait, types.none),
                     (pipeline_advance, types.none), (pipeline_end, types.none),
                     (pipeline_last, types.boolean), (pipeline_producer, types.boolean),
                     (pipeline_produce, types.none), (producer_registers, types.none),
                     (consumer_registers, types.none), (producer_exit, types.none),
                     (consumer_turns_begin, types.none), (consumer_turn_take, types.none),
                     (consumer_turn_give, types.none), (consumer_turns_end, types.none),
                     (resident_produce, types.none), (resident_release, types.none)):
    _register_fixed_result(_fn, _result)


@registry.register_global(pipeline_issue)
class PipelineIssueTemplate(_PipelineTemplate):
    key = pipeline_issue

    def generic(self, args, kws):
        if not isinstance(args[1], types.IntegerLiteral):
            return None
        return signature(types.none, *args)


@registry.register_global(pipeline_tile)
class PipelineTileTemplate(_PipelineTemplate):
    key = pipeline_tile

    def generic(self, args, kws):
        pipeline, which, _, array, index, shape, mode, order = args
        if not isinstance(which, types.IntegerLiteral):
            return None
        if pipeline.pipelined:
            dtype, tile_shape, transposed = pipeline.tiles[which.literal_value]
            # (a tile the TMA rounded holds tfloat32 values, read only as such)
            result = StagedTileType(dtype, tile_shape, current().num_warps,
                                    pipeline.pipeline_id, transposed=transposed,
                                    stored=d.tfloat32 if pipeline.rounded[which.literal_value]
                                    else None)
        else:
            result = plain_load_signature(array, index, shape, mode, order)[0].return_type
        return signature(result, *args)


@registry.register_global(resident_tile)
class ResidentTileTemplate(_PipelineTemplate):
    key = resident_tile

    def generic(self, args, kws):
        resident = resident_type(constant_of(args[0]), args[1:])
        if resident is None:
            result = plain_load_signature(*args[1:])[0].return_type
        else:
            dtype, tile_shape, transposed = resident.tiles[0]
            result = StagedTileType(dtype, tile_shape, current().num_warps,
                                    resident.pipeline_id, transposed=transposed)
        return signature(result, *args)


@registry.register_global(staged_as_tfloat32)
class StagedAsTfloat32Template(_PipelineTemplate):
    key = staged_as_tfloat32

    def generic(self, args, kws):
        (tile,) = args
        if isinstance(tile, StagedTileType) and tile.dtype is d.float32:
            # rounded where read, unless the copy rounded it
            stored = d.tfloat32 if tile.stored is d.tfloat32 else d.float32
            return signature(StagedTileType(d.tfloat32, tile.shape, tile.num_warps,
                                            tile.pipeline_id, stored=stored,
                                            transposed=tile.transposed), tile)
        if isinstance(tile, StagedTileType):
            tile = tile.as_tile()
        if isinstance(tile, TileType):  # an astype of the tile in registers
            return signature(tile.with_dtype(d.tfloat32), *args)
        return None


@registry.register_global(staged_reshape)
class StagedReshapeTemplate(_PipelineTemplate):
    key = staged_reshape

    def generic(self, args, kws):
        tile, shape = args
        if isinstance(tile, StagedTileType):
            wanted = constant_value(shape)  # (run-time values are not ints)
            if stays_staged(tile.shape, wanted):
                return signature(StagedTileType(
                    tile.dtype, wanted, tile.num_warps, tile.pipeline_id, stored=tile.stored,
                    transposed=tile.transposed), *args)
        if isinstance(tile, StagedTileType):
            tile = tile.as_tile()
        return signature(infer_reshape({"x": tile, "shape": shape}), *args)


def stays_staged(shape, wanted):
    """True where reshaping a staged tile of ``shape`` to ``wanted`` only drops or adds
    leading axes of length 1: the matrix in the stage is the same.

    >>> from numba_tile.compiler.typing.pipelines import stays_staged
    >>> stays_staged((1, 1, 64, 128), (64, 128)), stays_staged((1, 64, 128), (64, 1, 128))
    (True, False)
    """
    return isinstance(wanted, tuple) and len(wanted) >= 2 and \
        all(type(n) is int for n in wanted) and tuple(wanted[-2:]) == tuple(shape[-2:]) and \
        all(n == 1 for n in tuple(shape[:-2]) + tuple(wanted[:-2]))


def plain_load_signature(array, index, shape, mode, order):
    mode = types.Omitted(PaddingMode.UNDETERMINED) if isinstance(mode, types.NoneType) \
        else mode
    order = types.Omitted("C") if isinstance(order, types.NoneType) else order
    result = infer_load({"array": array, "index": index, "shape": shape,
                                      "order": order, "padding_mode": mode})
    return signature(result, array, index, shape, order, mode), memory.load
