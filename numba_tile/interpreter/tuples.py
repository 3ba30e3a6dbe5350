"""Tuples of interpreted tile code keep cuTile's rules (:mod:`numba_tile.rules.tuples`), which
Python's own tuples do not: a constant index, ``==``/``!=`` of scalar elements only (no
ordering), ``in`` over scalars that stops at a constant match, no item assignment (nor on
tiles).

The interpreter's source rewrite (:mod:`.rewrites`) calls :func:`rewrite`: ``a[i]`` becomes
``__numba_tile_getitem(a, i)``, the target of ``a[i] = v`` becomes
``__numba_tile_store_target(a)[i]``, a comparison ``a == b`` (one operator) becomes
``__numba_tile_compare("==", a, b)``, ``a is b`` becomes ``__numba_tile_identity(False,
a, b)``, ``x in t`` becomes ``__numba_tile_contains(x, t, False)``, ``*t`` unpacks
``__numba_tile_starred(t)`` (a tuple, or the Tile error) and ``a, b = t`` unpacks
``__numba_tile_unpack(t, (None, None))`` (as many items as targets, or the Tile error);
``a % b`` becomes ``__numba_tile_modulo(a, b)`` (a string formatted with ``%`` is the
compiler's error for a string operand).
Values other than tuples go on to Python's operators; ``is`` compares a tile only with None
(:func:`numba_tile.rules.operators.check_identity`).

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     t = (1, 2, 3)
...     ct.scatter(x, 0, t[ct.bid(0)])
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Tuple indices must be constant, got a run-time int32 scalar
...
"""

import ast
import builtins
import enum
import operator

from ..dtypes import DType
from ..errors import TileTypeError
from ..host.context import in_static_evaluation
from ..host.tile import Tile
from ..rules import enums as enum_rules
from ..rules import operators as operator_rules
from ..rules import tuples as rules
from ..rules.core import as_operand, is_python_number, type_name
from ..rules.objects import MEMORY_KINDS, ObjectTuple, TileObject, operator_error
from ..rules.shapes import not_subscriptable

GETITEM_NAME = "__numba_tile_getitem"
STORE_NAME = "__numba_tile_store_target"
AUGMENTED_NAME = "__numba_tile_augmented_target"
COMPARE_NAME = "__numba_tile_compare"
CONTAINS_NAME = "__numba_tile_contains"
IDENTITY_NAME = "__numba_tile_identity"
SLICE_NAME = "__numba_tile_slice"
STARRED_NAME = "__numba_tile_starred"
UNPACK_NAME = "__numba_tile_unpack"
MODULO_NAME = "__numba_tile_modulo"
INVERT_NAME = "__numba_tile_invert"

_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
            ast.GtE: ">="}
_OPERATORS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
              ">": operator.gt, ">=": operator.ge}


class ArgumentList(ObjectTuple, TileObject):
    """A list argument of a kernel: unlike a tuple, it may be indexed at run time
    (``arrays[i]`` in a ``range`` loop)."""

    __slots__ = ()
    object_kind = "List"


def getitem(value, index):
    """``value[index]``; a tuple's index must be a constant integer or a slice (a list
    argument's may be a run-time integer)."""
    if type(value) in (tuple, ObjectTuple) or isinstance(value, ArgumentList):
        rules.check_index(index, run_time=isinstance(value, ArgumentList))
        # (a plain tuple's index out of range: the Tile error, as an ObjectTuple raises it)
        return ObjectTuple.__getitem__(value, index)
    if value is None or isinstance(value, DType) or is_python_number(value):
        raise not_subscriptable(value, index)  # (Python's TypeError, in cuTile's words)
    return value[index]


def store_target(value):
    """``value`` where ``value[i] = v`` may assign its item, else the Tile error."""
    error = rules.immutable_error(value)
    if error is None and not hasattr(type(value), "__setitem__"):
        error = rules.no_item_assignment(type_name(value))
    if error is not None:
        raise error
    return value


def augmented_target(value, index):
    """``value`` where ``value[index] += v`` may read and then assign its item: the read's
    Tile error first, as Python reads it first (and the compiler types the read first)."""
    getitem(value, index)
    return store_target(value)


def starred(value):
    """``value`` where ``*value`` unpacks it (a tuple), else the Tile error."""
    error = rules.starred_error(value)
    if error is not None:
        raise error
    return value


def unpack(value, structure):
    """``value`` where ``a, (b, c) = value`` unpacks it into targets of ``structure`` (for
    each target None, or the structure of a nested one), else cuTile's ``TileValueError``;
    what is no tuple is left to Python (a tile says it cannot be iterated)."""
    if isinstance(value, tuple):
        error = rules.unpack_error(len(structure), len(value))
        if error is not None:
            raise error
        for item, inner in zip(value, structure):
            if inner is not None:
                unpack(item, inner)
    elif value is None or is_python_number(value) or getattr(value, "shape", None) == ():
        raise rules.not_a_tuple_to_unpack(type_name(value))
    return value


def invert(value):
    """``~value``: of a bool constant, cuTile's error (Python's gives an int), but in a static
    expression, which is plain Python."""
    if isinstance(value, bool) and not in_static_evaluation():
        raise TileTypeError(operator_rules.BOOL_INVERT)
    return ~value


def modulo(left, right):
    """``left % right``: Python's ``%`` formatting of a string is no op of tile code (the
    compiler's error for a string operand), the rest Python's operator."""
    if isinstance(left, str):
        as_operand(left, "the left operand")
    return left % right


