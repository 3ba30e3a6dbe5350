"""Typing templates of tile code: each calls the shared rule of its op.

A template binds the call's arguments to the public function's signature (defaults become
``Omitted``), turns the Numba types into rule operands (:mod:`.abstract`), runs the rule, and
returns the signature with the result type. The rule raises the same ``TileError`` the
interpreter raises; the compiler adds the kernel line. Layouts are chosen here: a new tile gets
the default layout, an elementwise result takes the layout of its full-shape operand, and a
reduction's result is its input's layout collapsed along the reduced axes.
"""

import inspect
import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, AttributeTemplate, Registry, \
    bound_function

from .. import dtypes as d
from ..errors import TileUnsupportedFeatureError
from ..language import debugging, elementwise, factories, memory, reductions, shapes
from ..promotion import Loose
from ..rules import elementwise as elementwise_rules
from ..rules import memory as memory_rules
from ..rules import reductions as reduction_rules
from ..rules import shapes as shape_rules
from ..rules.core import broadcast_shapes, normalize_axis, tile_shape
from .abstract import RuntimeScalar, operand, python_value
from .types import ArrayType, ConstantType, FloatLiteral, TileType, dtype_of_scalar

registry = Registry()

# The number of warps of the kernel being typed (one thread block per tile block).
NUM_WARPS = {"value": 4}


def _stub(fn):
    return getattr(fn, "__tile_op__", fn)


def _constant(numba_type):
    return python_value(operand(numba_type))


def _template(fn, infer):
    """Register a template for public function ``fn``; ``infer(values)`` gives the result
    type from the bound arguments (a dict of parameter name to Numba type), or None."""
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
            if result is None:
                return None
            ordered = [values[name] for name in pysig.parameters if name in values]
            return signature(result, *ordered).replace(pysig=numba_pysig)

    Template.__name__ = f"Tile_{fn.__name__}"
    registry.register_global(fn)(Template)
    return Template


# -- grid and memory ------------------------------------------------------------------------
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
        raise TileUnsupportedFeatureError("Storing a scalar is not compiled yet")
    memory_rules.store(operand(values["array"]), operand(values["index"]), tile,
                       _constant(values["order"]))
    return types.none


_template(memory.bid, _infer_grid)
_template(memory.num_blocks, _infer_grid)
_template(memory.load, _infer_load)
_template(memory.store, _infer_store)


# -- elementwise ----------------------------------------------------------------------------
def is_scalar(numba_type):
    return isinstance(numba_type, (types.IntegerLiteral, types.BooleanLiteral, FloatLiteral)) \
        or dtype_of_scalar(numba_type) is not None


def result_tile(dtype, operands):
    """The result type of an elementwise op: the broadcast shape, in the layout of the
    operand that has it; every other tile operand must broadcast register by register."""
    tiles = [t for t in operands if isinstance(t, TileType)]
    shape = ()
    for t in tiles:
        shape = broadcast_shapes(shape, t.shape)
    full = next((t for t in tiles if t.shape == shape), None)
    if full is None:  # e.g. (4, 1) with (1, 8): a fresh tile; operands are converted to it
        return TileType(dtype, shape, tiles[0].num_warps)
    # Operands that do not broadcast register by register are converted (lowering does it).
    return TileType(dtype, shape, full.num_warps, full.layout)


def broadcasts_in_registers(tile, full):
    """True if register r of ``tile`` holds the value broadcast to register r of ``full``."""
    if tile.layout == full.layout:
        return True
    rank = len(full.shape)
    layout = tile.layout
    for _ in range(rank - len(tile.shape)):
        layout = layout.expand_dims(0)
    axes = tuple(i for i, (a, b) in enumerate(zip(layout.shape, full.shape)) if a != b)
    return layout == full.layout.collapse(axes)


def _binary_operator_template(op, function):
    """``x <op> y`` where at least one operand is a tile (Numba types scalar-only code)."""

    class Template(AbstractTemplate):
        key = function
        prefer_literal = True

        def generic(self, args, kws):
            if kws or len(args) != 2 or not any(isinstance(a, TileType) for a in args):
                return None
            if not all(isinstance(a, TileType) or is_scalar(a) for a in args):
                return None
            spec, _ = elementwise_rules.binary(op, operand(args[0]), operand(args[1]))
            return signature(result_tile(spec.dtype, args), *args)

    Template.__name__ = f"Tile_operator_{op}"
    registry.register_global(function)(Template)


