"""Typing of text in tile code: ``str(x)``, ``format(x, spec)`` and f-strings, for printing.

Device code has no strings, so text is a compile-time recipe: a :class:`TextType` lists
constant pieces and the places of values with their format spec; its run-time value holds just
the values. ``f"t={t} n={n:.2f}"`` is ``"t=" + str(t) + " n=" + format(n, ".2f")``, and each
step here makes a longer recipe; :mod:`~numba_tile.compiler.lowering.device_output` prints it. Text of constants is folded
into a constant string, formatted as the interpreter formats the Python value.

>>> import numba_tile as ct
>>> from numba.core import types
>>> from numba_tile.compiler.typing.text import TextType, text_of
>>> t = text_of(types.literal("n=")) + text_of(types.int32, ".2f")
>>> t.parts, t.values
(('n=', (0, '.2f')), (int32,))
"""

import dataclasses
import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, AttributeTemplate, bound_function

from ...errors import TileTypeError
from ...rules.formatting import RUN_TIME_TEXT, check_printable, conversion_for_spec, \
    format_value
from ..abstract import RUN_TIME, constant_of, operand
from ..types import ArrayType, ConstantType, FloatLiteral, TiledViewType, TileType, \
    dtype_of_scalar
from .templates import registry


class TextType(types.Type):
    """Text: ``parts`` are constant strings and ``(value index, format spec)`` pairs; the run-
    time value is a struct of the ``values``."""

    #: what a rule that meets text where a value goes calls it (:func:`..abstract.operand`)
    tile_code_description = RUN_TIME_TEXT

    def __init__(self, parts, values):
        self.parts = tuple(parts)
        self.values = tuple(values)
        shown = "".join(p if isinstance(p, str) else "{%d:%s}" % p for p in self.parts)
        super().__init__(name=f"TileText({shown!r}, {', '.join(map(str, self.values))})")

    def __add__(self, other):
        offset = len(self.values)
        parts = list(self.parts)
        for part in other.parts:
            part = part if isinstance(part, str) else (part[0] + offset, part[1])
            if isinstance(part, str) and parts and isinstance(parts[-1], str):
                parts[-1] += part
            else:
                parts.append(part)
        return TextType(parts, self.values + other.values)


def is_printable_value(numba_type):
    """A run-time value text can hold: a tile or a run-time scalar."""
    return isinstance(numba_type, TileType) or (
        not isinstance(numba_type, types.Literal) and dtype_of_scalar(numba_type) is not None)


def dtype_of_value(numba_type):
    return numba_type.dtype if isinstance(numba_type, TileType) else dtype_of_scalar(numba_type)


def tuple_text(numba_type):
    """The text of a tuple that holds run-time values, as Python's ``str`` writes a tuple
    (constants as their ``repr``, run-time values as ``print`` writes them, nested tuples
    alike), or None where an item cannot be text. Its values are the tuple's run-time items
    in order (:func:`~numba_tile.compiler.lowering.text.tuple_values`)."""
    text = TextType(("(",), ())
    for index, item in enumerate(numba_type):
        if index:
            text = text + TextType((", ",), ())
        value = constant_of(item, RUN_TIME)
        if value is not RUN_TIME:
            piece = TextType((repr(value),), ())
        elif isinstance(item, types.BaseTuple):
            piece = tuple_text(item)
        elif is_printable_value(item):
            piece = TextType(((0, ""),), (item,))
        else:
            return None
        if piece is None:
            return None
        text = text + piece
    return text + TextType(("," * (len(numba_type) == 1) + ")",), ())


def text_of(numba_type, spec=""):
    """The text recipe of a string literal, a text or a run-time value with ``spec``."""
    if isinstance(numba_type, TextType):
        return numba_type
    if isinstance(numba_type, types.BaseTuple):
        return tuple_text(numba_type) if not spec else None
    if isinstance(numba_type, types.StringLiteral):
        return TextType((numba_type.literal_value,), ())
    if is_printable_value(numba_type):
        conversion_for_spec(spec, dtype_of_value(numba_type))  # errors at the f-string
        return TextType(((0, spec),), (numba_type,))
    return None


# numba-cuda's own str()/format()/+ overloads are specific to the CUDA target, and Numba tries
# target-specific templates first: ours must be as specific to be tried before them
_CUDA_SPECIFIC = {"target": "cuda"}


def _string_literal(value):
    return types.literal(value)


