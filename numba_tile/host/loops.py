"""``range`` in interpreted kernels: its index is an int32 scalar (a 0-d tile) with a
``.dtype``, as in compiled code and in cuTile, unless a bound needs int64
(:func:`numba_tile.rules.loops.range_index_dtype`).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def show():
...     for i in range(2):
...         print(i, i.dtype)
>>> with ct.interpret():
...     ct.launch(0, (1,), show, ())
0 int32
1 int32
"""

import builtins
import operator

import numpy as np

from ..rules.loops import check_range_arguments, check_range_step, range_index_dtype
from .tile import Tile


class TileRange:
    """What ``range(...)`` gives in an interpreted kernel. Iterating it gives run-time int32
    (or int64) scalars; ``ct.static_iter`` over it gives its values as constants (the
    compiler unrolls that loop)."""

    def __init__(self, *bounds, **keywords):
        check_range_arguments(bounds, tuple(keywords))
        values, kinds = [], []
        for bound in bounds:
            if isinstance(bound, Tile):
                values.append(bound.__index__())
                kinds.append(bound.dtype)
            else:
                values.append(operator.index(bound))
                kinds.append(values[-1])
        # (a step of zero known only at run time too: the compiled loop would not end)
        check_range_step(values[2] if len(values) == 3 else None)
        self.constants = builtins.range(*values)
        self.dtype = range_index_dtype(kinds)

    def __iter__(self):
        return (self._index(v) for v in self.constants)

    def __reversed__(self):
        return (self._index(v) for v in reversed(self.constants))

    def __len__(self):
        return len(self.constants)

    def _index(self, value):
        return Tile(self.dtype, np.array(value, self.dtype.storage))
