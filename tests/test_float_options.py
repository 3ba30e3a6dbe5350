"""cuTile's rules of ``rounding_mode`` and ``flush_to_zero`` (issue 53, item 2), in every
mode: each op takes the rounding modes it defines (add, sub, mul: RN, RZ, RM, RP; truediv:
those, FULL and APPROX; sqrt: those and APPROX; exp and tanh: FULL and APPROX), on float16,
bfloat16, float32 or float64, FULL and APPROX on float32 only; flush-to-zero where the op
defines it, on float32 only. The messages are cuTile's."""

import numpy as np
import pytest

import numba_tile as ct

RM = ct.RoundingMode


def _kernel(expression):
    @ct.kernel
    def kernel(a, b, out):
        x = ct.load(a, (0,), (4,))
        y = ct.load(b, (0,), (4,))
        ct.store(out, (0,), ct.full((4,), 0, ct.float32) + expression(x, y).astype(ct.float32))
    return kernel


A, B = [3.0, 0.5, 7.0, 2.25], [1.5, 2.0, 0.75, 3.0]
REFUSED = [
    ("sqrt approx float16", lambda x, y: ct.sqrt(x, rounding_mode=RM.APPROX), np.float16,
     "Rounding mode approx can only be used for float32 type, but got float16"),
    ("exp rz", lambda x, y: ct.exp(x, rounding_mode=RM.RZ), np.float32,
     "Rounding mode zero is not supported for exp"),
    ("tanh rn", lambda x, y: ct.tanh(x, rounding_mode=RM.RN), np.float32,
     "Rounding mode nearest_even is not supported for tanh"),
    ("add approx", lambda x, y: ct.add(x, y, rounding_mode=RM.APPROX), np.float32,
     "Rounding mode approx is not supported for add"),
    ("add rz int32", lambda x, y: ct.add(x, y, rounding_mode=RM.RZ), np.int32,
     "Rounding mode can only be used for unrestricted float types, but got int32"),
    ("truediv full float64", lambda x, y: ct.truediv(x, y, rounding_mode=RM.FULL), np.float64,
     "Rounding mode full can only be used for float32 type, but got float64"),
    ("sum rz int32", lambda x, y: ct.sum(x, 0, rounding_mode=RM.RZ), np.int32,
     "Rounding mode can only be used for unrestricted float types, but got int32"),
    ("add ftz float16", lambda x, y: ct.add(x, y, flush_to_zero=True), np.float16,
     "Flush to zero can only be used for float32 type, but got float16"),
    ("sqrt ftz float64", lambda x, y: ct.sqrt(x, flush_to_zero=True), np.float64,
     "Flush to zero can only be used for float32 type, but got float64"),
    ("maximum ftz int32", lambda x, y: ct.maximum(x, y, flush_to_zero=True), np.int32,
     "Flush to zero can only be used for float32 type, but got int32"),
]


@pytest.mark.parametrize("name,expression,dtype,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_float_options_cutile_refuses(run_kernel, name, expression, dtype, message):
    out = np.zeros(4, np.float32)
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(_kernel(expression), (1,), (np.asarray(A, dtype), np.asarray(B, dtype), out))


ACCEPTED = [
    ("sqrt rz float16", lambda x, y: ct.sqrt(x, rounding_mode=RM.RZ), np.float16,
     lambda a, b: np.sqrt(a)),
    ("add rm float64", lambda x, y: ct.add(x, y, rounding_mode=RM.RM),
     np.float64, lambda a, b: a + b),
    ("truediv approx", lambda x, y: ct.truediv(x, y, rounding_mode=RM.APPROX), np.float32,
     lambda a, b: a / b),
    ("exp full", lambda x, y: ct.exp(x, rounding_mode=RM.FULL), np.float32,
     lambda a, b: np.exp(a)),
    ("tanh approx", lambda x, y: ct.tanh(x, rounding_mode=RM.APPROX), np.float32,
     lambda a, b: np.tanh(a)),
    ("maximum ftz", lambda x, y: ct.maximum(x, y, flush_to_zero=True), np.float32,
     lambda a, b: np.maximum(a, b)),
    ("sum rz", lambda x, y: ct.sum(x, 0, rounding_mode=RM.RZ), np.float32,
     lambda a, b: np.full(4, a.sum())),
]


@pytest.mark.parametrize("name,expression,dtype,reference", ACCEPTED,
                         ids=[r[0] for r in ACCEPTED])
def test_float_options_cutile_takes(run_kernel, name, expression, dtype, reference):
    a, b = np.asarray(A, dtype), np.asarray(B, dtype)
    out = np.full(4, np.nan, np.float32)
    run_kernel(_kernel(expression), (1,), (a, b, out))
    expected = reference(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=2e-3)
