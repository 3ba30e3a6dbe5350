"""Typing of ``ct.mma``, ``ct.matmul`` and ``@``."""

import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ...language import matrix
from ...rules import matrix as matrix_rules
from ..compile_state import current
from ..planning.products import result_type, matmul_accumulator
from ..planning.staged_loads import StagedTileType
from ..intrinsics import deferred_mma, product_wait, products_retired
from ..types import TileType, scalar_type
from .templates import constant_value, register_template, registry, tile_or_scalar


def infer_mma(values):
    """The result type of ``mma``."""
    x, y, acc = values["x"], values["y"], values["acc"]
    # operands of pipelined loads wait in shared memory (see staged_loads)
    x_tile, y_tile = (t.as_tile() if isinstance(t, StagedTileType) else t for t in (x, y))
    # an array, None...: the interpreter's error; a scalar: its 0-d tile fails the rule
    matrix_rules.mma(tile_or_scalar(x_tile, "mma", 1), tile_or_scalar(y_tile, "mma", 2),
                     tile_or_scalar(acc, "mma", "acc"), constant_value(values["use_fast_acc"]))
    if not all(isinstance(t, TileType) for t in (x_tile, y_tile, acc)):
        return None
    # the accumulator's type; in the tensor-core fragment layout where the product runs on
    # tensor cores (a loop-carried accumulator then takes that layout once, before the loop)
    return result_type(x, y, acc)


def infer_matmul(values):
    x, y = values["x"], values["y"]
    spec = matrix_rules.matmul(tile_or_scalar(x, "matmul", 1), tile_or_scalar(y, "matmul", 2))
    if not (isinstance(x, TileType) and isinstance(y, TileType)):
        return None
    if spec.shape == ():
        return scalar_type(spec.dtype)
    # on tensor cores where the operands fit: the result in their fragment layout
    accumulator = matmul_accumulator(x, y, spec.dtype)
    if accumulator is not None:
        return accumulator.with_dtype(spec.dtype)
    return TileType(spec.dtype, spec.shape, current().num_warps)


register_template(matrix.mma, infer_mma)
register_template(matrix.matmul, infer_matmul)


class MatmulOperator(AbstractTemplate):
    """``x @ y`` of tiles is ``ct.matmul(x, y)``."""

    key = operator.matmul
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 2 or not any(isinstance(a, TileType) for a in args):
            return None
        result = infer_matmul({"x": args[0], "y": args[1]})
        return None if result is None else signature(result, *args)

    def get_impl_key(self, sig):
        return matrix.matmul


registry.register_global(operator.matmul)(MatmulOperator)


# -- the deferred products of frontend.deferred_products ----------------------------------------
register_template(deferred_mma, infer_mma, like=matrix.mma)  # (its errors are ct.mma's)


class _ProductWaitTemplate(AbstractTemplate):
    key = product_wait
    prefer_literal = True

    def generic(self, args, kws):
        if len(args) != 2 or kws or not isinstance(args[1], types.IntegerLiteral):
            return None
        return signature(args[0], *args)


class _ProductsRetiredTemplate(AbstractTemplate):
    key = products_retired
    prefer_literal = True

    def generic(self, args, kws):
        if len(args) != 1 or kws or not isinstance(args[0], types.IntegerLiteral):
            return None
        return signature(types.none, *args)


registry.register_global(product_wait)(_ProductWaitTemplate)
registry.register_global(products_retired)(_ProductsRetiredTemplate)
