"""Every PTX instruction the compiler writes as inline assembly, and the one helper that emits
them (:func:`emit`).

NVVM has no intrinsic for these (tensor-core products, shared-memory matrix loads,
asynchronous copies, the tensor memory accelerator, ``mbarrier``, conversions and arithmetic
with a chosen rounding, the approximate math of the special function units), so they are
written as ``ir.InlineAsm``. Keeping their text here, one function per instruction family,
lets :func:`examples` list every form the compiler can write, and a test assembles each of
them for sm_80 and sm_90 on the CPU (``tests/test_asm.py``).

An :class:`Asm` is the text, the constraints (``=`` outputs, then inputs, then clobbers) and
whether the instruction has a side effect (a read of shared memory, a copy, a wait: kept in
program order; pure arithmetic is not, so LLVM may move or merge it).

>>> from numba_tile.compiler.lowering import asm
>>> asm.convert("rn", "f16", "f32", "h", "f")
Asm(text='cvt.rn.f16.f32 $0, $1;', constraints='=h,f', side_effect=False)
>>> asm.wgmma_wait(1).text
'wgmma.wait_group.sync.aligned 1;'
"""

from llvmlite import ir
from typing import NamedTuple

# the name of the kernel parameter of tensor map ``i`` (declared by
# :func:`~numba_tile.compiler.ptx_rewrites.declare_tensor_map_parameters`)
TENSOR_MAP_PARAMETER = "numba_tile_tensor_map_"


class Asm(NamedTuple):
    """One inline-assembly instruction: text, constraints, side effect."""

    text: str
    constraints: str = ""
    side_effect: bool = True


def emit(builder, instruction, args=(), result=ir.VoidType()):
    """Emit ``instruction`` with operands ``args`` (LLVM values); its result of type
    ``result`` (a literal structure for several outputs)."""
    return builder.asm(ir.FunctionType(result, [a.type for a in args]), instruction.text,
                       instruction.constraints, list(args),
                       side_effect=instruction.side_effect)


def _operands(first, count):
    return ",".join(f"${first + i}" for i in range(count))


# -- arithmetic and conversions with a chosen rounding (pure) ---------------------------------
def convert(rounding, to, source, to_register, source_register):
    """``cvt[.rounding].to.source``: ``rounding`` None for an exact conversion."""
    mode = f".{rounding}" if rounding else ""
    return Asm(f"cvt{mode}.{to}.{source} $0, $1;", f"={to_register},{source_register}",
               False)


def float_binary(op, rounding, ptx_type, register, flush_to_zero=False):
    """``add``/``sub``/``mul``/``div`` (``op``) with a rounding (``rn``, ``rz``, ``rm``,
    ``rp``, ``approx``, ``full``), flushing subnormals with ``flush_to_zero``."""
    ftz = ".ftz" if flush_to_zero else ""
    return Asm(f"{op}.{rounding}{ftz}.{ptx_type} $0, $1, $2;",
               f"={register},{register},{register}", False)


def float_minmax(op, ptx_type, register):
    """``min``/``max``: a NaN operand loses to the other."""
    return Asm(f"{op}.{ptx_type} $0, $1, $2;", f"={register},{register},{register}", False)


def float_unary(instruction, register):
    """A one-operand float instruction given whole: ``sqrt.rz.f32``, ``ex2.approx.ftz.f32``
    ..."""
    return Asm(f"{instruction} $0, $1;", f"={register},{register}", False)


# ``prmt`` with the identity selector: the value unchanged, through an instruction ptxas does
# not see through. ptxas 13.0 (nvJitLink, the toolkit and the driver alike) drops the negation
# of one operand of an integer max/min reduction over negated values on sm_90
# (``ct.max(-t)`` of an int32 tile); passing the operands through this keeps it.
IDENTITY_PERMUTE = Asm("prmt.b32 $0, $1, 0, 0x3210;", "=r,r", False)


