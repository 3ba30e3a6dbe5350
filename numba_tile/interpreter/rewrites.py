"""The interpreter's source rewrites, declared once in order, and what each needs from those
before (as :mod:`numba_tile.compiler.frontend.passes` declares the compiler's passes).

Before interpreted tile code runs, each function's syntax tree (a kernel's, a helper's) is
rewritten in place and compiled again (:func:`numba_tile.source.source_code.rewritten_code`,
which keeps the file name and line numbers). The :data:`STEPS`, in order:

0. ``recursion_marks`` (:mod:`.recursion`): the functions the code defines, as written,
   marked for the last step;
1. ``invalid_reads`` (:mod:`.invalid_reads`): a raise of the error of each read of a value
   tile code cannot hold, put before the statements on the way to it; it finds the reads by
   their position in the source as written, and checks the conditions of the ``if``
   statements as written, so it comes first;
2. ``loop_returns`` (:mod:`.loop_returns`): the values returned from inside loops of a
   function that can also end without a return, checked against its ``None``; it knows
   ``static_iter`` loops by their calls as written;
3. ``static_expressions`` (:mod:`numba_tile.source.static_expressions`): each
   ``static_eval``/``static_assert`` call and ``static_iter`` iterable (tuple comprehensions
   first made loops) becomes a call with the values of the local variables it reads; its
   expression is compiled as plain Python, so before any later step changes it;
4. ``conditions`` (:mod:`.conditions`): each test of an ``if``, ``while``, ``assert`` and
   conditional expression checked where it is written (a tile of several elements has no
   truth value), before ``branch_joins`` names it;
5. ``branch_joins`` (:mod:`.branch_joins`): the variables that meet after an ``if`` on a
   run-time condition; it reads the numbers that helpers return, before they are names;
6. ``with_blocks`` (:mod:`.with_blocks`): what each ``with`` enters, checked; its errors
   name the expression by its source text, so before literals become names;
7. ``literals`` (:mod:`.literals`): numeric literals become names of loosely typed
   constants, in the function's table of literals;
8. ``keyword_arguments`` (:mod:`numba_tile.source.keyword_arguments`): a helper's
   ``**kwargs`` converted on entry;
9. ``texts`` (:mod:`.texts`): f-strings of run-time values marked as such, as the
   compiler knows them (after ``static_expressions``, whose f-strings stay Python's);
10. ``tuples`` (:mod:`.tuples`): subscripts, comparisons, ``in`` and unpacking routed through
   cuTile's tuple rules;
11. ``loop_exits`` (:mod:`.loop_exits`): the ways out of each loop compared; it reads the
    table of literals, the branch variables of ``branch_joins`` and the loop bodies before
    ``loop_carried`` adds statements to them;
12. ``loop_carried`` (:mod:`.loop_carried`): the variables each loop carries (not those of
    ``static_iter`` loops, which it knows by the calls ``static_expressions`` made);
13. ``recursion`` (:mod:`.recursion`): a check first in each function marked, that it is
    not called inside itself.

Each :class:`Step` declares the steps it must come after and before; :func:`check_order`
checks the declared order when this module is imported.

>>> from numba_tile.interpreter.rewrites import STEPS
>>> [step.name for step in STEPS][:4]
['recursion_marks', 'invalid_reads', 'loop_returns', 'static_expressions']
"""

from typing import Callable, NamedTuple

from ..errors import TileInternalError
from ..source import keyword_arguments, static_expressions
from ..source.source_code import deep_syntax_trees, rewritten_code
from . import branch_joins, conditions, invalid_reads, literals, loop_carried, loop_exits, \
    loop_returns, recursion, texts, tuples, with_blocks


class Function(NamedTuple):
    """What the steps know of the function being rewritten: its ``code``, the
    ``read_positions`` of its invalid reads (:mod:`.invalid_reads`), and its table of
    ``literals`` (names to loosely typed constants), which ``literals`` fills and the
    rewritten function gets as globals."""

    code: object
    read_positions: tuple
    literals: dict

    @property
    def literal_prefix(self):
        """The start of the names of this function's literals (unique to its code)."""
        return f"__numba_tile_literal_{abs(hash(self.code))}_"


class Step(NamedTuple):
    """A rewrite of a function's syntax tree in place, ``rewrite(node, function)`` with the
    :class:`Function` rewritten; ``after``: the steps whose result it reads, ``before``:
    the steps whose result it must not see."""

    name: str
    rewrite: Callable
    after: tuple = ()
    before: tuple = ()


