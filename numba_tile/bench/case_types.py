"""What a benchmark case is made of: :class:`Case`, its :class:`Implementation` objects and
its :class:`Target`, and the ``prepare`` functions the implementations of every kind of case
share: :func:`launching` (a numba_tile kernel), :func:`writing` (a function writing into its
last argument, as the Triton references do) and :func:`returning` (a function returning its
result, as PyTorch's do).

The modules of cases (:mod:`~numba_tile.bench.cases` and the ones it gathers:
:mod:`~numba_tile.bench.memory_cases`, :mod:`~numba_tile.bench.scaled_cases`,
:mod:`~numba_tile.bench.eight_bit_cases`) build on this one.

>>> from numba_tile.bench.case_types import Implementation, returning
>>> implementation = Implementation("python", returning(round, ndigits=1))
>>> implementation.prepare(2.345)()
2.3
"""

import dataclasses
from typing import Callable

import numba_tile as ct
from .optional import torch

TOLERANCE = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 1e-2}


@dataclasses.dataclass(frozen=True)
class Target:
    """numba_tile's bandwidth goal in a case: ``fraction`` of the bandwidth of ``of`` (an
    implementation in the same run, or ``"copy"``, the measured copy bandwidth), or
    ``fallback_gbps`` where ``of`` did not run.

    >>> from numba_tile.bench.case_types import Target
    >>> Target(0.95, "torch").required_gbps({"torch": 2000.0}, copy_gbps=3000.0)
    (1900.0, '95% of torch')
    >>> Target(1.0, "triton", fallback_gbps=2400.0).required_gbps({"torch": 2000.0}, 3000.0)
    (2400.0, 'fixed: triton did not run')
    """

    fraction: float
    of: str
    fallback_gbps: float = None

    def required_gbps(self, gbps_by_implementation, copy_gbps):
        """``(GB/s numba_tile must reach, description)``; GB/s is None where it cannot be
        told (``of`` did not run and there is no fallback)."""
        base = copy_gbps if self.of == "copy" else gbps_by_implementation.get(self.of)
        if base is not None:
            return self.fraction * base, f"{self.fraction:.0%} of {self.of}"
        if self.fallback_gbps is not None:
            return self.fallback_gbps, f"fixed: {self.of} did not run"
        return None, f"{self.fraction:.0%} of {self.of}, which did not run"


@dataclasses.dataclass(frozen=True)
class Implementation:
    """One implementation of a case: ``prepare(*inputs, **params)`` returns ``run``, and
    ``run()`` computes the output (on PyTorch's current stream) and returns it.
    ``params[0]`` is the default parameter set."""

    name: str
    prepare: Callable
    params: tuple = ({},)

    def label(self, params):
        """The parameters as a short text.

        >>> from numba_tile.bench.case_types import Implementation
        >>> Implementation("x", print).label({"rows": 2, "num_warps": 8})
        'rows=2 warps=8'
        >>> Implementation("x", print).label({})
        '-'
        """
        return " ".join(f"{k.replace('num_', '')}={v}" for k, v in params.items()) or "-"


@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmark case: what is computed on which inputs, by whom, and the goal (see
    :mod:`numba_tile.bench.cases` for the tolerances).

    >>> from numba_tile.bench.case_types import Case
    >>> case = Case("sum_f16", "sum", "float16", 2048, make_inputs=None, reference=None,
    ...             implementations=(), target=None)
    >>> case.tolerance, case.flops
    (0.001, 0)
    """

    name: str
    title: str
    dtype: str
    bytes_moved: int
    make_inputs: Callable  # (torch, generator) -> tuple of CUDA tensors
    reference: Callable  # (*inputs) -> float64 tensor
    implementations: tuple
    target: Target  # (None: no goal, a measure next to the references)
    flops: int = 0  # floating-point operations of a compute-bound case (TFLOPS reported)
    tolerance_override: float = None

    @property
    def tolerance(self):
        """The largest relative error that passes (see :mod:`numba_tile.bench.cases`).

        >>> from numba_tile.bench.cases import vector_add_case
        >>> vector_add_case("float16", 1024).tolerance
        0.001
        """
        return self.tolerance_override or TOLERANCE[self.dtype]


def launching(launch, make_output, *, arguments=None, before=None, **fixed):
    """``prepare`` for a numba_tile kernel: the output from ``make_output(torch, inputs)``,
    then ``launch(*inputs, out, **fixed, **params)`` (with ``arguments``:
    ``launch(*arguments(*inputs, out), ...)``) gives the kernel, grid and arguments, launched
    on PyTorch's current stream; ``before(out, *inputs)`` runs first in every run (to reset
    an output the kernel accumulates into). Needs PyTorch and a CUDA GPU.

    >>> from numba_tile.bench import kernels  # doctest: +SKIP
    >>> prepare = launching(  # doctest: +SKIP
    ...     kernels.vector_add_launch, lambda torch, inputs: torch.empty_like(inputs[0]))
    >>> a = torch.ones(1024, device="cuda")  # doctest: +SKIP
    >>> prepare(a, a, tile=1024)()[:2]  # doctest: +SKIP
    tensor([2., 2.], device='cuda:0')
    """
    def prepare(*inputs, **params):
        out = make_output(torch, inputs)
        given = (*inputs, out) if arguments is None else arguments(*inputs, out)
        kernel, grid, args = launch(*given, **fixed, **params)
        stream = torch.cuda.current_stream()

        def run():
            if before is not None:
                before(out, *inputs)
            ct.launch(stream, grid, kernel, args)
            return out
        return run
    return prepare


def writing(function, make_output, **fixed):
    """``prepare`` for a Triton reference writing into its last argument: the output from
    ``make_output(torch, inputs)``, then each run calls ``function(*inputs, out, **fixed,
    **params)``.

    >>> import numpy as np
    >>> from numba_tile.bench.case_types import writing
    >>> def add(a, b, out):  # (a NumPy function standing in for a Triton one)
    ...     np.add(a, b, out=out)
    >>> prepare = writing(add, lambda torch, inputs: np.empty_like(inputs[0]))
    >>> prepare(np.ones(2), np.ones(2))()
    array([2., 2.])
    """
    def prepare(*inputs, **params):
        out = make_output(torch, inputs)

        def run():
            function(*inputs, out, **fixed, **params)
            return out
        return run
    return prepare


def returning(function, **fixed):
    """``prepare`` for a PyTorch reference returning a new tensor: each run returns
    ``function(*inputs, **fixed)`` (see the module's example)."""
    def prepare(*inputs):
        return lambda: function(*inputs, **fixed)
    return prepare
