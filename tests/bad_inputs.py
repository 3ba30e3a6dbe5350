"""The bad-input catalogue's harness (tests/test_bad_inputs_*.py): each case is a kernel and its
arguments that must fail the same way in both executors.

A case names the error class, a regular expression its message must match, and a piece of the
kernel line the error must point at. Both executors must raise that class (never
``TileInternalError`` or a raw Python exception), with messages that match, at the same file,
line and column, so the interpreter and ``ct.compile(arch="sm_90")`` cannot drift apart.

Cases that need a launch (a read-only output, an argument a compile is never given) name their
``runs``: ``interpret`` and ``launch`` (the compiled kernel launched on the GPU, skipped
without one).
"""

import re
import sys

import numpy as np
import pytest

import numba_tile as ct

HOST_ERRORS = (TypeError, ValueError)


class BadInput:
    """One bad input: ``kernel(*args)`` must raise ``error`` matching ``message`` at a line
    that contains ``line`` (None for errors about the call itself, which name no line)."""

    def __init__(self, name, kernel, args, error, message, line,
                 runs=("interpret", "compile")):
        self.name = name
        self.kernel = kernel
        self.args = tuple(args)
        self.error = error
        self.message = message
        self.line = line
        self.runs = runs

    def param(self):
        return pytest.param(self, id=self.name)


def arrays(*dtypes, n=4):
    """Fresh, random arrays of ``n`` elements, one per dtype."""
    generator = np.random.default_rng(0)
    return tuple((generator.random(n) * 4 + 1).astype(dtype) for dtype in dtypes)


def statement_kernel(statement):
    """A kernel of two arrays whose body is ``statement(x, out)``: the error points at the
    statement's own line (a lambda in the test file)."""
    @ct.kernel
    def kernel(x, out):
        statement(x, out)
    return kernel


def _copy(value):
    return np.copy(value) if isinstance(value, np.ndarray) else value


def interpret(kernel, args):
    with ct.interpret():
        ct.launch(0, (1,), kernel, tuple(_copy(a) for a in args))


def compile_for_hopper(kernel, args):
    ct.compile(kernel, tuple(args), arch="sm_90")


def launch_on_gpu(kernel, args):
    from numba import cuda  # optional: only the GPU runs need numba-cuda's driver
    if not cuda.is_available():
        pytest.skip("no GPU")
    device_args = tuple(cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args)
    with ct.interpret(False):
        ct.launch(cuda.default_stream(), (1,), kernel, device_args)
    cuda.synchronize()


RUNNERS = {"interpret": interpret, "compile": compile_for_hopper, "launch": launch_on_gpu}


def failure(action):
    """What ``action()`` raises (any exception: the checks below judge it), or None."""
    try:
        action()
    except pytest.skip.Exception:
        raise
    except Exception as error:
        return error
    return None


def check(case, filename):
    """Runs ``case`` in each of its executors and asserts class, message and location."""
    errors = {run: failure(lambda run=run: RUNNERS[run](case.kernel, case.args))
              for run in case.runs}
    for run, error in errors.items():
        assert error is not None, f"{run}: accepted (expected {case.error.__name__})"
        assert isinstance(error, case.error), f"{run}: {type(error).__name__}: {error}"
        assert not isinstance(error, ct.TileInternalError), f"{run}: {error}"
        message = getattr(error, "message", str(error))
        assert re.search(case.message, message), f"{run}: message {message!r}"
        if case.line is None:
            continue
        loc = getattr(error, "loc", None)
        assert loc is not None, f"{run}: {type(error).__name__} names no kernel line: {error}"
        assert loc.filename == filename, f"{run}: at {loc.filename}"
        assert loc.source_line and case.line in loc.source_line, \
            f"{run}: at line {loc.line} {loc.source_line!r}, expected {case.line!r}"
    first, *others = errors.values()
    for other in others:
        assert type(other) is type(first), f"{type(first).__name__} vs {type(other).__name__}"
        assert getattr(other, "message", str(other)) == getattr(first, "message", str(first))
        if case.line is not None:
            assert (other.loc.line, other.loc.col) == (first.loc.line, first.loc.col), \
                f"carets differ: {first.loc} vs {other.loc}"


def module_file(name):
    """The file of test module ``name`` (what each case's error must point into)."""
    return sys.modules[name].__file__