class _TextTemplate(AbstractTemplate):
    tile_first = True
    metadata = _CUDA_SPECIFIC
    prefer_literal = True

    def text(self, value_type, spec, args):
        """The signature of formatting ``value_type`` with ``spec``: a constant folds to its
        string (the interpreter formats the Python value); a tile or run-time scalar becomes
        text whose spec is checked here."""
        if isinstance(value_type, (ArrayType, TileType)):  # (the interpreter's errors: an
            check_printable(operand(value_type))  # array, a foreign pointer)
        value = constant_of(value_type, RUN_TIME)
        if value is not RUN_TIME:
            return signature(_string_literal(format_value(value, spec)), *args)
        text = text_of(value_type, spec)
        return None if text is None else signature(text, *args)

    def get_impl_key(self, sig):
        return "numba_tile.text"


class StrTemplate(_TextTemplate):
    """``str(x)`` (an f-string field): ``format(x, "")``."""

    key = str

    def generic(self, args, kws):
        if kws or len(args) != 1:
            return None
        return self.text(args[0], "", args)


class FormatTemplate(_TextTemplate):
    """``format(x, spec)`` (an f-string field with a spec)."""

    key = format

    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        spec = constant_of(args[1], RUN_TIME)
        if not isinstance(spec, str):
            raise TileTypeError("A format spec in tile code must be a constant string")
        return self.text(args[0], spec, args)


class TextConcatenation(AbstractTemplate):
    """``a + b`` of strings and text (f-strings are compiled as such sums)."""

    key = operator.add
    tile_first = True
    metadata = _CUDA_SPECIFIC
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        a, b = args
        if isinstance(a, types.StringLiteral) and isinstance(b, types.StringLiteral):
            return signature(_string_literal(a.literal_value + b.literal_value), *args)
        if not (isinstance(a, TextType) or isinstance(b, TextType)):
            return None
        left, right = text_of(a), text_of(b)
        if left is None or right is None:
            return None
        return signature(left + right, *args)

    def get_impl_key(self, sig):
        return "numba_tile.text"


class StringLiteralAttributes(AttributeTemplate):
    """Methods of a constant string: ``",".join(("a", "b"))`` folds to ``"a,b"`` (the
    interpreter runs Python's, whose error for an item that is not a string this gives in
    the same words)."""

    key = types.StringLiteral

    @bound_function("numba_tile.str_join")
    def resolve_join(self, separator, args, kws):
        if kws:
            raise TileTypeError("str.join() takes no keyword arguments")
        if len(args) != 1:
            raise TileTypeError(f"str.join() takes exactly one argument ({len(args)} given)")
        items = args[0]
        if isinstance(items, types.StringLiteral):
            joined = separator.literal_value.join(items.literal_value)
        elif isinstance(items, types.BaseTuple):
            for index, item in enumerate(items):
                if not isinstance(item, (types.StringLiteral, TextType)):
                    raise TileTypeError(f"sequence item {index}: expected str instance, "
                                        f"{python_class_name(item)} found")
            if any(isinstance(item, TextType) for item in items):  # f-strings of values
                joined = text_of(items[0])
                for item in items[1:]:
                    joined = joined + text_of(separator) + text_of(item)
                return signature(joined, *args)
            joined = separator.literal_value.join(item.literal_value for item in items)
        else:
            raise TileTypeError("can only join an iterable")
        return signature(_string_literal(joined), *args)


def python_class_name(numba_type):
    """The class name Python's messages give a value of ``numba_type`` in the interpreter
    (its numbers are Python's; a constant object or a dataclass instance, its class; its
    arrays and tiled views, theirs; its tiles and scalars, ``Tile``), for the messages
    the compiler gives in the interpreter's words.

    >>> from numba.core import types
    >>> from numba_tile.compiler.typing.text import python_class_name
    >>> python_class_name(types.literal(1)), python_class_name(types.int32)
    ('int', 'Tile')
    """
    cls = getattr(numba_type, "cls", None)  # (a dataclass instance's type: typing/dataclasses)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return cls.__name__
    if isinstance(numba_type, ConstantType):  # a dtype, an enum member
        return type(numba_type.value).__name__
    for literal, name in ((types.BooleanLiteral, "bool"), (types.IntegerLiteral, "int"),
                          (FloatLiteral, "float"), (types.NoneType, "NoneType"),
                          (types.BaseTuple, "tuple"), (ArrayType, "Array"),
                          (TiledViewType, "TiledView")):
        if isinstance(numba_type, literal):
            return name
    return "Tile"


registry.register_attr(StringLiteralAttributes)
registry.register_global(str)(StrTemplate)
registry.register_global(format)(FormatTemplate)
registry.register_global(operator.add)(TextConcatenation)
