"""The values a ``static_iter`` iterable reads, as far as they are known before typing.

The unrolling of ``static_iter`` loops (:mod:`.static_iter`) evaluates a loop's iterable
before typing where it can: with the values that the kernel's IR makes plain at the loop, the
items are known without compiling the kernel once more. :class:`ValuesBeforeTyping` follows a
variable back to the assignment that reaches the loop (through copies, and through a branch
whose sides leave it alone) and gives:

* constants (literals, globals, ``Constant`` parameters, arithmetic and comparisons of those)
  as the typing would see them (:func:`~numba_tile.compiler.typing.static_iteration.
  static_value`);
* tuples built in the kernel (``(a, b)``, ``parts + (t,)``, ``parts += (t,)``, items and
  slices of those, ``tuple(...)``), entry by entry;
* the kernel's parameters by their types;
* anything else as a :class:`~numba_tile.compiler.typing.static_iteration.PendingValue`:
  an iterable may put it in an item, while any other use of it waits for typing.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def scaled(x, out):
...     t = ct.load(x, (0,), (4,))
...     parts = ()
...     for k in ct.static_iter(range(1, 4)):
...         parts += (t * k,)
...     for i, p in ct.static_iter(enumerate(parts)):  # unrolled before typing
...         ct.store(out, (i,), p)
>>> x = np.arange(4, dtype=np.float32)
>>> out = np.zeros(12, np.float32)
>>> ct.launch(0, (1,), scaled, (x, out))
>>> out.reshape(3, 4)[2]
array([0., 3., 6., 9.], dtype=float32)
"""

import enum
import operator

from numba.core import types
from numba.cuda.core import ir
from numba.cuda.core.analysis import compute_cfg_from_blocks

from ...host.scalars import loose
from ...language import debugging
from ..constant_folding import FOLDABLE
from ..typing.static_expressions import python_value
from ..typing.static_iteration import PendingValue, compiled_static_condition, static_value

_COMPARISONS = {operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge}
_CONCATENATIONS = {operator.add, operator.iadd}


class _Leaf:
    """A value not known before typing (``numba_type`` None) or of a known type (a
    parameter); ``variable`` names the variable assigned once that holds it, if any."""

    __slots__ = ("numba_type", "variable")

    def __init__(self, numba_type=None, variable=None):
        self.numba_type, self.variable = numba_type, variable


