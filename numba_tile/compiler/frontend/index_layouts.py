"""Index tiles computed where they are used: ``ct.arange`` typed in the layout of the op that
reads what is made from it (a pass after type inference, plus the call it writes).

Typing is forward: a tile gets its layout from its operands, and a new tile the default one.
A causal mask, ``ct.where(columns <= rows, scores, -math.inf)`` with ``rows`` an ``(m, 1)``
and ``columns`` a ``(1, n)`` tile of ``ct.arange`` values, is then made in the default layout
of an ``(m, n)`` tile, and ``ct.where`` moves it into the layout of ``scores`` (a product's
accumulator) through shared memory: barriers and a pass over the tile, for indices that each
thread could have computed in its own registers.

This pass finds each elementwise op whose tile operand goes through shared memory to reach
the op's layout, where that operand is computed only from ``ct.arange`` (by arithmetic and
comparisons with scalars and other such tiles, and ``[None, :]`` indexing), each value of it
read nowhere else. It asks each of those aranges for the op's layout, projected onto the
arange's axis (:func:`arange_in_layout`), and types the kernel again: forward typing carries
the layout down the chain (``(m, 1)`` and ``(1, n)`` slices of one layout merge back into it,
:func:`~numba_tile.compiler.typing.templates.merged_layout`), and the move costs nothing.
"""

import inspect

from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions
from numba.cuda.core.typed_passes import NopythonTypeInference

from ...language import elementwise, factories
from ...layouts import broadcast_projection, register_sources
from ..compile_state import current
from ..intrinsics import arange_in_layout
from ..types import TileType
from ..typing.shapes import inserted_axes
from .contract import TYPED, tile_pass


# -- the analysis ------------------------------------------------------------------------------
def projected(layout, shape):
    """``layout`` (of a broadcast result) as the layout of an operand of ``shape`` that
    broadcasts to it register by register: leading axes dropped, axes of length 1 pinned.

    >>> from numba_tile.compiler.frontend.index_layouts import projected
    >>> from numba_tile.layouts import blocked
    >>> full = blocked((8, 64), num_warps=4, element_bytes=4)
    >>> projected(full, (1, 64)) == full.collapse((0,)), projected(full, (64,)).shape
    (True, (64,))
    """
    while len(layout.shape) > len(shape):
        layout = layout.slice(0)
    return layout.collapse(tuple(i for i, n in enumerate(shape) if n == 1))


def _moves_through_shared(operand, result):
    return register_sources(operand.layout, result.layout,
                            broadcast_projection(operand.shape, result.shape)) is None


class _IndexTiles:
    """The elementwise ops of a typed kernel and the aranges to ask for layouts."""

    def __init__(self, func_ir, typemap, calltypes):
        self.typemap, self.calltypes = typemap, calltypes
        self.definitions, self.readers = {}, {}
        for block in func_ir.blocks.values():
            for statement in block.body:
                if isinstance(statement, ir.Assign):
                    self.definitions.setdefault(statement.target.name, []).append(statement)
                    read = statement.value.list_vars() if isinstance(
                        statement.value, ir.Expr) else (
                        [statement.value] if isinstance(statement.value, ir.Var) else [])
                else:
                    read = statement.list_vars()
                for var in read:
                    self.readers.setdefault(var.name, []).append(statement)

    def _is_arange(self, expr):
        function = self.typemap.get(expr.func.name)
        return getattr(function, "typing_key", None) is factories.arange

    def operands(self, expr):
        """The variables an elementwise expression reads, or None for any other expression
        (its result is a tile)."""
        signature = self.calltypes.get(expr)
        if signature is None or not isinstance(signature.return_type, TileType):
            return None
        if expr.op in ("binop", "inplace_binop"):
            return [expr.lhs, expr.rhs]
        if expr.op == "unary":
            return [expr.value]
        if expr.op == "call":
            function = self.typemap.get(expr.func.name)
            key = getattr(function, "typing_key", None)
            if getattr(key, "__module__", None) == elementwise.__name__ and not expr.vararg:
                return list(expr.args) + [var for _, var in expr.kws]
        return None

    def ask(self, name, layout, plan):
        """Add to ``plan`` (variable name to layout) what makes variable ``name`` come out
        in ``layout``; False where it is not made of aranges alone."""
        tile = self.typemap.get(name)
        if not isinstance(tile, TileType) or tile.shape != layout.shape:
            return False
        if name in plan:
            return plan[name] == layout
        if tile.layout == layout:
            return True
        definitions = self.definitions.get(name, ())
        if len(definitions) != 1 or not isinstance(definitions[0].value, ir.Expr):
            return False
        expr = definitions[0].value
        plan[name] = layout
        if expr.op == "call" and self._is_arange(expr):
            return True
        if expr.op in ("getitem", "static_getitem"):
            source = self.typemap.get(expr.value.name)
            if not isinstance(source, TileType):
                return False
            inner = layout
            for axis in reversed(inserted_axes(
                    source.ndim, self.calltypes[expr].args[1])):
                inner = inner.slice(axis)
            return self.ask(expr.value.name, inner, plan)
        operands = self.operands(expr)
        if operands is None:
            return False
        return all(self.ask(var.name, projected(layout, self.typemap[var.name].shape), plan)
                   for var in operands if isinstance(self.typemap.get(var.name), TileType))

    def plan(self):
        """Variable name to layout, for every arange chain worth retyping."""
        trees = []  # (the op's statement, its plan)
        for statements in self.definitions.values():
            for statement in statements:
                expr = statement.value
                operands = self.operands(expr) if isinstance(expr, ir.Expr) else None
                if operands is None:
                    continue
                result = self.calltypes[expr].return_type
                for var in operands:
                    tile = self.typemap.get(var.name)
                    if not isinstance(tile, TileType) or not _moves_through_shared(tile, result):
                        continue
                    plan = {}
                    if self.ask(var.name, projected(result.layout, tile.shape), plan) and plan:
                        trees.append((statement, plan))
        # an op that is itself part of another tree (``columns <= rows`` moves ``rows`` to
        # its fresh layout, then ``ct.where`` moves the mask) takes that tree's layout
        inner = {name for _, plan in trees for name in plan}
        trees = [(s, plan) for s, plan in trees if s.target.name not in inner]
        # keep the trees that agree with each other and whose values nothing else reads
        while True:
            merged, conflict = {}, set()
            for _, plan in trees:
                for name, layout in plan.items():
                    if merged.setdefault(name, layout) != layout:
                        conflict.add(name)
            allowed = {id(s) for s, _ in trees} | {
                id(self.definitions[name][0]) for name in merged}
            bad = conflict | {name for name in merged if any(
                id(reader) not in allowed for reader in self.readers.get(name, ()))}
            if not bad:
                return merged
            trees = [(s, plan) for s, plan in trees if not bad & plan.keys()]


