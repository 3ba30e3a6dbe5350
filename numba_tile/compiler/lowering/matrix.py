"""Lowering of ``ct.mma``, ``ct.matmul`` and ``@``: the general product.

Both operands are gathered row-major into shared memory; then every thread computes the
result elements its registers hold, as sums over ``k`` of products read from there. Products
and sums are in float64 for float dtypes (the inputs' products are exact there, as in the
interpreter) and in int64 for integers, then rounded (or wrapped) once to the result's dtype;
``mma``'s accumulator is added before that rounding. This works for every shape (batched,
1-d operands of ``matmul``, tiles smaller than a tensor-core fragment) and every dtype pair;
``mma``'s result keeps the accumulator's layout, so a loop-carried accumulator stays put.
Products that fit tensor cores (:mod:`~numba_tile.compiler.planning.products`) go to
:mod:`~numba_tile.compiler.lowering.mma_sync` or :mod:`~numba_tile.compiler.lowering.wgmma`
instead.

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def product(a, b, c):
...     acc = ct.zeros((16, 16), ct.float32)
...     ct.store(c, (0, 0), ct.mma(ct.load(a, (0, 0), (16, 32)), ct.load(b, (0, 0), (32, 16)), acc))
>>> a, b = np.zeros((16, 32), np.float32), np.zeros((32, 16), np.float32)
>>> ptx = ct.compile(product, (a, b, np.zeros((16, 16), np.float32))).ptx
>>> "fma.rn.f64" in ptx, "mma.sync" in ptx  # float32 inputs: the general path
(True, False)
"""

from llvmlite import ir
from numba.core import cgutils, types

from ... import dtypes as d
from ...language import matrix
from ..abstract import constant_of
from ..compile_state import current
from ..intrinsics import deferred_mma, product_wait, products_retired
from ..planning import products
from ..planning.staged_loads import StagedTileType
from ..types import TileType, dtype_of_scalar
from . import arithmetic, asm, mma_sync, wgmma
from .registry import lower
from .staged_loads import staged_to_registers
from .tiles import I32, broadcast_source, gather_to_shared, load_shared, make_tile, move_tile, \
    register_coordinates, relayout, thread_coordinates


def _compute_dtype(*dtypes):
    return d.float64 if any(t.is_float for t in dtypes) else d.int64


class _Operand:
    """One operand in shared memory, read as ``[batch][row][column]`` with the axes it has."""

    def __init__(self, context, builder, tile_type, pointer, role, dtype, compute):
        self.context, self.builder = context, builder
        self.type, self.pointer, self.role = tile_type, pointer, role
        self.dtype, self.compute = dtype, compute
        self.element = ir.IntType(1) if tile_type.dtype.is_bool else \
            context.get_value_type(tile_type.element)

    def read(self, batch, row, column):
        """The element at ``(batch, row, column)`` of the (batch, m, k) or (batch, k, n)
        view; ``row`` of an x vector and ``column`` of a y vector are ignored."""
        builder, shape = self.builder, self.type.shape
        if len(shape) == 1:
            offset = column if self.role == "x" else row
        else:
            offset = builder.add(builder.mul(row, I32(shape[-1])), column)
            if len(shape) == 3 and shape[0] > 1:
                offset = builder.add(builder.mul(batch, I32(shape[-2] * shape[-1])), offset)
        value = load_shared(builder, builder.gep(self.pointer, [offset]), self.element)
        value = arithmetic.convert(self.context, builder, value, self.type.dtype, self.dtype)
        return arithmetic.convert(self.context, builder, value, self.dtype, self.compute)


