"""The registry of the lowering of tile code (numba-cuda's ``Registry``), which the target
context installs; each op family's module registers its lowering functions on it."""

from numba.cuda.core.imputils import Registry

registry = Registry("numba_tile")
lower = registry.lower
