"""The machinery of the typing templates: the registry, a template per public function that
binds the call to the function's signature and runs the op's rule, and what the op families
share (scalars and constants among Numba types, the result layout of elementwise ops, folding
of constant operands, compile-time arguments, methods of tiles and views).

A template binds the call's arguments to the public function's signature (defaults become
``Omitted``), turns the Numba types into rule operands (:mod:`~numba_tile.compiler.abstract`),
runs the rule, and returns the signature with the result type. The rule raises the same
``TileError`` the interpreter raises; the compiler adds the kernel line. Layouts are chosen
here: a new tile gets the default layout, an elementwise result takes the layout of its
full-shape operand, and a reduction's result is its input's layout collapsed along the
reduced axes.
"""

import inspect

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate, Registry, bound_function

from ...errors import TileUnsupportedFeatureError, TileTypeError
from ...host.tile import Tile, to_tile
from ...language import elementwise, shapes
from ...layouts import HARDWARE_DIMS, LinearLayout
from ...promotion import Loose
from ...rules import elementwise as elementwise_rules
from ...rules.calls import bind_arguments
from ...rules.core import broadcast_shapes, not_a_tile
from ..abstract import operand, python_value
from ..constant_folding import literal_type
from ..types import ConstantType, FloatLiteral, TileType, TypedConstant, default_layout, \
    dtype_of_scalar, scalar_type



registry = Registry()


def _stub(fn):
    return getattr(fn, "__tile_op__", fn)


def constant_value(numba_type):
    return python_value(operand(numba_type))


def register_template(fn, infer, like=None):
    """Register a template for public function ``fn``; ``infer(values)`` gives the result
    type from the bound arguments (a dict of parameter name to Numba type), or None.
    ``like``: the public function whose signature the calls bind to, where ``fn`` stands
    in for it (a frontend rewrite's intrinsic)."""
    pysig = inspect.signature(_stub(like or fn))
    op_name = (like or fn).__name__
    # Numba folds call arguments with plain positional-or-keyword parameters; the public
    # signature's `/` and `*` markers were already enforced when binding below.
    numba_pysig = pysig.replace(parameters=[
        p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in pysig.parameters.values()])

    class Template(AbstractTemplate):
        key = fn
        prefer_literal = True

        def generic(self, args, kws):
            bound = bind_arguments(op_name, pysig, args, kws)
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
    >>> from numba_tile.compiler.typing.templates import merged_layout
    >>> from numba_tile import dtypes as d
    >>> full = default_layout((16, 32), 4)
    >>> rows = TileType(d.int32, (16, 1), 4, full.collapse((1,)))
    >>> columns = TileType(d.int32, (1, 32), 4, full.collapse((0,)))
    >>> merged_layout((16, 32), [rows, columns]) == full
    True
    """
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


def tile_argument(values, op):
    """Argument ``x`` of ``op``, a tile. A scalar is one the compiler does not take yet;
    anything else is cuTile's ``TileTypeError``, as the interpreter raises it."""
    x = values["x"]
    if isinstance(x, TileType):
        return x
    if is_scalar(x):
        raise TileUnsupportedFeatureError(f"ct.{op} of a scalar is not compiled yet")
    raise not_a_tile(op, operand(x))


def tile_or_scalar(numba_type, op, parameter):
    """Argument ``parameter`` (a name, or a 1-based position) of ``op`` as a rule operand:
    a tile, or a scalar as the 0-d tile the interpreter makes of it (``host.tile.to_tile``);
    an array, None, a string... is cuTile's ``TileTypeError``, as the interpreter raises
    it."""
    if isinstance(numba_type, TileType):
        return numba_type
    if is_scalar(numba_type):
        value = operand(numba_type)
        return to_tile(value) if isinstance(value, Loose) else value
    raise not_a_tile(op, operand(numba_type), parameter)


def float_options(op, values, result_dtype):
    """Check the rounding, flush-to-zero and NaN options of a call (compile-time constants)
    with the shared rule; the lowering reads them from the call's arguments."""
    rounding_mode = constant_value(values.get("rounding_mode", types.Omitted(None)))
    flush_to_zero = compile_time_value(values.get("flush_to_zero", types.Omitted(False)),
                                       f"{op}(flush_to_zero=...)")
    compile_time_value(values.get("propagate_nan", types.Omitted(False)),
                       f"{op}(propagate_nan=...)")
    elementwise_rules.check_float_options(op, result_dtype, rounding_mode, flush_to_zero)


def folded_type(result):
    """The constant type of an op folded on compile-time constants (an interpreter Tile or
    a loose Python number)."""
    if isinstance(result, Tile) and result.ndim == 0:  # strictly typed: keeps its dtype
        return TypedConstant(result.dtype, result.constant_value())
    value = getattr(result, "item", lambda: result)()
    return literal_type(value.value if isinstance(value, Loose) else value)



def compile_time_value(numba_type, what):
    """The value of a compile-time constant argument, or a TileTypeError."""
    if isinstance(numba_type, types.BooleanLiteral):
        return numba_type.literal_value
    try:
        return constant_value(numba_type)
    except TileTypeError:
        raise TileTypeError(f"{what} needs a compile-time constant, got a run-time "
                            f"{numba_type}") from None



def tile_method(name, infer, function=None):
    """A method of tiles: ``function`` (the public op, default ``ct.<name>``) with the tile
    as its first argument."""
    if function is None:
        function = getattr(shapes, name, None) or getattr(elementwise, name)
    public = inspect.signature(_stub(function))
    parameters = list(public.parameters.values())[1:]
    pysig = inspect.Signature([p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
                               for p in parameters])

    def resolve(self, tile, args, kws):
        # bound as the interpreter's method binds them: a call that does not bind is its error
        method = inspect.signature(getattr(Tile, name))
        bind_arguments(name, method.replace(parameters=list(method.parameters.values())[1:]),
                       args, kws, method=True)
        bound = pysig.bind(*args, **kws)
        values = {"x": tile}
        for parameter in parameters:
            values[parameter.name] = bound.arguments.get(
                parameter.name, types.Omitted(parameter.default))
        ordered = [values[p.name] for p in parameters]
        return signature(infer(values), *ordered).replace(pysig=pysig)
    return bound_function(f"tile.{name}")(resolve)



def bound_method(method, parameters, infer):
    """A method whose arguments bind to ``parameters`` (name, default) like a Python def."""
    pysig = inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                 default=default)
                               for name, default in parameters])

    def resolve(self, owner, args, kws):
        bound = bind_arguments(method.rsplit(".", 1)[-1], pysig, args, kws, method=True)
        values = {name: bound.arguments.get(name, types.Omitted(default))
                  for name, default in parameters}
        result = infer(owner, values)
        return signature(result, *values.values()).replace(pysig=pysig)
    return bound_function(method)(resolve)


REQUIRED = inspect.Parameter.empty
