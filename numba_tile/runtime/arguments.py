"""Kernel arguments: the Numba type a kernel is compiled for, and the flat values a launch
passes for it.

:func:`classify` is the one rule for every kind of argument (arrays of any library,
scalars, ``Constant`` values, tuples and lists of those), for launches and for
``ct.compile``; :func:`quick_signature` is the fast path of cached launches, which
handles the common kinds with the same flat values (``tests/test_arguments.py`` checks it).

>>> from numba_tile.runtime.arguments import classify
>>> class GPUArray:  # what CuPy, PyTorch and numba device arrays expose
...     __cuda_array_interface__ = {"shape": (4, 8), "typestr": "<f4", "strides": None,
...                                 "data": (0x10000, False), "version": 3}
>>> classify("x", GPUArray(), None)
(TileArray(float32, 2, int32, aligned), [65536, 4, 8, 8, 1])
>>> classify("n", 7, None)
(int32, [7])
"""

import enum

import numpy as np
from numba.core import types

from .. import dtypes as d
from ..annotations import (ArgumentPath, ArrayAnnotation, ConstantAnnotation, ScalarAnnotation,
                           TupleAnnotation, check_static_items, constant_dtype,
                           mixed_list_error, scalar_argument, sequence_items, static_axes,
                           unsupported_argument_error)
from ..compiler.constant_folding import is_wide_integer, literal_type
from ..compiler.types import ArrayType, ConstantType, FloatLiteral, ListType, PartitionType, \
    is_aligned, scalar_type
from ..interpreter.host_arrays import to_host
from ..partitions import Partition, partitioned_array

_INT32 = 2**31
_DLPACK_CPU, _DLPACK_CUDA_HOST = 1, 3  # DLPack device types of host memory


def classify_arguments(kernel, args, *, on_device=True):
    """``(Numba types, flat values)`` of a kernel's arguments: the signature it is compiled
    for and what a launch passes (see :func:`classify`). On the device, a host array among
    them, or in a tuple or list among them, is the error reported first.

    >>> import numba_tile as ct
    >>> from numba_tile.runtime.arguments import classify_arguments
    >>> @ct.kernel
    ... def scale(factor, TILE: ct.Constant[int]):
    ...     pass
    >>> classify_arguments(scale, (0.5, 64))
    ((float32, Literal[int](64)), [0.5, 64])
    """
    if on_device:
        for value in args:
            items = value if isinstance(value, (list, tuple)) else (value,)
            if any(is_host_array(v.array if isinstance(v, Partition) else v) for v in items):
                raise ValueError("Input array is not on a CUDA device; pass a CuPy array, a "
                                 "CUDA torch tensor or a numba device array, or set "
                                 "NUMBA_TILE_INTERPRET=1 to run on the CPU")
    arg_types, flat = [], []
    for position, (name, value, meta) in enumerate(zip(kernel.parameters, args,
                                                       kernel.parameter_kind_list)):
        numba_type, values = classify(ArgumentPath(position, name), value, meta,
                                      on_device=on_device)
        arg_types.append(numba_type)
        flat += values
    return tuple(arg_types), flat


def argument_tuple_error(args):
    """The ``TypeError`` of kernel arguments that are no tuple (one array, None), where a
    launch or a compile takes them.

    >>> from numba_tile.runtime.arguments import argument_tuple_error
    >>> print(argument_tuple_error(None))
    kernel_args must be a tuple (one item per kernel parameter), got NoneType
    """
    return TypeError(f"kernel_args must be a tuple (one item per kernel parameter), got "
                     f"{type(args).__name__}")


def check_argument_count(kernel, args):
    """A launch or a compile of ``kernel`` needs one argument per parameter: else the
    ``TypeError`` in cuTile's words, with the parameters named.

    >>> import numba_tile as ct
    >>> from numba_tile.runtime.arguments import check_argument_count
    >>> @ct.kernel
    ... def scale(x, factor):
    ...     pass
    >>> check_argument_count(scale, (1,))
    Traceback (most recent call last):
    ...
    TypeError: Kernel expects 2 arguments but 1 was given: scale(x, factor)
    """
    expected, given = len(kernel.parameters), len(args)
    if expected != given:
        raise TypeError(f"Kernel expects {expected} argument{'' if expected == 1 else 's'} but "
                        f"{given} {'was' if given == 1 else 'were'} given: "
                        f"{kernel.__name__}({', '.join(kernel.parameters)})")


