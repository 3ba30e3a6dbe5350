"""Enum classes of interpreted tile code: calling one makes the member of a constant value
by the rules of :mod:`numba_tile.rules.enums` (Python's own lookup would take a run-time tile
and compare it with each member's value). A kernel's global or captured enum class is seen
through :class:`TileEnumClass`.

>>> import enum, numpy as np, numba_tile as ct
>>> class Color(enum.Enum):
...     RED = 0
...     GREEN = 1
>>> @ct.kernel
... def k(x):
...     ct.scatter(x, 0, Color(ct.bid(0)).value)
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Enum constructor argument must be a constant: Color() needs ...
...
"""

import enum

from ..enums import enum_call_arity_message
from ..errors import TileTypeError
from ..rules import enums as rules


class TileEnumClass:
    """An enum class as interpreted tile code sees it: its members and attributes are the
    class's; a call is :func:`numba_tile.rules.enums.member`."""

    __slots__ = ("enum_class",)

    def __init__(self, enum_class):
        self.enum_class = enum_class

    def __call__(self, *args, **kwargs):
        if len(args) != 1 or kwargs:
            raise TileTypeError(enum_call_arity_message(self.enum_class))
        return rules.member(self.enum_class, args[0])

    def __getattr__(self, name):
        return getattr(self.enum_class, name)

    def __getitem__(self, name):
        return self.enum_class[name]

    def __iter__(self):
        return iter(self.enum_class)

    def __len__(self):
        return len(self.enum_class)

    def __repr__(self):
        return repr(self.enum_class)


def tile_enum_class(value):
    """``value`` as tile code sees it where it is an enum class, else None."""
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return TileEnumClass(value)
    return None
