"""Launch plans (``numba_tile.runtime.launch_plans``): a plan takes exactly the launches whose
``quick_signature`` key is the one it was written for, and packs the same values; anything
else, and invalid grids and streams, go the general way (the plan returns False).

No GPU is needed: plans are written for a stand-in of the loaded kernel that records what
a launch would pack and start; GPU arrays are the stand-ins of ``test_arguments``. The GPU
launches through plans are in ``test_gpu.py``.
"""

import struct
import threading

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.runtime import gpu_launch as gpu
from numba_tile.runtime.arguments import quick_signature
from numba_tile.compiler.types import is_aligned
from numba_tile.runtime.launch_plans import MAX_PLANS, make_plan
from numba_tile.runtime.grids import is_valid_grid
from test_arguments import HANDLED, FakeTensor, GPUArray, TORCH_FLOAT16


class LoadedStandIn:
    """What a plan uses of :class:`numba_tile.runtime.gpu_launch.LoadedKernel`, recording the launches."""

    def __init__(self, status=0, tensor_maps=()):
        self.buffer, self.lock, self.tensor_maps = object(), threading.Lock(), tensor_maps
        self.arguments, self.status, self.packed, self.started = {}, status, None, 0
        self.failures = []

    def pack(self, buffer, offset, *values):
        if any(type(v) is int and not -2**63 <= v < 2**64 for v in values):
            raise struct.error("out of range")
        self.packed = values

    def start(self, *arguments):
        self.started += 1
        self.started_with = arguments
        return self.status

    def driver_arguments(self, grid, handle):
        self.made = getattr(self, "made", 0) + 1
        return self.arguments.setdefault((grid, handle), (grid, handle))

    def failed(self, status):
        self.failures.append(status)
        return False

    def encode_maps(self, flat):
        return [f"map of {flat[0]}"]


def _plan(kernel, args, target):
    key = quick_signature(kernel, args)[0]
    return make_plan(key, args, target, stream_handle=lambda s: s.handle,
                     valid_grid=is_valid_grid)


@pytest.mark.parametrize("kernel", list(HANDLED), ids=lambda k: k.__name__)
def test_a_plan_takes_exactly_the_launches_of_its_key(kernel):
    for seen in HANDLED[kernel]:
        target = LoadedStandIn()
        plan = _plan(kernel, (seen,), target)
        for now in HANDLED[kernel]:
            key, flat = quick_signature(kernel, (now,))
            taken = plan(0, (2, 3), (now,))
            assert taken == (key == quick_signature(kernel, (seen,))[0]), (seen, now)
            if taken:
                assert list(target.packed) == flat, (seen, now)


def test_a_plan_of_several_arguments_checks_each():
    @ct.kernel
    def mixed(a, n, x, flag, t, TILE: ct.Constant[int]):
        pass
    args = (GPUArray((64, 16), pointer=0x10000), 3, 0.25, True,
            FakeTensor((8, 4), (4, 1), pointer=0x20000), 128)
    target = LoadedStandIn()
    plan = _plan(mixed, args, target)
    others = [
        (GPUArray((64, 16), "<f2", pointer=0x10000), 3, 0.25, True, args[4], 128),
        (args[0], 3.0, 0.25, True, args[4], 128),
        (args[0], 3, 0.25, 1, args[4], 128),
        (args[0], 3, 0.25, True, FakeTensor((8, 4), (4, 1), TORCH_FLOAT16), 128),
        (args[0], 3, 0.25, True, FakeTensor((8, 4), (4, 1), pointer=0x20004), 128),
        (args[0], 3, 0.25, True, FakeTensor((8, 4, 1), (4, 1, 1)), 128),
        (args[0], 3, 0.25, True, FakeTensor((8, 4), (4, 1), device="cpu"), 128),
        (args[0], 3, 0.25, True, args[4], 64),
        (args[0], 2**31, 0.25, True, args[4], 128),
        args[:5], args + (1,), list(args)]
    for other in others:
        assert not plan(0, (1,), other), other
        assert target.started == 0
    same_signature = (GPUArray((32, 8), pointer=0x30000), -5, 1e9, False,
                      FakeTensor((16, 4), (4, 1), pointer=0x40000), 128)
    assert plan(7, (4, 2), same_signature)
    assert list(target.packed) == quick_signature(mixed, same_signature)[1]
    assert target.arguments == {((4, 2), 7): ((4, 2), 7)}


def test_the_unrolled_alignment_rule_is_is_aligned():
    """The rule a plan writes out for a rank is :func:`is_aligned`'s: random tensors,
    aligned and not, each taken by the plan of its alignment only."""
    rng = np.random.default_rng(3)

    @ct.kernel
    def one(x):
        pass
    for _ in range(1000):  # mostly near-aligned: each clause of the rule decides some
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.choice([1, 2, 4, 6, 8, 12], ndim))
        strides = [int(s) for s in rng.choice([-8, -4, 0, 2, 4, 8, 16, 6], ndim)]
        strides[-1] = 1 if rng.random() < 0.8 else int(rng.choice([0, 2, -1]))
        strides = tuple(strides)
        pointer = int(rng.choice([0x1000, 0x1000, 0x1000, 0x1004, 0x1008]))
        tensor = FakeTensor(shape, strides, pointer=pointer)
        expected = is_aligned(pointer, shape, strides, 4)
        assert quick_signature(one, (tensor,))[0][0][2] == expected
        for aligned in (True, False):
            model = FakeTensor((4,) * ndim, (16,) * (ndim - 1) + (1,),
                               pointer=0x1000 if aligned else 0x1004)
            plan = _plan(one, (model,), LoadedStandIn())
            assert plan(0, (1,), (tensor,)) == (aligned == expected), (shape, strides, pointer)


