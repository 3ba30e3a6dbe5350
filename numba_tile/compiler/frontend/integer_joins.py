"""A variable that meets integers of two dtypes where paths join (the two sides of an
``if``, a loop's entry and its back edge) is cuTile's ``TileTypeError`` "Type of `a`
depends on path taken: Tile[int32,()] (on one path) vs. Tile[int64,()] (on another)" where
it is read, as interpreted: cuTile has no implicit widening at a join, and a loosely typed
integer constant takes its own dtype there (int32, int64 or uint64 by value).

Numba's typing unifies two integer types as the wider, and so does
:func:`~numba_tile.compiler.typing.joins.joined_type` while types are still being inferred:
a loop whose body folds its counter from a constant (``t = n``, ``t += 1`` for
``n = -2**31 - 1``) meets the constant it entered with, the constant its first typing round
folded (int32 by value) and the run-time value of the later rounds (int64), and only the
last two are its types. So the check runs once typing is done, on the final types of the
values each phi of SSA joins (:class:`CheckIntegerJoins`).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     a = 0
...     for i in range(4):
...         a = a + ct.int64(3)
...     ct.scatter(x, (), a)
>>> ct.compile(k, (np.zeros((), np.int64),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of `a` depends on path taken: Tile[int32,()] (on one
path) vs. Tile[int64,()] (on another)
...
"""

from numba.core import types
from numba.cuda.core import ir
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass

from ... import dtypes as d
from ...errors import SourceLocation, TileTypeError
from ...promotion import loose_concrete_dtype
from ..types import TypedConstant
from .contract import TYPED, tile_pass
from .defined_variables import is_phi, user_name


def _dtype(numba_type):
    """The integer dtype a value of ``numba_type`` has where paths meet (a loose constant's
    own), or None for anything else (bools included)."""
    if isinstance(numba_type, types.BooleanLiteral) or numba_type == types.boolean:
        return None
    if isinstance(numba_type, types.IntegerLiteral):
        try:
            return loose_concrete_dtype(numba_type.literal_value)
        except Exception:  # (an integer no dtype holds: its own error, elsewhere)
            return None
    if isinstance(numba_type, types.Integer):
        return d.to_dtype(f"{'int' if numba_type.signed else 'uint'}{numba_type.bitwidth}")
    if isinstance(numba_type, TypedConstant) and numba_type.dtype.is_integral:
        return numba_type.dtype  # (``ct.int64(5)``)
    return None


def _phis(func_ir):
    return [s for block in func_ir.blocks.values() for s in block.body if is_phi(s)]


def _first_reads(func_ir, phis):
    """Where each phi is first read by a statement that is not a phi (a phi read only by
    another phi is read where that one is)."""
    reads, phi_ids = {}, {id(statement) for statement in phis}
    for label in sorted(func_ir.blocks):
        for statement in func_ir.blocks[label].body:
            if id(statement) in phi_ids:
                continue
            target = statement.target.name if isinstance(statement, ir.Assign) else None
            for var in statement.list_vars():
                if var.name != target:
                    reads.setdefault(var.name, statement.loc)
    changed = True
    while changed:
        changed = False
        for statement in phis:
            loc = reads.get(statement.target.name)
            if loc is None:
                continue
            for value in statement.value.incoming_values:
                if isinstance(value, ir.Var) and value.name not in reads:
                    reads[value.name], changed = loc, True
    return reads


def check_integer_joins(func_ir, typemap):
    """Raise cuTile's ``TileTypeError`` at the first read of a user's variable whose paths
    give it integers of two dtypes."""
    phis = _phis(func_ir)
    reads = None
    for statement in phis:
        name = user_name(statement.target.name)
        if name is None or statement.target.name.startswith("$"):
            continue
        found = []
        for value in statement.value.incoming_values:
            if not isinstance(value, ir.Var):
                continue  # (a way that sets nothing: undefined, checked elsewhere)
            dtype = _dtype(typemap.get(value.name))
            if dtype is None:
                found = []
                break
            if dtype not in found:
                found.append(dtype)
        if len(found) < 2:
            continue
        reads = _first_reads(func_ir, phis) if reads is None else reads
        loc = reads.get(statement.target.name)
        if loc is None:  # never read: cuTile raises only where it is read
            continue
        first, second = found[:2]
        raise TileTypeError(f"Type of `{name}` depends on path taken: Tile[{first},()] (on "
                            f"one path) vs. Tile[{second},()] (on another)",
                            SourceLocation(loc.filename, loc.line))


@tile_pass("check that the paths joining at a variable give it one integer dtype",
           needs=(TYPED,))
@register_pass(mutates_CFG=False, analysis_only=True)
class CheckIntegerJoins(FunctionPass):
    """The compiler pass running :func:`check_integer_joins`."""

    _name = "numba_tile_check_integer_joins"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        check_integer_joins(state.func_ir, state.typemap)
        return False
