"""The order of the frontend's passes, declared once, and what each needs from those before.

numba-cuda's kernel pipeline turns bytecode into Numba IR, inlines (our helpers are inlined
before it starts, :mod:`.helpers`), unrolls literal loops, infers types and lowers. Our passes
go in at three places of it (:data:`STEPS`), each :class:`Step` naming numba-cuda's pass it
goes before or after:

1. before ``GenericRewrites``: each ``ct.partition`` parameter made the block's region
   (:mod:`.partitions`), before any pass looks for parameters; ``print(..., sep=, end=)``
   rewritten before Numba rejects it;
2. before ``LiteralUnroll`` (helpers are inlined by then): the calls of closures and of
   recursive helpers inlined (:mod:`.inlining`), ``static_iter`` loops unrolled,
   branches on constants decided (so that loads under ``if`` on a constant are pipelined
   as any other), the returns of helpers joined where their result is unread
   (:mod:`.helper_returns`), the loads that feed ``mma`` pipelined, and then the waits for
   products put where their results are read (which leaves the products of pipelined tiles
   alone), the turns of consumer warpgroups taken, and the stores after the last use of
   the rings let through their memory (:mod:`.freed_rings`);
3. around ``NopythonTypeInference``: device output of inlined helpers rewritten and
   constant branches decided again before it, then the functions of dataclasses inlined
   where the kernel typed as far as it can shows their calls, then the values meeting where
   the sides of an ``if`` join put in cuTile's order (:mod:`.join_order`); after it, the
   items of the ``static_iter`` loops that typing found checked (the kernel compiled again
   where they are new), every variable read checked to be set on every path
   (:mod:`.defined_variables`), the warps chosen where the kernel left them to the
   compiler (compiled again where its products need more, :mod:`.warps`), index tiles
   asked for the layout of their reader (typing again), then the products that run on into
   the next iteration found from the final types.

Each of our passes declares what it needs (:func:`tile_pass`): the declared order is checked
when the pipeline is built (:func:`ordered`), and each pass checks, when it runs, that what
it needs ran in this compilation (``TileInternalError`` otherwise).

>>> from numba_tile.compiler.frontend.passes import STEPS, ordered
>>> [p.__name__ for p in ordered()][:3]
['TakePartitionRegions', 'RewriteDeviceOutput', 'InlineCalls']
"""

from typing import NamedTuple

from numba.cuda.core.typed_passes import NopythonTypeInference
from numba.cuda.core.untyped_passes import GenericRewrites, LiteralUnroll

from ...errors import TileInternalError
from .inlining import InlineCalls
from .constant_branches import PruneConstantBranches
from .dataclass_members import InlineDataclassMembers
from .deferred_products import DeferProductWaits
from .freed_rings import StoreThroughFreedRings
from .defined_variables import CheckDefinedVariables
from .integer_joins import CheckIntegerJoins
from .device_output import RewriteDeviceOutput
from .helper_returns import JoinHelperReturns
from .contract import TYPED
from .index_layouts import ComputeIndexTilesInPlace
from .join_order import OrderJoins
from .loop_tests import KeepLoopTests
from .partitions import TakePartitionRegions
from .pipelining import PipelineMmaLoads
from .products_in_flight import FindProductsInFlight
from .static_iter import CheckStaticIterItems, UnrollStaticIter
from .static_raises import RaiseStaticExceptions
from .warpgroup_turns import TakeWarpgroupTurns
from .warps import ChooseWarps

class Step(NamedTuple):
    """Our ``passes``, in order, ``where`` (``"before"`` or ``"after"``) numba-cuda's pass
    ``anchor``."""

    anchor: type
    where: str
    passes: tuple


STEPS = (
    Step(GenericRewrites, "before", (TakePartitionRegions, RewriteDeviceOutput)),
    Step(LiteralUnroll, "before", (InlineCalls, UnrollStaticIter, KeepLoopTests,
                                   PruneConstantBranches,
                                   JoinHelperReturns, PipelineMmaLoads, DeferProductWaits,
                                   TakeWarpgroupTurns, StoreThroughFreedRings)),
    Step(NopythonTypeInference, "before", (RewriteDeviceOutput, PruneConstantBranches,
                                           InlineDataclassMembers, OrderJoins)),
    Step(NopythonTypeInference, "after", (RaiseStaticExceptions, CheckStaticIterItems,
                                          CheckDefinedVariables,
                                          CheckIntegerJoins, ChooseWarps,
                                          ComputeIndexTilesInPlace, FindProductsInFlight)),
)


def ordered():
    """Our passes in the order they run, each checked to come after what it needs."""
    seen, order = {TYPED: False}, []
    for step in STEPS:
        if step.anchor is NopythonTypeInference and step.where == "after":
            seen[TYPED] = True
        for pass_class in step.passes:
            missing = [need for need in pass_class.needs if not seen.get(need)]
            if missing:
                raise TileInternalError(f"{pass_class.__name__} is declared before "
                                        f"{', '.join(missing)}, which it needs")
            seen[pass_class.__name__] = True
            order.append(pass_class)
    return order


def insert(passes):
    """numba-cuda's ``(pass, description)`` list with ours put in (see :data:`STEPS`)."""
    ordered()  # the declared order holds
    result = []
    for pass_class, description in passes:
        result += [(p, p.description) for step in STEPS for p in step.passes
                   if step.anchor is pass_class and step.where == "before"]
        result.append((pass_class, description))
        result += [(p, p.description) for step in STEPS for p in step.passes
                   if step.anchor is pass_class and step.where == "after"]
    return result
