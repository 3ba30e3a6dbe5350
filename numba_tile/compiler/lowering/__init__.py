"""Lowering of tile code to LLVM IR on numba-cuda's target context, one module per op family as
in :mod:`..typing`: :mod:`.memory` (grid queries, ``load``), :mod:`.stores` (``store``),
:mod:`.elementwise` (one element at a time: :mod:`.arithmetic`, :mod:`.narrow_floats`),
:mod:`.reductions`, :mod:`.shapes`, :mod:`.factories`, :mod:`.matrix` (the general product;
tensor cores are in :mod:`..hardware`), :mod:`.constants`, :mod:`.device_output` and
:mod:`.text`.
:mod:`.tiles` says how a tile lives in a thread block and holds the moves every lowering
shares; :mod:`.registry` is where they all register (:mod:`..registries` imports them).
"""
