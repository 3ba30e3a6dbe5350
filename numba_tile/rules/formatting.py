"""How printed values are formatted: the rules the interpreter applies and the compiler
reproduces with the device's ``printf``.

``ct.printf`` takes a C format: :func:`parse_c_format` cuts it into text and
:class:`Conversion` pieces, and :meth:`Conversion.format` applies one conversion to one element
the way C does (``%x`` of a negative int32 is its 32-bit two's complement). An f-string field
``{x:.3f}`` carries a Python format spec: :func:`conversion_for_spec` turns it into the C
conversion that prints the same text, or says why it has none.

>>> from numba_tile.rules.formatting import parse_c_format
>>> [str(p) for p in parse_c_format("x=%5.2f, n=%d%%\\n")]
['x=', '%5.2f', ', n=', '%d', '%\\n']
"""

import math
import re

from .. import dtypes as d
from ..errors import TileTypeError, TileUnsupportedFeatureError
from ..promotion import Loose
from .core import as_operand, constant_argument, describe, invalid_argument, operand_dtype, \
    type_name

_C_CONVERSION = re.compile(
    r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcspn%])")

INTEGER_CONVERSIONS = "diouxXc"  # (%c only from an f-string's spec: printf refuses it)
FLOAT_CONVERSIONS = "eEfFgGaA"
#: what C's printf has and ct.printf refuses: characters, strings, pointers, stores
UNSUPPORTED_CONVERSIONS = "cspn"


class Conversion:
    """One C conversion: flags, width, precision (strings, possibly empty) and the letter.

    The length modifier of the source format is dropped: the element's dtype decides it.
    """

    __slots__ = ("flags", "width", "precision", "letter")

    def __init__(self, flags, width, precision, letter):
        self.flags, self.width, self.precision, self.letter = flags, width, precision, letter

    def __str__(self):
        precision = f".{self.precision}" if self.precision else ""
        return f"%{self.flags}{self.width}{precision}{self.letter}"

    def __repr__(self):
        return f"Conversion({str(self)!r})"

    @property
    def is_integer(self):
        return self.letter in INTEGER_CONVERSIONS

    @property
    def is_float(self):
        return self.letter in FLOAT_CONVERSIONS

    def format(self, value, dtype):
        """C's text for one element of ``dtype`` (a Python or NumPy number).

        Integer conversions take an integer (or bool) element; ``%u``, ``%o``, ``%x`` and
        ``%X`` show a negative value as two's complement of the dtype's width, at least 32
        bits, as C's ``printf`` does with the argument the device passes.

        >>> import numba_tile as ct
        >>> from numba_tile.rules.formatting import Conversion
        >>> Conversion("", "", "", "x").format(-1, ct.int32), Conversion("0", "4", "", "d").format(7, ct.int8)
        ('ffffffff', '0007')
        >>> Conversion("", "", "", "a").format(9.0, ct.float32)
        '0x1.2p+3'
        """
        value = value.item() if hasattr(value, "item") else value
        letter = "d" if self.letter == "i" else self.letter
        if self.is_integer:
            value = int(value)
            if letter in "uoxX" and value < 0:
                value += 1 << max(32, dtype.itemsize * 8)
            letter = "d" if letter == "u" else letter
        elif self.is_float:
            value = float(value)
            if letter in "aA" and math.isfinite(value):
                return _hex_float(value, self.flags, self.width, self.precision, letter == "A")
            letter = {"a": "f", "A": "F"}.get(letter, letter)  # (infinities, NaN: as %f's)
        precision = f".{self.precision}" if self.precision else ""
        return f"%{self.flags}{self.width}{precision}{letter}" % value


