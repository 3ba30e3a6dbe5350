"""How tiles print: like nested Python lists, floats in short form (``1.5708``, ``0.5``, ``1.0``).

>>> import numpy as np, numba_tile as ct
>>> from numba_tile.host.printing import format_values
>>> format_values(np.array([[0.0, 0.5], [1.0, 1.5707963]]), ct.float32)
'[[0.0, 0.5], [1.0, 1.5708]]'
"""

import math

import numpy as np


def format_scalar(value, dtype):
    """One element in the interpreter's (and the device's) print format: a bool prints as
    1 or 0, as cuTile prints it (``print(tx > 2)`` writes ``[0, 0, 0, 1]``)."""
    if dtype.is_bool:
        return "1" if value else "0"
    if dtype.is_integral:
        return str(int(value))
    return format_float(float(value))


def format_float(value):
    """Short float form: six significant digits, always with a decimal point or exponent.

    >>> from numba_tile.host.printing import format_float
    >>> format_float(1.0), format_float(3.14159265), format_float(1e-9), format_float(-float("inf"))
    ('1.0', '3.14159', '1e-09', '-inf')
    """
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:g}"
    if "." not in text and "e" not in text:
        text += ".0"
    return text


def format_values(values, dtype, element_format=None):
    """A nested-list rendering of an array of stored values; 0-d arrays print as a scalar."""
    values = np.asarray(values)
    fmt = element_format or (lambda v: format_scalar(v, dtype))
    if values.ndim == 0:
        return fmt(values[()])

    def render(sub):
        if sub.ndim == 1:
            return "[" + ", ".join(fmt(v) for v in sub) + "]"
        return "[" + ", ".join(render(s) for s in sub) + "]"

    return render(values)
