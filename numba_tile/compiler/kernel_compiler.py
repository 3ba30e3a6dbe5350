"""From a kernel and argument types to PTX (and a cubin where a linker is available).

The steps: Numba bytecode and IR, tile typing (:mod:`~numba_tile.compiler.typing`), lowering
(:mod:`~numba_tile.compiler.lowering`) on our contexts, then numba-cuda's kernel fix-up and
NVVM for the target architecture, and the rewrites of the PTX text
(:mod:`~numba_tile.compiler.ptx_rewrites`). What goes wrong on the way reaches the user as a
Tile error (:mod:`~numba_tile.compiler.error_translation`). Works on a machine without a GPU:
NVVM and nvJitLink come from the CUDA wheels.
"""

import collections
import dataclasses
import itertools
import os
import re

from numba.core import types
from numba.cuda import compiler as cuda_compiler
from numba.cuda import utils as cuda_utils
from numba.cuda.core.callconv import CUDACallConv
from numba.cuda.cudadrv import nvvm

from ..source.static_expressions import AsGlobal, AsTileCode
from ..errors import SourceLocation, TileError, TileInternalError, TileSyntaxError
from ..source.user_code import PACKAGE_DIR
from .compile_state import DEFAULT_NUM_WARPS, AddProducer, CompileState, FewerStages, NoProducer, \
    StaticIterState, compiling
from .contexts import contexts
from .error_translation import as_tile_error, kernel_location, locate_in_kernel, \
    name_the_function, without_symbols
from .frontend.device_output import format_specs
from .frontend.helpers import kernel_for_compilation
from .frontend.numba_patches import python_frontend
from .frontend.passes import insert as insert_passes
from .frontend.warps import WarpsChosen
from .ptx_rewrites import declare_tensor_map_parameters, unused_atomics_as_reductions
from .types import ArrayType, PartitionType, run_length_for
from .typing.static_iteration import UnrollAgain


@dataclasses.dataclass(frozen=True)
class KernelPTX:
    """What :func:`compile_to_ptx` makes: the PTX, the kernel's entry name, the bytes of
    dynamic shared memory it launches with, the tensor maps passed after its parameters (the
    :class:`~numba_tile.compiler.planning.tma.TensorMapSpec` of each) and the warps of its
    thread block."""

    ptx: str
    entry: str
    scratch_bytes: int
    tensor_maps: tuple
    num_warps: int
    llvm_ir: str = ""  # (kept where the options ask: CompileOptions.keep_llvm_ir)


class CompiledKernel:
    """A compiled tile kernel: PTX, cubin and the resource report.

    ``registers``, ``spill_bytes`` and ``shared_bytes`` come from the linker's report (0 when
    no cubin could be made), or for a kernel without a cubin because only the driver's
    compile builds it as written (:mod:`.whole_program`), from the driver's where a GPU is
    present; ``num_warps`` is the thread block size in warps (with a producer, more than
    the kernel's tile code runs on).
    """

    def __init__(self, name, arch, ptx, cubin, info_log, num_warps, dynamic_shared_bytes=0,
                 tensor_maps=(), python_name=None):
        self.name = name
        self.python_name = python_name  # (see kernel_name)
        self.arch = arch
        self.ptx = ptx
        self.cubin = cubin
        self.info_log = info_log
        self.num_warps = num_warps
        # two report formats, by linker version (a log may hold both): "ptxas info : Used
        # 11 registers", "N bytes spill stores"; "info : used 11 registers, ..., N stack"
        # (its stack frame, where spills go, is all that one says of them)
        self.registers = _report(info_log, r"[Uu]sed (\d+) registers")
        self.spill_bytes = (_report(info_log, r"(\d+) bytes spill stores")
                            + _report(info_log, r"(\d+) bytes spill loads")) or \
            _report(info_log, r"(\d+) stack,")
        # static shared memory from the linker, plus the scratch buffer the launch asks for
        self.dynamic_shared_bytes = dynamic_shared_bytes
        self.shared_bytes = _report(info_log, r"(\d+) bytes smem") + dynamic_shared_bytes
        # the tensor maps the launch passes after the arguments (tma.TensorMapSpec
        # fields as plain tuples: the disk cache unpickles only plain data)
        self.tensor_maps = tuple(tuple(spec) for spec in tensor_maps)

    @property
    def kernel_name(self):
        """The kernel's Python name, for messages (``name`` is its symbol in the PTX, which
        the launch looks up); the symbol where it was not recorded (an older cache entry).

        >>> from numba_tile.compiler.kernel_compiler import CompiledKernel
        >>> CompiledKernel("_ZN6cudapy1kE", "sm_90", "", None, "", 4, python_name="k").kernel_name
        'k'
        """
        return getattr(self, "python_name", None) or self.name

    def __repr__(self):
        return (f"<CompiledKernel {self.kernel_name} for {self.arch}: {self.registers} "
                f"registers, "
                f"{self.spill_bytes} spill bytes, {self.shared_bytes} bytes shared>")


