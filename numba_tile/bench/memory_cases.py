"""The memory-operation cases of the benchmark (issue 19): an embedding lookup (``gather``
against ``torch.index_select``), a scatter-add of rows (``atomic_add`` against
``Tensor.index_add_``) and a histogram (``atomic_add`` against ``torch.bincount``).

The bytes each case must move: the embedding reads its indices and each gathered row once
and writes the output once; the scatter-add copies its base table into the output (every
run starts from the same table, so a run can be checked and timed again) and reads its
indices and added rows; the histogram reads its values and writes the counts (its copies
of the counts, zeroed, added to and summed, are not counted: they stay in the L2 cache). Gathers and
histograms are exact (tolerance 1e-12); the scatter-add sums in float32 in any order.

>>> from numba_tile.bench import memory_cases
>>> [case.name for case in memory_cases.memory_cases()]
['embedding_f16', 'scatter_add_f32', 'histogram_i32']
>>> memory_cases.memory_cases()[2].bytes_moved == 4 * 2**26 + 4 * 4096
True
"""

import numba_tile as ct
from . import memory_kernels, references
from .case_types import Case, Implementation, Target, launching, returning
from .optional import torch

EXACT = 1e-12


def embedding_case(rows, dim, lookups):
    """``table[indices]`` for a ``rows x dim`` float16 table and ``lookups`` random int64
    indices."""
    def make_inputs(torch, generator):
        table = torch.randn((rows, dim), generator=generator, device="cuda",
                            dtype=torch.float16)
        indices = torch.randint(0, rows, (lookups,), generator=generator, device="cuda")
        return table, indices

    def output(torch, inputs):
        table, indices = inputs
        return torch.full((indices.shape[0], table.shape[1]), float("nan"), dtype=table.dtype,
                          device="cuda")

    return Case(
        name="embedding_f16",
        title=f"embedding gather, {lookups} rows of a {rows} x {dim} table, float16",
        dtype="float16", bytes_moved=lookups * 8 + 2 * lookups * dim * 2,
        make_inputs=make_inputs, reference=lambda table, indices: table.double()[indices],
        implementations=(
            Implementation("numba_tile", launching(memory_kernels.embedding_launch, output),
                           ({"rows": 1, "num_warps": 2}, {"rows": 1}, {"rows": 2, "num_warps": 2},
                            {"rows": 2, "num_warps": 4},
                            {"rows": 1, "num_warps": 2, "by_rows": True})),
            Implementation("torch", returning(references.torch_embedding)),
        ),
        target=Target(0.85, "copy"), tolerance_override=EXACT)


def scatter_add_case(rows, dim, updates):
    """``table.index_add(0, indices, source)`` for a ``rows x dim`` float32 table and
    ``updates`` random rows (indices repeat)."""
    def make_inputs(torch, generator):
        table = torch.randn((rows, dim), generator=generator, device="cuda")
        indices = torch.randint(0, rows, (updates,), generator=generator, device="cuda")
        source = torch.randn((updates, dim), generator=generator, device="cuda")
        return table, indices, source

    def reference(table, indices, source):
        return table.double().index_add(0, indices, source.double())

    return Case(
        name="scatter_add_f32",
        title=f"scatter-add of {updates} rows into a {rows} x {dim} table, float32",
        dtype="float32", bytes_moved=2 * rows * dim * 4 + updates * 8 + updates * dim * 4,
        make_inputs=make_inputs, reference=reference,
        implementations=(
            Implementation("numba_tile", launching(
                memory_kernels.scatter_add_launch,
                lambda torch, inputs: torch.empty_like(inputs[0]),
                arguments=lambda table, indices, source, out: (out, indices, source),
                before=lambda out, table, *_: out.copy_(table)),
                ({"rows": 4}, {"rows": 2}, {"rows": 8, "num_warps": 8},
                 {"rows": 4, "num_warps": 8})),
            Implementation("torch", returning(references.torch_scatter_add)),
        ),
        target=Target(1.0, "torch"))


def histogram_case(count, bins):
    """The counts of ``count`` random int32 values in ``[0, bins)``."""
    def make_inputs(torch, generator):
        return (torch.randint(0, bins, (count,), generator=generator, device="cuda",
                              dtype=torch.int32),)

    def reference(values):
        return torch.bincount(values.long(), minlength=bins).double()

    return Case(
        name="histogram_i32", title=f"histogram of 2**{count.bit_length() - 1} int32 values "
                                    f"into {bins} bins", dtype="int32",
        bytes_moved=count * 4 + bins * 4, make_inputs=make_inputs, reference=reference,
        implementations=(
            Implementation("numba_tile", _histogram(bins),
                           ({"block": 8192, "tiles": 64, "num_warps": 8},
                            {"block": 8192, "tiles": 16, "num_warps": 8},
                            {"block": 16384, "tiles": 8, "num_warps": 16},
                            {"copies": 32}, {"copies": 128})),
            Implementation("torch", returning(references.torch_histogram, bins=bins)),
        ),
        target=Target(1.0, "torch"), tolerance_override=EXACT)


def memory_cases(quick=False):
    """The three cases at the issue's sizes; ``quick`` shrinks them for a smoke run."""
    scale = 8 if quick else 1
    return [embedding_case(65536 // scale, 1024, 32768 // scale),
            scatter_add_case(16384 // scale, 1024, 32768 // scale),
            histogram_case((1 << 26) // scale, 4096)]


def _histogram(bins):
    """``prepare`` for the histogram: zero the copies, count into them, sum them; or, with
    ``block`` (values a tile), zero the counts and add each thread block's histogram."""
    def prepare(values, copies=32, **params):
        if "block" in params:
            return _block_histogram(values, bins, **params)
        private = torch.empty((copies, bins), dtype=torch.int32, device="cuda")
        counts = torch.full((bins,), -1, dtype=torch.int32, device="cuda")
        launches = memory_kernels.histogram_launches(values, private, counts, **params)
        stream = torch.cuda.current_stream()

        def run():
            private.zero_()
            for kernel, grid, args in launches:
                ct.launch(stream, grid, kernel, args)
            return counts
        return run
    return prepare


def _block_histogram(values, bins, **params):
    counts = torch.full((bins,), -1, dtype=torch.int32, device="cuda")
    kernel, grid, args = memory_kernels.block_histogram_launch(values, counts, **params)
    stream = torch.cuda.current_stream()

    def run():
        counts.zero_()
        ct.launch(stream, grid, kernel, args)
        return counts
    return run
