"""``ct.partition``: an output array divided into tile-shaped regions, one for each tile
block, and the launch grid inferred from it (a numba_tile extension, after the host-side
partitions of cuTile's Rust edition).

On the host, ``ct.partition(c, (32, 64))`` marks ``c`` as an array that the tile blocks
write, each its own region of 32 x 64 elements. Inside the kernel that parameter *is* the
block's region: an array whose element ``(0, 0)`` is element
``(bid(0) * 32, bid(1) * 64)`` of ``c`` and whose shape is the tile shape clipped at ``c``'s
edge, so stores past the region are dropped as stores past an array's end are. A launch
with ``grid=None`` runs one block per region (:func:`inferred_grid`).

Both executors take the region through the one rule :func:`region_bounds`: the interpreter
slices its NumPy view with it (:func:`numba_tile.host.arrays.partition_region`), the
compiler computes the same bounds in the kernel's entry
(:mod:`numba_tile.compiler.frontend.partitions`).

>>> import numpy as np, numba_tile as ct
>>> ct.partition(np.zeros((100, 60), np.float32), (32, 64)).grid
(4, 1, 1)
"""

from .annotations import ArgumentPath, ConstantAnnotation, ListAnnotation, TupleAnnotation

#: The grid has three axes (x, y, z): array axis 0 is x, 1 is y, 2 is z.
MAX_RANK = 3


class Partition:
    """An array divided into regions of ``tile_shape`` elements, each written by the one tile
    block whose ``(bid(0), bid(1), bid(2))`` is the region's index; made by
    :func:`partition`. ``grid`` is the number of regions along each grid axis.

    >>> import numpy as np, numba_tile as ct
    >>> p = ct.partition(np.zeros((128, 256), np.float32), (32, 64))
    >>> isinstance(p, ct.Partition), p.tile_shape, p.grid
    (True, (32, 64), (4, 4, 1))
    >>> p
    <Partition of a (128, 256) float32 array into (32, 64) tiles: grid (4, 4, 1)>
    """

    __slots__ = ("array", "tile_shape", "shape", "grid")

    def __init__(self, array, tile_shape, shape):
        self.array = array
        self.tile_shape = tile_shape
        self.shape = shape  # of the whole array, read once
        # (x, y, z): the regions along each array axis, 1 for the axes it lacks (found once:
        # a launch with grid=None reads it)
        self.grid = partition_grid(shape, tile_shape)

    def __repr__(self):
        dtype = str(getattr(self.array, "dtype", "?")).removeprefix("torch.")
        return (f"<Partition of a {_shape_text(self.shape)} {dtype} array into "
                f"{_shape_text(self.tile_shape)} tiles: grid {self.grid}>")

    def __reduce__(self):  # __slots__ only: pickled by its parts (a test's child process)
        return Partition, (self.array, self.tile_shape, self.shape)


