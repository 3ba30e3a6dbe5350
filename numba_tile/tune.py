"""Autotuning (``cuda.tile.tune``): time a kernel under every configuration of a search space
and keep the fastest.

:func:`exhaustive_search` launches the kernel once per configuration to compile it (the
warm-up), then times repeated launches on the caller's stream with CUDA events, until the
mean run time is known to within 1% or about a quarter of a second has gone into that
configuration. Each :class:`Measurement` carries the mean and the half-width of its 95%
confidence interval (Student's *t*), so two configurations whose intervals overlap are not
told apart by the numbers. A configuration that does not compile, fails to launch or runs
longer than ``single_run_timeout_sec`` is skipped and reported in
:attr:`TuningResult.failures`.

In interpreter mode there are no CUDA events: each interpreted launch is timed on the host
clock (``time.perf_counter``), with a smaller budget. The figures then rank configurations by
the interpreter's cost, which is not the GPU's; the mode exists to try a search on a machine
without a GPU.

The measurements are not flushed from the L2 cache between runs (unlike ``python -m
numba_tile.bench``): every configuration sees the same warm cache, which is what a ranking
needs. Runs shorter than the host's launch overhead (a few microseconds) are timed as that
overhead, whatever the configuration.

>>> from numba_tile.tune import Measurement, TuningResult
>>> fast = Measurement(config={"tile": 128}, mean_us=10.0, error_margin_us=0.2, num_samples=50)
>>> TuningResult[dict](best=fast, measurements=(fast,), failures=()).best.config
{'tile': 128}
"""

import dataclasses
import math
import statistics
import sys
import time
import types
import typing
import weakref
from collections.abc import Mapping

from cuda.core import EventOptions, Stream

from .exported import stream_handle
from .runtime.arguments import array_view, classify_arguments
from .runtime.kernels import Kernel
from .runtime.launch import interpret_mode, launch

ConfigT = typing.TypeVar("ConfigT")


@dataclasses.dataclass(frozen=True)
class Measurement(typing.Generic[ConfigT]):
    """The run time of the kernel under one configuration, in microseconds: the mean of
    ``num_samples`` timed runs, and the half-width of the 95% confidence interval of that
    mean (the true mean lies in ``mean_us ± error_margin_us`` with 95% confidence).

    >>> from numba_tile.tune import Measurement
    >>> m = Measurement(config=(64, 4), mean_us=12.5, error_margin_us=0.25, num_samples=40)
    >>> f"{m.config}: {m.mean_us} ± {m.error_margin_us} us over {m.num_samples} runs"
    '(64, 4): 12.5 ± 0.25 us over 40 runs'
    """

    config: ConfigT
    mean_us: float
    error_margin_us: float
    num_samples: int


@dataclasses.dataclass(frozen=True)
class Failure(typing.Generic[ConfigT]):
    """A configuration the search skipped, and why: the error it raised (type and message)
    or the run that exceeded ``single_run_timeout_sec``.

    >>> from numba_tile.tune import Failure
    >>> Failure(config={"tile": 3}, reason="TileTypeError: ... not a power of two").config
    {'tile': 3}
    """

    config: ConfigT
    reason: str


@dataclasses.dataclass(frozen=True)
class TuningResult(typing.Generic[ConfigT]):
    """What :func:`exhaustive_search` found: the fastest measurement (``best``), every
    measurement in search-space order, and the configurations that were skipped.

    >>> from numba_tile.tune import Failure, Measurement, TuningResult
    >>> a = Measurement("a", mean_us=20.0, error_margin_us=1.0, num_samples=30)
    >>> b = Measurement("b", mean_us=15.0, error_margin_us=0.5, num_samples=30)
    >>> result = TuningResult[str](best=b, measurements=(a, b),
    ...                            failures=(Failure("c", "TileTypeError: ..."),))
    >>> result.best.config, [m.config for m in result.measurements], result.failures[0].config
    ('b', ['a', 'b'], 'c')
    """

    best: Measurement[ConfigT]
    measurements: tuple[Measurement[ConfigT], ...]
    failures: tuple[Failure[ConfigT], ...]


