"""The names of the types that ``cuda.tile``'s signatures use, for annotating helpers and
kernels as cuTile code does: ``Scalar``, ``ScalarProtocol``, ``Shape``, ``Order`` and
``TileOrScalar``. They are type hints only: nothing in numba_tile checks them.

>>> import numba_tile as ct
>>> def scale(t: ct.TileOrScalar, factor: ct.Scalar) -> ct.TileOrScalar:
...     return t * factor
>>> ct.Shape
typing.Union[int, tuple[int, ...]]
"""

import typing

from .host.tile import Tile


@typing.runtime_checkable
class ScalarProtocol(typing.Protocol):
    """What a scalar of tile code (a 0-d tile, a loop index, ``bid(0)``) offers: Python's
    arithmetic, bitwise and comparison operators, with scalars and tiles on either side, and
    ``__index__``, so that it can bound a ``range``. Python's ints satisfy it too:

    >>> import numba_tile as ct
    >>> isinstance(3, ct.ScalarProtocol), isinstance(2.5, ct.ScalarProtocol)
    (True, False)
    """

    def __index__(self) -> int: ...

    def __add__(self, other): ...

    def __sub__(self, other): ...

    def __mul__(self, other): ...

    def __truediv__(self, other): ...

    def __floordiv__(self, other): ...

    def __mod__(self, other): ...

    def __pow__(self, other): ...

    def __and__(self, other): ...

    def __or__(self, other): ...

    def __xor__(self, other): ...

    def __lt__(self, other): ...

    def __le__(self, other): ...

    def __gt__(self, other): ...

    def __ge__(self, other): ...


Scalar = typing.Union[int, float, ScalarProtocol]
"""A scalar: a Python number, or a scalar of tile code."""

Shape = typing.Union[int, tuple[int, ...]]
"""A tile shape: a tuple of ints, or one int for a 1-d tile."""

Order = typing.Union[tuple[int, ...], typing.Literal["C"], typing.Literal["F"]]
"""The order of an array's axes in a load or store: a permutation, ``"C"`` or ``"F"``."""

TileOrScalar = typing.Union[Tile, Scalar]
"""A tile, or a scalar."""
