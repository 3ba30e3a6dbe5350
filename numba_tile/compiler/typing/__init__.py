"""Typing templates of tile code: each calls the shared rule of its op.

A template binds the call's arguments to the public function's signature (defaults become
``Omitted``), turns the Numba types into rule operands (:mod:`.abstract`), runs the rule, and
returns the signature with the result type. The rule raises the same ``TileError`` the
interpreter raises; the compiler adds the kernel line. Layouts are chosen here: a new tile gets
the default layout, an elementwise result takes the layout of its full-shape operand, and a
reduction's result is its input's layout collapsed along the reduced axes.
"""

import inspect
import math
import operator

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, AttributeTemplate, Registry, \
    bound_function

from ... import dtypes as d
from ...enums import PaddingMode
from ...errors import TileTypeError, TileUnsupportedFeatureError
from ...interpreter import tile_math
from ...language import debugging, elementwise, factories, matrix, memory, reductions, shapes
from ...promotion import Loose
from ...rules import elementwise as elementwise_rules
from ...rules import matrix as matrix_rules
from ...rules import memory as memory_rules
from ...rules import reductions as reduction_rules
from ...rules import shapes as shape_rules
from ...rules.core import broadcast_shapes, normalize_axis, tile_shape
from ..lowering import arithmetic
from ..compilation import current
from ..abstract import RuntimeScalar, constant_of, operand, python_value
from ..types import ArrayType, ConstantType, FloatLiteral, TiledViewType, TileType, \
    TypedConstant, default_layout, dtype_of_scalar, scalar_type, storage_scalar_type

registry = Registry()


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
        return scalar_type(spec.dtype)
    return TileType(spec.dtype, spec.shape, current().num_warps)