# -- shared memory -----------------------------------------------------------------------------
DYNAMIC_SHARED_SIZE = Asm("mov.u32 $0, %dynamic_smem_size;", "=r", False)
# zero, known only at run time (a block's shared memory is far below 2^31 bytes): a
# ``wgmma`` whose keep predicate is this reads its accumulator registers as far as ptxas can
# tell, so it waits for the threads' last reads of them (see ``wgmma._block_sums_start``)
ZERO_UNKNOWN_TO_PTXAS = Asm("mov.u32 $0, %dynamic_smem_size; shr.u32 $0, $0, 31;", "=r",
                            False)
# writes to shared memory made visible to the asynchronous proxy (wgmma, the TMA)
FENCE_ASYNC_PROXY = Asm("fence.proxy.async.shared::cta;", "~{memory}")
# global memory that an acquire made visible (written by other blocks' plain stores) made
# visible to the TMA's later copies too
FENCE_ASYNC_PROXY_GLOBAL = Asm("fence.proxy.async.global;", "~{memory}")
# programmatic dependent launch (sm_90+); memory clobbers: no load moves above the wait, no
# store below the release
GRID_DEPENDENCY_WAIT = Asm("griddepcontrol.wait;", "~{memory}")
GRID_DEPENDENCY_LAUNCH_DEPENDENTS = Asm("griddepcontrol.launch_dependents;", "~{memory}")
# the thread ends (a producer warpgroup's threads: lowering.warp_roles)
THREAD_EXIT = Asm("exit;", "~{memory}")
# named barrier $0 of $1 threads: wait there, or arrive without waiting (the consumer
# warpgroups' turns: lowering.warp_roles)
NAMED_BARRIER_SYNC = Asm("bar.sync $0, $1;", "r,r,~{memory}")
NAMED_BARRIER_ARRIVE = Asm("bar.arrive $0, $1;", "r,r,~{memory}")


def set_max_registers(change, count):
    """``setmaxnreg.<change>``: the warpgroup's threads give back registers down to
    ``count`` (``change`` "dec") or take them up to ``count`` ("inc"); sm_90a.

    >>> from numba_tile.compiler.lowering import asm
    >>> asm.set_max_registers("inc", 240).text
    'setmaxnreg.inc.sync.aligned.u32 240;'
    """
    return Asm(f"setmaxnreg.{change}.sync.aligned.u32 {count};", "~{memory}")


def load_shared(ptx_type, register):
    """``ld.shared`` of one element, in program order (a 64-bit address)."""
    return Asm(f"ld.shared.{ptx_type} $0, [$1];", f"={register},l,~{{memory}}")


def ldmatrix(shape):
    """``ldmatrix`` of 2 (``x2...``) or 4 (``x4...``) 8 x 8 matrices of 2-byte elements
    (``shape`` such as ``x4`` or ``x2.trans``): a register for each."""
    count = 4 if shape.startswith("x4") else 2
    return Asm(f"ldmatrix.sync.aligned.m8n8.{shape}.shared.b16 {{{_operands(0, count)}}}, "
               f"[${count}];", ",".join(["=r"] * count) + ",l,~{memory}")


# -- mma.sync -------------------------------------------------------------------------------
def mma_sync(instruction, a_count, b_count, c_count, letter):
    """``mma.sync`` (``instruction``: shape and types) on ``a_count`` + ``b_count`` input
    registers and ``c_count`` accumulators of constraint ``letter`` (``f``, ``r``, ``d``)."""
    operand_letter = "d" if letter == "d" else "r"  # float64 inputs are float64 registers
    first_a, first_b = c_count, c_count + a_count
    first_c = first_b + b_count
    text = f"{instruction} {{{_operands(0, c_count)}}}, {{{_operands(first_a, a_count)}}}, " \
           f"{{{_operands(first_b, b_count)}}}, {{{_operands(first_c, c_count)}}};"
    constraints = ",".join([f"={letter}"] * c_count + [operand_letter] * (a_count + b_count) +
                           [letter] * c_count)
    return Asm(text, constraints, False)


