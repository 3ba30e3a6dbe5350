"""Lowering of the atomics, on index tiles (``ct.atomic_*``) and on raw memory offsets
(``RawArrayMemory.atomic_*_offset``): one PTX ``atom`` per element, with the call's memory
order and scope (:func:`~numba_tile.compiler.lowering.asm.atomic`); on sm_90, float32 adds
of runs of four contiguous elements are one vector ``atom``. ``TiledView.atomic_store_<op>``
is the same per element of a tile of the view, relaxed, its old values unused.

Each element is updated exactly once: by the one thread of a group of replicas that hold it,
and once for registers that repeat another's element. Where other threads hold the element
too (a scalar atomic: every thread holds the 0-d result), the old value goes to them through
shared memory, between two barriers; the first barrier also orders every thread's earlier
accesses before the atomic (what a lock's release needs), the second orders the atomic
before every thread's later ones (what its acquire needs). An element outside the array or
masked off is not touched: its old value reads as ``expected`` (``atomic_cas``) or 0.

On sm_90 an acquiring atomic ends with ``fence.proxy.async.global`` in every thread: what it
made visible (another block's stores, released by its flag) is then seen by the TMA's copies
too, which read through the asynchronous proxy.
"""

from llvmlite import ir
from numba.core import types

from ... import dtypes as d
from ...language import atomics
from ...rules import atomics as atomic_rules
from ..abstract import constant_of
from ..compile_state import current
from ..types import ArrayType, RawMemoryType, TiledViewType, TileType
from . import arithmetic, asm
from .elementwise import operand_values
from .gather import array_addresses, contiguous_runs, raw_addresses
from .memory import shifted, view_origin
from .registry import lower
from .tiles import barrier, linear_offset, load_shared, make_tile, register_coordinates, \
    scratch, store_shared, thread_coordinates, is_replica_leader

# positions of the parameters in a call's signature
_RMW = {"indices": 1, "update": 2, "check_bounds": 3, "memory_order": 4, "memory_scope": 5}
_CAS = {"indices": 1, "expected": 2, "desired": 3, "check_bounds": 4, "memory_order": 5,
        "memory_scope": 6}
_RAW_RMW = {"offset": 1, "update": 2, "mask": 3, "memory_order": 4, "memory_scope": 5}
_RAW_CAS = {"offset": 1, "expected": 2, "desired": 3, "mask": 4, "memory_order": 5,
            "memory_scope": 6}

# PTX's operation names
_PTX_OPS = {"xchg": "exch", "add": "add", "max": "max", "min": "min", "and": "and",
            "or": "or", "xor": "xor"}


def _ptx_type(op, dtype):
    """The PTX type an ``atom`` of ``op`` on ``dtype`` elements names, and whether the
    value moves as integer bits (exchange and compare-and-swap of floats)."""
    bits = dtype.bitwidth
    if op in ("xchg", "cas", "and", "or", "xor"):
        return f"b{bits}", dtype.is_float
    if dtype.is_float:
        return {d.float16: "f16", d.bfloat16: "bf16"}.get(dtype, f"f{bits}"), False
    if op == "add":  # two's complement: one add for both signednesses
        return f"u{bits}", False
    return f"{'s' if dtype.is_signed else 'u'}{bits}", False


def _atom(builder, op, dtype, semantics, pointer, operands):
    """One atomic on the element at ``pointer``; its old value (storage form)."""
    ptx_type, as_bits = _ptx_type(op, dtype)
    register = asm.ATOMIC_REGISTERS[ptx_type]
    storage = arithmetic.storage_type(dtype)
    bits_type = ir.IntType(dtype.bitwidth)
    if as_bits and storage != bits_type:
        operands = [builder.bitcast(v, bits_type) for v in operands]
    if op == "cas":
        instruction = asm.atomic_cas(*semantics, ptx_type, register)
    else:
        instruction = asm.atomic(_PTX_OPS[op], *semantics, ptx_type, register)
    address = builder.ptrtoint(pointer, ir.IntType(64))
    old = asm.emit(builder, instruction, [address, *operands], operands[0].type)
    return builder.bitcast(old, storage) if old.type != storage else old


