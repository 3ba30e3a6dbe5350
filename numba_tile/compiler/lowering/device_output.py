"""Device output: ``print``/``ct.print``, ``ct.printf`` and ``ct.assert_`` in compiled code.

A print happens once per block, in the interpreter's format. Tile elements are spread over
the block's threads, so the tiles of a print are first gathered row-major into shared memory;
then thread 0 calls ``vprintf`` (CUDA's device ``printf``) with the text: constant pieces go
into the format string, each element gets its conversion (``%d``, ``%g``...). ``vprintf`` takes
at most 32 arguments, so a long print is several calls in a row from that thread (its output
stays in order); a large tile is printed by a loop, a few elements a call.

The interpreter prints floats as Python's ``%g`` with ``.0`` added when the text has neither a
point nor an exponent (``1.0``); C's ``%g`` prints ``1``, so each float element also passes a
``%s`` that is ``".0"`` exactly when ``%g`` would print an integer (:func:`_point_suffix`).

``ct.assert_`` checks every element in every thread, combines the result over the block with
a barrier, prints the message (a line of standard output, as cuTile's assertion does) and
fails with CUDA's ``__assertfail`` (the kernel stops; the driver prints the message with the
kernel's file and line on standard error, and the launch's stream reports
``CUDA_ERROR_ASSERT``).
"""

import math

from llvmlite import ir
from numba.core import cgutils, types
from numba.cuda import nvvmutils

from ... import dtypes as d
from ...errors import TileUnsupportedFeatureError
from ...language import debugging
from ...rules.formatting import Conversion, conversion_for_spec, parse_c_format, python_dtype
from ..abstract import RUN_TIME, constant_of
from ..intrinsics import device_assert, device_print
from ..types import TileType
from ..typing.text import TextType, dtype_of_value, tuple_text
from . import arithmetic, asm
from .checks import check_uniform
from .registry import lower
from .text import text_values, tuple_values
from .tiles import I32, I64, gather_to_shared, load_shared, thread_ids


MAX_ARGUMENTS = 32  # what CUDA's printf takes besides the format
F64 = ir.DoubleType()


# -- what is printed --------------------------------------------------------------------------
class Value:
    """A run-time value to print: its Numba type, LLVM value, and how to format it:
    ``conversion`` None for the interpreter's plain form; ``python_spec`` when it comes from
    an f-string spec (Python's sign and ``.0`` rules)."""

    def __init__(self, numba_type, value, conversion=None, python_spec=False):
        self.numba_type, self.value = numba_type, value
        self.conversion, self.python_spec = conversion, python_spec


def _print_items(builder, sig, args):
    """The pieces of ``print(*values, sep=, end=)``: strings and :class:`Value` objects."""
    sep, end = (constant_of(t) for t in sig.args[:2])
    items = []
    for index, (numba_type, value) in enumerate(zip(sig.args[2:], args[2:])):
        if index:
            items.append(sep)
        items.extend(_value_items(builder, numba_type, value))
    items.append(end)
    return items


def _value_items(builder, numba_type, value):
    constant = constant_of(numba_type, RUN_TIME)
    if isinstance(numba_type, types.BaseTuple) and constant is RUN_TIME:
        return _text_items(tuple_text(numba_type), tuple_values(builder, numba_type, value))
    if isinstance(numba_type, TextType):
        return _text_items(numba_type, text_values(builder, numba_type, value))
    if constant is not RUN_TIME:
        return [str(constant)]  # what the interpreter prints for the Python value
    return [Value(numba_type, value)]


def _text_items(numba_type, values):
    """The pieces of a text whose run-time values are ``values``."""
    items = []
    for part in numba_type.parts:
        if isinstance(part, str):
            items.append(part)
            continue
        index, spec = part
        item_type = numba_type.values[index]
        conversion = conversion_for_spec(spec, dtype_of_value(item_type))
        items.append(Value(item_type, values[index], conversion, python_spec=True))
    return items


def _printf_items(sig, args):
    fmt = constant_of(sig.args[0])
    items, values = [], iter(zip(sig.args[1:], args[1:]))
    for piece in parse_c_format(fmt):
        if not isinstance(piece, Conversion):
            items.append(piece)
            continue
        numba_type, value = next(values)
        constant = constant_of(numba_type, RUN_TIME)
        if constant is not RUN_TIME:  # formatted now, as the interpreter does
            items.append(piece.format(constant, python_dtype(constant)))
        else:
            items.append(Value(numba_type, value, piece))
    return items


