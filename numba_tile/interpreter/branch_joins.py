"""Where the two sides of an ``if`` on a run-time condition meet, interpreted tile code types
its variables as compiled code does (:mod:`numba_tile.compiler.typing.joins`): a loosely
typed constant assigned on a side is a run-time scalar of its own dtype (int32, int64 or
uint64 by value, float32, bool_) after the ``if``, as is the value of a conditional
expression (``v = 1.0 if c else 3.0`` is a float32 scalar, so ``t16 + v`` is float32). An
``if`` on a compile-time constant is decided before the kernel runs in cuTile: nothing meets
there, and constants stay constants.

A variable meets itself where both sides go on after the ``if`` (neither leaves with
``break``, ``continue``, ``return``) and both give it a value, or one does and it had one
before the ``if``. Where the paths that meet do not all set it, it is undefined after the
``if``; where they set it to constants of two dtypes (``a = 1`` and ``a = 2.0``, or ``a = 1``
before the ``if`` and ``a = 2.0`` on one side), its type depends on the path: reading it
then is cuTile's error, ``TileTypeError`` "Use of potentially undefined variable `a`" or
"Type of `a` depends on path taken", as in compiled code
(:mod:`numba_tile.compiler.frontend.defined_variables`, :func:`.loop_carried.undefine`). The
value of the side that ran is also compared with the other side's where that is cheap to
compute (a name, an attribute, a constant: :func:`path_mismatch`): enum members, dtypes
and strings, whose value is their type in cuTile, meet only where equal
(``ct.MemoryOrder.RELAXED`` on one side, ``ct.MemoryOrder.WEAK`` on the other is the error),
a loose constant meets a scalar by its own dtype (``0`` and a float32 argument do not
meet), and ``None`` meets only ``None`` (where the side that ran gives ``None`` or a
constant, the other side's value is computed where that has no effect, calls of tile
operations that write nothing included, and a nested ``if`` there checked as its own join:
:mod:`.other_sides`). The else side's type is named first, as in cuTile. A helper whose
returns on the two sides of a run-time ``if`` are constants of different dtypes (``return
3`` on one, ``return 5.0`` on the other, or after the ``if``) raises "Type of return value
depends on path taken" whichever side runs, as the compiler does.

The interpreter's source rewrite (:mod:`.rewrites`) calls :func:`rewrite` before numbers
become loosely typed constants. ``if C:`` becomes ``__numba_tile_branch_N = C`` and the
``if`` on it, followed by ``if __numba_tile_joins(__numba_tile_branch_N): j =
__numba_tile_carried(j)`` for each variable ``j`` that meets there; ``A if C else B`` becomes
``__numba_tile_choose(__numba_tile_branch_N := C, A if __numba_tile_branch_N else B)`` (but
inside comprehensions, where ``:=`` may not bind).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     v = 1.0 if ct.bid(0) == 0 else 3.0
...     r = ct.full((1,), 0, ct.float16) + v  # float16 and a float32 scalar: float32
...     ct.static_assert(r.dtype == ct.float32)
...     ct.store(x, (0,), r)
>>> x = np.zeros(1, np.float32)
>>> ct.launch(0, (1,), k, (x,))
>>> x
array([1.], dtype=float32)
"""

import ast
import enum
import itertools

import numpy as np

from .. import dtypes as d
from ..errors import TileTypeError
from ..host.tile import Tile
from ..promotion import loose_concrete_dtype
from . import other_sides
from .loop_carried import BOUND_NAME, LOCALS_NAME, carried, constant_key, \
    mark_potentially_undefined, mismatch, undefine, undefine_on_mismatch
from .other_sides import PathMismatch, side_cheap, side_thunk, thunk

JOINS_NAME = "__numba_tile_joins"
CHOOSE_NAME = "__numba_tile_choose"
ERROR_NAME = "__numba_tile_type_error"
JOINED_NAME = "__numba_tile_joined"
VALUE_NAME = "__numba_tile_value"
UNBOUND_NAME = "__numba_tile_unbound"
OLD_MISMATCH_NAME = "__numba_tile_old_mismatch"
PATH_MISMATCH_NAME = "__numba_tile_path_mismatch"
#: the start of the name of the variable holding the condition of an ``if``
BRANCH_PREFIX = "__numba_tile_branch_"
_OLD = "__numba_tile_old_"
_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def joins(condition):
    """True where the sides of an ``if`` on ``condition`` meet at run time: a tile that is
    not a compile-time constant (a loosely typed or Python value is decided)."""
    return isinstance(condition, Tile) and not condition.is_compile_time