def _infer_store(values):
    tile = values["tile"]
    if not (isinstance(tile, TileType) or is_scalar(tile)):
        return None
    memory_rules.store(operand(values["array"]), operand(values["index"]), operand(tile),
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


def is_constant(numba_type):
    return isinstance(numba_type, (types.Literal, types.Omitted, ConstantType))


def merged_layout(shape, tiles):
    """The layout of a ``shape`` tile broadcast from ``tiles`` (none of that shape) in which
    each of them broadcasts register by register, or None (the default layout). Each bit of
    a register, lane or warp index maps to the coordinates the tiles give it on the axes
    where they are full: a row index ``(m, 1)`` and a column index ``(1, n)`` both sliced
    from one ``(m, n)`` layout (a product's accumulator, see :mod:`~numba_tile.compiler.frontend.index_layouts`) merge
    back into it. None where the tiles differ in their register, lane or warp counts,
    disagree on an axis, or leave an element of the result without a location.

    >>> from numba_tile.compiler.types import TileType, default_layout
    >>> from numba_tile.compiler.typing import merged_layout
    >>> from numba_tile import dtypes as d
    >>> full = default_layout((16, 32), 4)
    >>> rows = TileType(d.int32, (16, 1), 4, full.collapse((1,)))
    >>> columns = TileType(d.int32, (1, 32), 4, full.collapse((0,)))
    >>> merged_layout((16, 32), [rows, columns]) == full
    True
    """
    from ...layouts import HARDWARE_DIMS, LinearLayout
    rank = len(shape)
    bases = {}
    for dim in HARDWARE_DIMS:
        bits = {len(t.layout.bases[dim]) for t in tiles}
        if len(bits) != 1:
            return None
        vectors = []
        for bit in range(bits.pop()):
            vector = [0] * rank
            taken = [False] * rank
            for t in tiles:
                lead = rank - len(t.shape)
                for axis, (n, c) in enumerate(zip(t.shape, t.layout.bases[dim][bit])):
                    if n == 1:
                        continue
                    if taken[lead + axis] and vector[lead + axis] != c:
                        return None
                    vector[lead + axis], taken[lead + axis] = c, True
            vectors.append(tuple(vector))
        bases[dim] = vectors
    layout = LinearLayout(shape, bases)
    return layout if layout.is_surjective() else None


def result_tile(dtype, operands):
    """The result type of an elementwise op: the broadcast shape, in the layout of the
    operand that has it; every other tile operand must broadcast register by register.
    Without a tile operand the result is a run-time scalar."""
    tiles = [t for t in operands if isinstance(t, TileType)]
    if not tiles:
        return scalar_type(dtype)
    shape = ()
    for t in tiles:
        shape = broadcast_shapes(shape, t.shape)
    fulls = [t for t in tiles if t.shape == shape]
    if not fulls:  # e.g. (4, 1) with (1, 8): a fresh tile; operands are converted to it
        # unless their layouts are slices of one layout of the result: then that one
        return TileType(dtype, shape, tiles[0].num_warps, merged_layout(shape, tiles))
    # a layout other than the default one was computed (by a product, a reduction), most
    # likely in a loop whose other values share it: keep it (as TileType.unify does), so that
    # ``m = ct.maximum(m, ct.max(s, axis=1, keepdims=True))`` converts nothing in the loop
    full = next((t for t in fulls if t.layout != default_layout(shape, t.num_warps)),
                fulls[0])
    # Operands that do not broadcast register by register are converted (lowering does it).
    return TileType(dtype, shape, full.num_warps, full.layout)


def _tile_argument(values, op):
    x = values["x"]
    if not isinstance(x, TileType):
        raise TileUnsupportedFeatureError(f"ct.{op} of a scalar is not compiled yet")
    return x


def float_options(op, values, result_dtype):
    """The rounding, flush-to-zero and NaN options of a call (compile-time constants),
    checked by the shared rule."""
    rounding_mode = _constant(values.get("rounding_mode", types.Omitted(None)))
    flush_to_zero = _compile_time_value(values.get("flush_to_zero", types.Omitted(False)),
                                        f"{op}(flush_to_zero=...)")
    propagate_nan = _compile_time_value(values.get("propagate_nan", types.Omitted(False)),
                                        f"{op}(propagate_nan=...)")
    elementwise_rules.check_float_options(op, result_dtype, rounding_mode, flush_to_zero)
    return arithmetic.Options(rounding_mode, bool(flush_to_zero), bool(propagate_nan))


def _folded(result):
    """The constant type of an op folded on compile-time constants (an interpreter Tile or
    a loose Python number)."""
    from ...interpreter.tile import Tile
    from ..contexts import literal_type
    if isinstance(result, Tile) and result.ndim == 0:  # strictly typed: keeps its dtype
        return TypedConstant(result.dtype, result.constant_value())
    value = getattr(result, "item", lambda: result)()
    return literal_type(value.value if isinstance(value, Loose) else value)


def _infer_binary(op):
    def infer(values):
        x, y = values["x"], values["y"]
        if not all(isinstance(a, TileType) or is_scalar(a) for a in (x, y)):
            return None
        spec, _ = elementwise_rules.binary(op, operand(x), operand(y))
        float_options(op, values, spec.dtype)
        if is_constant(x) and is_constant(y):  # folded as the interpreter does
            return _folded(elementwise.binary(op, _constant(x), _constant(y)))
        return result_tile(spec.dtype, (x, y))
    return infer


def _infer_unary(op):
    def infer(values):
        x = values["x"]
        if not (isinstance(x, TileType) or is_scalar(x)):
            return None
        spec = elementwise_rules.unary(op, operand(x))
        float_options(op, values, spec.dtype)
        if is_constant(x):
            return _folded(elementwise.unary(op, _constant(x)))
        return result_tile(spec.dtype, (x,))
    return infer


# Python operators on tiles (and on run-time scalars, where tile semantics replace Numba's):
# each is implemented by the public function of the same op.
BINARY_OPERATORS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul",
    operator.truediv: "truediv", operator.floordiv: "floordiv", operator.mod: "mod",
    operator.pow: "pow", operator.and_: "bitwise_and", operator.or_: "bitwise_or",
    operator.xor: "bitwise_xor", operator.lshift: "bitwise_lshift",
    operator.rshift: "bitwise_rshift", operator.gt: "greater", operator.ge: "greater_equal",
    operator.lt: "less", operator.le: "less_equal", operator.eq: "equal",
    operator.ne: "not_equal",
}
INPLACE_OPERATORS = {
    operator.iadd: "add", operator.isub: "sub", operator.imul: "mul",
    operator.itruediv: "truediv", operator.ifloordiv: "floordiv", operator.imod: "mod",
    operator.ipow: "pow", operator.iand: "bitwise_and", operator.ior: "bitwise_or",
    operator.ixor: "bitwise_xor", operator.ilshift: "bitwise_lshift",
    operator.irshift: "bitwise_rshift",
}
UNARY_OPERATORS = {operator.neg: "negative", operator.invert: "bitwise_not", abs: "abs"}
MATH_UNARY = {getattr(math, name): op for name, op in tile_math.UNARY.items()
              if hasattr(math, name)}
MATH_BINARY = {getattr(math, name): op for name, op in tile_math.BINARY.items()}
# ops without a public function of their own: the lowering is keyed by these names
PRIVATE_OPS = {}


