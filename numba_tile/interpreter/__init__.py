"""The interpreter: runs tile kernels on the CPU with NumPy, block by block.

It is the living definition of every op (DESIGN.md section 8): the public functions in
:mod:`numba_tile.language` run the shared rule and then compute with NumPy on host tiles.
"""
