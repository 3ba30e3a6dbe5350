"""How a loaded tile reaches ``ct.mma``, for the loads that stay in shared memory
(:mod:`.pipelining`): the tile must be read only as an operand of products, directly or
through

* ``.astype(ct.tfloat32)`` (or an ``astype`` to the array's own dtype), whose result only
  feeds products: rewritten into
  :func:`~numba_tile.compiler.intrinsics.staged_as_tfloat32` (rounded where read);
* a reshape (``t.reshape(shape)`` or ``ct.reshape(t, shape)``), whose result reaches the
  products in the same way: rewritten into
  :func:`~numba_tile.compiler.intrinsics.staged_reshape`. This is how cuTile's documentation
  reads a matrix of a higher-rank array: ``ct.load(Q, index=(b, h, i, 0), shape=(1, 1, TM,
  D)).reshape((TM, D))``; a reshape that only drops or adds leading axes of length 1 keeps
  the tile in its stage.

So the tile never outlives the statements that read it, and where it cannot stay in shared
memory (typing decides), every rewritten call computes what the original one did.
"""

from numba.cuda.core import ir

from ... import dtypes
from ...language import matrix, shapes
from ..abstract import constant_of
from ..intrinsics import staged_as_tfloat32, staged_reshape
from ..types import ArrayType
from .device_output import callee, definition


class OperandUses:
    """The statements between a load and its products: ``roundings`` (``(getattr, call,
    to its own dtype)`` of each ``astype``), ``reshapes`` (``(getattr or None, call)``
    of each reshape) and ``direct``, how many products read the tile itself, unconverted."""

    def __init__(self):
        self.roundings, self.reshapes, self.direct = [], [], 0

    def add(self, other):
        self.roundings += other.roundings
        self.reshapes += other.reshapes
        self.direct += other.direct

    @property
    def rounded_only(self):
        """True where every product reads the tile rounded to tfloat32: the copy may round
        it."""
        return bool(self.roundings) and not any(same for _, _, same in self.roundings) and \
            self.direct == 0

    def rewrite(self, func_ir):
        """Replace the reshapes and conversions by their staged forms (in place)."""
        for getter, call in self.reshapes:
            expr = call.value
            if getter is not None:  # t.reshape(shape)
                source, shape = getter.value.value, expr.args[0]
                getter.value = ir.Const(None, getter.loc)
            else:  # ct.reshape(t, shape)
                source = expr.args[0]
                shape = expr.args[1] if len(expr.args) > 1 else dict(expr.kws)["shape"]
            call.value = _call(func_ir, call, staged_reshape, [source, shape])
        for getter, call, same in self.roundings:
            source = getter.value.value
            getter.value = ir.Const(None, getter.loc)
            call.value = source if same else _call(func_ir, call, staged_as_tfloat32, [source])


def _call(func_ir, statement, function, args):
    """``function(*args)`` as an expression, with the global assigned before
    ``statement``."""
    block = next(b for b in func_ir.blocks.values() if statement in b.body)
    var = block.scope.redefine(f"${function.__name__}", statement.loc)
    block.body.insert(block.body.index(statement),
                      ir.Assign(ir.Global(function.__name__, function, statement.loc), var,
                                statement.loc))
    return ir.Expr.call(var, list(args), (), statement.loc)


def mma_operand_uses(func_ir, var, blocks, array=None, arg_types=(), depth=0):
    """The :class:`OperandUses` by which ``var`` (assigned once) reaches ``ct.mma`` calls in
    ``blocks`` (see the module's docstring), or None where it has another use (or none)."""
    if len(func_ir._definitions.get(var.name, ())) != 1 or depth > 8:
        return None
    found, count = OperandUses(), 0
    for block, statement in uses(func_ir, var):
        count += 1
        if is_mma_operand(func_ir, block, statement, var, blocks):
            found.direct += 1
            continue
        rounding = _cast_for_mma(func_ir, statement, var, blocks, array, arg_types)
        if rounding is not None:
            found.roundings.append(rounding)
            continue
        reshape = _reshape_of(func_ir, statement, var, blocks)
        if reshape is None:
            return None
        inner = mma_operand_uses(func_ir, reshape[1].target, blocks, array, arg_types,
                                 depth + 1)
        if inner is None:
            return None
        found.add(inner)
        found.reshapes.append(reshape)
    return found if count else None


def uses(func_ir, var):
    """``(block, statement)`` of each statement that reads ``var``."""
    for block in func_ir.blocks.values():
        for statement in block.body:
            if isinstance(statement, ir.Del):
                continue
            used = [v for v in statement.list_vars() if v.name == var.name]
            if isinstance(statement, ir.Assign) and statement.target.name == var.name:
                used = used[1:]
            if used:
                yield block, statement


