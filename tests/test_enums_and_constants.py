"""Enum members, NumPy scalars, typed constants and unpacking in tile code, by cuTile's rules in
every mode: ``Color(0)`` makes the member of a constant value (``numba_tile.rules.enums``),
members of a plain ``Enum`` are not ordered, a captured ``np.int16(4)`` is an int16 constant,
``ct.uint32(-3)`` keeps the low bits, ``ct.ensure_constant`` of a run-time value is a static
assertion error, and unpacking needs as many values as targets."""

import enum

import numpy as np
import pytest

import numba_tile as ct


class Color(enum.Enum):
    RED = 0
    GREEN = 1


class Status(enum.Enum):
    OK = "ok"
    ERROR = "error"


class Weight(enum.Enum):
    LIGHT = 0.5
    HEAVY = 2.0


class Priority(enum.IntEnum):
    LOW = 0
    HIGH = 2


SCALE = np.int16(4)


@ct.kernel
def members(x):
    i = 1
    ct.scatter(x, 0, ct.where(Color(i) == Color.GREEN, 1, 0))
    ct.scatter(x, 1, ct.where(Status("ok") == Status.OK, 1, 0))
    ct.scatter(x, 2, ct.where(Weight(0.5) != Weight.HEAVY, 1, 0))
    ct.scatter(x, 3, ct.where(Priority.LOW < Priority.HIGH, 1, 0))
    ct.scatter(x, 4, ct.where(Weight.HEAVY.value == 2.0, 1, 0))
    scale_dtype = SCALE.dtype
    ct.static_assert(scale_dtype == ct.int16)
    ct.scatter(x, 5, ct.ensure_constant(SCALE + 1))  # an int16 constant
    ct.scatter(x, 6, ct.astype(ct.int64(ct.uint32(-3)) - 4294967290, ct.int32))


def test_members_of_constant_values(run_kernel):
    x = np.zeros(7, np.int32)
    run_kernel(members, (1,), (x,))
    np.testing.assert_array_equal(x, [1, 1, 1, 1, 1, 5, 3])


@ct.kernel
def run_time_member(x):
    ct.scatter(x, 0, Color(ct.bid(0)).value)


@ct.kernel
def ordered_members(x):
    ct.scatter(x, 0, ct.where(Color.RED < Color.GREEN, 1, 0))


@ct.kernel
def no_such_value(x):
    ct.scatter(x, 0, Color(99).value)


@ct.kernel
def no_such_name(x):
    ct.scatter(x, 0, Color("foo").value)


@ct.kernel
def too_few(x):
    t = 1, 2
    a, b, c = t
    ct.scatter(x, 0, a + b + c)


@ct.kernel
def too_many(x):
    t = 1, (2, 3, 4)
    a, (b, c) = t
    ct.scatter(x, 0, a + b + c)


@ct.kernel
def run_time_constant(x):
    ct.scatter(x, 0, ct.ensure_constant(ct.bid(0)))


@pytest.mark.parametrize("kernel,error,message", [
    (run_time_member, ct.TileTypeError, "Color() needs a compile-time constant value, got a "
                                        "run-time int32 scalar"),
    (ordered_members, ct.TileTypeError, "Operator '<' is not supported for members of Color"),
    (no_such_value, ct.TileValueError, "99 is not a valid Color"),
    (no_such_name, ct.TileValueError, "'foo' is not a valid Color"),
    (too_few, ct.TileValueError, "Too few values to unpack (expected 3, got 2)"),
    (too_many, ct.TileValueError, "Too many values to unpack (expected 2, got 3)"),
    (run_time_constant, ct.TileStaticAssertionError, "is not a compile-time constant"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_the_rules_refuse(run_kernel, kernel, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_kernel(kernel, (1,), (np.zeros(1, np.int32),))


@ct.kernel
def enum_by_path(x):
    if ct.bid(0) == 0:
        order = ct.MemoryOrder.RELAXED
    else:
        order = ct.MemoryOrder.WEAK
    ct.scatter(x, 0, ct.where(order == ct.MemoryOrder.WEAK, 1, 0))


def test_a_constant_that_depends_on_the_path_is_a_type_error(run_kernel):
    """Enum members are constants: one per path cannot meet (the interpreter compares the
    value of the side that ran with the other side's)."""
    with pytest.raises(ct.TileTypeError, match="Type of `order` depends on path taken: "
                                               "<enum constant MemoryOrder.WEAK> .* vs. "
                                               "<enum constant MemoryOrder.RELAXED>"):
        run_kernel(enum_by_path, (1,), (np.zeros(1, np.int32),))


@ct.kernel
def too_big(x):
    t = 18446744073709551616
    ct.scatter(x, (), t)


def test_an_integer_constant_beyond_64_bits_is_refused_compiled():
    with pytest.raises(ct.TileValueError, match="out of range of any supported integer type"):
        ct.compile(too_big, (np.zeros((), np.uint64),), arch="sm_90")
