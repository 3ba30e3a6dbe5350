"""Loosely typed constants: the Python numbers of tile code, which also carry ``dtype``,
``shape`` and ``ndim`` (seed 000, "Tiles and Scalars").

A :class:`LooseInt` or :class:`LooseFloat` is an ``int`` or a ``float`` whose arithmetic with
others of its kind stays loosely typed, so folded constants carry a dtype too. The
interpreter's source rewrite makes every numeric literal one
(:mod:`numba_tile.interpreter.literals`); shapes, ``ndim`` and loop bounds are ones as well.

>>> from numba_tile.host.scalars import loose
>>> n = loose(3) * 2
>>> n, n.dtype, loose(0.5).dtype
(6, int32, float32)
"""

from ..promotion import loose_concrete_dtype
from ..rules import operators
from ..rules.elementwise import constant_division_error
from ..rules.formatting import format_value
from .context import in_static_evaluation
from .printing import format_float

# The special methods whose results stay loosely typed: those of the operators of tile code but
# the comparisons (a bool needs no dtype), and unary plus, which is no op of its own
_FORWARDED = ("__pos__", *(op.dunder for op in operators.OPERATORS if op.category != "comparison"),
              *(op.reflected_dunder for op in operators.OPERATORS if op.reflected_dunder))
# the operator of each special method, and whether its operands come reflected
_OPERATOR_NAMES = {**{op.dunder: (op.name, False) for op in operators.OPERATORS},
                   **{op.reflected_dunder: (op.name, True) for op in operators.OPERATORS
                      if op.reflected_dunder}}


def loose(value):
    """Wrap a folded Python int/float result as a loosely typed constant (bools stay)."""
    if isinstance(value, bool) or isinstance(value, (LooseInt, LooseFloat)):
        return value
    if isinstance(value, int):
        return LooseInt(value)
    if isinstance(value, float):
        return LooseFloat(value)
    return value


class LooseScalar:
    """Tile-model attributes of a loosely typed constant. Its ``astype`` method is the op's,
    attached where the op is defined (:mod:`numba_tile.language.elementwise`)."""

    __slots__ = ()
    shape = ()
    ndim = 0

    @property
    def dtype(self):
        """The dtype the constant takes on its own (int32/int64/uint64 by value, float32)."""
        return loose_concrete_dtype(self._python_type(self))

    def __repr__(self):
        if self._python_type is float:  # short form, as tiles print: 1.5708
            return format_float(self)
        return int.__repr__(self)

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self) if not spec else format_value(self._python_type(self), spec)


def _forward(name, python_type):
    # looked up on the instances' classes: getattr(float, "__or__") would find type.__or__
    # (``float | int``, a union of types), a method of the class object itself
    method = next((klass.__dict__[name] for klass in python_type.__mro__
                   if name in klass.__dict__), None)
    if method is None:
        return None

    def fn(*args):
        try:
            result = method(*args)
        except ZeroDivisionError as error:  # (a constant expression of tile code: its error)
            if in_static_evaluation():
                raise  # (static_eval's Python raises Python's errors, which it reports)
            op, reflected = _OPERATOR_NAMES[name]
            raise constant_division_error(error, op, *(args[::-1] if reflected else args)) \
                from None
        return result if result is NotImplemented else loose(result)
    fn.__name__ = name
    return fn


def _make_loose_type(name, python_type):
    namespace = {"__slots__": (), "_python_type": python_type,
                 "__doc__": f"A loosely typed {python_type.__name__} constant in tile code."}
    for dunder in _FORWARDED:
        fn = _forward(dunder, python_type)
        if fn is not None:
            namespace[dunder] = fn
    return type(name, (LooseScalar, python_type), namespace)


LooseInt = _make_loose_type("LooseInt", int)
LooseFloat = _make_loose_type("LooseFloat", float)