def _tile_argument(values, op):
    x = values["x"]
    if not isinstance(x, TileType):
        raise TileUnsupportedFeatureError(f"ct.{op} of a scalar is not compiled yet")
    return x


def _reject_options(op, values):
    """Rounding, flush-to-zero and NaN options that the lowering does not implement yet."""
    for name in ("rounding_mode", "flush_to_zero", "propagate_nan"):
        if name in values and not isinstance(values[name], types.Omitted):
            raise TileUnsupportedFeatureError(f"ct.{op}(..., {name}=...) is not compiled yet")


def _infer_binary(op):
    def infer(values):
        x, y = values["x"], values["y"]
        if not any(isinstance(a, TileType) for a in (x, y)):
            raise TileUnsupportedFeatureError(f"ct.{op} of two scalars is not compiled yet")
        _reject_options(op, values)
        spec, _ = elementwise_rules.binary(op, operand(x), operand(y))
        return result_tile(spec.dtype, (x, y))
    return infer


COMPILED_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "minimum": None, "maximum": None,
    "greater": operator.gt, "greater_equal": operator.ge, "less": operator.lt,
    "less_equal": operator.le, "equal": operator.eq, "not_equal": operator.ne,
}
for _op, _operator in COMPILED_BINARY.items():
    _template(getattr(elementwise, _op), _infer_binary(_op))
    if _operator is not None:
        _binary_operator_template(_op, _operator)


COMPILED_UNARY = ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "floor", "ceil", "abs",
                  "negative", "exp2", "log2")


def _infer_unary(op):
    def infer(values):
        x = _tile_argument(values, op)
        _reject_options(op, values)
        spec = elementwise_rules.unary(op, x)
        return x.with_dtype(spec.dtype)
    return infer


for _op in COMPILED_UNARY:
    _template(getattr(elementwise, _op), _infer_unary(_op))


class NegativeTemplate(AbstractTemplate):
    key = operator.neg

    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], TileType) and not kws:
            return signature(args[0].with_dtype(elementwise_rules.unary("negative",
                                                                          args[0]).dtype),
                             *args)
        return None


registry.register_global(operator.neg)(NegativeTemplate)


def _infer_where(values):
    cond, x, y = values["cond"], values["x"], values["y"]
    spec, _ = elementwise_rules.where(operand(cond), operand(x), operand(y))
    if not isinstance(cond, TileType) and not any(isinstance(v, TileType) for v in (x, y)):
        raise TileUnsupportedFeatureError("ct.where of scalars is not compiled yet")
    return result_tile(spec.dtype, (cond, x, y))


_template(elementwise.where, _infer_where)


def _infer_astype(values):
    x, dtype = values["x"], _constant(values["dtype"])
    if not isinstance(values.get("rounding_mode"), (types.Omitted, type(None))):
        raise TileUnsupportedFeatureError("astype(..., rounding_mode=...) is not compiled yet")
    if not isinstance(dtype, d.DType):
        dtype = d.to_dtype(dtype)
    if not isinstance(x, TileType):
        raise TileUnsupportedFeatureError("astype of a scalar is not compiled yet")
    return x.with_dtype(elementwise_rules.astype(x, dtype).dtype)


_template(elementwise.astype, _infer_astype)


# -- reductions -----------------------------------------------------------------------------
COMPILED_REDUCTIONS = ("sum", "max", "min", "prod")


def _infer_reduction(op):
    def infer(values):
        x = _tile_argument(values, op)
        _reject_options(op, values)
        keepdims = _constant(values["keepdims"])
        spec, axes = reduction_rules.reduction(op, x, _constant(values["axis"]), keepdims)
        layout = x.layout.collapse(axes)
        if not keepdims:  # the collapsed coordinates are all 0: dropping them moves nothing
            for axis in sorted(axes, reverse=True):
                layout = layout.slice(axis)
        return TileType(spec.dtype, spec.shape, x.num_warps, layout)
    return infer


for _op in COMPILED_REDUCTIONS:
    _template(getattr(reductions, _op), _infer_reduction(_op))


