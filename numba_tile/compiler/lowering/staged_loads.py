"""The code of pipelined loads' rings (planned in
:mod:`~numba_tile.compiler.planning.staged_loads`): where a ring's stages and ``mbarrier``
objects lie in shared memory, and a staged tile read into registers for the ops that do not
read shared memory themselves."""

from ..planning.staged_loads import BARRIER_BYTES
from ..types import storage_scalar_type
from . import arithmetic, asm
from .tiles import I32, load_shared, make_tile, register_coordinates, shared_base, \
    swizzled_offset, thread_coordinates


def ring_pointer(builder, pipeline):
    """The shared-memory address of the pipeline's first stage."""
    # the same in every thread and all along: no side effect, so it is read once
    size = asm.emit(builder, asm.DYNAMIC_SHARED_SIZE, result=I32)
    return builder.gep(shared_base(builder), [builder.sub(size, I32(pipeline.ring_end))])


def stage_of(builder, pipeline, iteration):
    iteration = builder.trunc(iteration, I32) if iteration.type.width > 32 else iteration
    return builder.urem(iteration, I32(pipeline.stages))


def stage_pointer(builder, pipeline, iteration, which):
    """The shared-memory address of load ``which`` in the stage of ``iteration``."""
    offset = builder.add(builder.mul(stage_of(builder, pipeline, iteration),
                                     I32(pipeline.stage_bytes)), I32(pipeline.offsets[which]))
    return builder.gep(ring_pointer(builder, pipeline), [offset])


def barrier_pointer(builder, pipeline, stage, free=False):
    """The ``mbarrier`` of ``stage`` (a TMA pipeline's), after the stages: the one its
    copies complete, or (``free``) the one its consumers complete when done with it."""
    offset = builder.add(I32(pipeline.stages * (pipeline.stage_bytes + (
        BARRIER_BYTES if free else 0))), builder.mul(stage, I32(BARRIER_BYTES)))
    return builder.gep(ring_pointer(builder, pipeline), [offset])


def staged_to_registers(context, builder, staged_type, pointer):
    """``(tile type, value)`` of a staged tile read into registers (for the ops that do not
    read shared memory themselves)."""
    tile_type = staged_type.as_tile()
    element = context.get_value_type(storage_scalar_type(staged_type.stored))
    typed = builder.bitcast(pointer, element.as_pointer(3))
    base = thread_coordinates(builder, tile_type.layout)
    values = []
    for register in range(tile_type.registers):
        row, column = register_coordinates(builder, base, tile_type.layout, register)[-2:]
        if staged_type.transposed:
            row, column = column, row
        index = swizzled_offset(builder, row, column, staged_type.stored_shape[-2:],
                                staged_type.dtype.itemsize)
        value = load_shared(builder, builder.gep(typed, [index]), element)
        values.append(arithmetic.convert(context, builder, value, staged_type.stored,
                                         staged_type.dtype))
    return tile_type, make_tile(context, builder, tile_type, values)
