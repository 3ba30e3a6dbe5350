"""What the objects of tile code (tiles, arrays, tiled views, list arguments, raw memory)
do not have, in both executors' words: an attribute cuTile does not define, a Python builtin
that does not apply to them, an index into a fixed tuple beyond its end.

Each object has a *kind*, the name of its class in cuTile (``"Tile"``, ``"Array"``,
``"TiledView"``, ``"List"``, ``"RawArrayMemory"``); the interpreter's host objects say it in
``object_kind``, the compiler's typing derives it from the Numba type. A run-time scalar is a
``"Tile"`` (cuTile's 0-d tile); a Python number is none.

>>> from numba_tile.rules.objects import builtin_call_error, no_attribute_error
>>> print(no_attribute_error("Tile", "T"))
Tile has no attribute 'T'
>>> print(builtin_call_error("len", ["Array"]))
len() of an Array is not supported in tile code; use its .shape
>>> print(builtin_call_error("float", ["Array"]))  # doctest: +ELLIPSIS
float() of an Array is not supported in tile code; it is memory, not values: ...
"""

from ..errors import TileTypeError
from .core import constant_value
from .operators import OPERATORS
from .syntax import MissingAttributeError

#: builtins that iterate their argument(s): no tile-code object but a list argument (a
#: tuple) is iterable (``list()``, ``set()``, ``dict()`` are refused whatever they are given:
#: :mod:`.calls`)
ITERATING = frozenset({"iter", "next", "sum", "sorted", "reversed", "enumerate", "zip", "map",
                       "filter", "any", "all", "tuple"})
#: builtins that take a number: a tile (a scalar) may be converted, nothing else may
NUMERIC = frozenset({"float", "int", "bool", "abs", "round", "complex", "hash", "hex", "oct",
                     "bin", "chr", "ord", "divmod", "pow", "min", "max"})
#: what a tile (a run-time scalar included) takes of NUMERIC, as cuTile defines them:
#: conversions, abs, elementwise min/max of two or more, divmod and pow
_TILE_NUMERIC = frozenset({"float", "int", "bool", "abs", "divmod", "pow", "min", "max"})
#: every builtin these rules judge
BUILTINS = ITERATING | NUMERIC | {"len"}
#: the fewest and most positional arguments each takes (None: no most), as in Python
_ARITY = {"iter": (1, 2), "next": (1, 2), "sum": (1, 2), "sorted": (1, 1), "reversed": (1, 1),
          "enumerate": (1, 2), "zip": (0, None), "map": (2, None), "filter": (2, 2),
          "any": (1, 1), "all": (1, 1), "tuple": (0, 1), "float": (0, 1), "int": (0, 2),
          "bool": (0, 1), "abs": (1, 1), "round": (1, 2), "complex": (0, 2), "hash": (1, 1),
          "hex": (1, 1), "oct": (1, 1), "bin": (1, 1), "chr": (1, 1), "ord": (1, 1),
          "divmod": (2, 2), "pow": (2, 3), "min": (1, None), "max": (1, None), "len": (1, 1)}
#: the kinds of the Python values no conversion (int(), bool(), ...) takes in tile code (a
#: str converts at compile time: float("-inf"))
_NOT_NUMBERS = ("None",)
#: the builtins of one value that refuse those (min, max, divmod, pow and abs are
#: elementwise where a tile is among their arguments: the operand's rule names what is no
#: value)
_CONVERSIONS = NUMERIC - {"divmod", "pow", "min", "max", "abs"}

#: the kind of an instance of a dataclass is this, then its class's name
DATACLASS_KIND = "dataclass "

#: the kinds that are memory, not values: no operator applies to them
MEMORY_KINDS = ("Array", "TiledView", "RawArrayMemory")


class TileObject:
    """Base of the interpreter's host objects of tile code: reading an attribute the object
    lacks is cuTile's ``TileTypeError`` (an ``AttributeError`` too, so that ``hasattr`` and
    ``getattr(obj, name, default)`` still work)."""

    __slots__ = ()
    object_kind = "Tile"

    def __getattr__(self, name):
        # (Python's protocols probe dunders with hasattr: the error is an AttributeError)
        raise no_attribute_error(self.object_kind, name)

    def __getitem__(self, index):  # (a tile's own, expand_dims, replaces it)
        raise subscript_error(self.object_kind)

    def __iter__(self):  # (else Python would iterate by __getitem__)
        raise iteration_error(self.object_kind)

    def __reversed__(self):
        raise iteration_error(self.object_kind)

    def __complex__(self):
        raise builtin_call_error("complex", [self.object_kind])


