"""Parameter annotations: ``Constant[...]``, ``IndexedWithInt64``, ``ScalarInt64`` and the
metadata classes behind them.

>>> import numba_tile as ct
>>> from numba_tile.annotations import parameter_kinds
>>> def k(x, n: ct.Constant[int], m: ct.ScalarInt64, flag: ct.Constant): pass
>>> [kind.__class__.__name__ for kind in parameter_kinds(k).values()]
['NoneType', 'ConstantAnnotation', 'ScalarAnnotation', 'ConstantAnnotation']
"""

import inspect
import typing

import numpy as np

from . import dtypes as d
from .promotion import integer_range


class ConstantAnnotation:
    """Marks a parameter as a compile-time constant (embedded; one compile per value).

    >>> import typing, numba_tile as ct
    >>> typing.get_args(ct.Constant[int])[1]
    ConstantAnnotation()
    """

    def __init__(self, python_type=None):
        # the Python type the annotation names (``Constant[int]``: int), or None
        self.python_type = python_type

    def __repr__(self):
        return "ConstantAnnotation()"

    def check(self, where, value):
        """Raise a ``TypeError`` naming the parameter and its annotation where ``value`` is
        not of the type ``Constant[...]`` names (an int, a float or an int, a bool, a str).

        >>> import numba_tile as ct
        >>> from numba_tile.annotations import ArgumentPath, ConstantAnnotation
        >>> ConstantAnnotation(int).check(ArgumentPath(2, "N"), 64.0)
        Traceback (most recent call last):
        ...
        TypeError: Argument 'N' is annotated ct.Constant[int] but was given 64.0 (float): \
pass an int
        """
        accepted = _CONSTANT_TYPES.get(self.python_type)
        if accepted is None:
            return
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            value = value.item()
        if not isinstance(value, accepted):
            name = self.python_type.__name__
            raise TypeError(f"Argument '{where}' is annotated ct.Constant[{name}] but was given "
                            f"{value!r} ({type(value).__name__}): pass "
                            f"{'an' if name[0] in 'aeiou' else 'a'} {name}")


# what a value of ``Constant[T]`` may be for each T a check knows (an int is a float, as in
# Python's typing; a bool an int)
_CONSTANT_TYPES = {int: int, float: (int, float), bool: bool, str: str}


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


def check_static_items(name, items):
    """ValueError where the arrays of list argument ``name`` differ in a shape or stride
    that their ArrayAnnotation makes static: one compile serves every item, so they must
    share those values. ``items`` holds ``(static shape, static strides)`` of each array,
    each a tuple of ``(axis, value)`` pairs.

    >>> from numba_tile.annotations import check_static_items
    >>> check_static_items("xs", [(((0, 16),), ()), (((0, 16),), ())])
    >>> check_static_items("xs", [(((0, 16),), ()), (((0, 32),), ())])
    Traceback (most recent call last):
    ...
    ValueError: Arrays of list argument 'xs' vary in static shape at axis 0 (16 and 32); ...
    """
    for position, what in enumerate(("shape", "stride")):
        first = dict(items[0][position])
        for item in items[1:]:
            for axis, value in item[position]:
                if first.get(axis, value) != value:
                    raise ValueError(
                        f"Arrays of list argument '{name}' vary in static {what} at axis "
                        f"{axis} ({first[axis]} and {value}); the ArrayAnnotation of its "
                        f"items makes it a constant, which every item must share")


class ScalarAnnotation:
    """Metadata of an integer scalar parameter: the dtype its ``int`` argument becomes,
    ``int32`` or ``int64`` (as in cuTile).

    >>> import numba_tile as ct
    >>> ct.ScalarAnnotation(dtype=ct.int64).dtype
    int64
    >>> ct.ScalarAnnotation(dtype=ct.float16)
    Traceback (most recent call last):
    ...
    ValueError: `dtype` must be int32 or int64, got float16
    """

    def __init__(self, *, dtype):
        try:
            self.dtype = d.to_dtype(dtype)
        except TypeError:
            self.dtype = dtype
        if self.dtype not in (d.int32, d.int64):
            raise ValueError(f"`dtype` must be int32 or int64, got {dtype}")

    def __repr__(self):
        return f"ScalarAnnotation(dtype={self.dtype})"


