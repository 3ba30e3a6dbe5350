"""Helpers for tests/test_interpreter_semantics.py: tile code living in another module."""

import math

SCALE = 3


def relu(t):
    return max(t, 0.0)


def literal_dtype():
    a = 0
    return a.dtype


def scaled_sqrt(t):
    return math.sqrt(t) * SCALE
