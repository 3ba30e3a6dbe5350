"""Rules of ``ct.scan`` and ``ct.reduce`` with a user's combining function.

``x`` is a tile or a tuple of tiles whose shapes broadcast to one; ``func`` combines two
values (two 0-d tiles, or two groups of N for a tuple of N tiles) and returns the combined
value (a tile, or a tuple of N); ``identity`` is a constant scalar (a tuple of N of them)
that ``func`` leaves unchanged. Both executors run the same tile code
(:mod:`numba_tile.language.combiners`), which asks these rules, at compile time, for the
steps of the combining tree:

* a scan along the last axis (:func:`scan_plan`) first scans runs of :data:`SCAN_RUN`
  consecutive elements one after the other (compiled, each run is in one thread's
  registers), then doubles blocks of runs one step at a time (:func:`combining_steps`, the
  widths 1, 2, 4, ... of the halves): each run holds its *offset*, the combined totals of
  the runs before it in its block, and its block's total; in a pair of neighbouring blocks,
  ``low`` then ``high``, the offsets of ``high``'s runs are combined after ``low``'s total,
  ``func(total, offset)``, and both totals become ``func(low's, high's)``; a last
  ``func(offset, element)`` gives each element its result. That is one call of ``func`` per
  run and step (compiled, per thread), not per element: a work-efficient scan. Along
  another axis the blocks double from single elements, each element holding its running
  result. A reverse scan is the scan of the flipped axis (``high`` comes first).
* a reduction does the same with the totals alone, so that it combines neighbouring
  elements first; every element ends with the whole axis's total (:func:`reduced_part`
  takes one).

An element finds the other block's total at its partner, the element ``width`` away
(``swap_halves``): another register, another lane or another warp in compiled code, so that
no step moves the tile to another layout.

``func`` is applied to whole tiles of such elements at once, so its body must be what cuTile
takes: no branching, no loop, no operation with a memory effect, no nested scan or
reduction (:func:`combiner_problems` finds them in its source, for both executors).

>>> from numba_tile.rules.combiners import combining_steps
>>> combining_steps((2, 8), 1)
((1, 1), (1, 2), (1, 4))
"""

import ast
import builtins
import inspect
import linecache

from ..errors import SourceLocation, TileSyntaxError, TileTypeError
from ..source.static_expressions import EFFECTS
from ..source.tile_functions import tile_function
from ..source.user_code import is_user_code
from .core import broadcast_shapes, constant_value, describe, type_name, _NOT_CONSTANT

#: what a nested call may not be inside a combining function's body
NESTED = frozenset({"scan", "reduce", "cumsum", "cumprod", "sum", "prod", "max", "min",
                    "argmax", "argmin"})



def tuple_items(value):
    """The items of a tuple as a static expression sees it (a Python tuple in the
    interpreter, a run-time tuple while compiling), or None for anything else."""
    if isinstance(value, tuple):
        return value
    items = getattr(value, "__static_items__", None)
    return items() if items is not None else None


def operands(op, x, axis, identity):
    """``(count, axis, shape)`` of a ``scan``/``reduce`` call: the number of tiles of tuple
    ``x`` (0 for a single tile), the axis made non-negative, and the shape the tiles
    broadcast to."""
    items = tuple_items(x)
    tiles = (x,) if items is None else items
    for tile in tiles:
        if getattr(tile, "is_tile_array", False):  # (memory, not values)
            raise TileTypeError(f"Invalid argument #1 of {op}(): Expected a tile or a tuple of "
                                f"tiles, but given value has type {type_name(tile)}")
    if not tiles or not all(tuple_items(t) is None and hasattr(t, "dtype") and
                            hasattr(t, "shape") for t in tiles):
        raise TileTypeError(f"{op}() combines a tile or a tuple of tiles, got "
                            f"{'a tuple' if items is not None else describe(x)}")
    shape = ()
    for tile in tiles:
        shape = broadcast_shapes(shape, tuple(tile.shape))
    if not shape:
        raise TileTypeError(f"{op}() needs a tile of at least one dimension")
    value = constant_value(axis)
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "None" if value is None else type(value).__name__ if value is not \
            _NOT_CONSTANT else "a run-time value"
        raise TileTypeError(f"Expected an integer constant, but given value has type {kind}")
    if not -len(shape) <= value < len(shape):
        raise TileTypeError(f"axis {value} of {op}() is out of range for rank {len(shape)}")
    _check_identity(op, identity, len(tiles), items is None)
    return (0 if items is None else len(items)), value % len(shape), shape


