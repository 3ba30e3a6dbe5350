"""Rules of the elementwise ops: arithmetic, bitwise, comparison, unary math and ``where``.

>>> import numba_tile as ct
>>> from numba_tile.rules.elementwise import binary
>>> from numba_tile.promotion import Loose
>>> spec, operand_dtype = binary("truediv", ct.int16(3), Loose(2))
>>> spec, operand_dtype
(Spec(float32, (), constant=True), int16)
"""

from .. import dtypes as d
from ..enums import RoundingMode
from ..errors import TileTypeError, TileValueError
from ..promotion import Loose, common_dtype, loose_concrete_dtype
from . import operators
from .core import (Spec, as_operand, broadcast_many, check_not_pointer, constant_value,
                   describe, operand_constant, operand_dtype, operand_shape, type_name)

ARITHMETIC = operators.names("arithmetic")
FLOAT_BINARY = frozenset({"atan2", "copysign", "fmod"})
MINMAX = frozenset({"minimum", "maximum"})
BITWISE = operators.names("bitwise")
SHIFTS = operators.names("shift")
COMPARISONS = operators.names("comparison")
BINARY_OPS = ARITHMETIC | FLOAT_BINARY | MINMAX | BITWISE | SHIFTS | COMPARISONS

FLOAT_UNARY = frozenset({"exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
                         "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                         "tanh", "asinh", "acosh", "atanh", "floor", "ceil"})
UNARY_OPS = FLOAT_UNARY | operators.names("unary") | {"isnan", "isinf"}


def constant_division_error(error, op, x, y):
    """The ``TileValueError`` of a constant expression ``x <op> y`` (``op`` by name) that
    divides by zero: Python's words (cuTile's), and the expression.

    >>> from numba_tile.rules.elementwise import constant_division_error
    >>> print(constant_division_error(ZeroDivisionError("integer division or modulo by zero"),
    ...                               "floordiv", 1, 0))
    integer division or modulo by zero: the constant expression '//' (floordiv) of 1 and 0
    """
    return TileValueError(f"{error}: the constant expression {op_label(op)} of {x!r} and "
                          f"{y!r}")


def op_label(op):
    """How an op is named in messages: ``'+' (add)``.

    >>> from numba_tile.rules.elementwise import op_label
    >>> op_label("add"), op_label("bitwise_not"), op_label("abs"), op_label("exp")
    ("'+' (add)", "'~' (bitwise_not)", 'abs', 'exp')
    """
    symbol = getattr(operators.by_name(op), "symbol", None)  # abs is called, not written
    return f"'{symbol}' ({op})" if symbol else op


def _result_spec(dtype, *operands):
    shape = broadcast_many(operand_shape(x) for x in operands)
    return Spec(dtype, shape, all(operand_constant(x) for x in operands))


def binary(op, x, y):
    """Rule of a binary elementwise op on two operands (at most one a :class:`Loose`).

    Returns ``(result_spec, operand_dtype)``: both operands are converted to
    ``operand_dtype`` before the op is applied.
    """
    if op not in BINARY_OPS:
        raise TileTypeError(f"Unknown binary op {op}")
    for side, value in (("Left", x), ("Right", y)):
        check_arithmetic(op, value, f"{side}-hand side has non-arithmetic dtype")
    if op in BITWISE or op in SHIFTS:
        check_bitwise_operands(op, x, y)
    operand = common_dtype(x if isinstance(x, Loose) else x.dtype,
                           y if isinstance(y, Loose) else y.dtype, op_name=op_label(op))
    result = operand
    if op in COMPARISONS:
        result = d.bool_
    elif op in BITWISE or op in SHIFTS:
        allowed = operand.is_integral or (operand.is_bool and op in BITWISE)
        if not allowed:
            raise TileTypeError(f"{op_label(op)} needs integer{'' if op in SHIFTS else ' or bool'}"
                                f" operands, got {describe(x)} and {describe(y)}")
    elif op in FLOAT_BINARY:
        if not operand.is_float:
            raise TileTypeError(f"{op} needs floating-point operands, got {describe(x)} and "
                                f"{describe(y)}")
    elif operand.is_bool and op not in MINMAX:
        prefix = "Modulo operation does not support bool: " if op == "mod" else ""
        raise TileTypeError(f"{prefix}Binary arithmetic op `{op}` does not support bool, "
                            f"please cast bool to int (with astype)")
    elif op == "truediv" and not operand.is_float:
        result = computed_in_float(operand)
    return _result_spec(result, x, y), operand


def check_bitwise_operands(op, x, y):
    """cuTile's rules of the operands of a bitwise op or a shift (``x`` or ``y`` a
    :class:`Loose` constant or a tile/scalar): ``&``, ``|``, ``^`` take integers or bools of
    one dtype (a loose constant takes the other's), never bool with int8; a shift takes
    integers of any two dtypes (promoted), never bools. The messages are cuTile's.

    >>> import numba_tile as ct
    >>> from numba_tile.promotion import Loose
    >>> from numba_tile.rules.elementwise import check_bitwise_operands
    >>> check_bitwise_operands("bitwise_and", ct.int32(1), Loose(3))
    >>> check_bitwise_operands("bitwise_and", ct.int32(1), ct.int64(3))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Bitwise operands must have same data type, got: int32 ...
    """
    dtypes = [loose_concrete_dtype(v.value) if isinstance(v, Loose) else v.dtype
              for v in (x, y)]
    if op in SHIFTS:
        for side, dtype in zip(("left", "right"), dtypes):
            if not dtype.is_integral:
                raise TileTypeError(f"Bitwise shift requires an integer for {side}-hand side, "
                                    f"got: {dtype}")
        return
    if not all(dtype.is_integral or dtype.is_bool for dtype in dtypes):
        raise TileTypeError("Bitwise operations require integers or booleans. Use an explicit "
                            "cuda.tile.bitcast() for non-integer operands.")
    if isinstance(x, Loose) == isinstance(y, Loose) and dtypes[0] != dtypes[1]:
        raise TileTypeError(f"Bitwise operands must have same data type, got: {dtypes[0]} and "
                            f"{dtypes[1]}")
    if set(dtypes) == {d.bool_, d.int8}:
        raise TileTypeError("Bitwise op does not support bool and int8")


def check_flags(op, **flags):
    """Each flag of an elementwise op (``flush_to_zero``, ``propagate_nan``) must be a
    constant bool: anything else (``"yes"``, ``1``, a run-time value) is a TileTypeError,
    never taken for its truth.

    >>> from numba_tile.rules.elementwise import check_flags
    >>> check_flags("add", flush_to_zero=True)
    >>> check_flags("add", flush_to_zero="yes")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: flush_to_zero of add must be a constant bool, got str 'yes'
    """
    for name, value in flags.items():
        if not isinstance(constant_value(value, None), bool):
            raise TileTypeError(f"{name} of {op} must be a constant bool, got "
                                f"{describe(value)}")


# The rounding modes each op takes and whether it flushes subnormals to zero, as cuTile
# defines them; an op by cuTile's name (the reductions and scans by their combining op)
_BASIC_ROUNDING = frozenset({RoundingMode.RN, RoundingMode.RZ, RoundingMode.RM, RoundingMode.RP})
_ROUNDING_MODES = {
    "add": _BASIC_ROUNDING, "sub": _BASIC_ROUNDING, "mul": _BASIC_ROUNDING,
    "truediv": _BASIC_ROUNDING | {RoundingMode.FULL, RoundingMode.APPROX},
    "sqrt": _BASIC_ROUNDING | {RoundingMode.APPROX},
    "tanh": frozenset({RoundingMode.FULL, RoundingMode.APPROX}),
    "exp": frozenset({RoundingMode.FULL, RoundingMode.APPROX}),
}
_FLUSHES_TO_ZERO = frozenset({"add", "sub", "mul", "truediv", "max", "min", "exp2", "sqrt",
                              "rsqrt"})
_CUTILE_NAMES = {"maximum": "max", "minimum": "min", "sum": "add", "prod": "mul",
                 "cumsum": "add", "cumprod": "mul"}


def check_float_options(op, dtype, rounding_mode, flush_to_zero):
    """cuTile's rules of ``rounding_mode`` and ``flush_to_zero`` for ``op`` computed in
    ``dtype``: each op takes the rounding modes it defines, on float16, bfloat16, float32 or
    float64 (``FULL`` and ``APPROX`` on float32 only); flush-to-zero where the op defines
    it, on float32 only. The messages are cuTile's.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import check_float_options
    >>> check_float_options("add", ct.float16, ct.RoundingMode.RZ, False)
    >>> check_float_options("add", ct.float16, None, True)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Flush to zero can only be used for float32 type, but got ...
    """
    name = _CUTILE_NAMES.get(op, op)
    if rounding_mode is not None:
        if not isinstance(rounding_mode, RoundingMode):
            shown = rounding_mode.describe() if hasattr(rounding_mode, "describe") else \
                repr(rounding_mode)  # (a run-time value, as each executor has it)
            raise TileTypeError(f"rounding_mode of {op} must be a ct.RoundingMode, got "
                                f"{shown}")
        if rounding_mode not in _ROUNDING_MODES.get(name, ()):
            raise TileTypeError(f"Rounding mode {rounding_mode.value} is not supported for "
                                f"{name}")
        if not (dtype.is_float and dtype.arithmetic):
            raise TileTypeError(f"Rounding mode can only be used for unrestricted float types, "
                                f"but got {dtype}")
        if rounding_mode in (RoundingMode.APPROX, RoundingMode.FULL) and dtype != d.float32:
            raise TileTypeError(f"Rounding mode {rounding_mode.value} can only be used for "
                                f"float32 type, but got {dtype}")
    if flush_to_zero:
        if name not in _FLUSHES_TO_ZERO:
            raise TileTypeError(f"Flush to zero is not supported for {name}")
        if dtype != d.float32:
            raise TileTypeError(f"Flush to zero can only be used for float32 type, but got "
                                f"{dtype}")


def computed_in_float(dtype):
    """The floating-point dtype that an integer or bool operand of a floating-point op (``/``,
    ``exp``, ``sin``, ...) is converted to first: float32, cuTile's default float type,
    whatever the integer's width; a float dtype stays itself.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import computed_in_float
    >>> computed_in_float(ct.int16), computed_in_float(ct.uint64), computed_in_float(ct.float16)
    (float32, float32, float16)
    """
    return dtype if dtype.is_float else d.float32


#: the ops of floats alone (cuTile's): an integer or bool operand is an error, not converted
STRICTLY_FLOAT_UNARY = frozenset({"floor", "ceil"})


def unary_operand_dtype(op, dtype):
    """The dtype a unary op's operand of ``dtype`` is converted to before the op, as cuTile
    converts it: the floating-point ops compute integers and bools in float32; ``-`` of a
    bool negates it as an int32.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import unary_operand_dtype
    >>> unary_operand_dtype("exp", ct.int8), unary_operand_dtype("abs", ct.int8)
    (float32, int8)
    """
    if op in FLOAT_UNARY and op not in STRICTLY_FLOAT_UNARY:
        return computed_in_float(dtype)
    if op == "negative" and dtype.is_bool:
        return d.int32
    return dtype


def check_divmod(x, y):
    """``divmod`` takes integers only, as cuTile's (the common dtype of ``x`` and ``y``).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import check_divmod
    >>> check_divmod(ct.float32(1.5), ct.float32(2.0))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: divmod() is not implemented for floating point values
    """
    x, y = as_operand(x), as_operand(y)
    dtypes = {operand_dtype(v) for v in (x, y) if not isinstance(v, Loose)}
    if any(dtype.is_float for dtype in dtypes) or not dtypes and any(
            isinstance(v.value, float) for v in (x, y)):
        raise TileTypeError("divmod() is not implemented for floating point values")
    if dtypes == {d.bool_}:
        raise TileTypeError("divmod() operation does not support bool")


def check_arithmetic(op, x, cutile_words=None):
    """An elementwise op computes only on arithmetic dtypes: tfloat32 and the 8- and 4-bit
    floats are storage formats (of ``mma`` operands, of loads and stores), with no arithmetic,
    comparison or math of their own in cuTile, so an op on them is a ``TileTypeError`` that
    says to convert first (``where`` and ``astype`` only move or convert values: they take
    them). ``cutile_words`` begin the message where cuTile has words for the case (a binary
    op's "Left-hand side has non-arithmetic dtype"), followed by the dtype.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import check_arithmetic
    >>> check_arithmetic("add", ct.float8_e4m3fn(1.0))
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: '+' (add) of a float8_e4m3fn scalar is not supported: ...
    """
    dtype = operand_dtype(x)
    if not dtype.arithmetic:
        label = op_label(op) if getattr(operators.by_name(op), "symbol", None) else f"{op}()"
        shape = operand_shape(x)  # (not its constness, which the executors see apart)
        what = f"{dtype} scalar" if shape == () else f"{dtype} tile of shape {shape}"
        prefix = f"{cutile_words} {dtype}: " if cutile_words else ""
        if d.is_foreign_pointer(dtype):  # (an address: nothing converts it to a number)
            raise TileTypeError(f"{prefix}{label} of a {what} is not supported: a foreign "
                                f"pointer has no arithmetic")
        raise TileTypeError(f"{prefix}{label} of a {what} is not supported: {dtype} is a "
                            f"storage dtype without arithmetic; convert it with "
                            f"astype(ct.float32) first")


def unary(op, x):
    """Rule of a unary elementwise op. Returns the result spec."""
    check_arithmetic(op, x)
    # (the floating-point ops take every operand: integers and bools are converted above)
    if op in STRICTLY_FLOAT_UNARY and not operand_dtype(x).is_float:  # cuTile's words
        raise TileTypeError(f"{'Boolean' if operand_dtype(x).is_bool else 'Integer'} inputs "
                            f"are not supported")
    dtype = unary_operand_dtype(op, operand_dtype(x))
    if op == "bitwise_not":
        if dtype.is_float:
            raise TileTypeError(f"Float inputs are not supported: {op_label(op)} needs an "
                                f"integer or bool operand, got "
                                f"{describe(x)}")
    elif op == "abs":
        if dtype.is_bool:
            raise TileTypeError(f"{op} is not defined on bool_ operands")
    elif op == "negative":
        pass
    elif op in ("isnan", "isinf"):
        if not isinstance(x, Loose) and not operand_dtype(x).is_float:
            raise TileTypeError(f"Unexpected input type {type_name(x)}: {op}() takes floats")
        return Spec(d.bool_, operand_shape(x), operand_constant(x))
    elif op not in FLOAT_UNARY:
        raise TileTypeError(f"Unknown unary op {op}")
    return Spec(dtype, operand_shape(x), operand_constant(x))


def where(cond, x, y):
    """Rule of ``where(cond, x, y)``: ``cond`` is bool or numeric (true where it is not
    zero, as cuTile converts it), ``x`` and ``y`` promote together.

    Returns ``(result_spec, value_dtype)``.
    """
    cond, x, y = as_operand(cond, "the condition"), as_operand(x), as_operand(y)
    condition = operand_dtype(cond)
    if condition is not d.bool_ and not condition.arithmetic:
        raise TileTypeError(f"where() needs a bool_ or numeric condition, got {describe(cond)}")
    if isinstance(x, Loose) and isinstance(y, Loose):
        dtype = _loose_pair_dtype(x, y)
    else:
        dtype = common_dtype(x if isinstance(x, Loose) else x.dtype,
                             y if isinstance(y, Loose) else y.dtype, op_name="where")
    return _result_spec(dtype, cond, x, y), dtype


def _loose_pair_dtype(x, y):
    """Two constants that must become one typed value: the higher category's concrete dtype."""
    rank = d._CATEGORY_RANK
    a, b = x.concrete_dtype(), y.concrete_dtype()
    if rank[a.category] != rank[b.category]:
        return a if rank[a.category] > rank[b.category] else b
    if a.is_integral:
        return a if a.bitwidth >= b.bitwidth else b
    return a


def astype(x, dtype, rounding_mode=None):
    """Rule of ``astype``: any numeric dtype converts to any other; a ``rounding_mode`` is
    for a conversion between float dtypes, one of those cuTile defines for it
    (:func:`conversion_rounding_modes`). Returns the result spec.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import astype
    >>> astype(ct.float32(1.5), ct.int32, ct.RoundingMode.RZ)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: rounding_mode is only valid for float to float conversions
    """
    if not isinstance(dtype, d.DType):
        raise TileTypeError(f"astype() needs a dtype, got {describe(dtype)}")
    check_not_pointer("astype", operand_dtype(x))
    if rounding_mode is not None:
        source = operand_dtype(x)
        if not (source.is_float and dtype.is_float):
            raise TileTypeError("rounding_mode is only valid for float to float conversions")
        modes = conversion_rounding_modes(source, dtype)
        if source is not dtype and rounding_mode not in modes:
            raise TileTypeError(f"rounding_mode={rounding_mode} is not supported for conversion "
                                f"from {source} to {dtype}, supported rounding modes for this "
                                f"conversion are {tuple(modes)}")
    return Spec(dtype, operand_shape(x), operand_constant(x))


_RM = RoundingMode
_DIRECTED = (_RM.RN, _RM.RZ, _RM.RM, _RM.RP, _RM.RA)
_EIGHT_BIT = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn")


def conversion_rounding_modes(source, target):
    """The rounding modes of a conversion from float dtype ``source`` to ``target``, as
    cuTile 1.7 defines them: to float64 all five directed modes; to float32 RN and RZ, RM
    and RP, RA but from float64; to tfloat32 RN, RZ and RA but from float64; to float16 RN
    and RZ, RM, RP and RA from a narrower dtype only; to bfloat16 RN and RZ; to the 8- and
    4-bit floats RN only. FULL and APPROX round no conversion.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.elementwise import conversion_rounding_modes
    >>> [m.name for m in conversion_rounding_modes(ct.float32, ct.float16)]
    ['RN', 'RZ']
    """
    if target is d.float64:
        return _DIRECTED
    if target is d.float32:
        return _DIRECTED if source is not d.float64 else _DIRECTED[:4]
    if target is d.tfloat32:
        return (_RM.RN, _RM.RZ) + ((_RM.RA,) if source is not d.float64 else ())
    if target is d.float16:
        narrower = source not in (d.float64, d.float32, d.tfloat32)
        return (_RM.RN, _RM.RZ) + ((_RM.RM, _RM.RP, _RM.RA) if narrower else ())
    if target is d.bfloat16:
        return (_RM.RN, _RM.RZ)
    return (_RM.RN,)
