"""The type of a variable that two paths give different types (the branches of an ``if``, a
loop's entry and its back edge, the returns of a helper), as cuTile types it.

Numba unifies such types by its own rules: a float literal joins as a float64, a scalar and a
0-d tile not at all. In cuTile a loosely typed constant takes its own dtype where paths meet
(int32, int64 or uint64 by value, float32, bool_: seed 000, "Arithmetic Promotion"), a scalar
is a 0-d tile, and the types then have to be the same: ``v = 1.0 if c else 3.0`` is a float32
scalar, ``v = 1 if c else 2.0`` is an error ("Type of `v` depends on path taken"), as is
``v = 0 if c else f`` for a float32 scalar ``f``, ``s = "a" if c else "b"`` and ``v = None if c
else t``, and
``s = 0.0`` before a loop that does ``s = s + ct.sum(t)`` carries a float32 0-d tile.
:class:`~numba_tile.compiler.contexts.TileTypingContext` asks :func:`joined_type` first and
falls back to Numba's rules where it has no answer (integers without a tile: Numba's, but
for the int32 counters of :func:`joins_as_int32`).

>>> from numba.core import types
>>> from numba_tile.compiler.types import FloatLiteral
>>> from numba_tile.compiler.typing.joins import joined_type, MISMATCH
>>> joined_type(FloatLiteral(1.0), FloatLiteral(3.0))
float32
>>> joined_type(types.IntegerLiteral(1), FloatLiteral(2.0)) is MISMATCH
True
"""

from numba.core import types

from ... import dtypes as d
from ...promotion import loose_concrete_dtype
from ..types import FloatLiteral, TileType, TypedConstant, dtype_of_scalar, scalar_type

#: what :func:`joined_type` gives for types that cannot meet (Numba then reports the variable)
MISMATCH = object()
# the loosely typed constants, which take their own dtype where paths meet (``0`` on one
# path and a float32 scalar on another do not meet, where Numba would make a float64)
_LOOSE = (types.IntegerLiteral, types.BooleanLiteral)


def joins_as_int32(first, second):
    """Two different types, each an int32 or an integer constant that int32 holds: a counter
    (``j = 0``, then ``j += 1`` in a loop) is an int32 scalar."""
    return first != second and all(
        t == types.int32 or isinstance(t, types.IntegerLiteral) and
        -2 ** 31 <= t.literal_value < 2 ** 31 for t in (first, second))


def _dtype(numba_type):
    """The dtype a scalar or 0-d tile has where paths meet (a loose constant's own), or
    None for other types."""
    if isinstance(numba_type, FloatLiteral):
        return d.float32
    if isinstance(numba_type, types.BooleanLiteral):
        return d.bool_
    if isinstance(numba_type, types.IntegerLiteral):
        return loose_concrete_dtype(numba_type.literal_value)
    if isinstance(numba_type, TypedConstant):
        return numba_type.dtype
    if isinstance(numba_type, TileType):
        return numba_type.dtype if numba_type.shape == () else None
    return dtype_of_scalar(numba_type)


def _integer(dtype):
    return dtype.is_integral


def joined_type(first, second):
    """The type of a variable that is ``first`` on one path and ``second`` on another, by
    cuTile's rules where a loose float constant or a 0-d tile is one of them; MISMATCH
    where those rules say the types differ; None where Numba's rules decide."""
    if first == second:
        return None
    if all(isinstance(t, types.StringLiteral) for t in (first, second)):
        return MISMATCH  # a string is a constant, its value its type: "a" cannot meet "b"
    if types.none in (first, second):
        return MISMATCH  # None is a type of its own in cuTile (no Optional): no other meets it
    if joins_as_int32(first, second):
        return types.int32
    first_dtype, second_dtype = _dtype(first), _dtype(second)
    if first_dtype is None or second_dtype is None:
        return None
    tiles = [t for t in (first, second) if isinstance(t, TileType)]
    if not tiles and not any(isinstance(t, FloatLiteral) for t in (first, second)):
        if not any(isinstance(t, _LOOSE) for t in (first, second)) or \
                _integer(first_dtype) and _integer(second_dtype):
            # two run-time scalars, or integers of two widths: Numba's rules (the wider: a
            # loop's head meets the integer constant it entered with and the one its body
            # folded from it, ``t = n``, ``t += 1`` for n = -2**31 - 1, an int64)
            return None
    if first_dtype is not second_dtype:
        return MISMATCH
    if len(tiles) == 2:
        return None  # two 0-d tiles: their own unification (layouts)
    return tiles[0] if tiles else scalar_type(first_dtype)
