"""Where the ways out of a loop meet, interpreted tile code types its variables as compiled
code does: a variable that leaves the loop with a type on one way (a ``break``, the end of
the loop) and another type on another (``a = 3.0`` before one ``break``, ``a = 5`` before
the other) is cuTile's ``TileTypeError`` "Type of `a` depends on path taken" where it is read
after the loop, whichever way the loop ended.

The compiler sees every way; the interpreter runs one. The source rewrite (:mod:`.rewrites`)
calls :func:`rewrite`, which follows each loop's body to find, for each variable assigned in
it, what it holds at each ``break``, at each ``continue`` and at the end of the body: a
literal's dtype, a constant whose value is its type (an enum member, a dtype, a string: as
in :mod:`.branch_joins`, two meet only where equal) or ``None``, the value the loop carries at
its head, or a value not known before it runs.
The loop's end gives the value at its head: what the variable held on entry, or what the
body's end and its ``continue`` statements give. Each of these is reached through branches
(the branch variables of :mod:`.branch_joins`), and counts where each of them is decided at
run time or went its way: a branch on a compile-time constant goes one way in compiled code.
A branch that has not run counts as decided at run time where its condition reads a variable
the loop carries; otherwise what it leads to is not known to exist. After the loop,
``__numba_tile_loop_exit(...)`` compares the types that count and the value the loop left
with, and where two differ makes the variable undefined with that message
(:func:`.loop_carried.undefine_on_mismatch`).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     i = 0
...     while True:
...         i += 1
...         if i >= 5:
...             a = 3.0
...             break
...         elif i >= ct.bid(0):
...             a = 5
...             break
...     ct.store(x, (0,), a)
>>> ct.launch(0, (1,), k, (np.zeros(1, np.float32),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of `a` depends on path taken: Tile[float32,()] (on one ...
...
"""

import ast
import copy
import itertools
from typing import NamedTuple

from ..promotion import loose_concrete_dtype
from .branch_joins import BRANCH_PREFIX, JOINS_NAME, UNBOUND, VALUE_NAME, joins
from .loop_carried import LOCALS_NAME, MISMATCH_PREFIX, assigned, carried, constant_key, \
    is_static_iter, mismatch, typed, undefine_on_mismatch

EXIT_NAME = "__numba_tile_loop_exit"
_ENTRY = "__numba_tile_loop_entry_"
_HEAD = "head"  # the value the loop carries at its head
_UNKNOWN = "unknown"  # a value known only when it runs


class _Value(NamedTuple):
    """What a variable may hold at a point of a loop's body: ``kind``, a dtype's name (a
    literal's), :data:`_HEAD`, :data:`_UNKNOWN` or the expression of a constant whose value
    is its type (an enum member, a dtype, a string) or of ``None``, computed after the
    loop; ``where``, the ``(line, column)`` that set it; ``guards``, the ``(branch
    variable, side, run_time)`` of each branch it passed (``run_time``: its condition reads
    a variable the loop carries)."""

    kind: object
    where: tuple
    guards: tuple


