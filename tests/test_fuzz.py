"""Differential fuzzing of random tile programs (``tile_programs.py``, run by
``fuzz_tile_programs.py``), through hypothesis.

Each mode checks what it can: ``interpret`` runs the program and compares it with the NumPy
computation drawn with it; ``compile`` compiles it for sm_80 and sm_90 (no error of any kind);
``gpu`` runs it compiled and compares with the interpreter bit for bit where the program is
exact, and the poison around the output everywhere. The examples are derandomized, so CI sees
the same programs on every run; ``NUMBA_TILE_FUZZ_EXAMPLES`` sets how many (a long run on a GPU
uses ``python tests/fuzz_tile_programs.py`` instead, which spreads seeds over processes).
"""

import os

import numpy as np
import pytest

from hypothesis import HealthCheck, given, settings, strategies as st

import fuzz_tile_programs as runs
import tile_programs
from conftest import MODES

EXAMPLES = int(os.environ.get("NUMBA_TILE_FUZZ_EXAMPLES", "400"))


@st.composite
def programs(draw):
    return tile_programs.generate(tile_programs.HypothesisChooser(draw))


def _fuzz_settings(examples):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("tile_programs"))


@pytest.mark.parametrize("mode", MODES)
def test_random_programs(mode, folder):
    """interpret: the interpreter against NumPy; compile: sm_80 and sm_90 compile; gpu: the
    compiled kernel against the interpreter, and the poison around the output."""
    @_fuzz_settings(max(1, EXAMPLES // 4) if mode == "compile" else EXAMPLES)
    @given(programs())
    def check(program):
        kernel = runs.load_kernel(program, folder)
        if mode == "compile":
            runs.compile_for_arches(program, kernel)
            return
        if mode == "interpret":
            expected = program.expected()
            got = runs.run_interpreter(program, kernel)
        else:
            expected = runs.run_interpreter(program, kernel)
            got = runs.run_gpu(program, kernel)
        problem = runs.mismatch(program, got, expected, program.exact)
        assert problem is None, f"{problem}\n{program.source}"
    check()


def test_mismatch_sees_guard_and_value_changes():
    """The comparison itself: a changed guard byte and a changed value both show."""
    program = tile_programs.generate(tile_programs.RandomChooser(3))
    expected = program.expected()
    assert runs.mismatch(program, expected.copy(), expected, True) is None
    written = program.expected(mark_written=True).reshape(-1)
    for flat_index, what in ((np.flatnonzero(~written)[0], "guard"),
                             (np.flatnonzero(written)[0], "differs")):
        changed = expected.copy()
        changed.reshape(-1).view(np.uint8)[flat_index * expected.itemsize] ^= 1
        assert what in runs.mismatch(program, changed, expected, True)
