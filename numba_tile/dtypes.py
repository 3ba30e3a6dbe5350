"""The 19 tile dtypes (seed 000, "Data Types") and conversions from other libraries' dtypes.

A :class:`DType` is an immutable, hashable object usable in host code, in tile code and as a
``Constant`` kernel parameter. Calling one makes a strictly typed constant scalar::

    >>> import numba_tile as ct
    >>> ct.float16.bitwidth, ct.float16.category
    (16, 'float')
    >>> ct.int16(5).dtype
    int16
"""

import numpy as np

try:  # ml_dtypes gives NumPy storage for bfloat16 and the 8/4-bit floats.
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - a hard dependency, kept optional for robustness
    _ml = None

BOOLEAN, INTEGRAL, FLOAT, POINTER = "bool", "int", "float", "pointer"
_CATEGORY_RANK = {BOOLEAN: 0, INTEGRAL: 1, FLOAT: 2}

# what calling a dtype does: its scalars are host tiles, defined above this module, which
# hands the maker in (set_scalar_maker) when imported, as importing numba_tile does first
_scalar_maker = None


def set_scalar_maker(make):
    """Make calling a dtype call ``make(dtype, value)``: :mod:`numba_tile.host.tile`, which
    defines the tiles it makes (and the rules they follow), hands it in when imported.

    >>> import numba_tile as ct
    >>> from numba_tile import dtypes
    >>> dtypes._scalar_maker.__module__
    'numba_tile.host.tile'
    """
    global _scalar_maker
    _scalar_maker = make