@dataclasses.dataclass(frozen=True)
class _SamplingPolicy:
    """When to stop timing one configuration: after ``min_samples`` runs, as soon as the
    error margin is within ``target_relative_margin`` of the mean, ``budget_sec`` of timed
    runs have passed or ``max_samples`` runs were made."""

    min_samples: int
    max_samples: int
    budget_sec: float
    target_relative_margin: float


# three samples at least: fewer give no useful interval (and _student_t_975 is only close
# enough from two degrees of freedom on)
_GPU_SAMPLING = _SamplingPolicy(min_samples=10, max_samples=1000, budget_sec=0.25,
                                target_relative_margin=0.01)
_INTERPRETER_SAMPLING = _SamplingPolicy(min_samples=3, max_samples=30, budget_sec=0.2,
                                        target_relative_margin=0.05)


def exhaustive_search(search_space, stream, grid_fn, kernel, args_fn, hints_fn=None, *,
                      quiet=False, single_run_timeout_sec=None, flush_l2=True):
    """Time ``kernel`` under every configuration of ``search_space`` and return a
    :class:`TuningResult` whose ``best`` is the fastest.

    For each configuration ``c`` (any object: a namedtuple, a dict, a SimpleNamespace...),
    the kernel ``kernel.replace_hints(**hints_fn(c))`` (``kernel`` itself without
    ``hints_fn``) is launched on ``stream`` as ``ct.launch(stream, grid_fn(c), kernel,
    args_fn(c))``: once to compile, then repeatedly, timed with CUDA events on ``stream``
    (on the host clock in interpreter mode). ``args_fn`` is called once per configuration,
    and every run of that configuration gets the same arguments. With ``flush_l2`` (the
    default, as in cuTile) the L2 cache is flushed before each timed run on the GPU, so
    that a run does not find its inputs there from the run before.

    A configuration whose compile or launch raises (a ``TileError``, a CUDA launch error), or
    one of whose runs takes longer than ``single_run_timeout_sec`` (checked after each run,
    the compiling warm-up excepted; a run is never interrupted), is skipped: it is listed in
    ``failures`` and, unless ``quiet``, printed on stderr. ``TypeError`` and ``ValueError``
    (wrong arguments, the same for every configuration) are raised as they come. If every
    configuration fails, ``RuntimeError`` lists them all. On a terminal a progress bar is
    drawn on stderr (not with ``quiet``).

    Results are cached for the life of ``kernel``: a search with equal configurations,
    hints, grids and arguments of the same signature (what ``args_fn`` gives for the first
    configuration: array dtypes, shapes and strides, scalar types, constant values), in the
    same mode (GPU or interpreter) and ``flush_l2``, returns the earlier result object
    without launching
    (on any stream).
    Configurations that cannot be compared for equality (holding a NumPy array, say) are
    never cached.

    >>> import numpy as np, numba_tile as ct
    >>> from types import SimpleNamespace
    >>> @ct.kernel
    ... def double(x, y, TILE: ct.Constant[int]):
    ...     i = ct.bid(0)
    ...     ct.store(y, (i,), ct.load(x, (i,), (TILE,)) * 2)
    >>> x = np.arange(256, dtype=np.float32); y = np.empty_like(x)
    >>> result = ct.tune.exhaustive_search(
    ...     [SimpleNamespace(tile=t) for t in (32, 128, 3)], 0,
    ...     grid_fn=lambda cfg: (ct.cdiv(x.size, cfg.tile),),
    ...     kernel=double, args_fn=lambda cfg: (x, y, cfg.tile), quiet=True)
    >>> result.best.config.tile in (32, 128), result.best.num_samples >= 3
    (True, True)
    >>> [failure.config.tile for failure in result.failures]  # 3 is not a power of two
    [3]
    >>> print(result.failures[0].reason.splitlines()[0])
    TileTypeError: Invalid argument "shape" of load(): Dimension #0 of shape (3,) is not a ...
    """
    configs = _checked_search_space(search_space)
    _check_callables(kernel, grid_fn, args_fn, hints_fn)
    _check_timeout(single_run_timeout_sec)
    interpreting = interpret_mode()
    if stream is None and not interpreting:
        raise TypeError("Stream is required, got None: pass the CUDA stream to time the "
                        "kernel on (0 for the default stream), or run in interpreter mode")

    grids = [grid_fn(config) for config in configs]
    hints = [_checked_hints(hints_fn, config) for config in configs]
    first_args = _checked_args(args_fn, configs[0])
    cache_key = _cache_key(kernel, configs, hints, grids, first_args, (interpreting,
                                                                      bool(flush_l2)))
    cached = _results.get(kernel, {}).get(cache_key) if cache_key is not None else None
    if cached is not None:
        return cached

    clock = _WallClock() if interpreting else _EventClock(stream, flush_l2)
    policy = _INTERPRETER_SAMPLING if interpreting else _GPU_SAMPLING
    kernels = _kernels_with_hints(kernel, hints)
    progress = _Progress(len(configs), quiet)
    measurements, failures, first_error = [], [], None
    for index, (config, grid, config_kernel) in enumerate(zip(configs, grids, kernels)):
        progress.starting(index, config)
        args = first_args if index == 0 else _checked_args(args_fn, config)

        def run():
            launch(stream, grid, config_kernel, args)
        try:
            measurements.append(_measure(config, run, clock, policy, single_run_timeout_sec))
        except (TypeError, ValueError):
            progress.finished(None)
            raise  # misuse (grid, stream, arguments): every configuration would say the same
        except _TooSlow as too_slow:
            failures.append(Failure(config, str(too_slow)))
            progress.skipped(failures[-1])
        except Exception as error:  # compile errors, launch errors of this configuration
            failures.append(Failure(config, _describe(error)))
            progress.skipped(failures[-1])
            if first_error is None:
                first_error = error
    if not measurements:
        progress.finished(None)
        listed = "\n".join(f"  {failure.config!r}: {failure.reason.splitlines()[0]}"
                           for failure in failures)
        raise RuntimeError(f"Every configuration of the search space failed; "
                           f"{kernel.__name__!r} was timed under none:\n{listed}") \
            from first_error
    best = min(measurements, key=lambda measurement: measurement.mean_us)
    result = TuningResult(best, tuple(measurements), tuple(failures))
    progress.finished(best)
    if cache_key is not None:
        _results.setdefault(kernel, {})[cache_key] = result
    return result