def joined(value, taken, if_true, if_false):
    """``value``, a variable's on the side that ran (``taken``: the condition), as it is
    where the sides meet: a loosely typed constant stays one where the other side gives the
    same constant (``if_true``/``if_false``: a function computing the other side's value
    where the side that ran is the true/false one, or None where that is not a constant
    known here), as in cuTile; else :func:`carried`."""
    other = if_true if taken else if_false
    if other is not None and _is_loose(value):
        try:
            other_value = other()
        except Exception:  # (not a constant here after all)
            other_value = None
        if _is_loose(other_value) and type(other_value) is type(value) and \
                other_value == value:
            return value
    return carried(value)


def choose(condition, value, if_true=None, if_false=None, cheap=(False, False)):
    """``value``, that of a conditional expression on ``condition``, as it is where the sides
    meet (:func:`joins`, :func:`joined`); cuTile's ``TileTypeError`` where the other side's
    value has another type (:func:`path_mismatch`)."""
    if not joins(condition):
        return value
    message = path_mismatch(None, value, condition, if_true, if_false, cheap)
    if message is not None:
        raise TileTypeError(message)
    return joined(value, condition, if_true, if_false)


def path_mismatch(name, value, taken, if_true, if_false, cheap=(False, False)):
    """cuTile's message where variable ``name`` holds ``value`` on the side of a run-time
    ``if`` that ran (``taken``: the condition) and the other side gives it a value of another
    type (``if_true``/``if_false`` as for :func:`joined`), else None: constants whose value
    is their type (enum members, dtypes, strings) meet only where equal, loosely typed
    constants meet as their own dtype, tiles and scalars by dtype and shape, ``None`` only
    ``None`` (it is a type of its own in cuTile). The other side's value is computed where
    it is cheap (``cheap``: the other side's expression is a name, an attribute or a
    constant, for the true and the false side) or where ``value`` is a constant or ``None``.
    The else side's type comes first in the message, as in cuTile.

    >>> import numba_tile as ct
    >>> from numba_tile.interpreter.branch_joins import path_mismatch
    >>> # "a" ran; "b": the else side
    >>> print(path_mismatch("s", "a", True, lambda: "b", None))  # doctest: +NORMALIZE_WHITESPACE
    Type of `s` depends on path taken: <string constant 'b'> (on one path) vs. <string
    constant 'a'> (on another)
    """
    other = if_true if taken else if_false
    if other is None or not (cheap[0 if taken else 1] or value is None or _is_loose(value) or
                             constant_key(value) is not None or
                             getattr(value, "is_constant", False)):
        return None
    try:
        with np.errstate(all="ignore"):
            other_value = other()
    except PathMismatch as error:  # a nested ``if`` of the other side: its error first
        return error.message
    except Exception:  # (not computed here after all: nothing to compare)
        return None
    if any(v is UNBOUND or isinstance(v, (np.generic, tuple)) for v in (value, other_value)):
        return None  # (NumPy scalars, tuples: not compared)
    first, second = (other_value, value) if taken else (value, other_value)
    try:
        first, second = carried(first), carried(second)
    except Exception:  # an integer no dtype holds: its own error, where it is used
        return None
    return mismatch(name, first, second)


def value_of(name, variables):
    """What variable ``name`` holds (``variables``: its ``locals()``), or :data:`UNBOUND`."""
    return variables.get(name, UNBOUND)


def _is_loose(value):
    return isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum)


def old_constant_mismatch(name, old, dtype, old_first=True):
    """cuTile's message where variable ``name`` held a loosely typed constant ``old`` before
    an ``if`` whose one side sets it to a constant of another dtype (``dtype``, its name),
    else None. ``old_first``: the side that sets it is the true one, so that the value
    before (the else side's) is named first."""
    if not _is_loose(old):
        return None
    try:
        first = loose_concrete_dtype(old)
    except Exception:  # an integer no dtype holds: its own error, where it is used
        return None
    if not _differ(first, d.to_dtype(dtype)):
        return None
    return _mismatch(f"`{name}`", *((first, dtype) if old_first else (dtype, first)))


def nested(name, if_true, if_false):
    """The value a nested ``if`` of the other side gives variable ``name`` where its sides
    meet (``if_true``/``if_false``: functions computing each side's value);
    :class:`~.other_sides.PathMismatch` where the two have different types (the false
    side's named first, as cuTile does). :mod:`.other_sides` puts its calls."""
    true_value = if_true()
    message = path_mismatch(name, true_value, True, if_false, None, (True, True))
    if message is not None:
        raise PathMismatch(message)
    return joined(true_value, True, if_false, None)


#: what :func:`value_of` gives for a variable without a value
UNBOUND = object()
GLOBALS = {JOINS_NAME: joins, CHOOSE_NAME: choose, ERROR_NAME: TileTypeError,
           JOINED_NAME: joined, VALUE_NAME: value_of, UNBOUND_NAME: UNBOUND,
           OLD_MISMATCH_NAME: old_constant_mismatch, PATH_MISMATCH_NAME: path_mismatch,
           other_sides.NESTED_NAME: nested, **other_sides.GLOBALS}


