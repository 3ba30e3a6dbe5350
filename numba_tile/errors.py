"""The ``TileError`` hierarchy: compile-time errors that point at the kernel's source line.

Every error carries ``.message`` and ``.loc`` (a :class:`SourceLocation` or None); its printed
form names the file and line and shows the source line, as indented in its file, with carets
under the expression; where the line is in a helper, the calls that led there come first, the
kernel's outermost (as cuTile prints them)::

    >>> from numba_tile.errors import TileTypeError, SourceLocation
    >>> err = TileTypeError("bad operand", SourceLocation("k.py", 3, 4, 9, "    c = a + b"))
    >>> print(err)
    bad operand
      File "k.py", line 3, col 5:
            c = a + b
            ^^^^^
    <BLANKLINE>
"""

import linecache


class SourceLocation:
    """A position in kernel source: file, 1-based line, 0-based columns and the line's text.

    >>> from numba_tile.errors import SourceLocation
    >>> SourceLocation("k.py", 3, 4).line
    3
    """

    __slots__ = ("filename", "line", "col", "end_col", "source_line", "function", "callers")

    def __init__(self, filename, line, col=None, end_col=None, source_line=None, function=None,
                 callers=()):
        self.filename = filename
        self.line = line
        self.col = col
        self.end_col = end_col
        if source_line is None and filename and line:
            source_line = linecache.getline(filename, line).rstrip("\n") or None
        self.source_line = source_line
        self.function = function
        # the calls that led to this line, each a SourceLocation, the kernel's first
        self.callers = tuple(callers)

    def __repr__(self):
        return f"SourceLocation({self.filename!r}, {self.line}, {self.col})"

    def format(self):
        """The location as text, a frame for each caller and then its own: ``File "...",
        line N, col C, in fn:``, the line and carets under the expression; each line of
        text ends with a newline."""
        return "".join(frame._frame() for frame in (*self.callers, self))

    def _frame(self):
        where = f'  File "{self.filename}", line {self.line}'
        if self.col is not None:
            where += f", col {self.col + 1}"
        if self.function:
            where += f", in {self.function}"
        lines = [where + ":"]
        if self.source_line is not None:
            text = self.source_line.rstrip()
            indent = len(text) - len(text.lstrip())
            lines.append("    " + text)
            if self.col is not None and self.col >= indent:
                end = self.end_col if self.end_col and self.end_col > self.col else self.col + 1
                end = min(end, len(text))
                lines.append("    " + " " * self.col + "^" * max(1, end - self.col))
        return "".join(line + "\n" for line in lines)


class TileError(Exception):
    """Base class of numba_tile's compile-time errors.

    >>> from numba_tile import TileError, TileTypeError
    >>> issubclass(TileTypeError, TileError)
    True
    """

    def __init__(self, message, loc=None):
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self):
        if self.loc is None:
            return self.message
        return f"{self.message}\n{self.loc.format()}"


class TileSyntaxError(TileError):
    """Python syntax that tile code does not support.

    >>> import numba_tile as ct
    >>> ct.TileSyntaxError("what went wrong").message
    'what went wrong'
    """


class TileTypeError(TileError):
    """An operand of the wrong type, dtype, rank or shape; an unsupported promotion.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x, y):
    ...     ct.store(x, (0,), ct.load(x, (0,), (2,)) + ct.load(y, (0,), (2,)))
    >>> ct.launch(0, (1,), k, (np.ones(2, np.uint8), np.ones(2, np.int8)))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Implicit promotion of uint8 and int8 is not supported. Please perform an explict cast instead in '+' (add): convert one operand with astype()
    ...
    """


class TileValueError(TileError):
    """A value out of range: a constant that does not fit its dtype, a bad axis or shape.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x, y):
    ...     ct.store(y, (0,), ct.load(y, (0,), (2,)) + 200)
    >>> ct.launch(0, (1,), k, (np.ones(2, np.uint8), np.ones(2, np.int8)))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileValueError: Integer constant 200 is out of range of int8
    ...
    """


