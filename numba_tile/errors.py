"""The ``TileError`` hierarchy: compile-time errors that point at the kernel's source line.

Every error carries ``.message`` and ``.loc`` (a :class:`SourceLocation` or None); its printed
form names the file and line and shows the source line with a caret under the expression::

    >>> from numba_tile.errors import TileTypeError, SourceLocation
    >>> err = TileTypeError("bad operand", SourceLocation("k.py", 3, 4, 9, "    c = a + b"))
    >>> print(err)
    bad operand
      File "k.py", line 3, col 5:
        c = a + b
        ^^^^^
"""

import linecache


class SourceLocation:
    """A position in kernel source: file, 1-based line, 0-based columns and the line's text.

    >>> from numba_tile.errors import SourceLocation
    >>> SourceLocation("k.py", 3, 4).line
    3
    """

    __slots__ = ("filename", "line", "col", "end_col", "source_line", "function")

    def __init__(self, filename, line, col=None, end_col=None, source_line=None, function=None):
        self.filename = filename
        self.line = line
        self.col = col
        self.end_col = end_col
        if source_line is None and filename and line:
            source_line = linecache.getline(filename, line).rstrip("\n") or None
        self.source_line = source_line
        self.function = function

    def __repr__(self):
        return f"SourceLocation({self.filename!r}, {self.line}, {self.col})"

    def format(self):
        """The location as text: ``File "...", line N, col C, in fn:`` plus line and caret."""
        where = f'  File "{self.filename}", line {self.line}'
        if self.col is not None:
            where += f", col {self.col + 1}"
        if self.function:
            where += f", in {self.function}"
        lines = [where + ":"]
        if self.source_line is not None:
            text = self.source_line
            indent = len(text) - len(text.lstrip())
            lines.append("    " + text.strip())
            if self.col is not None and self.col >= indent:
                end = self.end_col if self.end_col and self.end_col > self.col else self.col + 1
                end = min(end, len(text))
                lines.append("    " + " " * (self.col - indent) + "^" * max(1, end - self.col))
        return "\n".join(lines)


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
    """Python syntax that tile code does not support."""


class TileTypeError(TileError):
    """An operand of the wrong type, dtype, rank or shape; an unsupported promotion."""


class TileValueError(TileError):
    """A value out of range: a constant that does not fit its dtype, a bad axis or shape."""


class TileUnsupportedFeatureError(TileError):
    """A feature the target GPU or this version of numba_tile lacks."""


class TileRecursionError(TileError):
    """A recursive call in tile code."""


class TileStaticEvalError(TileError):
    """``static_eval`` given something that cannot be evaluated at compile time."""


class TileStaticAssertionError(TileError):
    """A ``static_assert`` whose condition is false."""


class TileInternalError(TileError):
    """A bug in numba_tile: please report it."""


class TileCompilerExecutionError(TileError):
    """The backend compiler (NVVM, the linker) failed."""


class TileCompilerTimeoutError(TileError):
    """Compilation ran longer than ``compiler_timeout`` allows."""
