"""Enumerations of the tile model: padding, rounding, memory order and memory scope.

>>> import numba_tile as ct
>>> ct.PaddingMode.NEG_INF.value, ct.RoundingMode.RN.value
('neg_inf', 'nearest_even')
"""

import enum


class PaddingMode(enum.Enum):
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


class RoundingMode(enum.Enum):
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


class MemoryOrder(enum.Enum):
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


class MemoryScope(enum.Enum):
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
