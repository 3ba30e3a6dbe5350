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
    attributes, matrix, device_output, text, pipelines, loops, \
    gather, atomics, scans, static_expressions, static_iteration, \
    keywords, dataclasses, rewrite_errors, tuples, \
    context_manager_values, grid_dependencies, histograms  # noqa: F401 (typing families, in order)
from .typing.templates import registry as typing_registry
from .lowering import constants, device_output as lowering_device_output, elementwise as \
    lowering_elementwise, factories as lowering_factories, matrix as lowering_matrix, \
    memory as lowering_memory, stores as lowering_stores, pipelines as lowering_pipelines, \
    reductions as lowering_reductions, shapes as lowering_shapes, text as lowering_text, \
    gather as lowering_gather, atomics as lowering_atomics, scans as lowering_scans, \
    scan_runs as lowering_scan_runs, \
    keywords as lowering_keywords, dataclasses as lowering_dataclasses, \
    tuples as lowering_tuples, joins as lowering_joins, \
    partitions as lowering_partitions, \
    grid_dependencies as lowering_grid_dependencies, \
    histograms as lowering_histograms, warp_roles as lowering_warp_roles  # noqa: F401
from .lowering.registry import registry as lowering_registry
