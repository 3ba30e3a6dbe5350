"""The ``math`` module as tile code sees it (seed 003's list), on scalars and tiles.

Inside an interpreted kernel, ``math`` (and names imported from it) resolve to this module:
on Python numbers it is the standard ``math``; on tiles it applies the tile op elementwise,
converting integer tiles to float32 first (C's promotion of integer arguments). The compiler
takes its tables of functions (:data:`UNARY`, :data:`BINARY`) and folds constants with it.

>>> from numba_tile.language.tile_math import tile_math
>>> tile_math.sqrt(16), tile_math.sqrt(16).dtype
(4.0, float32)
"""

import math as _math
import types

from .. import dtypes as d
from ..host.scalars import loose
from ..host.tile import Tile
from ..rules.core import is_python_number
from . import elementwise
from .elementwise import astype

UNARY = {"acos": "acos", "asin": "asin", "atan": "atan", "acosh": "acosh", "asinh": "asinh",
         "atanh": "atanh", "cos": "cos", "sin": "sin", "tan": "tan", "cosh": "cosh",
         "sinh": "sinh", "tanh": "tanh", "exp": "exp", "expm1": "expm1", "fabs": "abs",
         "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "ceil": "ceil", "floor": "floor",
         "isnan": "isnan", "isinf": "isinf", "log2": "log2", "exp2": "exp2"}
BINARY = {"atan2": "atan2", "pow": "pow", "copysign": "copysign", "fmod": "fmod"}


def _as_float(x):
    if isinstance(x, Tile) and not x.dtype.is_float:
        return astype.__tile_op__(x, d.float32)
    return x


def _unary(name, op):
    def fn(x):
        if is_python_number(x):
            return loose(getattr(_math, name)(x))
        return elementwise.unary(op, _as_float(x))
    fn.__name__ = name
    fn.__doc__ = f"``math.{name}`` on scalars and tiles."
    return fn


def _binary(name, op):
    def fn(x, y):
        if is_python_number(x) and is_python_number(y):
            return loose(getattr(_math, name)(x, y))
        return elementwise.binary(op, _as_float(x), _as_float(y))
    fn.__name__ = name
    fn.__doc__ = f"``math.{name}`` on scalars and tiles."
    return fn


def _log(x, base=None):
    if base is None:
        return _unary("log", "log")(x)
    if is_python_number(x) and is_python_number(base):
        return loose(_math.log(x, base))
    return _unary("log", "log")(x) / _unary("log", "log")(base)


def build_module():
    """A module object standing in for ``math`` in tile code."""
    module = types.ModuleType("math", "The math module in numba_tile tile code.")
    for name in dir(_math):
        if not name.startswith("_"):
            setattr(module, name, getattr(_math, name))
    for name, op in UNARY.items():
        setattr(module, name, _unary(name, op))
    for name, op in BINARY.items():
        setattr(module, name, _binary(name, op))
    module.log = _log
    module.arctan = module.atan  # seed 003 lists math.arctan (NumPy's name) beside math.atan
    for name in ("pi", "e", "tau", "inf", "nan"):
        setattr(module, name, loose(getattr(_math, name)))
    return module


tile_math = build_module()
REPLACEMENTS = {id(getattr(_math, name)): getattr(tile_math, name)
                for name in list(UNARY) + list(BINARY) + ["log"] if hasattr(_math, name)}
