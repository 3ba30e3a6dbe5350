"""cuTile's rules of ``astype(x, dtype, rounding_mode=...)`` (issue 53, item 2), in every
mode: a rounding mode only for a conversion between float dtypes, and only one cuTile defines
for that pair (to float16 RN and RZ from float32; to the 8-bit floats RN only); tfloat32 takes
RZ and RA, compiled too. The messages are cuTile's."""

import numpy as np
import pytest

import numba_tile as ct

RM = ct.RoundingMode


def _kernel(source, target, mode):
    @ct.kernel
    def convert(x, out):
        t = ct.load(x, (0,), (8,)).astype(source)
        ct.store(out, (0,), t.astype(target, rounding_mode=mode).astype(ct.float32))
    return convert


REFUSED = [
    (ct.float32, ct.int32, RM.RZ, "rounding_mode is only valid for float to float conversions"),
    (ct.int32, ct.float32, RM.RZ, "rounding_mode is only valid for float to float conversions"),
    (ct.float32, ct.float16, RM.APPROX,
     r"rounding_mode=RoundingMode.APPROX is not supported for conversion from float32 to "
     r"float16, supported rounding modes for this conversion are"),
    (ct.float32, ct.float16, RM.RA, r"rounding_mode=RoundingMode.RA is not supported"),
    (ct.float32, ct.float8_e4m3fn, RM.RZ, r"rounding_mode=RoundingMode.RZ is not supported for "
                                          r"conversion from float32 to float8_e4m3fn"),
    (ct.float32, ct.bfloat16, RM.RP, r"rounding_mode=RoundingMode.RP is not supported"),
    (ct.float64, ct.tfloat32, RM.RA, r"rounding_mode=RoundingMode.RA is not supported"),
]


@pytest.mark.parametrize("source,target,mode,message", REFUSED,
                         ids=[f"{s}-{t}-{m.name}" for s, t, m, _ in REFUSED])
def test_rounding_modes_cutile_refuses(run_kernel, source, target, mode, message):
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(_kernel(source, target, mode), (1,),
                   (np.ones(8, np.float32), np.zeros(8, np.float32)))


def _tfloat32(values, mode):
    """float32 ``values`` rounded into tfloat32 by bit operations (the reference)."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    if mode is RM.RA:
        bits = bits + (1 << 12)
    return (bits & ~np.uint64(0x1FFF)).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("mode", [RM.RZ, RM.RA], ids=lambda m: m.name)
def test_tfloat32_directed_rounding(run_kernel, mode):
    # values with low mantissa bits below, at and above half a tfloat32 unit, both signs
    base = np.array([1.0, -1.0, 3.0, -3.0, 1e-3, -1e-3, 1e30, -7.0], np.float32)
    low = np.array([0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x0001, 0x1000, 0x0800, 0x1800], np.uint32)
    x = (base.view(np.uint32) | low).view(np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(_kernel(ct.float32, ct.tfloat32, mode), (1,), (x, out))
    np.testing.assert_array_equal(out, _tfloat32(x, mode))


@pytest.mark.parametrize("target,mode", [(ct.float16, RM.RZ), (ct.bfloat16, RM.RZ),
                                         (ct.float64, RM.RA), (ct.float32, RM.RN)],
                         ids=lambda v: getattr(v, "name", str(v)))
def test_rounding_modes_cutile_takes(run_kernel, target, mode):
    x = np.array([1.0, -2.5, 3.0009765625, 0.1, -0.1, 100.0, 7.0, -7.0], np.float32)
    out = np.full(8, np.nan, np.float32)
    run_kernel(_kernel(ct.float32, target, mode), (1,), (x, out))
    if target is ct.float16:  # toward zero: never larger in magnitude than the input
        assert (np.abs(out) <= np.abs(x)).all()
        np.testing.assert_allclose(out, x, rtol=2 ** -10)
    elif target is ct.bfloat16:
        assert (np.abs(out) <= np.abs(x)).all()
        np.testing.assert_allclose(out, x, rtol=2 ** -7)
    else:
        np.testing.assert_array_equal(out, x)
