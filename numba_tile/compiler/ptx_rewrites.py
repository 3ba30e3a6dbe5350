"""Rewrites of the PTX text that NVVM writes, before it is linked: atomics whose old values
nothing reads become ``red`` (:func:`unused_atomics_as_reductions`), and the tensor maps that
the TMA's copies name are declared as kernel parameters
(:func:`declare_tensor_map_parameters`).

The lowering writes every read-modify-write atomic as ``atom`` (the ops return the old
values), and only the optimized code shows which of them are never read: a histogram's
``ct.atomic_add(counts, bins, 1)`` whose result is dropped, a ``TiledView.atomic_store_add``.
ptxas keeps such an ``atom`` an ``ATOM`` with its result thrown away; ``red`` is the
instruction made for it (no value comes back to the thread, so it issues without waiting on
a reply). The rewrite is on the PTX text, function by function, where a register that appears
once, as the atom's destination, is unused.

``red`` takes the orders ``relaxed`` and ``release`` only and has no ``exch`` or ``cas``:
other atomics stay as they are.

Each tensor map the launch passes is declared in the PTX text, after the kernel's own
parameters, under the name that the copies' inline assembly reads it by
(:data:`~numba_tile.compiler.lowering.asm.TENSOR_MAP_PARAMETER`).
"""

import re

from .lowering.asm import TENSOR_MAP_PARAMETER
from .planning.tma import MAP_ALIGNMENT, MAP_BYTES

# atom.<order>.<scope>[.global].<op>[.noftz][.v2|.v4].<type> <destination>, [address], ...
_ATOM = re.compile(
    r"\batom(?P<order>\.(?:relaxed|release))(?P<rest>(?:\.\w+)*?\.(?:add|min|max|and|or|xor|"
    r"inc|dec)(?:\.noftz)?(?:\.v[24])?\.\w+)\s+(?P<destination>%\w+|\{[^}]*\}),\s*"
    r"(?P<operands>\[[^\]]*\],[^;]*;)")
# a function of the PTX module: its body is what follows its header up to the next one
_FUNCTION_START = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b", re.M)


def _registers(destination):
    """The registers an atom writes: one, or the braced list of a vector atom's."""
    return [name.strip() for name in destination.strip("{}").split(",")]


def _used_elsewhere(register, body):
    """Whether ``register`` appears in ``body`` more than once (as more than the atom's
    destination)."""
    return len(re.findall(re.escape(register) + r"(?![\w$])", body)) > 1


def _rewrite_function(body):
    def reduction(match):
        if any(_used_elsewhere(r, body) for r in _registers(match["destination"])):
            return match[0]
        return f"red{match['order']}{match['rest']} {match['operands']}"

    return _ATOM.sub(reduction, body)


def unused_atomics_as_reductions(ptx):
    """``ptx`` with each ``atom`` whose old value no instruction reads written as ``red``.

    >>> from numba_tile.compiler.ptx_rewrites import unused_atomics_as_reductions
    >>> print(unused_atomics_as_reductions(
    ...     ".entry k()\\n{\\natom.relaxed.gpu.add.u32 %r1, [%rd1], %r2;\\n"
    ...     "atom.relaxed.gpu.add.u32 %r3, [%rd1], %r2;\\nst.u32 [%rd2], %r3;\\n}"))
    .entry k()
    {
    red.relaxed.gpu.add.u32 [%rd1], %r2;
    atom.relaxed.gpu.add.u32 %r3, [%rd1], %r2;
    st.u32 [%rd2], %r3;
    }
    """
    starts = [m.start() for m in _FUNCTION_START.finditer(ptx)]
    if not starts:
        return ptx
    pieces = [ptx[:starts[0]]]
    for start, end in zip(starts, starts[1:] + [len(ptx)]):
        pieces.append(_rewrite_function(ptx[start:end]))
    return "".join(pieces)


def declare_tensor_map_parameters(ptx, entry, count):
    """``ptx`` with ``count`` tensor-map parameters added after the kernel's own.

    >>> from numba_tile.compiler.ptx_rewrites import declare_tensor_map_parameters
    >>> print(declare_tensor_map_parameters(".visible .entry k(\\n\\t.param .u64 k_0\\n)\\n{",
    ...                                     "k", 1))
    .visible .entry k(
    	.param .u64 k_0,
    	.param .align 64 .b8 numba_tile_tensor_map_0[128]
    )
    {
    """
    if not count:
        return ptx
    match = re.search(rf"\.entry\s+{re.escape(entry)}\s*\(([^)]*)\)", ptx)
    if match is None:
        raise RuntimeError(f"kernel {entry} not found in its PTX")
    own = match.group(1).rstrip()
    added = ",\n".join(f"\t.param .align {MAP_ALIGNMENT} .b8 {TENSOR_MAP_PARAMETER}{i}"
                       f"[{MAP_BYTES}]" for i in range(count))
    parameters = f"{own},\n{added}\n" if own.strip() else f"\n{added}\n"
    return ptx[:match.start(1)] + parameters + ptx[match.end(1):]
