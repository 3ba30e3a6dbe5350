"""Calls tile code may not make are cuTile's ``TileTypeError`` in every mode: builtins of the
host (``eval``, ``open``...) and instances of classes other than frozen dataclasses; a class's
constants can be read (``numba_tile.rules.calls``)."""

import numpy as np
import pytest

import numba_tile as ct


class Config:
    BLOCK = 4
    SCALE = 2.0


class Foo:
    pass


@ct.kernel
def calls_eval(x):
    eval("2 + 2")


@ct.kernel
def calls_open(x):
    open("data.txt")


@ct.kernel
def makes_a_foo(x):
    Foo()


def test_host_builtins_are_refused(run_kernel):
    with pytest.raises(ct.TileTypeError, match=r"eval\(\) is not supported in device code"):
        run_kernel(calls_eval, (1,), (np.zeros(4, np.float32),))
    with pytest.raises(ct.TileTypeError, match=r"open\(\) is not supported in device code"):
        run_kernel(calls_open, (1,), (np.zeros(4, np.float32),))


def test_instances_of_plain_classes_are_refused(run_kernel):
    with pytest.raises(ct.TileTypeError,
                       match='Creating instances of type "Foo" is not supported in device code'):
        run_kernel(makes_a_foo, (1,), (np.zeros(4, np.float32),))


def test_a_local_class_is_refused_too(run_kernel):
    class Local:
        pass

    @ct.kernel
    def makes_a_local(x):
        Local()

    with pytest.raises(ct.TileTypeError, match='Creating instances of type "Local"'):
        run_kernel(makes_a_local, (1,), (np.zeros(4, np.float32),))


@ct.kernel
def reads_class_constants(x):
    t = ct.load(x, (0,), (Config.BLOCK,)) * Config.SCALE
    ct.store(x, (0,), t)


def test_class_constants_can_be_read(run_kernel):
    x = np.ones(4, np.float32)
    run_kernel(reads_class_constants, (1,), (x,))
    np.testing.assert_array_equal(x, np.full(4, 2.0))
