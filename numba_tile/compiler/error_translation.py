"""How an exception raised while compiling a kernel reaches the user: as a Tile error with
the kernel line (and the calls that led there) it happened on.

Numba's own errors mean the kernel uses Python that numba_tile does not compile yet, or are
errors of the kernel in Numba's words (a variable whose type depends on the path taken, a
tuple unpacked into another number of targets), said here as cuTile says them; anything else
is a bug of numba_tile (:func:`as_tile_error`). Numba gives the line but not the column: the
expression is found in the statement's syntax tree (:func:`locate_in_kernel`), and the
location gets the name of the function that holds it (:func:`name_the_function`).
"""

import ast
import linecache
import os
import re
import textwrap
import traceback
import types as types_module

from numba.core.errors import NumbaError

from .. import dtypes
from ..errors import RECURSION_MESSAGE, SourceLocation, TileCompilerExecutionError, TileError, \
    TileInternalError, TileRecursionError, TileTypeError, TileUnsupportedFeatureError
from ..promotion import loose_concrete_dtype
from ..rules.core import type_name
from ..rules.objects import iteration_error
from ..rules.operators import OPERATOR_NODES
from ..rules.tuples import not_a_tuple_to_unpack, unpack_error
from ..source.loop_reads import read_in_a_loop_that_sets_it
from ..source.source_code import source_lines
from ..source.user_code import traceback_location
from .frontend import bytecode_columns, call_sites
from .frontend.defined_variables import undefined_variable, user_name


# Numba's symbols of the kernel and its helpers: Itanium-mangled (``_ZN6cudapy8__main__...``)
# or qualified (``cudapy::__main__::k$241``); users know the functions by their names
_SYMBOL = re.compile(r"_ZN[0-9A-Za-z_$]+|\bcudapy::[\w:$.<>]+")


def without_symbols(message, kernel_fn):
    """``message`` with each symbol that Numba made of a function replaced by the kernel's
    Python name (the symbols a message can hold name the kernel, its helpers inlined).

    >>> from numba_tile.compiler.error_translation import without_symbols
    >>> def saxpy():
    ...     pass
    >>> without_symbols("in function '_ZN6cudapy8__main__9saxpy_241B2v1E'", saxpy)
    "in function 'saxpy'"
    """
    return _SYMBOL.sub(kernel_fn.__name__, message)


def kernel_location(kernel_fn):
    """Where the kernel is defined (its ``def`` line): the location of a compile error that
    has none of its own (an error of the IR a whole kernel made), so that every error names
    the kernel's file and line.

    >>> from numba_tile.compiler.error_translation import kernel_location
    >>> def saxpy():
    ...     pass
    >>> kernel_location(saxpy).function
    'saxpy'
    """
    code = kernel_fn.__code__
    line = code.co_firstlineno
    for offset in range(64):  # past its decorators
        text = linecache.getline(code.co_filename, line + offset).lstrip()
        if text.startswith(("def ", "async def ")):
            line += offset
            break
    return SourceLocation(code.co_filename, line, function=kernel_fn.__name__)


def name_the_function(loc, kernel_fn):
    """Give ``loc`` the name of the function whose code holds it (the kernel, or a helper it
    calls), as the interpreter's locations have.

    >>> from numba_tile.errors import SourceLocation
    >>> from numba_tile.compiler import error_translation
    >>> code = error_translation.as_tile_error.__code__
    >>> loc = SourceLocation(code.co_filename, code.co_firstlineno + 1)
    >>> error_translation.name_the_function(loc, error_translation.locate_in_kernel)
    >>> loc.function
    'as_tile_error'
    """
    if loc is None or loc.function is not None:
        return
    candidates = [kernel_fn] + [value for value in kernel_fn.__globals__.values()
                                if isinstance(value, types_module.FunctionType)]
    best = None
    for candidate in candidates:
        code = getattr(candidate, "__code__", None)
        if code is None or code.co_filename != loc.filename:
            continue
        try:
            lines, first = source_lines(candidate)
        except (OSError, TypeError):
            continue
        if first <= loc.line < first + len(lines) and (best is None or first > best[0]):
            best = (first, candidate.__name__)  # the innermost definition holding the line
    if best is not None:
        loc.function = best[1]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Numba's words for a variable whose type differs by path, and for a tuple unpacked into
