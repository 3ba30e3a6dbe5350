"""Lowering of tile code to LLVM IR on numba-cuda's target context, one module per op family as
in :mod:`..typing`: :mod:`.memory` (grid queries, ``load``), :mod:`.stores` (``store``),
:mod:`.elementwise` (one element at a time: :mod:`.arithmetic`, :mod:`.narrow_floats`),
:mod:`.reductions`, :mod:`.shapes`, :mod:`.factories`, :mod:`.matrix` (the general product),
:mod:`.constants`, :mod:`.device_output`, :mod:`.text` and the others that
:data:`..registries.FAMILIES` lists.

What the hardware adds, as :mod:`..planning` planned it: tensor-core products
(:mod:`.mma_sync`, :mod:`.wgmma`), the rings of pipelined loads (:mod:`.staged_loads`) and
their copies (:mod:`.async_copies`, the tensor memory accelerator's in :mod:`.tma`). Every
inline PTX instruction is written in :mod:`.asm`.
:mod:`.tiles` says how a tile lives in a thread block and holds the moves every lowering
shares; :mod:`.registry` is where they all register (:mod:`..registries` imports them).
"""