# -- cp.async -------------------------------------------------------------------------------
def cp_async(nbytes):
    """``cp.async`` of ``nbytes`` from global (``$1``) to shared memory (``$0``); ``$2`` bytes
    are read, the rest zero-filled."""
    return Asm(f"cp.async.cg.shared.global [$0], [$1], {nbytes}, $2;", "r,l,r,~{memory}")


CP_ASYNC_COMMIT = Asm("cp.async.commit_group;", "~{memory}")


def cp_async_wait(pending):
    """Wait until at most ``pending`` groups of copies are still in flight."""
    return Asm(f"cp.async.wait_group {pending};", "~{memory}")


# -- stores ---------------------------------------------------------------------------------
def predicated_store(words, word_bits):
    """``st.global`` of one word or a vector of ``words`` words of ``word_bits`` bits (``$2``
    on) at the global address ``$0``, where the 32-bit flag ``$1`` is not zero. A predicated
    instruction instead of a branch around a plain store: ptxas schedules a tile's stores
    together (a branch each kept them apart, each waiting for the last one's register)."""
    letter = {16: "h", 32: "r", 64: "l"}[word_bits]
    shape = "" if words == 1 else f".v{words}"
    values = "$2" if words == 1 else "{" + _operands(2, words) + "}"
    return Asm(f"{{ .reg .pred p; setp.ne.b32 p, $1, 0; "
               f"@p st.global{shape}.u{word_bits} [$0], {values}; }}",
               ",".join(["l", "r"] + [letter] * words) + ",~{memory}")


# -- mbarrier and the tensor memory accelerator -------------------------------------------
MBARRIER_INIT = Asm("mbarrier.init.shared::cta.b64 [$0], 1;", "r,~{memory}")
MBARRIER_INIT_COUNT = Asm("mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}")
MBARRIER_ARRIVE = Asm("mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}")
MBARRIER_INIT_FENCE = Asm("fence.mbarrier_init.release.cluster;", "~{memory}")
MBARRIER_EXPECT_BYTES = Asm("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
                            "r,r,~{memory}")
MBARRIER_TRY_WAIT = Asm("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], "
                        "$2; selp.u32 $0, 1, 0, p; }", "=r,r,r,~{memory}")


def tensor_copy(slot, ndim):
    """The TMA's copy of one box of tensor map ``slot`` (a kernel parameter) at ``ndim``
    coordinates into shared memory (``$0``), completing on the ``mbarrier`` at ``$1``."""
    places = ", ".join(f"${2 + i}" for i in range(ndim))
    return Asm(f"{{ .reg .b64 map; mov.b64 map, {TENSOR_MAP_PARAMETER}{slot}; "
               f"cvta.param.u64 map, map; "
               f"cp.async.bulk.tensor.{ndim}d.shared::cluster.global.tile"
               f".mbarrier::complete_tx::bytes [$0], [map, {{{places}}}], [$1]; }}",
               ",".join(["r"] * (2 + ndim)) + ",~{memory}")


# -- wgmma ------------------------------------------------------------------------------------
WGMMA_FENCE = Asm("wgmma.fence.sync.aligned;", "~{memory}")
WGMMA_COMMIT = Asm("wgmma.commit_group.sync.aligned;", "~{memory}")


def wgmma_wait(pending, registers=()):
    """Wait until at most ``pending`` product groups still run; ``registers`` (constraint
    letters) pass through the wait, so that nothing reading them moves before it."""
    ties = [f"={c}" for c in registers] + [str(i) for i in range(len(registers))]
    return Asm(f"wgmma.wait_group.sync.aligned {pending};", ",".join(ties + ["~{memory}"]))


