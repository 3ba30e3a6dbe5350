"""``ct.mma`` on Hopper (sm_90a): ``wgmma.mma_async``, operands read by the tensor cores
straight from shared memory.

Four warps (a warpgroup) issue one ``wgmma`` on a 64-row slice of the result together. The
block's warps split M in slices of 16 rows, as the ``mma.sync`` accumulator layout
:func:`~numba_tile.layouts.mma_accumulator` with all warps along M lays them out: warp ``w``
holds rows ``16 w + 16 W i`` (``W`` warps, ``i`` counting the row slices it repeats over),
so warpgroup ``g`` works on the 64-row slices starting at ``64 g + 16 W i``, each a few
``wgmma`` of ``N <= 256`` columns and 16 of depth. A thread's registers of one slice are
that of ``wgmma``'s result fragment in order.

The operands are in shared memory in the swizzles both the tensor memory accelerator and
``wgmma`` know (:func:`~numba_tile.compiler.tiles.swizzled_offset`): A is K-major (rows of K:
64 bytes, or a multiple of 128), B is N-major (rows of N, a multiple of 128 bytes: the
"transposed" B of ``wgmma``). A matrix descriptor gives the tensor cores each operand's
start and strides. Writes by threads (``st.shared``, ``cp.async``) become visible to them
through ``fence.proxy.async`` and a barrier.
"""

from llvmlite import ir

from .. import dtypes as d
from .tiles import I32, I64, move_tile, make_tile, thread_ids, TARGET

# (input dtype, accumulator dtype) -> the PTX types of d, a, b
_KINDS = {(d.float16, d.float32): "f32.f16.f16", (d.bfloat16, d.float32): "f32.bf16.bf16"}
SWIZZLE_128B, SWIZZLE_64B = 1, 2  # the descriptor's layout types
ATOM_BYTES = 1024  # eight rows of 128 bytes: where the swizzle pattern repeats


def applies(x_type, y_type, acc_type):
    """True where the product runs as ``wgmma`` (sm_90, float16/bfloat16 into float32,
    whole warpgroups, shapes that fill its 64 x N x 16 steps and 128-byte rows)."""
    from .tensor_cores import is_one_matrix
    if TARGET["cc"] != (9, 0) or _KINDS.get((x_type.dtype, acc_type.dtype)) is None or \
            not is_one_matrix(x_type, y_type) or y_type.dtype is not x_type.dtype:
        return False
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    warps = acc_type.num_warps
    itemsize = x_type.dtype.itemsize
    return (warps % 4 == 0 and m % (16 * warps) == 0 and
            (k * itemsize % 128 == 0 or k * itemsize == 64) and
            n * itemsize % 128 == 0 and (n <= 256 or n % 256 == 0))


def instruction(x_type, y_type, acc_type):
    n = min(y_type.shape[-1], 256)
    return f"wgmma.mma_async.sync.aligned.m64n{n}k16.{_KINDS[(x_type.dtype, acc_type.dtype)]}"