# -- emission ---------------------------------------------------------------------------------
class _Printer:
    """Collects format text and arguments in the printing thread and calls ``vprintf``
    whenever the argument list is full."""

    def __init__(self, context, builder):
        self.context, self.builder = context, builder
        self.format, self.arguments = [], []

    def text(self, text):
        self.format.append(text.replace("%", "%%"))

    def add(self, fmt, arguments):
        if len(self.arguments) + len(arguments) > MAX_ARGUMENTS:
            self.flush()
        self.format.append(fmt)
        self.arguments.extend(arguments)

    def flush(self):
        fmt = "".join(self.format)
        if fmt:
            _vprintf(self.context, self.builder, fmt, self.arguments)
        self.format, self.arguments = [], []

    def string(self, text):
        return self.context.insert_string_const_addrspace(self.builder, text)


def _vprintf(context, builder, fmt, arguments):
    vprintf = nvvmutils.declare_vprint(builder.module)
    pointer = context.insert_string_const_addrspace(builder, fmt)
    if arguments:
        struct_type = ir.LiteralStructType([a.type for a in arguments])
        storage = cgutils.alloca_once(builder, struct_type)
        for index, argument in enumerate(arguments):
            builder.store(argument, builder.gep(storage, [I32(0), I32(index)]))
        buffer = builder.bitcast(storage, ir.IntType(8).as_pointer())
    else:
        buffer = ir.Constant(ir.IntType(8).as_pointer(), None)
    builder.call(vprintf, [pointer, buffer])


def emit_output(context, builder, items):
    """Print ``items`` (strings and :class:`Value` objects) once for the block."""
    gathered = _gather_tiles(context, builder, items)
    lane, warp = thread_ids(builder)
    is_first = builder.icmp_unsigned("==", builder.or_(lane, warp), I32(0))
    with builder.if_then(is_first):
        printer = _Printer(context, builder)
        for item in items:
            if isinstance(item, str):
                printer.text(item)
            elif id(item) in gathered:
                _print_tile(printer, item, gathered[id(item)])
            elif isinstance(item.numba_type, TileType):  # one element, held by every thread
                rank = item.numba_type.ndim
                printer.text("[" * rank)
                _print_element(printer, item, builder.extract_value(item.value, 0))
                printer.text("]" * rank)
            else:
                _print_element(printer, item, item.value)
        printer.flush()


def _spread(numba_type):
    return isinstance(numba_type, TileType) and math.prod(numba_type.shape) > 1


def _gather_tiles(context, builder, items):
    """Write every tile of ``items`` row-major into shared memory: ``{id(item): pointer}``."""
    tiles = [item for item in items if isinstance(item, Value) and _spread(item.numba_type)]
    if not tiles:
        return {}
    pointers = gather_to_shared(context, builder, [(t.numba_type, t.value) for t in tiles])
    return {id(item): pointer for item, pointer in zip(tiles, pointers)}


