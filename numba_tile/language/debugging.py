"""Printing, assertions and compile-time helpers: ``print``, ``printf``, ``assert_``,
``static_assert``, ``static_eval``, ``static_iter``, ``ensure_constant``.
"""

import builtins
import sys

import numpy as np

from ..errors import TileStaticAssertionError, TileTypeError
from ..host.context import tile_op
from ..host.loops import TileRange
from ..host.printing import format_values
from ..host.tile import Tile
from ..rules.core import constant_value, describe
from ..rules.formatting import Conversion, check_assert_arguments, check_constant_string, \
    check_print_options, check_printable, check_printf_arguments, parse_c_format, printf_format, \
    python_dtype

_NOT_CONSTANT = object()


@tile_op
def print(*args, sep=" ", end="\n", **options):
    """Print from tile code, Python style (f-strings work); a tile prints as a nested list.
    ``flush=`` is taken and has nothing to do; other keywords of Python's ``print`` are
    errors (:func:`~numba_tile.rules.formatting.check_print_options`).

    Compiled, one thread of each block prints, after the block has gathered its tiles; the
    text is the interpreter's (floats in short form, ``1.0``, ``1.5708``).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.arange(4, dtype=ct.float32) * 0.5
    ...     ct.print("t =", t, sep=" ")
    ...     ct.print(f"sum={ct.sum(t)}")
    >>> ct.launch(0, (1,), show, ())
    t = [0.0, 0.5, 1.0, 1.5]
    sum=3.0
    """
    check_print_options(options)
    check_constant_string(sep, "print(sep=...)")
    check_constant_string(end, "print(end=...)")
    for value in args:
        check_printable(value)
    builtins.print(*args, sep=sep, end=end, file=sys.stdout)


def _c_format(fmt, args):
    """Apply a C format string; tile arguments print as nested lists of formatted elements."""
    check_printf_arguments(fmt, args)
    values = iter(args)
    pieces = []
    for piece in parse_c_format(fmt):
        if not isinstance(piece, Conversion):
            pieces.append(piece)
            continue
        value = next(values)
        if isinstance(value, Tile):
            def one(v, conversion=piece, dtype=value.dtype):
                return conversion.format(v, dtype)
            pieces.append(format_values(value.values, value.dtype, one) if value.ndim
                          else one(value.values[()]))
        else:
            pieces.append(piece.format(value, python_dtype(value)))
    return "".join(pieces)


@tile_op
def printf(format, *args):
    """Print with a C format string (``%d``, ``%f``, ``%.3e``, ...); a tile argument prints
    each element with its conversion.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     ct.printf("block %d: %.2f\\n", ct.bid(0), ct.arange(2, dtype=ct.float32))
    >>> ct.launch(0, (1,), show, ())
    block 0: [0.00, 1.00]
    """
    sys.stdout.write(_c_format(printf_format(format), args))


@tile_op
def assert_(cond, /, message=None):
    """Device assertion: fails (``AssertionError``) if any element of ``cond`` is false.

    On the GPU a failing assertion stops the kernel with CUDA's device assertion: the driver
    prints ``message`` with the kernel's file and line, and the next synchronization reports
    ``CUDA_ERROR_ASSERT`` (the process's CUDA context cannot be used after that).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def check():
    ...     ct.assert_(ct.arange(4, dtype=ct.int32) < 4, "in range")
    >>> ct.launch(0, (1,), check, ())
    """
    check_assert_arguments(cond, message)
    if isinstance(cond, Tile):
        ok = bool(np.all(cond.values))
    else:
        ok = bool(cond)
    if not ok:
        raise AssertionError(message if message is not None else "ct.assert_ failed")


@tile_op
def static_assert(condition, message=None, /):
    """Compile-time assertion on a constant condition (``TileStaticAssertionError``).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def check(N: ct.Constant[int]):
    ...     ct.static_assert(N % 2 == 0, "N must be even")
    >>> ct.launch(0, (1,), check, (3,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileStaticAssertionError: Static assertion failed: N must be even
    ...
    """
    value = constant_value(condition, _NOT_CONSTANT)
    if value is _NOT_CONSTANT:
        raise TileTypeError(f"static_assert() needs a compile-time constant condition, got "
                            f"{describe(condition)}")
    if not value:
        raise TileStaticAssertionError(message if message is not None
                                       else "Static assertion failed")