def _vector_adds(context, builder, op, dtype, semantics, result_type, addresses, operands,
                 old_value, values):
    """Float32 adds on sm_90 move runs of consecutive, aligned elements with one vector
    ``atom`` (:func:`~numba_tile.compiler.lowering.gather.contiguous_runs` decides at run
    time; a run that is not takes one ``atom`` per element): fills ``values`` for the runs
    and returns the registers left to update one by one."""
    every = range(result_type.registers)
    if op != "add" or dtype is not d.float32 or current().target < (9, 0):
        return every
    runs = contiguous_runs(builder, result_type, 4, addresses)
    if runs is None:
        return every
    for first, width, ok in runs:
        with builder.if_else(ok, likely=True) as (vector_path, element_path):
            with vector_path:
                result = ir.LiteralStructType([ir.FloatType()] * width)
                olds = asm.emit(builder, asm.atomic_add_vector(*semantics, width), [
                    builder.ptrtoint(addresses[first][0], ir.IntType(64)),
                    *(operands[first + k][0] for k in range(width))], result)
                fast = [builder.extract_value(olds, k) for k in range(width)]
                fast_block = builder.block
            with element_path:
                slow = [old_value(first + k) for k in range(width)]
                slow_block = builder.block
        for k in range(width):
            phi = builder.phi(fast[k].type)
            phi.add_incoming(fast[k], fast_block)
            phi.add_incoming(slow[k], slow_block)
            values[first + k] = phi
    return ()


def _replicated(layout):
    return bool(layout.replicated_bits("lane") or layout.replicated_bits("warp"))


def atomic_tile(context, builder, op, dtype, semantics, result_type, addresses, operands,
                untouched):
    """The tile of old values of one atomic per element of ``result_type``: ``addresses``
    per register ``(pointer, accessed)``, ``operands`` per register the operand list of the
    ``atom``, ``untouched`` per register the value where not accessed."""
    layout = result_type.layout
    first = {}
    for register in range(result_type.registers):
        first.setdefault(layout.apply(register=register), register)
    leaders = sorted(first.values())

    def old_value(register):
        pointer, accessed = addresses[register]
        with builder.if_else(accessed, likely=True) as (then, otherwise):
            with then:
                block_then = builder.block
                old = _atom(builder, op, dtype, semantics, pointer, operands[register])
            with otherwise:
                block_otherwise = builder.block
        phi = builder.phi(old.type)
        phi.add_incoming(old, block_then)
        phi.add_incoming(untouched[register], block_otherwise)
        return phi

    if not _replicated(layout):
        values = [None] * result_type.registers
        for register in _vector_adds(context, builder, op, dtype, semantics, result_type,
                                     addresses, operands, old_value, values):
            values[register] = old_value(register)
        _fence_for_copies(builder, semantics)
        return make_tile(context, builder, result_type, [
            values[first[layout.apply(register=r)]] for r in range(result_type.registers)])
    # replicas: the leader updates, then every holder reads the old value from shared memory
    element = arithmetic.storage_type(dtype)
    buffer = scratch(builder, element, _count(result_type.shape))
    base = thread_coordinates(builder, layout)
    barrier(builder)
    with builder.if_then(is_replica_leader(builder, layout)):
        for register in leaders:
            slot = builder.gep(buffer, [linear_offset(builder, register_coordinates(
                builder, base, layout, register), result_type.shape)])
            store_shared(builder, old_value(register), slot)
    barrier(builder)
    values = []
    for register in range(result_type.registers):
        slot = builder.gep(buffer, [linear_offset(builder, register_coordinates(
            builder, base, layout, register), result_type.shape)])
        values.append(load_shared(builder, slot, element))
    _fence_for_copies(builder, semantics)
    return make_tile(context, builder, result_type, values)


