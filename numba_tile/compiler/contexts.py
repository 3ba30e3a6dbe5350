"""The typing and target contexts of tile code.

Subclasses of numba-cuda's contexts that also install numba_tile's registries. Only tile
kernels are compiled with them, so ordinary ``numba.cuda`` kernels keep Numba's semantics.
"""

import functools

from numba.cuda.target import CUDATargetContext, CUDATypingContext

from . import models  # noqa: F401  (registers the data models of our types)


class TileTypingContext(CUDATypingContext):
    """numba-cuda's typing context plus the tile templates."""

    def load_additional_registries(self):
        super().load_additional_registries()
        from .typing import registry
        self.install_registry(registry)


class TileTargetContext(CUDATargetContext):
    """numba-cuda's target context plus the tile lowering."""

    def load_additional_registries(self):
        super().load_additional_registries()
        from .lowering import registry
        self.install_registry(registry)


@functools.lru_cache(maxsize=None)
def contexts():
    """The (typing, target) context pair, made once per process."""
    typing_context = TileTypingContext()
    return typing_context, TileTargetContext(typing_context)
