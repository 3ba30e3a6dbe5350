"""Once the kernel is typed: the pipelines whose products (``wgmma``) run on into the next
iteration while its copies start, and whether any product is a ``wgmma``, recorded in the
compilation (a pass after type inference).

The lowering of a pipeline's calls comes before the product in the loop and must know
whether to wait for it; typing only computes types, so this pass finds them from the typed
calls of ``ct.mma``."""

from numba.cuda.core import ir as numba_ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ...language import matrix
from ..compile_state import current
from ..planning.products import plan
from ..intrinsics import deferred_mma
from ..planning.staged_loads import StagedTileType
from .contract import TYPED, tile_pass



def runs_on(x_type, y_type, acc_type, pipelines):
    """The id of the pipeline whose stages both operands of ``mma(x, y, acc)`` are in, where
    the product (a ``wgmma``) may run on while the iteration's copies start (until the next
    iteration's product is started), else None. ``pipelines``: the compilation's, by id."""
    if not (isinstance(x_type, StagedTileType) and isinstance(y_type, StagedTileType) and
            x_type.pipeline_id == y_type.pipeline_id) or x_type.transposed:
        return None  # (a transposed A is read into registers and written to scratch)
    pipeline = pipelines.get(x_type.pipeline_id)
    if pipeline is None or not pipeline.pipelined:
        return None
    found = plan(x_type, y_type, acc_type)
    if found is None or not found.instruction.startswith("wgmma"):
        return None
    return pipeline.pipeline_id


@tile_pass("find products that run on", needs=(TYPED, "PipelineMmaLoads", "ComputeIndexTilesInPlace"))
@register_pass(mutates_CFG=False, analysis_only=True)
class FindProductsInFlight(FunctionPass):
    """Once the kernel is typed, record in the compilation the pipelines whose products run
    on into the next iteration (:func:`runs_on`): the lowering of the pipeline's calls,
    which come before the product in the loop, waits accordingly."""

    _name = "numba_tile_find_products_in_flight"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        compilation = current()
        for block in state.func_ir.blocks.values():
            for statement in block.body:
                expr = statement.value if isinstance(statement, numba_ir.Assign) else None
                if not (isinstance(expr, numba_ir.Expr) and expr.op == "call") or getattr(
                        state.typemap.get(expr.func.name), "typing_key", None) not in \
                        (matrix.mma, deferred_mma):
                    continue
                operand_types = state.calltypes[expr].args[:3]
                found = plan(*operand_types)
                if found is not None and found.instruction.startswith("wgmma"):
                    compilation.any_wgmma = True
                found = runs_on(*operand_types, compilation.pipelines)
                if found is not None:
                    compilation.products_in_flight.add(found)
        return False
