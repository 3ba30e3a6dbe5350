"""Where ``ct.static_iter`` may appear in a function's syntax tree: as the iterable of a
``for`` whose body neither breaks nor continues (its copies are unrolled: there is no loop to
leave), or of a tuple comprehension, called by name.

Both the kernel's syntax checks (:mod:`numba_tile.rules.syntax`) and the source rewrite of
every function (:mod:`.static_expressions`) need the misuses, so they are found here, below
both.
"""

import ast

from ..errors import TileSyntaxError, TileUnsupportedFeatureError
from .comprehensions import static_construct


def static_iter_problems(statements):
    """``(error class, message, node, culprit)`` for each misuse of ``static_iter`` in
    ``statements``: used other than as the iterable of a ``for`` (or of a tuple
    comprehension), not called by name, or a ``for`` over it whose body breaks, continues or
    returns (its copies are unrolled: there is no loop to leave). ``node`` is where the
    error is, ``culprit`` the expression to evaluate as the error (the ``for``'s iterable
    for what its body does). The kernel's syntax checks
    (:mod:`numba_tile.rules.syntax`) raise the first; the rewrite of each function's source
    (:mod:`.static_expressions`) puts the errors of helpers there.

    >>> import ast
    >>> from numba_tile.source.static_iter_uses import static_iter_problems
    >>> tree = ast.parse("for i in ct.static_iter(range(3)):\\n    break")
    >>> [problem[1] for problem in static_iter_problems(tree.body)]
    ['Break in a for loop with static_iter() is not supported']
    """
    problems, allowed, called = [], set(), set()
    nodes = list(_static_iter_walk(statements))
    for node in nodes:
        if isinstance(node, ast.For) and static_construct(node.iter) == "static_iter":
            allowed.add(id(node.iter))
            problems.extend(p + (node.iter,) for p in _loop_exits(node.body, inner_loop=False))
        elif isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            allowed.update(id(g.iter) for g in node.generators)
    for node in nodes:
        if static_construct(node) == "static_iter":
            called.add(id(node.func))
            if id(node) not in allowed:
                problems.append((TileSyntaxError, "static_iter() is only allowed as iterable "
                                                  "in a `for` loop", node, node))
        elif _names(node) == "static_iter" and id(node) not in called:
            problems.append((TileSyntaxError, "static_iter() must be used directly by name",
                             node, node))
    return problems


def _static_iter_walk(statements):
    """Every node below ``statements``, a node before its children; the arguments of the
    static constructs (plain Python) are not walked."""
    pending = list(reversed(statements))
    while pending:
        node = pending.pop()
        yield node
        children = [node.func] if static_construct(node) else list(ast.iter_child_nodes(node))
        pending.extend(reversed(children))


STATIC_ITER_RETURN = "Returning from a for loop with static_iter() is not supported"
# (cuTile 1.7 compiles it; numba_tile's unrolling leaves a body only through its end)
STATIC_ITER_INNER_RETURN = "Returning from a loop inside a for loop with static_iter() is " \
    "not supported yet"


def _loop_exits(statements, inner_loop):
    """The ``break``, ``continue`` and ``return`` statements that would leave a
    ``static_iter`` loop's body (a loop inside it keeps its ``break`` and ``continue``)."""
    for statement in statements:
        if isinstance(statement, (ast.Break, ast.Continue)) and not inner_loop:
            what = "Break" if isinstance(statement, ast.Break) else "Continue"
            yield (TileSyntaxError, f"{what} in a for loop with static_iter() is not "
                                    f"supported", statement)
        if isinstance(statement, ast.Return):
            yield (TileSyntaxError, STATIC_ITER_RETURN, statement) if not inner_loop else \
                (TileUnsupportedFeatureError, STATIC_ITER_INNER_RETURN, statement)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        # (a static_iter loop inside is unrolled too: no loop to return from)
        loop = isinstance(statement, (ast.For, ast.While, ast.AsyncFor)) and not (
            isinstance(statement, ast.For) and static_construct(statement.iter) == "static_iter")
        for field in ("body", "orelse", "finalbody"):
            yield from _loop_exits(getattr(statement, field, []), inner_loop or loop and
                                   field == "body")
        for handler in getattr(statement, "handlers", []):
            yield from _loop_exits(handler.body, inner_loop)
        for case in getattr(statement, "cases", []):
            yield from _loop_exits(case.body, inner_loop)


def _names(node):
    return node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else None
