"""Columns for Numba's source locations, so that a compile error points at the expression the
interpreter's error points at.

Numba's front end gives each IR statement the line of its bytecode instruction but no column.
Python records each instruction's span in the source (``code.co_positions()``), which is what
the interpreter reads from a traceback; while a kernel compiles, the location Numba gives each
instruction gets that span's first column (1-based, as Numba counts) and, as ``end_col``, its
last. :func:`~numba_tile.compiler.error_translation.locate_in_kernel` reads them back.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     ct.store(x, (0,), ct.load(x, (0,), (4,)) + "a")
>>> try:
...     ct.compile(k, (np.zeros(4, np.float32),), arch="sm_90")
... except ct.TileTypeError as error:
...     print(error.loc.col)
22
"""

from numba.cuda.core import bytecode
from numba.cuda.core.interpreter import Interpreter

from ...errors import SourceLocation

_ORIGINAL_ITER_INST = Interpreter._iter_inst
#: Numba puts a NOP before a function's first instruction, so its offsets are this much past
#: Python's
_NUMBA_OFFSET = getattr(bytecode, "_FIXED_OFFSET", 0)
#: the attribute of a Numba location that holds the end of its span (0-based, exclusive)
END_COLUMN = "numba_tile_end_col"


def _spans(code):
    """``{Numba's offset: (line, first column, end column)}`` of a code object's
    instructions, columns 0-based (no end for a span over several lines). Spans of no width
    are left out: code that numba_tile wrote (a lambda made a function) may hold nodes
    without a place in the source."""
    spans = {}
    for index, (line, end_line, col, end_col) in enumerate(code.co_positions()):
        if line is None or col is None or (end_line == line and end_col <= col):
            continue
        spans[index * 2 + _NUMBA_OFFSET] = (line, col, end_col if end_line == line else None)
    return spans


def _iter_inst(self):
    """Numba's walk over the instructions, each location given its instruction's columns."""
    spans = _spans(self.func_id.code)
    for inst, kws in _ORIGINAL_ITER_INST(self):
        span = spans.get(inst.offset)
        if span is not None and span[0] == self.loc.line:
            self.loc = self.loc.with_lineno(self.loc.line, span[1] + 1)
            setattr(self.loc, END_COLUMN, span[2])
        yield inst, kws


def source_location(loc):
    """The :class:`~numba_tile.errors.SourceLocation` of Numba's ``loc``, with the columns
    :func:`_iter_inst` gave it (none where it has none).

    >>> from numba.cuda.core import ir
    >>> from numba_tile.compiler.frontend.bytecode_columns import source_location
    >>> source_location(ir.Loc("k.py", 3, 5))
    SourceLocation('k.py', 3, 4)
    """
    location = SourceLocation(loc.filename, loc.line)
    if loc.col:  # (1-based, as Numba counts)
        location.col = loc.col - 1
        location.end_col = getattr(loc, END_COLUMN, None)
    return location


#: the replacement put in place while a kernel compiles (:mod:`.numba_patches`)
PATCHES = ((Interpreter, "_iter_inst", _iter_inst),)
