"""Rules of the atomics: ``atomic_cas``, ``atomic_xchg``, ``atomic_add``, ``atomic_max``,
``atomic_min``, ``atomic_and``, ``atomic_or``, ``atomic_xor`` on index tiles (as ``gather``
takes them), on raw memory offsets and on the tiles of a tiled view
(``TiledView.atomic_store_<op>``).

Which array dtypes each operation takes, how its operands convert to the array's dtype
(implicitly, as a ``scatter``'s value does; exactly, for the bitwise operations) and which
memory orders and scopes are allowed. The result holds the old values: the array's dtype, the
indices' broadcast shape.

>>> import numba_tile as ct
>>> from numba_tile.rules.atomics import memory_semantics
>>> memory_semantics(ct.MemoryOrder.ACQUIRE, ct.MemoryScope.BLOCK, "atomic_add")
('acquire', 'cta')
"""

from .. import dtypes as d
from ..enums import MemoryOrder, MemoryScope
from ..errors import TileTypeError
from ..promotion import Loose, check_constant_fits
from . import memory as memory_rules
from .core import describe, is_tile_or_scalar
from .gather import _broadcasts_to, _check_bounds, _mask, implicit_cast, index_operands, \
    offset_operand

# the read-modify-write operations and the array dtypes each one takes
_WORDS = (d.int32, d.int64, d.uint32, d.uint64)
_FLOAT_WORDS = (d.float32, d.float64)
RMW_DTYPES = {
    "xchg": _WORDS + _FLOAT_WORDS,
    "add": _WORDS + _FLOAT_WORDS + (d.float16, d.bfloat16),
    "max": _WORDS,
    "min": _WORDS,
    "and": _WORDS,
    "or": _WORDS,
    "xor": _WORDS,
}
CAS_DTYPES = _WORDS + _FLOAT_WORDS
BITWISE = ("and", "or", "xor")

# PTX's names of the memory orders (``.sem``) and scopes (``.scope``)
_ORDERS = {MemoryOrder.RELAXED: "relaxed", MemoryOrder.ACQUIRE: "acquire",
           MemoryOrder.RELEASE: "release", MemoryOrder.ACQ_REL: "acq_rel"}
_SCOPES = {MemoryScope.BLOCK: "cta", MemoryScope.CLUSTER: "cluster",
           MemoryScope.DEVICE: "gpu", MemoryScope.SYS: "sys"}


def memory_semantics(order, scope, what):
    """``(order, scope)`` as PTX names them, for an atomic ``what`` (``atomic_cas`` or a
    read-modify-write), checked by cuTile's rule (``rules.memory.MEMORY_ORDERS``).

    >>> import numba_tile as ct
    >>> from numba_tile.rules.atomics import memory_semantics
    >>> memory_semantics(ct.MemoryOrder.RELEASE, ct.MemoryScope.DEVICE, "atomic_add")
    ('release', 'gpu')
    >>> try:
    ...     memory_semantics(ct.MemoryOrder.WEAK, ct.MemoryScope.DEVICE, "atomic_add")
    ... except ct.TileTypeError as error:
    ...     print(str(error).split(". ")[0])
    Invalid memory order for tile_atomic_rmw
    """
    kind = "tile_atomic_cas" if what.startswith("atomic_cas") else "tile_atomic_rmw"
    memory_rules.check_memory_order_and_scope(kind, what, order, scope)
    return _ORDERS[order], _SCOPES[scope]


def _array_dtype(dtype, allowed, what, kind="array"):
    """The dtype of the memory an atomic of ``what`` works on (an ``array``'s or a ``tiled
    view``'s) must be one it takes: else cuTile's words, and which it takes."""
    if dtype not in allowed:
        names = ", ".join(str(t) for t in allowed)
        raise TileTypeError(f"Unsupported {kind} dtype: {dtype} ({what}() takes {names})")


