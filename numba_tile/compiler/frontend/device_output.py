"""Rewrites of tile code before typing: device output calls and f-string format specs.

Numba turns ``print(...)`` into a per-thread ``printf`` without keyword arguments and rejects
format specs in f-strings. Tile code prints once per block, in the interpreter's format, with
``sep=``/``end=`` and specs such as ``f"{x:.3f}"``:

* :class:`RewriteDeviceOutput` replaces calls of the builtin ``print``, ``ct.print`` and
  ``ct.assert_`` (and Numba's ``ir.Print`` statements of inlined helpers) by calls of
  :func:`device_print` and :func:`device_assert`, which :mod:`~numba_tile.compiler.lowering.device_output` types and lowers;
* :func:`format_specs` lets the bytecode front end turn ``f"{x:spec}"`` into
  ``format(x, spec)`` while a tile kernel is compiled (under Numba's compiler lock), which
  :mod:`~numba_tile.compiler.typing.text` types.
"""

import builtins
import contextlib
import inspect

from numba.cuda.core import byteflow, ir, interpreter as numba_interpreter
from numba.cuda.core.compiler_lock import global_compiler_lock
from numba.cuda.core.compiler_machinery import FunctionPass, register_pass
from numba.cuda.core.errors import ConstantInferenceError, UnsupportedBytecodeError
from numba.cuda.core.ir_utils import build_definitions

from ...errors import SourceLocation
from ...language import debugging
from ...rules.calls import bind_arguments
from ...rules.formatting import check_print_options
from ..intrinsics import device_assert, device_print
from .contract import tile_pass

_PRINTS = (builtins.print, debugging.print)


@tile_pass("rewrite device output calls")
@register_pass(mutates_CFG=False, analysis_only=False)
class RewriteDeviceOutput(FunctionPass):
    """Calls of ``print``/``ct.print``/``ct.assert_`` become :func:`device_print` and
    :func:`device_assert` calls with their options as positional constants."""

    _name = "numba_tile_rewrite_device_output"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        changed = False
        for block in func_ir.blocks.values():
            body = []
            for statement in block.body:
                replacement = _rewritten(func_ir, block.scope, statement)
                changed |= replacement is not None
                body.extend([statement] if replacement is None else replacement)
            block.body = body
        if changed:  # later passes look definitions up
            func_ir._definitions = build_definitions(func_ir.blocks)
        return changed


def definition(func_ir, var):
    """What ``var`` is assigned, where the IR knows one definition, or None."""
    try:
        return func_ir.get_definition(var)
    except KeyError:
        return None


def callee(func_ir, call):
    """The function a call of Numba IR calls, where it is a constant (a global), or None."""
    try:
        return func_ir.infer_constant(call.func)
    except ConstantInferenceError:
        return None


def _rewritten(func_ir, scope, statement):
    """The statements that replace ``statement``, or None to keep it."""
    loc = statement.loc
    if isinstance(statement, ir.Print):
        target = ir.Var(scope, scope.redefine("$print_result", loc).name, loc)
        return _print_call(scope, target, list(statement.args), {}, statement.vararg, loc)
    if not (isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr)
            and statement.value.op == "call"):
        return None
    call = statement.value
    function = callee(func_ir, call)
    if any(function is p for p in _PRINTS):
        return _print_call(scope, statement.target, list(call.args), dict(call.kws),
                           call.vararg, loc)
    if function is debugging.assert_:
        return _assert_call(scope, statement.target, list(call.args), dict(call.kws), loc)
    return None


def _constant(scope, value, loc, statements):
    var = ir.Var(scope, scope.redefine("$tile_const", loc).name, loc)
    statements.append(ir.Assign(ir.Const(value, loc), var, loc))
    return var


def _function(scope, fn, loc, statements):
    var = ir.Var(scope, scope.redefine(f"${fn.__name__}", loc).name, loc)
    statements.append(ir.Assign(ir.Global(fn.__name__, fn, loc), var, loc))
    return var


