"""Typing of tile code: a Numba typing template for every op, each calling the op's shared rule
(:mod:`numba_tile.rules`), one module per op family as in :mod:`..lowering` (memory,
elementwise, reductions, shapes, ...: every family is in :data:`..registries.FAMILIES`).

:mod:`.templates` holds the machinery the families share (the registry, the template made
from a public function's signature, result layouts, constant folding). Importing a family
registers its templates; :mod:`..registries` imports them all, in the order of its table
:data:`..registries.FAMILIES`, which matters where two templates share a key. The plans of
what the hardware adds (tensor-core products, pipelined loads' stages) come from
:mod:`..planning`: typing imports nothing of :mod:`..lowering`.
"""
