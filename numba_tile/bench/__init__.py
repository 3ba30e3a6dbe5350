"""``python -m numba_tile.bench``: numba_tile kernels timed side by side with PyTorch and Triton.

The cases of issue 3 (vector add, row softmax, layer norm, row sum; see
:mod:`numba_tile.bench.cases`) run in one process on one GPU: each implementation is first
checked against a float64 reference, then timed with CUDA events (median of many runs after
warm-up, L2 flushed before each run). The figure is the effective bandwidth, (bytes read +
bytes written) / median time, also as a fraction of the measured device-to-device copy
bandwidth. The table is printed; JSON and a PNG chart (with matplotlib) are written to
``--out`` (default ``bench-results``). Without PyTorch or a CUDA GPU it says so and exits with
status 2.

Modules, one job each: :mod:`~numba_tile.bench.optional` (PyTorch, imported once),
:mod:`~numba_tile.bench.kernels` (the numba_tile kernels),
:mod:`~numba_tile.bench.references` (PyTorch and Triton),
:mod:`~numba_tile.bench.case_types` (what a case is made of), :mod:`~numba_tile.bench.cases`
(sizes, inputs, references, tolerances, targets), :mod:`~numba_tile.bench.timing`,
:mod:`~numba_tile.bench.runner` (check, then time), :mod:`~numba_tile.bench.cutile` (cuTile
running the same kernels, where installed), :mod:`~numba_tile.bench.report` (table and JSON),
:mod:`~numba_tile.bench.chart` (the PNG charts) and :mod:`~numba_tile.bench.compare` (against
an earlier run's results).

The cases, and what one selects (no GPU needed for this):

>>> from numba_tile.bench import cases
>>> [case.name for case in cases.select(cases.all_cases(), ["softmax"])]
['softmax_f32', 'softmax_f16']
"""