# -- shape ops ------------------------------------------------------------------------------
def _infer_reshape(values):
    x = _tile_argument(values, "reshape")
    return TileType(x.dtype, shape_rules.reshape(x.shape, _constant(values["shape"])),
                    x.num_warps)


def _infer_permute(values):
    x = _tile_argument(values, "permute")
    axes = shape_rules.permute_axes(_constant(values["axes"]), x.ndim)
    return TileType(x.dtype, tuple(x.shape[a] for a in axes), x.num_warps)


def _infer_transpose(values):
    x = _tile_argument(values, "transpose")
    axes = shape_rules.transpose_axes(x.ndim, _constant(values["axis0"]),
                                      _constant(values["axis1"]))
    return TileType(x.dtype, tuple(x.shape[a] for a in axes), x.num_warps)


def _infer_expand_dims(values):
    x = _tile_argument(values, "expand_dims")
    axis = normalize_axis(_constant(values["axis"]), x.ndim + 1)
    shape = shape_rules.expand_dims(x.shape, axis)
    return TileType(x.dtype, shape, x.num_warps, x.layout.expand_dims(axis))


def _infer_broadcast_to(values):
    x = _tile_argument(values, "broadcast_to")
    return TileType(x.dtype, shape_rules.broadcast_to(x.shape, _constant(values["shape"])),
                    x.num_warps)


_template(shapes.reshape, _infer_reshape)
_template(shapes.permute, _infer_permute)
_template(shapes.transpose, _infer_transpose)
_template(shapes.expand_dims, _infer_expand_dims)
_template(shapes.broadcast_to, _infer_broadcast_to)


class TileIndexTemplate(AbstractTemplate):
    """``t[:, None]`` and friends: axes of length 1 added, nothing moved."""

    key = operator.getitem

    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], TileType):
            return None
        tile, key = args
        items = list(key) if isinstance(key, types.BaseTuple) else [key]
        from ..errors import TileTypeError
        explicit = sum(isinstance(i, types.SliceType) for i in items)
        expanded = []
        for item in items:  # '...' stands for the ':' that the other entries leave out
            if isinstance(item, types.EllipsisType):
                expanded.extend([types.slice2_type] * max(tile.ndim - explicit, 0))
            else:
                expanded.append(item)
        items = expanded
        layout, axis, full_slices = tile.layout, 0, 0
        for item in items:
            if isinstance(item, types.NoneType):
                layout = layout.expand_dims(axis)
                axis += 1
            elif isinstance(item, types.SliceType):
                axis += 1
                full_slices += 1
            else:
                raise TileTypeError(f"Tiles can only be indexed with ':' and None, got {item}")
        if full_slices > tile.ndim:
            raise TileTypeError(f"Too many ':' for a tile of rank {tile.ndim}")
        return signature(TileType(tile.dtype, layout.shape, tile.num_warps, layout), *args)


registry.register_global(operator.getitem)(TileIndexTemplate)


# -- compile-time helpers -------------------------------------------------------------------
def _compile_time_value(numba_type, what):
    """The value of a compile-time constant argument, or a TileTypeError."""
    from ..errors import TileTypeError
    if isinstance(numba_type, types.BooleanLiteral):
        return numba_type.literal_value
    try:
        return _constant(numba_type)
    except TileTypeError:
        raise TileTypeError(f"{what} needs a compile-time constant, got a run-time "
                            f"{numba_type}") from None


def _infer_static_assert(values):
    from ..errors import TileStaticAssertionError, TileTypeError
    condition = _compile_time_value(values["condition"], "static_assert()")
    if isinstance(condition, RuntimeScalar):
        raise TileTypeError(f"static_assert() needs a compile-time constant condition, got a "
                            f"{condition.describe()}")
    if not condition:
        message = _constant(values["message"])
        raise TileStaticAssertionError(message if message is not None
                                       else "static assertion failed")
    return types.none


def _infer_ensure_constant(values):
    from ..errors import TileTypeError
    value = values["value"]
    if not isinstance(value, (types.Literal, ConstantType, types.Omitted)) and not (
            isinstance(value, types.BaseTuple) and all(isinstance(v, types.Literal)
                                                       for v in value)):
        raise TileTypeError(f"ensure_constant() needs a compile-time constant, got a run-time "
                            f"{value}")
    return value


