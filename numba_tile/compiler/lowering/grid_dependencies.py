"""Lowering of programmatic dependent launch's controls to PTX ``griddepcontrol``
(compute capability 9.0 and later; nothing before, where such launches do not exist)."""

from ...language import grid_dependencies
from ..compile_state import current
from .asm import GRID_DEPENDENCY_LAUNCH_DEPENDENTS, GRID_DEPENDENCY_WAIT, emit
from .registry import lower


def _control(instruction):
    def lowering(context, builder, sig, args):
        if current().target >= (9, 0):
            emit(builder, instruction)
        return context.get_dummy_value()
    return lowering


lower(grid_dependencies.grid_dependency_control_wait)(_control(GRID_DEPENDENCY_WAIT))
lower(grid_dependencies.grid_dependency_control_launch_dependents)(
    _control(GRID_DEPENDENCY_LAUNCH_DEPENDENTS))
