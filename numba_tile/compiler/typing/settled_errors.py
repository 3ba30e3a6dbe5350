"""Tile errors found while types are still incomplete wait until type inference settles.

Numba's type inference runs its constraints round after round until no type changes; an
error from a round where a variable does not have all its types yet (a loop-carried counter
seen first with its initial literal only) is kept and raised only if it remains when nothing
changes any more. Numba does this for its own ``TypingError``; the templates of tile code
raise Tile errors, which Numba lets through at once. This module makes numba-cuda keep them
too, for the time of a compile (:mod:`..frontend.numba_patches`): ``t = N`` (a ``Constant``)
then ``t += 1`` in a loop is the int32 ``t`` of the last round, not the literal ``N`` of the
first, when it meets an int16 array.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x, n: ct.Constant[int]):
...     t = n
...     for i in range(2):
...         t += 1
...     ct.scatter(x, (), t)
>>> ct.compile(k, (np.zeros((), np.int16), 2**31 - 1), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: scatter() value: cannot implicitly cast int64 to int16; ...
...
"""

from numba.core import errors as core_errors
from numba.cuda import utils
from numba.cuda.core import typeinfer
from numba.cuda.core.errors import ForceLiteralArg, TypingError

from ...errors import TileError


def _propagate(self, inferer):
    """``ConstraintNetwork.propagate``: every constraint run, the errors kept (Tile errors
    as they are) for ``TypeInferer.propagate`` to raise where no progress is left."""
    errors = []
    for constraint in self.constraints:
        loc = constraint.loc
        with inferer.warnings.catch_warnings(filename=loc.filename, lineno=loc.line):
            try:
                constraint(inferer)
            except (ForceLiteralArg, TileError) as error:
                errors.append(error)
            except (TypingError, core_errors.TypingError) as error:
                # (Numba's own overload resolution raises the numba.core class: a call
                # typed with one path's type of a variable whose paths do not meet)
                errors.append(_located(error, constraint.loc))
    # Numba raises the first error left: a Tile error is the cause where Numba's own errors
    # follow from it (a combiner's result of another dtype leaves the later steps' types
    # "Undecided"), so the Tile errors go first, each kind in the kernel's order; so do
    # values of two types meeting where paths join (cuTile's "depends on path taken"), which
    # leave what reads them typed by one path only (a static_assert of a string that is "a"
    # on one path and "b" on the other would fail, where the join is the error)
    return sorted(errors, key=lambda error: not (isinstance(error, TileError) or
                                                 _is_join_error(error)))


def _is_join_error(error):
    return isinstance(error, (TypingError, core_errors.TypingError)) and \
        "Cannot unify" in str(error)


def _located(error, loc):
    """Numba's own handling of its ``TypingError``: the message at the constraint's line."""
    new = TypingError(str(error), loc=loc, highlighting=False)
    return utils.chain_exception(new, error)


#: what this module changes in numba-cuda while a kernel compiles
#: (:mod:`..frontend.numba_patches`)
PATCHES = ((typeinfer.ConstraintNetwork, "propagate", _propagate),)