# another number of targets: cuTile's TileTypeError and TileValueError
_UNIFY = re.compile(r"Cannot unify (.+?) and (.+) for '([^']+)'")
_UNPACK = re.compile(r"wrong tuple length for .*expected (\d+), got (\d+)")
# Numba's words where what is unpacked (a, b = t) is no tuple: the kind of each type's name
_FAILED_UNPACK = re.compile(r"failed to unpack (Tile|TileArray|TiledView)\(")
_UNPACKED_KINDS = {"Tile": "Tile", "TileArray": "Array", "TiledView": "TiledView"}
# ... and where it is a number or None (``a, b = 5``): cuTile's "Expected a tuple"
_FAILED_UNPACK_VALUE = re.compile(r"failed to unpack (Literal\[\w+\]\(.*?\)|none|"
                                  r"Constant\[\w+\]\(.*?\)|u?int\d+|float\d+|bool)(?:\W|$)")
_MISSING_ATTRIBUTE = re.compile(r"has no attribute '(\w+)'")
_UNDEFINED_NAME = re.compile(r"NameError: name '(\w+)' is not defined")
_DEFINED_AT = re.compile(r"defined at (.+) \((\d+)\)")
# Numba's temporary for the result of a call: where an inlined helper's returns meet
_CALL_RESULT = re.compile(r"\$\d+call\w*")
_LITERAL = re.compile(r"Literal\[(\w+)\]\((.*)\)")
_TYPED_CONSTANT = re.compile(r"Constant\[(\w+)\]\((.*)\)")
_TILE = re.compile(r"Tile\((\w+), (\([^)]*\)), .*\)")
_ARRAY = re.compile(r"TileArray\((\w+), (\d+), .*\)")
_ENUM_CONSTANT = re.compile(r"TileConstant\(<(\w+\.\w+): .*>\)")
_DTYPE_CONSTANT = re.compile(r"TileConstant\((\w+)\)")


def _typing_error(reason, loc):
    """The Tile error of a Numba typing failure that is an error of the kernel (not a gap of
    the compiler), or None."""
    unpack = _UNPACK.search(reason)
    if unpack is not None:
        error = unpack_error(int(unpack[1]), int(unpack[2]))
        if error is not None:
            error.loc = loc
            return error
    failed_unpack = _FAILED_UNPACK.search(reason)
    if failed_unpack is not None:  # (a tile is no tuple: it cannot be iterated)
        error = iteration_error(_UNPACKED_KINDS[failed_unpack[1]])
        error.loc = loc
        return error
    failed_unpack = _FAILED_UNPACK_VALUE.search(reason)
    if failed_unpack is not None:
        return not_a_tuple_to_unpack(_tile_type_text(failed_unpack[1]), loc)
    unify = _UNIFY.search(reason)
    if unify is not None:
        first, second = (_tile_type_text(t) for t in unify.groups()[:2])
        name = unify[3].split(".")[0]
        name = user_name(name) or name  # (a helper's variable without the inlining's prefix)
        variable = f"`{name}`" if name.isidentifier() else \
            "return value" if _CALL_RESULT.fullmatch(name) else "a value"
        if loc is None:  # where the variable is first defined, as Numba says
            defined = _DEFINED_AT.search(reason)
            if defined is not None:
                loc = SourceLocation(defined[1], int(defined[2]))
        return TileTypeError(f"Type of {variable} depends on path taken: {first} (on one path) "
                             f"vs. {second} (on another)", loc)
    return None