def _operand(value, shape, target, name, what, exact=False):
    """An update (``expected``, ``desired``) checked against the array's dtype: an implicit
    cast, or for the bitwise operations the very dtype (a constant must fit)."""
    operand = Loose(value) if isinstance(value, (bool, int, float)) else value
    if not (isinstance(operand, Loose) or is_tile_or_scalar(operand)):
        raise TileTypeError(f"The {name} of {what}() must be a tile or a scalar, got "
                            f"{describe(value)}")
    if exact and not isinstance(operand, Loose) and operand.dtype != target:
        raise TileTypeError(f"Bitwise atomic read-modify-write operations require the update "
                            f"dtype ({operand.dtype}) to exactly match the target dtype "
                            f"({target})")
    if exact and isinstance(operand, Loose):
        if isinstance(operand.value, float):
            raise TileTypeError(f"The {name} of {what}() must be an integer, got "
                                f"{describe(value)}")
        check_constant_fits(operand.value, target)
    else:
        implicit_cast(operand if isinstance(operand, Loose) else operand.dtype, target,
                      f"{what}() {name}:")
    _broadcasts_to(operand, shape, name, f"{what}()")
    return operand


def atomic_rmw(op, array, indices, update, check_bounds, order, scope):
    """Rule of ``atomic_<op>(array, indices, update)``: ``(result dtype, result shape, index
    operands, update operand, (order, scope))``."""
    what = f"atomic_{op}"
    operands, shape = index_operands(array, indices, f"{what}()")
    memory_rules.check_writable(array, what)
    _check_bounds(check_bounds, f"{what}()")
    _array_dtype(array.dtype, RMW_DTYPES[op], what)
    update = _operand(update, shape, array.dtype, "update", what, exact=op in BITWISE)
    return array.dtype, shape, operands, update, memory_semantics(order, scope, what)


def atomic_cas(array, indices, expected, desired, check_bounds, order, scope):
    """Rule of ``atomic_cas``: ``(result dtype, result shape, index operands, expected
    operand, desired operand, (order, scope))``."""
    operands, shape = index_operands(array, indices, "atomic_cas()")
    memory_rules.check_writable(array, "atomic_cas")
    _check_bounds(check_bounds, "atomic_cas()")
    _array_dtype(array.dtype, CAS_DTYPES, "atomic_cas")
    expected = _operand(expected, shape, array.dtype, "expected", "atomic_cas")
    desired = _operand(desired, shape, array.dtype, "desired", "atomic_cas")
    return (array.dtype, shape, operands, expected, desired,
            memory_semantics(order, scope, "atomic_cas"))


def raw_rmw(op, dtype, offset, update, mask, order, scope):
    """Rule of ``RawArrayMemory.atomic_<op>_offset``: ``(result dtype, shape, offset operand,
    update operand, mask operand, (order, scope))``."""
    what = f"atomic_{op}_offset"
    operand, shape = offset_operand(offset, what)
    _array_dtype(dtype, RMW_DTYPES[op], what)
    mask = _mask(mask, shape, f"{what}()")
    update = _operand(update, shape, dtype, "update", what, exact=op in BITWISE)
    return dtype, shape, operand, update, mask, memory_semantics(order, scope, what)


def raw_cas(dtype, offset, expected, desired, mask, order, scope):
    """Rule of ``RawArrayMemory.atomic_cas_offset``."""
    what = "atomic_cas_offset"
    operand, shape = offset_operand(offset, what)
    _array_dtype(dtype, CAS_DTYPES, what)
    mask = _mask(mask, shape, f"{what}()")
    expected = _operand(expected, shape, dtype, "expected", what)
    desired = _operand(desired, shape, dtype, "desired", what)
    return dtype, shape, operand, expected, desired, mask, memory_semantics(order, scope, what)


# the operations of TiledView.atomic_store_<op>, and the order and scope they run with: each
# element is updated atomically, nothing is ordered (the old values are not returned)
VIEW_STORE_OPS = ("add", "max", "min", "and", "or", "xor")
VIEW_STORE_SEMANTICS = ("relaxed", "gpu")


def view_atomic_store(op, view, index, update):
    """Rule of ``TiledView.atomic_store_<op>(index, update)``: the update operand, checked
    as an ``atomic_<op>``'s is (dtype, implicit or exact cast) and broadcast to the view's
    tile shape."""
    what = f"TiledView.atomic_store_{op}"
    memory_rules.check_writable(view.array, what)
    memory_rules.tile_index(index, view.array.ndim, "tiled view", f"atomic_store_{op}")
    _array_dtype(view.dtype, RMW_DTYPES[op], what, kind="tiled view")
    return _operand(update, tuple(view.tile_shape), view.dtype, "update", what,
                    exact=op in BITWISE)
