"""Branches on compile-time constants are decided before typing.

Tile code branches on constants to specialize (``if x.ndim == 1:``, ``dt = ct.tfloat32 if
A.dtype == ct.float32 else A.dtype``); only the taken side may be typed, since the other may
be invalid for these argument types. This pass evaluates the expressions that depend only on
constants (literals, ``Constant`` parameters, an array's ``ndim`` and ``dtype``, globals such
as dtypes and enum members), turns branches on them into jumps, and removes the blocks no
longer reached, before Numba's type inference runs.
"""

import enum
import operator
import types

from numba.core import types as types_
from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.ir_utils import build_definitions

from ...dtypes import DType
from ...language.debugging import ensure_constant
from ..abstract import constant_of
from ..constant_folding import FOLDABLE
from ..types import ArrayType
from .contract import tile_pass

_UNKNOWN = object()
_COMPARISONS = {operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
                operator.is_, operator.is_not, operator.contains}


class _ArrayFacts:
    """What is constant about an array argument: its dtype and rank."""

    is_tile_array = True  # (an array to :func:`numba_tile.rules.calls.recursion_key`)

    def __init__(self, array_type):
        self.dtype = array_type.dtype
        self.ndim = array_type.ndim


class _ItemFacts:
    """What is constant about the items of a tuple or list argument holding arrays (cuTile's
    ``inp_list[peer].dtype``): each item's facts, by position."""

    def __init__(self, items):
        self.items = items

    def item(self, index):
        """The facts of item ``index``, or of any item when the index is known only at run
        time and every item has the same facts (a list's arrays share one type)."""
        if isinstance(index, int) and not isinstance(index, bool):
            try:
                return self.items[index]
            except IndexError:  # typing reports it
                return _UNKNOWN
        first = self.items[0] if self.items else _UNKNOWN
        if index is _UNKNOWN and isinstance(first, _ArrayFacts) and all(
                isinstance(i, _ArrayFacts) and (i.dtype, i.ndim) == (first.dtype, first.ndim)
                for i in self.items):
            return first
        return _UNKNOWN


def _argument_value(arg_type):
    if isinstance(arg_type, ArrayType):
        return _ArrayFacts(arg_type)
    if isinstance(arg_type, types_.BaseTuple) and any(
            isinstance(t, (ArrayType, types_.BaseTuple)) for t in arg_type.types):
        return _ItemFacts([_argument_value(t) for t in arg_type.types])
    return constant_of(arg_type, _UNKNOWN)  # a run-time value: the branch stays


class _Evaluator:
    """Values of single-definition variables that depend only on constants."""

    def __init__(self, func_ir, arg_types):
        self.func_ir = func_ir
        self.arg_types = arg_types
        self.cache = {}

    def value_of(self, var):
        if var.name in self.cache:
            return self.cache[var.name]
        self.cache[var.name] = _UNKNOWN  # guards against cycles
        definitions = self.func_ir._definitions.get(var.name, [])
        value = self._evaluate(definitions[0]) if len(definitions) == 1 else _UNKNOWN
        self.cache[var.name] = value
        return value

    def _evaluate(self, node):
        if isinstance(node, ir.var_types):
            return self.value_of(node)
        if isinstance(node, ir.arg_types):
            if node.index < len(self.arg_types):
                return _argument_value(self.arg_types[node.index])
            return _UNKNOWN
        if isinstance(node, ir.const_types) or isinstance(node, (ir.global_types,
                                                                 ir.freevar_types)):
            return node.value
        if not isinstance(node, ir.expr_types):
            return _UNKNOWN
        if node.op == "getattr":
            base = self.value_of(node.value)
            if base is _UNKNOWN:
                return _UNKNOWN
            if isinstance(base, _ArrayFacts):
                return getattr(base, node.attr, _UNKNOWN)
            return getattr(base, node.attr, _UNKNOWN) if _is_static(base) else _UNKNOWN
        if node.op == "exhaust_iter":  # a, b = xs: the items, as xs[0], xs[1]
            base = self.value_of(node.value)
            return base if isinstance(base, _ItemFacts) and node.count == len(base.items) \
                else _UNKNOWN
        if node.op in ("getitem", "static_getitem"):
            base = self.value_of(node.value)
            if not isinstance(base, _ItemFacts):
                return _UNKNOWN
            index = node.index if node.op == "static_getitem" else self.value_of(node.index)
            return base.item(index)
        if node.op == "binop" and node.fn in FOLDABLE | _COMPARISONS:
            left, right = self.value_of(node.lhs), self.value_of(node.rhs)
            return _apply(node.fn, left, right)
        if node.op == "unary" and node.fn in FOLDABLE:
            return _apply(node.fn, self.value_of(node.value))
        if node.op == "call" and not node.kws and len(node.args) == 1:
            function = self.value_of(node.func)
            if function is bool:
                return _apply(bool, self.value_of(node.args[0]))
            if function is ensure_constant:  # its argument (a run-time one: typing's error)
                return self.value_of(node.args[0])
        if node.op == "phi":  # after pruning, a join may have one way in left
            values = {id(v): self.value_of(v) for v in node.incoming_values}
            distinct = list(values.values())
            if len(distinct) == 1 or (distinct and all(
                    v is not _UNKNOWN and v == distinct[0] for v in distinct)):
                return distinct[0]
            return _UNKNOWN
        if node.op == "build_tuple":
            items = [self.value_of(v) for v in node.items]
            return _UNKNOWN if any(v is _UNKNOWN for v in items) else tuple(items)
        return _UNKNOWN


