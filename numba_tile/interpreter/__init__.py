"""The interpreter: runs tile kernels on the CPU with NumPy, block by block.

It is the living definition of every op (DESIGN.md section 8): the public functions in
:mod:`numba_tile.language` run the shared rule and then compute with NumPy on host tiles
(:mod:`numba_tile.host`). This package adds what running a kernel's Python takes: its source
rewritten so that it keeps cuTile's semantics (the steps declared in :mod:`.rewrites`), its
globals and builtins re-bound and its arguments made host values (:mod:`.runner`). It sits
above the language, beside the compiler; neither imports the other.
"""