def classify(name, value, meta, *, on_device=True):
    """``(Numba type, flat run-time values)`` of the argument ``value`` of parameter ``name``
    (or at an :class:`~numba_tile.annotations.ArgumentPath`), whose annotation metadata is
    ``meta`` (:func:`~numba_tile.annotations.parameter_kinds`).

    An array is typed by its dtype, rank, index dtype and alignment, and passed as its data
    pointer, shape and strides (in elements). On the device (a launch) arrays must be GPU
    arrays; otherwise (``ct.compile``, whose flat values are not used) host arrays do too,
    and an :class:`~numba_tile.compiler.types.ArrayType` stands for any array of its type.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.runtime.arguments import classify
    >>> classify("x", np.zeros(8, np.float16), None, on_device=False)[0].ndim
    1
    >>> classify("h", np.float16(1.0), None)  # float16 scalars travel as their bits
    (float16, [15360])
    >>> numba_type, flat = classify("t", (2, 0.5), None)
    >>> print(numba_type, flat)
    Tuple(int32, float32) [2, 0.5]
    >>> def k(t: tuple[ct.Constant[int], int]): pass  # a partly constant tuple
    >>> numba_type, flat = classify("t", (8, 3), ct.kernel(k).parameter_kind_list[0])
    >>> print(numba_type, flat)
    Tuple(Literal[int](8), int32) [8, 3]
    """
    if isinstance(name, str):
        name = ArgumentPath(None, name)
    if isinstance(value, Partition):  # the whole array; the kernel's entry takes the region
        array_type, flat = classify(name, partitioned_array(name, value, meta), meta,
                                    on_device=on_device)
        return PartitionType(array_type, value.tile_shape), flat
    if isinstance(meta, ConstantAnnotation):
        meta.check(name, value)
        return _constant(name, value)
    if isinstance(meta, ScalarAnnotation):  # (whatever the value: a tuple, None...)
        return _scalar(*scalar_argument(name, value, meta))
    if isinstance(value, (tuple, list)) or isinstance(meta, TupleAnnotation):
        parts = [classify(where, v, item_meta, on_device=on_device)
                 for where, v, item_meta in sequence_items(name, value, meta)]
        return (sequence_type(name, value, [t for t, _ in parts]),
                [v for _, flat in parts for v in flat])
    scalar = scalar_argument(name, value, meta)
    if scalar is not None:
        return _scalar(*scalar)
    if isinstance(value, (enum.Enum, d.DType)) or d.dtype_spelling(value) is not None:
        return _constant(name, value)  # no run-time form: a compile-time constant, as in
        # the interpreter (seed 000 passes dtypes as plain arguments)
    if isinstance(value, ArrayType) and not on_device:
        return value, []
    if isinstance(value, str) or value is None:  # (as the interpreter says)
        raise unsupported_argument_error(name, value)
    view = array_view(value, on_device=on_device)
    if view is None:
        if on_device:
            raise TypeError(f"Argument '{name}' of type {type(value).__name__} is not "
                            f"supported: pass GPU arrays (CuPy, PyTorch, numba), bool, int "
                            f"or float")
        raise unsupported_argument_error(name, value)  # (as the interpreter says)
    index_dtype = meta.index_dtype if isinstance(meta, ArrayAnnotation) else d.int32
    # the values a launch passes must fit their fields (ct.compile passes none)
    if on_device and index_dtype is d.int32 and \
            any(not -_INT32 <= n < _INT32 for n in view.shape + view.strides):
        raise ValueError(f"Argument '{name}' needs int64 shapes or strides; annotate it "
                         f"with ct.IndexedWithInt64")
    static = _static_dims(name, meta, view)
    return (ArrayType(view.dtype, len(view.shape), index_dtype, view.aligned, *static,
                      read_only=view.read_only),
            [view.pointer, *view.shape, *view.strides])


