"""Parameter annotations: ``Constant[...]``, ``IndexedWithInt64``, ``ScalarInt64`` and the
metadata classes behind them.

>>> import numba_tile as ct
>>> from numba_tile.annotations import parameter_kinds
>>> def k(x, n: ct.Constant[int], m: ct.ScalarInt64, flag: ct.Constant): pass
>>> [kind.__class__.__name__ for kind in parameter_kinds(k).values()]
['NoneType', 'ConstantAnnotation', 'ScalarAnnotation', 'ConstantAnnotation']
"""

import typing

import numpy as np

from . import dtypes as d


class ConstantAnnotation:
    """Marks a parameter as a compile-time constant (embedded; one compile per value).

    >>> import typing, numba_tile as ct
    >>> typing.get_args(ct.Constant[int])[1]
    ConstantAnnotation()
    """

    def __repr__(self):
        return "ConstantAnnotation()"


class ArrayAnnotation:
    """Metadata of an array parameter: the dtype of its shape/stride values and which of
    them are static: ``static_shape_dims``/``static_stride_dims`` name axes whose shape or
    stride the kernel is specialized to at launch, so that ``x.shape[axis]`` is a compile-time
    constant there (one compile per value).

    >>> import numba_tile as ct
    >>> ct.ArrayAnnotation(index_dtype=ct.int64).index_dtype
    int64
    >>> ct.ArrayAnnotation(static_shape_dims=(0, -1))
    ArrayAnnotation(index_dtype=int32, static_shape_dims=(0, -1))
    """

    def __init__(self, *, index_dtype=d.int32, static_shape_dims=(), static_stride_dims=()):
        self.index_dtype = d.to_dtype(index_dtype)
        self.static_shape_dims = tuple(static_shape_dims)
        self.static_stride_dims = tuple(static_stride_dims)

    def __repr__(self):
        extra = "".join(f", {name}={getattr(self, name)}"
                        for name in ("static_shape_dims", "static_stride_dims")
                        if getattr(self, name))
        return f"ArrayAnnotation(index_dtype={self.index_dtype}{extra})"


def static_axes(name, annotation, ndim):
    """``(shape axes, stride axes)``, non-negative and sorted, that an ArrayAnnotation makes
    static for argument ``name`` of ``ndim`` dimensions; ValueError for an axis the array
    does not have.

    >>> import numba_tile as ct
    >>> from numba_tile.annotations import static_axes
    >>> static_axes("x", ct.ArrayAnnotation(static_shape_dims=(0, -1)), 3)
    ((0, 2), ())
    """
    found = []
    for what in ("static_shape_dims", "static_stride_dims"):
        axes = set()
        for axis in getattr(annotation, what):
            if isinstance(axis, bool) or not isinstance(axis, int) or not -ndim <= axis < ndim:
                raise ValueError(f"Argument {name!r}: {what} names axis {axis!r}, which a "
                                 f"{ndim}-d array does not have")
            axes.add(axis % ndim)
        found.append(tuple(sorted(axes)))
    return tuple(found)


class ScalarAnnotation:
    """Metadata of a scalar parameter: the dtype an ``int``/``float`` argument becomes.

    >>> import numba_tile as ct
    >>> ct.ScalarAnnotation(dtype=ct.int64).dtype
    int64
    """

    def __init__(self, *, dtype=None):
        self.dtype = None if dtype is None else d.to_dtype(dtype)

    def __repr__(self):
        return f"ScalarAnnotation(dtype={self.dtype})"


class ListAnnotation:
    """Metadata of a list-of-arrays parameter: the annotation of its elements.

    >>> import numba_tile as ct
    >>> ct.ListAnnotation(element=ct.ArrayAnnotation()).element
    ArrayAnnotation(index_dtype=int32)
    """

    def __init__(self, *, element):
        self.element = element

    def __repr__(self):
        return f"ListAnnotation(element={self.element!r})"


class _ConstantMeta(type):
    def __getitem__(cls, item):
        return typing.Annotated[item, ConstantAnnotation()]

    def __repr__(cls):
        return "numba_tile.Constant"


class Constant(metaclass=_ConstantMeta):
    """Annotate a kernel parameter as a compile-time constant: ``n: ct.Constant[int]``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show(n: ct.Constant[int]):
    ...     ct.static_assert(n == 4)
    ...     print(ct.arange(n, dtype=ct.int32))
    >>> ct.launch(0, (1,), show, (4,))
    [0, 1, 2, 3]
    """


IndexedWithInt64 = typing.Annotated[object, ArrayAnnotation(index_dtype=d.int64)]
"""Annotation: the array's shape and stride values are int64 (default int32)."""

ScalarInt64 = typing.Annotated[int, ScalarAnnotation(dtype=d.int64)]
"""Annotation: an ``int`` argument is passed as int64 (default int32)."""


def _metadata(annotation):
    if annotation is Constant:
        return ConstantAnnotation()
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, (ConstantAnnotation, ArrayAnnotation, ScalarAnnotation,
                             ListAnnotation)):
            return meta
    return None


def parameter_kinds(fn):
    """Map each parameter name of ``fn`` to its annotation metadata (or None)."""
    import inspect
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable postponed annotations: evaluate the ones we can
        hints = {}
        for name, ann in getattr(fn, "__annotations__", {}).items():
            if isinstance(ann, str):
                try:
                    ann = eval(ann, fn.__globals__, {"Constant": Constant})  # noqa: S307
                except Exception:
                    continue
            hints[name] = ann
    params = inspect.signature(fn).parameters
    return {name: _metadata(hints.get(name)) for name in params}


def scalar_argument(name, value, meta=None):
    """``(dtype, value)`` of a scalar kernel argument, or None for anything else.

    Python ``int`` is int32 (int64 with a ``ScalarInt64`` annotation; out of range is a
    ``ValueError``), ``float`` is float32, ``bool`` is bool_, NumPy scalars keep their dtype.

    >>> import numpy as np
    >>> from numba_tile.annotations import scalar_argument
    >>> scalar_argument("n", 7), scalar_argument("x", np.float16(1.5))
    ((int32, 7), (float16, 1.5))
    """
    if isinstance(value, np.generic):  # before float: np.float64 subclasses float
        return d.to_dtype(value.dtype), value.item()
    if isinstance(value, bool):
        return d.bool_, value
    if isinstance(value, int):
        dtype = meta.dtype if isinstance(meta, ScalarAnnotation) and meta.dtype else d.int32
        from .promotion import integer_range
        low, high = integer_range(dtype)
        if not low <= value <= high:
            hint = "; annotate the parameter with ct.ScalarInt64" if dtype is d.int32 else ""
            raise ValueError(f"Argument {name!r} = {value} does not fit {dtype}{hint}")
        return dtype, value
    if isinstance(value, float):
        dtype = meta.dtype if isinstance(meta, ScalarAnnotation) and meta.dtype else d.float32
        return dtype, value
    return None
