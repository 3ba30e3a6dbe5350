"""Kernels whose annotations are postponed (PEP 563) for tests/test_launch.py.

With ``from __future__ import annotations`` every annotation is a string; ``ct.Constant[...]``,
``ct.ScalarInt64`` and a name bound only after the kernel must still be recognized.
"""

from __future__ import annotations

import numba_tile as ct


@ct.kernel
def scale_postponed(x, y, factor: ct.ScalarInt64, TILE: ct.Constant[int], DT: ct.Constant):
    ct.static_assert(factor.dtype == ct.int64)
    i = ct.bid(0)
    t = ct.load(x, (i,), (TILE,)).astype(DT)
    ct.store(y, (i,), t * factor)


@ct.kernel
def later_global_postponed(y, N: ConstInt):  # noqa: F821 - bound below, after the kernel
    ct.store(y, (0,), ct.arange(N, dtype=ct.int32) + 1)


ConstInt = ct.Constant[int]
