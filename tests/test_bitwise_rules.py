"""cuTile's rules of the operands of ``&``, ``|``, ``^`` and of shifts (issue 53, item 1),
in every mode: bitwise ops take integers or bools of one dtype (a loosely typed constant
takes the other operand's), never bool with int8; shifts take integers of any two dtypes,
promoted, never bools or floats. The messages are cuTile's."""

import numpy as np
import pytest

import numba_tile as ct


def _kernel(expression):
    @ct.kernel
    def kernel(a, b, out):
        x = ct.load(a, (0,), (4,))
        y = ct.load(b, (0,), (4,))
        ct.store(out, (0,), expression(x, y))
    return kernel


def _array(dtype, values):
    return np.asarray(values).astype(dtype)


A, B = [3, 1, 7, 2], [2, 3, 1, 2]
REFUSED = [
    ("int32 & int64", lambda x, y: x & y, np.int32, np.int64,
     r"^Bitwise operands must have same data type, got: int32 and int64"),
    ("bool | uint32", lambda x, y: x | y, np.bool_, np.uint32,
     r"^Bitwise operands must have same data type, got: bool_ and uint32"),
    ("int32 ^ typed int64 constant", lambda x, y: x ^ ct.int64(3), np.int32, np.int32,
     r"^Bitwise operands must have same data type, got: int32 and int64"),
    ("int8 & True", lambda x, y: x & True, np.int8, np.int8,
     r"^Bitwise op does not support bool and int8"),
    ("float32 & float32", lambda x, y: x & y, np.float32, np.float32,
     r"^Bitwise operations require integers or booleans"),
    ("int32 << 1.0", lambda x, y: x << 1.0, np.int32, np.int32,
     r"^Bitwise shift requires an integer for right-hand side, got: float32"),
    ("bool << 1", lambda x, y: x << 1, np.bool_, np.bool_,
     r"^Bitwise shift requires an integer for left-hand side, got: bool_"),
    ("float32 >> int32", lambda x, y: x >> y, np.float32, np.int32,
     r"^Bitwise shift requires an integer for left-hand side, got: float32"),
]


@pytest.mark.parametrize("name,expression,dx,dy,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_bitwise_operands_cutile_refuses(run_kernel, name, expression, dx, dy, message):
    out = np.zeros(4, np.int64)
    with pytest.raises(ct.TileTypeError, match=message):
        run_kernel(_kernel(expression), (1,), (_array(dx, A), _array(dy, B), out))


ACCEPTED = [
    ("int64 & 3", lambda x, y: x & 3, np.int64, np.int64, np.int64,
     lambda a, b: a & 3),
    ("uint8 | uint8", lambda x, y: x | y, np.uint8, np.uint8, np.uint8, lambda a, b: a | b),
    ("bool ^ bool", lambda x, y: x ^ y, np.bool_, np.bool_, np.bool_, lambda a, b: a ^ b),
    ("int32 << int64", lambda x, y: x << y, np.int32, np.int64, np.int64,
     lambda a, b: a.astype(np.int64) << b),
    ("int16 >> int32", lambda x, y: x >> y, np.int16, np.int32, np.int32,
     lambda a, b: a.astype(np.int32) >> b),
    ("1 << int32", lambda x, y: 1 << y, np.int32, np.int32, np.int32, lambda a, b: 1 << b),
]


@pytest.mark.parametrize("name,expression,dx,dy,result,reference", ACCEPTED,
                         ids=[r[0] for r in ACCEPTED])
def test_bitwise_operands_cutile_takes(run_kernel, name, expression, dx, dy, result,
                                       reference):
    a, b = _array(dx, A), _array(dy, B)
    if dx == np.bool_:
        a, b = _array(dx, [1, 0, 1, 1]), _array(dy, [1, 1, 0, 1])
    out = np.full(4, 99, result)
    run_kernel(_kernel(expression), (1,), (a, b, out))
    np.testing.assert_array_equal(out, reference(a, b).astype(result))
