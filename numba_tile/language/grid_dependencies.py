"""Programmatic dependent launch, in tile code: ``grid_dependency_control_wait`` and
``grid_dependency_control_launch_dependents``.

A kernel launched with ``launch(..., programmatic_dependent_launch=True)`` on a GPU of compute
capability 9.0 or later may start before the kernel ahead of it on the stream has finished:
its work up to ``grid_dependency_control_wait()`` (setting up, reading what the earlier kernel
does not write) overlaps the earlier kernel's tail. ``grid_dependency_control_launch_dependents()``
lets the kernel after this one start early. Without such a launch, on an earlier GPU, or in
the interpreter (which runs launches one after the other), both are no-ops.
"""

from ..host.context import tile_op


@tile_op
def grid_dependency_control_wait():
    """Wait until the kernel ahead of this one on the stream (launched before this one with
    programmatic dependent launch allowed) has finished and its memory writes are visible.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def scale(x, y, TILE: ct.Constant[int]):
    ...     ct.grid_dependency_control_wait()  # x is written by the kernel before this one
    ...     t = ct.load(x, (ct.bid(0),), (TILE,))
    ...     ct.grid_dependency_control_launch_dependents()
    ...     ct.store(y, (ct.bid(0),), t * 2)
    >>> x = np.arange(4, dtype=np.float32); y = np.empty_like(x)
    >>> ct.launch(0, (1,), scale, (x, y, 4), programmatic_dependent_launch=True)
    >>> y
    array([0., 2., 4., 6.], dtype=float32)
    """
    return None


@tile_op
def grid_dependency_control_launch_dependents():
    """Let the kernel after this one on the stream (launched with programmatic dependent
    launch allowed) start scheduling its tile blocks. It says nothing of this kernel's
    memory writes: the dependent kernel sees them only after its
    :func:`grid_dependency_control_wait`.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def early():
    ...     ct.grid_dependency_control_launch_dependents()
    >>> ct.launch(0, (2,), early, ())
    """
    return None