def partition(array, tile_shape):
    """``array`` (NumPy in interpreter mode; CuPy, PyTorch or numba on the GPU) divided into
    regions of ``tile_shape``, each written by one tile block: pass the :class:`Partition` as
    a kernel argument, and the kernel's parameter is the block's own region (element
    ``(0, 0)`` of it is element ``(bid(0) * T0, bid(1) * T1)`` of ``array``; its shape is
    ``tile_shape`` clipped at the array's edge, where stores past it are dropped). With
    ``grid=None``, ``ct.launch`` runs one block per region. A numba_tile extension.

    ``tile_shape`` is a tuple of positive ints, one for each of the array's 1 to 3 axes (an
    int for a 1-d array); anything else is a ``TypeError`` or ``ValueError``. The regions
    need not be powers of two; the tiles stored into them are.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def add(c, a, b, TILE: ct.Constant[tuple[int, int]]):
    ...     index = (ct.bid(0), ct.bid(1))
    ...     tile = ct.load(a, index, TILE) + ct.load(b, index, TILE)
    ...     ct.store(c, (0, 0), tile)  # c is this block's region
    >>> a = np.arange(30, dtype=np.float32).reshape(5, 6)
    >>> b = np.ones((5, 6), np.float32)
    >>> c = np.zeros((5, 6), np.float32)
    >>> ct.launch(0, None, add, (ct.partition(c, (4, 4)), a, b, (4, 4)))  # grid (2, 2, 1)
    >>> bool((c == a + b).all())
    True
    """
    if isinstance(array, Partition):
        raise TypeError("ct.partition() needs an array, got a Partition: partition the "
                        "array itself")
    shape = _array_shape(array)
    if shape is None:
        raise TypeError(f"ct.partition() needs an array (NumPy, CuPy, PyTorch or numba), got "
                        f"{type(array).__name__}")
    if not 1 <= len(shape) <= MAX_RANK:
        raise ValueError(f"ct.partition() needs an array of 1 to {MAX_RANK} axes, one for each "
                         f"grid axis, got one of shape {_shape_text(shape)}")
    return Partition(array, checked_tile_shape(tile_shape, shape), shape)


def _array_shape(array):
    """The shape of an array of any library as a tuple of ints, or None for anything else."""
    shape = getattr(array, "shape", None)
    if shape is None:
        interface = getattr(array, "__cuda_array_interface__", None) or \
            getattr(array, "__array_interface__", None)
        shape = interface.get("shape") if isinstance(interface, dict) else None
    if isinstance(array, (type, str)) or not isinstance(shape, (tuple, list)) or \
            not all(hasattr(n, "__index__") for n in shape):
        return None
    return tuple(int(n) for n in shape)


def checked_tile_shape(tile_shape, shape):
    """``tile_shape`` as a tuple of ints, checked against the array ``shape``: one positive
    int for each axis (a bare int for a 1-d array).

    >>> from numba_tile.partitions import checked_tile_shape
    >>> checked_tile_shape(8, (100,))
    (8,)
    >>> checked_tile_shape((8,), (100, 60))
    Traceback (most recent call last):
    ...
    ValueError: tile_shape (8,) has 1 entry, but the array has 2 axes (shape (100, 60)): ...
    """
    if len(shape) == 1 and hasattr(tile_shape, "__index__") and \
            not isinstance(tile_shape, bool):
        tile_shape = (tile_shape,)
    if not isinstance(tile_shape, tuple):
        raise TypeError(f"tile_shape must be a tuple of positive ints, one for each axis of "
                        f"the array, got {type(tile_shape).__name__}")
    if len(tile_shape) != len(shape):
        entries = "entry" if len(tile_shape) == 1 else "entries"
        raise ValueError(f"tile_shape {_shape_text(tile_shape)} has {len(tile_shape)} "
                         f"{entries}, but the array has {len(shape)} axes (shape "
                         f"{_shape_text(shape)}): give one tile extent for each axis")
    for axis, extent in enumerate(tile_shape):
        if isinstance(extent, bool) or not hasattr(extent, "__index__"):
            raise TypeError(f"tile_shape[{axis}] must be an int, got "
                            f"{type(extent).__name__}")
        if extent < 1:
            raise ValueError(f"tile_shape[{axis}] = {int(extent)} must be positive")
    return tuple(int(extent) for extent in tile_shape)