def _hex_float(value, flags, width, precision, upper):
    """C's ``%a`` of a finite double: ``0x1.8p+1`` for 3.0, the hexadecimal digits of the
    significand (rounded half to even to ``precision`` of them; all but trailing zeros
    without one), as glibc prints them (a subnormal as ``0x0.…p-1022``)."""
    significand, exponent = abs(value).hex()[2:].split("p")
    lead, fraction = significand.split(".")
    digits, count = int(lead + fraction, 16), len(fraction)
    if precision:
        wanted = int(precision)
        if wanted < count:
            shift = 4 * (count - wanted)
            digits, rest = divmod(digits, 1 << shift)
            half = 1 << (shift - 1)
            digits += rest > half or (rest == half and digits & 1)
        else:
            digits <<= 4 * (wanted - count)
        count = wanted
    else:
        while count and not digits % 16:
            digits, count = digits // 16, count - 1
    fraction_text = format(digits & ((1 << 4 * count) - 1), f"0{count}x") if count else ""
    point = "." if count or "#" in flags else ""
    body = f"{digits >> 4 * count:x}{point}{fraction_text}p{int(exponent):+d}"
    sign = "-" if math.copysign(1.0, value) < 0 else \
        "+" if "+" in flags else " " if " " in flags else ""
    prefix = sign + "0x"
    if upper:
        prefix, body = prefix.upper(), body.upper()
    width = int(width or 0)
    if "-" in flags:
        return (prefix + body).ljust(width)
    if "0" in flags:
        return prefix + body.rjust(width - len(prefix), "0")
    return (prefix + body).rjust(width)


def python_dtype(value):
    """The dtype a Python number has in tile code: bool_, int32 or float32.

    >>> from numba_tile.rules.formatting import python_dtype
    >>> python_dtype(3), python_dtype(0.5), python_dtype(True)
    (int32, float32, bool_)
    """
    if isinstance(value, bool):
        return d.bool_
    return d.int32 if isinstance(value, int) else d.float32


def parse_c_format(fmt):
    """The pieces of a C format string: literal text (``str``, with ``%%`` made ``%``) and
    :class:`Conversion` objects, in order. A ``%`` that starts no conversion, and the
    conversions printf does not take (:data:`UNSUPPORTED_CONVERSIONS`), are a
    ``TileTypeError``.

    >>> from numba_tile.rules.formatting import parse_c_format
    >>> parse_c_format("%ld items")
    [Conversion('%d'), ' items']
    >>> parse_c_format("%!")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid format string '%!': the '%' at position 0 starts ...
    """
    pieces, position = [], 0
    while (start := fmt.find("%", position)) >= 0:
        match = _C_CONVERSION.match(fmt, start)
        if match is None:
            raise TileTypeError(f"Invalid format string {fmt!r}: the '%' at position {start} "
                                f"starts no conversion")
        if start > position:
            pieces.append(fmt[position:start])
        position = match.end()
        flags, width, precision, _length, letter = match.groups()
        if letter == "%":
            pieces.append("%")
        elif letter in UNSUPPORTED_CONVERSIONS:
            hint = "; print text with ct.print" if letter == "s" else ""
            raise TileTypeError(f"Specifier %{letter} in {fmt!r} is not supported{hint}")
        elif "*" in (width or "") + (precision or ""):
            raise TileUnsupportedFeatureError(
                f"printf format {fmt!r}: a width or precision from the arguments ('*') is "
                f"not supported")
        else:
            pieces.append(Conversion(flags or "", width or "", precision or "", letter))
    if position < len(fmt):
        pieces.append(fmt[position:])
    merged = []
    for piece in pieces:  # neighbouring text joins up
        if merged and isinstance(piece, str) and isinstance(merged[-1], str):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def printf_format(value):
    """Rule of ``printf``'s format argument: a constant string, returned.

    >>> from numba_tile.rules.formatting import printf_format
    >>> printf_format("%d")
    '%d'
    """
    fmt = constant_argument(value, "printf", "format", "string")
    if not isinstance(fmt, str):
        raise invalid_argument("printf", "format", f"Expected a string constant, got "
                                                   f"{type_name(fmt)}")
    return fmt