def implementation_of(op):
    """The function whose lowering implements elementwise ``op`` (the public function, or a
    private key for ops that only ``math`` reaches)."""
    fn = getattr(elementwise, op, None)
    if fn is not None and hasattr(fn, "__tile_op__"):
        return fn
    return PRIVATE_OPS.setdefault(op, f"numba_tile.{op}")


def _operator_template(function, op, infer, arity, *, as_float=False):
    """``x <op> y`` (or ``math.f(x)``) where an operand is a tile or a run-time scalar.

    These templates come before Numba's own (``tile_first``), so that ``bid + 1`` is an
    int32 as in the tile model, not Numba's int64; constant operands are folded earlier.
    """
    names = ("x", "y")[:arity]

    class Template(AbstractTemplate):
        key = function
        prefer_literal = True
        tile_first = True

        def generic(self, args, kws):
            if kws or len(args) != arity:
                return None
            if all(is_constant(a) for a in args) and as_float:
                folded = getattr(tile_math.tile_math, function.__name__)(
                    *[_constant(a) for a in args])
                return signature(_folded(folded), *args)
            if all(is_constant(a) for a in args) and not any(
                    isinstance(a, TypedConstant) for a in args):
                return None  # folded by the typing context (typed constants fold below)
            if not any(isinstance(a, TileType) for a in args) and not all(
                    is_scalar(a) for a in args):
                return None
            if as_float:  # math functions take integer arguments as float32 (C's rule)
                args = tuple(_as_float_type(a) for a in args)
            result = infer(dict(zip(names, args)))
            return None if result is None else signature(result, *args)

        def get_impl_key(self, sig):
            return implementation_of(op)

    Template.__name__ = f"Tile_operator_{op}"
    registry.register_global(function)(Template)


def _as_float_type(numba_type):
    if isinstance(numba_type, TileType) and not numba_type.dtype.is_float:
        return numba_type.with_dtype(d.float32)
    if is_scalar(numba_type) and not isinstance(numba_type, FloatLiteral) and \
            not isinstance(numba_type, TileType):
        dtype = dtype_of_scalar(numba_type)
        if dtype is None or not dtype.is_float:
            return types.float32
    return numba_type


for _function, _op in {**BINARY_OPERATORS, **INPLACE_OPERATORS}.items():
    _operator_template(_function, _op, _infer_binary(_op), 2)
for _function, _op in UNARY_OPERATORS.items():
    _operator_template(_function, _op, _infer_unary(_op), 1)
for _function, _op in MATH_UNARY.items():
    _operator_template(_function, _op, _infer_unary(_op), 1, as_float=True)
for _function, _op in MATH_BINARY.items():
    _operator_template(_function, _op, _infer_binary(_op), 2, as_float=True)

for _op in elementwise_rules.BINARY_OPS:
    if hasattr(elementwise, _op):
        _template(getattr(elementwise, _op), _infer_binary(_op))
for _op in elementwise_rules.UNARY_OPS:
    if hasattr(elementwise, _op):
        _template(getattr(elementwise, _op), _infer_unary(_op))