def _static_dims(name, meta, view):
    """``(static_shape, static_strides)`` of an array argument: ``(axis, value)`` pairs of
    the axes its ArrayAnnotation makes static."""
    if not isinstance(meta, ArrayAnnotation):
        return (), ()
    shape_axes, stride_axes = static_axes(str(name), meta, len(view.shape))
    return (tuple((axis, int(view.shape[axis])) for axis in shape_axes),
            tuple((axis, int(view.strides[axis])) for axis in stride_axes))


def _constant(name, value):
    """``(Numba type, flat values)`` of a ``Constant`` parameter's value: the value is in the
    type (one compile per value); what is passed at run time is only filler."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int)) and not isinstance(value, enum.Enum):
        # (an int no dtype holds is a constant as a literal 2**100 is: unbounded as it folds)
        return literal_type(value), [0 if is_wide_integer(value) else int(value)]
    if isinstance(value, float):
        return FloatLiteral(value), [value]
    if isinstance(value, tuple):
        parts = [_constant(where, v) for where, v, _ in sequence_items(name, value, None)]
        return types.Tuple([t for t, _ in parts]), [v for _, flat in parts for v in flat]
    if value is None or isinstance(value, (str, enum.Enum, d.DType)):
        return ConstantType(value), [0]
    return ConstantType(constant_dtype(name, value)), [0]


def _scalar(dtype, value):
    """``(Numba type, flat values)`` of a scalar argument of ``dtype``."""
    if dtype in (d.float16, d.bfloat16):  # passed as their bits
        value = int(np.array(value, dtype.numpy).view(np.int16))
    elif dtype.is_integral and not dtype.is_signed:  # the parameter fields are signed
        bits = 8 * dtype.itemsize
        value = int(value)
        value = value - (1 << bits) if value >= 1 << (bits - 1) else value
    return scalar_type(dtype), [value]


def sequence_type(name, value, item_types):
    """The Numba type of a tuple or list argument from its items' types. A tuple may mix
    kinds (``(array, 3)``); a list holds items of one kind (arrays of one dtype and rank,
    indexed at run time: a :class:`~numba_tile.compiler.types.ListType`), so its arrays are
    compiled for the alignment all of them have.

    >>> import numba_tile as ct
    >>> from numba_tile.compiler.types import ArrayType
    >>> from numba_tile.runtime.arguments import sequence_type
    >>> sequence_type("xs", [0, 0], [ArrayType(ct.float32, 1, aligned=True),
    ...                              ArrayType(ct.float32, 1)])
    List(TileArray(float32, 1, int32), 2)
    """
    if isinstance(value, list) and item_types:
        if all(isinstance(t, ArrayType) for t in item_types):
            aligned = all(t.aligned for t in item_types)
            item_types = [t.with_alignment(aligned) for t in item_types]
            if len({(t.dtype, t.ndim, t.index_dtype) for t in item_types}) == 1:
                check_static_items(name, [(t.static_shape, t.static_strides)
                                          for t in item_types])
        if len(set(item_types)) > 1:
            raise mixed_list_error(name, [f"{t.dtype} {t.ndim}-d array" if isinstance(
                t, ArrayType) else str(t) for t in item_types])  # (as the interpreter says)
        return ListType(item_types[0], len(item_types))
    return types.BaseTuple.from_types(item_types)


class ArrayView:
    """What a kernel needs of an array argument: dtype, shape, strides (in elements), data
    pointer, and whether it is aligned (:func:`~numba_tile.compiler.types.is_aligned`).

    >>> import numba_tile as ct
    >>> from numba_tile.runtime.arguments import ArrayView
    >>> ArrayView(ct.float32, (8,), (1,), 0x10000, True).strides
    (1,)
    """

    def __init__(self, dtype, shape, strides, pointer, aligned, read_only=False):
        self.dtype, self.shape, self.strides, self.pointer = dtype, shape, strides, pointer
        self.aligned = aligned
        self.read_only = read_only


def array_view(value, *, on_device=True):
    """An :class:`ArrayView` of a GPU array of any library (CuPy, PyTorch, numba: through
    ``__cuda_array_interface__``, or PyTorch's own accessors, which also describe bfloat16),
    or unless ``on_device`` of a host array (NumPy, CPU tensors, ...); None for anything
    else. The data is not touched.

    >>> import numpy as np
    >>> from numba_tile.runtime.arguments import array_view
    >>> array_view(np.zeros((3, 4), np.int8)) is None  # a host array: not on the device
    True
    >>> array_view(np.zeros((3, 4), np.int8)[:, ::2], on_device=False).strides
    (4, 2)
    """
    module = type(value).__module__ or ""
    if module.startswith("torch") and getattr(getattr(value, "device", None), "type",
                                              None) == "cuda":
        dtype, shape, strides = d.to_dtype(value.dtype), tuple(value.shape), tuple(value.stride())
        pointer = value.data_ptr()
        return ArrayView(dtype, shape, strides, pointer,
                         is_aligned(pointer, shape, strides, dtype.itemsize))
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        npdtype = np.dtype(interface["typestr"])
        return _interface_view(interface, d.to_dtype(npdtype), npdtype.itemsize)
    if on_device:
        return None
    host = to_host(value)
    if host is None:
        return None
    return _interface_view(host.array.__array_interface__, host.dtype, host.array.itemsize)


def _interface_view(interface, dtype, itemsize):
    """The :class:`ArrayView` of an array of ``dtype`` (``itemsize`` bytes an element)
    described by a (CUDA) array interface, whose strides are in bytes (None: C-contiguous)."""
    shape, byte_strides = tuple(interface["shape"]), interface.get("strides")
    if byte_strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        strides, whole = tuple(reversed(strides)), True
    else:
        strides = tuple(s // itemsize for s in byte_strides)
        whole = not any(s % itemsize for s in byte_strides)  # else no whole elements apart
    pointer, read_only = interface["data"][:2]
    return ArrayView(dtype, shape, strides, pointer,
                     whole and is_aligned(pointer, shape, strides, itemsize), bool(read_only))


def is_host_array(value):
    """True for an array in host memory (NumPy, CPU tensors, DLPack or array-interface
    objects on the CPU), which a launch outside interpreter mode refuses.

    >>> import numpy as np
    >>> from numba_tile.runtime.arguments import is_host_array
    >>> is_host_array(np.zeros(4)), is_host_array(np.float32(1)), is_host_array(3)
    (True, False, False)
    """
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, (type, np.generic)):  # a dtype class (a Constant), a NumPy scalar
        return False
    module = type(value).__module__ or ""
    if module.startswith("torch"):
        return hasattr(value, "device") and value.device.type == "cpu"
    if hasattr(value, "__cuda_array_interface__"):
        return False
    if hasattr(value, "__dlpack_device__"):
        return value.__dlpack_device__()[0] in (_DLPACK_CPU, _DLPACK_CUDA_HOST)
    return hasattr(value, "__array_interface__")


_TENSOR_TYPES = set()  # torch tensor classes seen so far
_ITEMSIZES = {}  # torch dtype -> bytes


def torch_tensor_classes():
    """The PyTorch tensor classes launches have met (:func:`quick_signature` adds them).

    >>> from numba_tile.runtime.arguments import torch_tensor_classes
    >>> isinstance(torch_tensor_classes(), set)
    True
    """
    return _TENSOR_TYPES


def interface_entry(value):
    """``(launch key entry, flat values)`` of a writable C-contiguous array known by its
    ``__cuda_array_interface__`` (CuPy, numba) of fewer than 2**31 elements; None for
    anything else (the full classification then decides).

    >>> from numba_tile.runtime.arguments import interface_entry
    >>> class GPUArray:
    ...     __cuda_array_interface__ = {"shape": (2, 8), "typestr": "<f4", "strides": None,
    ...                                 "data": (0x10000, False), "version": 3}
    >>> interface_entry(GPUArray())
    (('<f4', 2, True), [65536, 2, 8, 8, 1])
    """
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None or interface.get("strides") is not None or interface["data"][1]:
        return None  # (a read-only array's type differs: the full classification has it)
    shape, pointer = interface["shape"], interface["data"][0]
    step, strides = 1, []
    for n in reversed(shape):
        strides.append(step)
        step *= n
    if step >= _INT32:
        return None
    strides.reverse()
    itemsize = int(interface["typestr"][2:])
    return ((interface["typestr"], len(shape), is_aligned(pointer, shape, strides, itemsize)),
            [pointer, *shape, *strides])


def quick_signature(kernel, kernel_args):
    """A launch cache key and the flat values, computed cheaply for the common arguments;
    None sends the launch through :func:`classify_arguments` (first launches, errors, other
    argument kinds). Launches that no launch plan takes (:mod:`numba_tile.runtime.launch_plans`)
    run this, so it is written for speed: torch attribute reads are the main cost.

    The kinds it handles, each with the flat values :func:`classify` gives: CUDA torch
    tensors of at least one dimension and C-contiguous CUDA-array-interface arrays of fewer
    than 2**31 elements (both of unannotated parameters, also inside a ``ct.partition``, whose
    tile shape is then in the key), Python ``int`` within int32, ``bool`` and ``float`` of
    unannotated parameters, and ``int`` and ``bool`` values of ``Constant`` parameters. It
    returns None for every other kind.

    >>> import numba_tile as ct
    >>> from numba_tile.runtime.arguments import quick_signature
    >>> @ct.kernel
    ... def fill(value, flag, N: ct.Constant[int]):
    ...     pass
    >>> quick_signature(fill, (0.5, True, 64))
    ((<class 'float'>, <class 'bool'>, (<class 'int'>, 64)), [0.5, True, 64])
    >>> quick_signature(fill, (0.5, True, 2.0)) is None  # a float Constant: the full path
    True
    """
    key, flat = [], []
    for value, meta in zip(kernel_args, kernel.parameter_kind_list):
        kind = type(value)
        if kind is Partition:  # the key of its array, after one of the partition's own
            if meta is not None:
                return None
            key.append((kind, value.tile_shape))
            value = value.array
            kind = type(value)
        if kind in _TENSOR_TYPES:
            if meta is not None or not value.is_cuda:
                return None
            # shapes and strides beyond int32 need not be checked here: the parameter
            # buffer's int32 fields refuse them, and the launch then takes the full path
            shape, strides, pointer, dtype = value.shape, value.stride(), value.data_ptr(), \
                value.dtype
            if not shape:
                return None
            itemsize = _ITEMSIZES.get(dtype) or _ITEMSIZES.setdefault(dtype,
                                                                      value.element_size())
            # types.is_aligned, inlined
            aligned = not pointer & 15 and strides[-1] == 1 and not shape[-1] * itemsize & 15
            if aligned and len(strides) > 1:
                aligned = not any(s * itemsize & 15 or (s <= 0 and n != 1)
                                  for s, n in zip(strides[:-1], shape[:-1]))
            key.append((dtype, len(shape), aligned))
            flat.append(pointer)
            flat += shape
            flat += strides
        elif kind is int or kind is bool:
            if meta is None:
                if kind is int and not -_INT32 <= value < _INT32:
                    return None  # the full path says it does not fit
                key.append(kind)
            elif isinstance(meta, ConstantAnnotation):
                key.append((kind, value))
            else:
                return None
            flat.append(value)
        elif kind is float and meta is None:
            key.append(kind)
            flat.append(value)
        elif meta is not None:
            return None
        elif (kind.__module__ or "").startswith("torch") and hasattr(value, "data_ptr") \
                and hasattr(value, "is_cuda") and hasattr(value, "stride"):
            _TENSOR_TYPES.add(kind)  # a tensor class seen for the first time
            return quick_signature(kernel, kernel_args)
        else:
            entry = interface_entry(value)
            if entry is None:
                return None
            key.append(entry[0])
            flat += entry[1]
    return tuple(key), flat
