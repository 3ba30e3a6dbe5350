"""Loop-carried variables of interpreted tile code take a concrete dtype, as compiled code's
do: a variable holding a loosely typed constant before a ``for`` or ``while`` loop that
assigns it is a run-time scalar of the constant's own dtype (int32, int64 or uint64 by value,
float32, bool) on entry to the loop, at the start of each iteration and after the loop. The
compiler gets this from joining the variable's types at the loop's head (``j = 0; j += 1``
is an int32 counter); cuTile does the same. A value of another type at the start of an
iteration (``a = 1``, then ``a *= 2.0`` in the loop) is cuTile's ``TileTypeError`` "Type of
`a` depends on path taken" where the variable is read (there, ``a *= 2.0``; cuTile types the
variables a loop carries at its head, and a variable whose type depends on the path is an
error where read, not where the paths meet: ``a = 1``, then ``a = 2.0`` in the loop and no
read, is no error), as in compiled code; after the loop, the ways out meet as
:mod:`.loop_exits` says.

The interpreter's source rewrite (:mod:`.rewrites`) calls :func:`rewrite`. For a variable
``j`` assigned in a loop's body the loop is preceded by ``__numba_tile_carried_j =
__numba_tile_bound("j", locals())`` (whether ``j`` is bound before the loop) and each of the
three points does ``if __numba_tile_carried_j: j = __numba_tile_carried(j)`` where ``j`` is
bound (the start of an iteration makes ``j`` undefined with cuTile's message,
:func:`undefine_on_mismatch`, where its type is not the one it had on entry). Loops over
``ct.static_iter`` are unrolled by the compiler, so their variables carry nothing.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     j = 0
...     for i in range(3):
...         j += 1
...     ct.scatter(x, 0, ct.int8(1) + j)  # j is int32: int8 + int32 is int32
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int16),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: scatter() value: cannot implicitly cast int32 to int16; ...
...
"""

import ast
import builtins
import enum

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError
from ..host.arrays import Array
from ..host.tile import Tile
from ..promotion import loose_concrete_dtype
from ..rules.core import type_name
from ..source.static_expressions import ITER_NAME

CARRIED_NAME = "__numba_tile_carried"
HEAD_MISMATCH_NAME = "__numba_tile_head_mismatch"
STILL_UNDEFINED_NAME = "__numba_tile_still_undefined"
BOUND_NAME = "__numba_tile_bound"
LOCALS_NAME = "__numba_tile_locals"
_FLAG = "__numba_tile_carried_"
MISMATCH_PREFIX = "__numba_tile_mismatch_"
_ENTRY = "__numba_tile_entry_"


def carried(value, name=None, entry=None):
    """``value`` as a loop carries it: a loosely typed number becomes a run-time scalar of
    its own dtype (``TileValueError`` for an integer no dtype holds); others are unchanged.
    With ``entry`` (what variable ``name`` held on entry to the loop), a value of another
    type (dtype, shape) is cuTile's ``TileTypeError``: the loop's paths give the variable
    two types."""
    if isinstance(value, bool):
        value = Tile(d.bool_, np.array(value), constant=False)
    elif isinstance(value, (int, float)) and not isinstance(value, (enum.Enum, np.generic)):
        dtype = loose_concrete_dtype(value)  # (a loosely typed constant is an int or float)
        value = Tile(dtype, np.array(value).astype(dtype.storage), constant=False)
    message = None if name is None else mismatch(name, entry, value)
    if message is not None:
        raise TileTypeError(message)
    return value


def typed(dtype_name):
    """A run-time scalar of the dtype named ``dtype_name`` (a literal's, as a loop carries
    it): what a value of that type is compared by."""
    dtype = d.to_dtype(dtype_name)
    return Tile(dtype, np.zeros((), dtype.storage), constant=False)


def mismatch(name, first, second):
    """cuTile's message where variable ``name`` is ``first`` on one path and ``second`` on
    another (values as a loop carries them) and their types differ, else None. ``name``
    None: a value (that of a conditional expression)."""
    if _type_key(first) == _type_key(second):
        return None
    what = "a value" if name is None else f"`{name}`"
    return f"Type of {what} depends on path taken: {_type_text(first)} (on one path) vs. " \
           f"{_type_text(second)} (on another)"


