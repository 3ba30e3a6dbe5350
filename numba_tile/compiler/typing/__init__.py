"""Typing of tile code: a Numba typing template for every op, each calling the op's shared rule
(:mod:`numba_tile.rules`), one module per op family as in :mod:`..lowering`.

:mod:`.templates` holds the machinery the families share (the registry, the template made
from a public function's signature, result layouts, constant folding). Importing this package
registers every family's templates, in an order that matters where two templates share a key
(``operator.add`` of tiles before that of tuples, ``operator.getitem`` of tiles before that of
constant tuples): a template declines what it does not type and the next one is tried.
"""

from . import memory, elementwise, reductions, shapes, compile_time, factories, attributes, \
    matrix, device_output  # noqa: F401 (registration, in this order)
from .templates import registry  # noqa: F401 (what the typing context installs)
