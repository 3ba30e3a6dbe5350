"""Every inline assembly instruction the compiler writes (``numba_tile.compiler.lowering.asm``)
assembles: each form ``asm.examples()`` lists is emitted in a kernel of its own, translated by
NVVM and assembled by ptxas (through nvJitLink) for sm_80 and sm_90a, on the CPU."""

import re

import pytest
from llvmlite import ir

from numba_tile.compiler.lowering import asm
from numba_tile.compiler.ptx_rewrites import declare_tensor_map_parameters
from numba_tile.compiler.kernel_compiler import link_cubin

nvvm = pytest.importorskip("numba.cuda.cudadrv.nvvm")
nvjitlink = pytest.importorskip("cuda.bindings.nvjitlink")

TARGETS = {"sm_80": ((8, 0), "compute_80"), "sm_90": ((9, 0), "compute_90a")}


def _kernels(examples):
    """An LLVM module with one kernel per example: its operands are the kernel's parameters
    and its results are stored through a pointer, so that nothing is optimized away."""
    module = ir.Module("asm_examples")
    module.triple = "nvptx64-nvidia-cuda"
    module.data_layout = nvvm.NVVM().data_layout
    names = []
    for i, (instruction, inputs, result, _) in enumerate(examples):
        returns = not isinstance(result, ir.VoidType)
        parameters = list(inputs) + ([result.as_pointer()] if returns else [])
        function = ir.Function(module, ir.FunctionType(ir.VoidType(), parameters), f"asm_{i}")
        builder = ir.IRBuilder(function.append_basic_block())
        value = asm.emit(builder, instruction, list(function.args[:len(inputs)]), result)
        if returns:
            builder.store(value, function.args[-1])
        builder.ret_void()
        module.add_named_metadata("nvvm.annotations", module.add_metadata(
            [function, ir.MetaDataString(module, "kernel"), ir.IntType(32)(1)]))
        names.append(function.name)
    nvvm.add_ir_version(module)
    return module, names


def _assemble(examples, arch):
    cc, compute = TARGETS[arch]
    module, names = _kernels(examples)
    ptx = nvvm.compile_ir([str(module)], arch=compute, opt=0).decode().strip("\x00").strip()
    for name, (instruction, *_) in zip(names, examples):
        if asm.TENSOR_MAP_PARAMETER in instruction.text:  # the map the copy names
            ptx = declare_tensor_map_parameters(ptx, name, 1)
    return ptx, link_cubin(ptx, arch)


def _errors(ptx, arch):
    """ptxas' error log for ``ptx``, with the lines it names."""
    target = arch + ("a" if re.search(rf"^\.target {arch}a\b", ptx, re.MULTILINE) else "")
    handle = nvjitlink.create(1, [f"-arch={target}"])
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "asm.ptx")
        nvjitlink.complete(handle)
        return ""
    except nvjitlink.nvJitLinkError:
        log = bytearray(nvjitlink.get_error_log_size(handle))
        nvjitlink.get_error_log(handle, log)
        text = log.decode(errors="replace")
        lines = ptx.splitlines()
        quoted = [lines[int(n) - 1] for n in re.findall(r"line (\d+)", text)
                  if int(n) <= len(lines)]
        return text + "\n".join(quoted)
    finally:
        nvjitlink.destroy(handle)


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_every_instruction_assembles(arch):
    examples = [e for e in asm.examples() if e[3] <= TARGETS[arch][0]]
    ptx, (cubin, _) = _assemble(examples, arch)
    if cubin is None:
        errors = _errors(ptx, arch)
        if not errors:
            pytest.skip("nvJitLink cannot link here (no matching library)")
        pytest.fail(f"ptxas rejects inline assembly for {arch}:\n{errors}")
    # every example is a kernel of its own in the cubin's PTX
    assert ptx.count(".entry asm_") == len(examples)


def test_the_examples_cover_every_instruction_family():
    """Each public instruction of the module appears among the examples."""
    texts = " ".join(instruction.text for instruction, *_ in asm.examples())
    for family in ("cvt.", "div.full", "min.f64", "sqrt.approx", "ex2.approx.ftz", "ld.shared",
                   "ldmatrix", "mma.sync", "cp.async.cg", "cp.async.commit_group",
                   "cp.async.wait_group", "mbarrier.init", "fence.mbarrier_init",
                   "mbarrier.arrive.expect_tx", "mbarrier.try_wait", "cp.async.bulk.tensor",
                   "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "wgmma.mma_async",
                   "%dynamic_smem_size", "fence.proxy.async"):
        assert family in texts, family