def _assigned(statements):
    """The names the statements assign, nested blocks included (not those of nested
    scopes)."""
    names = []

    def visit(node):
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                node.id not in names and not node.id.startswith("__numba_tile"):
            names.append(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)
    for statement in statements:
        visit(statement)
    return names


def _goes_on(statements):
    """True where running the statements can reach the statement after them (their last
    one does not leave with return, raise, break or continue)."""
    return not statements or not isinstance(statements[-1], _EXITS)


def _constant_dtype(node):
    """The dtype a returned expression has where it is a number or bool literal (its own,
    as a loosely typed constant takes where paths meet), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if not isinstance(node, ast.Constant) or not isinstance(node.value, (bool, int, float)):
        return None
    value = node.value if isinstance(node.value, bool) else sign * node.value
    try:
        return loose_concrete_dtype(value)
    except Exception:  # an integer no dtype holds: its own error, where it is used
        return None


def _returned(statements, after):
    """The dtype a side returns (its last statement, or where it goes on, the first
    ``return`` of the statements ``after`` the ``if``) where that is a constant's, else
    None."""
    if statements and isinstance(statements[-1], ast.Return):
        final = statements[-1]
    elif _goes_on(statements):
        final = next((s for s in after if isinstance(s, ast.Return)), None)
        if final is None or any(isinstance(s, _EXITS + (ast.If, ast.For, ast.While))
                                for s in after[:after.index(final)]):
            return None
    else:
        return None
    return None if final.value is None else _constant_dtype(final.value)


def _name(identifier, ctx=ast.Load):
    return ast.Name(id=identifier, ctx=ctx())


def _call(function, *args):
    return ast.Call(func=_name(function), args=list(args), keywords=[])


def _bound(name):
    return _call(BOUND_NAME, ast.Constant(name), _call(LOCALS_NAME))


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.counter = itertools.count()
        self.made = set()  # the ifs this rewrite made (left as they are)
        self.in_comprehension = False

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if self.in_comprehension:  # (where := may not bind; no join is made there)
            return node
        branch = f"{BRANCH_PREFIX}{next(self.counter)}"
        test = ast.NamedExpr(target=_name(branch, ast.Store), value=node.test)
        # (its truth is taken there: an error marks the condition, as compiled)
        node.test = ast.copy_location(_name(branch), node.test)
        # (each side's constant, to compare the value with: the other side's)
        return ast.copy_location(_call(CHOOSE_NAME, test, node, thunk(node.orelse, ()),
                                       thunk(node.body, ()), _cheap(node.orelse, node.body)),
                                 node)

    def _comprehension(self, node):
        outer, self.in_comprehension = self.in_comprehension, True
        try:
            return self.generic_visit(node)
        finally:
            self.in_comprehension = outer

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self._statements(value))
        return super().generic_visit(node)

    def _statements(self, statements):
        result = []
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.If) and id(statement) not in self.made:
                result.extend(self._if(statement, statements[index + 1:]))
            else:
                result.append(statement)
        return result

    def _if(self, node, after):
        index = next(self.counter)
        branch = f"{BRANCH_PREFIX}{index}"
        # (each if keeps its own: a nested if's must not replace its enclosing if's)
        old = f"{_OLD}{index}_"
        test = ast.Assign(targets=[_name(branch, ast.Store)], value=node.test)
        node.test = ast.copy_location(_name(branch), node.test)
        statements = [test]
        body_on, else_on = _goes_on(node.body), _goes_on(node.orelse)
        body_names = _assigned(node.body) if body_on else []
        else_names = _assigned(node.orelse) if else_on else []
        both = [n for n in body_names if n in else_names]
        # a variable set on one side only meets the value it had before, if any (where the
        # other side goes on: where it leaves, nothing meets)
        one = [n for n in body_names + else_names if n not in both] if body_on and else_on \
            else []
        for name in one:
            statements.append(ast.Assign(targets=[_name(old + name, ast.Store)],
                                         value=_call(VALUE_NAME, ast.Constant(name),
                                                     _call(LOCALS_NAME))))
        mismatch = self._return_mismatch(node, after)
        if mismatch is not None:
            statements.append(ast.If(test=_call(JOINS_NAME, _name(branch)), body=[ast.Raise(
                exc=_call(ERROR_NAME, ast.Constant(mismatch)), cause=None)], orelse=[]))
        statements.append(node)
        joined = []
        changed = set(body_names + else_names)
        for name in both + one:
            # the value on the other side, to compare with: what it sets, or what was before
            sides = [side_thunk(statements_, name, changed, _assigned) if name in names
                     else _old_value(old + name) for statements_, names in
                     ((node.orelse, else_names), (node.body, body_names))]
            # (a side may leave it unbound: set in a nested branch only)
            take = [ast.Assign(targets=[_name(name, ast.Store)], value=_call(
                JOINED_NAME, _name(name), _name(branch), *sides))]
            # values of two types (the other side's computed where cheap): reading the
            # variable after is the error
            cheap = tuple(side_cheap(statements_, name, _assigned) if name in names else True
                          for statements_, names in ((node.orelse, else_names),
                                                     (node.body, body_names)))
            take = undefine_on_mismatch(name, _call(
                PATH_MISMATCH_NAME, ast.Constant(name), _name(name), _name(branch), *sides,
                ast.Constant(cheap)), take)
            if name in one:  # set on one side only, and not before: undefined after
                in_body = name in body_names
                dtype = _assigned_dtype(node.body if in_body else node.orelse, name)
                take = [ast.If(test=ast.Compare(left=_name(old + name), ops=[ast.IsNot()],
                                                comparators=[_name(UNBOUND_NAME)]),
                               body=_checked_against_old(name, old + name, dtype, take,
                                                         in_body),
                               orelse=[mark_potentially_undefined(name),
                                       ast.Delete(targets=[_name(name, ast.Del)])])]
            else:
                dtypes = _assigned_dtype(node.body, name), _assigned_dtype(node.orelse, name)
                if None not in dtypes and _differ(*dtypes):
                    # constants of two dtypes: reading the variable after is the error (the
                    # else side's named first, as cuTile does)
                    take = undefine(name, _mismatch(f"`{name}`", dtypes[1], dtypes[0]))
            # (unset on the side that ran: the other sets it)
            joined.append(ast.If(test=_bound(name), body=take,
                                 orelse=[mark_potentially_undefined(name)]))
        if joined:
            statements.append(ast.If(test=_call(JOINS_NAME, _name(branch)), body=joined,
                                     orelse=[]))
        for statement in statements:
            ast.copy_location(statement, node)
            if statement is not node:  # (the test's assignment holds no statement)
                self.made.update(id(made) for made in ast.walk(statement)
                                 if isinstance(made, ast.If))
        return statements

    @staticmethod
    def _return_mismatch(node, after):
        """cuTile's message where the two sides return constants of different dtypes."""
        first, second = _returned(node.body, after), _returned(node.orelse, after)
        if first is None or second is None or first is second:
            return None
        return _mismatch("return value", first, second)