def _is_static(value):
    """Objects whose attributes are compile-time facts: modules, classes, enums, dtypes."""
    return isinstance(value, (types.ModuleType, type, enum.Enum, DType))


def _apply(function, *values):
    if any(v is _UNKNOWN or isinstance(v, (_ArrayFacts, _ItemFacts)) for v in values):
        return _UNKNOWN
    try:
        return function(*values)
    except Exception:  # leave it to the typing, which reports errors properly
        return _UNKNOWN


def constant_values(func_ir, arg_types, variables, unknown):
    """The compile-time values of ``variables`` (IR variables), ``unknown`` for each that
    is known only at run time (an array argument: what is constant about it, its dtype and
    rank)."""
    evaluator = _Evaluator(func_ir, arg_types)
    # (the items of a tuple argument: no value a key of the helper's calls can compare)
    return [unknown if value is _UNKNOWN or isinstance(value, _ItemFacts) else value
            for value in map(evaluator.value_of, variables)]


def prune_constant_branches(func_ir, arg_types):
    """Replace branches on constant conditions by jumps and drop the unreachable blocks,
    until nothing changes (a decided branch can make a later condition constant).
    Returns True if the IR changed."""
    changed = False
    while _prune_once(func_ir, arg_types):
        changed = True
    return changed


def _prune_once(func_ir, arg_types):
    evaluator = _Evaluator(func_ir, arg_types)
    changed = False
    for block in func_ir.blocks.values():
        branch = block.terminator
        if not isinstance(branch, ir.branch_types):
            continue
        condition = evaluator.value_of(branch.cond)
        if condition is _UNKNOWN or not isinstance(condition, (bool, int)):
            continue
        target = branch.truebr if condition else branch.falsebr
        block.body[-1] = ir.Jump(target, branch.loc)
        changed = True
    if not changed:
        return False
    cfg = compute_cfg_from_blocks(func_ir.blocks)
    dead = set(cfg.dead_nodes())
    for label in dead:
        del func_ir.blocks[label]
    for block in func_ir.blocks.values():  # phis lose their edges from removed blocks
        for statement in block.body:
            value = getattr(statement, "value", None)
            if isinstance(value, ir.expr_types) and value.op == "phi":
                keep = [i for i, b in enumerate(value.incoming_blocks) if b not in dead]
                value.incoming_values = [value.incoming_values[i] for i in keep]
                value.incoming_blocks = [value.incoming_blocks[i] for i in keep]
    func_ir._definitions = build_definitions(func_ir.blocks)
    return True


@tile_pass("decide branches on constants")
@register_pass(mutates_CFG=True, analysis_only=False)
class PruneConstantBranches(FunctionPass):
    """The compiler pass running :func:`prune_constant_branches` before type inference."""

    _name = "numba_tile_prune_constant_branches"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return prune_constant_branches(state.func_ir, state.args)