_template(debugging.static_assert, _infer_static_assert)
_template(debugging.ensure_constant, _infer_ensure_constant)
_template(debugging.static_eval, lambda values: _infer_ensure_constant(
    {"value": values["expr"]}))


# -- factories ------------------------------------------------------------------------------
def _infer_full(values):
    shape = tile_shape(_constant(values["shape"]), "shape")
    dtype = _constant(values["dtype"])
    fill = values["fill_value"]
    if not is_scalar(fill):
        raise TileUnsupportedFeatureError("full() with a tile fill value is not compiled")
    fill_op = operand(fill)
    if isinstance(fill_op, Loose):
        from ..promotion import check_constant_fits
        if not (isinstance(fill_op.value, float) and not dtype.is_float):
            check_constant_fits(fill_op.value, dtype)
    return TileType(dtype, shape, NUM_WARPS["value"])


def _infer_zeros(values):
    return TileType(_constant(values["dtype"]), tile_shape(_constant(values["shape"]), "shape"),
                    NUM_WARPS["value"])


_template(factories.full, _infer_full)
_template(factories.zeros, _infer_zeros)
_template(factories.ones, _infer_zeros)


class ConstantComparison(AbstractTemplate):
    """``a.dtype == ct.float32`` and the like fold to a constant bool."""

    key = operator.eq

    def generic(self, args, kws):
        if len(args) == 2 and all(isinstance(a, ConstantType) for a in args):
            equal = args[0].value == args[1].value
            return signature(types.BooleanLiteral(equal if self.key is operator.eq
                                                  else not equal), *args)
        return None


registry.register_global(operator.eq)(ConstantComparison)


class ConstantInequality(ConstantComparison):
    key = operator.ne


registry.register_global(operator.ne)(ConstantInequality)


# -- attributes and methods -----------------------------------------------------------------
@registry.register_attr
class TileAttributes(AttributeTemplate):
    key = TileType

    def resolve_dtype(self, tile):
        return ConstantType(tile.dtype)

    def resolve_ndim(self, tile):
        return types.IntegerLiteral(len(tile.shape))

    def resolve_shape(self, tile):
        return types.Tuple([types.IntegerLiteral(n) for n in tile.shape])

    @bound_function("tile.reshape")
    def resolve_reshape(self, tile, args, kws):
        return signature(_infer_reshape({"x": tile, "shape": args[0]}), *args)

    @bound_function("tile.permute")
    def resolve_permute(self, tile, args, kws):
        return signature(_infer_permute({"x": tile, "axes": args[0]}), *args)

    @bound_function("tile.transpose")
    def resolve_transpose(self, tile, args, kws):
        bound = dict(zip(("axis0", "axis1"), args), **kws)
        result = _infer_transpose({"x": tile,
                                   "axis0": bound.get("axis0", types.Omitted(None)),
                                   "axis1": bound.get("axis1", types.Omitted(None))})
        return signature(result, *args)

    @bound_function("tile.astype")
    def resolve_astype(self, tile, args, kws):
        bound = dict(zip(("dtype",), args), **kws)
        result = _infer_astype({"x": tile, "dtype": bound["dtype"],
                                "rounding_mode": bound.get("rounding_mode",
                                                           types.Omitted(None))})
        return signature(result, *args)


@registry.register_attr
class ArrayAttributes(AttributeTemplate):
    key = ArrayType

    def resolve_dtype(self, array):
        return ConstantType(array.dtype)

    def resolve_ndim(self, array):
        return types.IntegerLiteral(array.ndim)

    def resolve_shape(self, array):
        return types.UniTuple(array.index, array.ndim)

    def resolve_strides(self, array):
        return types.UniTuple(array.index, array.ndim)


@registry.register_attr
class ConstantAttributes(AttributeTemplate):
    """``x.dtype.bitwidth`` and friends on constants are constants too."""

    key = ConstantType

    def generic_resolve(self, constant, attr):
        if attr.startswith("_") or not hasattr(constant.value, attr):
            return None
        value = getattr(constant.value, attr)
        if isinstance(value, bool):
            return types.BooleanLiteral(value)
        if isinstance(value, int):
            return types.IntegerLiteral(value)
        if isinstance(value, (str, d.DType)) or value is None:
            return ConstantType(value)
        return None