def constant_key(value):
    """What identifies the type of a constant whose value is its type in cuTile: an enum
    member (but an ``IntEnum``'s, an int), a dtype (also another library's spelling, as
    ``np.float32``), a string; else None. Two such constants meet only where they are
    equal: ``ct.MemoryOrder.RELAXED`` on one path and ``ct.MemoryOrder.WEAK`` on another
    is cuTile's "Type of `val` depends on path taken".

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.interpreter.loop_carried import constant_key
    >>> constant_key(ct.MemoryOrder.WEAK), constant_key(np.float16), constant_key(2)
    (('enum', <MemoryOrder.WEAK: 'weak'>), ('dtype', float16), None)
    """
    if isinstance(value, enum.Enum):
        return None if isinstance(value, int) else ("enum", value)
    if isinstance(value, d.DType):
        return "dtype", value
    spelled = d.dtype_spelling(value)
    if spelled is not None:
        return "dtype", spelled
    if isinstance(value, str):
        return "str", value
    return None


def _type_text(value):
    """cuTile's name of the type of ``value`` in "depends on path taken": a constant's
    (:func:`constant_key`) names the constant (``<enum constant MemoryOrder.WEAK>``,
    ``DTypeSpec(dtype=<DType 'float32'>)``, ``<string constant 'a'>``)."""
    key = constant_key(value)
    if key is None:
        return type_name(value)
    kind, constant = key
    if kind == "enum":
        return f"<enum constant {type(constant).__name__}.{constant.name}>"
    if kind == "str":
        return f"<string constant {constant!r}>"
    return type_name(constant)


def _type_key(value):
    constant = constant_key(value)
    if constant is not None:
        return constant
    if isinstance(value, Tile):
        return "tile", value.dtype, value.shape
    if isinstance(value, Array):
        return "array", value.dtype, value.ndim
    return "other", type(value)


def bound(name, variables):
    """True where ``name`` holds a value before the loop (``variables``: its ``locals()``)."""
    return name in variables


def head_mismatch(name, value, entry):
    """cuTile's message where variable ``name`` holds ``value`` at the start of an iteration
    of a loop it entered holding ``entry`` (as a loop carries it) and their types differ,
    else None.

    >>> import numba_tile as ct
    >>> from numba_tile.interpreter.loop_carried import carried, head_mismatch
    >>> print(head_mismatch("a", 2.0, carried(1)))  # doctest: +NORMALIZE_WHITESPACE
    Type of `a` depends on path taken: Tile[int32,()] (on one path) vs. Tile[float32,()]
    (on another)
    """
    return mismatch(name, entry, carried(value))


def assigned(statements):
    """The names the statements assign, nested loops and branches included (not those of
    nested functions or comprehensions, which have scopes of their own)."""
    names = []

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                node.id not in names and not node.id.startswith("__numba_tile"):
            names.append(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)
    for statement in statements:
        visit(statement)
    return names


def is_static_iter(loop):
    return isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and \
        isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == ITER_NAME


def _name(identifier, ctx=ast.Load):
    return ast.Name(id=identifier, ctx=ctx())


def _materialize(names, at):
    """``if flag_j: j = carried(j)`` for each name bound there, ``at`` the loop's ``"entry"``
    (where the value is kept: ``entry_j = j``), an ``"iteration"``'s start (where the value
    is checked against it: ``j`` is undefined where :func:`head_mismatch` finds the types
    differ, so that reading it is the error) or its ``"exit"``."""
    statements = []
    for n in names:
        body = [ast.Assign(targets=[_name(n, ast.Store)], value=ast.Call(
            func=_name(CARRIED_NAME), args=[_name(n)], keywords=[]))]
        if at == "entry":
            body.append(ast.Assign(targets=[_name(_ENTRY + n, ast.Store)], value=_name(n)))
        elif at == "iteration":
            body = undefine_on_mismatch(n, ast.Call(
                func=_name(HEAD_MISMATCH_NAME), args=[ast.Constant(n), _name(n),
                                                      _name(_ENTRY + n)], keywords=[]), body)
        if at != "entry":  # (a path of the loop may have left it undefined)
            body = [ast.If(test=ast.Call(func=_name(BOUND_NAME), args=[
                ast.Constant(n), ast.Call(func=_name(LOCALS_NAME), args=[], keywords=[])],
                keywords=[]), body=body, orelse=[])]
        statements.append(ast.If(test=_name(_FLAG + n), body=body, orelse=[]))
    return statements