def check_printf_arguments(fmt, arguments):
    """Rule of ``printf(fmt, *arguments)`` (rule operands): as many arguments as ``fmt``
    has conversions, an integer (or bool) for each integer conversion, a float for each
    float one. Returns the conversions.

    >>> from numba_tile.rules.formatting import check_printf_arguments
    >>> check_printf_arguments("%d %d", (1,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Not enough arguments for format string '%d %d': it has 2 ...
    >>> check_printf_arguments("%d", (1.5,))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Format %d for arg #0 got unexpected type of Tile[float32,()]...
    """
    conversions = [p for p in parse_c_format(fmt) if isinstance(p, Conversion)]
    if len(conversions) != len(arguments):
        problem = "Not enough" if len(conversions) > len(arguments) else "Too many"
        raise TileTypeError(f"{problem} arguments for format string {fmt!r}: it has "
                            f"{len(conversions)} conversions, got {len(arguments)} "
                            f"argument{'s' if len(arguments) != 1 else ''}")
    for number, (conversion, argument) in enumerate(zip(conversions, arguments)):
        dtype = _printed_dtype(argument)
        fits = dtype is not None and (
            dtype.is_float if conversion.is_float else dtype.is_integral or dtype.is_bool)
        if not fits:
            needed = "a float" if conversion.is_float else "an integer"
            raise TileTypeError(f"Format {conversion} for arg #{number} got unexpected type of "
                                f"{type_name(argument)}: it needs {needed}")
    return conversions


def check_printable(value):
    """``print`` of ``value`` in tile code: an array (or a tuple holding one) has no elements
    to print (only a tile loaded from it has), cuTile's ``TileTypeError``.

    >>> from numba_tile.rules.formatting import check_printable
    >>> check_printable((1, "a"))
    """
    if isinstance(value, tuple):
        for item in value:
            check_printable(item)
    elif getattr(value, "is_tile_array", False):
        raise TileTypeError(f"Cannot print {type_name(value)} from tile code; print a tile "
                            f"loaded from it (ct.load)")
    elif d.is_foreign_pointer(getattr(value, "dtype", None)):  # (an address: cuTile's words)
        raise TileTypeError(f"print(): cannot infer format for dtype {value.dtype}")


def check_assert_arguments(cond, message):
    """``ct.assert_(cond, message)``: ``cond`` a tile or a scalar, ``message`` None or a
    constant string; else cuTile's ``TileTypeError`` naming the argument.

    >>> from numba_tile.rules.formatting import check_assert_arguments
    >>> check_assert_arguments(True, 5)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument "message" of assert_(): Expected a ...
    """
    try:
        if getattr(cond, "is_tile_array", False):
            raise TileTypeError("an array")
        operand = as_operand(cond)
    except TileTypeError:
        raise invalid_argument("assert_", 1, f"Expected a tile, but given value has type "
                                             f"{type_name(cond)}") from None
    if operand_dtype(operand) is not d.bool_:  # (a comparison makes one: t > 0)
        raise TileTypeError(f"Type of condition must be bool, got {type_name(cond)}")
    if message is not None and not isinstance(message, str):
        raise invalid_argument("assert_", "message", f"Expected a constant string, but given "
                                                     f"value has type {type_name(message)}")


def _printed_dtype(argument):
    """The dtype of a printf argument; None for what has no dtype to print (an array, a
    string)."""
    try:
        operand = argument if isinstance(argument, Loose) else as_operand(argument)
    except TileTypeError:
        return None
    return None if getattr(operand, "is_tile_array", False) else operand_dtype(operand)