class ListAnnotation:
    """Metadata of a list-of-arrays parameter: the annotation of its elements, an
    :class:`ArrayAnnotation` or an annotation carrying one (``ct.IndexedWithInt64``).

    >>> import numba_tile as ct
    >>> ct.ListAnnotation(element=ct.ArrayAnnotation()).element
    ArrayAnnotation(index_dtype=int32)
    >>> ct.ListAnnotation(element=ct.IndexedWithInt64).element
    ArrayAnnotation(index_dtype=int64)
    """

    def __init__(self, *, element):
        if not isinstance(element, ArrayAnnotation):
            found = [m for m in getattr(element, "__metadata__", ())
                     if isinstance(m, ArrayAnnotation)]
            if len(found) != 1:
                raise TypeError(f"`element` must be an ArrayAnnotation or an annotation "
                                f"carrying one, got {element!r}")
            element = found[0]
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


class TupleAnnotation:
    """Metadata of a parameter annotated as a tuple item by item: ``tuple[ct.Constant[int],
    int]`` (``items``: each item's metadata, None where unannotated) or, with ``variadic``,
    ``tuple[ct.Constant[int], ...]`` (any length; ``items[0]`` is every item's). A tuple of
    another length is refused; the items' own metadata apply to them (a partly constant
    tuple recompiles when a constant item changes). Found by :func:`parameter_kinds`.

    >>> import numba_tile as ct
    >>> from numba_tile.annotations import parameter_kinds
    >>> def k(cfg: tuple[ct.Constant[int], tuple[int, ...]]): pass
    >>> parameter_kinds(k)["cfg"]
    TupleAnnotation(items=(ConstantAnnotation(), None))
    """

    def __init__(self, items, *, variadic=False):
        self.items, self.variadic = tuple(items), variadic

    def item(self, index):
        """The metadata of item ``index``."""
        return self.items[0] if self.variadic else self.items[index]

    def __repr__(self):
        return f"TupleAnnotation(items={self.items!r}{', variadic=True' * self.variadic})"


_KINDS = (ConstantAnnotation, ArrayAnnotation, ScalarAnnotation, ListAnnotation)


def _metadata(annotation):
    """The metadata of a parameter annotation (None: none that a launch heeds)."""
    if annotation is Constant:
        return ConstantAnnotation()
    metadata = getattr(annotation, "__metadata__", ())  # typing.Annotated[T, ...]
    if any(isinstance(meta, ConstantAnnotation) for meta in metadata):
        # a constant is embedded in the code: it has no run-time dtype to choose
        if _names_scalar_annotation(annotation):
            raise TypeError("Constant annotation cannot be combined with "
                            "ScalarAnnotation/ScalarInt64")
        return ConstantAnnotation(typing.get_args(annotation)[0])
    for meta in metadata:
        if isinstance(meta, _KINDS):
            return meta
    if metadata:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is not tuple:
        return None
    args = typing.get_args(annotation)
    if len(args) == 2 and args[1] is Ellipsis:
        item = _metadata(args[0])
        return None if item is None else TupleAnnotation((item,), variadic=True)
    return TupleAnnotation([_metadata(arg) for arg in args])


def _names_scalar_annotation(annotation):
    """True where ``annotation`` or one nested in it carries a ScalarAnnotation."""
    if any(isinstance(meta, ScalarAnnotation) for meta in getattr(annotation, "__metadata__",
                                                                  ())):
        return True
    return any(_names_scalar_annotation(arg) for arg in typing.get_args(annotation))


def parameter_kinds(fn):
    """Map each parameter name of ``fn`` to its annotation metadata (or None)."""
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
    if isinstance(meta, ScalarAnnotation):
        return _annotated_scalar(name, value, meta.dtype)
    if isinstance(value, np.generic):  # before float: np.float64 subclasses float
        return d.to_dtype(value.dtype), value.item()
    if isinstance(value, bool):
        return d.bool_, value
    if isinstance(value, int):
        return _fitting(name, value, d.int32)
    if isinstance(value, float):
        return d.float32, value
    return None


def _fitting(name, value, dtype):
    low, high = integer_range(dtype)
    if not low <= value <= high:
        hint = "; annotate the parameter with ct.ScalarInt64" if dtype is d.int32 else ""
        raise ValueError(f"Argument '{name}' = {value} does not fit {dtype}{hint}")
    return dtype, value