def _minmax_template(function, op):
    """Builtin ``min``/``max`` of two or more tiles or run-time scalars."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if not kws and len(args) >= 2 and all(is_constant(a) for a in args):
                return signature(_folded(function(*[_constant(a) for a in args])), *args)
            if kws or len(args) < 2 or not all(
                    isinstance(a, TileType) or is_scalar(a) for a in args):
                return None
            if not any(isinstance(a, TileType) for a in args) and len(args) != 2:
                return None
            result = args[0]
            for other in args[1:]:
                result = _infer_binary(op)({"x": result, "y": other})
            return signature(result, *args)

        def get_impl_key(self, sig):
            if isinstance(sig.return_type, types.Literal):
                return "numba_tile.folded"
            return f"numba_tile.builtin_{function.__name__}"

    registry.register_global(function)(Template)


_minmax_template(min, "minimum")
_minmax_template(max, "maximum")


def _infer_where(values):
    cond, x, y = values["cond"], values["x"], values["y"]
    spec, _ = elementwise_rules.where(operand(cond), operand(x), operand(y))
    return result_tile(spec.dtype, (cond, x, y))


_template(elementwise.where, _infer_where)


def _infer_astype(values):
    x, dtype = values["x"], _constant(values["dtype"])
    if not isinstance(dtype, d.DType):
        dtype = d.to_dtype(dtype)
    rounding_mode = _constant(values.get("rounding_mode", types.Omitted(None)))
    from ...enums import RoundingMode
    if rounding_mode is not None and not isinstance(rounding_mode, RoundingMode):
        from ...errors import TileTypeError
        raise TileTypeError(f"rounding_mode must be a ct.RoundingMode, got {rounding_mode!r}")
    if not (isinstance(x, TileType) or is_scalar(x)):
        return None
    spec = elementwise_rules.astype(operand(x), dtype)
    if isinstance(x, TileType):
        storage_scalar_type(spec.dtype)  # the compiler must have the dtype
        return x.with_dtype(spec.dtype)
    return scalar_type(spec.dtype)


_template(elementwise.astype, _infer_astype)


# -- reductions -----------------------------------------------------------------------------
COMPILED_REDUCTIONS = ("sum", "max", "min", "prod", "argmax", "argmin")


def _infer_reduction(op):
    def infer(values):
        x = _tile_argument(values, op)
        float_options(op, values, x.dtype if x.dtype.is_float else d.float32)
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
    x = values["x"]
    dtype = dtype_of_scalar(x)
    if dtype is not None and not isinstance(x, types.Literal):  # a run-time scalar: (1, ...)
        return TileType(dtype, shape_rules.reshape((), _constant(values["shape"])),
                        current().num_warps)
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


def inserted_axes(ndim, key):
    """The axes of the result of indexing a tile of rank ``ndim`` with ``key`` (the Numba
    type of ``:``, ``None``, ``...`` or a tuple of them) that ``None`` inserts."""
    items = list(key) if isinstance(key, types.BaseTuple) else [key]
    from ...errors import TileTypeError
    explicit = sum(isinstance(i, types.SliceType) for i in items)
    expanded = []
    for item in items:  # '...' stands for the ':' that the other entries leave out
        if isinstance(item, types.EllipsisType):
            expanded.extend([types.slice2_type] * max(ndim - explicit, 0))
        else:
            expanded.append(item)
    axes, axis, full_slices = [], 0, 0
    for item in expanded:
        if isinstance(item, types.NoneType):
            axes.append(axis)
            axis += 1
        elif isinstance(item, types.SliceType):
            axis += 1
            full_slices += 1
        else:
            raise TileTypeError(f"Tiles can only be indexed with ':' and None, got {item}")
    if full_slices > ndim:
        raise TileTypeError(f"Too many ':' for a tile of rank {ndim}")
    return axes


class TileIndexTemplate(AbstractTemplate):
    """``t[:, None]`` and friends: axes of length 1 added, nothing moved."""

    key = operator.getitem

    def generic(self, args, kws):
        if len(args) != 2 or not isinstance(args[0], TileType):
            return None
        tile, key = args
        layout = tile.layout
        for axis in inserted_axes(tile.ndim, key):
            layout = layout.expand_dims(axis)
        return signature(TileType(tile.dtype, layout.shape, tile.num_warps, layout), *args)


registry.register_global(operator.getitem)(TileIndexTemplate)


# -- compile-time helpers -------------------------------------------------------------------
def _compile_time_value(numba_type, what):
    """The value of a compile-time constant argument, or a TileTypeError."""
    from ...errors import TileTypeError
    if isinstance(numba_type, types.BooleanLiteral):
        return numba_type.literal_value
    try:
        return _constant(numba_type)
    except TileTypeError:
        raise TileTypeError(f"{what} needs a compile-time constant, got a run-time "
                            f"{numba_type}") from None


def _infer_static_assert(values):
    from ...errors import TileStaticAssertionError, TileTypeError
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
    from ...errors import TileTypeError
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
        from ...promotion import check_constant_fits
        if not (isinstance(fill_op.value, float) and not dtype.is_float):
            check_constant_fits(fill_op.value, dtype)
    return TileType(dtype, shape, current().num_warps)


def _infer_zeros(values):
    return TileType(_constant(values["dtype"]), tile_shape(_constant(values["shape"]), "shape"),
                    current().num_warps)


_template(factories.full, _infer_full)
_template(factories.zeros, _infer_zeros)
_template(factories.ones, _infer_zeros)


class ConstantComparison(AbstractTemplate):
    """``a.dtype == ct.float32``, ``MODE == "causal"`` (a ``Constant[str]`` parameter) and
    the like fold to a constant bool."""

    key = operator.eq

    def generic(self, args, kws):
        if len(args) == 2 and any(isinstance(a, ConstantType) for a in args) and all(
                isinstance(a, (ConstantType, types.StringLiteral)) for a in args):
            equal = constant_of(args[0]) == constant_of(args[1])
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




# -- more factories, grid helpers and shape ops ----------------------------------------------
def _check_constant_fits(numba_type, dtype):
    """A constant scalar argument must fit the dtype it becomes (as in the interpreter)."""
    if not is_constant(numba_type):
        return
    value = _constant(numba_type)
    if isinstance(value, (bool, int, float)) and not (isinstance(value, float) and
                                                      not dtype.is_float):
        from ...promotion import check_constant_fits
        check_constant_fits(value, dtype)


def _infer_arange(values):
    (n,) = tile_shape(_constant(values["size"]), "arange size")
    dtype = d.to_dtype(_constant(values["dtype"]))
    for name in ("start", "step"):
        value = values[name]
        if not (is_scalar(value) or isinstance(value, types.Omitted) or (
                isinstance(value, TileType) and value.shape == ())):
            from ...errors import TileTypeError
            raise TileTypeError(f"{name} must be a scalar, got {value}")
        _check_constant_fits(value, dtype)
    scalar_type(dtype)
    return TileType(dtype, (n,), current().num_warps)


def _infer_astile(values):
    dtype = d.to_dtype(_constant(values["dtype"]))
    value = values["value"]
    scalar_type(dtype)
    if isinstance(value, TileType):
        return value.with_dtype(dtype)
    if is_scalar(value):
        _check_constant_fits(value, dtype)
        return TileType(dtype, (), current().num_warps)
    constant = _constant(value)  # nested tuples of constants: checked by the interpreter
    tile = factories.astile.__tile_op__(constant, dtype=dtype)
    return TileType(dtype, tile.shape, current().num_warps)


def _infer_num_tiles(values):
    array = operand(values["array"])
    memory_rules.require_array(array)
    shape = tile_shape(_constant(values["shape"]), "shape")
    memory_rules.normalize_order(_constant(values["order"]), array.ndim)
    memory_rules.slice_axis(_constant(values["axis"]), array.ndim)
    if len(shape) != array.ndim:
        from ...errors import TileValueError
        raise TileValueError(f"shape {shape} must have the array's rank {array.ndim}")
    return array.index


def _infer_cdiv(values):
    x, y = values["x"], values["y"]
    if is_constant(x) and is_constant(y):
        return _folded(memory.cdiv(_constant(x), _constant(y)))
    return _infer_binary("floordiv")({"x": x, "y": y})


def _infer_extract(values):
    x = _tile_argument(values, "extract")
    index = values["index"]
    items = tuple(index) if isinstance(index, types.BaseTuple) else (index,)
    sub = shape_rules.extract(x.shape, tuple(operand(i) for i in items),
                              _constant(values["shape"]))
    if not all(is_scalar(i) for i in items):
        from ...errors import TileTypeError
        raise TileTypeError(f"Index entries must be integers, got {index}")
    return TileType(x.dtype, sub, x.num_warps)


def _infer_insert(values):
    x = _tile_argument(values, "insert")
    value, index = values["value"], values["index"]
    items = tuple(index) if isinstance(index, types.BaseTuple) else (index,)
    if not isinstance(value, TileType):
        raise TileUnsupportedFeatureError("insert() of a scalar value is not compiled yet")
    shape_rules.extract(x.shape, tuple(operand(i) for i in items), value.shape)
    return x


def _infer_cat(values):
    tiles = values["tiles"]
    from ...errors import TileTypeError
    if not isinstance(tiles, types.BaseTuple) or len(tiles) != 2 or not all(
            isinstance(t, TileType) for t in tiles):
        raise TileTypeError(f"cat() needs a tuple of two tiles, got {tiles}")
    a, b = tiles
    if a.dtype is not b.dtype:
        raise TileTypeError(f"cat() needs tiles of one dtype, got {a.dtype} and {b.dtype}")
    shape, _ = shape_rules.cat(a.shape, b.shape, _constant(values["axis"]))
    return TileType(a.dtype, shape, a.num_warps)


def _infer_bitcast(values):
    x = _tile_argument(values, "bitcast")
    dtype = d.to_dtype(_constant(values["dtype"]))
    if dtype.bitwidth != x.dtype.bitwidth or dtype.storage.itemsize != \
            x.dtype.storage.itemsize:
        from ...errors import TileTypeError
        raise TileTypeError(f"bitcast() needs dtypes of the same width, got {x.dtype} and "
                            f"{dtype}")
    scalar_type(dtype)
    return x.with_dtype(dtype)


_template(factories.arange, _infer_arange)
_template(factories.astile, _infer_astile)
_template(memory.num_tiles, _infer_num_tiles)
_template(memory.cdiv, _infer_cdiv)
_template(shapes.extract, _infer_extract)
_template(shapes.insert, _infer_insert)
_template(shapes.cat, _infer_cat)
_template(shapes.bitcast, _infer_bitcast)


class DivmodTemplate(AbstractTemplate):
    """Builtin ``divmod`` of tiles: ``(x // y, x % y)``."""

    key = divmod
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 2 or not any(isinstance(a, TileType) for a in args):
            return None
        values = {"x": args[0], "y": args[1]}
        return signature(types.Tuple([_infer_binary("floordiv")(values),
                                      _infer_binary("mod")(values)]), *args)

    def get_impl_key(self, sig):
        return "numba_tile.divmod"


registry.register_global(divmod)(DivmodTemplate)
registry.register_global(elementwise.divmod)(type("Tile_divmod", (DivmodTemplate,),
                                                  {"key": elementwise.divmod}))


def _method(name, infer, function=None):
    """A method of tiles: ``function`` (the public op, default ``ct.<name>``) with the tile
    as its first argument."""
    if function is None:
        function = getattr(shapes, name, None) or getattr(elementwise, name)
    public = inspect.signature(_stub(function))
    parameters = list(public.parameters.values())[1:]
    pysig = inspect.Signature([p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
                               for p in parameters])

    def resolve(self, tile, args, kws):
        bound = pysig.bind(*args, **kws)
        values = {"x": tile}
        for parameter in parameters:
            values[parameter.name] = bound.arguments.get(
                parameter.name, types.Omitted(parameter.default))
        ordered = [values[p.name] for p in parameters]
        return signature(infer(values), *ordered).replace(pysig=pysig)
    return bound_function(f"tile.{name}")(resolve)


def _infer_item(values):
    x = _tile_argument(values, "item")
    if math.prod(x.shape) != 1:
        from ...errors import TileValueError
        raise TileValueError(f"item() needs a tile of one element, got shape {x.shape}")
    return scalar_type(x.dtype)


def _item_stub(x, /):
    """``Tile.item()``."""


TileAttributes.resolve_extract = _method("extract", _infer_extract)
TileAttributes.resolve_insert = _method("insert", _infer_insert)
TileAttributes.resolve_item = _method("item", _infer_item, _item_stub)
TileAttributes.resolve_astype = _method("astype", _infer_astype)


class ScalarAttributes(AttributeTemplate):
    """Scalars are 0-d tiles: ``v.dtype``, ``v.shape``, ``v.ndim``, ``v.item()`` and
    ``v.astype(dtype)`` (literals have their loose constant's dtype: int32, float32, ...)."""

    def resolve_dtype(self, scalar):
        value = operand(scalar)
        return ConstantType(value.concrete_dtype() if isinstance(value, Loose) else value.dtype)

    def resolve_ndim(self, scalar):
        return types.IntegerLiteral(0)

    def resolve_shape(self, scalar):
        return types.Tuple([])

    @bound_function("scalar.item")
    def resolve_item(self, scalar, args, kws):
        if args or kws:
            return None
        return signature(scalar)

    resolve_astype = _method("astype", _infer_astype)


for _kind in (types.Number, types.Boolean, FloatLiteral, TypedConstant):
    registry.register_attr(type(f"ScalarAttributes_{_kind.__name__}", (ScalarAttributes,),
                                {"key": _kind}))


def _converter_template(function, dtype):
    """``int(x)``, ``float(x)`` and ``bool(x)`` of a tile or run-time scalar: ``astype`` to
    int32, float32 or bool_ (the tile model's types for Python's)."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if kws or len(args) != 1 or is_constant(args[0]) or not (
                    isinstance(args[0], TileType) or is_scalar(args[0])):
                return None
            result = _infer_astype({"x": args[0], "dtype": ConstantType(dtype)})
            return signature(result, *args)

        def get_impl_key(self, sig):
            return f"numba_tile.convert_to_{dtype.name}"

    registry.register_global(function)(Template)



def _builtin_fold_template(function):
    """``int(2.5)``, ``abs(-3)`` ... of compile-time constants are constants."""

    class Template(AbstractTemplate):
        key = function
        tile_first = True
        prefer_literal = True

        def generic(self, args, kws):
            if kws or not args or not all(is_constant(a) for a in args):
                return None
            try:
                value = function(*[_constant(a) for a in args])
            except Exception:  # let Numba's typing report it
                return None
            return signature(_folded(value), *args)

        def get_impl_key(self, sig):
            return "numba_tile.folded"

    registry.register_global(function)(Template)


for _function in (int, float, bool, abs):
    _builtin_fold_template(_function)
# after the folds: a template that declines constants is retried with them unliteral
for _function, _dtype in ((int, d.int32), (float, d.float32), (bool, d.bool_)):
    _converter_template(_function, _dtype)


_NOT_A_CONSTANT = object()


def type_dtype_call(dtype, args, kws):
    """The signature of ``ct.int16(5)``: a strictly typed constant (checked and converted
    by the interpreter's rule); ``ct.float16(t)`` of a tile or run-time scalar is
    ``astype``."""
    if kws or len(args) != 1:
        raise TileTypeError(f"{dtype}() takes exactly one argument")
    (value,) = args
    constant = constant_of(value, _NOT_A_CONSTANT)
    if constant is not _NOT_A_CONSTANT:
        from ...interpreter.tile import make_constant
        return signature(_folded(make_constant(constant, dtype)), *args)
    if not (isinstance(value, TileType) or is_scalar(value)):
        raise TileTypeError(f"{dtype}() needs a number, a scalar or a tile, got {value}")
    return signature(_infer_astype({"x": value, "dtype": ConstantType(dtype)}), *args)


# -- array views ------------------------------------------------------------------------------
def _bound(method, parameters, infer):
    """A method whose arguments bind to ``parameters`` (name, default) like a Python def."""
    pysig = inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                 default=default)
                               for name, default in parameters])

    def resolve(self, owner, args, kws):
        bound = pysig.bind(*args, **kws)
        values = {name: bound.arguments.get(name, types.Omitted(default))
                  for name, default in parameters}
        result = infer(owner, values)
        return signature(result, *values.values()).replace(pysig=pysig)
    return bound_function(method)(resolve)


_EMPTY = inspect.Parameter.empty


def _infer_slice(array, values):
    axis = memory_rules.slice_axis(_compile_time_value(values["axis"], "slice(axis=...)"),
                                   array.ndim)
    for name in ("start", "stop"):
        memory_rules.index_value(operand(values[name]), name)
    # a run-time start along the last axis can move the data off its 16-byte alignment
    return array.with_alignment(False) if axis == array.ndim - 1 else array


def _infer_tiled_view(array, values):
    shape, steps, padding = memory_rules.tiled_view(
        array, _constant(values["tile_shape"]), _constant(values["padding_mode"]),
        _constant(values["traversal_steps"]))
    return TiledViewType(array, shape, steps, padding)


ArrayAttributes.resolve_slice = _bound("array.slice", (("axis", _EMPTY), ("start", _EMPTY),
                                                       ("stop", _EMPTY)), _infer_slice)
ArrayAttributes.resolve_tiled_view = _bound(
    "array.tiled_view", (("tile_shape", _EMPTY), ("padding_mode", PaddingMode.UNDETERMINED),
                         ("traversal_steps", None)), _infer_tiled_view)


def _infer_view_load(view, values):
    memory_rules.tile_index(operand(values["index"]), view.array.ndim)
    return TileType(view.dtype, view.tile_shape, current().num_warps)


def _infer_view_store(view, values):
    memory_rules.tile_index(operand(values["index"]), view.array.ndim)
    tile = values["tile"]
    if not (isinstance(tile, TileType) or is_scalar(tile)):
        return None
    memory_rules.view_store_tile(view, operand(tile))
    return types.none


def _infer_view_num_tiles(view, values):
    memory_rules.slice_axis(_compile_time_value(values["axis"], "num_tiles(axis=...)"),
                            view.array.ndim)
    return view.array.index


_VIEW_OPTIONS = (("check_bounds", True), ("latency", None), ("allow_tma", None))


@registry.register_attr
class TiledViewAttributes(AttributeTemplate):
    key = TiledViewType

    def resolve_dtype(self, view):
        return ConstantType(view.dtype)

    def resolve_tile_shape(self, view):
        return types.Tuple([types.IntegerLiteral(n) for n in view.tile_shape])

    def resolve_traversal_steps(self, view):
        return types.Tuple([types.IntegerLiteral(n) for n in view.steps])

    def resolve_padding_mode(self, view):
        return ConstantType(view.padding_mode)

    resolve_load = _bound("view.load", (("index", _EMPTY),) + _VIEW_OPTIONS, _infer_view_load)
    resolve_store = _bound("view.store", (("index", _EMPTY), ("tile", _EMPTY)) + _VIEW_OPTIONS,
                           _infer_view_store)
    resolve_num_tiles = _bound("view.num_tiles", (("axis", _EMPTY),), _infer_view_num_tiles)


class TupleConcatenation(AbstractTemplate):
    """``a + b`` of tuples keeps constant entries constant (``f(t, *axes)`` is compiled as
    ``(t,) + axes``, and the axes must stay compile-time constants)."""

    key = operator.add
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 2 or not all(isinstance(a, types.BaseTuple) for a in args):
            return None
        return signature(types.BaseTuple.from_types(tuple(args[0]) + tuple(args[1])), *args)


registry.register_global(operator.add)(TupleConcatenation)


class TupleOfTuple(AbstractTemplate):
    """``tuple(t)`` of a tuple is ``t`` itself, constant entries included (``f(x, *axes)`` is
    compiled as ``(x,) + tuple(axes)``)."""

    key = tuple
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], types.BaseTuple):
            return None
        return signature(args[0], *args)

    def get_impl_key(self, sig):
        return "numba_tile.same_value"


registry.register_global(tuple)(TupleOfTuple)


class TupleConstantIndex(AbstractTemplate):
    """``t[i]`` of a tuple at a constant index (a ``ct.static_iter`` loop variable) is its
    entry, whatever the entries' types."""

    key = operator.getitem
    tile_first = True
    prefer_literal = True
    metadata = {"target": "cuda"}  # before numba-cuda's overloads, which need a GPU

    def generic(self, args, kws):
        if kws or len(args) != 2 or not isinstance(args[0], types.BaseTuple) or \
                not isinstance(args[1], types.IntegerLiteral):
            return None
        index = args[1].literal_value
        if not -len(args[0]) <= index < len(args[0]):
            raise TileTypeError(f"Tuple index {index} out of range for a tuple of "
                                f"{len(args[0])}")
        return signature(args[0][index], *args)

    def get_impl_key(self, sig):
        return "numba_tile.tuple_item"


registry.register_global(operator.getitem)(TupleConstantIndex)


class ReversedTuple(AbstractTemplate):
    """``reversed(t)`` of a tuple is the reversed tuple, constant entries included
    (``tuple(reversed(t.shape))``)."""

    key = reversed
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1 or not isinstance(args[0], types.BaseTuple):
            return None
        return signature(types.BaseTuple.from_types(tuple(args[0])[::-1]), *args)

    def get_impl_key(self, sig):
        return "numba_tile.reversed_tuple"


registry.register_global(reversed)(ReversedTuple)


# -- matrix products ----------------------------------------------------------------------------
def infer_mma(values):
    """The result type of ``mma``."""
    from ..hardware.staged_loads import StagedTileType
    x, y, acc = values["x"], values["y"], values["acc"]
    # operands of pipelined loads wait in shared memory (see staged_loads)
    x_tile, y_tile = (t.as_tile() if isinstance(t, StagedTileType) else t for t in (x, y))
    if not all(isinstance(t, TileType) for t in (x_tile, y_tile, acc)):
        return None
    matrix_rules.mma(operand(x_tile), operand(y_tile), operand(acc))
    # the accumulator's type; in the tensor-core fragment layout where the product runs on
    # tensor cores (a loop-carried accumulator then takes that layout once, before the loop)
    from ..hardware.mma_sync import result_type
    return result_type(x, y, acc)


def _infer_matmul(values):
    x, y = values["x"], values["y"]
    if not (isinstance(x, TileType) and isinstance(y, TileType)):
        return None
    spec = matrix_rules.matmul(operand(x), operand(y))
    if spec.shape == ():
        return scalar_type(spec.dtype)
    # on tensor cores where the operands fit: the result in their fragment layout
    from ..hardware.mma_sync import matmul_accumulator
    accumulator = matmul_accumulator(x, y, spec.dtype)
    if accumulator is not None:
        return accumulator.with_dtype(spec.dtype)
    return TileType(spec.dtype, spec.shape, current().num_warps)


_template(matrix.mma, infer_mma)
_template(matrix.matmul, _infer_matmul)


class MatmulOperator(AbstractTemplate):
    """``x @ y`` of tiles is ``ct.matmul(x, y)``."""

    key = operator.matmul
    tile_first = True
    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 2:
            return None
        result = _infer_matmul({"x": args[0], "y": args[1]})
        return None if result is None else signature(result, *args)

    def get_impl_key(self, sig):
        return matrix.matmul


registry.register_global(operator.matmul)(MatmulOperator)


class _Rewritten(AbstractTemplate):
    """Calls of ``ct.print``, ``ct.assert_`` and ``ct.static_iter`` are rewritten before
    typing (:mod:`~numba_tile.compiler.frontend.device_output`); these templates only give the names a type."""

    prefer_literal = True

    def generic(self, args, kws):
        return None


for _rewritten in (debugging.print, debugging.assert_, debugging.static_iter):
    registry.register_global(_rewritten)(type(f"Tile_{_rewritten.__name__}", (_Rewritten,),
                                              {"key": _rewritten}))


# typing of device output lives beside its lowering; importing it registers the templates
from ..lowering import device_output, text  # noqa: E402,F401
