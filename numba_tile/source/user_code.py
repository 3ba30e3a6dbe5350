"""Whose code a function or a module is: the user's, which tile code runs with tile
semantics (a kernel's helpers), or Python's, an installed library's or numba_tile's own,
which it calls as they are (NumPy). The interpreter, the compiler's frontend and the disk
cache's key all ask the same question.

>>> import numpy as np
>>> from numba_tile.source.user_code import is_user_code
>>> is_user_code(np), is_user_code(np.linalg.norm)
(False, False)
"""

import functools
import importlib.metadata
import os
import sys
import sysconfig
import types

from ..errors import SourceLocation

#: numba_tile's own directory (its frames are not the user's in a traceback)
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _library_directories():
    """Python's own directories and numba_tile's, each ending in a separator."""
    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.add(PACKAGE_DIR)
    return tuple(os.path.abspath(p) + os.sep for p in paths)


#: the directories of code that is not the user's (see :func:`is_user_code`)
LIBRARY_DIRS = _library_directories()


def is_user_code(obj):
    """True for functions and modules of the user's code: not Python's, not an installed
    library's, not numba_tile's (a kernel's helpers get tile semantics, NumPy does not)."""
    if isinstance(obj, types.FunctionType):
        filename = obj.__code__.co_filename
    else:
        filename = getattr(obj, "__file__", None)
    if not filename or filename.startswith("<frozen"):
        return False
    if os.path.abspath(filename).startswith(LIBRARY_DIRS):
        return False
    module = obj.__module__ if isinstance(obj, types.FunctionType) else obj.__name__
    return not _installed_elsewhere((module or "").partition(".")[0])


def is_library_frame(frame):
    """True for a frame of code that is not the user's: Python's, numba_tile's, or an
    installed library's wherever it is installed (``pip install --target`` too).

    >>> import types, numpy as np
    >>> from numba_tile.source.user_code import is_library_frame
    >>> def frame(filename, module):  # (what a traceback's frame has that this reads)
    ...     code = types.SimpleNamespace(co_filename=filename)
    ...     return types.SimpleNamespace(f_code=code, f_globals={"__name__": module})
    >>> is_library_frame(frame(np.__file__, "numpy")), is_library_frame(frame("/me/k.py", "k"))
    (True, False)
    """
    if os.path.abspath(frame.f_code.co_filename).startswith(LIBRARY_DIRS):
        return True
    module = frame.f_globals.get("__name__") or ""
    return _installed_elsewhere(module.partition(".")[0])


@functools.lru_cache(maxsize=None)
def _installed_elsewhere(top_level):
    """True where module ``top_level`` is an installed distribution's outside the
    interpreter's own directories (``pip install --target``, a ``PYTHONPATH`` of installed
    packages): NumPy found there is a library all the same. An editable install's modules
    stay the user's (its distribution's files lie elsewhere)."""
    module = sys.modules.get(top_level)
    filename = getattr(module, "__file__", None)
    if not filename:
        return False
    root = os.path.dirname(os.path.abspath(filename))
    if os.path.basename(filename).startswith("__init__."):
        root = os.path.dirname(root)
    for name in importlib.metadata.packages_distributions().get(top_level, ()):
        try:
            located = importlib.metadata.distribution(name).locate_file("")
        except importlib.metadata.PackageNotFoundError:
            continue
        if os.path.abspath(str(located)) == root:
            return True
    return False


def frame_location(code, line, last_instruction, callers=()):
    """The expression that instruction ``last_instruction`` (an offset in bytes) of ``code``
    runs (a traceback's or a frame's), at ``line`` where Python knows no better: where an
    error of tile code happened, in the interpreter and in what the compiler evaluates.

    >>> import sys
    >>> from numba_tile.source.user_code import frame_location
    >>> frame = sys._getframe()
    >>> frame_location(frame.f_code, frame.f_lineno, frame.f_lasti).col
    0
    """
    col, end_col = None, None
    try:
        positions = list(code.co_positions())[last_instruction // 2]
        if positions[0] is not None:
            line, col = positions[0], positions[2]
            # an expression over several lines: underline the rest of its first line
            end_col = positions[3] if positions[0] == positions[1] else 10**6
    except (AttributeError, IndexError):
        pass
    return SourceLocation(code.co_filename, line, col, end_col, function=code.co_name,
                          callers=callers)


def traceback_location(tb):
    """Where the user's code in traceback ``tb`` failed: its innermost frame that is not a
    library's (:func:`is_library_frame`), with the user's frames that called it as its
    callers; None where no frame is the user's. (The interpreter runs tile code as Python;
    the compiler runs a static expression's as Python: both read their errors' places
    here.)

    >>> from numba_tile.source.user_code import traceback_location
    >>> traceback_location(None) is None
    True
    """
    users = []
    while tb is not None:
        if not is_library_frame(tb.tb_frame):
            users.append(tb)
        tb = tb.tb_next
    if not users:
        return None
    *callers, innermost = [frame_location(t.tb_frame.f_code, t.tb_lineno, t.tb_lasti)
                           for t in users]
    innermost.callers = tuple(callers)
    return innermost
