"""Frozen dataclasses in tile code, as cuTile takes them, in every mode: made in the kernel or
captured, fields of tiles, scalars, arrays, constants, tuples and instances, ``replace``,
``static_eval`` round trips, loop-carried instances, methods, properties, class constants,
class and static methods, dunders (``__call__``, ``__getitem__``, ``__setitem__``,
``__post_init__``), base classes, and cuTile's errors for what it refuses, alike in both
executors."""

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import numba_tile as ct


@dataclass(frozen=True)
class FooBar:
    foo: int
    bar: int
    baz: Any = 5


@dataclass(frozen=True)
class Tiles:
    low: Any
    high: Any
    scale: float = 2.0

    def total(self):
        return (self.low + self.high) * self.scale

    @property
    def spread(self):
        return self.high - self.low

    def __call__(self, t):
        return t * self.scale

    def __getitem__(self, i):
        return self.low if i == 0 else self.high


@dataclass(frozen=True)
class Counter:
    start: int

    def run(self, n):
        total = self.start
        for i in range(n):  # the interpreter's range and int32 scalars, in a method too
            total = total + min(i, 2)
        return total


GLOBAL = FooBar(20, 30, baz=(1, 2))


# -- making instances, fields, global capture -----------------------------------------------
@ct.kernel
def basic(x):
    fb = FooBar(2, bar=7)
    nested = FooBar(3, 4, baz=FooBar(30, 40))
    ct.scatter(x, 0, fb.foo)
    ct.scatter(x, 1, fb.bar)
    ct.scatter(x, 2, fb.baz)
    ct.scatter(x, 3, nested.baz.foo + nested.baz.baz)
    ct.scatter(x, 4, GLOBAL.baz[1] + GLOBAL.bar)


def test_fields_defaults_nesting_and_globals(run_kernel):
    x = np.zeros(5, np.int32)
    run_kernel(basic, (1,), (x,))
    np.testing.assert_array_equal(x, [2, 7, 5, 35, 32])


def test_captured_instance_and_field_named_self(run_kernel):
    @dataclass(frozen=True)
    class Selfish:
        self: int

    captured = FooBar(12, 13)

    @ct.kernel
    def kern(x):
        s = Selfish(ct.bid(0) + 1)
        ct.scatter(x, ct.bid(0), s.self * 100 + captured.foo)

    x = np.zeros(2, np.int32)
    run_kernel(kern, (2,), (x,))
    np.testing.assert_array_equal(x, [112, 212])


@ct.kernel
def tile_fields(x, out):
    t = ct.load(x, (0,), (8,))
    pair = Tiles(t, t * 3.0)
    ct.store(out, (0,), pair.total() + pair.spread + pair(t) + pair[1])


def test_tile_fields_methods_properties_and_dunders(run_kernel):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    run_kernel(tile_fields, (1,), (x, out))
    np.testing.assert_allclose(out, 8 * x + 2 * x + 2 * x + 3 * x)


@dataclass(frozen=True)
class Target:
    array: ct.Array
    index: int

    def put(self, value):
        ct.scatter(self.array, self.index, value)


@ct.kernel
def array_field(x):
    Target(x, ct.bid(0)).put(ct.bid(0) * 10)


def test_an_array_field(run_kernel):
    x = np.zeros(3, np.int32)
    run_kernel(array_field, (3,), (x,))
    np.testing.assert_array_equal(x, [0, 10, 20])


# -- static_eval, replace, loops --------------------------------------------------------------
@ct.kernel
def static_round_trips(x):
    constant = FooBar(10, bar=7)
    run_time = FooBar(ct.bid(0) + 10, 8)
    swapped = ct.static_eval(FooBar(constant.bar, constant.foo))
    same = ct.static_eval(run_time)
    again = ct.static_eval(constant)
    ct.static_assert(again.foo == 10 and swapped.foo == 7)
    ct.scatter(x, 0, swapped.foo * 100 + swapped.bar)
    ct.scatter(x, 1, same.foo * 100 + same.bar)
    ct.scatter(x, 2, again.foo)


def test_static_eval_round_trips(run_kernel):
    x = np.zeros(3, np.int32)
    run_kernel(static_round_trips, (1,), (x,))
    np.testing.assert_array_equal(x, [710, 1008, 10])


@ct.kernel
def replaced(x, n):
    fb = FooBar(1, 10, 100)
    other = dataclasses.replace(fb, baz=123, bar=(30, 40))
    for i in range(n):
        fb = dataclasses.replace(fb, foo=fb.foo + 1, bar=fb.bar + i)
    ct.scatter(x, 0, fb.foo)
    ct.scatter(x, 1, fb.bar)
    ct.scatter(x, 2, fb.baz)
    ct.scatter(x, 3, other.bar[1] + other.baz)


