"""Where inlined code was called from, so that an error in a helper names the calls that led
there, as the interpreter's tracebacks (and cuTile) do.

Numba's inlining copies a helper's IR into its caller for each call; the copy's statements
keep the helper's own locations. While a kernel compiles, each copy's locations are marked
with the location of the call (``numba_tile_inlined_at``; the end of their chain, for the
statements of helpers the helper had inlined itself), and :func:`callers` turns the chain of
a location into the ``callers`` of a :class:`~numba_tile.errors.SourceLocation`: the
kernel's call first, each with the call underlined.

>>> import numpy as np, numba_tile as ct
>>> def inner(x):
...     return ct.nothing_here(x)
>>> def outer(x):
...     return inner(x)
>>> @ct.kernel
... def k(x):
...     outer(x)
>>> try:
...     ct.compile(k, (np.zeros(4, np.float32),), arch="sm_90")
... except ct.TileTypeError as error:
...     print([frame.function for frame in error.loc.callers], error.loc.function)
['k', 'outer'] inner
"""

import ast
import functools
import linecache

from numba.cuda.core.inline_closurecall import InlineWorker

from ...errors import SourceLocation
from . import bytecode_columns

_INLINED_AT = "numba_tile_inlined_at"
_ORIGINAL_INLINE_IR = InlineWorker.inline_ir


def _inline_ir(self, caller_ir, block, i, *args, **kwargs):
    """numba-cuda's ``inline_ir``, the copy's locations then marked with the call's."""
    call = block.body[i].loc
    result = _ORIGINAL_INLINE_IR(self, caller_ir, block, i, *args, **kwargs)
    outer = set()  # the call's own chain: never marked (it would make a cycle)
    loc = call
    while loc is not None and id(loc) not in outer:
        outer.add(id(loc))
        loc = getattr(loc, _INLINED_AT, None)
    for inlined in result[1].values():
        for statement in inlined.body:
            loc = statement.loc
            seen = set()
            while getattr(loc, _INLINED_AT, None) is not None and id(loc) not in outer | seen:
                seen.add(id(loc))
                loc = getattr(loc, _INLINED_AT)
            if id(loc) not in outer | seen:
                setattr(loc, _INLINED_AT, call)
    return result


#: what this module changes in numba-cuda while a kernel compiles (put in place by
#: :mod:`.numba_patches`)
PATCHES = ((InlineWorker, "inline_ir", _inline_ir),)


def callers(loc, function=None):
    """The calls that led to Numba location ``loc`` (whose code is that of ``function``, a
    name, when known), the kernel's first, as :class:`SourceLocation` objects."""
    found = []
    callee = function or function_at(loc.filename, loc.line)
    call = getattr(loc, _INLINED_AT, None)
    seen = set()
    while call is not None and id(call) not in seen:
        seen.add(id(call))
        location = SourceLocation(call.filename, call.line,
                                  function=function_at(call.filename, call.line))
        if call.col:  # the call's own span (1-based: :mod:`.bytecode_columns`)
            span = call.col - 1, getattr(call, bytecode_columns.END_COLUMN, None)
        else:
            span = _call_span(location.source_line, callee)
        if span is not None:
            location.col, location.end_col = span
        found.append(location)
        callee = location.function
        call = getattr(call, _INLINED_AT, None)
    return tuple(reversed(found))


@functools.lru_cache(maxsize=64)
def _definitions(filename):
    """``(first line, last line, name)`` of every function defined in a file."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    return tuple((node.lineno, node.end_lineno, node.name) for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def function_at(filename, line):
    """The name of the innermost function of a file whose code holds ``line``, or None."""
    holding = [(first, name) for first, last, name in _definitions(filename)
               if first <= line <= last]
    return max(holding)[1] if holding else None


def _call_span(text, callee):
    """``(start, end)`` columns of the call of ``callee`` (a name) on a source line, else of
    the line's statement; None without text."""
    if not text:
        return None
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:  # part of a statement over several lines
        return indent, len(text.rstrip())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            if name == callee:
                return node.col_offset + indent, node.end_col_offset + indent
    return indent, len(text.rstrip())