def _tile_type_text(text):
    """A Numba type's name as cuTile names the type of a value of tile code: a scalar (a
    loose constant by its own dtype) ``Tile[int32,()]``, a tile ``Tile[float32,(16,)]``, an
    enum member ``<enum constant PaddingMode.ZERO>``, a dtype ``DTypeSpec(dtype=<DType
    'float32'>)``, a string ``<string constant 'a'>`` (as the interpreter names them,
    :mod:`numba_tile.interpreter.loop_carried`)."""
    if text == "none":
        return "None"  # (cuTile's name, and the interpreter's)
    array = _ARRAY.fullmatch(text)
    if array is not None:
        unknown = "(" + ",".join("?" * int(array[2])) + ("," if array[2] == "1" else "") + ")"
        return f"Array[{array[1]},{unknown}:{unknown}]"
    text = _ENUM_CONSTANT.sub(r"<enum constant \1>", text)
    dtype_constant = _DTYPE_CONSTANT.fullmatch(text)
    if dtype_constant is not None and \
            isinstance(getattr(dtypes, dtype_constant[1], None), dtypes.DType):
        return type_name(getattr(dtypes, dtype_constant[1]))
    literal = _LITERAL.fullmatch(text)
    constant = _TYPED_CONSTANT.fullmatch(text)
    tile = _TILE.fullmatch(text)
    dtype = None
    if literal is not None:
        kind, value = literal.groups()
        if kind == "str":
            return f"<string constant {value!r}>"
        try:
            dtype = loose_concrete_dtype(int(value)) if kind == "int" else \
                {"float": "float32", "bool": "bool_"}.get(kind)
        except TileError:
            dtype = None
    elif constant is not None:
        dtype = constant[1]
    elif tile is not None:
        return f"Tile[{tile[1]},{tile[2].replace(' ', '')}]"
    elif isinstance(getattr(dtypes, "bool_" if text == "bool" else text, None), dtypes.DType):
        dtype = "bool_" if text == "bool" else text  # a run-time scalar of Numba's
    return text if dtype is None else f"Tile[{dtype},()]"


def as_tile_error(error):
    """The Tile error a user sees for an exception that is not one, raised while compiling.
    Numba's own errors mean the kernel uses Python that numba_tile does not compile yet:
    :class:`TileUnsupportedFeatureError` with Numba's reason and the kernel line. Anything
    else (an ``AssertionError``, an NVVM error on the IR we made) is a bug of numba_tile:
    :class:`TileInternalError`, asking for a report.

    >>> from numba_tile.compiler.error_translation import as_tile_error
    >>> type(as_tile_error(KeyError("x"))).__name__
    'TileInternalError'
    """
    lines = [line.strip() for line in _ANSI.sub("", str(error)).splitlines()]
    lines = [line for line in lines if line and not line.startswith(("Failed in", "During",
                                                                      "File "))]
    reason = lines[0] if lines else type(error).__name__
    if reason.endswith(":") and len(lines) > 1:  # "... found for signature:" and the call
        reason = f"{reason} {lines[1].lstrip('>').strip()}"
    loc = _numba_location(error) or _statement_location(error.__traceback__) or \
        _message_location(error)
    if isinstance(error, RecursionError):  # helpers inlined into each other without end
        return TileRecursionError(RECURSION_MESSAGE, loc)
    if type(error).__name__ in _MISSING_LIBRARY:
        return TileCompilerExecutionError(
            f"The CUDA compiler libraries are not installed ({type(error).__name__}: {reason}). "
            f"Install them with numba_tile: pip install 'numba-tile[cu12]' (or [cu13] for "
            f"CUDA 13), or run kernels in interpreter mode (NUMBA_TILE_INTERPRET=1)")
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if isinstance(error, OSError) and home and home in str(error):
        # numba-cuda takes NVVM and libdevice from CUDA_HOME when it is set
        return TileCompilerExecutionError(
            f"The CUDA compiler libraries could not be read from CUDA_HOME={home} "
            f"({type(error).__name__}: {reason}): it may point at another or a partial CUDA "
            f"toolkit. Unset CUDA_HOME to use the libraries of numba-tile's cu12/cu13 extra, "
            f"or point it at a complete toolkit")
    # a read of a variable before any assignment, or of a name that is nothing
    undefined = getattr(error, "name", None) if type(error).__name__ == "NotDefinedError" \
        else _UNDEFINED_NAME.search(reason) and _UNDEFINED_NAME.search(reason)[1]
    if undefined and isinstance(error, NumbaError) and loc is not None:
        # (read before the loop around it sets it: an earlier iteration may have)
        return undefined_variable(undefined, loc.filename, loc.line,
                                  read_in_a_loop_that_sets_it(loc.filename, loc.line,
                                                              undefined))
    typing_error = _typing_error(reason, loc) if isinstance(error, NumbaError) else None
    if typing_error is not None:
        return typing_error
    gap = _frontend_gap(error)
    if gap is not None:
        return TileUnsupportedFeatureError(
            f"numba_tile cannot compile this yet: {gap} ({type(error).__name__}: {reason}). "
            f"The interpreter runs it (NUMBA_TILE_INTERPRET=1); docs/compatibility.rst lists "
            f"what compiles", loc)
    if isinstance(error, NumbaError):
        return TileUnsupportedFeatureError(
            f"numba_tile cannot compile this yet: {reason}. The interpreter runs it "
            f"(NUMBA_TILE_INTERPRET=1); docs/compatibility.rst lists what compiles", loc)
    return TileInternalError(
        f"Internal error of numba_tile while compiling this kernel ({type(error).__name__}: "
        f"{reason}). This is a bug: please report it with the kernel (the original error is "
        f"chained below)", loc)


