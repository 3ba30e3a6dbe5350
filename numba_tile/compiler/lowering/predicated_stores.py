"""Stores that happen only where a condition holds, written without a branch.

A tile's store checks each of its thread's vectors against the array's bounds. Written as
``if inside: store``, every vector gets a branch of its own, and ptxas keeps the stores
apart: each one waits until the last one has read its register before the next value is
computed into it (the head-dim-128 attention kernel spent 5.1% of its warps' stall samples
in its 32 stores a thread so, on an H200). A predicated ``st.global`` instead is
one instruction that ptxas schedules with the others.
"""

from llvmlite import ir

from . import asm


def store_where(builder, value, pointer, condition, align):
    """Store ``value`` at ``pointer`` (global memory, aligned to ``align`` bytes, the
    value's size for a vector) where the ``i1`` ``condition`` is true.

    >>> from llvmlite import ir
    >>> from numba_tile.compiler.lowering.predicated_stores import store_where
    >>> module = ir.Module()
    >>> f32 = ir.FloatType()
    >>> function = ir.Function(module, ir.FunctionType(ir.VoidType(), [
    ...     f32, f32.as_pointer(), ir.IntType(1)]), "kernel")
    >>> builder = ir.IRBuilder(function.append_basic_block())
    >>> store_where(builder, *function.args, align=4)
    >>> "@p st.global.u32" in str(module)
    True
    """
    size = _size(value.type)
    element = value.type.element if isinstance(value.type, ir.VectorType) else value.type
    # words of 64 bits for 64-bit elements, else of 32 (16 for a lone 2-byte value)
    bits = 64 if _size(element) == 8 else 16 if size == 2 else 32
    words = size * 8 // bits
    if size not in (2, 4, 8, 16) or words > 4 or align < size:  # vectors need alignment
        with builder.if_then(condition, likely=True):
            builder.store(value, pointer, align=align)
        return
    word = ir.IntType(bits)
    packed = builder.bitcast(value, word if words == 1 else ir.VectorType(word, words))
    parts = [packed] if words == 1 else [builder.extract_element(packed, ir.IntType(32)(i))
                                         for i in range(words)]
    if pointer.type.addrspace != 1:
        pointer = builder.addrspacecast(pointer, pointer.type.pointee.as_pointer(1))
    address = builder.ptrtoint(pointer, ir.IntType(64))
    flag = builder.zext(condition, ir.IntType(32))
    asm.emit(builder, asm.predicated_store(words, bits), [address, flag, *parts])


def _size(value_type):
    """Bytes of a stored value's type (0 for a type this module does not store)."""
    if isinstance(value_type, ir.VectorType):
        return value_type.count * _size(value_type.element)
    if isinstance(value_type, ir.IntType):
        return value_type.width // 8 if value_type.width % 8 == 0 else 0
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}.get(type(value_type), 0)