# kernel -> {search key: TuningResult}; an entry goes with its kernel
_results = weakref.WeakKeyDictionary()


class _TooSlow(Exception):
    """A timed run of a configuration took longer than ``single_run_timeout_sec``."""


def _measure(config, run, clock, policy, timeout_sec):
    """Warm up (compile), then time runs in growing batches until the policy is satisfied."""
    run()
    clock.synchronize()
    samples_us = []
    started = time.perf_counter()
    batch = 1  # one run first: a run over the timeout is caught before many are queued
    while True:
        new_samples = clock.time_runs(run, batch)
        slowest = max(new_samples)
        if timeout_sec is not None and slowest > timeout_sec * 1e6:
            raise _TooSlow(f"a run took {slowest / 1e3:.4g} ms, longer than "
                           f"single_run_timeout_sec={timeout_sec}")
        samples_us += new_samples
        mean_us, margin_us = _mean_and_error_margin(samples_us)
        count, elapsed = len(samples_us), time.perf_counter() - started
        if count >= policy.min_samples and (
                count >= policy.max_samples or elapsed >= policy.budget_sec
                or margin_us <= policy.target_relative_margin * mean_us):
            return Measurement(config, mean_us, margin_us, count)
        # at most doubling, and no further than the time budget allows
        affordable = int((policy.budget_sec - elapsed) * 1e6 / max(mean_us, 1e-3))
        batch = max(policy.min_samples - count,
                    min(count, policy.max_samples - count, affordable), 1)


def _mean_and_error_margin(samples):
    """The mean and the half-width of its 95% confidence interval (Student's t)."""
    count, mean = len(samples), statistics.fmean(samples)
    if count < 2:
        return mean, math.inf
    return mean, _student_t_975(count - 1) * statistics.stdev(samples) / math.sqrt(count)


_Z_975 = statistics.NormalDist().inv_cdf(0.975)


