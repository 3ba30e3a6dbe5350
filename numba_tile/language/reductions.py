"""Reductions over one axis, several axes or the whole tile: sum, prod, max, min, argmax,
argmin. The result keeps the input dtype (argmax/argmin give int32 indices).
"""

import warnings

import numpy as np

from ..host.context import tile_op
from ..host.conversion import flush_subnormals, round_float
from ..host.tile import Tile, tile_argument
from ..rules.elementwise import check_float_options
from ..rules.reductions import ARG_REDUCTIONS, reduction


def _reduce(op, x, axis, keepdims, rounding_mode=None, flush_to_zero=False,
            propagate_nan=False):
    x = tile_argument(x, op)
    check_float_options(op, x.dtype, rounding_mode, flush_to_zero)  # (of the input, as cuTile)
    spec, axes = reduction(op, x, axis, keepdims)
    values = x.values
    if not axes:  # a 0-d tile, or axis=() : nothing to reduce
        return Tile(spec.dtype, values.reshape(spec.shape).astype(spec.dtype.storage)
                    if op not in ARG_REDUCTIONS else np.zeros(spec.shape, np.int32),
                    spec.constant)
    with np.errstate(all="ignore"):
        if op in ("argmax", "argmin"):
            return Tile(spec.dtype, _arg_reduce(op, x, axes, keepdims, propagate_nan),
                        spec.constant)
        if x.dtype.is_float:
            # Accumulate in float64 and round once: the interpreter is the exact reference.
            wide = values.astype(np.float64)
            if flush_to_zero:
                wide = flush_subnormals(wide, x.dtype)
            if op == "sum":
                out = np.sum(wide, axis=axes, keepdims=keepdims)
            elif op == "prod":
                out = np.prod(wide, axis=axes, keepdims=keepdims)
            else:
                fn = {("max", True): np.max, ("max", False): np.nanmax,
                      ("min", True): np.min, ("min", False): np.nanmin}[(op, bool(propagate_nan))]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN
                    out = fn(wide, axis=axes, keepdims=keepdims)
                out = _order_zeros(op, wide, out, axes, keepdims)
            out = round_float(out, x.dtype, rounding_mode)
        else:
            if x.dtype.is_bool:  # (counted in int32)
                values = values.astype(np.int32)
            fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
            kwargs = {"dtype": values.dtype} if op in ("sum", "prod") else {}
            out = fn(values, axis=axes, keepdims=keepdims, **kwargs)
    return Tile(spec.dtype, np.asarray(out).reshape(spec.shape), spec.constant)


def _order_zeros(op, values, out, axes, keepdims):
    """A zero maximum is +0.0 when any +0.0 was reduced, a zero minimum -0.0 when any -0.0
    was: -0.0 counts below +0.0, as in IEEE 754-2019 and on the GPU."""
    zero = out == 0
    if not np.any(zero):
        return out
    wanted = (values == 0) & (np.signbit(values) == (op == "min"))
    present = np.any(wanted, axis=axes, keepdims=keepdims)
    signed_zero = np.where(present, 0.0, -0.0) if op == "max" else \
        np.where(present, -0.0, 0.0)
    return np.where(zero, signed_zero, out)


def _arg_reduce(op, x, axes, keepdims, propagate_nan):
    values = x.values.astype(np.float64) if x.dtype.is_float else x.values
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(values, kept + list(axes))
    flat = moved.reshape(moved.shape[:len(kept)] + (-1,))
    if x.dtype.is_float:
        nan = np.isnan(flat)
        if propagate_nan:
            fill = np.inf if op == "argmax" else -np.inf
            base = np.where(nan, fill, flat)
            index = np.where(nan.any(-1), np.argmax(nan, -1),
                             (np.argmax if op == "argmax" else np.argmin)(base, -1))
        else:
            fill = -np.inf if op == "argmax" else np.inf
            index = (np.argmax if op == "argmax" else np.argmin)(np.where(nan, fill, flat), -1)
    else:
        index = (np.argmax if op == "argmax" else np.argmin)(flat, -1)
    index = index.astype(np.int32)
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        index = index.reshape(shape)
    return index


_EXAMPLE = """
    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(8, dtype=ct.float32), (2, 4))
    ...     print({call})
    >>> ct.launch(0, (1,), show, ())
    {output}
    """


def _doc(summary, call, output):
    return summary + "\n" + _EXAMPLE.format(call=call, output=output)


@tile_op
def sum(x, /, axis=None, *, keepdims=False, rounding_mode=None, flush_to_zero=False):
    return _reduce("sum", x, axis, keepdims, rounding_mode, flush_to_zero)


@tile_op
def prod(x, /, axis=None, *, keepdims=False, rounding_mode=None, flush_to_zero=False):
    return _reduce("prod", x, axis, keepdims, rounding_mode, flush_to_zero)


@tile_op
def max(x, /, axis=None, *, keepdims=False, flush_to_zero=False, propagate_nan=False):
    return _reduce("max", x, axis, keepdims, flush_to_zero=flush_to_zero,
                   propagate_nan=propagate_nan)


@tile_op
def min(x, /, axis=None, *, keepdims=False, flush_to_zero=False, propagate_nan=False):
    return _reduce("min", x, axis, keepdims, flush_to_zero=flush_to_zero,
                   propagate_nan=propagate_nan)


@tile_op
def argmax(x, /, axis=None, *, keepdims=False, propagate_nan=False):
    return _reduce("argmax", x, axis, keepdims, propagate_nan=propagate_nan)


@tile_op
def argmin(x, /, axis=None, *, keepdims=False, propagate_nan=False):
    return _reduce("argmin", x, axis, keepdims, propagate_nan=propagate_nan)


sum.__doc__ = _doc("Sum over ``axis`` (None: all axes; an int or a tuple).",
                   "ct.sum(t, axis=1), ct.sum(t)", "[6.0, 22.0] 28.0")
prod.__doc__ = _doc("Product over ``axis``.", "ct.prod(t + 1.0, axis=0)",
                    "[5.0, 12.0, 21.0, 32.0]")
max.__doc__ = _doc("Maximum over ``axis``; NaN is ignored unless ``propagate_nan``.",
                   "ct.max(t, axis=1, keepdims=True)", "[[3.0], [7.0]]")
min.__doc__ = _doc("Minimum over ``axis``; NaN is ignored unless ``propagate_nan``.",
                   "ct.min(t, axis=0)", "[0.0, 1.0, 2.0, 3.0]")
argmax.__doc__ = _doc("Index (int32) of the first maximum over ``axis``; with a tuple of axes "
                      "or None, the row-major index within the reduced axes.",
                      "ct.argmax(t, axis=1), ct.argmax(t)", "[3, 3] 7")
argmin.__doc__ = _doc("Index (int32) of the first minimum over ``axis``.",
                      "ct.argmin(t, axis=0)", "[0, 0, 0, 0]")
