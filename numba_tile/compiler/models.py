"""Data models: how arrays and tiles are laid out in LLVM values."""

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.cuda.models import register_model

from .lowering.arithmetic import storage_type
from .planning.staged_loads import PipelineType, StagedTileType
from .types import ArrayClassType, ArrayType, ConstantType, FloatLiteral, ListType, \
    PartitionType, RawMemoryType, RunTimeSliceType, SliceType, TiledViewType, TileType, \
    TypedConstant

register_model(ConstantType)(models.OpaqueModel)
register_model(ArrayClassType)(models.OpaqueModel)  # ct.Array: nothing at run time
register_model(PipelineType)(models.OpaqueModel)  # a pipeline has no run-time value
register_model(ListType)(models.UniTupleModel)  # a list argument is laid out as its tuple
# a slice of run-time bounds is Numba's slice (its type is one of its own: types.py)
register_model(RunTimeSliceType)(models.SliceModel)


@register_model(SliceType)
class SliceModel(models.PrimitiveModel):
    """A slice is its start, an int64, at run time (its length is in the type)."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(64))


@register_model(FloatLiteral)
class FloatLiteralModel(models.PrimitiveModel):
    """A float literal is carried as a double until it is cast to its use's type."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.DoubleType())


@register_model(ArrayType)
class ArrayModel(models.StructModel):
    """``{data pointer, shape[ndim], strides[ndim]}``; kernel arguments flatten to these."""

    def __init__(self, dmm, fe_type):
        members = [("data", types.CPointer(fe_type.element)),
                   ("shape", types.UniTuple(fe_type.index, fe_type.ndim)),
                   ("strides", types.UniTuple(fe_type.index, fe_type.ndim))]
        super().__init__(dmm, fe_type, members)


@register_model(TiledViewType)
class TiledViewModel(ArrayModel):
    """A tiled view is its array at run time."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type.array)


@register_model(PartitionType)
class PartitionModel(ArrayModel):
    """A partition is its whole array at run time (the tile shape is in its type)."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type.array)


@register_model(RawMemoryType)
class RawMemoryModel(ArrayModel):
    """Raw memory is its array at run time."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type.array)


@register_model(TileType)
class TileModel(models.UniTupleModel):
    """The elements this thread holds, one per register of the tile's layout."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, types.UniTuple(fe_type.element, fe_type.registers))


@register_model(TypedConstant)
class TypedConstantModel(models.PrimitiveModel):
    """A typed constant is carried as a value of its dtype (in storage form)."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, storage_type(fe_type.dtype))


@register_model(StagedTileType)
class StagedTileModel(models.PrimitiveModel):
    """A tile in its pipeline's stage is the shared-memory address of its first byte."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(8).as_pointer(3))
