"""Stores that may use the shared memory of the rings, once nothing reads or fills them again
(an IR pass before typing, after the pipelining pass).

A store of a tile whose registers hold short runs of a row goes through shared memory
(:mod:`~numba_tile.compiler.lowering.coalesced_stores`), in the scratch buffer that the
rings of pipelined loads leave. Where the stages fill the shared memory (attention's keys
and values beside its queries: 226 of 227 KiB) none is left, and the output of a block
leaves from registers in short pieces, behind which the block's end waits. Yet after the
pipelined loop the stages are idle: every copy into them has landed (a copy is started only
for an iteration that runs, and each iteration waits for its own), the products that read
them were waited for on the loop's way out, and a resident tile's copy was waited for
before the loop.

This pass rewrites each ``ct.store`` after which the kernel can reach no use of a ring
(no call of the pipelines' or residents' functions, no product, no wait for a product) into
:func:`~numba_tile.compiler.intrinsics.store_after_rings`: typed as ``ct.store``, lowered as
it, but where the scratch buffer has no room for it beside the rings, with the stages'
memory to go through (up to the first ring's ``mbarrier`` objects, which keep their memory;
see :meth:`~numba_tile.compiler.compile_state.CompileState.shared_after_rings`). A store
inside the loop of a persistent kernel's tiles is not one: the next tile's copies follow
it.

Seven stages of 128 x 128 x 64 float16 tiles take 225 of the 227 KiB of sm_90; the result
still leaves in 16-byte vectors, through the stages:

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel(num_stages=7, num_warps=8)
... def product(a, b, c):
...     acc = ct.zeros((128, 128), ct.float32)
...     for k in range(ct.num_tiles(a, 1, (128, 64))):
...         acc = ct.mma(ct.load(a, (ct.bid(0), k), (128, 64)),
...                      ct.load(b, (k, 0), (64, 128)), acc)
...     ct.store(c, (ct.bid(0), 0), acc.astype(c.dtype))
>>> a, b = np.ones((128, 512), np.float16), np.ones((512, 128), np.float16)
>>> compiled = ct.compile(product, (a, b, np.zeros((128, 128), np.float16)), arch="sm_90")
>>> compiled.dynamic_shared_bytes // 1024, compiled.ptx.count("ld.shared.v4")
(225, 8)
"""

import operator

from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ...language import matrix, memory
from .. import intrinsics
from .contract import tile_pass
from .device_output import callee
from .variable_versions import reached

# the calls that read or fill a ring (or wait for what reads one): none may follow a store
# that goes through the rings' memory
RING_USERS = frozenset((
    intrinsics.pipeline_prepare, intrinsics.pipeline_begin, intrinsics.pipeline_distance,
    intrinsics.pipeline_issue, intrinsics.pipeline_wait, intrinsics.pipeline_advance,
    intrinsics.pipeline_tile, intrinsics.pipeline_end, intrinsics.pipeline_producer,
    intrinsics.pipeline_produce, intrinsics.resident_tile, intrinsics.resident_produce,
    intrinsics.resident_release, intrinsics.staged_as_tfloat32, intrinsics.staged_reshape,
    intrinsics.deferred_mma, intrinsics.product_wait, intrinsics.products_retired,
    matrix.mma, matrix.matmul))
_RINGS = frozenset((intrinsics.pipeline_begin, intrinsics.resident_tile))


@tile_pass("let stores after the last use of the rings go through their memory",
           needs=("PipelineMmaLoads", "DeferProductWaits"))
@register_pass(mutates_CFG=False, analysis_only=False)
class StoreThroughFreedRings(FunctionPass):
    """Rewrite the stores after which no ring is used (see the module's docstring)."""

    _name = "numba_tile_store_through_freed_rings"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        blocks = func_ir.blocks
        calls = {label: [callee(func_ir, s.value) if _is_call(s) else None
                         for s in block.body] for label, block in blocks.items()}
        if not any(fn in _RINGS for found in calls.values() for fn in found):
            return False  # no ring: the scratch buffer is all there is
        uses_rings = {label: [fn in RING_USERS or _is_matmul_operator(s)
                              for fn, s in zip(calls[label], blocks[label].body)]
                      for label in blocks}
        cfg = compute_cfg_from_blocks(blocks)
        using = {label for label, found in uses_rings.items() if any(found)}
        rewritten = False
        for label, block in blocks.items():
            for position, statement in enumerate(list(block.body)):
                if calls[label][position] is not memory.store or \
                        any(uses_rings[label][position + 1:]) or reached(cfg, label) & using:
                    continue
                _call_instead(block, statement, intrinsics.store_after_rings)
                rewritten = True
        return rewritten


def _is_call(statement):
    return isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr) and \
        statement.value.op == "call"


def _is_matmul_operator(statement):
    """``x @ y`` (or ``x @= y``): a product."""
    value = statement.value if isinstance(statement, ir.Assign) else None
    return isinstance(value, ir.Expr) and value.op in ("binop", "inplace_binop") and \
        value.fn in (operator.matmul, operator.imatmul)


def _call_instead(block, statement, function):
    """Make ``statement``'s call call ``function``, with the same arguments."""
    loc = statement.loc
    var = block.scope.redefine(f"${function.__name__}", loc)
    block.body.insert(block.body.index(statement),
                      ir.Assign(ir.Global(function.__name__, function, loc), var, loc))
    statement.value.func = var
