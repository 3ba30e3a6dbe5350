"""The compiler: tile kernels through Numba's typing and numba-cuda's NVVM backend.

Tile code is typed by :class:`~numba_tile.compiler.contexts.TileTypingContext`, in which our
templates (which call the shared op rules of :mod:`numba_tile.rules`) take precedence over
Numba's, and lowered by :class:`~numba_tile.compiler.contexts.TileTargetContext`. Ordinary
``numba.cuda`` kernels keep Numba's own contexts and semantics.

This release compiles a first slice of the op set (grid queries, ``load``/``store`` and
elementwise arithmetic on tiles of one shape); the rest raises ``TileUnsupportedFeatureError``
naming the op.
"""