def is_mma_operand(func_ir, block, statement, var, blocks):
    """True where ``statement`` (in ``block``, one of ``blocks``) is a ``ct.mma`` reading
    ``var`` as ``x`` or ``y`` only."""
    call = statement.value if isinstance(statement, ir.Assign) else None
    return (any(block is b for b in blocks) and isinstance(call, ir.Expr) and
            call.op == "call" and callee(func_ir, call) is matrix.mma and
            all(name == "use_fast_acc" for name, _ in call.kws) and len(call.args) == 3 and
            all(v.name != var.name for v in call.args[2:] + [v for _, v in call.kws]) and
            statement.target.name != var.name)


def _single_call_of_method(func_ir, statement, var, attr, blocks):
    """The statement calling ``var.<attr>`` where ``statement`` reads that method, with
    one positional argument and no other, in ``blocks``; else None."""
    value = statement.value if isinstance(statement, ir.Assign) else None
    if not (isinstance(value, ir.Expr) and value.op == "getattr" and value.attr == attr
            and value.value.name == var.name):
        return None
    method = statement.target
    found = list(uses(func_ir, method))
    if len(found) != 1 or len(func_ir._definitions.get(method.name, ())) != 1:
        return None
    block, call_statement = found[0]
    call = call_statement.value if isinstance(call_statement, ir.Assign) else None
    if not (isinstance(call, ir.Expr) and call.op == "call" and call.func.name == method.name
            and len(call.args) == 1 and not call.kws and call.vararg is None and
            call.args[0].name != var.name and any(block is b for b in blocks)):
        return None
    return call_statement


def _reshape_of(func_ir, statement, var, blocks):
    """``(getattr, call)`` where ``statement`` starts ``var.reshape(shape)``, ``(None,
    call)`` where it is ``ct.reshape(var, shape)``, in ``blocks``; else None."""
    call = _single_call_of_method(func_ir, statement, var, "reshape", blocks)
    if call is not None:
        return statement, call
    value = statement.value if isinstance(statement, ir.Assign) else None
    if not (isinstance(value, ir.Expr) and value.op == "call" and
            callee(func_ir, value) is shapes.reshape and value.vararg is None and
            value.args and value.args[0].name == var.name and
            len(value.args) + len(value.kws) == 2 and
            all(name == "shape" for name, _ in value.kws) and
            all(v.name != var.name for v in value.args[1:] + [v for _, v in value.kws]) and
            any(statement in b.body for b in blocks)):
        return None
    return None, statement


def _cast_for_mma(func_ir, statement, var, blocks, array, arg_types):
    """``(getattr, call, same)`` where ``statement`` starts ``var.astype(ct.tfloat32)`` or
    ``var.astype(<the dtype of array>)`` (``same``: as ``dtype = ct.tfloat32 if A.dtype ==
    ct.float32 else A.dtype`` gives for float16) whose result only feeds ``mma`` in
    ``blocks``, else None."""
    call_statement = _single_call_of_method(func_ir, statement, var, "astype", blocks)
    if call_statement is None:
        return None
    dtype = _dtype_constant(func_ir, call_statement.value.args[0], arg_types)
    same = dtype is not None and dtype is _array_dtype(func_ir, array, arg_types)
    if dtype is not dtypes.tfloat32 and not same:
        return None
    result = call_statement.target
    if len(func_ir._definitions.get(result.name, ())) != 1 or not all(
            is_mma_operand(func_ir, b, s, result, blocks)
            for b, s in uses(func_ir, result)):
        return None
    return statement, call_statement, same


def _argument_type(func_ir, var, arg_types):
    """The type of the kernel argument ``var`` holds (through plain copies), or None."""
    found = definition(func_ir, var) if var is not None else None
    while isinstance(found, ir.Var):
        found = definition(func_ir, found)
    if isinstance(found, ir.Arg) and found.index < len(arg_types):
        return arg_types[found.index]
    return None


def _array_dtype(func_ir, var, arg_types):
    array = _argument_type(func_ir, var, arg_types)
    return array.dtype if isinstance(array, ArrayType) else None


def _dtype_constant(func_ir, var, arg_types):
    """The dtype ``var`` holds where it is known before typing: a constant, a ``Constant``
    parameter, or ``A.dtype`` of an array argument; else None."""
    current = var
    while isinstance(current, ir.Var):
        value = definition(func_ir, current)
        if isinstance(value, ir.Expr) and value.op == "getattr" and value.attr == "dtype":
            return _array_dtype(func_ir, value.value, arg_types)
        if isinstance(value, ir.Arg):
            found = constant_of(_argument_type(func_ir, current, arg_types), None)
            return found if isinstance(found, dtypes.DType) else None
        if not isinstance(value, ir.Var):
            break
        current = value
    try:
        found = func_ir.infer_constant(var)
    except Exception:  # not a constant (Numba raises its own error kinds)
        return None
    return found if isinstance(found, dtypes.DType) else None