def _annotated_scalar(name, value, dtype):
    """``(dtype, value)`` of the argument of a parameter with a :class:`ScalarAnnotation`:
    an integer (Python's or NumPy's) that fits ``dtype``; anything else (a float, which
    would be truncated, a bool, None, a string, a tuple) is a ``TypeError``."""
    if isinstance(value, np.integer):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Argument '{name}' is annotated as an {dtype} scalar "
                        f"(ScalarAnnotation): pass an int, got {type(value).__name__} "
                        f"{value!r}")
    return _fitting(name, value, dtype)


class ArgumentPath:
    """Where a value sits among a kernel's arguments, for messages: the parameter (its
    position, None where unknown, and name) and the items of the tuples it is in. ``str``
    gives the name as Python spells it.

    >>> from numba_tile.annotations import ArgumentPath
    >>> where = ArgumentPath(2, "cfg").item(0)
    >>> str(where), where.describe()
    ('cfg[0]', 'item #0 of kernel argument #2')
    """

    def __init__(self, position, name, items=()):
        self.position, self.name, self.items = position, name, items

    def item(self, index):
        """The path of item ``index`` of the tuple (or list) here."""
        return ArgumentPath(self.position, self.name, self.items + (index,))

    def describe(self):
        """cuTile's words for the place: ``item #1 of kernel argument #0``."""
        where = f"kernel argument #{self.position}" if self.position is not None else \
            f"kernel argument {self.name!r}"
        return "".join(f"item #{i} of " for i in reversed(self.items)) + where

    def __str__(self):
        return self.name + "".join(f"[{i}]" for i in self.items)


def sequence_items(where, value, meta):
    """``(path, item, metadata)`` of each item of a tuple or list argument ``value`` whose
    parameter metadata is ``meta``: a :class:`TupleAnnotation` gives each item its own, a
    ``ListAnnotation`` its element's, and an array or scalar annotation applies to every item.
    Raises ``TypeError`` for a tuple subclass (a namedtuple: only plain tuples are accepted, as
    in cuTile), for a tuple of a length the annotation does not allow, and for a value that is
    no tuple where a tuple annotation asks for one.

    >>> import numba_tile as ct
    >>> from numba_tile.annotations import ArgumentPath, parameter_kinds, sequence_items
    >>> def k(cfg: tuple[int, ct.Constant[int]]): pass
    >>> meta = parameter_kinds(k)["cfg"]
    >>> [(str(p), v, m) for p, v, m in sequence_items(ArgumentPath(0, "cfg"), (3, 8), meta)]
    [('cfg[0]', 3, None), ('cfg[1]', 8, ConstantAnnotation())]
    >>> sequence_items(ArgumentPath(0, "cfg"), (3, 8, 1), meta)
    Traceback (most recent call last):
    ...
    TypeError: Invalid kernel argument #0: Received a tuple of length 3 for a parameter \
annotated as a tuple of length 2
    """
    if isinstance(meta, TupleAnnotation):
        if not isinstance(value, tuple):
            raise TypeError(f"Invalid {where.describe()}: Received {type(value).__name__} for a "
                            f"parameter annotated as a tuple")
        if not meta.variadic and len(value) != len(meta.items):
            raise TypeError(f"Invalid {where.describe()}: Received a tuple of length "
                            f"{len(value)} for a parameter annotated as a tuple of length "
                            f"{len(meta.items)}")
    if isinstance(value, tuple) and type(value) is not tuple:
        raise TypeError(f"Invalid {where.describe()}: '{type(value).__name__}' is a subclass of "
                        f"'tuple'. Only plain tuples are accepted.")
    if isinstance(meta, TupleAnnotation):
        return [(where.item(i), v, meta.item(i)) for i, v in enumerate(value)]
    if isinstance(value, list):
        check_list_items(where, value)
    if isinstance(meta, ListAnnotation) and isinstance(value, list):
        meta = meta.element
    elif not isinstance(meta, (ArrayAnnotation, ScalarAnnotation)):
        meta = None
    return [(where.item(i), v, meta) for i, v in enumerate(value)]