def _report(log, pattern):
    return max((int(m) for m in re.findall(pattern, log or "")), default=0)


class TileCompiler(cuda_compiler.CUDACompiler):
    """numba-cuda's kernel pipeline plus the passes of tile code, where
    :mod:`.frontend.passes` declares them."""

    def define_pipelines(self):
        managers = super().define_pipelines()
        for manager in managers:
            manager.passes[:] = insert_passes(manager.passes)
            manager._finalized = False
            manager.finalize()
        return managers


#: The GPU architectures numba_tile compiles for (numba-cuda needs 7.5 or later).
ARCHITECTURES = ((7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 1), (10, 3),
                 (11, 0), (12, 0), (12, 1))


def parse_arch(arch):
    """``(major, minor)`` of ``"sm_90"``; a ``ValueError`` that lists the architectures for
    anything else.

    ``sm_90a`` is ``sm_90``: numba_tile compiles compute capability 9.0 to the PTX of
    ``sm_90a`` (:func:`_ptx`). No other architecture-specific target (``sm_100a``) is
    compiled: asking for one is a ``ValueError``, never the generic target in its place.

    >>> from numba_tile.compiler.kernel_compiler import parse_arch
    >>> parse_arch("sm_90"), parse_arch("sm_90a")
    ((9, 0), (9, 0))
    >>> parse_arch("sm_100a")
    Traceback (most recent call last):
    ...
    ValueError: arch 'sm_100a' is an architecture-specific target, which numba_tile does ...
    """
    match = re.fullmatch(r"sm_(\d+)(\d)(a?)", arch) if isinstance(arch, str) else None
    cc = (int(match.group(1)), int(match.group(2))) if match else None
    if cc not in ARCHITECTURES:
        known = ", ".join(f"sm_{major}{minor}" for major, minor in ARCHITECTURES)
        raise ValueError(f"arch {arch!r} is not a GPU architecture numba_tile compiles for; "
                         f"use one of {known}")
    if match.group(3) and cc != _SPECIFIC_ANYWAY:
        raise ValueError(f"arch {arch!r} is an architecture-specific target, which "
                         f"numba_tile does not compile; pass arch='sm_{cc[0]}{cc[1]}' (PTX "
                         f"for every GPU of compute capability {cc[0]}.{cc[1]})")
    return cc


#: the compute capability compiled to its architecture-specific PTX (:func:`_ptx`)
_SPECIFIC_ANYWAY = (9, 0)


# The last few lowered kernels, by signature and architecture: a launch after ct.compile of
# the same signature (or a second compile after an error elsewhere) types and lowers once.
_LOWERED = collections.OrderedDict()
_LOWERED_KEPT = 8