def compare(symbol, left, right):
    """``left <symbol> right``; where one is a tuple, element by element (enum members are
    not ordered, :mod:`numba_tile.rules.enums`)."""
    for value in (left, right):  # an array is memory: no comparison of values
        if getattr(type(value), "object_kind", None) in MEMORY_KINDS:
            raise operator_error(symbol, type(value).object_kind)
    if not (isinstance(left, tuple) or isinstance(right, tuple)):
        if isinstance(left, enum.Enum) or isinstance(right, enum.Enum):
            enum_rules.check_comparison(symbol, left, right)
        if isinstance(right, Tile) and not isinstance(left, Tile):
            # (Python would ask the tile, reflected: None == t is an error of its left side)
            as_operand(left, "the left operand")
        return _OPERATORS[symbol](left, right)
    found = rules.comparison(symbol, left, right)
    if isinstance(found, bool):
        return found
    equal = _all_equal(found, left, right)
    return equal if symbol == "==" else _negated(equal)


def identity(negated, left, right):
    """``left is right`` (``is not`` where ``negated``), as :mod:`numba_tile.rules.operators`
    allows it."""
    operator_rules.check_identity("is not" if negated else "is", left, right)
    return (left is not right) if negated else (left is right)


def contains(needle, container, negated):
    """``needle in container`` (``not in`` where ``negated``); over a tuple, item by item."""
    if not isinstance(container, tuple):
        found = needle in container
        return not found if negated else found
    found = rules.contains(needle, container)
    if not isinstance(found, bool):
        any_equal = None
        for equalities in found:
            equal = _all_equal(equalities, needle, container)
            any_equal = equal if any_equal is None else any_equal | equal
        found = any_equal
    return _negated(found) if negated else found


def _all_equal(equalities, left, right):
    result = None
    for left_path, right_path in equalities:
        equal = _at(left, left_path) == _at(right, right_path)
        result = equal if result is None else result & equal
    return result


def _negated(value):
    return not value if isinstance(value, bool) else value == False  # noqa: E712 (a tile)


def _at(value, path):
    for index in path:
        value = value[index]
    return value


GLOBALS = {GETITEM_NAME: getitem, STORE_NAME: store_target, AUGMENTED_NAME: augmented_target,
           COMPARE_NAME: compare,
           CONTAINS_NAME: contains, IDENTITY_NAME: identity, SLICE_NAME: builtins.slice,
           STARRED_NAME: starred, UNPACK_NAME: unpack, MODULO_NAME: modulo,
           INVERT_NAME: invert}


class _Rewriter(ast.NodeTransformer):
    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return _call(GETITEM_NAME, [node.value, _as_expression(node.slice)], node)
        node.value = _call(STORE_NAME, [node.value], node.value)
        return node

    def visit_AugAssign(self, node):
        if isinstance(node.target, ast.Subscript):  # (its item is read before it is set)
            node.target.value = self.visit(node.target.value)
            node.target.slice = self.visit(node.target.slice)
            node.value = self.visit(node.value)
            node.target.value = _call(AUGMENTED_NAME, [node.target.value,
                                                       _as_expression(node.target.slice)],
                                      node.target.value)
            return node
        self.generic_visit(node)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        structure = _structure(node.targets[0]) if len(node.targets) == 1 else None
        if structure is not None:  # (an error marks the targets, as Python's own does)
            node.value = _call(UNPACK_NAME, [node.value, ast.Constant(structure)],
                               node.targets[0])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        for argument in node.args:  # f(*t): an error marks the call, as compiled
            if isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Call) and \
                    getattr(argument.value.func, "id", None) == STARRED_NAME:
                ast.copy_location(argument.value, node)
        return node

    def visit_Starred(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):  # f(*t), (1, *t); not a, *rest = t
            node.value = _call(STARRED_NAME, [node.value], node.value)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod):
            return _call(MODULO_NAME, [node.left, node.right], node)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Invert):
            return _call(INVERT_NAME, [node.operand], node)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        op, right = node.ops[0], node.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)):
            return _call(CONTAINS_NAME, [node.left, right,
                                         ast.Constant(isinstance(op, ast.NotIn))], node)
        symbol = _SYMBOLS.get(type(op))
        if symbol is None:  # is, is not (but the rewrite's own tests of its names)
            if isinstance(node.left, ast.Name) and node.left.id.startswith("__numba_tile"):
                return node
            return _call(IDENTITY_NAME, [ast.Constant(isinstance(op, ast.IsNot)), node.left,
                                         right], node)
        return _call(COMPARE_NAME, [ast.Constant(symbol), node.left, right], node)


def _structure(target):
    """The structure of an unpacking target (None for a name, a subscript, ...): a tuple of
    its items' structures; None for a target with ``*rest`` (any length)."""
    if not isinstance(target, (ast.Tuple, ast.List)):
        return None
    if any(isinstance(item, ast.Starred) for item in ast.walk(target)):
        return None
    return tuple(_structure(item) for item in target.elts)


def _call(name, args, where):
    return ast.copy_location(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args,
                                      keywords=[]), where)


def _as_expression(index):
    """A subscript's index as an expression: ``a:b`` is ``slice(a, b)``."""
    if isinstance(index, ast.Slice):
        parts = [part or ast.Constant(None) for part in (index.lower, index.upper, index.step)]
        return _call(SLICE_NAME, parts, index)
    if isinstance(index, ast.Tuple):
        index.elts = [_as_expression(item) for item in index.elts]
    return index


def rewrite(function_node):
    """Route the subscripts, comparisons and ``in`` tests of a function's syntax tree
    (nested functions too) through this module's functions. Returns True."""
    _Rewriter().visit(function_node)
    return True