def product(context, builder, x_type, x, y_type, y, result_type, result_dtype, initial=None,
            operand_dtype=None):
    """The registers (or the one value of a scalar result) of ``x @ y (+ initial)``.

    ``initial`` is ``(type, value)`` of an accumulator in the result's layout; the operands
    are first converted to ``operand_dtype`` (``matmul``'s promoted dtype), if given."""
    pointers = gather_to_shared(context, builder, [(x_type, x), (y_type, y)])
    compute = _compute_dtype(x_type.dtype, y_type.dtype)
    xs = _Operand(context, builder, x_type, pointers[0], "x", operand_dtype or x_type.dtype,
                  compute)
    ys = _Operand(context, builder, y_type, pointers[1], "y", operand_dtype or y_type.dtype,
                  compute)
    compute_type = arithmetic.storage_type(compute)
    depth = x_type.shape[-1]
    # the (batch, m, n) of each distinct result element this thread holds
    if isinstance(result_type, TileType):
        base = thread_coordinates(builder, result_type.layout)
        places, owner = [], {}
        for register in range(result_type.registers):
            constant = result_type.layout.apply(register=register)
            if constant not in owner:
                owner[constant] = len(places)
                coords = register_coordinates(builder, base, result_type.layout, register)
                places.append(_batch_row_column(coords, x_type, y_type))
            owner[register] = owner[constant]
    else:
        places, owner = [(I32(0), I32(0), I32(0))], {0: 0}
    sums = [cgutils.alloca_once_value(builder, compute_type(0.0) if compute.is_float
                                      else compute_type(0)) for _ in places]
    with cgutils.for_range(builder, I32(depth)) as loop:
        k = loop.index
        for (batch, row, column), total in zip(places, sums):
            a = xs.read(batch, row, k)
            b = ys.read(batch, k, column)
            if compute.is_float:
                step = builder.fadd(builder.load(total), builder.fmul(a, b))
            else:
                step = builder.add(builder.load(total), builder.mul(a, b))
            builder.store(step, total)
    registers = result_type.registers if isinstance(result_type, TileType) else 1
    values = []
    for register in range(registers):
        value = builder.load(sums[owner[register]])
        if initial is not None:
            acc_type, acc_value = initial
            start = arithmetic.convert(context, builder,
                                       builder.extract_value(acc_value, register),
                                       acc_type.dtype, compute)
            value = builder.fadd(value, start) if compute.is_float else builder.add(value,
                                                                                    start)
        values.append(arithmetic.convert(context, builder, value, compute, result_dtype))
    if isinstance(result_type, TileType):
        return make_tile(context, builder, result_type, values)
    return values[0]


def _batch_row_column(coords, x_type, y_type):
    """``(batch, m, n)`` of result coordinates (a vector operand has no m or no n)."""
    coords = list(coords)
    column = coords.pop() if len(y_type.shape) > 1 else I32(0)
    row = coords.pop() if len(x_type.shape) > 1 else I32(0)
    batch = coords.pop() if coords else I32(0)
    return batch, row, column


@lower(matrix.mma, types.VarArg(types.Any))
def lower_mma(context, builder, sig, args):
    return mma_product(context, builder, sig, args)[0]


def mma_product(context, builder, sig, args, deferred=False):
    """``(result, committed)`` of the ``ct.mma`` call ``sig`` on ``args``: ``committed`` is
    True where it ran as ``wgmma``, as a committed group. ``deferred``: such a product is
    not waited for where it can run on (see :mod:`~numba_tile.compiler.frontend.deferred_products`)."""
    x_type, y_type, acc_type = sig.args[:3]
    result = sig.return_type
    args = list(args)
    operand_types = products.batch_broadcast(x_type, y_type)
    for i, full in enumerate(operand_types):
        source = sig.args[i]
        if full is not source:  # repeated along the batch axis, as broadcast_to does
            args[i] = relayout(context, builder, source, args[i], full,
                               broadcast_source(source.shape, full.shape))
    x_type, y_type = operand_types
    found = products.plan(x_type, y_type, acc_type)
    if found is not None and found.layout == result.layout:
        fast = len(sig.args) > 3 and bool(constant_of(sig.args[3]))  # use_fast_acc
        value = _tensor_core_product(context, builder, x_type, args[0], y_type, args[1],
                                     acc_type, args[2], result, deferred, fast)
        return value, found.instruction.startswith("wgmma")
    args, operand_types = list(args), [x_type, y_type]
    for i in (0, 1):  # tiles of pipelined loads, read into registers
        if isinstance(operand_types[i], StagedTileType):
            operand_types[i], args[i] = staged_to_registers(context, builder,
                                                            operand_types[i], args[i])
    x_type, y_type = operand_types
    if acc_type.layout != result.layout:
        args[2] = move_tile(context, builder, acc_type, args[2], result)
        acc_type = result
    return product(context, builder, x_type, args[0], y_type, args[1], result,
                   acc_type.dtype, initial=(acc_type, args[2])), False


