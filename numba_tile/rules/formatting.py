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

import re

from ..errors import TileTypeError, TileUnsupportedFeatureError

_C_CONVERSION = re.compile(
    r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcsp%])")

INTEGER_CONVERSIONS = "diouxXcp"
FLOAT_CONVERSIONS = "eEfFgGaA"


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

        Integer conversions take the element's integer value (floats truncate); ``%u``,
        ``%o``, ``%x`` and ``%X`` show a negative value as two's complement of the dtype's
        width, at least 32 bits (64 for floats), as C's ``printf`` does with the argument
        the device passes.

        >>> import numba_tile as ct
        >>> from numba_tile.rules.formatting import Conversion
        >>> Conversion("", "", "", "x").format(-1, ct.int32), Conversion("0", "4", "", "d").format(7, ct.int8)
        ('ffffffff', '0007')
        """
        value = value.item() if hasattr(value, "item") else value
        letter = {"i": "d", "p": "x"}.get(self.letter, self.letter)
        if self.is_integer:
            value = int(value)
            if letter in "uoxX" and value < 0:
                bits = max(32, dtype.itemsize * 8) if dtype.is_integral else 64
                value += 1 << bits
            letter = "d" if letter == "u" else letter
        elif self.is_float:
            value = float(value)
        precision = f".{self.precision}" if self.precision else ""
        return f"%{self.flags}{self.width}{precision}{letter}" % value


def python_dtype(value):
    """The dtype a Python number has in tile code: bool_, int32 or float32.

    >>> from numba_tile.rules.formatting import python_dtype
    >>> python_dtype(3), python_dtype(0.5), python_dtype(True)
    (int32, float32, bool_)
    """
    from .. import dtypes as d
    if isinstance(value, bool):
        return d.bool_
    return d.int32 if isinstance(value, int) else d.float32


def parse_c_format(fmt):
    """The pieces of a C format string: literal text (``str``, with ``%%`` made ``%``) and
    :class:`Conversion` objects, in order.

    >>> from numba_tile.rules.formatting import parse_c_format
    >>> parse_c_format("%ld items")
    [Conversion('%d'), ' items']
    """
    pieces, position = [], 0
    for match in _C_CONVERSION.finditer(fmt):
        if match.start() > position:
            pieces.append(fmt[position:match.start()])
        position = match.end()
        flags, width, precision, _length, letter = match.groups()
        if letter == "%":
            pieces.append("%")
        elif letter == "s":
            raise TileUnsupportedFeatureError(
                f"printf format {fmt!r}: %s is not supported; print text with ct.print")
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


def check_printf_arguments(fmt, count):
    """The conversions of ``fmt``, checked against the number of arguments given.

    >>> from numba_tile.rules.formatting import check_printf_arguments
    >>> check_printf_arguments("%d %d", 1)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: printf format '%d %d' takes 2 arguments, got 1
    """
    conversions = [p for p in parse_c_format(fmt) if isinstance(p, Conversion)]
    if len(conversions) != count:
        raise TileTypeError(f"printf format {fmt!r} takes {len(conversions)} arguments, got "
                            f"{count}")
    return conversions


_PYTHON_SPEC = re.compile(
    r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?(?P<z>z)?(?P<alt>#)?(?P<zero>0)?"
    r"(?P<width>\d+)?(?P<grouping>[,_])?(?:\.(?P<precision>\d+))?(?P<type>[a-zA-Z%])?")


def conversion_for_spec(spec, dtype):
    """The C conversion that prints an element of ``dtype`` as Python's ``format(x, spec)``
    does; None for an empty spec (the element's plain print form). Raises
    ``TileUnsupportedFeatureError`` for specs C has no equal of (centering, other fill
    characters, grouping, ``%``, ``n``, ``b``), ``TileTypeError`` for ones Python rejects.

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
    if dtype.is_float and letter in ("d", "x", "X", "o", "c"):
        raise TileTypeError(f"Unknown format code {letter!r} for a {dtype} value")
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
