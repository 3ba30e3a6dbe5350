"""The warps of a kernel that does not choose them (cuTile has no such option: its compiler
chooses), from the products it computes (a pass after type inference).

A kernel is compiled with :data:`~numba_tile.compiler.compile_state.DEFAULT_NUM_WARPS` warps
first. Where its products' accumulators (each ``ct.mma``/``ct.matmul``/``ct.mma_scaled``
of the source counted once, whatever loop unrolling copied it) would take more than
:data:`ACCUMULATOR_WORDS` 32-bit registers a thread in those warps, it is compiled again
with :data:`MORE_WARPS` where every product has rows for them (:func:`warps_for`): a
128 x 128 float32 accumulator is 128 registers a thread in 4 warps, which leaves too few for
its operands, and the two accumulators of attention (the scores and the output) more than
that. Tiles are split over the warps by their layouts, so
the result is the same; only the speed changes. A ``num_warps`` given to the kernel is kept.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def product(a, b, c):
...     ct.store(c, (0, 0), ct.mma(ct.load(a, (0, 0), (128, 64)), ct.load(b, (0, 0), (64, 128)),
...                                ct.zeros((128, 128), ct.float32)))
>>> a = np.zeros((128, 64), np.float16); c = np.zeros((128, 128), np.float32)
>>> ct.compile(product, (a, a.T.copy(), c), arch="sm_90").num_warps
8
>>> ct.compile(product.replace_hints(num_warps=4), (a, a.T.copy(), c), arch="sm_90").num_warps
4
"""

import math

from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ...language import matrix, scaled_products
from ..compile_state import current
from ..intrinsics import deferred_mma
from ..types import TileType
from .contract import TYPED, tile_pass

ACCUMULATOR_WORDS = 64  # 32-bit registers a thread for accumulators, at most
MORE_WARPS = 8
_PRODUCTS = (matrix.mma, matrix.matmul, scaled_products.mma_scaled, deferred_mma)


class WarpsChosen(Exception):
    """The kernel needs ``num_warps`` warps: compile it again with them."""

    def __init__(self, num_warps):
        super().__init__(num_warps)
        self.num_warps = num_warps


def products(func_ir, typemap, calltypes):
    """The result types of the kernel's products, one for each statement of the source."""
    seen = {}
    for block in func_ir.blocks.values():
        for statement in block.body:
            expr = statement.value if isinstance(statement, ir.Assign) else None
            if not (isinstance(expr, ir.Expr) and expr.op == "call") or getattr(
                    typemap.get(expr.func.name), "typing_key", None) not in _PRODUCTS:
                continue
            result = calltypes[expr].return_type
            if isinstance(result, TileType):
                seen[(statement.loc.filename, statement.loc.line, result.shape)] = result
    return list(seen.values())


def warps_for(results, num_warps):
    """The warps for products with the tile types ``results`` in a kernel compiled with
    ``num_warps``: :data:`MORE_WARPS` where their accumulators take more than
    :data:`ACCUMULATOR_WORDS` registers a thread and each has rows for all of them (16 a
    warp: two warpgroups of ``wgmma`` take 64 rows each), else ``num_warps``.

    >>> from numba_tile import dtypes as d
    >>> from numba_tile.compiler.types import TileType
    >>> from numba_tile.compiler.frontend.warps import warps_for
    >>> scores, output = TileType(d.float32, (128, 64), 4), TileType(d.float32, (128, 128), 4)
    >>> warps_for([scores, output], 4), warps_for([scores], 4)
    (8, 4)
    >>> warps_for([TileType(d.float32, (64, 256), 4)], 4)  # too few rows for 8 warps
    4
    """
    words = sum(-(-math.prod(t.shape) * t.dtype.itemsize // 4) for t in results)
    rows = min((t.shape[-2] if t.ndim >= 2 else 1 for t in results), default=0)
    if words > ACCUMULATOR_WORDS * 32 * num_warps and rows >= 16 * MORE_WARPS > 16 * num_warps:
        return MORE_WARPS
    return num_warps


@tile_pass("choose the warps", needs=(TYPED,))
@register_pass(mutates_CFG=False, analysis_only=True)
class ChooseWarps(FunctionPass):
    """Where the kernel's warps are the compiler's to choose and its products need more
    (see the module's docstring), compile it again with them (:class:`WarpsChosen`)."""

    _name = "numba_tile_choose_warps"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        compilation = current()
        if not compilation.warps_open:
            return False
        chosen = warps_for(products(state.func_ir, state.typemap, state.calltypes),
                           compilation.num_warps)
        if chosen != compilation.num_warps:
            raise WarpsChosen(chosen)
        return False