STEPS = (
    Step("recursion_marks", lambda node, f: recursion.mark(node), before=("invalid_reads",)),
    Step("invalid_reads",
         lambda node, f: invalid_reads.rewrite(node, f.code, f.read_positions),
         before=("static_expressions", "branch_joins")),
    # (it knows static_iter loops by their calls as written)
    Step("loop_returns", lambda node, f: loop_returns.rewrite(node),
         before=("static_expressions",)),
    Step("static_expressions",
         lambda node, f: static_expressions.rewrite(node, f.code.co_filename,
                                                    (f.code, "interpret"),
                                                    also_local=f.code.co_freevars),
         before=("branch_joins", "literals", "tuples")),
    # (the tests as written are read by invalid_reads; static expressions stay plain Python)
    Step("conditions", lambda node, f: conditions.rewrite(node),
         after=("invalid_reads", "static_expressions"), before=("branch_joins",)),
    Step("branch_joins", lambda node, f: branch_joins.rewrite(node), before=("literals",)),
    # (an error names the with's expression by its source text, as the compiler does)
    Step("with_blocks", lambda node, f: with_blocks.check_with_items(node),
         before=("literals",)),
    Step("literals", lambda node, f: literals.rewrite(node, f.literal_prefix, f.literals)),
    Step("keyword_arguments", lambda node, f: keyword_arguments.convert_on_entry(node)),
    Step("texts", lambda node, f: texts.rewrite(node), after=("static_expressions",)),
    Step("tuples", lambda node, f: tuples.rewrite(node)),
    Step("loop_exits", lambda node, f: loop_exits.rewrite(node, f.literals),
         after=("branch_joins", "literals"), before=("loop_carried",)),
    Step("loop_carried", lambda node, f: loop_carried.rewrite(node),
         after=("static_expressions",)),
    Step("recursion", lambda node, f: recursion.rewrite(node), after=("recursion_marks",)),
)


def check_order(steps):
    """Raise ``TileInternalError`` where a step comes before one it needs to follow, or
    after one it must precede.

    >>> from numba_tile.interpreter.rewrites import STEPS, check_order
    >>> check_order(STEPS[::-1])
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileInternalError: The interpreter's rewrite step recursion needs ...
    """
    position = {step.name: index for index, step in enumerate(steps)}
    for index, step in enumerate(steps):
        for name in step.after:
            if position[name] > index:
                raise TileInternalError(f"The interpreter's rewrite step {step.name} needs "
                                        f"{name} before it")
        for name in step.before:
            if position[name] < index:
                raise TileInternalError(f"The interpreter's rewrite step {step.name} needs "
                                        f"{name} after it")


check_order(STEPS)

# the rewritten code of each function (and invalid reads): compiled code, as Python's own
# code objects are cached (nothing of a run is kept)
_cache = {}
# the code of every function (a closure, a lambda) that tile code defines, as rewritten
_MADE_INSIDE = set()


def rewritten(fn, read_positions=()):
    """``(code, literals)`` of ``fn`` with every step applied (``literals``: the table of
    its literals, to be added to its globals), or None without source.
    ``read_positions``: the ``(line, column)`` of each read of a value tile code cannot
    hold, whose error the code raises where the compiler would (:mod:`.invalid_reads`)."""
    key = fn.__code__, read_positions
    if key not in _cache:
        _cache[key] = _rewrite(fn, read_positions)
    return _cache[key]


def _rewrite(fn, read_positions):
    function = Function(fn.__code__, read_positions, {})

    def transform(node):
        for step in STEPS:
            step.rewrite(node, function)
        return True
    with deep_syntax_trees():
        new_code = rewritten_code(fn, transform)
    if new_code is None:
        return None
    _MADE_INSIDE.update(_nested_codes(new_code))
    return new_code, function.literals


def _nested_codes(code):
    for constant in code.co_consts:
        if isinstance(constant, type(code)):
            yield constant
            yield from _nested_codes(constant)


def made_inside_tile_code(value):
    """The name of a function that tile code made when it ran (a closure, a lambda: what
    cuTile cannot call inside ``static_eval``), or None for anything else (a global helper,
    a function captured from outside the kernel).

    >>> from numba_tile.interpreter.rewrites import made_inside_tile_code
    >>> made_inside_tile_code(len) is None
    True
    """
    code = getattr(value, "__code__", None)
    return value.__name__ if code is not None and code in _MADE_INSIDE else None