@pytest.mark.parametrize("grid", [(0,), (2**31,), (1, 65536), (1, 1, 1, 1), (2.0,),
                                  (True,), [4], None, (np.int32(4),)])
def test_grids_a_launch_refuses_go_the_general_way(grid):
    target = LoadedStandIn()
    plan = _plan(ct.kernel(lambda n: None), (3,), target)
    assert not plan(0, grid, (3,))
    assert target.started == 0 and target.arguments == {}


def test_streams_and_failures_go_the_general_way():
    class Stream:
        handle = 0x5000
    target = LoadedStandIn()
    plan = _plan(ct.kernel(lambda n: None), (3,), target)
    assert not plan(None, (1,), (3,))
    assert plan(Stream(), (1,), (4,)) and target.packed == (4,)
    assert ((1,), 0x5000) in target.arguments
    failing = LoadedStandIn(status=201)
    assert not _plan(ct.kernel(lambda n: None), (3,), failing)(0, (1,), (3,))
    assert failing.failures == [201]


def test_the_last_grid_and_stream_are_remembered_by_identity():
    """A launch with the very grid and stream objects of the plan's last one reuses its
    driver arguments; any other grid or stream (equal or not, valid or not) is read
    again, so every launch starts with its own grid and stream."""
    class Stream:
        def __init__(self, handle):
            self.handle = handle
    target = LoadedStandIn()
    plan = _plan(ct.kernel(lambda n: None), (3,), target)
    first, other = Stream(0x5000), Stream(0x6000)
    assert not plan(None, None, (3,))  # nothing remembered yet matches anything
    grid = (4,)
    assert plan(first, grid, (3,)) and target.started_with == ((4,), 0x5000)
    made = target.made
    assert plan(first, grid, (3,)) and target.started_with == ((4,), 0x5000)
    assert target.made == made  # remembered: nothing made again
    for stream, launch_grid, expected in [(first, (8,), ((8,), 0x5000)),
                                          (other, (8,), ((8,), 0x6000)),
                                          (first, grid, ((4,), 0x5000)),
                                          (other, tuple([4]), ((4,), 0x6000)),
                                          (0, (2, 2), ((2, 2), 0))]:
        assert plan(stream, launch_grid, (3,)) and target.started_with == expected
    started = target.started
    for stream, launch_grid in [(None, (2, 2)), (0, (2.0, 2.0)), (0, [2, 2]), (first, (0,))]:
        assert not plan(stream, launch_grid, (3,))
    assert target.started == started
    assert plan(0, (2, 2), (3,)) and target.started_with == ((2, 2), 0)


def test_a_value_that_does_not_fit_its_field_goes_the_general_way():
    target = LoadedStandIn()
    plan = _plan(ct.kernel(lambda x: None), (FakeTensor((8,), (1,)),), target)
    assert not plan(0, (1,), (FakeTensor((8,), (1,), pointer=2**70),))
    assert target.started == 0


def test_tensor_maps_are_packed_after_the_values():
    target = LoadedStandIn(tensor_maps=("a map",))
    tensor = FakeTensor((8,), (1,), pointer=0x2000)
    assert _plan(ct.kernel(lambda x, n: None), (tensor, 5), target)(0, (1,), (tensor, 6))
    assert target.packed == (0x2000, 8, 1, 6, "map of 8192")


def test_partitions_take_no_plan():
    array = GPUArray((64,))
    args = (ct.partition(array, (16,)),)
    kernel = ct.kernel(lambda p: None)
    assert make_plan(quick_signature(kernel, args)[0], args, LoadedStandIn(),
                     stream_handle=int, valid_grid=is_valid_grid) is None


def test_a_kernel_keeps_at_most_max_plans_and_one_a_signature():
    kernel = ct.kernel(lambda n: None)
    target = LoadedStandIn()
    for _ in range(2):
        gpu._add_plan(kernel, quick_signature(kernel, (3,))[0], (3,), target)
    assert len(kernel.launch_plans) == 1
    for value in (True, 0.5, FakeTensor((8,), (1,)), GPUArray((4,)), GPUArray((4,), "<f2")):
        gpu._add_plan(kernel, quick_signature(kernel, (value,))[0], (value,), target)
    assert len(kernel.launch_plans) == MAX_PLANS
    assert len({plan.key for plan in kernel.launch_plans}) == MAX_PLANS


def test_the_interpreter_takes_no_plan():
    @ct.kernel
    def fill(x, value):
        ct.store(x, (0,), ct.full((4,), value, ct.float32))
    taken = []
    fill.launch_plans = [lambda stream, grid, args: taken.append(args) or True]
    x = np.zeros(4, np.float32)
    with ct.interpret():
        ct.launch(0, (1,), fill, (x, 2.0))
    assert not taken and (x == 2).all()