def test_replace_and_a_loop_carried_instance(run_kernel):
    x = np.zeros(4, np.int32)
    run_kernel(replaced, (1,), (x, 3))
    np.testing.assert_array_equal(x, [4, 13, 100, 163])


# -- methods, class members, bases --------------------------------------------------------------
@dataclass(frozen=True)
class Base:
    x: int
    NUMBER = 123

    def __call__(self, z):
        return 100 * self.x + 10 * self.y + z

    @classmethod
    def make(cls, value):
        return cls(value, value + 1)

    @staticmethod
    def twice(value):
        return value * 2


@dataclass(frozen=True)
class Derived(Base):
    y: int

    def both(self):
        return self.twice(self.x) + self(0)


@ct.kernel
def members(x):
    d = Derived.make(ct.bid(0) + 3)
    ct.scatter(x, 0, d(7))
    ct.scatter(x, 1, d.both())
    ct.scatter(x, 2, Derived.NUMBER + d.NUMBER)
    ct.scatter(x, 3, Base.twice(21))
    ct.scatter(x, 4, Counter(5).run(ct.bid(0) + 4))


def test_class_and_static_methods_constants_and_a_base_dunder(run_kernel):
    x = np.zeros(5, np.int32)
    run_kernel(members, (1,), (x,))
    np.testing.assert_array_equal(x, [347, 346, 246, 42, 10])


def _doubled(t):
    return t * 2


@dataclass(frozen=True)
class Holder:
    function: Any


@ct.kernel
def helper_in_a_field(x):
    holder = Holder(_doubled)
    ct.scatter(x, ct.bid(0), holder.function(ct.bid(0) + 1))


def test_a_helper_held_in_a_field(run_kernel):
    x = np.zeros(2, np.int32)
    run_kernel(helper_in_a_field, (2,), (x,))
    np.testing.assert_array_equal(x, [2, 4])


@dataclass(frozen=True)
class Logged:
    value: int
    out: ct.Array

    def __post_init__(self):
        ct.scatter(self.out, self.value, self.value + 100)

    def __setitem__(self, i, v):
        ct.scatter(self.out, i, v * 10)


@ct.kernel
def post_init_and_setitem(x):
    first = Logged(0, x)
    dataclasses.replace(first, value=1)
    first[2] = 5


def test_post_init_runs_after_making_and_replacing_and_setitem(run_kernel):
    x = np.zeros(3, np.int32)
    run_kernel(post_init_and_setitem, (1,), (x,))
    np.testing.assert_array_equal(x, [100, 101, 50])


@dataclass(frozen=True)
class Accumulator:
    total: Any
    count: int

    def add(self, t):
        return Accumulator(self.total + t, self.count + 1)

    @property
    def mean(self):
        return self.total / self.count


@dataclass(frozen=True)
class Polynomial:
    coefficients: Any

    def __call__(self, t):
        result = ct.zeros(t.shape, t.dtype)
        for c in ct.static_iter(self.coefficients):  # unrolled where the method is inlined
            result = result * t + c
        return result


@ct.kernel
def loop_carried_tiles(x, out, n):
    acc = Accumulator(ct.zeros((8,), ct.float32), 0)
    for i in range(n):
        acc = acc.add(ct.load(x, (i,), (8,)))  # a method read from a loop-carried instance
    pick = Polynomial((1.0, 2.0)) if ct.bid(0) == 0 else Polynomial((3.0, 4.0))
    ct.store(out, (0,), pick(acc.mean))


def test_loop_carried_tiles_and_static_iter_in_a_method(run_kernel):
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(8, np.float32)
    run_kernel(loop_carried_tiles, (1,), (x, out, 4))
    mean = x.reshape(4, 8).mean(axis=0)
    np.testing.assert_allclose(out, mean + 2)


# -- what cuTile refuses: the same error in both executors -----------------------------------
def _failure(action):
    try:
        action()
    except Exception as error:  # compared below
        return error
    return None


def _both(kernel, args):
    """The errors of the interpreter and of the compiler for ``kernel``."""
    def interpret():
        with ct.interpret():
            ct.launch(0, (1,), kernel, args)
    return (_failure(interpret),
            _failure(lambda: ct.compile(kernel, args, arch="sm_90")))


@dataclass
class Thawed:
    foo: int


@dataclass(frozen=True, init=False)
class Initless:
    foo: int


@dataclass(frozen=True)
class CustomInit:
    foo: int

    def __init__(self):
        pass


@dataclass(frozen=True)
class CustomNew:
    foo: int

    def __new__(cls):
        pass


@dataclass(frozen=True)
class FromCustomNew(CustomNew):
    bar: int