class MemoryObject(TileObject):
    """Base of the host objects that are memory (arrays, tiled views, raw memory): an
    operator of tile code on one is cuTile's ``TileTypeError`` (:func:`operator_error`).
    (``==`` and ``!=`` keep Python's identity, which the interpreter's own code relies on;
    tile code's comparisons are checked where its source is rewritten.)"""

    __slots__ = ()


def _refused_operator(symbol):
    def refused(self, *other):
        raise operator_error(symbol, self.object_kind)
    return refused


for _op in OPERATORS:
    if _op.symbol is not None and _op.symbol not in ("==", "!="):
        setattr(MemoryObject, _op.dunder, _refused_operator(_op.symbol))
        if _op.reflected_dunder:
            setattr(MemoryObject, _op.reflected_dunder, _refused_operator(_op.symbol))


def operator_error(symbol, kind):
    """The ``TileTypeError`` of operator ``symbol`` applied to an object of a memory kind
    (``x + 1`` of an array).

    >>> from numba_tile.rules.objects import operator_error
    >>> print(operator_error("+", "Array"))
    Operator '+' is not supported on an Array: it is memory, not values; load a tile from ...
    """
    return TileTypeError(f"Operator '{symbol}' is not supported on {_article(kind)} {kind}: it "
                         f"is memory, not values; load a tile from it first (ct.load)")


def call_object_error(kind):
    """The ``TileTypeError`` of calling an object of ``kind`` (``x(1)``, ``t(0)``), in
    cuTile's words. (The host objects define no ``__call__``, so that ``callable`` stays
    false for them: the interpreter turns Python's error into this one.)

    >>> from numba_tile.rules.objects import call_object_error
    >>> print(call_object_error("Tile"))
    Cannot call an object of type Tile
    """
    return TileTypeError(f"Cannot call an object of type {kind}")


def no_attribute_error(kind, name):
    """The error of reading attribute ``name`` that an object of ``kind`` lacks (``t.T``,
    ``x.size``)."""
    return MissingAttributeError(f"{kind} has no attribute '{name}'")


def _article(kind):
    return "an" if kind[0] in "AEIOU" else "a"


def builtin_call_error(name, kinds):
    """The ``TileTypeError`` of calling builtin ``name`` on positional arguments of
    ``kinds`` (each a kind, ``"None"`` or ``"str"`` for those Python values, or None for
    another value of no kind), or None where the call is not refused by these rules. A
    builtin that iterates says so, whichever it is (Python's ``tuple(x)`` iterates ``x`` as
    ``iter(x)`` does).

    >>> from numba_tile.rules.objects import builtin_call_error
    >>> builtin_call_error("min", ["Tile", None]) is None  # elementwise
    True
    >>> print(builtin_call_error("min", ["Tile"]))
    Tiles cannot be iterated; use ct.extract or a reduction
    >>> print(builtin_call_error("max", []))
    max() takes at least 1 argument, got 0
    >>> print(builtin_call_error("int", ["None"]))
    int() of None is not supported in tile code
    """
    if name not in BUILTINS:
        return None
    fewest, most = _ARITY[name]
    if not fewest <= len(kinds) <= (len(kinds) if most is None else most):
        expected = f"{fewest}" if fewest == most else f"at least {fewest}" if most is None \
            else f"{fewest} to {most}"
        shown = most if most is not None else fewest  # the count the words end on
        return TileTypeError(f"{name}() takes {expected} argument{'s' * (shown != 1)}, "
                             f"got {len(kinds)}")
    if name == "pow" and len(kinds) == 3 and "Tile" in kinds:
        return TileTypeError("pow() with a modulus (a third argument) is not supported on "
                             "tiles; use ct.pow and the % operator")
    for kind in kinds:
        if kind is not None and kind.startswith(DATACLASS_KIND):
            # (an instance of a frozen dataclass: cuTile's words, as Python's own)
            cls = kind[len(DATACLASS_KIND):]
            return TileTypeError(f"'{cls}' object has no len()" if name == "len" else
                                 f"{name}() of a '{cls}' object is not supported in tile "
                                 f"code")
        if kind in _NOT_NUMBERS:
            if name in _CONVERSIONS or name == "len":
                return TileTypeError(f"{name}() of None is not supported in tile code")
            continue
        if kind == "str":
            continue
        if kind is None or kind == "List" and name not in NUMERIC:
            continue
        if kind == "Tile" and (name in _TILE_NUMERIC and not (
                name in ("min", "max") and len(kinds) == 1)):
            continue
        if name in ITERATING or name in ("min", "max") and len(kinds) == 1:
            return iteration_error(kind)
        if name == "len":
            return TileTypeError(f"len() of {_article(kind)} {kind} is not supported in tile "
                                 f"code; use its .shape")
        hint = "use astype() or the ct operations" if kind == "Tile" else \
            "a list argument holds arrays, not a number" if kind == "List" else \
            "it is memory, not values: load a tile from it first (ct.load)"
        return TileTypeError(f"{name}() of {_article(kind)} {kind} is not supported in tile "
                             f"code; {hint}")
    return None


