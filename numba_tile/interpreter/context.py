"""Where the interpreter is: the block being run and the grid, for ``bid``/``num_blocks``.

Public tile ops are decorated with :func:`tile_op`: outside tile code they raise a clear
``TypeError`` instead of failing on host values in some obscure way.
"""

import functools
import threading

_state = threading.local()


class BlockContext:
    """The tile block an interpreted kernel is running."""

    __slots__ = ("block_id", "grid")

    def __init__(self, block_id, grid):
        self.block_id = block_id
        self.grid = grid


def current():
    """The running :class:`BlockContext`, or None outside an interpreted kernel."""
    return getattr(_state, "block", None)


def set_current(block):
    previous = current()
    _state.block = block
    return previous


def tile_op(fn):
    """Mark a public function as usable only in tile code."""

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if getattr(_state, "block", None) is None:
            raise TypeError(f"numba_tile.{fn.__name__}() can only be used in tile code: inside a "
                            f"@ct.kernel function started with ct.launch(...)")
        return fn(*args, **kwargs)

    checked.__tile_op__ = fn
    return checked
