"""Kernels with Python ``assert`` statements, for tests/test_bad_inputs_second.py: kept out of
test modules, whose asserts pytest rewrites into its own code (which the compiler would read
instead of the kernel's)."""

import numba_tile as ct


@ct.kernel
def assert_on_a_tile(x, out):
    t = ct.load(x, (0,), (4,))
    assert t > 0
    ct.store(out, (0,), t)