def _print_tile(printer, item, pointer):
    """A tile as nested lists: ``[[a, b], [c, d]]``. Elements go out a group at a time in
    a loop; the separator before each element (``", "``, ``"], ["``...) depends on how many
    axes its index starts anew."""
    builder = printer.builder
    tile_type = item.numba_type
    shape, size = tile_type.shape, math.prod(tile_type.shape)
    element_type = ir.IntType(1) if tile_type.dtype is d.bool_ else \
        printer.context.get_value_type(tile_type.element)
    separators = ["[" * len(shape)] + ["]" * k + ", " + "[" * k for k in range(len(shape))]
    pointers = [printer.string(s) for s in separators]
    printer.flush()
    per_element = len(_element_format(printer, item, None, dry_run=True)[1]) + 1
    group = min(size, max(1, MAX_ARGUMENTS // per_element))
    while size % group:
        group //= 2
    with cgutils.for_range(builder, I32(size // group)) as loop:
        first = builder.mul(loop.index, I32(group))
        for offset in range(group):
            index = builder.add(first, I32(offset))
            value = load_shared(builder, builder.gep(pointer, [index]), element_type)
            printer.add("%s", [_separator(builder, index, shape, pointers)])
            _print_element(printer, item, value)
        printer.flush()
    printer.text("]" * len(shape))


def _separator(builder, index, shape, pointers):
    """The separator before element ``index``: the opening brackets for the first element,
    else ``"]" * k + ", " + "[" * k`` where the last ``k`` axes start anew."""
    restarts = I32(0)
    span = 1
    for n in reversed(shape[1:]):
        span *= n
        starts = builder.icmp_unsigned("==", builder.urem(index, I32(span)), I32(0))
        restarts = builder.add(restarts, builder.zext(starts, I32))
    chosen = pointers[1]
    for k in range(1, len(shape)):
        chosen = builder.select(builder.icmp_unsigned("==", restarts, I32(k)), pointers[k + 1],
                                chosen)
    return builder.select(builder.icmp_unsigned("==", index, I32(0)), pointers[0], chosen)


def _print_element(printer, item, value):
    fmt, arguments = _element_format(printer, item, value)
    printer.add(fmt, arguments)


def _element_format(printer, item, value, dry_run=False):
    """``(format, arguments)`` of one element; with ``dry_run`` only the argument count
    matters (placeholders)."""
    builder, context = printer.builder, printer.context
    dtype = dtype_of_value(item.numba_type)
    conversion = item.conversion
    if dry_run:
        value = arithmetic.constant(dtype, 0)
    if conversion is None:
        if dtype is d.bool_:  # 1 or 0, as cuTile prints it
            return "%d", [builder.zext(value, I32)]
        if dtype.is_integral:
            return _integer_argument(context, builder, value, dtype, "d")
        wide = arithmetic.convert(context, builder, value, dtype, d.float64)
        return "%g%s", [_canonical_nan(builder, wide),
                        _point_suffix(printer, wide, 6, dry_run)]
    letter = conversion.letter
    if conversion.is_float:
        wide = arithmetic.convert(context, builder, value, dtype, d.float64)
        return str(conversion), [_canonical_nan(builder, wide)]
    if item.python_spec and dtype.is_signed and letter in "xXo":
        return _signed_python_integer(printer, value, dtype, conversion)
    if dtype is d.bool_:
        value, dtype = builder.zext(value, I32), d.int32
    return _integer_argument(context, builder, value, dtype, letter, conversion)


def _integer_argument(context, builder, value, dtype, letter, conversion=None):
    """An integer element as a ``printf`` argument: 32-bit for dtypes up to 32 bits (two's
    complement of that width for ``%x``), 64-bit (``ll``) otherwise; ``%d`` of an unsigned
    dtype prints it unsigned."""
    letter = "d" if letter == "i" else letter
    if letter == "d" and not dtype.is_signed:
        letter = "u"
    wide = dtype.itemsize == 8
    extend = builder.sext if dtype.is_signed else builder.zext
    if not wide and value.type.width < 32:
        value = extend(value, I32)
    prefix = "" if conversion is None else str(conversion)[:-1]
    return f"{prefix or '%'}{'ll' if wide else ''}{letter}", [value]


def _signed_python_integer(printer, value, dtype, conversion):
    """Python's ``format(-255, "x")`` is ``-ff``: the sign, then the magnitude."""
    builder = printer.builder
    if conversion.width:
        raise TileUnsupportedFeatureError(
            f"Format spec with a width and {conversion.letter!r} of a signed {dtype} cannot be "
            f"printed from the device")
    negative = builder.icmp_signed("<", value, value.type(0))
    magnitude = builder.select(negative, builder.neg(value), value)
    positive_sign = "+" if "+" in conversion.flags else " " if " " in conversion.flags else ""
    sign = builder.select(negative, printer.string("-"), printer.string(positive_sign))
    flags = conversion.flags.replace("+", "").replace(" ", "")
    unsigned = Conversion(flags, "", conversion.precision, conversion.letter)
    fmt, arguments = _integer_argument(printer.context, builder, magnitude,
                                       d.uint64 if dtype.itemsize == 8 else d.uint32,
                                       conversion.letter, unsigned)
    return "%s" + fmt, [sign] + arguments


def _canonical_nan(builder, value):
    """NaN prints as ``nan`` whatever its sign bit (as in Python)."""
    is_nan = builder.fcmp_unordered("uno", value, value)
    return builder.select(is_nan, F64(float("nan")), value)


def _point_suffix(printer, value, precision, dry_run=False):
    """``".0"`` where ``%.{precision}g`` prints ``value`` as an integer, else ``""``
    (``printf`` has no conversion for Python's short float form).

    ``%g`` prints without a point or exponent exactly when the value rounded to
    ``precision`` significant digits is an integer below ``10 ** precision``. For ``value``
    in ``[10**k, 10**(k+1))`` that rounding keeps ``precision - 1 - k`` decimals: scaled by
    ``10**decimals`` and rounded to an integer ``m``, the text is integral when ``m`` is a
    multiple of ``10**decimals``. Below 0.1 there is always a point (or an exponent).
    """
    builder = printer.builder
    if dry_run:
        return printer.string("")
    magnitude = builder.select(builder.fcmp_ordered("<", value, F64(0.0)),
                               builder.fsub(F64(0.0), value), value)  # NVVM has no fabs
    scale = F64(10.0 ** precision)  # for [0.1, 1)
    for k in range(precision):  # the decade of the value picks its scale
        at_least = builder.fcmp_ordered(">=", magnitude, F64(10.0 ** k))
        scale = builder.select(at_least, F64(10.0 ** (precision - 1 - k)), scale)
    rounded = asm.emit(builder, asm.convert("rni", "f64", "f64", "d", "d"),
                       [builder.fmul(magnitude, scale)], F64)
    whole = builder.fptoui(rounded, I64)
    step = builder.fptoui(scale, I64)
    integral = builder.and_(
        builder.icmp_unsigned("==", builder.urem(whole, step), I64(0)),
        builder.fcmp_ordered("<", rounded, builder.fmul(scale, F64(10.0 ** precision))))
    in_range = builder.and_(builder.fcmp_ordered(">=", magnitude, F64(0.1)),
                            builder.fcmp_ordered("<", magnitude, F64(10.0 ** precision)))
    is_zero = builder.fcmp_ordered("==", magnitude, F64(0.0))
    needs_point = builder.or_(is_zero, builder.and_(in_range, integral))
    return builder.select(needs_point, printer.string(".0"), printer.string(""))


# -- lowering ---------------------------------------------------------------------------------
@lower(device_print, types.VarArg(types.Any))
def lower_device_print(context, builder, sig, args):
    emit_output(context, builder, _print_items(builder, sig, args))
    return context.get_dummy_value()


@lower(debugging.printf, types.VarArg(types.Any))
def lower_printf(context, builder, sig, args):
    emit_output(context, builder, _printf_items(sig, args))
    return context.get_dummy_value()


@lower(device_assert, types.Any, types.Any, types.Any)
def lower_device_assert(context, builder, sig, args):
    condition_type, message_type, where_type = sig.args
    constant = constant_of(condition_type, RUN_TIME)
    if constant is not RUN_TIME:
        holds = cgutils.true_bit if constant else cgutils.false_bit
    else:
        holds = _all_true(context, builder, condition_type, args[0])
    message = constant_of(message_type, None) if not isinstance(
        message_type, types.NoneType) else None
    filename, _, line = constant_of(where_type).rpartition(":")
    check_uniform(context, builder, holds, message or "ct.assert_ failed", (filename, int(line)),
                  printed=True)
    return context.get_dummy_value()


def _all_true(context, builder, numba_type, value):
    """True in every thread when every element of the condition is nonzero, in the whole
    block (``bar.red.and``)."""
    dtype = dtype_of_value(numba_type)
    registers = [builder.extract_value(value, r) for r in range(numba_type.registers)] \
        if isinstance(numba_type, TileType) else [value]
    holds = cgutils.true_bit
    for register in registers:
        holds = builder.and_(holds, arithmetic.convert(context, builder, register, dtype,
                                                       d.bool_))
    if not isinstance(numba_type, TileType) or math.prod(numba_type.shape) == 1:
        return holds  # every thread holds the same value
    reduce_and = builder.module.declare_intrinsic(
        "llvm.nvvm.barrier0.and", fnty=ir.FunctionType(I32, [I32]))
    combined = builder.call(reduce_and, [builder.zext(holds, I32)])
    return builder.icmp_unsigned("!=", combined, I32(0))
