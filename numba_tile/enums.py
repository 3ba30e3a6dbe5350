"""Enumerations of the tile model: padding, rounding, memory order and memory scope.

>>> import numba_tile as ct
>>> ct.PaddingMode.NEG_INF.value, ct.RoundingMode.RN.value
('neg_inf', 'nearest_even')
"""

import enum

from .errors import TileTypeError


def missing_member_message(enum_class, name):
    """cuTile's words for ``enum_class.name`` that names no member.

    >>> import numba_tile as ct
    >>> from numba_tile.enums import missing_member_message
    >>> missing_member_message(ct.PaddingMode, "FOO")
    "'PaddingMode' object has no attribute 'FOO'"
    """
    return f"'{enum_class.__name__}' object has no attribute '{name}'"


def enum_call_arity_message(enum_class):
    """cuTile's words for an enum class called in tile code with other than one value.

    >>> import numba_tile as ct
    >>> from numba_tile.enums import enum_call_arity_message
    >>> enum_call_arity_message(ct.PaddingMode)
    'Enum constructor takes exactly one positional argument: PaddingMode(value)'
    """
    return f"Enum constructor takes exactly one positional argument: {enum_class.__name__}(value)"


class _TileEnumType(enum.EnumMeta):
    """The enums' class: a member that is not there is an ``AttributeError`` in cuTile's
    words (Python's says only the name)."""

    def __call__(cls, *args, **kwargs):
        if len(args) != 1 or kwargs:  # (no functional API: these enums are fixed)
            raise TileTypeError(enum_call_arity_message(cls))
        if getattr(args[0], "is_constant", True) is False:  # (a run-time tile of the kernel)
            raise TileTypeError(enum_constant_message(cls, args[0].describe()))
        return super().__call__(args[0])

    def __getattr__(cls, name):
        if name.startswith("_") or name not in cls.__dict__.get("_member_map_", {}):
            raise AttributeError(missing_member_message(cls, name))
        return cls._member_map_[name]


def enum_constant_message(enum_class, shown):
    """cuTile's message where an enum class is called with a value known only at run time
    (``shown``: how the value is described).

    >>> from numba_tile.enums import PaddingMode, enum_constant_message
    >>> print(enum_constant_message(PaddingMode, "run-time int32 scalar"))
    Enum constructor argument must be a constant: PaddingMode() needs a compile-time constant value, got a run-time int32 scalar
    """
    return (f"Enum constructor argument must be a constant: {enum_class.__name__}() needs a "
            f"compile-time constant value, got a {shown}")


class PaddingMode(enum.Enum, metaclass=_TileEnumType):
    """The value ``load`` gives elements that lie outside the array.

    >>> import numba_tile as ct
    >>> ct.PaddingMode.ZERO
    <PaddingMode.ZERO: 'zero'>
    """

    UNDETERMINED = "undetermined"
    ZERO = "zero"
    NEG_ZERO = "neg_zero"
    NAN = "nan"
    POS_INF = "pos_inf"
    NEG_INF = "neg_inf"


class RoundingMode(enum.Enum, metaclass=_TileEnumType):
    """Rounding mode for floating-point operations and conversions.

    >>> import numba_tile as ct
    >>> ct.RoundingMode.RZ.value
    'zero'
    """

    RN = "nearest_even"
    RZ = "zero"
    RM = "negative_inf"
    RP = "positive_inf"
    RA = "nearest_away"
    FULL = "full"
    APPROX = "approx"
    RZI = "nearest_int_to_zero"


class MemoryOrder(enum.Enum, metaclass=_TileEnumType):
    """Memory ordering of a memory operation.

    >>> import numba_tile as ct
    >>> ct.MemoryOrder.ACQ_REL.value
    'acq_rel'
    """

    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(enum.Enum, metaclass=_TileEnumType):
    """The set of threads a memory ordering applies to.

    >>> import numba_tile as ct
    >>> ct.MemoryScope.DEVICE.value
    'device'
    """

    NONE = "none"
    BLOCK = "block"
    CLUSTER = "cluster"
    DEVICE = "device"
    SYS = "sys"