class _Body:
    """The values of variable ``name`` at each way out of a loop's body."""

    def __init__(self, name, literals, carried_names):
        self.name, self.literals, self.carried_names = name, literals, carried_names
        self.breaks, self.back_edges = [], []  # (guards of the statement, values)
        self.run_time = {}  # branch variable: its condition reads a variable the loop carries

    def statements(self, statements, values, guards, in_loop=True):
        """The values after ``statements`` (None where they do not go on), reached through
        ``guards``; ``in_loop``: a ``break`` or ``continue`` is this loop's."""
        for statement in statements:
            if isinstance(statement, ast.If):
                values, guards = self._if(statement, values, guards, in_loop)
            else:
                values = self._statement(statement, values, guards, in_loop)
            if values is None:
                return None
        return values

    def _statement(self, statement, values, guards, in_loop):
        if isinstance(statement, (ast.Break, ast.Continue)):
            if in_loop:
                found = self.breaks if isinstance(statement, ast.Break) else self.back_edges
                found.append((guards, values))
            return None
        if isinstance(statement, (ast.Return, ast.Raise)):
            return None
        if isinstance(statement, ast.With):
            return self.statements(statement.body, values, guards, in_loop)
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], ast.Name) and \
                statement.targets[0].id.startswith(BRANCH_PREFIX):
            self.run_time[statement.targets[0].id] = any(
                isinstance(n, ast.Name) and n.id in self.carried_names
                for n in ast.walk(statement.value))
            return values
        if isinstance(statement, (ast.For, ast.While)) or self.name not in assigned([statement]):
            return values  # (an inner loop's values are its own loop's to check)
        kind = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], ast.Name):
            kind = self._literal_dtype(statement.value) or self._constant(statement.value)
        return [_Value(kind or _UNKNOWN, (statement.lineno, statement.col_offset), guards)]

    def _if(self, statement, values, guards, in_loop):
        """The values after an ``if`` and the guards of what follows it (with the side
        that goes on, where the other does not)."""
        test = statement.test
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and \
                test.func.id == JOINS_NAME:
            return values, guards  # (where the sides meet: the types stay)
        branch = test.id if isinstance(test, ast.Name) and \
            test.id.startswith(BRANCH_PREFIX) else None
        sides = []
        for body, side in ((statement.body, True), (statement.orelse, False)):
            taken = ((branch, side, self.run_time.get(branch, False)),) if branch else ()
            after = self.statements(body, values, guards + taken, in_loop)
            if after is not None:
                sides.append((after, taken))
        if not sides:
            return None, guards
        merged = []
        for after, taken in sides:
            for value in after:
                both = len(sides) == 2 and all(_holds(other, value) for other, _ in sides)
                if _holds(values, value) and not both:  # from before, through this side only
                    value = value._replace(guards=value.guards + taken)
                if not _holds(merged, value):
                    merged.append(value)
        return merged, guards + (sides[0][1] if len(sides) == 1 else ())

    def _constant(self, node):
        """``node`` where it may be a constant whose value is its type, or ``None``: a string
        or ``None``, or attributes of a name the loop does not set (``ct.MemoryOrder.WEAK``,
        ``ct.float16``), computed again after the loop (what they give is compared only
        where it is such a constant); else None."""
        if isinstance(node, ast.Constant):
            return node if node.value is None or isinstance(node.value, str) else None
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if root is node or not isinstance(root, ast.Name) or root.id in self.carried_names \
                or root.id in self.literals:
            return None
        return node

    def _literal_dtype(self, node):
        """The name of the dtype of a literal (a number the source rewrite made a name of,
        a bool), else None."""
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign, node = (-1 if isinstance(node.op, ast.USub) else 1), node.operand
        if isinstance(node, ast.Name) and node.id in self.literals:
            value = self.literals[node.id]
        elif isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            value = node.value
        else:
            return None
        try:
            return loose_concrete_dtype(value if sign == 1 else -value).name
        except Exception:  # an integer no dtype holds: its own error, where it is used
            return None


def _holds(values, value):
    return any(value is v for v in values)


def _ends(loop, literals):
    """The loop's ways ``(guards, values)`` out of its body, by name (``exits``: its end and
    its breaks; ``back_edges``: its continues and the end of its body)."""
    forever = isinstance(loop, ast.While) and _always_true(loop.test, literals)
    ends = {}
    names = assigned(loop.body + loop.orelse)
    carried_names = set(names) | set(assigned([loop.target]) if isinstance(loop, ast.For) else ())
    for name in names:
        body = _Body(name, literals, carried_names)
        head = [_Value(_HEAD, (loop.lineno, loop.col_offset), ())]
        end = body.statements(loop.body, head, ())
        if end is not None:
            body.back_edges.append(((), end))
        exits = []
        if not forever:  # the loop's end, through its else
            after = body.statements(loop.orelse, head, (), in_loop=False)
            exits += [((), after)] if after is not None else []
        ends[name] = (exits + body.breaks, body.back_edges)
    return ends


def _always_true(test, literals):
    if isinstance(test, ast.Name) and test.id in literals:
        return bool(literals[test.id])
    return isinstance(test, ast.Constant) and bool(test.value)


def _taken(guards, variables):
    """True where each branch of ``guards`` is decided at run time, or went that side: a
    branch that has not run is decided at run time where its condition reads a variable
    the loop carries (``run_time``), else not known to count."""
    for branch, side, run_time in guards:
        condition = variables.get(branch, UNBOUND)
        if condition is UNBOUND:
            if not run_time:
                return False
        elif not (joins(condition) or bool(condition) == side):
            return False
    return True


