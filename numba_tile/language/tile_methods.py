"""The methods and operators of host tiles, attached where each op is defined.

Host values (:mod:`numba_tile.host`: tiles, arrays, loosely typed constants) sit below the
language: the ops compute on them, so the language imports them and never the reverse. A
tile's methods and operators call ops (``t.reshape(s)`` is ``ct.reshape(t, s)``, ``a + b``
is ``ct.add(a, b)``), so each language module attaches the methods of its ops with
:func:`tile_method`, as Triton's ``_tensor_member_fn`` does: :mod:`.shapes` (``item``,
``reshape``, ``permute``, ``transpose``, ``extract``, ``insert``, ``t[...]``),
:mod:`.elementwise` (``astype``, the arithmetic, bitwise and comparison operators,
``divmod``) and :mod:`.matrix` (``@``). Importing numba_tile imports every language module,
so a tile has all its methods before any kernel runs.

>>> import numba_tile as ct
>>> ct.Tile.reshape.__qualname__, ct.Tile.reshape.__module__
('Tile.reshape', 'numba_tile.language.shapes')
"""

from ..host.context import checked_method
from ..host.tile import Tile


def tile_method(name, cls=Tile):
    """Attach the decorated function to ``cls`` (host tiles, or another host value that
    has the op as a method) as its method ``name``; the function is returned as it is.

    >>> from numba_tile.language.tile_methods import tile_method
    >>> class Point:
    ...     pass
    >>> @tile_method("norm", Point)
    ... def _norm(self):
    ...     return 5
    >>> Point().norm(), Point.norm.__qualname__
    (5, 'Point.norm')
    """
    def attach(method):
        method.__name__ = name
        method.__qualname__ = f"{cls.__name__}.{name}"
        setattr(cls, name, checked_method(method))
        return method
    return attach
