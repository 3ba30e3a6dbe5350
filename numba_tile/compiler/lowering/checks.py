"""Run-time checks of compiled kernels: a condition the op rules could not decide while typing
(it depends on run-time values) is tested on the GPU, and a kernel that breaks it stops with
CUDA's device assertion, whose report names the check and the kernel's file and line (the
launch's stream then reports ``CUDA_ERROR_ASSERT``). The interpreter raises the rule's own
error for the same program.

The lowering that uses a check also keeps its own effect harmless when the check fails (a
slice out of bounds becomes empty), as the threads of a block may run on for a moment before
the assertion stops the kernel.
"""

import sys

from llvmlite import ir
from numba.core import lowering as core_lowering
from numba.cuda import nvvmutils
from numba.cuda import lowering as cuda_lowering

from .tiles import I32, I64, thread_ids

_LOWERERS = (core_lowering.BaseLower, cuda_lowering.BaseLower)


def statement_location():
    """``(filename, line)`` of the kernel statement being lowered: Numba's lowerer keeps it
    (``self.loc``) while it lowers the statement that called this."""
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, _LOWERERS) and getattr(owner, "loc", None) is not None:
            return owner.loc.filename, int(owner.loc.line or 0)
        frame = frame.f_back
    return "<tile kernel>", 0


def assert_fail(context, builder, message, filename, line):
    """Call CUDA's ``__assertfail``: the driver prints ``message`` with ``filename:line`` and
    the kernel stops."""
    char_pointer = ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [char_pointer, char_pointer, I32, char_pointer,
                                           I64])
    try:
        function = builder.module.get_global("__assertfail")
    except KeyError:
        function = ir.Function(builder.module, fnty, "__assertfail")
    strings = [context.insert_string_const_addrspace(builder, s)
               for s in (message, filename, "tile kernel")]
    builder.call(function, [strings[0], strings[1], I32(line), strings[2], I64(1)])


def check_uniform(context, builder, holds, message, where=None, printed=False):
    """Stop the kernel with ``message`` unless ``holds``, a condition with the same value in
    every thread of the block: the block's first thread reports it (once a block), with
    ``where`` (``(filename, line)``, by default the statement being lowered). With
    ``printed`` it also prints the message, a line of the process's standard output (where
    ``ct.assert_`` reports it; the driver's report of the assertion goes to standard
    error)."""
    filename, line = where or statement_location()
    with builder.if_then(builder.not_(holds), likely=False):
        lane, warp = thread_ids(builder)
        with builder.if_then(builder.icmp_unsigned("==", builder.or_(lane, warp), I32(0))):
            if printed:
                print_line(context, builder, message)
            assert_fail(context, builder, message, filename, line)


def print_line(context, builder, text):
    """``printf`` of ``text`` and a newline from the calling thread."""
    vprintf = nvvmutils.declare_vprint(builder.module)
    fmt = context.insert_string_const_addrspace(builder, text.replace("%", "%%") + "\n")
    builder.call(vprintf, [fmt, ir.Constant(ir.IntType(8).as_pointer(), None)])