def loop_exit(name, variables, where, entry, exits, back_edges):
    """cuTile's message where variable ``name`` (``variables``: the function's ``locals()``)
    leaves the loop at ``where`` with values of two types, else None. ``entry``: what it
    held on entry to the loop (:data:`.branch_joins.UNBOUND` for nothing); ``exits`` and
    ``back_edges``: the loop's ways out and back, each ``(guards, values)`` with values
    ``(kind, line, column, guards)``."""
    if name not in variables:  # (undefined already: its own message stays)
        return variables.get(MISMATCH_PREFIX + name)

    def found(ways, head):
        for guards, values in ways:
            if not _taken(guards, variables):
                continue
            for kind, line, column, value_guards in values:
                if not _taken(value_guards, variables) or kind == _UNKNOWN:
                    continue
                if kind == _HEAD:
                    yield from head
                elif callable(kind):  # (the expression of a constant, :meth:`_Body._constant`)
                    try:
                        value = kind()
                    except Exception:  # (not computed here after all: not compared)
                        continue
                    if value is None or constant_key(value) is not None:
                        yield (line, column), value
                else:
                    yield (line, column), typed(kind)
    head = [] if entry is UNBOUND else [(tuple(where), entry)]
    head += found(back_edges, ())
    candidates = sorted(found(exits, head), key=lambda c: c[0])
    candidates.append((None, variables[name]))  # (the way this run took)
    first = carried(candidates[0][1])
    for _, value in candidates[1:]:
        message = mismatch(name, first, carried(value))
        if message is not None:
            return message
    return None


GLOBALS = {EXIT_NAME: loop_exit}


def _name(identifier, ctx=ast.Load):
    return ast.Name(id=identifier, ctx=ctx())


def _call(function, *args):
    return ast.Call(func=_name(function), args=list(args), keywords=[])


def _encoded(ways):
    """The ways as an expression the rewritten code holds: constants, but a constant's
    expression (a value's ``kind``), a function computing it."""
    if any(isinstance(v.kind, ast.AST) for _, values in ways for v in values):
        return ast.Tuple(ctx=ast.Load(), elts=[ast.Tuple(ctx=ast.Load(), elts=[
            ast.Constant(tuple(guards)), ast.Tuple(ctx=ast.Load(), elts=[ast.Tuple(
                ctx=ast.Load(), elts=[_kind(v.kind), *map(ast.Constant, v.where),
                                      ast.Constant(tuple(v.guards))]) for v in values])])
            for guards, values in ways])
    return ast.Constant(tuple((tuple(guards), tuple((v.kind, *v.where, tuple(v.guards))
                                                    for v in values))
                              for guards, values in ways))


def _kind(kind):
    """A value's kind as the rewritten code holds it: a constant, or ``lambda: EXPRESSION``."""
    if not isinstance(kind, ast.AST):
        return ast.Constant(kind)
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                              defaults=[])
    return ast.Lambda(args=arguments, body=copy.deepcopy(kind))


class _Rewriter(ast.NodeTransformer):
    def __init__(self, literals):
        self.literals = literals
        self.counter = itertools.count()

    def _loop(self, node):
        self.generic_visit(node)
        if is_static_iter(node):
            return node  # (unrolled by the compiler: nothing meets)
        ends = _ends(node, self.literals)
        if not ends:
            return node
        loop = next(self.counter)
        before, after = [], []
        for name, (exits, back_edges) in ends.items():
            entry = f"{_ENTRY}{loop}_{name}"
            before.append(ast.Assign(targets=[_name(entry, ast.Store)], value=_call(
                VALUE_NAME, ast.Constant(name), _call(LOCALS_NAME))))
            after += undefine_on_mismatch(name, _call(
                EXIT_NAME, ast.Constant(name), _call(LOCALS_NAME),
                ast.Constant((node.lineno, node.col_offset)), _name(entry),
                _encoded(exits), _encoded(back_edges)))
        statements = before + [node] + after
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    visit_For = visit_While = _loop


def rewrite(function_node, literals):
    """Check the ways out of each loop of a function's syntax tree, whose literals are
    ``literals`` (the names the source rewrite gave them, to their values; see the
    module's docstring). Returns True."""
    _Rewriter(literals).visit(function_node)
    ast.fix_missing_locations(function_node)
    return True
