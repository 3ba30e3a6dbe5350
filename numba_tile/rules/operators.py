"""The Python operators of tile code and the elementwise ops they apply, each defined once.

``a << b`` on tiles is the op ``bitwise_lshift``: the public function ``ct.bitwise_lshift``,
reached through ``operator.lshift`` (what Numba's IR calls) or ``Tile.__lshift__`` and
``__rlshift__`` (what the interpreter's tiles answer to), ``operator.ilshift`` for ``a <<= b``,
the ``ast.LShift`` node that an error message underlines and ``np.left_shift``, which
computes it in the interpreter. One :class:`Operator` record per op holds all of these; the
rules, the interpreter and the compiler derive their tables from :data:`OPERATORS`, so that an
op's name and its counterparts are written only here.

>>> import operator
>>> from numba_tile.rules.operators import (INPLACE_OPERATORS, OPERATOR_NODES, UNARY_OPERATORS,
...                                         by_name)
>>> op = by_name("bitwise_lshift")
>>> op.symbol, op.dunder, op.reflected_dunder, op.inplace.__name__, op.category
('<<', '__lshift__', '__rlshift__', 'ilshift', 'shift')
>>> INPLACE_OPERATORS[operator.ilshift], UNARY_OPERATORS[abs], OPERATOR_NODES["ilshift"].__name__
('bitwise_lshift', 'abs', 'LShift')
"""

import ast
import dataclasses
import operator
from collections.abc import Callable

import numpy as np

from ..errors import TileTypeError
from .core import type_name


@dataclasses.dataclass(frozen=True)
class Operator:
    """An elementwise op that a Python operator applies to tiles: ``x >= y`` is ``greater_equal``.

    ``name`` is the op (and its public function ``ct.<name>``); ``category`` one of
    ``"arithmetic"``, ``"bitwise"``, ``"shift"``, ``"comparison"`` and ``"unary"``;
    ``function`` the Python function of the operator (``operator.ge``, or the builtin ``abs``);
    ``symbol`` and ``node`` how the source writes it (``'>='``, ``ast.GtE``), None for ``abs``,
    which the source calls; ``numpy`` the NumPy function that computes it.

    >>> from numba_tile.rules.operators import by_name
    >>> op = by_name("greater_equal")
    >>> op.function(3, 2), op.node.__name__, op.dunder, op.reflected_dunder, op.inplace
    (True, 'GtE', '__ge__', None, None)
    """

    name: str
    category: str
    function: Callable
    symbol: str | None
    node: type | None
    numpy: Callable

    @property
    def arity(self):
        """How many operands the op takes.

        >>> from numba_tile.rules.operators import by_name
        >>> by_name("sub").arity, by_name("negative").arity
        (2, 1)
        """
        return 1 if self.category == "unary" else 2

    @property
    def _stem(self):
        return self.function.__name__.rstrip("_")  # operator.and_ is __and__

    @property
    def dunder(self):
        """The special method that Python calls for the operator: ``'__and__'``.

        >>> from numba_tile.rules.operators import by_name
        >>> by_name("bitwise_and").dunder, by_name("abs").dunder
        ('__and__', '__abs__')
        """
        return f"__{self._stem}__"

    @property
    def reflected_dunder(self):
        """The special method of the right operand (``'__rsub__'``), None for a comparison
        (Python swaps ``x < y`` into ``y > x`` itself) or a unary op.

        >>> from numba_tile.rules.operators import by_name
        >>> by_name("sub").reflected_dunder, by_name("less").reflected_dunder
        ('__rsub__', None)
        """
        if self.arity == 1 or self.category == "comparison":
            return None
        return f"__r{self._stem}__"

    @property
    def inplace(self):
        """The function of the augmented assignment (``operator.iadd`` for ``x += y``), None
        where Python has none (comparisons, unary ops).

        >>> from numba_tile.rules.operators import by_name
        >>> by_name("pow").inplace(2, 3), by_name("equal").inplace
        (8, None)
        """
        # the operators with a reflected method are those with an augmented assignment
        return getattr(operator, f"i{self._stem}") if self.reflected_dunder else None


