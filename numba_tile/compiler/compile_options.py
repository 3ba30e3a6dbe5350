"""What a compile is asked for beside the kernel, its argument types and the architecture:
the kernel's options resolved for that architecture, in one frozen value.

The runtime makes one from a kernel's options (``runtime/compile_entry.py``,
``compile_options``); the compiler takes it whole (``kernel_compiler.compile_to_ptx``), so an
option added later travels through every layer without a new parameter. ``timeout_seconds``
bounds the compile's wall time and leaves its result alone: it takes no part in equality (nor
in the caches' keys), nor does ``keep_llvm_ir``.

>>> from numba_tile.compiler.compile_options import CompileOptions
>>> options = CompileOptions(num_warps=8)
>>> options.num_stages is None, options == CompileOptions(num_warps=8, timeout_seconds=5)
(True, True)
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """The options of one compile. ``None`` leaves each choice to the compiler:

    - ``num_warps``: warps of the thread block (:mod:`numba_tile.compiler.frontend.warps`
      chooses them from the tile sizes);
    - ``occupancy``: blocks a multiprocessor should hold at once (registers are then limited
      to fit them);
    - ``num_stages``: shared-memory stages of the pipelined loads that feed ``mma`` (chosen
      by size; 1: no pipelining);
    - ``warp_specialize``: a producer warp that issues those loads' copies (on sm_90);
    - ``opt_level``: how hard NVVM and ptxas optimize (0..3, cuTile's option; 3 by default);
    - ``timeout_seconds``: the longest a compile may take (``ct.compiler_timeout``);
    - ``keep_llvm_ir``: keep the LLVM IR the compiler made, to log it (``CUDA_TILE_LOGS``).
    """

    num_warps: int = None
    occupancy: int = None
    num_stages: int = None
    warp_specialize: bool = None
    opt_level: int = 3
    timeout_seconds: float = dataclasses.field(default=None, compare=False)
    keep_llvm_ir: bool = dataclasses.field(default=False, compare=False)
