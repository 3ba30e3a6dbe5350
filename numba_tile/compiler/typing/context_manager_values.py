"""A ``contextlib.contextmanager`` helper called outside a ``with`` in compiled code, as
cuTile has it: the call makes a value (nothing runs; a ``with`` inlines the helper where it
calls it, :mod:`~numba_tile.compiler.frontend.with_blocks`) whose type cuTile names
``GeneratorContextManager[<function cm at 0x...>, args=[...], kwargs={...}]``, and which
takes no operator: ``cm + 1`` is cuTile's ``TileTypeError`` "Unsupported operand types for
+: ..." (:mod:`numba_tile.rules.context_managers`), as in the interpreter.

The front end puts a :class:`ContextManagerFunction` for the helper in the globals of tile
code (:mod:`~numba_tile.compiler.frontend.helpers`); its type is a compile-time constant
whose call types as a :class:`GeneratorContextManagerType`, nothing at run time.

>>> import contextlib, numpy as np, numba_tile as ct
>>> @contextlib.contextmanager
... def scope(x):
...     yield
>>> @ct.kernel
... def k(x):
...     cm = scope(x)
...     cm + 1
>>> ct.compile(k, (np.zeros(1, np.int32),), arch="sm_90")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Unsupported operand types for +:
GeneratorContextManager[<function scope at 0x...>, args=[Array[int32,(?,):(?,)]], kwargs={}]
and Tile[int32,()]
...
"""

import inspect

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate
from numba.cuda.typing.typeof import typeof_impl

from ...errors import TileTypeError, TileUnsupportedFeatureError
from ...rules.context_managers import (REFUSED_OPERATORS, context_manager_name,
                                       unsupported_operands)
from ..abstract import operand
from ..types import ConstantType
from .templates import registry


class ContextManagerFunction:
    """What the compiler puts for a ``contextlib.contextmanager`` helper of the user's code
    in the globals and closures of tile code: its generator function."""

    def __init__(self, generator):
        self.generator = generator


class ContextManagerFunctionType(ConstantType, types.Callable):
    """The helper as a value of tile code: a compile-time constant whose call makes a
    :class:`GeneratorContextManagerType`."""

    @property
    def key(self):  # by the function, not by its name
        return "context manager function", self.value

    def get_call_type(self, context, args, kws):
        generator = self.value
        parameters = inspect.signature(generator).parameters
        if kws and any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                       for p in parameters.values()):
            raise TileUnsupportedFeatureError(
                "numba_tile cannot compile this yet: keyword arguments of a call of a "
                "context manager with *args or **kwargs outside a with block")
        try:
            bound = inspect.signature(generator).bind(*args, **kws)
        except TypeError as error:
            raise TileTypeError(f"{generator.__name__}(): {error}") from None
        made = GeneratorContextManagerType(generator, args, kws)
        if not kws:
            return signature(made, *args)
        values = [bound.arguments[name] if name in bound.arguments
                  else types.Omitted(parameter.default)
                  for name, parameter in parameters.items()]
        return signature(made, *values).replace(pysig=inspect.signature(generator))

    def get_call_signatures(self):
        return (), True

    def get_impl_key(self, sig):
        return type(self)


class _Made:
    """A rule operand for the made context manager: how messages name and describe it."""

    def __init__(self, name):
        self.tile_type_name = name

    def describe(self):
        return self.tile_type_name


class GeneratorContextManagerType(ConstantType):
    """What the helper's call makes: its type names the function and the types of the
    arguments; nothing at run time."""

    def __init__(self, generator, args, kws):
        self.generator, self.args, self.kws = generator, tuple(args), dict(kws)
        name = context_manager_name(generator, [operand(a) for a in self.args],
                                    {k: operand(v) for k, v in self.kws.items()})
        super().__init__(_Made(name))
        self.name = name

    @property
    def key(self):
        return "generator context manager", self.generator, self.args, \
            tuple(sorted(self.kws.items()))


@typeof_impl.register(ContextManagerFunction)
def _typeof_context_manager_function(value, context):
    return ContextManagerFunctionType(value.generator)


def _refused_operator(function, symbol):
    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True  # a literal operand is named as cuTile names it

        def generic(self, args, kws):
            if len(args) == 2 and not kws and \
                    any(isinstance(a, GeneratorContextManagerType) for a in args):
                raise unsupported_operands(symbol, *map(operand, args))
            return None

    Template.__name__ = f"ContextManager_{function.__name__}"
    registry.register_global(function)(Template)


for _op in REFUSED_OPERATORS:
    _refused_operator(_op.function, _op.symbol)
    _refused_operator(_op.inplace, _op.symbol)
