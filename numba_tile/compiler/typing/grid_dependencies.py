"""Typing of ``grid_dependency_control_wait`` and ``_launch_dependents``: calls without
arguments or a value."""

from numba.core import types

from ...language import grid_dependencies
from .templates import register_template

register_template(grid_dependencies.grid_dependency_control_wait, lambda values: types.none)
register_template(grid_dependencies.grid_dependency_control_launch_dependents,
                  lambda values: types.none)
