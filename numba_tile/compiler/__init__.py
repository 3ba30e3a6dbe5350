"""The compiler: tile kernels through Numba's typing and numba-cuda's NVVM backend.

Tile code is typed by :class:`~numba_tile.compiler.contexts.TileTypingContext`, in which our
templates (which call the shared op rules of :mod:`numba_tile.rules`) take precedence over
Numba's, and lowered by :class:`~numba_tile.compiler.contexts.TileTargetContext`. Ordinary
``numba.cuda`` kernels keep Numba's own contexts and semantics.

A kernel's path through the subpackages: :mod:`.kernel_compiler` makes the per-compile state
(:mod:`.compile_state`) and runs numba-cuda's pipeline with the IR rewrites of :mod:`.frontend`
(their order is declared in :mod:`.frontend.passes`), typing by op family (:mod:`.typing`),
which plans what the hardware adds (:mod:`.planning`: tensor-core products, the stages of
pipelined loads, the tensor memory accelerator's copies), and lowering by op family
(:mod:`.lowering`, which also carries out those plans and holds every inline asm string);
then the PTX text is rewritten (:mod:`.ptx_rewrites`), and what goes wrong reaches the user
as a Tile error (:mod:`.error_translation`). :mod:`.registries` registers every template and
lowering. An op the compiler lacks raises ``TileUnsupportedFeatureError`` naming it.
``docs/architecture.rst`` tells it at length.
"""
