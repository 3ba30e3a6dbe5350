"""Timing on the GPU with CUDA events, and the device-to-device copy bandwidth used as roof.

The method (the device machines' METHOD.md):

* **Warm-up** first: compilation, module loading and allocator growth stay out of the numbers.
* **Events around each run** on the stream the work is launched on, read after one final
  synchronization; the figure is the **median** of many runs, with the quartiles kept to
  show the spread (a difference smaller than the spread is noise).
* **L2 flush between runs**: a buffer several times the L2 size is *read* (summed) before
  each run, so every run starts with a cold cache, also where its inputs would fit in L2
  (the ``--quick`` sizes). Reading leaves clean lines behind; overwriting the buffer, as is
  common, leaves the L2 full of dirty lines whose write-back to memory the timed run then
  pays (measured on an H100: 17% of the read-only row sum's time, for every
  implementation). The flush keeps the GPU busy while the host launches the next run, so
  host launch overhead is not counted either.
* **Roof**: the bandwidth of a large device-to-device copy (bytes read plus bytes written
  over its median time), measured the same way in the same process.

Only :class:`Timing` works without a GPU:

>>> from numba_tile.bench.timing import Timing
>>> Timing.from_samples([1.0, 3.0, 2.0, 2.5, 9.0]).median_ms
2.5
"""

import dataclasses
import statistics
import time

from .optional import torch

_MIN_FLUSH_BYTES = 256 << 20


@dataclasses.dataclass(frozen=True)
class Timing:
    """Statistics of the run times of one piece of work, in milliseconds.

    >>> from numba_tile.bench.timing import Timing
    >>> t = Timing.from_samples([4.0, 1.0, 2.0, 3.0])
    >>> t.median_ms, t.q1_ms, t.q3_ms, t.min_ms, t.runs
    (2.5, 1.75, 3.25, 1.0, 4)
    >>> round(t.spread, 2)  # interquartile range over the median
    0.6
    """

    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    runs: int

    @classmethod
    def from_samples(cls, samples_ms):
        """The statistics of a list of run times (milliseconds).

        >>> from numba_tile.bench.timing import Timing
        >>> Timing.from_samples([2.0]).median_ms
        2.0
        """
        samples = sorted(float(s) for s in samples_ms)
        if not samples:
            raise ValueError("no samples")
        q1, _, q3 = (statistics.quantiles(samples, n=4, method="inclusive")
                     if len(samples) > 1 else samples * 3)
        return cls(statistics.median(samples), q1, q3, samples[0], len(samples))

    @property
    def spread(self):
        """Interquartile range relative to the median.

        >>> from numba_tile.bench.timing import Timing
        >>> Timing(2.0, 1.0, 3.0, 1.0, 3).spread
        1.0
        """
        return (self.q3_ms - self.q1_ms) / self.median_ms

    def as_dict(self):
        """The statistics as a JSON-ready dict.

        >>> from numba_tile.bench.timing import Timing
        >>> Timing(2.0, 1.0, 3.0, 0.5, 3).as_dict()["median_ms"]
        2.0
        """
        return dataclasses.asdict(self)


def gbps(nbytes, milliseconds):
    """Bandwidth in GB/s (10**9 bytes per second) of moving ``nbytes`` in ``milliseconds``.

    >>> from numba_tile.bench.timing import gbps
    >>> gbps(3_000_000_000, 1000.0)
    3.0
    """
    return nbytes / (milliseconds * 1e-3) / 1e9


def time_on_gpu(run, *, repeats=100, warmup=10, flush_l2=True, before_each=None):
    """Time ``run()`` (which launches GPU work on PyTorch's current stream): ``warmup`` untimed
    runs, then ``repeats`` runs each between two CUDA events, the L2 cache flushed before
    each. ``before_each()``: called before each timed run, outside its events (the two-GPU
    case puts a barrier of its ranks there). Returns a :class:`Timing`. Needs PyTorch and
    a CUDA GPU.

    >>> import torch  # doctest: +SKIP
    >>> x = torch.randn(1 << 26, device="cuda")  # doctest: +SKIP
    >>> time_on_gpu(lambda: x * 2).median_ms  # doctest: +SKIP
    0.17...
    """
    flush = _flush_buffer() if flush_l2 else None
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(repeats)]
    for start, end in events:
        if flush is not None:
            flush.sum()  # a read: the L2 is left with clean lines of the flush buffer
        if before_each is not None:
            before_each()
        start.record()
        run()
        end.record()
    torch.cuda.synchronize()
    return Timing.from_samples([start.elapsed_time(end) for start, end in events])


def host_overhead_us(launch, *, calls=2000, rounds=7):
    """Host time of one call of ``launch()`` in microseconds: the median over ``rounds`` of
    ``calls`` back-to-back calls, timed on the host clock (the GPU work is tiny and runs
    behind the host, so the host is what is measured). Needs PyTorch and a CUDA GPU.

    >>> host_overhead_us(lambda: None, calls=10, rounds=3) < 5  # doctest: +SKIP
    True
    """
    for _ in range(50):  # warm-up: compilation, caches
        launch()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            launch()
        per_call.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per_call)


def copy_bandwidth(nbytes=1 << 30, *, repeats=100, warmup=10):
    """``(GB/s, Timing)`` of a device-to-device copy of ``nbytes`` with PyTorch, counting the
    bytes read and the bytes written: the memory roof the benchmark compares against. Needs
    PyTorch and a CUDA GPU.

    >>> copy_bandwidth(1 << 30)[0]  # doctest: +SKIP
    3012.4...
    """
    source = torch.randint(-100, 100, (nbytes,), dtype=torch.int8, device="cuda")
    destination = torch.empty_like(source)
    timing = time_on_gpu(lambda: destination.copy_(source), repeats=repeats, warmup=warmup)
    return gbps(2 * nbytes, timing.median_ms), timing


def _flush_buffer():
    """A buffer whose reading evicts the whole L2 cache (four times its size)."""
    l2_bytes = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()),
                       "L2_cache_size", 0)
    return torch.ones(max(4 * l2_bytes, _MIN_FLUSH_BYTES) // 4, dtype=torch.int32,
                      device="cuda")