def wgmma_wait_and_add(pending, count):
    """:func:`wgmma_wait`, then ``count`` float32 additions in the same statement: operands
    ``count..2*count-1`` (the accumulators, tied to the outputs) plus ``2*count..`` (the
    group's sums). One statement, because LLVM sinks plain additions towards their use in
    the next iteration, past the next product's ``wgmma``, where both groups of sums then
    stay live at once (float8 128 x 256 tiles spilled so).

    >>> from numba_tile.compiler.lowering import asm
    >>> instruction = asm.wgmma_wait_and_add(0, 1)
    >>> instruction.text, instruction.constraints
    ('wgmma.wait_group.sync.aligned 0; add.f32 $0, $0, $2;', '=f,0,f,~{memory}')
    """
    adds = " ".join(f"add.f32 ${i}, ${i}, ${2 * count + i};" for i in range(count))
    constraints = ["=f"] * count + [str(i) for i in range(count)] + ["f"] * count
    return Asm(f"wgmma.wait_group.sync.aligned {pending}; {adds}",
               ",".join(constraints + ["~{memory}"]))


def wgmma(instruction, count, a_registers, itemsize, k_major_b, integer=False):
    """One ``wgmma`` (``instruction``: shape and types) adding to ``count`` float32 (int32:
    ``integer``) accumulators: A from a descriptor, or from ``a_registers`` registers (0:
    descriptor); then B's descriptor and the predicate that keeps the accumulators; scales 1
    (floats only), and the layouts of A and B where the inputs have them (2-byte inputs)."""
    outputs = _operands(0, count)
    after_a = count + max(a_registers, 1)
    if a_registers:
        a_text = "{" + _operands(count, a_registers) + "}"
        a_constraints = ["r"] * a_registers
        # A in registers: B's layout only (2-byte inputs)
        layouts = f", {0 if k_major_b else 1}" if itemsize == 2 else ""
    else:
        a_text, a_constraints = f"${count}", ["l"]
        layouts = "" if itemsize != 2 else f", 0, {0 if k_major_b else 1}"
    scales = "" if integer else ", 1, 1"
    text = (f"{{ .reg .pred p; setp.ne.b32 p, ${after_a + 1}, 0; "
            f"{instruction} {{{outputs}}}, {a_text}, ${after_a}, p{scales}{layouts}; }}")
    constraints = ",".join(["=r" if integer else "=f"] * count + a_constraints + ["l", "r"] +
                           [str(i) for i in range(count)])
    return Asm(text, constraints + ",~{memory}")


# -- atomics (side effects: kept in program order, memory clobbered) --------------------------
def atomic(op, order, scope, ptx_type, register):
    """``atom.<order>.<scope>.<op>.<type> old, [address], operand``: ``op`` one of ``add``,
    ``exch``, ``max``, ``min``, ``and``, ``or``, ``xor``, the address generic (an ``l``
    operand). Where the old value is not used, the PTX is rewritten to ``red``
    (:mod:`~numba_tile.compiler.ptx_rewrites`)."""
    noftz = ".noftz" if ptx_type in ("f16", "bf16") else ""
    return Asm(f"atom.{order}.{scope}.{op}{noftz}.{ptx_type} $0, [$1], $2;",
               f"={register},l,{register},~{{memory}}")


def atomic_cas(order, scope, ptx_type, register):
    """``atom.<order>.<scope>.cas.<type> old, [address], expected, desired``."""
    return Asm(f"atom.{order}.{scope}.cas.{ptx_type} $0, [$1], $2, $3;",
               f"={register},l,{register},{register},~{{memory}}")


def atomic_add_vector(order, scope, width):
    """``atom.<order>.<scope>.global.add.v<width>.f32``: ``width`` (2 or 4) consecutive
    float32 elements at once, at a global address aligned to their size (sm_90); the old
    values."""
    return Asm(f"{{ .reg .b64 ga; cvta.to.global.u64 ga, ${width}; "
               f"atom.{order}.{scope}.global.add.v{width}.f32 {{{_operands(0, width)}}}, "
               f"[ga], {{{_operands(width + 1, width)}}}; }}",
               ",".join(["=f"] * width + ["l"] + ["f"] * width + ["~{memory}"]))