def undefine(name, mismatch=None):
    """Statements that make variable ``name`` undefined (``del``) where the paths that meet
    do not all set it, or set it to values of two types (``mismatch``: cuTile's message):
    reading it then raises the ``NameError`` that the runner turns into cuTile's error,
    ``TileSyntaxError`` "Undefined variable", or the ``TileTypeError`` of the mismatch
    (found in ``MISMATCH_PREFIX + name``, a variable of the same function)."""
    return [ast.Assign(targets=[_name(MISMATCH_PREFIX + name, ast.Store)],
                       value=ast.Constant(mismatch)),
            ast.Delete(targets=[_name(name, ast.Del)])]


def potentially_undefined(name):
    """cuTile's message for a read of variable ``name`` where one path to the read sets it
    and another does not (the side of an ``if`` that did not run, an earlier iteration of
    the loop around the read)."""
    return f"Use of potentially undefined variable `{name}`"


def still_undefined(name, variables):
    """The message of a read of variable ``name`` (``variables``: its function's
    ``locals()``) that holds no value where some path sets it: the one it has (the paths
    that met gave it two types) or :func:`potentially_undefined`."""
    return variables.get(MISMATCH_PREFIX + name) or potentially_undefined(name)


GLOBALS = {CARRIED_NAME: carried, BOUND_NAME: bound, LOCALS_NAME: builtins.locals,
           HEAD_MISMATCH_NAME: head_mismatch, STILL_UNDEFINED_NAME: still_undefined}


def mark_potentially_undefined(name):
    """The statement that makes a read of ``name``, while it holds no value, cuTile's
    ``TileTypeError`` of :func:`still_undefined` (see :func:`undefine`)."""
    return ast.Assign(targets=[_name(MISMATCH_PREFIX + name, ast.Store)], value=ast.Call(
        func=_name(STILL_UNDEFINED_NAME), args=[ast.Constant(name), ast.Call(
            func=_name(LOCALS_NAME), args=[], keywords=[])], keywords=[]))


def undefine_on_mismatch(name, message, otherwise=()):
    """Statements that make variable ``name`` undefined as :func:`undefine` does where the
    expression ``message`` gives cuTile's message (not None), and run the statements
    ``otherwise`` where it does not. (A variable already undefined is left undefined, with
    the new message.)"""
    is_bound = ast.Call(func=_name(BOUND_NAME), args=[ast.Constant(name), ast.Call(
        func=_name(LOCALS_NAME), args=[], keywords=[])], keywords=[])
    return [ast.Assign(targets=[_name(MISMATCH_PREFIX + name, ast.Store)], value=message),
            ast.If(test=ast.Compare(left=_name(MISMATCH_PREFIX + name), ops=[ast.IsNot()],
                                    comparators=[ast.Constant(None)]),
                   body=[ast.If(test=is_bound, body=[ast.Delete(targets=[_name(name, ast.Del)])],
                                orelse=[])], orelse=list(otherwise))]


class _Rewriter(ast.NodeTransformer):
    def _loop(self, node):
        self.generic_visit(node)
        if is_static_iter(node):
            return node
        names = assigned(node.body + node.orelse)
        if not names:
            return node
        flags = [ast.Assign(targets=[_name(_FLAG + n, ast.Store)], value=ast.Call(
            func=_name(BOUND_NAME), args=[ast.Constant(n), ast.Call(
                func=_name(LOCALS_NAME), args=[], keywords=[])], keywords=[]))
            for n in names]
        node.body = _materialize(names, "iteration") + node.body

        def unset():
            # a variable the loop sets, read before it is set (in the first iteration, or
            # after a loop that ran none), is one an iteration may have set
            return [ast.If(test=ast.UnaryOp(op=ast.Not(), operand=_name(_FLAG + n)),
                           body=[mark_potentially_undefined(n)], orelse=[]) for n in names]
        if isinstance(node, ast.For):  # (its iterable is read before: not so there)
            node.body = unset() + node.body
            after = unset()
            before = []
        else:  # (a while loop's test is read at each iteration's start)
            before, after = unset(), []
        statements = flags + before + _materialize(names, "entry") + [node] + \
            _materialize(names, "exit") + after
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    visit_For = visit_While = _loop


def rewrite(function_node):
    """Materialize the loop-carried variables of a function's syntax tree (see the module's
    docstring). Returns True."""
    _Rewriter().visit(function_node)
    ast.fix_missing_locations(function_node)
    return True