class DType:
    """A tile element type: name, bit width, category and NumPy equivalent.

    ``arithmetic`` is False for the numeric-only types (``tfloat32`` and the 8/4-bit floats):
    storage formats that convert, load, store and feed ``mma``, with no arithmetic of their
    own (:func:`numba_tile.rules.elementwise.check_arithmetic`).

    >>> import numba_tile as ct
    >>> ct.int8.name, ct.int8.bitwidth, ct.int8.is_signed, ct.int8.numpy
    ('int8', 8, True, dtype('int8'))
    >>> ct.float32 == ct.float32, {ct.float32: 1}[ct.float32]
    (True, 1)
    """

    __slots__ = ("name", "short_name", "bitwidth", "category", "is_signed", "arithmetic",
                 "_numpy", "_storage")

    def __init__(self, name, short_name, bitwidth, category, *, signed, arithmetic, numpy,
                 storage=None):
        self.name = name
        self.short_name = short_name
        self.bitwidth = bitwidth
        self.category = category
        self.is_signed = signed
        self.arithmetic = arithmetic
        self._numpy = None if numpy is None else np.dtype(numpy)
        # The interpreter's storage type: the NumPy equivalent, else the nearest container.
        self._storage = self._numpy if storage is None else np.dtype(storage)

    # -- identity -------------------------------------------------------------------------
    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __reduce__(self):  # pickles (and caches) as the module-level singleton
        return (_by_name_checked, (self.name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # Singletons: identity equality and hashing by name (stable across processes).
    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return hash(("numba_tile.DType", self.name))

    # -- properties -----------------------------------------------------------------------
    @property
    def numpy(self):
        """The NumPy dtype with the same values, or None (tfloat32 has none).

        >>> import numba_tile as ct
        >>> ct.float32.numpy, ct.tfloat32.numpy
        (dtype('float32'), None)
        """
        return self._numpy

    @property
    def storage(self):
        """The NumPy dtype the interpreter stores values of this dtype in.

        >>> import numba_tile as ct
        >>> ct.tfloat32.storage
        dtype('float32')
        """
        return self._storage

    @property
    def itemsize(self):
        """Size of one element in bytes when stored in an array (a float4 takes one byte).

        >>> import numba_tile as ct
        >>> ct.bfloat16.itemsize
        2
        """
        return max(self.bitwidth, 8) // 8 if self is not tfloat32 else 4

    @property
    def is_integral(self):
        """True for the integer dtypes (not ``bool_``).

        >>> import numba_tile as ct
        >>> ct.uint8.is_integral, ct.bool_.is_integral
        (True, False)
        """
        return self.category == INTEGRAL

    @property
    def is_float(self):
        """True for every floating-point dtype, the numeric-only ones included.

        >>> import numba_tile as ct
        >>> ct.float8_e4m3fn.is_float
        True
        """
        return self.category == FLOAT

    @property
    def is_bool(self):
        """True for ``bool_``.

        >>> import numba_tile as ct
        >>> ct.bool_.is_bool
        True
        """
        return self.category == BOOLEAN

    def __call__(self, *values, **keywords):
        """Make a strictly typed constant scalar of this dtype (an integer keeps the low bits
        the dtype holds, as cuTile truncates).

        >>> import numba_tile as ct
        >>> c = ct.int16(5) + 2
        >>> c.dtype, c.item(), ct.uint8(-1).item()
        (int16, 7, 255)
        """
        return _scalar_maker(self, *values, **keywords)


def _ml_dtype(name):
    return None if _ml is None else getattr(_ml, name)


def _make(name, short, bits, category, *, signed=False, arithmetic=True, numpy=None,
          storage=None):
    return DType(name, short, bits, category, signed=signed, arithmetic=arithmetic,
                 numpy=numpy, storage=storage)


bool_ = _make("bool_", "b1", 8, BOOLEAN, numpy=np.bool_)
uint8 = _make("uint8", "u8", 8, INTEGRAL, numpy=np.uint8)
uint16 = _make("uint16", "u16", 16, INTEGRAL, numpy=np.uint16)
uint32 = _make("uint32", "u32", 32, INTEGRAL, numpy=np.uint32)
uint64 = _make("uint64", "u64", 64, INTEGRAL, numpy=np.uint64)
int8 = _make("int8", "i8", 8, INTEGRAL, signed=True, numpy=np.int8)
int16 = _make("int16", "i16", 16, INTEGRAL, signed=True, numpy=np.int16)
int32 = _make("int32", "i32", 32, INTEGRAL, signed=True, numpy=np.int32)
int64 = _make("int64", "i64", 64, INTEGRAL, signed=True, numpy=np.int64)
float16 = _make("float16", "f16", 16, FLOAT, signed=True, numpy=np.float16)
float32 = _make("float32", "f32", 32, FLOAT, signed=True, numpy=np.float32)
float64 = _make("float64", "f64", 64, FLOAT, signed=True, numpy=np.float64)
bfloat16 = _make("bfloat16", "bf", 16, FLOAT, signed=True, numpy=_ml_dtype("bfloat16"))
tfloat32 = _make("tfloat32", "tf32", 32, FLOAT, signed=True, arithmetic=False,
                 storage=np.float32)
float8_e4m3fn = _make("float8_e4m3fn", "f8e4m3fn", 8, FLOAT, signed=True, arithmetic=False,
                      numpy=_ml_dtype("float8_e4m3fn"))
float8_e5m2 = _make("float8_e5m2", "f8e5m2", 8, FLOAT, signed=True, arithmetic=False,
                    numpy=_ml_dtype("float8_e5m2"))
float8_e8m0fnu = _make("float8_e8m0fnu", "f8e8m0fnu", 8, FLOAT, arithmetic=False,
                       numpy=_ml_dtype("float8_e8m0fnu"))
float8_e5m3fnu = _make("float8_e5m3fnu", "f8e5m3fnu", 8, FLOAT, arithmetic=False,
                       storage=np.float32)
float4_e2m1fn = _make("float4_e2m1fn", "f4e2m1fn", 4, FLOAT, signed=True, arithmetic=False,
                      numpy=_ml_dtype("float4_e2m1fn"))

ALL_DTYPES = (bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16,
              float32, float64, bfloat16, tfloat32, float8_e4m3fn, float8_e5m2, float8_e8m0fnu,
              float8_e5m3fnu, float4_e2m1fn)

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({d.short_name: d for d in ALL_DTYPES})
_BY_NAME.update({"bool": bool_, "float8_e4m3": float8_e4m3fn})
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES if d.numpy is not None and d is not tfloat32}


def _by_name_checked(name):
    if name.startswith("foreign_pointer[") and name.endswith("]"):  # (made on demand)
        return foreign_pointer_dtype(_by_name_checked(name[len("foreign_pointer["):-1]))
    return _BY_NAME[name]


class ForeignPointerDType(DType):
    """The dtype of a foreign pointer to elements of ``pointee`` (``Array.foreign_pointer``):
    64 bits, no arithmetic, no NumPy equivalent. Made by :func:`foreign_pointer_dtype`, one
    object per pointee, so that identity equality holds as for the other dtypes.

    >>> import numba_tile as ct
    >>> p = ct.foreign_pointer_dtype(ct.int8)
    >>> p.pointee, p.bitwidth, p.category, p.arithmetic, p.numpy
    (int8, 64, 'pointer', False, None)
    """

    __slots__ = ("pointee",)

    def __init__(self, pointee):
        # (the interpreter's value of a pointer is an object that knows the memory it
        # points into: host/foreign_pointers.py)
        super().__init__(f"foreign_pointer[{pointee.name}]",
                         f"foreign_pointer[{pointee.short_name}]", 64, POINTER, signed=False,
                         arithmetic=False, numpy=None, storage=object)
        self.pointee = pointee


_FOREIGN_POINTERS = {}


def foreign_pointer_dtype(pointee_dtype):
    """The dtype of a foreign pointer to elements of ``pointee_dtype`` (what
    ``Array.foreign_pointer`` gives). Equal pointees give the same dtype.

    >>> import numba_tile as ct
    >>> fp = ct.foreign_pointer_dtype(ct.float32)
    >>> str(fp), fp.bitwidth, fp == ct.foreign_pointer_dtype(ct.float32)
    ('foreign_pointer[float32]', 64, True)
    >>> ct.foreign_pointer_dtype(fp)
    Traceback (most recent call last):
    ...
    TypeError: nested foreign pointer dtypes are not supported
    """
    if isinstance(pointee_dtype, ForeignPointerDType):
        raise TypeError("nested foreign pointer dtypes are not supported")
    if not isinstance(pointee_dtype, DType):  # (cuTile's words)
        raise TypeError("pointee_dtype must be a cuda.tile dtype")
    found = _FOREIGN_POINTERS.get(pointee_dtype)
    if found is None:
        found = _FOREIGN_POINTERS.setdefault(pointee_dtype, ForeignPointerDType(pointee_dtype))
    return found


def is_foreign_pointer(dtype):
    """True for a foreign pointer dtype (:func:`foreign_pointer_dtype`).

    >>> import numba_tile as ct
    >>> from numba_tile.dtypes import is_foreign_pointer
    >>> is_foreign_pointer(ct.foreign_pointer_dtype(ct.int32)), is_foreign_pointer(ct.int32)
    (True, False)
    """
    return isinstance(dtype, ForeignPointerDType)


def is_dtype(value):
    """True if ``value`` is a numba_tile dtype.

    >>> import numba_tile as ct
    >>> from numba_tile.dtypes import is_dtype
    >>> is_dtype(ct.int32), is_dtype("int32")
    (True, False)
    """
    return isinstance(value, DType)


def dtype_spelling(value):
    """The :class:`DType` that ``value`` spells if it is another library's dtype object (a
    NumPy scalar type such as ``np.float32``, a ``np.dtype``, an ``ml_dtypes`` type or a
    ``torch.dtype``), else None. Kernels written for ``cuda.tile`` pass these where a dtype
    is expected (``ct.arange(n, dtype=np.int32)``).

    >>> import numpy as np
    >>> from numba_tile.dtypes import dtype_spelling
    >>> dtype_spelling(np.int32), dtype_spelling(np.dtype("float16")), dtype_spelling(3)
    (int32, float16, None)
    """
    numpy_type = isinstance(value, type) and issubclass(value, np.generic)
    torch_dtype = type(value).__module__ == "torch" and type(value).__name__ == "dtype"
    foreign = isinstance(value, np.dtype) or numpy_type or torch_dtype
    if not foreign:
        return None
    try:
        return to_dtype(value)
    except TypeError:
        return None


def to_dtype(value):
    """Convert a dtype-like object to a :class:`DType`, or raise ``TypeError``.

    Accepts our dtypes, NumPy dtypes and scalar types, PyTorch and CuPy dtypes, the names of
    our dtypes, and the Python types ``bool``, ``int`` (int32) and ``float`` (float32).

    >>> import numpy as np
    >>> from numba_tile.dtypes import to_dtype
    >>> to_dtype(np.float16), to_dtype("bf"), to_dtype(float)
    (float16, bfloat16, float32)
    """
    if isinstance(value, DType):
        return value
    if value is None:  # (NumPy reads None as its default, float64: never meant)
        raise TypeError("None is not a dtype")
    if value is bool:
        return bool_
    if value is int:
        return int32
    if value is float:
        return float32
    if isinstance(value, str):
        try:
            return _BY_NAME[value]
        except KeyError:
            raise TypeError(f"Unknown dtype name {value!r}") from None
    module = type(value).__module__
    if module.startswith("torch"):
        name = str(value).replace("torch.", "")
        name = {"bool": "bool_", "half": "float16", "float": "float32", "double": "float64",
                "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
                "float8_e8m0fnu": "float8_e8m0fnu", "float4_e2m1fn_x2": "float4_e2m1fn",
                "short": "int16", "int": "int32", "long": "int64"}.get(name, name)
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"Unsupported dtype {value}")
    try:
        npdt = np.dtype(value)
    except (TypeError, ValueError):  # (NumPy 2 raises ValueError for an object like 5)
        raise TypeError(f"Cannot interpret {value!r} as a dtype") from None
    try:
        return _BY_NUMPY[npdt]
    except KeyError:
        raise TypeError(f"Unsupported dtype {npdt}") from None
