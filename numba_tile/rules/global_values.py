"""What a global (or a closure's captured value) that tile code reads may be.

cuTile makes a compile-time constant of each global a kernel reads. An array cannot be one
(arrays reach tile code only as kernel arguments), nor can a list, dict or set (tile code
could change it), so reading a global (or captured) array or such container is
cuTile's ``TileTypeError`` "Cannot create constant from value of type torch.Tensor." at the
read, in both executors, in the order cuTile finds errors (those of the statements before
the read first): the compiler when it types the read
(:mod:`numba_tile.compiler.typing.global_reads`), the interpreter where that typing would
(:mod:`numba_tile.interpreter.invalid_reads`).

>>> import numpy as np
>>> from numba_tile.rules.global_values import global_value_error
>>> print(global_value_error(np.zeros(4)))
Cannot create constant from value of type numpy.ndarray.
>>> global_value_error((1, 2.0)) is None
True
"""

import dis
import types

import numpy as np

from ..errors import SourceLocation, TileSyntaxError, TileTypeError

_READS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF"}


def type_name(value):
    """The name of ``value``'s type as cuTile's messages give it: qualified by its module,
    but for builtins.

    >>> import numpy as np
    >>> from numba_tile.rules.global_values import type_name
    >>> type_name([1]), type_name(np.zeros(1))
    ('list', 'numpy.ndarray')
    """
    kind = type(value)
    module = kind.__module__
    return kind.__qualname__ if module in (None, "builtins") else f"{module}.{kind.__qualname__}"


def is_array(value):
    """True for an array of any library (NumPy, PyTorch, CuPy, numba device arrays, DLPack
    and array-interface objects): what only a kernel argument may be.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.rules.global_values import is_array
    >>> is_array(np.zeros(2)), is_array(np.float32(1)), is_array(ct.float32), is_array(3)
    (True, False, False, False)
    """
    if isinstance(value, (type, np.generic, types.ModuleType)) or callable(value):
        return False
    if isinstance(value, np.ndarray):
        return True
    return any(hasattr(value, name) for name in (
        "__cuda_array_interface__", "__array_interface__", "__dlpack__"))


#: containers a constant cannot be: tile code could change them (``G.append(1)``,
#: ``G[0] = 1``), which the interpreter would do to the host's object
MUTABLE_CONTAINERS = (list, dict, set, bytearray)


def _invalid_part(value):
    if isinstance(value, tuple):
        return next((p for p in map(_invalid_part, value) if p is not None), None)
    # (a bare object(), a sentinel, holds nothing a constant could be made of)
    return value if is_array(value) or isinstance(value, MUTABLE_CONTAINERS) or \
        type(value) is object else None


#: the modules of numba.cuda's SIMT programming model: what a thread of a CUDA kernel calls
#: (``cuda.threadIdx``, ``cuda.syncthreads()``, ``cuda.shared.array``, ``cuda.atomic.add``,
#: ``cuda.ldcg``, libdevice's functions)
_SIMT_MODULES = ("numba.cuda.stubs", "numba.cuda.intrinsics", "numba.cuda.cache_hints",
                 "numba.cuda.libdevice", "numba.cuda.cg", "numba.cuda.fp16")


def simt_intrinsic_error(value, loc=None):
    """The ``TileSyntaxError`` of tile code reading one of numba.cuda's SIMT intrinsics
    (each names a thread's share of the work, which tile code does not see), or None.

    >>> from numba import cuda
    >>> from numba_tile.rules.global_values import simt_intrinsic_error
    >>> print(simt_intrinsic_error(cuda.threadIdx))
    cuda.threadIdx is a SIMT intrinsic of numba.cuda: SIMT intrinsics are not tile code ...
    >>> simt_intrinsic_error(len) is None
    True
    """
    module = getattr(value, "__module__", None) if isinstance(value, type) or \
        callable(value) else None
    if not isinstance(module, str) or not module.startswith(_SIMT_MODULES):
        return None
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "")
    if module.startswith("numba.cuda.libdevice"):
        name = f"libdevice.{name}"
    return TileSyntaxError(
        f"cuda.{name} is a SIMT intrinsic of numba.cuda: SIMT intrinsics are not tile code "
        f"(a tile kernel works on whole tiles: ct.bid() for the block's index, ct.load and "
        f"ct.store for memory, ct.atomic_* for atomics)", loc)


def global_value_error(value, loc=None):
    """cuTile's ``TileTypeError`` for tile code reading global ``value`` (an array or a
    mutable container such as a list, or a tuple holding one), or None where it may; a SIMT
    intrinsic of numba.cuda is the ``TileSyntaxError`` of :func:`simt_intrinsic_error`."""
    simt = simt_intrinsic_error(value, loc)
    if simt is not None:
        return simt
    invalid = _invalid_part(value)
    if invalid is None:
        return None
    return TileTypeError(f"Cannot create constant from value of type {type_name(invalid)}.",
                         loc)


def read_errors(fn, code=None):
    """The errors of the reads in ``fn``'s code (or ``code``, that code rewritten) of a
    global or captured value tile code cannot hold (:func:`global_value_error`), each
    located at its read, in the code's order. (A function defined in it is checked where it
    is called, as the compiler types it there.)

    >>> import numpy as np
    >>> from numba_tile.rules.global_values import read_errors
    >>> table = np.zeros(4)
    >>> def reads_table():
    ...     return table
    >>> for error in read_errors(reads_table):
    ...     print(error)
    Cannot create constant from value of type numpy.ndarray.
    ...
    """
    captured = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            captured[name] = cell.cell_contents
        except ValueError:  # not yet assigned
            pass
    return _read_errors(code or fn.__code__, fn.__globals__, captured, fn.__name__)


_READS_OF = {}  # code -> its reads of names: (global or not, name, instruction)


def _reads(code):
    """The reads of globals and captured variables in ``code`` (found once per code: the
    interpreter re-binds every function of a module at each launch)."""
    if code not in _READS_OF:
        _READS_OF[code] = [
            (instruction.opname.startswith("LOAD_GLOBAL") or instruction.opname == "LOAD_NAME",
             instruction.argval, instruction)
            for instruction in dis.get_instructions(code) if instruction.opname in _READS]
    return _READS_OF[code]


def _read_errors(code, module_globals, captured, function):
    errors = []
    for is_global, name, instruction in _reads(code):
        scope = module_globals if is_global else captured
        error = global_value_error(scope[name]) if name in scope else None
        if error is not None:
            error.loc = _location(code, instruction, function)
            errors.append(error)
    return errors


def _location(code, instruction, function):
    positions = getattr(instruction, "positions", None)
    if positions is not None and positions.lineno is not None:
        return SourceLocation(code.co_filename, positions.lineno, positions.col_offset,
                              positions.end_col_offset, function=function)
    # (Python 3.10: no columns; the line of the instruction's statement)
    line = code.co_firstlineno
    for offset, start in dis.findlinestarts(code):
        if offset > instruction.offset:
            break
        line = start if start is not None else line
    return SourceLocation(code.co_filename, line, function=function)
