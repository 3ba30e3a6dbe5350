"""Every typing template and lowering of tile code, registered by importing the module of each
op family in :data:`FAMILIES`, and the two registries the contexts install
(:mod:`.contexts`).

>>> from numba_tile.compiler import registries
>>> len(registries.typing_registry.globals) > 100, len(registries.lowering_registry.functions) > 100
(True, True)
>>> registries.FAMILIES.index("elementwise") < registries.FAMILIES.index("tuples")
True
"""

import importlib
import pkgutil

from . import lowering, typing as typing_package
from .lowering.registry import registry as lowering_registry
from .typing.templates import registry as typing_registry

#: The op families: each has a module in :mod:`.typing` (its templates), in :mod:`.lowering`
#: (its lowerings) or in both, and importing the module registers them. Every typing module
#: is imported first, in this order, then every lowering module, in this order.
#:
#: The order matters for typing where two templates share a key: a template that does not
#: type a call declines it and the next one is tried, so ``operator.add`` of tiles
#: (elementwise) comes before that of constant tuples (compile_time), then of text, and
#: ``operator.getitem`` of tiles (shapes) before that of constant tuples (compile_time),
#: then of dataclasses, keyword arguments and tuples. It is the order in which the typing
#: modules register: a module that another imports (memory imports elementwise,
#: device_output text, static_expressions dataclasses and keywords) comes before it. The
#: lowerings' order does not matter: no two of them register the same key and signature.
#: ``tests/test_compiler_structure.py`` checks all of this, and that every family module of
#: :mod:`.typing` and :mod:`.lowering` is here.
FAMILIES = (
    "elementwise", "memory", "stores", "partitions", "reductions", "shapes", "compile_time",
    "constants", "factories", "attributes", "matrix", "text", "device_output", "pipelines",
    "warp_roles", "loops", "gather", "atomics", "scans", "scan_runs", "dataclasses",
    "keywords", "static_expressions", "static_iteration", "rewrite_errors", "tuples", "joins",
    "context_manager_values", "grid_dependencies", "histograms", "foreign_pointers",
)


def _register(package):
    """Import ``package``'s module of each family in :data:`FAMILIES` that has one there, in
    the table's order."""
    present = {module.name for module in pkgutil.iter_modules(package.__path__)}
    for family in FAMILIES:
        if family in present:
            importlib.import_module(f"{package.__name__}.{family}")


_register(typing_package)
_register(lowering)
