"""Numeric literals in interpreted tile code behave as scalars: ``a = 0; a.dtype`` is int32.

A kernel's source is parsed once and every int/float literal is replaced by a reference to a
:class:`~numba_tile.host.scalars.LooseInt`/:class:`~numba_tile.host.scalars.LooseFloat`
constant: Python numbers that also carry ``dtype``, ``shape`` and ``ndim`` (seed 000, "Tiles
and Scalars"). Arithmetic among them keeps the type,
so folded constants carry a dtype too. Where the source is not available (a kernel made with
``exec``), literals stay plain Python numbers.
"""

import ast
import itertools

from ..host.scalars import LooseFloat, LooseInt, loose
from ..source import keyword_arguments, static_expressions
from ..source.source_code import closure_for, rewritten_code
from . import tuples, with_blocks


class _LiteralRewriter(ast.NodeTransformer):
    """Replace int/float literals by names bound to Loose constants in ``table``."""

    def __init__(self, prefix, table):
        self.prefix = prefix
        self.table = table
        self.counter = itertools.count()

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return node
        name = f"{self.prefix}{next(self.counter)}"
        self.table[name] = loose(value)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    def visit_JoinedStr(self, node):  # f-string parts are strings; their format specs too
        node.values = [self.visit(v) if isinstance(v, ast.FormattedValue) else v
                       for v in node.values]
        return node

    def visit_FormattedValue(self, node):
        node.value = self.visit(node.value)
        return node


_cache = {}


def literal_typed_code(fn, read_positions=()):
    """``(code, literal_table)`` for ``fn`` with typed literals (and its ``static_eval``
    calls rewritten, see :mod:`numba_tile.static_expressions`), or None without source.
    ``read_positions``: the ``(line, column)`` of each read of a value tile code cannot
    hold, whose error the code raises where the compiler would (:mod:`.invalid_reads`)."""
    key = fn.__code__, read_positions
    if key in _cache:
        return _cache[key]
    _cache[key] = result = _rewrite(fn, read_positions)
    return result


def _rewrite(fn, read_positions):
    from . import branch_joins, invalid_reads, loop_carried, loop_exits  # (cycle: to be
    # declared as steps)
    code = fn.__code__
    table = {}
    prefix = f"__numba_tile_literal_{abs(hash(code))}_"

    def transform(node):
        invalid_reads.rewrite(node, code, read_positions)
        static_expressions.rewrite(node, code.co_filename, (code, "interpret"),
                                   also_local=code.co_freevars)
        branch_joins.rewrite(node)  # (it reads the numbers returned: before they are names)
        _LiteralRewriter(prefix, table).visit(node)
        keyword_arguments.convert_on_entry(node)
        with_blocks.check_with_items(node)
        tuples.rewrite(node)
        loop_exits.rewrite(node, table)  # (it reads the loop bodies before loop_carried's
        # statements)
        loop_carried.rewrite(node)
        return True
    new_code = rewritten_code(fn, transform)
    if new_code is None:
        return None
    _MADE_INSIDE.update(_nested_codes(new_code))
    return new_code, table


# the code of every function (a closure, a lambda) that tile code defines, as rewritten: a
# cache of compiled code as _cache is (nothing of a run is kept)
_MADE_INSIDE = set()


def _nested_codes(code):
    for constant in code.co_consts:
        if isinstance(constant, type(code)):
            yield constant
            yield from _nested_codes(constant)


def made_inside_tile_code(value):
    """The name of a function that tile code made when it ran (a closure, a lambda: what
    cuTile cannot call inside ``static_eval``), or None for anything else (a global helper,
    a function captured from outside the kernel).

    >>> from numba_tile.interpreter.literals import made_inside_tile_code
    >>> made_inside_tile_code(len) is None
    True
    """
    code = getattr(value, "__code__", None)
    return value.__name__ if code is not None and code in _MADE_INSIDE else None


__all__ = ["LooseInt", "LooseFloat", "loose", "literal_typed_code", "closure_for",
           "made_inside_tile_code"]
