"""The compiler: tile kernels through Numba's typing and numba-cuda's NVVM backend.

Tile code is typed by :class:`~numba_tile.compiler.contexts.TileTypingContext`, in which our
templates (which call the shared op rules of :mod:`numba_tile.rules`) take precedence over
Numba's, and lowered by :class:`~numba_tile.compiler.contexts.TileTargetContext`. Ordinary
``numba.cuda`` kernels keep Numba's own contexts and semantics.

A kernel's path through the subpackages: :mod:`.kernel_compiler` makes the per-compile state
(:mod:`.compile_state`) and runs numba-cuda's pipeline with the IR rewrites of :mod:`.frontend`
(their order is declared in :mod:`.frontend.passes`), typing by op family (:mod:`.typing`),
lowering by op family (:mod:`.lowering`), and what the hardware adds (:mod:`.hardware`:
tensor cores, asynchronous copies, the tensor memory accelerator, every inline asm string).
:mod:`.registries` registers every template and lowering. An op the compiler lacks raises
``TileUnsupportedFeatureError`` naming it. ``docs/architecture.rst`` tells it at length.
"""
