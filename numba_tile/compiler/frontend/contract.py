"""What a frontend pass needs from the passes before it, checked when it runs.

:func:`tile_pass` marks a pass class with a description and the names of the passes (or
:data:`TYPED`, the types of type inference) whose results it needs. When the pass runs it
checks that each of them ran in this compilation, and records that it ran; the declared order
(:mod:`.passes`) is checked against the same needs when the pipeline is built.

>>> from numba_tile.compiler.frontend.contract import tile_pass
>>> @tile_pass("an example", needs=("UnrollStaticIter",))
... class Example:
...     def run_pass(self, state):
...         return False
>>> Example.needs, Example.description
(('UnrollStaticIter',), 'an example')
>>> Example().run_pass({})
Traceback (most recent call last):
...
numba_tile.errors.TileInternalError: Example runs before UnrollStaticIter, which it needs
"""

import functools

from ...errors import TileInternalError
from ..compile_state import current

# what a pass that runs after type inference needs: the types (numba-cuda's pass)
TYPED = "types"


def tile_pass(description, needs=()):
    """Class decorator of a frontend pass: ``description`` for the pipeline, ``needs`` the
    names of what must have run before it (see the module's docstring)."""
    def decorate(cls):
        run = cls.run_pass

        @functools.wraps(run)
        def run_pass(self, state):
            compilation = current()
            missing = [need for need in needs if not (
                state.get("typemap") is not None if need == TYPED
                else need in compilation.passes_run)]
            if missing:
                raise TileInternalError(f"{cls.__name__} runs before {', '.join(missing)}, "
                                        f"which it needs")
            changed = run(self, state)
            compilation.passes_run.append(cls.__name__)
            return changed
        cls.run_pass = run_pass
        cls.needs, cls.description = tuple(needs), description
        return cls
    return decorate