OPERATORS = (
    Operator("add", "arithmetic", operator.add, "+", ast.Add, np.add),
    Operator("sub", "arithmetic", operator.sub, "-", ast.Sub, np.subtract),
    Operator("mul", "arithmetic", operator.mul, "*", ast.Mult, np.multiply),
    Operator("truediv", "arithmetic", operator.truediv, "/", ast.Div, np.true_divide),
    Operator("floordiv", "arithmetic", operator.floordiv, "//", ast.FloorDiv, np.floor_divide),
    Operator("mod", "arithmetic", operator.mod, "%", ast.Mod, np.mod),
    Operator("pow", "arithmetic", operator.pow, "**", ast.Pow, np.power),
    Operator("bitwise_and", "bitwise", operator.and_, "&", ast.BitAnd, np.bitwise_and),
    Operator("bitwise_or", "bitwise", operator.or_, "|", ast.BitOr, np.bitwise_or),
    Operator("bitwise_xor", "bitwise", operator.xor, "^", ast.BitXor, np.bitwise_xor),
    Operator("bitwise_lshift", "shift", operator.lshift, "<<", ast.LShift, np.left_shift),
    Operator("bitwise_rshift", "shift", operator.rshift, ">>", ast.RShift, np.right_shift),
    Operator("greater", "comparison", operator.gt, ">", ast.Gt, np.greater),
    Operator("greater_equal", "comparison", operator.ge, ">=", ast.GtE, np.greater_equal),
    Operator("less", "comparison", operator.lt, "<", ast.Lt, np.less),
    Operator("less_equal", "comparison", operator.le, "<=", ast.LtE, np.less_equal),
    Operator("equal", "comparison", operator.eq, "==", ast.Eq, np.equal),
    Operator("not_equal", "comparison", operator.ne, "!=", ast.NotEq, np.not_equal),
    Operator("negative", "unary", operator.neg, "-", ast.USub, np.negative),
    Operator("bitwise_not", "unary", operator.invert, "~", ast.Invert, np.invert),
    Operator("abs", "unary", abs, None, None, np.abs),
)
_BY_NAME = {op.name: op for op in OPERATORS}


def by_name(name):
    """The :class:`Operator` of op ``name``, or None for an op that no operator applies.

    >>> from numba_tile.rules.operators import by_name
    >>> by_name("mod").symbol, by_name("exp")
    ('%', None)
    """
    return _BY_NAME.get(name)


def names(*categories):
    """The names of the ops of the given categories.

    >>> from numba_tile.rules.operators import names
    >>> sorted(names("bitwise", "shift"))
    ['bitwise_and', 'bitwise_lshift', 'bitwise_or', 'bitwise_rshift', 'bitwise_xor']
    """
    return frozenset(op.name for op in OPERATORS if op.category in categories)


# Python operator function -> op name: how typing finds the op of ``x + y``, ``x += y``, ``-x``
BINARY_OPERATORS = {op.function: op.name for op in OPERATORS if op.arity == 2}
INPLACE_OPERATORS = {op.inplace: op.name for op in OPERATORS if op.inplace is not None}
UNARY_OPERATORS = {op.function: op.name for op in OPERATORS if op.arity == 1}

# ``@`` (ct.matmul, not elementwise) and ``not`` (a truth test, no op) are operators too: an
# error message underlines them like the others
_OTHER_NODES = {operator.matmul: ast.MatMult, operator.imatmul: ast.MatMult,
                operator.not_: ast.Not, operator.is_: ast.Is, operator.is_not: ast.IsNot}

# The ``__name__`` of an operator function -> the ast node class of its expression, so that an
# error raised for ``operator.iadd`` or ``operator.lt`` can point at the ``+=`` or ``<``
OPERATOR_NODES = {function.__name__: node for function, node in (
    *((op.function, op.node) for op in OPERATORS if op.node is not None),
    *((op.inplace, op.node) for op in OPERATORS if op.inplace is not None),
    *_OTHER_NODES.items())}


def check_identity(symbol, left, right):
    """Rule of ``left is right`` and ``left is not right`` (``symbol``) on rule operands: a
    tile, a scalar of tile code or an array is compared by identity only with None (cuTile's
    ``TileTypeError`` otherwise); compile-time constants are compared as Python does
    (``flag is True``, ``x.dtype is ct.float32``).

    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.operators import check_identity
    >>> check_identity("is", Loose(True), Loose(True))
    """
    def is_value(operand):
        return hasattr(operand, "dtype") and (
            hasattr(operand, "shape") or getattr(operand, "is_tile_array", False))

    if left is not None and right is not None and (is_value(left) or is_value(right)):
        raise TileTypeError(f"Operator '{symbol}' expects one of the operands to be None, got "
                            f"{type_name(left)} and {type_name(right)}")


#: cuTile's words for ``~`` of a bool constant (Python's ``~True`` is the int -2)
BOOL_INVERT = "`~` on boolean constant is not supported, please use ct.bitwise_not"
