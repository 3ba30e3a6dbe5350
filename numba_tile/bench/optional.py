"""PyTorch for the whole benchmark, imported once here: an optional dependency.

The benchmark's GPU runs need PyTorch (inputs, references, streams, CUDA events); its
cases, tables, charts and comparisons of saved runs do not, so every bench module takes
``torch`` from here, and only what runs on the GPU fails without it. ``torch`` is None
where PyTorch cannot be imported, and :data:`TORCH_IMPORT_ERROR` says why (an
``ImportError`` where it is not installed; another exception where an installation is
broken, e.g. without its CUDA libraries). Triton and cuTile, each needed by one module,
are imported there (:mod:`~numba_tile.bench.references`, :mod:`~numba_tile.bench.cutile`).

>>> from numba_tile.bench import optional
>>> (optional.torch is None) == (optional.TORCH_IMPORT_ERROR is not None)
True
"""

try:
    import torch
    TORCH_IMPORT_ERROR = None
except Exception as error:  # optional: not installed, or installed without its libraries
    torch = None
    TORCH_IMPORT_ERROR = error
