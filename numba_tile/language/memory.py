"""Loads, stores and the grid: ``load``, ``store``, ``bid``, ``num_blocks``, ``num_tiles``,
``cdiv``.
"""

import numpy as np

from .. import dtypes as d
from ..enums import MemoryOrder, MemoryScope, PaddingMode
from ..host import context
from ..host.arrays import read_region, write_region
from ..host.context import tile_op
from ..host.tile import Tile, to_tile
from ..rules import memory as rules
from ..rules.core import as_operand, is_python_number
from .elementwise import floordiv, negative


@tile_op
def bid(axis):
    """The index of this tile block along grid ``axis`` (a run-time int32 scalar).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.bid(0), "of", ct.num_blocks(0))
    >>> ct.launch(0, (2,), show, ())
    0 of 2
    1 of 2
    """
    axis = rules.grid_axis(axis, "bid")
    return Tile(d.int32, np.array(context.current().block_id[axis]))


@tile_op
def num_blocks(axis):
    """The number of tile blocks along grid ``axis`` (a run-time int32 scalar).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     print(ct.num_blocks(0), ct.num_blocks(1))
    >>> ct.launch(0, (1, 1), show, ())
    1 1
    """
    axis = rules.grid_axis(axis, "num_blocks")
    return Tile(d.int32, np.array(context.current().grid[axis]))


@context.host_and_tile_op
def cdiv(x, y, /):
    """Ceiling division ``(x + y - 1) // y``; works in host code too.

    >>> import numba_tile as ct
    >>> ct.cdiv(10, 4)
    3
    """
    if isinstance(x, (int, np.integer)) and isinstance(y, (int, np.integer)):
        return -(-int(x) // int(y))
    raw = getattr(floordiv, "__tile_op__")
    return getattr(negative, "__tile_op__")(raw(getattr(negative, "__tile_op__")(x), y))


@tile_op
def assume_divisible_by(x, divisor):
    """Declare that the integer scalar ``x`` is divisible by ``divisor`` (a positive integer
    constant); returns ``x`` unchanged. The compiler tells LLVM, which can then prove
    alignments and simplify index arithmetic; a false claim is undefined behavior there.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     n = ct.assume_divisible_by(ct.bid(0) + 128, 128)
    ...     print(n)
    >>> ct.launch(0, (1,), show, ())
    128
    """
    rules.assume_divisible_by(x, divisor)
    return x


@tile_op
def num_tiles(array, /, axis, shape, order="C"):
    """Number of tiles of ``shape`` along ``axis`` of the array's tile space.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def show(x):
    ...     print(ct.num_tiles(x, 1, (4, 4)), ct.num_tiles(x, 1, (4, 4), order="F"))
    >>> ct.launch(0, (1,), show, (np.zeros((10, 20), np.float32),))
    5 3
    """
    shape, order, axis = rules.num_tiles(array, axis, shape, order)
    length = array.data.shape[order[axis]]
    return Tile(array.index_dtype, np.array(-(-length // shape[axis])))


@tile_op
def load(array, /, index, shape, *, order="C", padding_mode=PaddingMode.UNDETERMINED,
         check_bounds=True, latency=None, allow_tma=None, memory_order=MemoryOrder.WEAK,
         memory_scope=MemoryScope.NONE):
    """Load the tile at tile ``index`` of the array's tile space for tiles of ``shape``.

    ``t[x, y] = array[i*tm + x, j*tn + y]``; elements past the end take the padding value.
    ``order`` permutes the array's axes first (``"F"`` reverses them).

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def show(x):
    ...     print(ct.load(x, (1, 0), shape=(2, 4), padding_mode=ct.PaddingMode.NAN))
    ...     print(ct.load(x, (0, 0), shape=(4, 2), order="F"))
    >>> ct.launch(0, (1,), show, (np.arange(12.0).reshape(3, 4),))
    [[8.0, 9.0, 10.0, 11.0], [nan, nan, nan, nan]]
    [[0.0, 4.0], [1.0, 5.0], [2.0, 6.0], [3.0, 7.0]]
    """
    rules.memory_options("load", memory_order, memory_scope)
    rules.check_hints("load()", check_bounds, latency, allow_tma)
    spec, full, order, index = rules.load(array, index, shape, order, padding_mode)
    view = np.transpose(array.data, order)
    origin = tuple(int(i) * s for i, s in zip(index, full))
    values = read_region(view, origin, full, rules.padding(padding_mode), array.dtype)
    return Tile(spec.dtype, values.reshape(spec.shape))


@tile_op
def store(array, /, index, tile, *, order="C", check_bounds=True, latency=None,
          allow_tma=None, memory_order=MemoryOrder.WEAK, memory_scope=MemoryScope.NONE):
    """Store ``tile`` at tile ``index``; its shape defines the tile space. Elements past the
    end are dropped; a scalar fills one element. Values convert to the array's dtype where
    cuTile converts implicitly (the promotion of the two is the array's: an int8 tile into an
    int32 array); a narrowing store (float32 into float16) needs ``astype`` first.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def fill(x):
    ...     ct.store(x, (ct.bid(0),), ct.full((4,), 7, ct.int32))
    >>> a = np.zeros(6, np.int32)
    >>> ct.launch(0, (2,), fill, (a,))
    >>> a
    array([7, 7, 7, 7, 7, 7], dtype=int32)
    """
    rules.memory_options("store", memory_order, memory_scope)
    rules.check_hints("store()", check_bounds, latency, allow_tma)
    value = to_tile(tile)
    # (a Python number is a loosely typed constant to the rule, as compiled)
    full, order, index = rules.store(array, index,
                                     as_operand(tile) if is_python_number(tile) else value,
                                     order)
    tile = value
    view = np.transpose(array.data, order)
    origin = tuple(int(i) * s for i, s in zip(index, full))
    write_region(view, origin, tile.values.reshape(full), tile.dtype, array.dtype)
