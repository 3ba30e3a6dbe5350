"""A global or captured value that tile code cannot hold (an array:
:mod:`numba_tile.rules.global_values`) is cuTile's error where the typing reaches its read;
and a constant of the code that no dtype holds (an int beyond 64 bits) a constant that folds.

The helpers' conversion (:mod:`..frontend.helpers`) puts a :class:`NotAConstant` in its
place. Numba types a global while it builds its constraints, before any of them runs; the
read of a ``NotAConstant`` is typed instead by a constraint of its own that raises the
error, so that it runs in turn with those of the statements around it (:data:`PATCHES`, for
the time of a compile: :mod:`..frontend.numba_patches`). An error of a statement before the
read (a ``static_eval`` nested in another) then comes first, as in cuTile, which raises
errors in the kernel's order (:mod:`.settled_errors`).

>>> import numpy as np, numba_tile as ct
>>> TABLE = np.zeros(4, np.float32)
>>> @ct.kernel
... def k(x):
...     ct.static_assert(x.ndim == 2, "a matrix")
...     ct.store(x, (0,), ct.load(TABLE, (0,), (4,)))
>>> ct.compile(k, (np.zeros(4, np.float32),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileStaticAssertionError: Static assertion failed: a matrix
...
"""

from numba.cuda.core import typeinfer
from numba.cuda.typing.typeof import typeof_impl

from ...promotion import is_wide_integer
from ...rules.global_values import global_value_error
from ..types import ConstantType


class NotAConstant:
    """What the compiler puts for a global or captured value that tile code cannot hold;
    typing its read raises cuTile's error."""

    def __init__(self, value):
        self.value = value


@typeof_impl.register(NotAConstant)
def _typeof_not_a_constant(value, context):
    """Where the value itself is typed, not a statement's read of it (the error all the same:
    never Numba's own about a type it does not know)."""
    raise global_value_error(value.value)


class _InvalidRead:
    """The constraint that types a read of a :class:`NotAConstant`: cuTile's error."""

    def __init__(self, value, loc):
        self.value, self.loc = value, loc

    def __call__(self, inferer):
        raise global_value_error(self.value)


_TYPEOF_GLOBAL = typeinfer.TypeInferer.typeof_global


def _typeof_global(self, inst, target, gvar):
    """``TypeInferer.typeof_global``: a read of a :class:`NotAConstant` left to a
    constraint."""
    if isinstance(gvar.value, NotAConstant):
        self.constraints.append(_InvalidRead(gvar.value.value, inst.loc))
    else:
        _TYPEOF_GLOBAL(self, inst, target, gvar)


_TYPEOF_CONST = typeinfer.TypeInferer.typeof_const


def _typeof_const(self, inst, target, const):
    """``TypeInferer.typeof_const``: an int no dtype holds (``-2**63 - 1``, which Python
    folds into one constant) is a constant that folds on, as a literal ``2**200`` is
    (Numba has no literal type for it)."""
    if is_wide_integer(const):
        self.add_type(target.name, ConstantType(const), loc=inst.loc)
    else:
        _TYPEOF_CONST(self, inst, target, const)


#: what this module changes in numba-cuda while a kernel compiles
PATCHES = ((typeinfer.TypeInferer, "typeof_global", _typeof_global),
           (typeinfer.TypeInferer, "typeof_const", _typeof_const))
