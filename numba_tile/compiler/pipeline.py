"""From a kernel and argument types to PTX (and a cubin where a linker is available).

The steps: Numba bytecode and IR, tile typing (:mod:`~numba_tile.compiler.typing`), lowering (:mod:`~numba_tile.compiler.lowering`)
on our contexts, then numba-cuda's kernel fix-up and NVVM for the target architecture.
Works on a machine without a GPU: NVVM and nvJitLink come from the CUDA wheels.
"""

import ast
import collections
import itertools
import os
import re
import traceback
import types as types_module

from numba.core import types
from numba.core.errors import NumbaError
from numba.cuda import compiler as cuda_compiler
from numba.cuda import utils as cuda_utils
from numba.cuda.core.callconv import CUDACallConv
from numba.cuda.cudadrv import nvvm

from .. import dtypes
from ..promotion import loose_concrete_dtype
from ..source.static_expressions import AsGlobal, AsTileCode
from ..errors import RECURSION_MESSAGE, SourceLocation, TileCompilerExecutionError, TileError, \
    TileInternalError, TileRecursionError, TileTypeError, TileUnsupportedFeatureError
from ..rules.core import type_name
from ..rules.operators import OPERATOR_NODES
from ..rules.tuples import unpack_error
from ..source.source_code import source_lines
from .compilation import DEFAULT_NUM_WARPS, AddProducer, Compilation, FewerStages, NoProducer, \
    StaticIterState, compiling
from .hardware import tma
from .hardware.reductions import unused_atomics_as_reductions
from .contexts import contexts
from .frontend import call_sites
from .frontend.defined_variables import undefined_variable, user_name
from .frontend.device_output import format_specs
from .frontend.helpers import kernel_for_compilation
from .frontend.numba_patches import python_frontend
from .frontend.passes import insert as insert_passes
from .frontend.warps import WarpsChosen
from .types import ArrayType, PartitionType, run_length_for
from .typing.static_iteration import UnrollAgain


