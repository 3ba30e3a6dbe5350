"""Every typing template and lowering of tile code, registered by importing the module of each
op family, and the two registries the contexts install (:mod:`.contexts`).

The order of the typing families matters where two templates share a key: a template that
does not type a call declines it and the next one is tried (``operator.add`` of tiles comes
before that of tuples, then of text; ``operator.getitem`` of tiles before that of constant
tuples; ``abs`` of tiles before the folding of ``abs`` of constants). So the typing families
are imported first, in this order, and nothing they import registers a template.

>>> from numba_tile.compiler import registries
>>> len(registries.typing_registry.globals) > 100, len(registries.lowering_registry.functions) > 100
(True, True)
"""

from .typing import memory, elementwise, reductions, shapes, compile_time, factories, \
    attributes, matrix, device_output  # noqa: F401 (the typing families, in this order)
from .typing.templates import registry as typing_registry
from .lowering import constants, device_output as lowering_device_output, elementwise as \
    lowering_elementwise, factories as lowering_factories, matrix as lowering_matrix, \
    memory as lowering_memory, reductions as lowering_reductions, shapes as lowering_shapes, \
    text  # noqa: F401 (the lowering families; device output and text also type their calls)
from .lowering.registry import registry as lowering_registry
from .frontend import deferred_products, index_layouts  # noqa: F401 (the calls they write)
from .hardware import staged_loads  # noqa: F401 (the calls of pipelined loads)
