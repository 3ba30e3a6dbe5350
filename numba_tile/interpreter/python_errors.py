"""Python's own exceptions raised while tile code runs in the interpreter, as cuTile's
errors at the kernel's line: where a traceback's innermost frame of user code is
(:func:`location_from_traceback`), and which exceptions of Python's are errors of tile code
(:func:`tile_error`) rather than numba_tile's own.

>>> from numba_tile.interpreter.python_errors import tile_error
>>> tile_error(ZeroDivisionError("not of tile code")) is None
True
"""
import os
import re

from ..errors import RECURSION_MESSAGE, TileRecursionError, TileSyntaxError, TileTypeError, \
    TileValueError
from ..host.arrays import Array, TiledView
from ..host.raw_memory import RawArrayMemory
from ..host.tile import Tile
from ..rules import objects
from ..source.user_code import PACKAGE_DIR, frame_location, traceback_location
from . import tuples
from .loop_carried import MISMATCH_PREFIX


def location_from_traceback(tb):
    """The innermost frame of user code in a traceback, with the frames of the user's code
    that called it (the kernel, its helpers) as its callers; where none is the user's (a
    library's frames alone), the innermost frame outside this package."""
    found = traceback_location(tb)
    if found is not None:
        return found
    frames = []
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(
                PACKAGE_DIR + os.sep):
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return None
    last = frames[-1]
    return frame_location(last.tb_frame.f_code, last.tb_lineno, last.tb_lasti)


_UNDEFINED = re.compile(r"(?:local|free) variable '(\w+)'|name '(\w+)' is not defined")


def _undefined_variable(error):
    """cuTile's ``TileSyntaxError`` for a read of a variable of tile code that holds no
    value (set on another path only, or nowhere), or None where the ``NameError`` is not
    one of tile code."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    found = _UNDEFINED.search(str(error))
    if found is None or os.path.abspath(code.co_filename).startswith(PACKAGE_DIR + os.sep):
        return None
    name = found[1] or found[2]
    loc = location_from_traceback(error.__traceback__)
    if loc is not None and loc.source_line:
        word = re.search(rf"\b{re.escape(name)}\b", loc.source_line)
        if word is not None:
            loc.col, loc.end_col = word.start(), word.end()
    # the paths that met set it to constants of two types (branch_joins): that message, from
    # the function that reads it (or the one around a lambda that does)
    frame = tb.tb_frame
    while frame is not None and MISMATCH_PREFIX + name not in frame.f_locals:
        frame = frame.f_back if frame.f_back is not None and not os.path.abspath(
            frame.f_back.f_code.co_filename).startswith(PACKAGE_DIR + os.sep) else None
    mismatch = None if frame is None else frame.f_locals[MISMATCH_PREFIX + name]
    if mismatch is not None:
        return TileTypeError(mismatch, loc)
    return TileSyntaxError(f"Undefined variable {name} used", loc)


_CALLED = re.compile(r"^'(\w+)' object is not callable$")
_OPERANDS = re.compile(r"^unsupported operand type\(s\) for (\S+): '(\w+)' and '(\w+)'$")
# the host objects of tile code by their class's name: the kind of each
_KINDS = {cls.__name__: cls.object_kind
          for cls in (Tile, Array, TiledView, RawArrayMemory, tuples.ArgumentList)}
# the interpreter's own classes of Python values by their name: the value's type's name
_PYTHON_KINDS = {"LooseInt": "int", "LooseFloat": "float", "ObjectTuple": "tuple",
                 "int": "int", "float": "float", "bool": "bool", "tuple": "tuple",
                 "str": "str", "NoneType": "NoneType"}


def _raised_by_tile_code(error):
    """Whether tile code itself (not numba_tile's own code) raised ``error``: Python raises
    its error of a call in the frame that made it."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    if isinstance(error, AttributeError) and tb.tb_frame.f_code.co_name == "__getattr__":
        return True  # (an attribute that is not there, in the words of our class's hook)
    return not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(PACKAGE_DIR + os.sep)


def tile_error(error):
    """cuTile's error for exception ``error`` of Python's, raised while tile code ran, with
    the kernel's line; None where it is no error of tile code (numba_tile's own, a bug)."""
    if isinstance(error, RecursionError):  # helpers calling each other without end
        return TileRecursionError(RECURSION_MESSAGE, location_from_traceback(error.__traceback__))
    if isinstance(error, NameError):
        return _undefined_variable(error)
    if not _raised_by_tile_code(error):
        return None
    loc = location_from_traceback(error.__traceback__)
    if isinstance(error, TypeError):  # x(1), t(0), x.ndim(): what is no function, called
        called = _CALLED.match(str(error))
        kind = called and (_KINDS.get(called[1]) or _PYTHON_KINDS.get(called[1]))
        if kind is not None:
            return TileTypeError(objects.call_object_error(kind).message, loc)
    if isinstance(error, TypeError):  # an operator of a dataclass instance, say
        operands = _OPERANDS.match(str(error))
        if operands is not None:
            return TileTypeError(f"Unsupported operand types for {operands[1]}: "
                                 f"{_python_names(operands[2])} and "
                                 f"{_python_names(operands[3])}", loc)
    # the rest that a statement of tile code raised itself (``a, b = 5``, ``x @= 2``): an
    # operation on values it does not apply to, in Python's words (with the interpreter's
    # classes of Python values by their Python names)
    for python_class, tile_class in _TILE_CLASSES:
        if isinstance(error, python_class):
            return tile_class(_python_names(str(error)), loc)
    return None


# Python's exceptions of an operation that does not apply, as cuTile's errors: a value of the
# wrong type (or a missing attribute) is a type error, a value out of its range a value error
_TILE_CLASSES = ((TypeError, TileTypeError), (AttributeError, TileTypeError),
                 (ArithmeticError, TileValueError), (ValueError, TileValueError),
                 (LookupError, TileValueError))
_INTERPRETER_CLASS = re.compile(r"\b(Loose(?:Int|Float)|ObjectTuple)\b")


def _python_names(message):
    """``message`` with the interpreter's classes of Python values named as Python's."""
    return _INTERPRETER_CLASS.sub(lambda found: _PYTHON_KINDS[found[1]], message)
