"""A ``contextlib.contextmanager`` helper called outside a ``with`` makes a value, as in
cuTile: nothing of the helper runs; its type is named ``GeneratorContextManager[<function
...>, args=[...], kwargs={...}]`` and it takes no operator (cuTile's ``TileTypeError``
"Unsupported operand types for +: ..."), alike in every mode."""

import contextlib
import re

import numpy as np
import pytest

import numba_tile as ct


def _append(x, value):
    i = ct.gather(x, 0) + 1
    ct.scatter(x, 0, i)
    ct.scatter(x, i, value)


@contextlib.contextmanager
def _logged(x, start, end):
    _append(x, start)
    yield start
    _append(x, end)


@ct.kernel
def made_unused(x):
    cm = _logged(x, 10, end=20)  # noqa: F841 (made, never entered: nothing runs)
    _append(x, 5)
    with _logged(x, 1, 2):
        _append(x, 3)


def test_a_context_manager_made_outside_with_runs_nothing(run_kernel):
    x = np.zeros(6, np.int32)
    run_kernel(made_unused, (1,), (x,))
    np.testing.assert_array_equal(x, [4, 5, 1, 3, 2, 0])


@ct.kernel
def plus_one(x):
    cm = _logged(None, 10, end=20)
    cm + 1


@ct.kernel
def times_from_the_left(x):
    cm = _logged(x, 10, 20)
    2 * cm


@ct.kernel
def shifted_in_place(x):
    cm = _logged(None, 1.5, True)
    cm <<= 1


@ct.kernel
def plus_a_tile(x):
    cm = _logged(None, 10, 20)
    cm + ct.ones((4,), dtype=ct.int32)


_NAME = r"GeneratorContextManager\[<function _logged at 0x[0-9a-f]+>, "


@pytest.mark.parametrize("kernel,message", [
    (plus_one, r"Unsupported operand types for \+: " + _NAME +
     r"args=\[None, Tile\[int32,\(\)\]\], kwargs={end: Tile\[int32,\(\)\]}\] and "
     r"Tile\[int32,\(\)\]"),
    (times_from_the_left, r"Unsupported operand types for \*: Tile\[int32,\(\)\] and " + _NAME +
     r"args=\[Array\[int32,\(\?,\):\(\?,\)\], Tile\[int32,\(\)\], Tile\[int32,\(\)\]\], "
     r"kwargs={}\]"),
    (shifted_in_place, r"Unsupported operand types for <<: " + _NAME +
     r"args=\[None, Tile\[float32,\(\)\], Tile\[bool_,\(\)\]\], kwargs={}\] and "
     r"Tile\[int32,\(\)\]"),
    (plus_a_tile, r"Expected a tile or a scalar for the left operand, got " + _NAME),
], ids=["plus-one", "times-from-the-left", "shifted-in-place", "plus-a-tile"])
def test_a_context_manager_takes_no_operator(run_kernel, kernel, message):
    with pytest.raises(ct.TileTypeError, match=message) as caught:
        run_kernel(kernel, (1,), (np.zeros(2, np.int32),))
    assert re.search(r"line \d+", str(caught.value))