@lower(matrix.matmul, types.VarArg(types.Any))
def lower_matmul(context, builder, sig, args):
    result = sig.return_type
    (x_type, y_type), (x, y) = sig.args[:2], args[:2]
    accumulator = products.matmul_accumulator(x_type, y_type, result.dtype) if \
        isinstance(result, TileType) else None
    if accumulator is not None and accumulator.layout == result.layout:
        # a product into a zero accumulator on tensor cores, rounded (or wrapped) once
        zero = arithmetic.constant(accumulator.dtype, 0)
        acc = make_tile(context, builder, accumulator, [zero] * accumulator.registers)
        sums = _tensor_core_product(context, builder, x_type, x, y_type, y, accumulator, acc)
        return make_tile(context, builder, result, [
            arithmetic.convert(context, builder, builder.extract_value(sums, r),
                               accumulator.dtype, result.dtype)
            for r in range(result.registers)])
    dtype = result.dtype if isinstance(result, TileType) else _scalar_dtype(result)
    return product(context, builder, sig.args[0], args[0], sig.args[1], args[1], result, dtype,
                   operand_dtype=dtype)


def _tensor_core_product(context, builder, x_type, x, y_type, y, acc_type, acc, result=None,
                         deferred=False, fast_accumulation=False):
    """The registers of ``mma(x, y, acc)`` on tensor cores (``result``: its type, by default
    the accumulator's; ``deferred``: a ``wgmma`` not waited for where it can run on;
    ``fast_accumulation``: ``use_fast_acc``)."""
    result = result or acc_type
    found = products.plan(x_type, y_type, acc_type)
    if isinstance(x_type, StagedTileType) and x_type.transposed:
        # the tensor cores read A K-major: a transposed A goes through registers (and the
        # scratch buffer); a transposed B is read where it is
        x_type, x = staged_to_registers(context, builder, x_type, x)
    if found.instruction.startswith("wgmma"):
        return wgmma.lower_wgmma(context, builder, found, x_type, x, y_type, y,
                                 acc_type, acc, result, deferred, fast_accumulation)
    return mma_sync.lower_mma(context, builder, found, x_type, x, y_type, y, acc_type, acc,
                              result, fast_accumulation)


def _scalar_dtype(numba_type):
    return dtype_of_scalar(numba_type)


# -- the deferred products of frontend.deferred_products ----------------------------------------
def _hopper():
    """True where the kernel's deferred products need wgmma's commits and waits: on Hopper,
    with at least one product running as wgmma."""
    return current().target == (9, 0) and current().any_wgmma


@lower(deferred_mma, types.VarArg(types.Any))
def lower_deferred_mma(context, builder, sig, args):
    value, committed = mma_product(context, builder, sig, args, deferred=True)
    if _hopper() and not committed:
        # not a wgmma (mma.sync, or the general product): an empty group keeps the count
        asm.emit(builder, asm.WGMMA_COMMIT)
    return value


_CONSTRAINTS = {"float": "f", "double": "d", "half": "h", "i16": "h", "i32": "r", "i64": "l"}


@lower(product_wait, types.Any, types.IntegerLiteral)
def lower_product_wait(context, builder, sig, args):
    tile_type, pending = sig.args[0], sig.args[1].literal_value
    if not _hopper():
        return args[0]
    values = [builder.extract_value(args[0], r) for r in range(tile_type.registers)]
    letters = [_CONSTRAINTS[str(v.type)] for v in values]
    # (one output is returned as itself, several as a structure)
    returned = values[0].type if len(values) == 1 else \
        ir.LiteralStructType([v.type for v in values])
    result = asm.emit(builder, asm.wgmma_wait(pending, letters), values, returned)
    if len(values) == 1:
        return make_tile(context, builder, tile_type, [result])
    return make_tile(context, builder, tile_type,
                     [builder.extract_value(result, i) for i in range(len(values))])


@lower(products_retired, types.IntegerLiteral)
def lower_products_retired(context, builder, sig, args):
    if _hopper():
        asm.emit(builder, asm.wgmma_wait(sig.args[0].literal_value))
    return context.get_dummy_value()