def _print_call(scope, target, args, kws, vararg, loc):
    statements = []
    kws.pop("flush", None)  # device output is flushed when the host synchronizes
    sep = kws.pop("sep", None) or _constant(scope, " ", loc, statements)
    end = kws.pop("end", None) or _constant(scope, "\n", loc, statements)
    check_print_options(kws)
    function = _function(scope, device_print, loc, statements)
    statements.append(ir.Assign(ir.Expr.call(function, [sep, end] + args, (), loc,
                                             vararg=vararg), target, loc))
    return statements


def _assert_call(scope, target, args, kws, loc):
    statements = []
    bind_arguments("assert_", inspect.signature(debugging.assert_), args, kws)
    message = args[1] if len(args) == 2 else kws.get("message") or _constant(
        scope, None, loc, statements)
    where = _constant(scope, f"{loc.filename}:{loc.line}", loc, statements)
    function = _function(scope, device_assert, loc, statements)
    statements.append(ir.Assign(ir.Expr.call(function, [args[0], message, where], (), loc),
                                target, loc))
    return statements


def source_location(loc):
    """A Numba IR location as the kernel line our errors show."""
    return SourceLocation(loc.filename, loc.line) if loc is not None else None


# -- f-string format specs ----------------------------------------------------------------------
def _trace_format_value(runner, state, inst):  # Python 3.11, 3.12
    conversion, has_spec = inst.arg & 0x03, inst.arg & 0x04
    if conversion not in (0, 1):  # !r and !a need Python's repr
        raise UnsupportedBytecodeError("!r and !a conversions in f-strings are not supported "
                                       "in tile code", loc=runner.get_debug_loc(inst.lineno))
    _trace_format(state, inst, state.pop() if has_spec else None)


def _trace_format_with_spec(runner, state, inst):  # Python 3.13 and later
    _trace_format(state, inst, state.pop())


def _trace_format(state, inst, spec):
    value = state.pop()
    strvar, res = state.make_temp(), state.make_temp()
    if spec is None:
        state.append(inst, value=value, res=res, strvar=strvar)
    else:
        state.append(inst, value=value, res=res, strvar=strvar, spec=spec)
    state.push(res)


def _interpret_format_value(interpreter, inst, value, res, strvar, spec=None):
    """Numba IR for ``f"{x:spec}"``: ``format(x, spec)``; without a spec, ``str(x)``."""
    loc = interpreter.loc
    function = ir.Global("format", format, loc=loc) if spec is not None else \
        ir.Global("str", str, loc=loc)
    interpreter.store(value=function, name=strvar)
    args = (interpreter.get(value),) + ((interpreter.get(spec),) if spec is not None else ())
    interpreter.store(value=ir.Expr.call(interpreter.get(strvar), args, (), loc=loc), name=res)


_FORMAT_METHODS = (
    (byteflow.TraceRunner, "op_FORMAT_VALUE", _trace_format_value),
    (byteflow.TraceRunner, "op_FORMAT_WITH_SPEC", _trace_format_with_spec),
    (numba_interpreter.Interpreter, "op_FORMAT_VALUE", _interpret_format_value),
    (numba_interpreter.Interpreter, "op_FORMAT_WITH_SPEC", _interpret_format_value),
)


@contextlib.contextmanager
def format_specs():
    """While a tile kernel (and its helpers) is translated from bytecode, f-string format
    specs are kept: the bytecode front end's handlers of the format opcodes are replaced. The
    compiler lock is held meanwhile, so no other compilation sees them."""
    with global_compiler_lock:
        saved = [(owner, name, owner.__dict__.get(name)) for owner, name, _ in _FORMAT_METHODS]
        for owner, name, method in _FORMAT_METHODS:
            setattr(owner, name, method)
        try:
            yield
        finally:
            for owner, name, method in saved:
                if method is None:
                    delattr(owner, name)
                else:
                    setattr(owner, name, method)
