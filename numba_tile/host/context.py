"""Where the interpreter is: the block being run and the grid, for ``bid``/``num_blocks``,
and whether a static expression is being evaluated (the compiler's too).

Public tile ops are decorated with :func:`tile_op`: outside tile code they raise a clear
``TypeError`` instead of failing on host values in some obscure way.
"""

import contextlib
import functools
import inspect
import threading

from ..errors import TileStaticEvalError
from ..rules.calls import bind_arguments
from ..source.static_expressions import EFFECTS

_state = threading.local()


class BlockContext:
    """The tile block an interpreted kernel is running."""

    __slots__ = ("block_id", "grid", "open_texts")

    def __init__(self, block_id, grid):
        self.block_id = block_id
        self.grid = grid
        # for each f-string being evaluated, whether a value was run-time
        # (numba_tile.interpreter.texts)
        self.open_texts = []


def current():
    """The running :class:`BlockContext`, or None outside an interpreted kernel."""
    return getattr(_state, "block", None)


def set_current(block):
    previous = current()
    _state.block = block
    return previous


@contextlib.contextmanager
def static_evaluation(construct="static_eval", defer=None):
    """While a ``static_eval`` (or ``static_assert``: ``construct``) expression runs: tile
    operations with an effect raise ``TileStaticEvalError`` (inside ``static_assert``,
    every tile operation does); with ``defer`` (the compiler's), every other one calls it
    (its values are not known yet)."""
    previous = getattr(_state, "static_eval", None)
    _state.static_eval = (construct, defer)
    try:
        yield
    finally:
        _state.static_eval = previous


def in_static_evaluation():
    """True while a ``static_eval`` expression runs (tiles and arrays print symbolically)."""
    return getattr(_state, "static_eval", None) is not None


def static_construct():
    """``"static_eval"``, ``"static_assert"`` or ``"static_iter"`` while the expression of
    one runs, else None."""
    static = getattr(_state, "static_eval", None)
    return None if static is None else static[0]


def inside(construct):
    """How error messages name where a static expression runs."""
    return "static_iter() iterable" if construct == "static_iter" else \
        "static_exception() expression" if construct == "static_exception" else \
        f"{construct}()"


def check_effect(name, always=False):
    """Refuse an operation with an effect (``name``) inside ``static_eval``; with
    ``always``, refuse any tile operation inside ``static_assert``, a ``static_iter``
    iterable and a ``static_exception`` expression (where no operation of tile code runs)."""
    construct = static_construct()
    if construct is not None and (not always or construct in ("static_assert", "static_iter",
                                                              "static_exception")):
        raise TileStaticEvalError(f"{name}() cannot be called inside {inside(construct)}")


def check_run_time(name, conversion=None):
    """Inside a ``static_iter`` iterable, a run-time value has no value to compute with: an
    operation on one (``name``) or its ``conversion`` to a Python number raises
    ``TileStaticEvalError``, as cuTile's symbolic values do."""
    if static_construct() != "static_iter":
        return
    if conversion is not None:
        raise TileStaticEvalError(f"Symbolic tile has no concrete value and thus cannot be "
                                  f"converted to {conversion}")
    raise TileStaticEvalError(f"{name}() cannot be called inside {inside('static_iter')}")


def tile_op(fn):
    """Mark a public function as usable only in tile code."""

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        static = getattr(_state, "static_eval", None)
        if static is not None:
            check_effect(fn.__name__, always=fn.__name__ not in EFFECTS)
            if static[1] is not None:
                static[1]()
        if getattr(_state, "block", None) is None:
            raise TypeError(f"numba_tile.{fn.__name__}() can only be used in tile code: inside a "
                            f"@ct.kernel function started with ct.launch(...)")
        try:
            return fn(*args, **kwargs)
        except TypeError:
            # arguments that do not bind (an unknown keyword): the compiler's TileTypeError;
            # any other TypeError is the op's own
            bind_arguments(fn.__name__, inspect.signature(fn), args, kwargs)
            raise

    checked.__tile_op__ = fn
    return checked


def host_and_tile_op(fn):
    """Mark a public function that host code may call too (``ct.cdiv``): in tile code, its
    call with arguments that do not bind is the compiler's ``TileTypeError``; on the host,
    Python's ``TypeError`` stays.

    >>> import numba_tile as ct
    >>> ct.cdiv(7, 2)
    4
    """

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            if current() is not None:
                bind_arguments(fn.__name__, inspect.signature(fn), args, kwargs)
            raise
    return checked


def checked_method(method):
    """A method of a host value (a tile, an array, a view) whose call with arguments that do
    not bind (an unknown keyword) is the compiler's ``TileTypeError``, not Python's
    ``TypeError``.

    >>> from numba_tile.host.context import checked_method
    >>> class Box:
    ...     @checked_method
    ...     def scale(self, factor):
    ...         return factor
    >>> Box().scale(factor=2)
    2
    >>> Box().scale(2, size=3)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid call of scale(): got an unexpected keyword ...
    """

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except TypeError:
            signature = inspect.signature(method)
            signature = signature.replace(parameters=list(signature.parameters.values())[1:])
            bind_arguments(checked.__name__, signature, args, kwargs, method=True)
            raise
    return checked


def unchecked(fn):
    """The function a :func:`tile_op` wraps, without its check (a tile's method or operator:
    the tile proves that tile code is running), else ``fn`` itself.

    >>> import numba_tile as ct
    >>> from numba_tile.host.context import unchecked
    >>> unchecked(ct.reshape) is ct.reshape.__tile_op__
    True
    """
    return getattr(fn, "__tile_op__", fn)