class NotADataclass(FooBar):
    pass


@dataclass(frozen=True)
class InitFalseField:
    foo: int
    bar: int = dataclasses.field(init=False)


@dataclass(frozen=True)
class Factory:
    foo: int
    bar: int = dataclasses.field(default_factory=lambda: 5)


@ct.kernel
def makes_thawed():
    Thawed(2)


@ct.kernel
def static_eval_thawed():
    ct.static_eval(Thawed(2))


@ct.kernel
def makes_initless():
    Initless(2)


@ct.kernel
def makes_custom_init():
    CustomInit()


@ct.kernel
def makes_custom_new():
    CustomNew()


@ct.kernel
def makes_from_custom_new():
    FromCustomNew(3)


@ct.kernel
def makes_not_a_dataclass():
    NotADataclass(3, 4)


@ct.kernel
def makes_init_false_field():
    InitFalseField(2)


@ct.kernel
def makes_factory():
    Factory(2)


@ct.kernel
def replaces_no_such_field():
    dataclasses.replace(FooBar(2, 7), abracadabra=8)


@ct.kernel
def calls_without_dunder():
    fb = FooBar(3, 5)
    fb(7)


@ct.kernel
def indexes_without_dunder(x):
    fb = FooBar(3, 5)
    ct.scatter(x, 0, fb[0])


@ct.kernel
def reads_no_such_attribute(x):
    ct.scatter(x, 0, FooBar(3, 5).nope)


@ct.kernel
def misses_an_argument():
    FooBar(3)


_NO_INIT = "Dataclass instance creation is only supported for dataclasses with a default " \
           "generated __init__() method"


@pytest.mark.parametrize("kernel,message", [
    (makes_thawed, "Only frozen dataclasses are supported"),
    (static_eval_thawed, "Only frozen dataclasses are supported"),
    (makes_initless, _NO_INIT),
    (makes_custom_init, _NO_INIT),
    (makes_custom_new, "Dataclasses with custom __new__ are not supported"),
    (makes_from_custom_new, "Dataclasses with custom __new__ are not supported"),
    (makes_not_a_dataclass, "Non-dataclass subclasses of a dataclass are not supported"),
    (makes_init_false_field, "Dataclasses with init=False fields are not supported"),
    (makes_factory, "Dataclasses with default_factory fields are not supported"),
    (replaces_no_such_field, "Dataclass 'FooBar' has no such field 'abracadabra'"),
    (calls_without_dunder, "Cannot call an object of type FooBar"),
    (indexes_without_dunder, "'FooBar' object is not subscriptable"),
    (misses_an_argument, "FooBar(): missing a required argument: 'bar'"),
    (reads_no_such_attribute, "'FooBar' object has no attribute 'nope'"),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_cutile_refuses_is_refused_alike(kernel, message):
    args = (np.zeros(1, np.int32),) * len(kernel.parameters)
    for error in _both(kernel, args):
        assert isinstance(error, ct.TileTypeError), repr(error)
        assert re.escape(message) and message in error.message, repr(error)
        assert error.loc is not None and error.loc.function == kernel.fn.__name__, error.loc


def test_a_captured_instance_that_is_not_frozen_is_refused():
    thawed = Thawed(3)

    @ct.kernel
    def kern(x):
        ct.scatter(x, 0, thawed.foo)

    for error in _both(kern, (np.zeros(1, np.int32),)):
        assert isinstance(error, ct.TileTypeError), repr(error)
        assert "Only frozen dataclasses are supported" in error.message


# -- the disk cache sees what a kernel reads of a dataclass -------------------------------------
_CACHED = """
import dataclasses
import numba_tile as ct

@dataclasses.dataclass(frozen=True)
class A:
    x: int

    def __call__(self, t):
        return t {op} self.x

g = A({value})

@ct.kernel
def kern(x):
    ct.scatter(x, 0, g(1))
"""


def test_the_disk_cache_key_follows_dunders_and_field_values(tmp_path, monkeypatch):
    """A kernel calls ``g(1)``: the key changes with ``A.__call__``'s code (which the kernel
    never names) and with the captured instance's field."""
    import importlib

    from numba.core import types

    from numba_tile.runtime import disk_cache
    monkeypatch.syspath_prepend(str(tmp_path))
    keys = []
    for number, (op, value) in enumerate((("+", 3), ("+", 4), ("*", 3))):
        (tmp_path / f"cached_dataclass_{number}.py").write_text(
            _CACHED.format(op=op, value=value))
        module = importlib.import_module(f"cached_dataclass_{number}")
        keys.append(disk_cache.kernel_key(module.kern, (types.int32,), "sm_90"))
    assert None not in keys and len(set(keys)) == 3, keys