class CompiledKernel:
    """A compiled tile kernel: PTX, cubin and the resource report.

    ``registers``, ``spill_bytes`` and ``shared_bytes`` come from the linker's report (0 when
    no cubin could be made), or for a kernel without a cubin because only the driver's
    compile builds it as written (:mod:`.whole_program`), from the driver's where a GPU is
    present; ``num_warps`` is the thread block size in warps (with a producer, more than
    the kernel's tile code runs on).
    """

    def __init__(self, name, arch, ptx, cubin, info_log, num_warps, dynamic_shared_bytes=0,
                 tensor_maps=()):
        self.name = name
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

    def __repr__(self):
        return (f"<CompiledKernel {self.name} for {self.arch}: {self.registers} registers, "
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

    >>> from numba_tile.compiler.pipeline import parse_arch
    >>> parse_arch("sm_90")
    (9, 0)
    """
    match = re.fullmatch(r"sm_(\d+)(\d)a?", arch) if isinstance(arch, str) else None
    cc = (int(match.group(1)), int(match.group(2))) if match else None
    if cc not in ARCHITECTURES:
        known = ", ".join(f"sm_{major}{minor}" for major, minor in ARCHITECTURES)
        raise ValueError(f"arch {arch!r} is not a GPU architecture numba_tile compiles for; "
                         f"use one of {known}")
    return cc


# The last few lowered kernels, by signature and architecture: a launch after ct.compile of
# the same signature (or a second compile after an error elsewhere) types and lowers once.
_LOWERED = collections.OrderedDict()
_LOWERED_KEPT = 8


def compile_to_ptx(fn, arg_types, arch, num_warps, occupancy=None, num_stages=None,
                   warp_specialize=None):
    """Type, lower and translate ``fn`` for ``arg_types``:
    ``(ptx, entry name, bytes of dynamic shared memory, tensor maps)`` (the
    :class:`~numba_tile.compiler.hardware.tma.TensorMapSpec` of each parameter added after the kernel's own). ``occupancy`` is the number of
    blocks an SM should hold at once: the compiler then limits registers to fit them;
    ``num_stages`` the shared-memory stages of pipelined loads (None: chosen by size);
    ``num_warps`` None leaves the warps to the compiler (:mod:`.frontend.warps`), and the
    result then ends with the warps chosen (the block's, with a producer warp where
    ``warp_specialize`` gave one, :mod:`.frontend.producer_warp`)."""
    cc = parse_arch(arch)
    # the IR depends on the architecture (tensor-core instructions, asynchronous copies,
    # shared memory sizes)
    key = (fn, tuple(arg_types), num_warps, occupancy, num_stages, warp_specialize, cc)
    try:
        lowered = _LOWERED.get(key)
        if lowered is None:
            lowered = _lower(fn, arg_types, cc, num_warps, occupancy, num_stages,
                             warp_specialize)
            _LOWERED[key] = lowered
            while len(_LOWERED) > _LOWERED_KEPT:
                _LOWERED.popitem(last=False)
        library, entry, scratch_bytes, tensor_maps, chosen_warps = lowered
        ptx = unused_atomics_as_reductions(_ptx(library, cc))
        ptx = tma.declare_tensor_map_parameters(ptx, entry, len(tensor_maps))
    except TileError as error:
        _name_the_function(error.loc, fn)
        raise
    except Exception as error:  # what users see is a Tile error, the original chained
        tile_error = as_tile_error(error)
        _name_the_function(tile_error.loc, fn)
        raise tile_error from error
    return ptx, entry, scratch_bytes, tensor_maps, chosen_warps


def _name_the_function(loc, kernel_fn):
    """Give ``loc`` the name of the function whose code holds it (the kernel, or a helper it
    calls), as the interpreter's locations have."""
    if loc is None or loc.function is not None:
        return
    candidates = [kernel_fn] + [value for value in kernel_fn.__globals__.values()
                                if isinstance(value, types_module.FunctionType)]
    best = None
    for candidate in candidates:
        code = getattr(candidate, "__code__", None)
        if code is None or code.co_filename != loc.filename:
            continue
        try:
            lines, first = source_lines(candidate)
        except (OSError, TypeError):
            continue
        if first <= loc.line < first + len(lines) and (best is None or first > best[0]):
            best = (first, candidate.__name__)  # the innermost definition holding the line
    if best is not None:
        loc.function = best[1]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Numba's words for a variable whose type differs by path, and for a tuple unpacked into
# another number of targets: cuTile's TileTypeError and TileValueError
_UNIFY = re.compile(r"Cannot unify (.+?) and (.+) for '([^']+)'")
_UNPACK = re.compile(r"wrong tuple length for .*expected (\d+), got (\d+)")
_MISSING_ATTRIBUTE = re.compile(r"has no attribute '(\w+)'")
_UNDEFINED_NAME = re.compile(r"NameError: name '(\w+)' is not defined")
_DEFINED_AT = re.compile(r"defined at (.+) \((\d+)\)")
# Numba's temporary for the result of a call: where an inlined helper's returns meet
_CALL_RESULT = re.compile(r"\$\d+call\w*")
_LITERAL = re.compile(r"Literal\[(\w+)\]\((.*)\)")
_TYPED_CONSTANT = re.compile(r"Constant\[(\w+)\]\((.*)\)")
_TILE = re.compile(r"Tile\((\w+), (\([^)]*\)), .*\)")
_ARRAY = re.compile(r"TileArray\((\w+), (\d+), .*\)")
_ENUM_CONSTANT = re.compile(r"TileConstant\(<(\w+\.\w+): .*>\)")
_DTYPE_CONSTANT = re.compile(r"TileConstant\((\w+)\)")


def _typing_error(reason, loc):
    """The Tile error of a Numba typing failure that is an error of the kernel (not a gap of
    the compiler), or None."""
    unpack = _UNPACK.search(reason)
    if unpack is not None:
        error = unpack_error(int(unpack[1]), int(unpack[2]))
        if error is not None:
            error.loc = loc
            return error
    unify = _UNIFY.search(reason)
    if unify is not None:
        first, second = (_tile_type_text(t) for t in unify.groups()[:2])
        name = unify[3].split(".")[0]
        name = user_name(name) or name  # (a helper's variable without the inlining's prefix)
        variable = f"`{name}`" if name.isidentifier() else \
            "return value" if _CALL_RESULT.fullmatch(name) else "a value"
        if loc is None:  # where the variable is first defined, as Numba says
            defined = _DEFINED_AT.search(reason)
            if defined is not None:
                loc = SourceLocation(defined[1], int(defined[2]))
        return TileTypeError(f"Type of {variable} depends on path taken: {first} (on one path) "
                             f"vs. {second} (on another)", loc)
    return None


def _tile_type_text(text):
    """A Numba type's name as cuTile names the type of a value of tile code: a scalar (a
    loose constant by its own dtype) ``Tile[int32,()]``, a tile ``Tile[float32,(16,)]``, an
    enum member ``<enum constant PaddingMode.ZERO>``, a dtype ``DTypeSpec(dtype=<DType
    'float32'>)``, a string ``<string constant 'a'>`` (as the interpreter names them,
    :mod:`numba_tile.interpreter.loop_carried`)."""
    if text == "none":
        return "None"  # (cuTile's name, and the interpreter's)
    array = _ARRAY.fullmatch(text)
    if array is not None:
        unknown = "(" + ",".join("?" * int(array[2])) + ("," if array[2] == "1" else "") + ")"
        return f"Array[{array[1]},{unknown}:{unknown}]"
    text = _ENUM_CONSTANT.sub(r"<enum constant \1>", text)
    dtype_constant = _DTYPE_CONSTANT.fullmatch(text)
    if dtype_constant is not None and \
            isinstance(getattr(dtypes, dtype_constant[1], None), dtypes.DType):
        return type_name(getattr(dtypes, dtype_constant[1]))
    literal = _LITERAL.fullmatch(text)
    constant = _TYPED_CONSTANT.fullmatch(text)
    tile = _TILE.fullmatch(text)
    dtype = None
    if literal is not None:
        kind, value = literal.groups()
        if kind == "str":
            return f"<string constant {value!r}>"
        try:
            dtype = loose_concrete_dtype(int(value)) if kind == "int" else \
                {"float": "float32", "bool": "bool_"}.get(kind)
        except TileError:
            dtype = None
    elif constant is not None:
        dtype = constant[1]
    elif tile is not None:
        return f"Tile[{tile[1]},{tile[2].replace(' ', '')}]"
    elif isinstance(getattr(dtypes, "bool_" if text == "bool" else text, None), dtypes.DType):
        dtype = "bool_" if text == "bool" else text  # a run-time scalar of Numba's
    return text if dtype is None else f"Tile[{dtype},()]"


def as_tile_error(error):
    """The Tile error a user sees for an exception that is not one, raised while compiling.
    Numba's own errors mean the kernel uses Python that numba_tile does not compile yet:
    :class:`TileUnsupportedFeatureError` with Numba's reason and the kernel line. Anything
    else (an ``AssertionError``, an NVVM error on the IR we made) is a bug of numba_tile:
    :class:`TileInternalError`, asking for a report.

    >>> from numba_tile.compiler.pipeline import as_tile_error
    >>> type(as_tile_error(KeyError("x"))).__name__
    'TileInternalError'
    """
    lines = [line.strip() for line in _ANSI.sub("", str(error)).splitlines()]
    lines = [line for line in lines if line and not line.startswith(("Failed in", "During",
                                                                      "File "))]
    reason = lines[0] if lines else type(error).__name__
    if reason.endswith(":") and len(lines) > 1:  # "... found for signature:" and the call
        reason = f"{reason} {lines[1].lstrip('>').strip()}"
    loc = _numba_location(error) or _statement_location(error.__traceback__)
    if isinstance(error, RecursionError):  # helpers inlined into each other without end
        return TileRecursionError(RECURSION_MESSAGE, loc)
    if type(error).__name__ in _MISSING_LIBRARY:
        return TileCompilerExecutionError(
            f"The CUDA compiler libraries are not installed ({type(error).__name__}: {reason}). "
            f"Install them with numba_tile: pip install 'numba-tile[cu12]' (or [cu13] for "
            f"CUDA 13), or run kernels in interpreter mode (NUMBA_TILE_INTERPRET=1)")
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if isinstance(error, OSError) and home and home in str(error):
        # numba-cuda takes NVVM and libdevice from CUDA_HOME when it is set
        return TileCompilerExecutionError(
            f"The CUDA compiler libraries could not be read from CUDA_HOME={home} "
            f"({type(error).__name__}: {reason}): it may point at another or a partial CUDA "
            f"toolkit. Unset CUDA_HOME to use the libraries of numba-tile's cu12/cu13 extra, "
            f"or point it at a complete toolkit")
    # a read of a variable before any assignment, or of a name that is nothing
    undefined = getattr(error, "name", None) if type(error).__name__ == "NotDefinedError" \
        else _UNDEFINED_NAME.search(reason) and _UNDEFINED_NAME.search(reason)[1]
    if undefined and isinstance(error, NumbaError) and loc is not None:
        return undefined_variable(undefined, loc.filename, loc.line)
    typing_error = _typing_error(reason, loc) if isinstance(error, NumbaError) else None
    if typing_error is not None:
        return typing_error
    gap = _frontend_gap(error)
    if gap is not None:
        return TileUnsupportedFeatureError(
            f"numba_tile cannot compile this yet: {gap} ({type(error).__name__}: {reason}). "
            f"The interpreter runs it (NUMBA_TILE_INTERPRET=1); docs/compatibility.rst lists "
            f"what compiles", loc)
    if isinstance(error, NumbaError):
        return TileUnsupportedFeatureError(
            f"numba_tile cannot compile this yet: {reason}. The interpreter runs it "
            f"(NUMBA_TILE_INTERPRET=1); docs/compatibility.rst lists what compiles", loc)
    return TileInternalError(
        f"Internal error of numba_tile while compiling this kernel ({type(error).__name__}: "
        f"{reason}). This is a bug: please report it with the kernel (the original error is "
        f"chained below)", loc)


# what the CUDA libraries raise where NVVM or nvJitLink cannot be found
_MISSING_LIBRARY = {"DynamicLibNotFoundError", "NvvmSupportError"}

# Python that Numba's front end (bytecode, inlining, with-blocks) cannot take yet: the
# numba-cuda module an error comes from, or the error's type, and what to tell the user
_FRONTEND_GAPS = (
    ("yield in a closure", None, "generator expressions, as in tuple(f(x) for x in xs)"),
    ("with (context manager)", None, "a with block whose context manager is not known "
                                     "before typing (one held in a local variable, say)"),
    ("UnsupportedBytecodeError", None, "this Python construct (one Numba's bytecode reader "
                                       "lacks)"),
    (None, "inline_closurecall.py", "*args of a tuple whose length is not known before "
                                    "typing, in a call of a helper or closure"),
    (None, "transforms.py", "a with block whose context manager is not known before typing "
                            "(one held in a local variable, say)"),
    # (on a machine without a GPU, where Numba asks the driver about first-class functions)
    ("CudaSupportError", None, "a construct that needs the CUDA driver while compiling, "
                               "such as calling a function held in a tuple"),
)


def _frontend_gap(error):
    """What Python construct ``error`` (raised inside Numba's front end) says the compiler
    lacks, or None for any other error. A rule names the error's type, a part of its message
    (Numba's own errors), or the numba-cuda module among the innermost frames."""
    innermost = [frame.filename.replace("\\", "/")
                 for frame in _traceback_frames(error.__traceback__)[-3:]]
    message = " ".join(_ANSI.sub("", str(error)).split())
    for type_or_text, module, description in _FRONTEND_GAPS:
        if type_or_text is not None and (type_or_text == type(error).__name__ or
                                         " " in type_or_text and type_or_text in message):
            return description
        if module is not None and not isinstance(error, NumbaError) and any(
                "/numba/cuda/core/" + module in filename for filename in innermost):
            return description
    return None


def _traceback_frames(tb):
    return traceback.extract_tb(tb) if tb is not None else []


def _numba_location(error):
    """Where in the kernel Numba's error happened, from its ``loc``."""
    loc = getattr(error, "loc", None)
    if type(loc).__name__ == "Loc" and getattr(loc, "line", None):
        return _located(loc)
    return None


def _ptx(library, cc):
    """The library's PTX. Compute capability 9.0 gets sm_90a, the PTX target with Hopper's
    own instructions (``wgmma``): every GPU of compute capability 9.0 runs it."""
    if cc != (9, 0):
        return library.get_asm_str(cc=cc)
    options = dict(library._nvvm_options, arch="compute_90a")
    return nvvm.compile_ir(library.llvm_strs, **options).decode().strip("\x00").strip()


# the most compiles of one kernel that find the items of its static_iter loops in turn
_MOST_UNROLLING_ATTEMPTS = 200


def _flags(cc):
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
    flags.nvvm_options = {"opt": 3, "arch": f"compute_{cc[0]}{cc[1]}"}
    return flags


def _lower(fn, arg_types, cc, num_warps, occupancy=None, num_stages=None,
           warp_specialize=None):
    """``(code library, entry name, scratch bytes)`` of the kernel, finalized."""
    typing_context, target_context = contexts()
    as_code, static_globals, static_values = set(), {}, {}
    static_iter = StaticIterState()
    warps_open = num_warps is None
    num_warps = num_warps or DEFAULT_NUM_WARPS
    stages_fill_shared = True
    producer_split = False  # (where warp_specialize is None: see Compilation.producer_split)
    # once more for each static_eval compiled as code or as a global function, for the
    # static_iter loops whose items the typing found, and with the warps the products need
    for attempt in itertools.count():
        compilation = Compilation(
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
                    args=tuple(arg_types), return_type=None, flags=_flags(cc), locals={},
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
                missing = _MISSING_ATTRIBUTE.search(error.message)
                error.loc = _statement_location(error.__traceback__, missing and missing[1])
            raise
    if result.signature.return_type not in (types.none, types.void):
        raise TileUnsupportedFeatureError("A tile kernel must not return a value")
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


def _statement_location(tb, attribute=None):
    """The kernel statement Numba was typing or lowering when an op rule raised: the
    innermost frame of Numba's machinery that holds an ``ir.Loc``, with the calls that led
    there where it is in an inlined helper (:mod:`.frontend.call_sites`). Numba gives no
    column, so the expression is found in the statement's syntax tree from the function
    being typed (``operator.add`` is a ``+``, ``ct.exp`` a call of ``exp``) or the
    ``attribute`` read; failing that, the whole statement is underlined."""
    found, function = None, None
    while tb is not None:
        frame_locals = tb.tb_frame.f_locals
        for candidate in (frame_locals.get("loc"),
                          *(_attribute(frame_locals.get(name), "loc")
                            for name in ("self", "inst", "stmt", "expr"))):
            # numba and numba-cuda each have an ir.Loc class: recognise either by shape
            if type(candidate).__name__ == "Loc" and getattr(candidate, "line", None):
                found = candidate
        templates = _attribute(frame_locals.get("fnty"), "templates")
        if templates:
            function = getattr(templates[0], "key", function)
        tb = tb.tb_next
    if found is None:
        return None
    location = _located(found)
    text = location.source_line
    if found.col:
        location.col = found.col - 1
    elif text:
        span = _attribute_span(text, attribute) if attribute else None
        if span is None:
            span = _expression_span(text, function)
        if span is None:  # underline the whole statement
            span = (len(text) - len(text.lstrip()), len(text.rstrip()))
        location.col, location.end_col = span
    return location


def _located(loc):
    """The SourceLocation of Numba's ``loc``: its function, and the calls that led there."""
    function = call_sites.function_at(loc.filename, loc.line)
    return SourceLocation(loc.filename, loc.line, function=function,
                          callers=call_sites.callers(loc, function))


def _attribute_span(text, attribute):
    """``(start, end)`` columns of the read of ``attribute`` on a source line, or None."""
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == attribute:
            return node.col_offset + indent, node.end_col_offset + indent
    return None


def _attribute(value, name):
    """``value.name``, or None where reading it fails in any way (some objects of Numba's
    CUDA driver raise on every unknown attribute)."""
    try:
        return getattr(value, name, None)
    except Exception:
        return None


def _expression_span(text, function):
    """``(start, end)`` columns of the one expression of a source line that applies
    ``function``, or None."""
    import textwrap
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(textwrap.dedent(text).strip())
    except SyntaxError:  # part of a multi-line statement
        return None
    name = getattr(function, "__name__", None)
    if name is None:
        return None
    node_type = OPERATOR_NODES.get(name)
    matches = []
    for node in ast.walk(tree):
        if getattr(function, "__module__", None) == "_operator" and node_type is not None:
            op = getattr(node, "op", None)
            ops = getattr(node, "ops", [])
            if isinstance(op, node_type) or any(isinstance(o, node_type) for o in ops):
                matches.append(node)
        elif isinstance(node, ast.Call):
            callee = node.func
            callee_name = getattr(callee, "attr", None) or getattr(callee, "id", None)
            if callee_name == name:
                matches.append(node)
    if not matches:
        return None
    node = matches[0]
    return node.col_offset + indent, node.end_col_offset + indent


def link_cubin(ptx, arch):
    """``(cubin, info_log)`` from nvJitLink, or ``(None, "")`` where it is unavailable."""
    try:
        from cuda.bindings import nvjitlink
    except ImportError:
        return None, ""
    if re.search(rf"^\.target {arch}a\b", ptx, re.MULTILINE):
        arch += "a"  # PTX for the architecture's own features links only for it
    try:
        handle = nvjitlink.create(2, [f"-arch={arch}", "-verbose"])
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