# what the CUDA libraries raise where NVVM or nvJitLink cannot be found
_MISSING_LIBRARY = {"DynamicLibNotFoundError", "NvvmSupportError"}

# Python that Numba's front end (bytecode, inlining, with-blocks) cannot take yet: the
# numba-cuda module an error comes from, or the error's type, and what to tell the user
_FRONTEND_GAPS = (
    ("yield in a closure", None, "generator expressions, as in tuple(f(x) for x in xs)"),
    ("with (context manager)", None, "a with block whose context manager is not known "
                                     "before typing (one held in a local variable, say)"),
    ("UnsupportedBytecodeError", None, "this Python construct (one Numba's bytecode reader "
                                       "lacks)"),
    (None, "inline_closurecall.py", "*args of a tuple whose length is not known before "
                                    "typing, in a call of a helper or closure"),
    (None, "transforms.py", "a with block whose context manager is not known before typing "
                            "(one held in a local variable, say)"),
    # (on a machine without a GPU, where Numba asks the driver about first-class functions)
    ("CudaSupportError", None, "a construct that needs the CUDA driver while compiling, "
                               "such as calling a function held in a tuple"),
)


def _frontend_gap(error):
    """What Python construct ``error`` (raised inside Numba's front end) says the compiler
    lacks, or None for any other error. A rule names the error's type, a part of its message
    (Numba's own errors), or the numba-cuda module among the innermost frames."""
    innermost = [frame.filename.replace("\\", "/")
                 for frame in _traceback_frames(error.__traceback__)[-3:]]
    message = " ".join(_ANSI.sub("", str(error)).split())
    for type_or_text, module, description in _FRONTEND_GAPS:
        if type_or_text is not None and (type_or_text == type(error).__name__ or
                                         " " in type_or_text and type_or_text in message):
            return description
        if module is not None and not isinstance(error, NumbaError) and any(
                "/numba/cuda/core/" + module in filename for filename in innermost):
            return description
    return None


def _traceback_frames(tb):
    return traceback.extract_tb(tb) if tb is not None else []


def _numba_location(error):
    """Where in the kernel Numba's error happened, from its ``loc``."""
    loc = getattr(error, "loc", None)
    if type(loc).__name__ == "Loc" and getattr(loc, "line", None):
        return _located(loc)
    return None


def locate_in_kernel(error):
    """Where in the kernel a Tile error raised without a location happened: the statement
    Numba was typing or lowering (:func:`_statement_location`), its read of the attribute
    that the message says is missing underlined.

    >>> from numba_tile.errors import TileTypeError
    >>> from numba_tile.compiler.error_translation import locate_in_kernel
    >>> print(locate_in_kernel(TileTypeError("Tile has no attribute 'shapes'")))
    None
    """
    missing = _MISSING_ATTRIBUTE.search(error.message)
    return _statement_location(error.__traceback__, missing and missing[1])