_PYTHON_SPEC = re.compile(
    r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?(?P<z>z)?(?P<alt>#)?(?P<zero>0)?"
    r"(?P<width>\d+)?(?P<grouping>[,_])?(?:\.(?P<precision>\d+))?(?P<type>[a-zA-Z%])?")


def format_value(value, spec):
    """``format(value, spec)`` of a Python value of tile code; a spec Python refuses for it is
    a ``TileTypeError`` (the compiler formats constants so, the interpreter every element).

    >>> from numba_tile.rules.formatting import format_value
    >>> format_value(1.5, "d")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Unknown format code 'd' for object of type 'float'
    """
    try:
        return format(value, spec)
    except (TypeError, ValueError) as error:
        raise TileTypeError(str(error)) from None


def conversion_for_spec(spec, dtype):
    """The C conversion that prints an element of ``dtype`` as Python's ``format(x, spec)``
    does; None for an empty spec (the element's plain print form). Raises
    ``TileUnsupportedFeatureError`` for specs C has no equal of (centering, other fill
    characters, grouping, ``%``, ``n``, ``b``), ``TileTypeError`` for ones Python rejects
    for an element of ``dtype``.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.formatting import conversion_for_spec
    >>> conversion_for_spec(".3f", ct.float32), conversion_for_spec("<4x", ct.int32)
    (Conversion('%.3f'), Conversion('%-4x'))
    """
    if not spec:
        return None
    match = _PYTHON_SPEC.fullmatch(spec)
    if match is None:
        raise TileTypeError(f"Invalid format specifier {spec!r}")
    format_value(False if dtype.is_bool else 0.0 if dtype.is_float else 0, spec)  # Python's errors
    parts = match.groupdict()
    unsupported = None
    if parts["align"] in ("^", "=") or parts["fill"] not in (None, " "):
        unsupported = "centering, '=' alignment and fill characters other than space"
    elif parts["grouping"] or parts["z"]:
        unsupported = "digit grouping and 'z'"
    elif parts["type"] and parts["type"] not in "dxXoeEfFgGc":
        unsupported = f"the presentation type {parts['type']!r}"
    if unsupported:
        raise TileUnsupportedFeatureError(
            f"Format spec {spec!r}: {unsupported} cannot be printed from the device")
    letter = parts["type"] or ""
    if not letter:
        if dtype.is_float:  # Python's own rules (repr, or 'g' that keeps a '.0'), not C's
            raise TileUnsupportedFeatureError(
                f"Format spec {spec!r}: a float with no presentation type cannot be printed "
                f"from the device; add one ('g', 'f', 'e')")
        letter = "d"
    flags = ("-" if parts["align"] == "<" else "") + ("" if parts["sign"] in (None, "-")
                                                       else parts["sign"])
    flags += ("#" if parts["alt"] else "") + ("0" if parts["zero"] else "")
    return Conversion(flags, parts["width"] or "", parts["precision"] or "", letter)


def check_constant_string(value, what):
    """``what`` (``print(sep=...)``, an assertion's message) must be a constant string in
    tile code: else a ``TileTypeError`` describing ``value`` (a rule operand), in both
    executors.

    >>> from numba_tile.rules.formatting import check_constant_string
    >>> check_constant_string(1, "print(sep=...)")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: print(sep=...) must be a constant string in tile code, got ...
    """
    if not isinstance(value, str):
        raise TileTypeError(f"{what} must be a constant string in tile code, got "
                            f"{describe(value)}")


#: how both executors describe text that holds run-time values (an f-string of a tile),
#: whose characters only the interpreter knows
RUN_TIME_TEXT = "text of run-time values (an f-string)"


def check_print_options(options):
    """``print`` in tile code takes ``sep=`` and ``end=``; ``flush=`` is accepted (device
    output is flushed when the host synchronizes); any other keyword (``file=``) is a
    ``TileTypeError``, in both executors.

    >>> from numba_tile.rules.formatting import check_print_options
    >>> check_print_options({"flush": True})
    >>> check_print_options({"file": None})
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: print() in tile code takes sep= and end=, not file=
    """
    unknown = sorted(set(options) - {"flush"})
    if unknown:
        raise TileTypeError(f"print() in tile code takes sep= and end=, not "
                            f"{', '.join(unknown)}=")