def _checked_against_old(name, old_name, dtype, take, in_body):
    """The statements ``take`` (the join of a variable set on one side only, the true one
    where ``in_body``), after a check that the constant of ``dtype`` the side sets and the
    constant the variable held before (kept in ``old_name``) have one dtype (else the
    variable is undefined, with that error)."""
    if dtype is None:
        return take
    return undefine_on_mismatch(name, _call(OLD_MISMATCH_NAME, ast.Constant(name),
                                            _name(old_name), ast.Constant(str(dtype)),
                                            ast.Constant(in_body)),
                                take)


def _differ(first, second):
    """Whether loosely typed constants of dtypes ``first`` and ``second`` cannot meet (two
    integers of two widths do not either: cuTile does not widen at a join)."""
    return first is not second


def _mismatch(what, first, second):
    """cuTile's message where ``what`` has a constant of dtype ``first`` on one path and of
    dtype ``second`` on another."""
    return f"Type of {what} depends on path taken: Tile[{first},()] (on one path) vs. " \
           f"Tile[{second},()] (on another)"


def _cheap(if_true, if_false):
    """``(cheap, cheap)``, a constant: whether the value of the other side is cheap to compute
    where the true side ran (``if_true``: the false side's expression) and where the false
    side did (names, attributes, constants: no arithmetic on tiles)."""
    return ast.Constant((other_sides.cheap(if_true), other_sides.cheap(if_false)))


def _old_value(old_name):
    """``lambda: OLD``: the value a variable had before the ``if`` (kept in ``old_name``)."""
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                              defaults=[])
    return ast.Lambda(args=arguments, body=_name(old_name))


def _assigned_dtype(statements, name):
    """The dtype of the constant the last statement of a side that sets ``name`` gives it
    (``name = 2.0``), else None."""
    last = next((s for s in reversed(statements) if name in _assigned([s])), None)
    if isinstance(last, ast.Assign) and len(last.targets) == 1 and \
            isinstance(last.targets[0], ast.Name):
        return _constant_dtype(last.value)
    return None


def rewrite(function_node):
    """Rewrite the ``if`` statements and conditional expressions of a function's syntax tree
    (see the module's docstring). Returns True."""
    _Rewriter().visit(function_node)
    ast.fix_missing_locations(function_node)
    return True