_ARRAY_INTERFACES = ("__cuda_array_interface__", "__array_interface__", "__dlpack__")


def _is_array_like(value):
    """An array of any library (or the compiler's stand-in for one, an array type; a
    ``ct.partition`` of an array)."""
    value = getattr(value, "array", value) if hasattr(value, "tile_shape") else value
    return not isinstance(value, type) and (
        getattr(value, "is_tile_array", False) is True or
        any(hasattr(value, attribute) for attribute in _ARRAY_INTERFACES))


def check_list_items(where, value):
    """A list argument holds arrays (cuTile's ``List[Array]``): a list of anything else
    (numbers: an array written as a Python list) is a ``TypeError`` that says what to pass.

    >>> from numba_tile.annotations import ArgumentPath, check_list_items
    >>> check_list_items(ArgumentPath(0, "x"), [1.0, 2.0])
    Traceback (most recent call last):
    ...
    TypeError: Argument 'x' is a Python list of float: pass a NumPy, CuPy or torch array ...
    """
    others = [type(v).__name__ for v in value if not _is_array_like(v)]
    if others:
        kinds = ", ".join(dict.fromkeys(others))
        raise TypeError(f"Argument '{where}' is a Python list of {kinds}: pass a NumPy, CuPy "
                        f"or torch array (np.asarray({where})) where the kernel takes an "
                        f"array; a list argument holds arrays")


def constant_dtype(where, value):
    """The dtype that the ``Constant`` argument ``value`` spells (``np.float16``, ``int``,
    ``"float32"``); else the ``TypeError`` of :func:`constant_error`.

    >>> import numpy as np
    >>> from numba_tile.annotations import ArgumentPath, constant_dtype
    >>> constant_dtype(ArgumentPath(0, "dtype"), np.float16)
    float16
    """
    # an array is no constant, though NumPy would read its dtype as a dtype
    if not isinstance(value, type) and any(
            hasattr(value, attribute) for attribute in _ARRAY_INTERFACES):
        raise constant_error(where, value)
    try:
        return d.to_dtype(value)
    except TypeError:
        raise constant_error(where, value) from None


def constant_error(where, value):
    """The ``TypeError`` for a value that a ``Constant`` cannot hold (an array, a list...).

    >>> from numba_tile.annotations import ArgumentPath, constant_error
    >>> print(constant_error(ArgumentPath(1, "c").item(0), [1]))
    Invalid item #0 of kernel argument #1: Could not interpret object of type 'list' as a \
constant. A Constant holds an int, float, bool, None, str, enum member, dtype or a tuple of those
    """
    return TypeError(f"Invalid {where.describe()}: Could not interpret object of type "
                     f"'{type(value).__name__}' as a constant. A Constant holds an int, float, "
                     f"bool, None, str, enum member, dtype or a tuple of those")


def mixed_list_error(name, kinds):
    """The ``TypeError`` of a list argument whose items differ (arrays of two dtypes or
    ranks), for both executors.

    >>> from numba_tile.annotations import mixed_list_error
    >>> mixed_list_error("xs", ["float32 2-d", "float16 2-d"]).args[0][:58]
    "Argument 'xs': a list must hold items of one kind (arrays "
    """
    return TypeError(f"Argument '{name}': a list must hold items of one kind (arrays of one "
                     f"dtype and rank), got {', '.join(map(str, kinds))}; pass a tuple to mix "
                     f"them")


def unsupported_argument_error(name, value):
    """The ``TypeError`` of a kernel argument that is neither an array, a number, a dtype,
    an enum member nor a tuple of those (``None``, a string: a ``ct.Constant`` parameter
    takes those; an object, a set, bytes), for both executors.

    >>> from numba_tile.annotations import unsupported_argument_error
    >>> print(unsupported_argument_error("n", None))
    Argument 'n' of type NoneType is not supported: pass arrays, bool, int, float, dtypes or \
tuples of those (None or a str only to a ct.Constant parameter)
    """
    only_constant = " (None or a str only to a ct.Constant parameter)" \
        if value is None or isinstance(value, str) else ""
    return TypeError(f"Argument '{name}' of type {type(value).__name__} is not supported: "
                     f"pass arrays, bool, int, float, dtypes or tuples of those{only_constant}")