def conversion_error(name, value):
    """cuTile's ``TileTypeError`` of builtin ``name`` (``int``, ``float``) of a constant it
    cannot convert (``int("abc")``).

    >>> from numba_tile.rules.objects import conversion_error
    >>> print(conversion_error("int", "abc"))
    Invalid argument for int(abc)
    """
    return TileTypeError(f"Invalid argument for {name}({value})")


def iteration_error(kind):
    """The ``TileTypeError`` of iterating an object of ``kind`` (``iter``, ``sum``,
    ``tuple(...)``, a one-argument ``min``).

    >>> from numba_tile.rules.objects import iteration_error
    >>> print(iteration_error("Array"))
    An Array cannot be iterated; load a tile from it (ct.load) and use ct.extract or a reduction
    """
    if kind == "Tile":
        return TileTypeError("Tiles cannot be iterated; use ct.extract or a reduction")
    return TileTypeError(f"{_article(kind).capitalize()} {kind} cannot be iterated; load a "
                         f"tile from it (ct.load) and use ct.extract or a reduction")


def subscript_error(kind):
    """The ``TileTypeError`` of ``obj[i]`` on an object of ``kind`` that takes no index
    (an array: ``x[0]``).

    >>> from numba_tile.rules.objects import subscript_error
    >>> print(subscript_error("Array"))  # doctest: +ELLIPSIS
    Arrays are not directly subscriptable. Use load() or gather() instead: ct.load(array, ...
    """
    if kind == "Array":  # (cuTile's words)
        return TileTypeError("Arrays are not directly subscriptable. Use load() or gather() "
                             "instead: ct.load(array, index, shape) or ct.gather(array, "
                             "indices)")
    return TileTypeError(f"{_article(kind).capitalize()} {kind} cannot be indexed with []; "
                         f"load a tile from it with ct.load(array, index, shape) or "
                         f"ct.gather(array, indices)")


def check_index_in_range(index, length, what="Tuple"):
    """Raise ``TileTypeError`` where constant ``index`` is outside a tuple of ``length``
    items (``x.shape[5]`` of a 1-d array, ``xs[5]`` of a list of two arrays).

    >>> from numba_tile.rules.objects import check_index_in_range
    >>> check_index_in_range(-1, 2)
    >>> check_index_in_range(5, 2)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Index 5 is out of range for a tuple of length 2
    """
    if not -length <= index < length:
        raise TileTypeError(f"Index {index} is out of range for a {what.lower()} of length "
                            f"{length}")


class ObjectTuple(tuple):
    """A tuple that an object of tile code gives (a shape, strides) or is (a list
    argument): a constant index beyond its end is :func:`check_index_in_range`'s error
    wherever it is indexed; a run-time index (a list argument's) is Python's."""

    __slots__ = ()

    def __getitem__(self, index):
        constant = constant_value(index, None)
        if isinstance(constant, int) and not isinstance(constant, bool) and \
                getattr(index, "is_constant", True):
            check_index_in_range(constant, len(self))
        return tuple.__getitem__(self, index)
