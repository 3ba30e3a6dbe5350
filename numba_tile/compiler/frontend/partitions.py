"""A ``ct.partition`` parameter is the block's own region of the array in tile code.

A partition argument is compiled as its whole array with the tile shape in its type
(:class:`~numba_tile.compiler.types.PartitionType`). This pass, the first of the frontend,
gives the parameter's variable the block's region instead: ``c = arg(0)`` becomes
``$whole.c = arg(0); c = partition_region($whole.c)``, typed as an array and lowered in
:mod:`..lowering.partitions`. Running first, it leaves no later pass a way to reach the
whole array (the pipelining of loads copies with the TMA only from a parameter's own
variable, which is now the region).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def fill(c):
...     ct.store(c, (0,), ct.full((16,), 1.0, ct.float32))
>>> compiled = ct.compile(fill, (ct.partition(np.zeros(100, np.float32), (16,)),))
>>> "ctaid.x" in compiled.ptx
True
"""

from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions

from ..intrinsics import partition_region
from ..types import PartitionType
from .contract import tile_pass


def take_regions(func_ir, arg_types):
    """Rewrite the assignment of each partition parameter (see the module's docstring). True
    if there was one."""
    changed = False
    for block in func_ir.blocks.values():
        body = []
        for statement in block.body:
            body.append(statement)
            if not (isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Arg)
                    and statement.value.index < len(arg_types)
                    and isinstance(arg_types[statement.value.index], PartitionType)):
                continue
            scope, loc, target = block.scope, statement.loc, statement.target
            whole = scope.redefine(f"$whole.{target.name}", loc)
            function = scope.redefine("$partition_region", loc)
            statement.target = whole
            body += [ir.Assign(ir.Global("partition_region", partition_region, loc), function,
                               loc),
                     ir.Assign(ir.Expr.call(function, (whole,), (), loc), target, loc)]
            changed = True
        block.body = body
    if changed:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


@tile_pass("give each ct.partition parameter the block's region")
@register_pass(mutates_CFG=False, analysis_only=False)
class TakePartitionRegions(FunctionPass):
    """The compiler pass running :func:`take_regions`."""

    _name = "numba_tile_take_partition_regions"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return take_regions(state.func_ir, state.args)