class ValuesBeforeTyping:
    """The values variables hold at places of a kernel's IR, as far as known before typing
    (see the module's docstring)."""

    def __init__(self, func_ir, arg_types, typing_context):
        self.func_ir, self.blocks = func_ir, func_ir.blocks
        self.arg_types, self.context = arg_types, typing_context
        self.cfg = compute_cfg_from_blocks(func_ir.blocks)
        self.functions = {}  # id of a helper's Python function -> its dispatcher
        self._reached = {}

    def passed(self, variables, label, index):
        """What an iterable sees for ``variables`` passed to it before statement ``index``
        of block ``label``."""
        return [self._seen(self.value(v.name, label, index), j, ())
                for j, v in enumerate(variables)]

    def _seen(self, value, position, steps):
        if isinstance(value, tuple):
            return tuple(self._seen(v, position, steps + (("item", i),))
                         for i, v in enumerate(value))
        if not isinstance(value, _Leaf):
            return value
        if value.numba_type is not None:
            return static_value(value.numba_type, position, steps, self.context,
                                self.functions)
        if value.variable is not None:
            return PendingValue(("var", value.variable))
        return PendingValue(("path", position, steps))

    # -- a variable's value -----------------------------------------------------------------
    def value(self, name, label, index):
        """The value variable ``name`` holds before statement ``index`` of block ``label``."""
        found = self.reaching(name, label, index)
        if found is None:
            return _Leaf(variable=self._once(name))
        node, (label, index), target = found
        return self._node_value(node, label, index, target)

    def truth(self, name, label, index):
        """True or False where the condition ``name`` holds there is a constant, else None."""
        value = self.value(name, label, index)
        if isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum):
            return bool(value)
        return None

    def reaching(self, name, label, index):
        """``(value, (label, index), variable)``: the value assigned to ``name`` that reaches
        statement ``index`` of block ``label`` (copies followed), where it is assigned and
        the variable assigned; None where that is not one assignment."""
        key = (name, label, index)
        if key not in self._reached:
            self._reached[key] = None  # (a cycle of copies finds nothing)
            self._reached[key] = self._reaching(name, label, index, set())
        return self._reached[key]

    def _reaching(self, name, label, index, visited):
        while True:
            body = self.blocks[label].body
            for i in range(index - 1, -1, -1):
                statement = body[i]
                if isinstance(statement, ir.Assign) and statement.target.name == name:
                    if isinstance(statement.value, ir.Var):
                        return self.reaching(statement.value.name, label, i)
                    return statement.value, (label, i), name
            if label in visited:
                return None
            visited.add(label)
            predecessors = [p for p, _ in self.cfg.predecessors(label)]
            if len(predecessors) != 1:
                # a join: the same assignment on every way in (a branch that leaves the
                # variable alone), or none known
                found = [self.reaching(name, p, len(self.blocks[p].body))
                         for p in predecessors]
                if found and found[0] is not None and all(
                        f is not None and f[0] is found[0][0] and f[1] == found[0][1]
                        for f in found):
                    return found[0]
                return None
            label = predecessors[0]
            index = len(self.blocks[label].body)

    def _once(self, name):
        """``name`` if the kernel assigns it once (its value is the same wherever read)."""
        return name if len(self.func_ir._definitions.get(name, ())) == 1 else None

    def _node_value(self, node, label, index, target):
        if isinstance(node, (ir.Const, ir.Global, ir.FreeVar)):
            return self._constant(node.value, target)
        if isinstance(node, ir.Arg):
            if self.arg_types is None or node.index >= len(self.arg_types):
                return _Leaf(variable=self._once(target))
            return _Leaf(self.arg_types[node.index])
        if isinstance(node, ir.Expr):
            found = self._expression(node, label, index)
            if found is not None:
                return found
        return _Leaf(variable=self._once(target))

    def _constant(self, value, target):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, enum.Enum):
            return loose(value)
        try:
            numba_type = self.context.resolve_value_type(value)
        except Exception:  # not a value of tile code: leave it to the typing's error
            return _Leaf(variable=self._once(target))
        if isinstance(numba_type, types.Dispatcher):
            self.functions[id(numba_type.dispatcher.py_func)] = numba_type.dispatcher
            return numba_type.dispatcher.py_func
        found = python_value(numba_type)
        if found is None:
            return _Leaf(variable=self._once(target))
        return found[0] if isinstance(found, tuple) else found

    def _expression(self, node, label, index):
        """The value of an expression, or None where it is not known before typing."""
        def value(var):
            return self.value(var.name, label, index)
        if node.op == "build_tuple":
            return tuple(value(v) for v in node.items)
        if node.op in ("binop", "inplace_binop") and node.fn in _CONCATENATIONS:
            return self._sum(node, label, index)
        if node.op in ("binop", "inplace_binop") and node.fn in FOLDABLE | _COMPARISONS:
            function = node.immutable_fn if node.op == "inplace_binop" else node.fn
            return _fold(function, value(node.lhs), value(node.rhs))
        if node.op == "unary" and node.fn in FOLDABLE:
            return _fold(node.fn, value(node.value))
        if node.op in ("static_getitem", "getitem"):
            base = value(node.value)
            at = node.index if node.op == "static_getitem" else value(node.index)
            if isinstance(base, tuple) and isinstance(at, (int, slice)) and \
                    not isinstance(at, bool):
                try:
                    return base[at]
                except IndexError:
                    return None
            return None
        if node.op == "exhaust_iter":
            base = value(node.value)
            return base if isinstance(base, tuple) and len(base) == node.count else None
        if node.op == "call" and not node.kws and node.vararg is None and len(node.args) == 1:
            return self._call(self._callee(node.func, label, index), value(node.args[0]))
        return None

    def _sum(self, node, label, index):
        """``a + b``: tuples concatenated (a chain ``parts += (t,)`` followed without
        recursion, however long), or numbers folded."""
        parts = []
        while True:
            parts.append(self.value(node.rhs.name, label, index))
            found = self.reaching(node.lhs.name, label, index)
            if found is None:
                return None
            lhs, (label, index), target = found
            if not (isinstance(lhs, ir.Expr) and lhs.op in ("binop", "inplace_binop") and
                    lhs.fn in _CONCATENATIONS):
                parts.append(self._node_value(lhs, label, index, target))
                break
            node = lhs
        parts.reverse()
        if all(isinstance(p, tuple) for p in parts):
            return sum(parts, ())
        if len(parts) == 2:
            return _fold(operator.add, *parts)
        return None

    def _callee(self, var, label, index):
        found = self.reaching(var.name, label, index)
        if found is not None and isinstance(found[0], (ir.Global, ir.FreeVar)):
            return found[0].value
        return None

    @staticmethod
    def _call(function, argument):
        if function is tuple and isinstance(argument, tuple):
            return argument
        if function is len and isinstance(argument, tuple):
            return loose(len(argument))
        if function in (bool, compiled_static_condition) and isinstance(
                argument, (bool, int, float)) and not isinstance(argument, enum.Enum):
            return bool(argument)
        if function is debugging.ensure_constant and not isinstance(argument, _Leaf):
            return argument  # (a run-time value is the typing's error)
        return None


def _fold(function, *values):
    """``function`` of constant numbers and bools, as the typing folds it; None otherwise."""
    if not all(isinstance(v, (bool, int, float)) and not isinstance(v, enum.Enum)
               for v in values):
        return None
    try:
        result = function(*values)
    except Exception:  # (division by zero...): the typing reports it
        return None
    return result if isinstance(result, bool) else loose(result) \
        if isinstance(result, (int, float)) else None
