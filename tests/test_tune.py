"""``ct.tune.exhaustive_search``: measuring, skipping, caching and reporting, in interpreter
mode on the CPU (host-clock timing); one test times a real kernel with CUDA events where a
GPU is present."""

import collections
import io
import math
import subprocess
import sys

import numpy as np
import pytest

import numba_tile as ct
from numba_tile import tune
from conftest import gpu_present

Config = collections.namedtuple("Config", "tile warps", defaults=(None,))
SIZE = 256


@ct.kernel
def double_and_count(x, y, runs, TILE: ct.Constant[int]):
    """y = 2 x; every tile block adds one to ``runs[0]`` (launches = runs / blocks)."""
    i = ct.bid(0)
    ct.store(y, (i,), ct.load(x, (i,), (TILE,)) * 2)
    ct.atomic_add(runs, 0, 1)


class Problem:
    """Arguments of ``double_and_count``, and the functions a search takes."""

    def __init__(self, size=SIZE):
        self.x = np.arange(size, dtype=np.float32)
        self.y = np.zeros_like(self.x)
        self.runs = np.zeros(1, np.int32)

    def grid(self, config):
        return (ct.cdiv(self.x.size, config.tile),)

    def args(self, config):
        return (self.x, self.y, self.runs, config.tile)

    def search(self, configs, kernel=double_and_count, **options):
        options.setdefault("quiet", True)
        return ct.tune.exhaustive_search(configs, 0, self.grid, kernel, self.args, **options)


@pytest.fixture(autouse=True)
def interpreter_mode():
    with ct.interpret():
        yield


def fresh_kernel(**options):
    """A kernel of its own: results are cached per kernel object."""
    return ct.kernel(double_and_count.fn, **options)


def test_the_best_is_the_fastest_measured_and_a_failed_compile_is_recorded():
    problem = Problem()
    result = problem.search([Config(32), Config(3), Config(128)], kernel=fresh_kernel())
    assert [m.config.tile for m in result.measurements] == [32, 128]
    assert result.best in result.measurements
    assert result.best.mean_us == min(m.mean_us for m in result.measurements)
    for measurement in result.measurements:
        assert measurement.num_samples >= 3
        assert measurement.mean_us > 0 and 0 <= measurement.error_margin_us < math.inf
    [failure] = result.failures
    assert failure.config == Config(3)
    assert failure.reason.startswith("TileTypeError: ") and "power of two" in failure.reason
    np.testing.assert_array_equal(problem.y, 2 * problem.x)  # the kernel really ran