def lower_wgmma(context, builder, found, x_type, x, y_type, y, acc_type, acc, result):
    """The accumulator registers of ``mma(x, y, acc)`` by ``wgmma``."""
    from .tensor_cores import operand_pointers
    if acc_type.layout != result.layout:
        acc = move_tile(context, builder, acc_type, acc, result.with_dtype(acc_type.dtype))
    a_pointer, b_pointer = operand_pointers(context, builder, [(x_type, x), (y_type, y)],
                                            async_proxy=True)
    (m, k), n = x_type.shape[-2:], y_type.shape[-1]
    warps = result.num_warps
    itemsize = x_type.dtype.itemsize
    columns = min(n, 256)  # a wgmma's N
    # A's rows: 128-byte columns of 128-byte swizzle, or whole rows of 64 bytes (64-byte
    # swizzle, 8 rows of 64 bytes to an atom)
    a_row_bytes = min(k * itemsize, 128)
    a_swizzle, a_atom = (SWIZZLE_128B, ATOM_BYTES) if a_row_bytes == 128 else \
        (SWIZZLE_64B, ATOM_BYTES // 2)
    row_elements = a_row_bytes // itemsize
    b_row_elements = 128 // itemsize
    _, warp = thread_ids(builder)
    group = builder.lshr(warp, I32(2))
    a_base = builder.ptrtoint(a_pointer, I32)
    b_base = builder.ptrtoint(b_pointer, I32)
    registers = [builder.extract_value(acc, r) for r in range(result.registers)]
    per_slice = n // 2  # a thread's registers of one 64-row slice
    _asm(builder, "wgmma.fence.sync.aligned;")
    for i in range(m // (16 * warps)):
        row0 = builder.add(builder.mul(group, I32(64)), I32(16 * warps * i))
        a_row = builder.add(a_base, builder.mul(row0, I32(a_row_bytes)))
        for chunk in range(n // columns):
            first = i * per_slice + chunk * (columns // 2)
            fragment = registers[first:first + columns // 2]
            for step in range(k // 16):
                # A: the step's 32 bytes in its column block of M rows
                column = step * 16
                a_address = builder.add(a_row, I32((column // row_elements) * m * a_row_bytes +
                                                   (column % row_elements) * itemsize))
                # B: 16 rows of 128 bytes in each 64-column block (k * 128 bytes apart)
                b_address = builder.add(b_base, I32((chunk * columns // b_row_elements) * k *
                                                    128 + step * 16 * 128))
                fragment = _wgmma(builder, instruction(x_type, y_type, acc_type), fragment,
                                  _descriptor(builder, a_address, 16, a_atom, a_swizzle),
                                  _descriptor(builder, b_address, k * 128, ATOM_BYTES,
                                              SWIZZLE_128B))
            registers[first:first + columns // 2] = fragment
    _asm(builder, "wgmma.commit_group.sync.aligned;")
    # operands of a pipeline stay in their stage until the next iteration's copies start
    # (after a barrier): the product may run on while this iteration's copies are issued,
    # waited for once the next one is started (the loop ends by waiting for it); otherwise
    # their shared memory may be written again once the barrier that follows passes
    from .staged_loads import PRODUCTS_IN_FLIGHT, StagedTileType
    in_flight = isinstance(x_type, StagedTileType) and isinstance(y_type, StagedTileType) \
        and x_type.pipeline_id == y_type.pipeline_id \
        and x_type.pipeline_id in PRODUCTS_IN_FLIGHT
    _asm(builder, f"wgmma.wait_group.sync.aligned {1 if in_flight else 0};")
    return make_tile(context, builder, result, registers)


def _descriptor(builder, address, leading_bytes, stride_bytes, swizzle):
    """A ``wgmma`` matrix descriptor: start address, leading and stride byte offsets (all in
    16-byte units) and the swizzle mode."""
    start = builder.zext(builder.lshr(builder.and_(address, I32(0x3FFFF)), I32(4)), I64)
    constant = ((leading_bytes >> 4) << 16) | ((stride_bytes >> 4) << 32) | (swizzle << 62)
    return builder.or_(start, I64(constant))


def _wgmma(builder, text, fragment, a_descriptor, b_descriptor):
    """One ``wgmma`` adding to ``fragment``: A K-major, B N-major (transposed), scales 1."""
    count = len(fragment)
    outputs = ",".join(f"${i}" for i in range(count))
    asm = (f"{{ .reg .pred p; setp.ne.b32 p, ${count + 2}, 0; "
           f"{text} {{{outputs}}}, ${count}, ${count + 1}, p, 1, 1, 0, 1; }}")
    constraints = ",".join(["=f"] * count + ["l", "l", "r"] + [str(i) for i in range(count)])
    result_type = ir.LiteralStructType([fragment[0].type] * count)
    out = builder.asm(ir.FunctionType(result_type, [I64, I64, I32] + [f.type for f in fragment]),
                      asm, constraints + ",~{memory}",
                      [a_descriptor, b_descriptor, I32(1)] + fragment, side_effect=True)
    return [builder.extract_value(out, i) for i in range(count)]


def _asm(builder, text):
    builder.asm(ir.FunctionType(ir.VoidType(), []), text, "~{memory}", [], side_effect=True)
