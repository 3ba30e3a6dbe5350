"""Typing templates of tile code: each calls the shared rule of its op.

A template binds the call's arguments to the public function's signature (defaults become
``Omitted``), turns the Numba types into rule operands, runs the rule, and returns the
signature with the result type.
"""

import inspect
import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, Registry

from ..errors import TileUnsupportedFeatureError
from ..language import elementwise, memory
from ..rules import elementwise as elementwise_rules
from ..rules import memory as memory_rules
from .abstract import operand
from .types import TileType

registry = Registry()

# The number of warps of the kernel being typed (one thread block per tile block).
NUM_WARPS = {"value": 4}


def _stub(fn):
    return getattr(fn, "__tile_op__", fn)


def _template(fn, infer):
    """Register a template for public function ``fn``; ``infer(bound)`` gives the result
    type from the bound arguments (a dict of parameter name to Numba type)."""
    pysig = inspect.signature(_stub(fn))
    # Numba folds call arguments with plain positional-or-keyword parameters; the public
    # signature's `/` and `*` markers were already enforced when binding below.
    numba_pysig = pysig.replace(parameters=[
        p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in pysig.parameters.values()])

    class Template(AbstractTemplate):
        key = fn
        prefer_literal = True

        def generic(self, args, kws):
            bound = pysig.bind(*args, **kws)
            values = dict(bound.arguments)
            for name, param in pysig.parameters.items():
                if name not in values and param.default is not inspect.Parameter.empty:
                    values[name] = types.Omitted(param.default)
            result = infer(values)
            ordered = [values[name] for name in pysig.parameters if name in values]
            return signature(result, *ordered).replace(pysig=numba_pysig)

    Template.__name__ = f"Tile_{fn.__name__}"
    registry.register_global(fn)(Template)
    return Template


def _infer_grid(values):
    memory_rules.grid_axis(operand(values["axis"]).value)
    return types.int32


def _infer_load(values):
    spec, _, _, _ = memory_rules.load(operand(values["array"]), operand(values["index"]),
                                      _constant(values["shape"]), _constant(values["order"]),
                                      _constant(values["padding_mode"]))
    if spec.shape == ():
        raise TileUnsupportedFeatureError("Scalar loads (shape=()) are not compiled yet")
    return TileType(spec.dtype, spec.shape, NUM_WARPS["value"])


def _infer_store(values):
    tile = values["tile"]
    if not isinstance(tile, TileType):
        raise TileUnsupportedFeatureError("Only tiles can be stored by compiled kernels yet")
    memory_rules.store(operand(values["array"]), operand(values["index"]), tile,
                       _constant(values["order"]))
    return types.none


def _constant(numba_type):
    from .abstract import python_value
    return python_value(operand(numba_type))


_template(memory.bid, _infer_grid)
_template(memory.num_blocks, _infer_grid)
_template(memory.load, _infer_load)
_template(memory.store, _infer_store)


def _binary_template(op, function):
    """Typing of ``x <op> y`` on tiles of one shape (broadcasting arrives with layouts)."""

    class Template(AbstractTemplate):
        key = function
        prefer_literal = True

        def generic(self, args, kws):
            if kws or len(args) != 2 or not any(isinstance(a, TileType) for a in args):
                return None
            x, y = args
            if not (isinstance(x, TileType) and isinstance(y, TileType)):
                raise TileUnsupportedFeatureError(
                    f"{elementwise_rules.op_label(op)} of a tile and a scalar is not compiled "
                    f"yet")
            if x.shape != y.shape:
                raise TileUnsupportedFeatureError(
                    f"{elementwise_rules.op_label(op)} of tiles of shapes {x.shape} and "
                    f"{y.shape} (broadcasting) is not compiled yet")
            spec, _ = elementwise_rules.binary(op, x, y)
            return signature(TileType(spec.dtype, spec.shape, x.num_warps), x, y)

    Template.__name__ = f"Tile_{op}"
    registry.register_global(function)(Template)


BINARY_OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "minimum": None, "maximum": None,
}
for _op, _operator in BINARY_OPERATORS.items():
    _binary_template(_op, getattr(elementwise, _op))
    if _operator is not None:
        _binary_template(_op, _operator)