# the register letter of each PTX type an atomic takes
ATOMIC_REGISTERS = {"u32": "r", "s32": "r", "b32": "r", "u64": "l", "s64": "l", "b64": "l",
                    "f32": "f", "f64": "d", "f16": "h", "bf16": "h"}


def examples():
    """``(instruction, argument types, result type, minimum compute capability)`` for every
    form the compiler writes: what the assembler test compiles."""
    f32, f64 = ir.FloatType(), ir.DoubleType()
    i16, i32, i64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
    registers = {"h": i16, "f": f32, "d": f64, "r": i32, "l": i64}
    found = []

    def add(instruction, cc=(8, 0)):
        parts = instruction.constraints.split(",")
        outputs = [registers[p[1:]] for p in parts if p.startswith("=")]
        inputs = [registers.get(p, None) or (outputs[int(p)] if p.isdigit() else None)
                  for p in parts if not p.startswith(("=", "~"))]
        result = ir.VoidType() if not outputs else outputs[0] if len(outputs) == 1 else \
            ir.LiteralStructType(outputs)
        found.append((instruction, inputs, result, cc))

    floats = (("f32", "f"), ("f64", "d"))
    add(IDENTITY_PERMUTE)
    for words, bits in ((1, 16), (1, 32), (1, 64), (2, 32), (4, 32), (2, 64)):
        add(predicated_store(words, bits))
    for rounding in ("rn", "rz", "rm", "rp"):
        for ptx_type, register in floats:
            for op in ("add", "sub", "mul", "div"):
                add(float_binary(op, rounding, ptx_type, register))
            add(float_unary(f"sqrt.{rounding}.{ptx_type}", register))
        for op in ("add", "sub", "mul", "div"):
            add(float_binary(op, rounding, "f32", "f", flush_to_zero=True))
        add(convert(rounding, "f16", "f32", "h", "f"))
        add(convert(rounding, "f16", "f64", "h", "d"))
        add(convert(rounding, "f32", "f64", "f", "d"))
        for integer, register in (("s16", "h"), ("u16", "h"), ("s32", "r"), ("u32", "r"),
                                  ("s64", "l"), ("u64", "l")):
            for ptx_type, float_register in floats + (("f16", "h"),):
                add(convert(rounding, ptx_type, integer, float_register, register))
    for rounding in ("approx", "full"):
        add(float_binary("div", rounding, "f32", "f"))
        add(float_binary("div", rounding, "f32", "f", flush_to_zero=True))
    for rounding in ("rzi", "rmi", "rpi", "rni"):
        for bits, register in ((8, "h"), (16, "h"), (32, "r"), (64, "l")):
            for kind in "su":
                for ptx_type, float_register in floats:
                    add(convert(rounding, f"{kind}{bits}", ptx_type, register,
                                float_register))
    add(convert(None, "f32", "f16", "f", "h"))
    add(convert("rni", "f32", "f32", "f", "f"))
    add(convert("rni", "f64", "f64", "d", "d"))
    for op in ("min", "max"):
        for ptx_type, register in floats:
            add(float_minmax(op, ptx_type, register))
    for instruction in ("sqrt.approx.f32", "rsqrt.approx.f32", "tanh.approx.f32",
                        "sin.approx.f32", "cos.approx.f32", "ex2.approx.f32",
                        "lg2.approx.f32", "ex2.approx.ftz.f32"):
        add(float_unary(instruction, "f"))
    add(DYNAMIC_SHARED_SIZE)
    add(ZERO_UNKNOWN_TO_PTXAS)
    for order in ("relaxed", "acquire", "release", "acq_rel"):
        for scope in ("cta", "gpu", "sys"):
            add(atomic("add", order, scope, "u32", "r"))
            add(atomic_cas(order, scope, "b64", "l"))
        add(atomic("add", order, "cluster", "u32", "r"), (9, 0))
    for op, types_ in (("add", ("u32", "u64", "f32", "f64", "f16")), ("exch", ("b32", "b64")),
                       ("max", ("s32", "u32", "s64", "u64")), ("min", ("s32", "u64")),
                       ("and", ("b32", "b64")), ("or", ("b32",)), ("xor", ("b64",))):
        for ptx_type in types_:
            add(atomic(op, "acq_rel", "gpu", ptx_type, ATOMIC_REGISTERS[ptx_type]))
    add(atomic("add", "relaxed", "gpu", "bf16", "h"), (9, 0))
    for order, scope, width in (("relaxed", "gpu", 4), ("acq_rel", "sys", 2),
                                ("release", "cta", 4)):
        add(atomic_add_vector(order, scope, width), (9, 0))
    add(atomic_cas("acq_rel", "gpu", "b32", "r"))
    add(FENCE_ASYNC_PROXY, (9, 0))
    add(FENCE_ASYNC_PROXY_GLOBAL, (9, 0))
    add(GRID_DEPENDENCY_WAIT, (9, 0))
    add(GRID_DEPENDENCY_LAUNCH_DEPENDENTS, (9, 0))
    add(THREAD_EXIT)
    add(NAMED_BARRIER_SYNC)
    add(NAMED_BARRIER_ARRIVE)
    add(set_max_registers("dec", 24), (9, 0))
    add(set_max_registers("inc", 240), (9, 0))
    for ptx_type, register in (("u8", "r"), ("b32", "r"), ("f64", "d")):
        add(load_shared(ptx_type, register))
    for shape in ("x4", "x4.trans", "x2", "x2.trans"):
        add(ldmatrix(shape))
    for instruction, a, b, c, letter in (
            ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, "f"),
            ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, "r"),
            ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, "f"),
            ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, "f"),
            ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, "d"),
            ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 4, 2, 4, "r"),
            ("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", 4, 2, 4, "r"),
            ("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32", 4, 2, 4, "r"),
            ("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", 4, 2, 4, "r")):
        add(mma_sync(instruction, a, b, c, letter))
    for kind in ("e4m3.e4m3", "e5m2.e5m2"):
        add(mma_sync(f"mma.sync.aligned.m16n8k32.row.col.f32.{kind}.f32", 4, 2, 4, "f"),
            (8, 9))
    add(cp_async(16))
    add(CP_ASYNC_COMMIT)
    add(cp_async_wait(0))
    add(cp_async_wait(2))
    for instruction in (MBARRIER_INIT, MBARRIER_INIT_COUNT, MBARRIER_ARRIVE,
                        MBARRIER_INIT_FENCE, MBARRIER_EXPECT_BYTES, MBARRIER_TRY_WAIT,
                        WGMMA_FENCE, WGMMA_COMMIT, wgmma_wait(0),
                        wgmma_wait(1, "ff"), wgmma_wait(3, "rhd"),
                        wgmma_wait_and_add(1, 2)):
        add(instruction, (9, 0))
    for ndim in (2, 3, 4, 5):
        add(tensor_copy(0, ndim), (9, 0))
    for kind, itemsize in (("f32.f16.f16", 2), ("f32.bf16.bf16", 2), ("f32.tf32.tf32", 4),
                           ("f32.e4m3.e4m3", 1), ("f32.e5m2.e5m2", 1), ("s32.s8.s8", 1),
                           ("s32.u8.u8", 1)):
        k = 32 // itemsize
        for a_registers in ((0, 4) if itemsize in (2, 4) else (0,)):
            for k_major_b in (True, False) if itemsize == 2 else (True,):
                add(wgmma(f"wgmma.mma_async.sync.aligned.m64n64k{k}.{kind}", 32, a_registers,
                          itemsize, k_major_b, kind.startswith("s32")), (9, 0))
    return found