def _statement_location(tb, attribute=None):
    """The kernel statement Numba was typing or lowering when an op rule raised: the
    innermost frame of Numba's machinery that holds an ``ir.Loc``, with the calls that led
    there where it is in an inlined helper (:mod:`.frontend.call_sites`). Numba gives no
    column, so the expression is found in the statement's syntax tree from the function
    being typed (``operator.add`` is a ``+``, ``ct.exp`` a call of ``exp``) or the
    ``attribute`` read; failing that, the whole statement is underlined."""
    found, function, after = None, None, None
    while tb is not None:
        frame_locals = tb.tb_frame.f_locals
        for candidate in (frame_locals.get("loc"),
                          *(_attribute(frame_locals.get(name), "loc")
                            for name in ("self", "inst", "stmt", "expr"))):
            # numba and numba-cuda each have an ir.Loc class: recognise either by shape
            if type(candidate).__name__ == "Loc" and getattr(candidate, "line", None):
                found, after = candidate, tb.tb_next
        templates = _attribute(frame_locals.get("fnty"), "templates")
        if templates:
            function = getattr(templates[0], "key", function)
        tb = tb.tb_next
    if found is None:
        return None
    # the user's code run while typing the statement (a static expression's): the expression
    # that failed in it, and the calls there, as the interpreter says
    evaluated = traceback_location(after)
    if evaluated is not None:
        return evaluated
    return _spanned(found, function, attribute)


# where Numba's message shows the kernel line: 'File "k.py", line 7:' (a path relative to the
# working directory where it is below it), and the function it could not type
_MESSAGE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_MESSAGE_FUNCTION = re.compile(r"Function\(<(?:built-in )?function (\w+)")


def _message_location(error):
    """Where Numba's message says its error is (its last kernel line), for errors that
    carry no location of their own (a call that no typing template takes); None where the
    message names no line of a readable file."""
    message = _ANSI.sub("", str(error))
    for filename, line in reversed(_MESSAGE_LINE.findall(message)):
        path = os.path.abspath(filename)
        if os.path.isfile(path):
            named = _MESSAGE_FUNCTION.search(message)
            function = types_module.SimpleNamespace(__name__=named[1], __module__=None) \
                if named else None
            return _spanned(types_module.SimpleNamespace(filename=path, line=int(line),
                                                         col=None), function)
    return None


def _spanned(found, function, attribute=None):
    """The SourceLocation of Numba's ``found`` location, its columns those of the read of
    ``attribute``, else of the expression applying ``function``, else the statement."""
    location = _located(found)
    text = location.source_line
    if location.col is None and text:
        span = _attribute_span(text, attribute) if attribute else None
        if span is None:
            span = _expression_span(text, function)
        if span is None:  # underline the whole statement
            span = (len(text) - len(text.lstrip()), len(text.rstrip()))
        location.col, location.end_col = span
    return location


def _located(loc):
    """The SourceLocation of Numba's ``loc``: its function, and the calls that led there."""
    location = bytecode_columns.source_location(loc)
    location.function = call_sites.function_at(loc.filename, loc.line)
    location.callers = call_sites.callers(loc, location.function)
    return location


def _attribute_span(text, attribute):
    """``(start, end)`` columns of the read of ``attribute`` on a source line, or None."""
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == attribute:
            return node.col_offset + indent, node.end_col_offset + indent
    return None


def _attribute(value, name):
    """``value.name``, or None where reading it fails in any way (some objects of Numba's
    CUDA driver raise on every unknown attribute)."""
    try:
        return getattr(value, name, None)
    except Exception:
        return None


def _expression_span(text, function):
    """``(start, end)`` columns of the one expression of a source line that applies
    ``function``, or None."""
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(textwrap.dedent(text).strip())
    except SyntaxError:  # part of a multi-line statement
        return None
    name = getattr(function, "__name__", None)
    if name is None:
        return None
    node_type = OPERATOR_NODES.get(name)
    matches = []
    for node in ast.walk(tree):
        if getattr(function, "__module__", None) == "_operator" and node_type is not None:
            op = getattr(node, "op", None)
            ops = getattr(node, "ops", [])
            if isinstance(op, node_type) or any(isinstance(o, node_type) for o in ops):
                matches.append(node)
        elif isinstance(node, ast.Call):
            callee = node.func
            callee_name = getattr(callee, "attr", None) or getattr(callee, "id", None)
            if callee_name == name:
                matches.append(node)
    if not matches:
        return None
    node = matches[0]
    return node.col_offset + indent, node.end_col_offset + indent