def _shape_text(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def partition_grid(shape, tile_shape):
    """``(x, y, z)``: ``ceil(shape[i] / tile_shape[i])`` regions along each axis, 1 for the
    axes the array lacks.

    >>> from numba_tile.partitions import partition_grid
    >>> partition_grid((128, 256), (32, 64)), partition_grid((100,), (32,))
    ((4, 4, 1), (4, 1, 1))
    """
    counts = tuple(-(-n // t) for n, t in zip(shape, tile_shape))
    return counts + (1,) * (MAX_RANK - len(counts))


def region_bounds(block, extent, length):
    """``(start, stop)`` of a block's region along one axis: the tile of ``extent`` elements
    at ``block * extent``, clipped to the axis's ``length`` (empty for a block past the end,
    which an explicit grid larger than the partition's may run). The rule both executors
    apply.

    >>> from numba_tile.partitions import region_bounds
    >>> region_bounds(1, 32, 100), region_bounds(3, 32, 100), region_bounds(5, 32, 100)
    ((32, 64), (96, 100), (100, 100))
    """
    start = min(block * extent, length)
    return start, min(start + extent, length)


def partitioned_array(where, value, meta):
    """The array of the :class:`Partition` ``value`` passed at ``where`` (an
    :class:`~numba_tile.annotations.ArgumentPath`) for a parameter whose annotation metadata is
    ``meta``: a ``TypeError`` where it is not a kernel argument of its own (an item of a tuple
    or list) or its parameter is a ``Constant``, a tuple or a list. Both executors check it.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.annotations import ArgumentPath
    >>> from numba_tile.partitions import partitioned_array
    >>> p = ct.partition(np.zeros(8), (4,))
    >>> partitioned_array(ArgumentPath(0, "outs").item(1), p, None)
    Traceback (most recent call last):
    ...
    TypeError: Invalid item #1 of kernel argument #0 (outs[1]): a ct.partition must be a ...
    """
    if where.items:
        raise TypeError(f"Invalid {where.describe()} ({where}): a ct.partition must be a "
                        f"kernel argument of its own, not an item of a tuple or list")
    if isinstance(meta, (ConstantAnnotation, TupleAnnotation, ListAnnotation)):
        kind = {ConstantAnnotation: "a Constant", TupleAnnotation: "a tuple",
                ListAnnotation: "a list"}[type(meta)]
        raise TypeError(f"Invalid {where.describe()} ({where}): a ct.partition cannot be "
                        f"passed for a parameter annotated as {kind}")
    return value.array


def inferred_grid(parameters, kernel_args):
    """The grid of a launch with ``grid=None``: that of its :class:`Partition` arguments,
    which must agree; a ``TypeError`` where there is none (or one is inside a tuple or list),
    a ``ValueError`` naming each where they disagree.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.partitions import inferred_grid
    >>> c, d = np.zeros((64, 64)), np.zeros((64, 32))
    >>> inferred_grid(("c", "d"), (ct.partition(c, (16, 16)), ct.partition(d, (16, 8))))
    (4, 4, 1)
    >>> inferred_grid(("c", "d"), (ct.partition(c, (16, 16)), ct.partition(d, (16, 16))))
    Traceback (most recent call last):
    ...
    ValueError: The partitions give different grids: c (4, 4, 1), d (4, 2, 1); ...
    """
    grids = {}
    for position, (name, value) in enumerate(zip(parameters, kernel_args)):
        if isinstance(value, Partition):
            grids[name] = value.grid
        elif isinstance(value, (tuple, list)):
            _refuse_nested(position, name, value)
    if not grids:
        raise TypeError("Grid must be a tuple of 1 to 3 positive ints, got None, and no kernel "
                        "argument is a ct.partition to infer it from: pass a grid, or pass "
                        "an output as ct.partition(array, tile_shape)")
    if len(set(grids.values())) > 1:
        listed = ", ".join(f"{name} {grid}" for name, grid in grids.items())
        raise ValueError(f"The partitions give different grids: {listed}; partition them into "
                         f"as many regions along each axis, or pass a grid")
    return next(iter(grids.values()))


def _refuse_nested(position, name, value, items=()):
    """The ``TypeError`` of :func:`partitioned_array` for a partition inside ``value``."""
    for index, item in enumerate(value):
        where = ArgumentPath(position, name, items + (index,))
        if isinstance(item, Partition):
            partitioned_array(where, item, None)
        elif isinstance(item, (tuple, list)):
            _refuse_nested(position, name, item, where.items)