def _rewrite_aranges(func_ir, typemap, plan):
    """Replace the ``ct.arange`` calls that define variables of ``plan`` with
    :func:`arange_in_layout` calls; True if any was."""
    signature = inspect.signature(factories.arange)
    rewritten = False
    for block in func_ir.blocks.values():
        body = []
        for statement in block.body:
            expr = statement.value if isinstance(statement, ir.Assign) else None
            if not (isinstance(expr, ir.Expr) and expr.op == "call"
                    and statement.target.name in plan and getattr(
                        typemap.get(expr.func.name), "typing_key", None) is factories.arange):
                body.append(statement)
                continue
            layout = plan[statement.target.name]
            key = repr(layout)
            current().index_layouts[key] = layout
            loc, scope = statement.loc, block.scope
            callee = scope.redefine("$arange_in_layout", loc)
            key_var = scope.redefine("$layout_key", loc)
            body.append(ir.Assign(ir.Global(arange_in_layout.__name__, arange_in_layout, loc),
                                  callee, loc))
            body.append(ir.Assign(ir.Const(key, loc), key_var, loc))
            bound = signature.bind(*expr.args, **dict(expr.kws))  # checked by the typing
            kws = [(name, var) for name, var in bound.arguments.items() if name != "size"]
            statement.value = ir.Expr.call(callee, [bound.arguments["size"]],
                                           kws + [("layout_key", key_var)], loc)
            body.append(statement)
            rewritten = True
        block.body = body
    return rewritten


@tile_pass("compute index tiles in place", needs=(TYPED,))
@register_pass(mutates_CFG=False, analysis_only=False)
class ComputeIndexTilesInPlace(FunctionPass):
    """Ask aranges for the layout that reads them, and type again (see the module's
    docstring)."""

    _name = "numba_tile_compute_index_tiles_in_place"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        plan = _IndexTiles(state.func_ir, state.typemap, state.calltypes).plan()
        if not plan:
            return False
        blocks = state.func_ir.blocks
        bodies = {label: list(block.body) for label, block in blocks.items()}
        values = {id(s): (s, s.value) for body in bodies.values() for s in body
                  if isinstance(s, ir.Assign)}
        typing = (state.typemap, state.calltypes, state.return_type)
        try:
            if not _rewrite_aranges(state.func_ir, state.typemap, plan):
                return False
            state.func_ir._definitions = build_definitions(blocks)
            NopythonTypeInference().run_pass(state)
        except Exception:  # noqa: BLE001 - an optimization: the first typing stands
            for label, body in bodies.items():
                blocks[label].body = body
            for statement, value in values.values():
                statement.value = value
            state.func_ir._definitions = build_definitions(blocks)
            state.typemap, state.calltypes, state.return_type = typing
            return False
        return True
