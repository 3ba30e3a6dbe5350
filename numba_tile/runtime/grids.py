"""The grid of a launch: checked (1 to 3 positive ints within the driver's limits), or
inferred from the kernel's ``ct.partition`` arguments.

>>> from numba_tile.runtime.grids import check_grid
>>> check_grid((4, 2))
(4, 2)
"""

from ..partitions import inferred_grid

_MAX_GRID = (2**31 - 1, 65535, 65535)
_valid_grids = set()  # grids of plain ints seen before (launch loops repeat a few grids)


def check_grid(grid):
    if type(grid) is tuple and all(type(n) is int for n in grid):
        if grid in _valid_grids:
            return grid
        grid = _validate_grid(grid)
        if len(_valid_grids) < 4096:
            _valid_grids.add(grid)
        return grid
    return _validate_grid(grid)


def is_valid_grid(grid):
    """True for a grid that ``launch`` takes (1 to 3 ints, each in its range).

    >>> from numba_tile.runtime.grids import is_valid_grid
    >>> is_valid_grid((4, 2)), is_valid_grid((0,)), is_valid_grid((2.0,))
    (True, False, False)
    """
    try:
        check_grid(grid)
    except (TypeError, ValueError):
        return False
    return True


def _validate_grid(grid):
    """The grid as a tuple of ints, checked in cuTile's words: a tuple of at most 3 ints
    (``()`` is one block, as in cuTile; a missing axis is 1), each within the driver's
    limit (numba_tile checks these on the host: cuTile leaves 0 to the driver)."""
    if not isinstance(grid, tuple):
        raise TypeError(f"Grid must be a tuple of 1 to 3 positive ints, got "
                        f"{type(grid).__name__}")
    if len(grid) > 3:
        raise ValueError(f"Grid dimensions must be at most 3, got length {len(grid)}")
    for axis, (n, limit) in enumerate(zip(grid, _MAX_GRID)):
        if not hasattr(n, "__index__"):
            raise TypeError(f"Grid[{axis}] must be an int, got {type(n).__name__}")
        if not 1 <= int(n) <= limit:
            raise ValueError(f"Grid[{axis}] = {int(n)} is out of range: it must be in "
                             f"1..{limit}")
    return tuple(int(n) for n in grid) or (1,)


def partition_grid(kernel, kernel_args):
    """The grid of a launch with ``grid=None``, from its ``ct.partition`` arguments
    (:func:`numba_tile.partitions.inferred_grid`), checked as a given grid is."""
    grid = inferred_grid(kernel.parameters, kernel_args)
    if 0 in grid:
        return grid
    try:
        return check_grid(grid)
    except ValueError as error:
        raise ValueError(f"The grid {grid} inferred from the partitions is too large: "
                         f"{error}; partition into larger tiles") from None
