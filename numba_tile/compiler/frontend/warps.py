"""The warps of a kernel that does not choose them (cuTile has no such option: its compiler
chooses), from the products it computes (a pass after type inference).

A kernel is compiled with :data:`~numba_tile.compiler.compilation.DEFAULT_NUM_WARPS` warps
first. Where its products' accumulators (each ``ct.mma``/``ct.matmul``/``ct.mma_scaled``
of the source counted once, whatever loop unrolling copied it) would take more than
:data:`ACCUMULATOR_WORDS` 32-bit registers a thread in those warps, it is compiled again
with :data:`MORE_WARPS`: a 128 x 128 float32 accumulator is 128 registers a thread in 4
warps, which leaves too few for its operands, and the two accumulators of attention (the
scores and the output) more than that. Tiles are split over the warps by their layouts, so
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

from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ...language import matrix, scaled_products
from ..compilation import current
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


def accumulator_words(func_ir, typemap, calltypes):
    """The 32-bit words of the results of the kernel's products, each statement of the
    source counted once."""
    seen = {}
    for block in func_ir.blocks.values():
        for statement in block.body:
            expr = statement.value if isinstance(statement, ir.Assign) else None
            if not (isinstance(expr, ir.Expr) and expr.op == "call") or getattr(
                    typemap.get(expr.func.name), "typing_key", None) not in _PRODUCTS:
                continue
            result = calltypes[expr].return_type
            if isinstance(result, TileType):
                words = -(-result.layout.num_elements * result.dtype.itemsize // 4)
                seen[(statement.loc.filename, statement.loc.line, result.shape)] = words
    return sum(seen.values())


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
        threads = 32 * compilation.num_warps
        words = accumulator_words(state.func_ir, state.typemap, state.calltypes)
        if words > ACCUMULATOR_WORDS * threads and compilation.num_warps < MORE_WARPS:
            raise WarpsChosen(MORE_WARPS)
        return False
