"""``ct.kernel``: the decorator that makes a tile kernel, with Numba's launch syntax
(``kernel[grid, stream](*args)``) on top of :class:`numba_tile.runtime.kernels.Kernel`.

>>> import numba_tile as ct
>>> @ct.kernel(num_warps=4)
... def k(x):
...     pass
>>> isinstance(k, ct.kernel), k.options["num_warps"]
(True, 4)
"""

import types

from .kernels import Kernel, validate_options
from .launch import launch


class kernel(Kernel):
    """Decorator making a tile kernel, bare or with options.

    Options: ``num_ctas`` (power of two 1..16; only 1 is compiled yet: a cluster of CTAs
    for each block is refused, in both executors), ``occupancy`` (1..32: a hint, the blocks a
    multiprocessor should hold, which bounds the registers of a thread only for as many
    blocks as the kernel's shared memory lets it hold), ``opt_level`` (0..3: how hard NVVM
    and ptxas optimize), ``num_worker_warps`` (power of two 1..32: the warps that compute,
    beside any producer warp the compiler adds; ``num_warps`` where that is not given);
    numba_tile adds ``num_warps`` (warps per thread block on
    the GPU) and ``num_stages`` (shared-memory stages of the pipelined loads that feed
    ``mma`` in a loop, 1..8; 1 turns pipelining off; by default as many as fill the shared
    memory, at most 4, fewer where the kernel's other uses of it need the room)
    and ``warp_specialize`` (True: on sm_90, a producer warp added to the block starts the
    copies of those loads, a warpgroup that gives the kernel's warps most of its registers
    where they are 8 or more; False: none; by default a producer warpgroup where the
    kernel's 8 warps or more would take turns between the two products of the loop, as
    in attention, and the loads' ring fills the shared memory in at most 3 stages, see
    docs/performance).
    Each may be a :class:`ByTarget`; a target it has no value for (and no default) takes the
    option's own default. A bad value is ``ValueError``. A kernel is an instance of this
    class (``isinstance(k, ct.kernel)``, as in ``cuda.tile``).

    >>> import numpy as np, numba_tile as ct
    >>> @ct.kernel
    ... def add_one(x):
    ...     ct.store(x, (0,), ct.load(x, (0,), (4,)) + 1)
    >>> a = np.arange(4, dtype=np.float32)
    >>> ct.launch(0, (1,), add_one, (a,))
    >>> a
    array([1., 2., 3., 4.], dtype=float32)
    >>> isinstance(add_one, ct.kernel)
    True
    """

    def __new__(cls, function=None, /, **options):
        if function is None:  # @ct.kernel(options...)
            validate_options(options)
            return lambda fn: cls(fn, **options)
        if not isinstance(function, types.FunctionType):  # (tile code is Python source)
            raise TypeError(f"`kernel` decorator must be applied to a Python function, got "
                            f"{function!r}")
        return super().__new__(cls)

    def __init__(self, function=None, /, **options):
        super().__init__(function, options)

    def __getitem__(self, config):
        """Numba's launch syntax: ``kernel[grid, stream](*args)``, the arguments by position
        (as ``ct.launch`` takes them, and a numba.cuda kernel).

        >>> import numpy as np, numba_tile as ct
        >>> @ct.kernel
        ... def fill(x, TILE: ct.Constant[int]):
        ...     ct.store(x, (ct.bid(0),), ct.full((TILE,), 7, x.dtype))
        >>> x = np.zeros(4, np.int32)
        >>> with ct.interpret():
        ...     fill[(2,)](x, 2)
        >>> x
        array([7, 7, 7, 7], dtype=int32)
        >>> fill[(2,)](x, TILE=2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: Kernel 'fill' takes its arguments by position ...: pass TILE in its place ...
        """
        if not isinstance(config, tuple) or len(config) not in (1, 2):
            raise TypeError("Use kernel[grid] or kernel[grid, stream]")
        grid = config[0] if isinstance(config[0], tuple) else (config[0],)
        stream = config[1] if len(config) == 2 else 0

        def start(*args, **keywords):
            if keywords:
                raise TypeError(
                    f"Kernel {self.__name__!r} takes its arguments by position in "
                    f"kernel[grid, stream](...), as in ct.launch: pass {', '.join(keywords)} "
                    f"in its place among ({', '.join(self.parameters)})")
            launch(stream, grid, self, tuple(args))
        return start