def compile_to_ptx(fn, arg_types, arch, options):
    """Type, lower and translate ``fn`` for ``arg_types`` with ``options`` (a
    :class:`~numba_tile.compiler.compile_options.CompileOptions`): a :class:`KernelPTX`.
    With ``options.num_warps`` None the compiler chooses the warps (:mod:`.frontend.warps`),
    and the result has the warps chosen (the block's, with a producer warp where
    ``warp_specialize`` gave one, :mod:`.frontend.producer_warp`)."""
    cc = parse_arch(arch)
    # the IR depends on the architecture (tensor-core instructions, asynchronous copies,
    # shared memory sizes)
    key = (fn, tuple(arg_types), options, cc)
    try:
        lowered = _LOWERED.get(key)
        if lowered is None:
            lowered = _lower(fn, arg_types, cc, options.num_warps, options.occupancy,
                             options.num_stages, options.warp_specialize, options.opt_level)
            _LOWERED[key] = lowered
            while len(_LOWERED) > _LOWERED_KEPT:
                _LOWERED.popitem(last=False)
        library, entry, scratch_bytes, tensor_maps, chosen_warps = lowered
        ptx = unused_atomics_as_reductions(_ptx(library, cc))
        ptx = declare_tensor_map_parameters(ptx, entry, len(tensor_maps))
    except TileError as error:
        error.loc = user_location(error.loc) or kernel_location(fn)
        name_the_function(error.loc, fn)
        error.message = without_symbols(error.message, fn)
        error.args = (error.message,)
        raise
    except Exception as error:  # what users see is a Tile error, the original chained
        tile_error = as_tile_error(error)
        tile_error.loc = user_location(tile_error.loc) or kernel_location(fn)
        name_the_function(tile_error.loc, fn)
        tile_error.message = without_symbols(tile_error.message, fn)
        tile_error.args = (tile_error.message,)
        raise tile_error from error
    return KernelPTX(ptx, entry, scratch_bytes, tensor_maps, chosen_warps,
                     library.get_llvm_str() if options.keep_llvm_ir else "")


def user_location(loc):
    """``loc``, or where it is in numba_tile's own tile code (``ct.scan``'s body, inlined),
    the innermost of the calls that led there that is the user's, as the interpreter
    locates its errors.

    >>> from numba_tile.errors import SourceLocation
    >>> from numba_tile.compiler.kernel_compiler import user_location
    >>> user_location(SourceLocation("k.py", 3, 4))
    SourceLocation('k.py', 3, 4)
    """
    if loc is None or not _in_package(loc.filename):
        return loc
    frames = list(loc.callers)
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        if not _in_package(frame.filename):
            return SourceLocation(frame.filename, frame.line, frame.col, frame.end_col,
                                  frame.source_line, frame.function, callers=frames[:index])
    return loc


def _in_package(filename):
    return os.path.abspath(filename).startswith(PACKAGE_DIR + os.sep)


def _ptx(library, cc):
    """The library's PTX. Compute capability 9.0 gets sm_90a, the PTX target with Hopper's
    own instructions (``wgmma``): every GPU of compute capability 9.0 runs it."""
    if cc != (9, 0):
        return library.get_asm_str(cc=cc)
    options = dict(library._nvvm_options, arch="compute_90a")
    return nvvm.compile_ir(library.llvm_strs, **options).decode().strip("\x00").strip()


# the most compiles of one kernel that find the items of its static_iter loops in turn
_MOST_UNROLLING_ATTEMPTS = 200


def _flags(cc, opt_level=3):
    """numba-cuda's flags of one compile. Each compile gets its own: numba-cuda's inlining
    of a helper leaves ``enable_ssa`` set as the helper's front end ran, so a compile run
    again with the same flags (warps chosen, static items found) would skip the SSA form
    that the first one had, and decide branches differently."""
    flags = cuda_compiler.CUDAFlags()
    flags.no_compile = True
    flags.no_cpython_wrapper = True
    flags.no_cfunc_wrapper = True
    flags.inline = "never"
    flags.error_model = "numpy"
    flags.compute_capability = cc
    flags.nvvm_options = {"opt": opt_level, "arch": f"compute_{cc[0]}{cc[1]}"}
    return flags