def _student_t_975(degrees_of_freedom):
    """The 97.5% quantile of Student's t distribution, by its Cornish-Fisher expansion around
    the normal quantile (within 1% from 2 degrees of freedom on; no SciPy needed).

    >>> from numba_tile.tune import _student_t_975
    >>> round(_student_t_975(4), 3), round(_student_t_975(29), 3)
    (2.776, 2.045)
    """
    z, n = _Z_975, degrees_of_freedom
    terms = ((z**3 + z) / 4,
             (5 * z**5 + 16 * z**3 + 3 * z) / 96,
             (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
             (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160)
    return z + sum(term / n**power for power, term in enumerate(terms, start=1))


class _WallClock:
    """Interpreter mode: each launch finishes before it returns, so the host clock times it."""

    def synchronize(self):
        pass

    def time_runs(self, run, count):
        samples_us = []
        for _ in range(count):
            start = time.perf_counter()
            run()
            samples_us.append((time.perf_counter() - start) * 1e6)
        return samples_us


class _EventClock:
    """GPU: runs timed between CUDA events recorded on the caller's stream (with cuda.core,
    as the launches use it), each run's time the span between the events on either side.
    With ``flush_l2``, a buffer twice the size of the L2 cache is written before each run,
    outside its events, so that no run finds the data of the one before in L2 (as cuTile's
    search times them)."""

    def __init__(self, stream, flush_l2=False):
        self._handle = stream_handle(stream)
        self._stream = None
        self._flush_l2 = flush_l2
        self._scratch = None

    def _cuda_stream(self):
        # made after the first launch, which has made the device of the arguments current
        if self._stream is None:
            self._stream = Stream.from_handle(self._handle)
        return self._stream

    def synchronize(self):
        self._cuda_stream().sync()

    def time_runs(self, run, count):
        stream = self._cuda_stream()
        # created before the runs: making an event between two launches would be timed too
        events = [stream.device.create_event(EventOptions(timing_enabled=True))
                  for _ in range(count + 1 if not self._flush_l2 else 2 * count)]
        if self._flush_l2:  # a start and an end event a run, the flush between runs
            starts, ends = events[0::2], events[1::2]
            for start, end in zip(starts, ends):
                self._flush(stream)
                stream.record(start)
                run()
                stream.record(end)
        else:
            starts, ends = events[:-1], events[1:]
            stream.record(events[0])
            for event in ends:
                run()
                stream.record(event)
        ends[-1].sync()
        return [(end - start) * 1e3 for start, end in zip(starts, ends)]

    def _flush(self, stream):
        """Write a buffer twice the size of the L2 cache on ``stream``."""
        if self._scratch is None:
            device = stream.device
            size = 2 * max(int(device.properties.l2_cache_size), 1 << 20)
            self._scratch = device.allocate(size, stream=stream)
        self._scratch.fill(0, stream=stream)


def _kernels_with_hints(kernel, hints):
    """The kernel of each configuration; configurations with equal hints share one (and with
    it the compiled code)."""
    shared = {}

    def kernel_for(config_hints):
        if not config_hints:
            return kernel
        key = _hashable(config_hints)
        if key is None:
            return kernel.replace_hints(**config_hints)
        if key not in shared:
            shared[key] = kernel.replace_hints(**config_hints)
        return shared[key]
    return [kernel_for(config_hints) for config_hints in hints]


def _cache_key(kernel, configs, hints, grids, first_args, mode):
    """What decides a search's result, hashable; None where a configuration (or hint) has no
    hashable equivalent, and the search is not cached."""
    parts = (_hashable(configs), _hashable(hints), _hashable(grids))
    if any(part is None for part in parts):
        return None
    arg_types, _ = classify_arguments(kernel, first_args, on_device=False)
    return (*parts, arg_types, _array_geometry(first_args), mode)


def _array_geometry(value):
    """Shapes and strides of the arrays in kernel arguments (the argument types hold only
    dtype and rank, and the problem size changes run times)."""
    if isinstance(value, (tuple, list)):
        return tuple(_array_geometry(item) for item in value)
    view = array_view(value, on_device=False)
    return None if view is None else (view.shape, view.strides)


def _hashable(value):
    """A hashable value equal for equal ``value``\\ s (dicts, lists, SimpleNamespaces and
    dataclasses by content, types kept apart), or None where there is none.

    >>> from numba_tile.tune import _hashable
    >>> _hashable({"a": [1, 2]}) == _hashable({"a": [1, 2]}) != _hashable({"a": (1, 2)})
    True
    """
    if isinstance(value, Mapping):
        items = [(_hashable(k), _hashable(v)) for k, v in value.items()]
        parts = frozenset(items) if all(None not in item for item in items) else None
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [_hashable(item) for item in value]
        kind = frozenset if isinstance(value, (set, frozenset)) else tuple
        parts = kind(items) if None not in items else None
    elif isinstance(value, types.SimpleNamespace):
        parts = _hashable(vars(value))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = _hashable([getattr(value, field.name) for field in dataclasses.fields(value)])
    else:
        try:
            hash(value)
        except TypeError:
            return None
        parts = value
    return None if parts is None else (type(value), parts)


def _checked_search_space(search_space):
    if isinstance(search_space, (str, bytes)) or not hasattr(search_space, "__iter__"):
        raise TypeError(f"search_space must be an iterable of configurations, got "
                        f"{type(search_space).__name__}")
    configs = tuple(search_space)
    if not configs:
        raise ValueError("search_space is empty: give at least one configuration to time")
    return configs


def _check_callables(kernel, grid_fn, args_fn, hints_fn):
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a @ct.kernel function, got {kernel!r}")
    for name, value in (("grid_fn", grid_fn), ("args_fn", args_fn)):
        if not callable(value):
            raise TypeError(f"{name} must be a function of the configuration, got "
                            f"{type(value).__name__}")
    if hints_fn is not None and not callable(hints_fn):
        raise TypeError(f"hints_fn must be None or a function of the configuration returning "
                        f"kernel options, got {type(hints_fn).__name__}")


def _check_timeout(seconds):
    if seconds is None:
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"single_run_timeout_sec must be None or a number of seconds, got "
                        f"{type(seconds).__name__}")
    if not seconds > 0:
        raise ValueError(f"single_run_timeout_sec must be positive, got {seconds!r}")


def _checked_hints(hints_fn, config):
    if hints_fn is None:
        return {}
    hints = hints_fn(config)
    if not isinstance(hints, Mapping):
        raise TypeError(f"hints_fn must return a dict of kernel options (such as "
                        f"{{'num_warps': 4}}), got {type(hints).__name__} for {config!r}")
    return dict(hints)


def _checked_args(args_fn, config):
    args = args_fn(config)
    if not isinstance(args, tuple):
        raise TypeError(f"args_fn must return the tuple of kernel arguments, got "
                        f"{type(args).__name__} for {config!r}")
    return args


def _describe(error):
    return f"{type(error).__name__}: {error}"


class _Progress:
    """What a search writes on stderr: a bar redrawn in place on a terminal, and a line for
    each skipped configuration; nothing when ``quiet``."""

    _BAR_WIDTH = 20
    _LABEL_WIDTH = 60

    def __init__(self, total, quiet):
        self._total = total
        self._output = None if quiet else sys.stderr  # looked up now: tests redirect it
        self._on_terminal = self._output is not None and _is_terminal(self._output)
        self._drawn = 0  # length of the bar line on screen, to blank it out

    def starting(self, index, config):
        self._draw(index, f"timing {config!r}")

    def skipped(self, failure):
        if self._output is None:
            return
        self._clear()
        self._output.write(f"tune: skipped {failure.config!r}: "
                           f"{failure.reason.splitlines()[0]}\n")
        self._output.flush()

    def finished(self, best):
        if best is None:
            self._clear()
            return
        self._draw(self._total, f"best {best.config!r}: {best.mean_us:.4g} "
                                f"± {best.error_margin_us:.2g} us")
        if self._on_terminal:
            self._output.write("\n")
            self._output.flush()
            self._drawn = 0

    def _draw(self, done, label):
        if not self._on_terminal:
            return
        filled = self._BAR_WIDTH * done // self._total
        if len(label) > self._LABEL_WIDTH:
            label = label[:self._LABEL_WIDTH - 3] + "..."
        line = (f"tune [{'#' * filled}{'-' * (self._BAR_WIDTH - filled)}] "
                f"{done}/{self._total} {label}")
        self._output.write("\r" + line.ljust(self._drawn))
        self._output.flush()
        self._drawn = len(line)

    def _clear(self):
        if self._on_terminal and self._drawn:
            self._output.write("\r" + " " * self._drawn + "\r")
            self._drawn = 0


def _is_terminal(output):
    try:
        return output.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