def _check_identity(op, identity, count, single):
    items = (identity,) if single else tuple_items(identity)
    if not isinstance(items, tuple) or len(items) != count:
        raise TileTypeError(f"identity of {op}() must be {'a constant scalar' if single else f'a tuple of {count} constant scalars'}, "
                            f"got {describe(identity)}")
    for item in items:
        value = constant_value(item)
        if value is _NOT_CONSTANT or not isinstance(value, (bool, int, float)):
            raise TileTypeError(f"identity of {op}() must be constant scalars, got "
                                f"{describe(item)}")


def combining_steps(shape, axis):
    """The steps of a scan or reduction along ``axis``: ``(axis, width)`` of each doubling
    of the blocks, ``width`` the length of their halves."""
    steps, width = [], 1
    while width < shape[axis]:
        steps.append((axis, width))
        width *= 2
    return tuple(steps)


#: the elements of a thread's run that a scan along the last axis takes one after the other
#: (compiled tiles are made with runs of 4 or 8 along their last axis, so 4 stay in registers)
SCAN_RUN = 4


def scan_plan(shape, axis):
    """How a scan along ``axis`` of ``shape`` proceeds: ``(axis, axis + 1, run, steps)``.
    Along the last axis, ``run`` consecutive elements are scanned one after the other and
    ``steps`` are the doublings of :func:`combining_steps` on the runs' totals (the axis
    split into ``(n // run, run)``); along another axis ``run`` is 1 and ``steps`` double
    blocks of single elements.

    >>> from numba_tile.rules.combiners import scan_plan
    >>> scan_plan((2, 32), 1)
    (1, 2, 4, ((1, 1), (1, 2), (1, 4)))
    >>> scan_plan((8, 2), 0)
    (0, 1, 1, ((0, 1), (0, 2), (0, 4)))
    """
    run = min(SCAN_RUN, shape[axis]) if axis == len(shape) - 1 else 1
    if run == 1:
        return axis, axis + 1, 1, combining_steps(shape, axis)
    runs = tuple(shape[:axis]) + (shape[axis] // run,)
    return axis, axis + 1, run, combining_steps(runs, axis)


def reduce_plan(shape, axis, keepdims):
    """How a reduction along ``axis`` of ``shape`` proceeds, as a scan does
    (:func:`scan_plan`: runs of ``run`` elements combined one after the other, then
    ``steps`` doubling the runs' totals), and where its result is: ``(axis, axis + 1, run,
    steps, index, first, result)``, the ``extract`` index and shape of the first total and
    the result's shape (:func:`reduced_part`).

    >>> from numba_tile.rules.combiners import reduce_plan
    >>> reduce_plan((2, 16), 1, keepdims=True)
    (1, 2, 4, ((1, 1), (1, 2)), (0, 0, 0), (2, 1, 1), (2, 1))
    """
    axis, inner, run, steps = scan_plan(shape, axis)
    index, first, result = reduced_part(shape, axis, keepdims)
    if run > 1:  # the totals of the runs: the axis split, the run's length 1
        first = tuple(shape[:axis]) + (1, 1) + tuple(shape[axis + 1:])
        index = (0,) * len(first)
    return axis, inner, run, steps, index, first, result


def reduced_part(shape, axis, keepdims):
    """Where a reduction's result is once every element holds its axis's total: the
    ``extract`` index and shape of the first element along ``axis``, and the shape of the
    result.

    >>> from numba_tile.rules.combiners import reduced_part
    >>> reduced_part((4, 8), 1, keepdims=False)
    ((0, 0), (4, 1), (4,))
    """
    first = tuple(shape[:axis]) + (1,) + tuple(shape[axis + 1:])
    kept = (1,) if keepdims else ()
    return (0,) * len(shape), first, tuple(shape[:axis]) + kept + tuple(shape[axis + 1:])


def check_results(op, inputs, results):
    """``func``'s results (always a tuple: the tile code wraps a single one) must be as
    many tiles as the inputs, of the inputs' dtypes; 0. The messages are cuTile's.

    >>> import numba_tile as ct
    >>> from numba_tile.host.tile import Tile
    >>> from numba_tile.rules.combiners import check_results
    >>> t = Tile(ct.float32, [1.0])
    >>> check_results("reduce", (t, t), (t,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Reduction function must return a tuple of 2 values to match the number of inputs, but a tuple of length 1 was found.
    """
    name = "Reduction" if op == "reduce" else "Scan"
    inputs, found = tuple_items(inputs), tuple_items(results)
    if found is None:
        raise TileTypeError(f"{name} function returns a value that is not a tuple, but a "
                            f"tuple was expected")
    if len(found) != len(inputs):
        raise TileTypeError(f"{name} function must return a tuple of {len(inputs)} values to "
                            f"match the number of inputs, but a tuple of length {len(found)} "
                            f"was found.")
    for position, (tile, result) in enumerate(zip(inputs, found)):
        if tuple_items(result) is not None or getattr(result, "dtype", None) != tile.dtype:
            got = "a tuple" if tuple_items(result) is not None else \
                f"{getattr(result, 'dtype', 'no tile')}"
            raise TileTypeError(f"{name} function returned a tile of unexpected dtype at "
                                f"position #{position}: func of {op}() must return values of "
                                f"the input's dtype {tile.dtype}, got {got}")
    return 0


# -- what the body of a combining function may not do --------------------------------------
def check_combiner(op, func, count=0):
    """Raise cuTile's ``TileSyntaxError`` for what the combining function ``func`` (or a
    helper it calls) does that a scan or reduction body may not: branch, loop, touch memory
    or print, nest a scan or reduction; ``TileTypeError`` where it cannot take the two
    values (two groups of ``count`` for a tuple of ``count`` tiles) it is called with. True
    where it does none of these (or its source is not Python: ``operator.add``). Both
    executors ask it at compile time: the interpreter with the function, the compiler with
    a run-time value that knows its function."""
    found = _function_of(func)
    if found is None:
        if not callable(func):  # (None, a number, a tile: nothing to combine with)
            raise TileTypeError(f"func of {op}() must be a function of two tiles, got "
                                f"{describe(func)}")
        return True
    code, namespace = found
    _check_arity(op, code, _defaults_count(func), count)
    node = _source_node(code)
    if node is None:
        return True
    problem = _body_problem(op, node, _where(code), _resolver(namespace), {code})
    if problem is not None:
        raise problem
    return True


def _check_arity(op, code, defaults, count):
    """``func`` of ``code`` (with ``defaults`` default values) must take the ``2 * count``
    arguments (2 for a single tile) it is called with."""
    needed = 2 * max(count, 1)
    positional = code.co_argcount
    varargs = bool(code.co_flags & inspect.CO_VARARGS)
    required = positional - defaults
    if required <= needed and (needed <= positional or varargs):
        return
    takes = f"at least {required}" if varargs else str(positional) if not defaults else \
        f"{required} to {positional}"
    values = "two values" if count == 0 else f"two groups of {count} values, one per tile"
    raise TileTypeError(f"func of {op}() is called with {needed} arguments ({values}), but "
                        f"{code.co_name}() takes {takes} positional arguments")


def _defaults_count(value):
    """The number of default values of a function value's parameters (a run-time value of
    the compiler's says it by ``__static_defaults__``)."""
    value = tile_function(value)
    static_defaults = getattr(type(value), "__static_defaults__", None)
    if static_defaults is not None:
        return static_defaults(value)
    return len(getattr(value, "__defaults__", None) or ())


def _function_of(value):
    """``(code, names it reads)`` of a Python function value, or None."""
    value = tile_function(value)
    code = getattr(value, "__code__", None)
    if code is not None and hasattr(value, "__globals__"):
        names = dict(value.__globals__)
        for name, cell in zip(code.co_freevars, value.__closure__ or ()):
            try:
                names[name] = cell.cell_contents
            except ValueError:  # not assigned yet
                pass
        return code, names
    static_function = getattr(type(value), "__static_function__", None)
    return static_function(value) if static_function is not None else None


_MODULES = {}  # filename -> parsed module (or None), once per process


def _source_node(code):
    """The ``ast.Lambda`` or ``ast.FunctionDef`` of a function's code, found in the parsed
    source of its file, or None."""
    filename = code.co_filename
    if filename not in _MODULES:
        lines = linecache.getlines(filename)
        try:
            _MODULES[filename] = ast.parse("".join(lines)) if lines else None
        except SyntaxError:
            _MODULES[filename] = None
    tree = _MODULES[filename]
    if tree is None:
        return None
    parameters = list(code.co_varnames[:code.co_argcount])
    for node in ast.walk(tree):
        if isinstance(node, (ast.Lambda, ast.FunctionDef)) and \
                [a.arg for a in node.args.args] == parameters and \
                (node.lineno == code.co_firstlineno or
                 isinstance(node, ast.FunctionDef) and node.name == code.co_name and
                 node.decorator_list and node.decorator_list[0].lineno ==
                 code.co_firstlineno):
            return node
    return None


def _where(code):
    def where(node):
        end = node.end_col_offset if node.end_lineno == node.lineno else None
        return SourceLocation(code.co_filename, node.lineno, node.col_offset, end,
                              function=code.co_name)
    return where


def _resolver(namespace):
    """``resolve(node)``: the value a name or a chain of attributes of one names, else
    None."""
    def resolve(node):
        if isinstance(node, ast.Name):
            if node.id in namespace:
                return namespace[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute):
            owner = resolve(node.value)
            return getattr(owner, node.attr, None) if owner is not None else None
        return None
    return resolve


def _body_problem(op, function_node, where, resolve, seen):
    """The first construct of a combining function's body that cuTile refuses, as a Tile
    error, or None; the helpers it calls are checked too (each once: ``seen``)."""
    kind = "scan" if op == "scan" else "reduction"
    body = [function_node.body] if isinstance(function_node, ast.Lambda) else \
        function_node.body
    for node in _body_nodes(body):
        if isinstance(node, (ast.If, ast.IfExp)):
            return TileSyntaxError(f"Branching inside {kind} body is not supported",
                                   where(node))
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            return TileSyntaxError(f"Loops inside {kind} body are not supported", where(node))
        if not isinstance(node, ast.Call):
            continue
        value = resolve(node.func)
        name = getattr(value, "__name__", None)
        module = getattr(value, "__module__", None) or ""
        effect = TileSyntaxError(f"Operations with memory effects are not supported inside "
                                 f"{kind} body", where(node))
        if module.startswith("numba_tile") and name in NESTED:
            return TileSyntaxError("Nested scan/reduction is not supported", where(node))
        if module.startswith("numba_tile") and name in EFFECTS or value is print:
            return effect
        if value is None and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("load", "store"):  # a method of an array or a view
            return effect
        problem = _helper_problem(op, value, seen)
        if problem is not None:
            return problem
    return None


def _helper_problem(op, value, seen):
    """The problem of a user helper the body calls (checked as a body too), or None."""
    value = getattr(value, "py_func", value)  # a helper the compiler made a dispatcher
    found = _function_of(value) if callable(value) and (
        is_user_code(getattr(value, "__func__", value)) or
        hasattr(value, "__numba_tile_function__")) else None
    if found is None or found[0] in seen:
        return None
    seen.add(found[0])
    node = _source_node(found[0])
    if node is None:
        return None
    return _body_problem(op, node, _where(found[0]), _resolver(found[1]), seen)


def _body_nodes(statements):
    """The nodes of a body, outside the functions and lambdas defined in it."""
    pending = list(reversed(statements))
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        pending.extend(reversed(list(ast.iter_child_nodes(node))))