class TileUnsupportedFeatureError(TileError):
    """A feature the target GPU or this version of numba_tile lacks.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k():
    ...     ct.printf("%*d", 3, 4)
    >>> ct.launch(0, (1,), k, ())
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileUnsupportedFeatureError: printf format '%*d': a width or precision from the arguments ('*') is not supported
    ...

    Where the GPU compiled for is what lacks the feature, ``needs`` is the compute capability
    ``(major, minor)`` that has it (None otherwise):

    >>> ct.TileUnsupportedFeatureError("float8 tensor cores", needs=(8, 9)).needs
    (8, 9)
    """

    def __init__(self, message, loc=None, needs=None):
        super().__init__(message, loc)
        self.needs = needs


#: What both executors say of helpers that call each other without end.
RECURSION_MESSAGE = ("The kernel's helper functions call each other too deeply (runaway "
                     "recursion); recursion in tile code must end after a few calls, on "
                     "compile-time constants")
#: the message of a function defined in tile code (a nested ``def``, a lambda) that calls
#: itself: it is inlined where it is called (cuTile runs such recursion where it ends on
#: constants; numba_tile compiles it at module level only)
NESTED_RECURSION_MESSAGE = ("A function defined inside tile code (a nested def or a lambda) "
                            "calls itself, which numba_tile cannot compile: it is inlined "
                            "where it is called, without end; define it at module level, where "
                            "recursion that ends on compile-time constants compiles")


class TileRecursionError(TileError):
    """A recursive call in tile code.

    >>> import numba_tile as ct
    >>> ct.TileRecursionError("what went wrong").message
    'what went wrong'
    """


class TileStaticEvalError(TileError):
    """A ``static_eval`` expression that cannot run at compile time: it calls a tile
    operation with an effect (a load, a store...) or a function defined in the kernel, nests
    another ``static_eval``, or raises.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x, y):
    ...     ct.static_eval(ct.load(x, (0,), (2,)))
    >>> ct.launch(0, (1,), k, (np.ones(2, np.uint8), np.ones(2, np.int8)))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileStaticEvalError: load() cannot be called inside static_eval()
    ...
    """


class StaticException(TileStaticEvalError):
    """An exception raised at compile time: ``raise ct.static_exception(EXC)`` reached by
    the kernel (its ``if`` on a constant not decided against it), or an exception raised
    by a static expression (``static_eval``, ``static_assert``, a ``static_iter`` iterable,
    the expression of ``static_exception``). cuTile's name for it.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x):
    ...     if x.ndim != 2:
    ...         raise ct.static_exception(ValueError(f"needs a 2-d array, got {x.ndim}-d"))
    >>> ct.launch(0, (1,), k, (np.ones(2, np.float32),))
    Traceback (most recent call last):
    ...
    numba_tile.errors.StaticException: Exception was raised at compile time (ValueError: needs a 2-d array, got 1-d)
    ...
    """


class TileStaticAssertionError(TileError):
    """A ``static_assert`` whose condition is false.

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def k(x, y):
    ...     ct.static_assert(x.dtype == y.dtype, "dtypes differ")
    >>> ct.launch(0, (1,), k, (np.ones(2, np.uint8), np.ones(2, np.int8)))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileStaticAssertionError: Static assertion failed: dtypes differ
    ...
    """


class TileInternalError(TileError):
    """A bug in numba_tile: please report it.

    >>> import numba_tile as ct
    >>> ct.TileInternalError("what went wrong").message
    'what went wrong'
    """


class TileCompilerExecutionError(TileError):
    """The backend compiler (NVVM, the linker) failed.

    >>> import numba_tile as ct
    >>> ct.TileCompilerExecutionError("what went wrong").message
    'what went wrong'
    """


class TileCompilerTimeoutError(TileError):
    """Compilation ran longer than ``compiler_timeout`` allows.

    >>> import numba_tile as ct
    >>> ct.TileCompilerTimeoutError("what went wrong").message
    'what went wrong'
    """