@tile_op
def static_eval(expr, /):
    """Evaluate the Python expression ``expr`` when the kernel compiles (any Python: a
    comprehension, a lookup in a dict of functions, ``repr`` of a tile). Its value may be a
    constant, a function, a dtype, or one of the kernel's run-time values (``a if N == 0
    else b``); run-time values show their type's facts (``t.shape``, ``t.dtype``) but not
    their elements (an expression that needs them is compiled as tile code). Tile
    operations with an effect cannot be called inside (see
    :mod:`numba_tile.source.static_expressions`).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show(x):
    ...     print(ct.static_eval(x.ndim * 2 + sum([n for n in range(3)])))
    >>> import numpy as np
    >>> ct.launch(0, (1,), show, (np.zeros((2, 2)),))
    7
    """
    # (kernels with source have their static_eval calls rewritten before they run; this is
    # what a kernel without source, made with exec, gets: the value as it is)
    return expr


@tile_op
def static_exception(exc, /):
    """Mark the exception of a ``raise`` as raised at compile time: ``raise
    ct.static_exception(EXPR)``, where ``EXPR`` is a static expression (as ``static_eval``'s:
    any Python that runs when the kernel compiles) that gives an exception. Reached by the
    compiled kernel (not in the side of an ``if`` on a constant decided against it; under a
    run-time condition, whichever way it goes), it raises :class:`~numba_tile.StaticException`
    at compile time; the interpreter raises it where it runs it. It may only follow
    ``raise``; any other ``raise`` in tile code is a ``TileSyntaxError``.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x):
    ...     if x.dtype != ct.float32:
    ...         raise ct.static_exception(TypeError(f"needs float32, got {x.dtype}"))
    ...     ct.store(x, (0,), ct.load(x, (0,), (2,)) * 2)
    >>> ct.launch(0, (1,), k, (np.ones(2, np.float32),))
    >>> ct.launch(0, (1,), k, (np.ones(2, np.int8),))
    Traceback (most recent call last):
    ...
    numba_tile.errors.StaticException: Exception was raised at compile time (TypeError: needs float32, got int8)
    ...
    """
    return exc  # (kernels with source have their raise rewritten; see static_eval)


@tile_op
def static_iter(iterable):
    """Iterate at compile time: ``for v in ct.static_iter(ITERABLE):`` runs its body once per
    item, the compiler unrolling the loop. ``ITERABLE`` is a static expression, as
    ``static_eval``'s (any Python, run when the kernel compiles, where run-time values show
    their type but no tile operation runs); it may give at most 1000 items, each a constant,
    a function or a value of the kernel. The body may not ``break``, ``continue`` or
    ``return``, and ``static_iter`` is only the iterable of a ``for`` or of a tuple
    comprehension (``tuple(t * k for k in ct.static_iter(range(3)))``).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.arange(2, dtype=ct.int32)
    ...     parts = (t, t * 3)  # (tile operations run outside the iterable)
    ...     for dt in ct.static_iter((ct.int8, ct.float16)):
    ...         print(ct.zeros((2,), dt))
    ...     for k, part in ct.static_iter(enumerate(parts)):
    ...         print(k, part)
    >>> ct.launch(0, (1,), show, ())
    [0, 0]
    [0.0, 0.0]
    0 [0, 1]
    1 [0, 3]
    """
    if isinstance(iterable, range):
        return iterable
    if isinstance(iterable, TileRange):  # range() in tile code: its values, as constants
        return iterable.constants
    return tuple(iterable)


@tile_op
def ensure_constant(value, /):
    """Return ``value`` if it is a compile-time constant, else raise
    ``TileStaticAssertionError`` (as cuTile does).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show(n):
    ...     ct.ensure_constant(n)
    >>> ct.launch(0, (1,), show, (4,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileStaticAssertionError: Argument of ensure_constant() is not a ...
    ...
    """
    if constant_value(value, _NOT_CONSTANT) is _NOT_CONSTANT:
        raise not_constant_error(value)
    return value


def not_constant_error(value):
    """The error of ``ensure_constant(value)`` for a ``value`` known only at run time, in
    cuTile's words."""
    return TileStaticAssertionError("Argument of ensure_constant() is not a compile-time "
                                    "constant")