def _fence_for_copies(builder, semantics):
    """The proxy fence after an acquiring atomic on sm_90 (see the module's docstring)."""
    if semantics[0] in ("acquire", "acq_rel") and semantics[1] in ("gpu", "sys") and \
            current().target >= (9, 0):
        asm.emit(builder, asm.FENCE_ASYNC_PROXY_GLOBAL, [])


def _count(shape):
    count = 1
    for n in shape:
        count *= n
    return count


def _semantics(sig, places):
    order, scope = (constant_of(sig.args[places[name]])
                    for name in ("memory_order", "memory_scope"))
    return atomic_rules.memory_semantics(order, scope, "atomic")


def _values(context, builder, sig, args, places, name, result_type, dtype):
    return operand_values(context, builder, sig.args[places[name]], args[places[name]],
                          result_type, dtype)


def _zeros(dtype, result_type):
    return [arithmetic.constant(dtype, 0)] * result_type.registers


def _lower_rmw(op, raw):
    places = _RAW_RMW if raw else _RMW
    addresses_of = raw_addresses if raw else array_addresses

    def lower_atomic(context, builder, sig, args):
        result_type, dtype = sig.return_type, sig.args[0].dtype
        updates = _values(context, builder, sig, args, places, "update", result_type, dtype)
        return atomic_tile(context, builder, op, dtype, _semantics(sig, places), result_type,
                           addresses_of(context, builder, sig, args, result_type, places),
                           [[u] for u in updates], _zeros(dtype, result_type))
    return lower_atomic


def _lower_cas(raw):
    places = _RAW_CAS if raw else _CAS
    addresses_of = raw_addresses if raw else array_addresses

    def lower_atomic(context, builder, sig, args):
        result_type, dtype = sig.return_type, sig.args[0].dtype
        expected = _values(context, builder, sig, args, places, "expected", result_type, dtype)
        desired = _values(context, builder, sig, args, places, "desired", result_type, dtype)
        return atomic_tile(context, builder, "cas", dtype, _semantics(sig, places),
                           result_type,
                           addresses_of(context, builder, sig, args, result_type, places),
                           [[e, w] for e, w in zip(expected, desired)], expected)
    return lower_atomic


lower(atomics.atomic_cas, ArrayType, types.VarArg(types.Any))(_lower_cas(False))
lower("raw.atomic_cas_offset", RawMemoryType, types.VarArg(types.Any))(_lower_cas(True))
for _op in atomic_rules.RMW_DTYPES:
    lower(getattr(atomics, f"atomic_{_op}"), ArrayType, types.VarArg(types.Any))(
        _lower_rmw(_op, False))
    lower(f"raw.atomic_{_op}_offset", RawMemoryType, types.VarArg(types.Any))(
        _lower_rmw(_op, True))


def _lower_view_atomic_store(op):
    """``TiledView.atomic_store_<op>``: one relaxed atomic per element of the tile at the
    index, in the default layout (elements outside the array untouched)."""
    def lower_atomic_store(context, builder, sig, args):
        view, array, origin = view_origin(context, builder, sig, args)
        tile_type = TileType(view.dtype, view.tile_shape, current().num_warps)
        layout = tile_type.layout
        base = thread_coordinates(builder, layout)
        addresses = [array.element(builder, [shifted(builder, o, c) for o, c in zip(
            origin, register_coordinates(builder, base, layout, r))])
            for r in range(tile_type.registers)]
        updates = operand_values(context, builder, sig.args[2], args[2], tile_type,
                                 view.dtype)
        atomic_tile(context, builder, op, view.dtype, atomic_rules.VIEW_STORE_SEMANTICS,
                    tile_type, addresses, [[u] for u in updates],
                    _zeros(view.dtype, tile_type))
        return context.get_dummy_value()
    return lower_atomic_store


for _op in atomic_rules.VIEW_STORE_OPS:
    lower(f"view.atomic_store_{_op}", TiledViewType, types.VarArg(types.Any))(
        _lower_view_atomic_store(_op))