def _lower(fn, arg_types, cc, num_warps, occupancy=None, num_stages=None,
           warp_specialize=None, opt_level=3):
    """``(code library, entry name, scratch bytes)`` of the kernel, finalized."""
    typing_context, target_context = contexts()
    as_code, static_globals, static_values = set(), {}, {}
    static_iter = StaticIterState()
    warps_open = num_warps is None
    num_warps = num_warps or DEFAULT_NUM_WARPS
    stages_fill_shared = True
    producer_split = False  # (where warp_specialize is None: see CompileState.producer_split)
    # once more for each static_eval compiled as code or as a global function, for the
    # static_iter loops whose items the typing found, and with the warps the products need
    for attempt in itertools.count():
        compilation = CompileState(
            target=cc, num_warps=num_warps, num_stages=num_stages,
            warp_specialize=warp_specialize, occupancy=occupancy,
            default_run=run_length_for([t.dtype for t in arg_types
                                        if isinstance(t, (ArrayType, PartitionType))]),
            warps_open=warps_open, stages_fill_shared=stages_fill_shared,
            producer_split=producer_split)
        compilation.static_as_code, compilation.static_values = as_code, static_values
        compilation.static_globals = static_globals
        compilation.static_iter = static_iter
        try:
            with compiling(compilation), cuda_utils.numba_target_override(), \
                    format_specs(), python_frontend():
                result = cuda_compiler.compile_extra(
                    typingctx=typing_context, targetctx=target_context,
                    func=kernel_for_compilation(fn),
                    args=tuple(arg_types), return_type=None, flags=_flags(cc, opt_level),
                    locals={},
                    pipeline_class=TileCompiler,
                    call_conv=CUDACallConv(target_context), abi_info={})
            break
        except AsTileCode as again:
            as_code.add(again.key)
        except AsGlobal as again:
            static_globals[again.key] = again.value
        except WarpsChosen as again:
            num_warps, warps_open = again.num_warps, False
        except UnrollAgain:
            if attempt == _MOST_UNROLLING_ATTEMPTS:
                raise TileInternalError("The items of the kernel's static_iter loops keep "
                                        "changing from one compile to the next") from None
        except Exception as error:
            if stages_fill_shared and FewerStages.behind(error):
                stages_fill_shared = False  # compiled again, the stages leaving room
                continue
            if warp_specialize is None and AddProducer.behind(error):
                producer_split = True  # compiled again, with the producer's split
                continue
            if warp_specialize is None and NoProducer.behind(error):
                warp_specialize = False  # compiled again, without the producer's split
                continue
            if isinstance(error, TileError) and error.loc is None:
                error.loc = locate_in_kernel(error)
            raise
    if result.signature.return_type not in (types.none, types.void):
        # (the kernel's source check finds a `return value` first, as the interpreter does)
        raise TileSyntaxError("Tile kernels cannot return values")
    library = result.library
    entry = result.fndesc.llvm_func_name
    kernel = library.get_function(entry)
    library._entry_name = entry
    cuda_compiler.kernel_fixup(kernel, False)
    # (a producer, frontend.producer_warp, adds warps to the tile code's)
    block_warps = num_warps + compilation.producer_warps
    if compilation.register_split:
        occupancy = 1  # ptxas then knows the registers at the start: setmaxnreg counts them
    elif occupancy:
        # a hint: more blocks than the shared memory holds would only cost registers
        # (128 x 128 attention tiles at head dim 128 spilled 3 KiB a thread for a second
        # block that never fit)
        occupancy = max(1, min(occupancy, compilation.shared.blocks_per_multiprocessor()))
    nvvm.set_launch_bounds(kernel, (32 * block_warps, occupancy) if occupancy else
                           32 * block_warps)
    library.finalize()
    return (library, entry, compilation.shared.dynamic_bytes, tuple(compilation.tensor_maps),
            block_warps)


def link_cubin(ptx, arch, opt_level=3):
    """``(cubin, info_log)`` from nvJitLink (ptxas at ``opt_level``), or ``(None, "")``
    where it is unavailable."""
    try:
        from cuda.bindings import nvjitlink  # (an optional dependency: the cu12/cu13 extras)
    except ImportError:
        return None, ""
    if re.search(rf"^\.target {arch}a\b", ptx, re.MULTILINE):
        arch += "a"  # PTX for the architecture's own features links only for it
    try:
        handle = nvjitlink.create(3, [f"-arch={arch}", "-verbose", f"-O{opt_level}"])
    except Exception:  # no usable libnvJitLink (a CUDA_HOME of another toolkit, ...)
        return None, ""
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
        size = nvjitlink.get_linked_cubin_size(handle)
        cubin = bytearray(size)
        nvjitlink.get_linked_cubin(handle, cubin)
        log_size = nvjitlink.get_info_log_size(handle)
        log = bytearray(log_size)
        nvjitlink.get_info_log(handle, log)
        return bytes(cubin), log.decode(errors="replace").rstrip("\x00")
    except nvjitlink.nvJitLinkError:
        return None, ""  # the linker is there but cannot work here (no matching library)
    finally:
        nvjitlink.destroy(handle)