def test_a_repeated_search_returns_the_cached_result_without_launching():
    kernel, problem = fresh_kernel(), Problem()
    configs = [{"tile": 32}, {"tile": 64}]  # dicts: cached by content
    search = dict(stream=0, kernel=kernel, quiet=True,
                  grid_fn=lambda c: (SIZE // c["tile"],),
                  args_fn=lambda c: (problem.x, problem.y, problem.runs, c["tile"]))
    first = ct.tune.exhaustive_search(configs, **search)
    launched = problem.runs[0]
    assert launched > 0
    again = ct.tune.exhaustive_search([{"tile": 32}, {"tile": 64}], **search)
    assert again is first and problem.runs[0] == launched
    unflushed = ct.tune.exhaustive_search(configs, **search, flush_l2=False)
    assert unflushed is not first and problem.runs[0] > launched  # (a search of its own)

    other_size = Problem(2 * SIZE)  # another argument signature: timed again
    assert other_size.search([Config(32), Config(64)], kernel=kernel) is not first
    assert other_size.runs[0] > 0


def test_configurations_without_a_hashable_equivalent_are_timed_every_time():
    kernel, problem = fresh_kernel(), Problem()
    configs = [Config(32, np.zeros(1))]  # an array: no equality to key a cache on
    first = problem.search(configs, kernel=kernel)
    launched = problem.runs[0]
    assert problem.search(configs, kernel=kernel) is not first
    assert problem.runs[0] > launched


def test_hints_fn_gives_each_configuration_its_kernel(monkeypatch):
    launched_with = []

    def spying_launch(stream, grid, kernel, args):
        launched_with.append((args[-1], kernel.options["num_warps"], kernel))
        ct.launch(stream, grid, kernel, args)
    monkeypatch.setattr(tune, "launch", spying_launch)
    base = fresh_kernel(occupancy=2)
    Problem().search([Config(32, 4), Config(64, 8), Config(128, 4)], kernel=base,
                     hints_fn=lambda c: {"num_warps": c.warps})
    assert {(tile, warps) for tile, warps, _ in launched_with} == {(32, 4), (64, 8), (128, 4)}
    kernels = {tile: kernel for tile, _, kernel in launched_with}
    assert kernels[32] is kernels[128] is not kernels[64]  # equal hints share a kernel
    assert base not in kernels.values() and kernels[64].options["occupancy"] == 2


def test_bad_hints_are_reported_before_any_launch():
    problem = Problem()
    with pytest.raises(TypeError, match="Unknown kernel option 'warps'"):
        problem.search([Config(32, 4)], kernel=fresh_kernel(), hints_fn=lambda c: {"warps": 4})
    with pytest.raises(TypeError, match="hints_fn must return a dict"):
        problem.search([Config(32, 4)], kernel=fresh_kernel(), hints_fn=lambda c: c.warps)
    assert problem.runs[0] == 0


def test_when_every_configuration_fails_the_error_lists_them():
    with pytest.raises(RuntimeError, match="Every configuration") as raised:
        Problem().search([Config(3), Config(5)], kernel=fresh_kernel())
    message = str(raised.value)
    assert "Config(tile=3, warps=None)" in message and "Config(tile=5, warps=None)" in message
    assert isinstance(raised.value.__cause__, ct.TileTypeError)


def test_a_configuration_over_the_single_run_timeout_is_skipped():
    problem = Problem(size=4096)
    # one tile block against 1024 of them: about a millisecond against a few hundred
    result = problem.search([Config(4096), Config(4)], kernel=fresh_kernel(),
                            single_run_timeout_sec=0.08)
    assert [m.config.tile for m in result.measurements] == [4096]
    [failure] = result.failures
    assert failure.config.tile == 4 and "single_run_timeout_sec=0.08" in failure.reason


def test_quiet_writes_nothing_and_a_pipe_gets_only_the_skipped(capsys):
    Problem().search([Config(32), Config(3)], kernel=fresh_kernel(), quiet=True)
    assert capsys.readouterr() == ("", "")
    Problem().search([Config(32), Config(3)], kernel=fresh_kernel(), quiet=False)
    out, err = capsys.readouterr()
    assert out == "" and "\r" not in err
    assert err.splitlines() == ["tune: skipped Config(tile=3, warps=None): TileTypeError: "
                                "Invalid argument \"shape\" of load(): Dimension #0 of shape "
                                "(3,) is not a power of two"]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_progress_bar(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    result = Problem().search([Config(32), Config(3), Config(64)], kernel=fresh_kernel(),
                              quiet=False)
    text = terminal.getvalue()
    assert "\rtune [" in text and "0/3 timing Config(tile=32" in text
    assert "tune: skipped Config(tile=3" in text
    last_line = text.split("\r")[-1]
    assert last_line.startswith("tune [####################] 3/3 best ")
    assert repr(result.best.config) in last_line and last_line.endswith(" us\n")

    quiet_terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", quiet_terminal)
    Problem().search([Config(32), Config(3)], kernel=fresh_kernel(), quiet=True)
    assert quiet_terminal.getvalue() == ""


@pytest.mark.parametrize("change, error, match", [
    (dict(kernel=double_and_count.fn), TypeError, "kernel must be a @ct.kernel"),
    (dict(grid_fn=(1,)), TypeError, "grid_fn must be a function"),
    (dict(args_fn=None), TypeError, "args_fn must be a function"),
    (dict(hints_fn={"num_warps": 4}), TypeError, "hints_fn must be None or a function"),
    (dict(search_space=7), TypeError, "search_space must be an iterable"),
    (dict(search_space="abc"), TypeError, "search_space must be an iterable"),
    (dict(search_space=[]), ValueError, "search_space is empty"),
    (dict(single_run_timeout_sec="1"), TypeError, "single_run_timeout_sec must be None or"),
    (dict(single_run_timeout_sec=0), ValueError, "single_run_timeout_sec must be positive"),
    (dict(args_fn=lambda c: [1, 2]), TypeError, "args_fn must return the tuple"),
    (dict(args_fn=lambda c: (1,)), TypeError, "Kernel expects 4 arguments but"),
])
def test_bad_arguments_are_clear_errors(change, error, match):
    problem = Problem()
    arguments = dict(search_space=[Config(32)], stream=0, grid_fn=problem.grid,
                     kernel=fresh_kernel(), args_fn=problem.args, quiet=True)
    arguments.update(change)
    with pytest.raises(error, match=match):
        ct.tune.exhaustive_search(**arguments)


def test_a_gpu_search_needs_a_stream():
    problem = Problem()
    with ct.interpret(False), pytest.raises(TypeError, match="Stream is required"):
        ct.tune.exhaustive_search([Config(32)], None, problem.grid, fresh_kernel(),
                                  problem.args)


def test_results_are_generic_over_the_configuration_type():
    measurement = tune.Measurement[Config](Config(64), 1.5, 0.1, 10)
    result = tune.TuningResult[Config](measurement, (measurement,), ())
    assert result.best.config.tile == 64 and result.failures == ()


def test_tune_and_compilation_come_with_the_package():
    """As in cuda.tile, ``ct.tune`` and ``ct.compilation`` are there after ``import
    numba_tile`` (they cost it about 20 ms of its seconds, too little for an import inside
    a function), and neither is among the names ``from numba_tile import *`` gives."""
    script = ("import sys, numba_tile as ct\n"
              "assert sys.modules['numba_tile.tune'] is ct.tune\n"
              "assert sys.modules['numba_tile.compilation'] is ct.compilation\n"
              "assert ct.tune.exhaustive_search and ct.compilation.export_kernel\n"
              "assert 'tune' not in ct.__all__ and 'compilation' not in ct.__all__\n")
    subprocess.run([sys.executable, "-c", script], check=True)


@pytest.mark.skipif(not gpu_present(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("stream_kind,flush_l2", [("default", True), ("numba", True),
                                                  ("default", False)])
def test_timing_on_the_gpu_with_cuda_events(stream_kind, flush_l2):
    """(With ``flush_l2``, cuTile's default, the L2 cache is written over before each run.)"""
    from numba import cuda
    stream = 0 if stream_kind == "default" else cuda.stream()
    size = 1 << 22
    x = cuda.to_device(np.random.default_rng(0).random(size, dtype=np.float32))
    y = cuda.device_array(size, np.float32)
    runs = cuda.to_device(np.zeros(1, np.int32))
    configs = [Config(256, 4), Config(3, 4), Config(1024, 8)]
    with ct.interpret(False):
        result = ct.tune.exhaustive_search(
            configs, stream, lambda c: (ct.cdiv(size, c.tile),), fresh_kernel(),
            lambda c: (x, y, runs, c.tile), hints_fn=lambda c: {"num_warps": c.warps},
            quiet=True, flush_l2=flush_l2)
    assert [m.config.tile for m in result.measurements] == [256, 1024]
    assert [f.config.tile for f in result.failures] == [3]
    for measurement in result.measurements:
        # 32 MiB read and written: tens of microseconds at least on any GPU
        assert 5 < measurement.mean_us < 1e5
        assert measurement.num_samples >= 10
        assert 0 <= measurement.error_margin_us < measurement.mean_us
    np.testing.assert_allclose(y.copy_to_host(), 2 * x.copy_to_host())
