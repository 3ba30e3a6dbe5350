"""Typing of a helper's ``**kwargs`` (see :mod:`numba_tile.source.keyword_arguments`): a record of
the extra keyword arguments of the call, their names in the type.

The front end binds a call of a helper that takes ``**kwargs``
(:mod:`~numba_tile.compiler.frontend.variadic`) by passing ``pack_keywords(name, value, ...)``
for it. Reading a key gives the value with its own type (a constant stays one); a missing key
is cuTile's ``TileTypeError``; ``in`` is a constant bool; ``static_eval`` sees a dict.

>>> from numba.core import types
>>> from numba_tile.compiler.typing.keywords import KeywordArgumentsType
>>> KeywordArgumentsType(("foo",), (types.IntegerLiteral(3),))
KeywordArguments(foo=Literal[int](3))
"""

import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, AttributeTemplate

from ...errors import TileUnsupportedFeatureError
from ...source.keyword_arguments import missing_key
from ...rules.tuples import starred_error
from ..abstract import constant_of, operand
from .templates import registry


class KeywordArgumentsType(types.Type):
    """The ``**kwargs`` of one call: the keys ``names`` and the types of their ``values``."""

    def __init__(self, names, values):
        self.names, self.values = tuple(names), tuple(values)
        shown = ", ".join(f"{n}={v}" for n, v in zip(self.names, self.values))
        super().__init__(name=f"KeywordArguments({shown})")

    @property
    def key(self):
        return self.names, self.values

    def __iter__(self):  # the entries of its data model, in order
        return iter(self.values)

    def __len__(self):
        return len(self.values)

    def index(self, key):
        """The position of constant ``key``'s value; ``TileTypeError`` for a missing key."""
        if key not in self.names:
            raise missing_key(key)
        return self.names.index(key)


def pack_keywords(*names_and_values):
    """What the front end passes for a helper's ``**kwargs`` in compiled code: each keyword
    argument's name (a constant string) followed by its value."""
    return dict(zip(names_and_values[::2], names_and_values[1::2]))


def call_unpacked(function, positional, *keyword_records, **keywords):
    """``function(*positional, **record, ..., **keywords)``: what a call with ``**`` becomes
    in compiled code, bound before typing where the tuple and records are built in the
    kernel (:mod:`~numba_tile.compiler.frontend.variadic`)."""
    merged = {}
    for record in keyword_records:
        merged.update(record)
    return function(*positional, **merged, **keywords)


@registry.register_global(call_unpacked)
class UnboundForwarding(AbstractTemplate):
    """A call with ``**`` that could not be bound before typing."""

    def generic(self, args, kws):
        raise TileUnsupportedFeatureError(
            "numba_tile cannot compile this yet: forwarding **kwargs or *args whose entries "
            "are not made in the kernel (a kernel parameter, a value chosen at run time)")


def starred_tuple(value):
    """What ``*value`` in a call unpacks in compiled code where ``value`` is not a tuple
    built in the kernel (:mod:`~numba_tile.compiler.frontend.variadic`): ``value`` itself,
    which must be a tuple."""
    return value


@registry.register_global(starred_tuple)
class StarredTuple(AbstractTemplate):
    """``*v``: a tuple unpacks (its items' literal types kept); anything else is cuTile's
    error."""

    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1:
            return None
        if isinstance(args[0], types.BaseTuple):
            return signature(args[0], *args)
        raise starred_error(operand(args[0]))

    def get_impl_key(self, sig):
        return "numba_tile.starred_tuple"


def unpacked_values(*values):
    """What a call of a helper with ``*v`` becomes in compiled code where the length of a
    ``v`` is not known before typing (a tile, a kernel parameter): ``values`` are those
    ``v``, never called."""


@registry.register_global(unpacked_values)
class UnboundStarred(AbstractTemplate):
    """``*v`` of a value that is no tuple is cuTile's error; of a tuple whose length only
    typing knows, a gap of the compiler."""

    def generic(self, args, kws):
        for value in args:
            if not isinstance(value, types.BaseTuple):
                raise starred_error(operand(value))
        raise TileUnsupportedFeatureError(
            "numba_tile cannot compile this yet: *args of a tuple whose length is known only "
            "while typing (a kernel parameter) in a call of a helper")


def _key(numba_type):
    """The string a constant key type holds, or None."""
    value = constant_of(numba_type, None)
    return value if isinstance(value, str) else None


@registry.register_global(pack_keywords)
class PackKeywords(AbstractTemplate):
    prefer_literal = True

    def generic(self, args, kws):
        names = [_key(name) for name in args[::2]]
        if kws or len(args) % 2 or None in names:
            return None
        return signature(KeywordArgumentsType(names, args[1::2]), *args)


@registry.register_global(operator.getitem)
class KeywordGetItem(AbstractTemplate):
    """``kwargs["foo"]``: the value; a key it does not have is an error."""

    prefer_literal = True

    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], KeywordArgumentsType):
            return None
        key = _key(args[1])
        if key is None:
            return None
        return signature(args[0].values[args[0].index(key)], *args)


@registry.register_global(operator.contains)
class KeywordContains(AbstractTemplate):
    """``"foo" in kwargs``: a constant bool."""

    prefer_literal = True

    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], KeywordArgumentsType):
            return None
        key = _key(args[1])
        if key is None:
            return None
        return signature(types.BooleanLiteral(key in args[0].names), *args)

    def get_impl_key(self, sig):
        return "numba_tile.folded"


class _Get(AbstractTemplate):
    """``kwargs.get("foo", default=None)``: the value, or the default."""

    key = "keywords.get"
    prefer_literal = True  # the key is a string literal
    record = None

    def generic(self, args, kws):
        key = _key(args[0]) if 1 <= len(args) <= 2 and not kws else None
        if key is None:
            return None
        default = args[1] if len(args) == 2 else types.none
        names, values = self.record.names, self.record.values
        result = values[names.index(key)] if key in names else default
        return signature(result, *args, recvr=self.record)


@registry.register_attr
class KeywordAttributes(AttributeTemplate):
    key = KeywordArgumentsType

    def resolve_get(self, record):
        return types.BoundFunction(type("KeywordsGet", (_Get,), {"record": record}), record)
