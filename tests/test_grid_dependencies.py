"""Programmatic dependent launch: ``grid_dependency_control_wait`` /
``_launch_dependents`` in tile code (``griddepcontrol`` on sm_90+, nothing before) and
``launch(..., programmatic_dependent_launch=True)`` (``cuLaunchKernelEx`` with programmatic
stream serialization on sm_90+, a plain launch elsewhere)."""

import ctypes

import numpy as np
import pytest

import numba_tile as ct
from conftest import gpu_present

TILE = 256


@ct.kernel
def add_one(x, y, TILE: ct.Constant[int]):
    """``y = x + 1``; ``x`` may be written by the kernel ahead of this one."""
    ct.grid_dependency_control_wait()
    t = ct.load(x, (ct.bid(0),), (TILE,))
    ct.grid_dependency_control_launch_dependents()
    ct.store(y, (ct.bid(0),), t + 1)


def test_controls_in_every_mode(run_kernel, rng):
    x = rng.standard_normal(4 * TILE).astype(np.float32)
    y = np.full_like(x, np.nan)
    run_kernel(add_one, (4,), (x, y, TILE))
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.parametrize("arch,expected", [("sm_80", False), ("sm_90", True)])
def test_griddepcontrol_only_from_sm_90(arch, expected):
    x = np.zeros(TILE, np.float32)
    ptx = ct.compile(add_one, (x, x.copy(), TILE), arch=arch).ptx
    assert ("griddepcontrol.wait;" in ptx) is expected
    assert ("griddepcontrol.launch_dependents;" in ptx) is expected


def test_the_controls_take_no_arguments():
    @ct.kernel
    def wrong():
        ct.grid_dependency_control_wait(1)

    with pytest.raises(ct.TileTypeError, match="too many positional arguments") as caught, \
            ct.interpret():
        ct.launch(0, (1,), wrong, ())
    with pytest.raises(ct.TileTypeError, match="too many positional arguments") as compiled:
        ct.compile(wrong, (), arch="sm_90")
    for error in (caught.value, compiled.value):  # at the call, in both executors
        assert "grid_dependency_control_wait(1)" in error.loc.source_line


def test_launch_structures_have_the_driver_layout():
    """``CUlaunchAttribute`` is 72 bytes (its value 8 bytes in); ``CUlaunchConfig`` puts the
    stream at 32, the attributes at 40 and their count at 48."""
    from numba_tile.runtime import driver
    assert ctypes.sizeof(driver.LaunchAttribute) == 72
    assert driver.LaunchAttribute.value.offset == 8
    assert driver.ALLOW_EARLY_START.id == 6
    value = ctypes.string_at(ctypes.addressof(driver.ALLOW_EARLY_START) + 8, 8)
    assert value == (1).to_bytes(8, "little")
    assert (driver.LaunchConfig.stream.offset, driver.LaunchConfig.attributes.offset,
            driver.LaunchConfig.attribute_count.offset) == (32, 40, 48)
    assert driver.compute_capability("sm_90") == (9, 0)
    assert driver.compute_capability("sm_90a") == (9, 0)
    assert driver.compute_capability("sm_120") == (12, 0)


@pytest.mark.skipif(not gpu_present(), reason="needs a CUDA GPU")
def test_dependent_launches_see_the_earlier_kernels_writes():
    """200 launches in a chain, each with programmatic dependent launch allowed and reading
    what the one before wrote: each waits for it, so the chain counts every step."""
    import cupy
    n = 1 << 22
    first = cupy.zeros(n, dtype=cupy.float32)
    second = cupy.full(n, np.nan, dtype=cupy.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    grid = (n // TILE,)
    for step in range(100):
        ct.launch(stream, grid, add_one, (first, second, TILE),
                  programmatic_dependent_launch=True)
        ct.launch(stream, grid, add_one, (second, first, TILE),
                  programmatic_dependent_launch=True)
    stream.synchronize()
    assert float(first.min()) == float(first.max()) == 200.0


@pytest.mark.skipif(not gpu_present(), reason="needs a CUDA GPU")
def test_a_kernel_without_controls_launches_dependently_too():
    """Without ``griddepcontrol.wait`` a kernel starts once the one ahead has finished, as a
    plain launch would."""
    import cupy

    @ct.kernel
    def double(x, y, TILE: ct.Constant[int]):
        ct.store(y, (ct.bid(0),), ct.load(x, (ct.bid(0),), (TILE,)) * 2)

    x = cupy.arange(4 * TILE, dtype=cupy.float32)
    y = cupy.full_like(x, np.nan)
    z = cupy.full_like(x, np.nan)
    stream = cupy.cuda.Stream(non_blocking=True)
    ct.launch(stream, (4,), double, (x, y, TILE), programmatic_dependent_launch=True)
    ct.launch(stream, (4,), double, (y, z, TILE), programmatic_dependent_launch=True)
    stream.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(z), 4 * cupy.asnumpy(x))
