"""Helpers with ``*args``, ``**kwargs`` or keyword-only parameters, and calls that forward
with ``f(*args, **kwargs)``, compile as cuTile's do.

Numba's bytecode reader has no ``**`` in calls, and its inlining of helpers binds neither
``*args`` nor ``**kwargs``. So:

* the source of each function compiled (:mod:`.helpers`) has its calls with ``**`` rewritten
  to ``__numba_tile_call_unpacked(f, (positional, *args), kwargs, ..., key=value)``
  (:func:`rewrite_unpacking_calls`);
* while helpers are inlined, each call is bound as Python binds it before it is inlined
  (:func:`bind_call`, called by :mod:`.inlining`): a call of ``__numba_tile_call_unpacked``
  whose tuple and keyword records are built in the kernel becomes the plain call
  ``f(positional..., key=value...)``; a call of a function taken out of a tuple built in the
  kernel, a call of the variable that holds it;
  a call of a helper with ``*args``, ``**kwargs`` or keyword-only parameters becomes a call of
  the same code with all its parameters positional (:func:`positional_version`), passed the
  tuple of the extra positional arguments and the record of the extra keyword ones
  (:func:`~numba_tile.compiler.typing.keywords.pack_keywords`).

Forwarding chains (a decorator's ``wrapper(*args, **kwargs)``) resolve as the helpers inline
into each other.

>>> import functools, numpy as np, numba_tile as ct
>>> def traced(fn):
...     @functools.wraps(fn)
...     def wrapper(*args, **kwargs):
...         return fn(*args, **kwargs)
...     return wrapper
>>> @traced
... def scale(t, factor=2):
...     return t * factor
>>> @ct.kernel
... def k(x):
...     ct.scatter(x, 0, scale(ct.gather(x, 0), factor=5))
>>> x = np.full(1, 3, np.int32)
>>> ct.launch(0, (1,), k, (x,))
>>> x
array([15], dtype=int32)
"""

import ast
import dis
import inspect
import types as pytypes

from numba import cuda
from numba.cuda.core import ir
from numba.cuda.core.ir_utils import guard, get_definition, resolve_func_from_module

from ...errors import SourceLocation, TileTypeError
from ..compile_state import current
from ..typing.keywords import call_unpacked, pack_keywords, starred_tuple, unpacked_values

#: the global a call with ``**`` is rewritten to call
CALL_NAME = "__numba_tile_call_unpacked"

_DICT_MERGE = dis.opmap.get("DICT_MERGE")
_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


# -- the source rewrite -----------------------------------------------------------------------
def has_keyword_unpacking(code):
    """True if ``code`` (or a function defined in it) calls with ``**``."""
    return any(instruction.opcode == _DICT_MERGE for instruction in dis.get_instructions(code)) \
        or any(isinstance(c, pytypes.CodeType) and has_keyword_unpacking(c)
               for c in code.co_consts)


class _UnpackingCalls(ast.NodeTransformer):
    def __init__(self):
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        records = [k.value for k in node.keywords if k.arg is None]
        if not records:
            return node
        self.changed = True
        if len(node.args) == 1 and isinstance(node.args[0], ast.Starred):
            positional = node.args[0].value  # f(*args, ...): the tuple itself
        else:
            positional = ast.Tuple(elts=node.args, ctx=ast.Load())
        call = ast.Call(func=ast.Name(id=CALL_NAME, ctx=ast.Load()),
                        args=[node.func, positional] + records,
                        keywords=[k for k in node.keywords if k.arg is not None])
        return ast.fix_missing_locations(ast.copy_location(call, node))


def rewrite_unpacking_calls(function_node):
    """Rewrite the calls with ``**`` of a function's syntax tree in place (see the module's
    docstring); True if there were any."""
    rewriter = _UnpackingCalls()
    function_node.body = [rewriter.visit(statement) for statement in function_node.body]
    return rewriter.changed


# -- binding calls in the IR ------------------------------------------------------------------
_CONSTANT_TYPES = ir.const_types + ir.freevar_types + ir.global_types


def _tuple_items(func_ir, var):
    """The variables of a tuple built in the IR (``(a, b)``, ``(a,) + t``, ``tuple(t)``),
    constants (``ir.Const``) for the entries of a constant one."""
    found = guard(get_definition, func_ir, var)
    if isinstance(found, _CONSTANT_TYPES) and isinstance(found.value, tuple):
        # (3,), or a tuple the function captured or reads as a global: constants
        return [ir.Const(value, found.loc) for value in found.value]
    if not isinstance(found, ir.expr_types):
        return None
    if found.op == "build_tuple":
        return list(found.items)
    if found.op == "binop" and found.fn.__name__ == "add":
        left, right = _tuple_items(func_ir, found.lhs), _tuple_items(func_ir, found.rhs)
        return None if left is None or right is None else left + right
    if _is_tuple_call(func_ir, found):
        return _tuple_items(func_ir, found.args[0])
    return None


def _unknown_parts(func_ir, var):
    """The variables of a tuple built in the IR (as :func:`_tuple_items` follows it) whose
    items are not known before typing: what ``*v`` unpacks where ``v`` is a tile or a
    kernel parameter."""
    found = guard(get_definition, func_ir, var)
    if isinstance(found, _CONSTANT_TYPES) and isinstance(found.value, tuple):
        return []
    if isinstance(found, ir.expr_types):
        if found.op == "build_tuple":
            return []
        if found.op == "binop" and found.fn.__name__ == "add":
            return _unknown_parts(func_ir, found.lhs) + _unknown_parts(func_ir, found.rhs)
        if _is_tuple_call(func_ir, found):
            return _unknown_parts(func_ir, found.args[0])
    return [var]


def _definition(func_ir, var):
    """What ``var`` is assigned, where it is assigned once. Numba's bytecode reader builds
    the tuple of ``f(a, *t, b)`` as ``(a,) + tuple(t) + (b,)`` without recording the
    assignments of the ``tuple`` globals it adds among the IR's definitions: those are
    found in the blocks."""
    found = guard(get_definition, func_ir, var)
    if found is not None or func_ir._definitions.get(var.name):
        return found
    values = [statement.value for block in func_ir.blocks.values()
              for statement in block.find_insts(ir.Assign) if statement.target.name == var.name]
    return values[0] if len(values) == 1 else None


def _keyword_items(func_ir, var):
    """``[(name, variable)]`` of a keyword record built in the IR (:func:`pack_keywords`)."""
    found = guard(get_definition, func_ir, var)
    if not (isinstance(found, ir.expr_types) and found.op == "call") or \
            getattr(guard(get_definition, func_ir, found.func), "value", None) \
            is not pack_keywords:
        return None
    names = [getattr(guard(get_definition, func_ir, name), "value", None)
             for name in found.args[::2]]
    return list(zip(names, found.args[1::2]))


def callee_of(func_ir, call):
    """The Python object a call calls, where the IR names it (a global, a closure value, a
    module's attribute), or None."""
    found = guard(get_definition, func_ir, call.func)
    if isinstance(found, ir.expr_types) and found.op == "getattr":
        return guard(resolve_func_from_module, func_ir, found)
    return getattr(found, "value", None) if isinstance(
        found, (ir.global_types, ir.freevar_types)) else None


def _where(loc):
    return SourceLocation(loc.filename, loc.line)


class _Rewrite:
    """New statements put before a call, and its new value."""

    def __init__(self, func_ir, block, index):
        self.func_ir, self.block, self.index = func_ir, block, index
        self.statement = block.body[index]
        self.loc = self.statement.loc
        self.new = []

    def define(self, value, name):
        target = self.block.scope.redefine(name, loc=self.loc)
        self.new.append(ir.Assign(value, target, self.loc))
        self.func_ir._definitions[target.name].append(value)
        return target

    def variable(self, item):
        """``item`` itself if a variable, else a new variable holding the constant."""
        return item if isinstance(item, ir.var_types) else self.define(item, "$constant")

    def finish(self, value):
        """Replace the call by ``value``; the index of the call afterwards."""
        old = self.statement.value
        definitions = self.func_ir._definitions[self.statement.target.name]
        if old in definitions:
            definitions.remove(old)
        definitions.append(value)
        self.statement.value = value
        self.block.body[self.index:self.index] = self.new
        return self.index + len(self.new)


def _expand_unpacking(func_ir, block, index):
    """``call_unpacked(f, tuple, records..., **kws)`` as ``f(*items, **kws, **records)``,
    once the tuple and the records are built in the IR; the call's index, or None."""
    call = block.body[index].value
    positional = _tuple_items(func_ir, call.args[1]) if len(call.args) >= 2 else None
    records = [_keyword_items(func_ir, record) for record in call.args[2:]]
    if positional is None or any(r is None for r in records):
        return None
    keywords = list(call.kws) + [item for record in records for item in record]
    names = [name for name, _ in keywords]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TileTypeError(f"Got multiple values for keyword argument {repeated[0]!r}",
                            _where(call.loc))
    rewrite = _Rewrite(func_ir, block, index)
    positional = [rewrite.variable(item) for item in positional]
    return rewrite.finish(ir.Expr.call(call.args[0], positional, keywords, call.loc))


def _check_starred(func_ir, block, index):
    """A call's ``*v`` where ``v`` is no tuple built in the kernel (a tile, a kernel
    parameter) unpacks ``starred_tuple(v)``, which typing checks to be a tuple (cuTile's
    error otherwise); the call's index if the IR changed, else None."""
    call = block.body[index].value
    if call.vararg is None or _tuple_items(func_ir, call.vararg) is not None:
        return None
    found = guard(get_definition, func_ir, call.vararg)
    if _is_tuple_call(func_ir, found, starred_tuple):
        return None  # checked already
    if isinstance(found, ir.expr_types) and found.op == "binop" and found.fn.__name__ == "add":
        # ``f(a, *v, b)``: ``(a,) + tuple(v) + (b,)``, Numba's ``tuple`` calls made checks
        changed = False
        for part in _tuple_calls(func_ir, call.vararg):
            if _tuple_items(func_ir, part.args[0]) is None:
                _callee_assignment(func_ir, part.func).value = ir.Global(
                    "starred_tuple", starred_tuple, part.loc)
                changed = True
        return index if changed else None
    rewrite = _Rewrite(func_ir, block, index)
    checker = rewrite.define(ir.Global("starred_tuple", starred_tuple, rewrite.loc),
                             "$starred_tuple")
    call.vararg = rewrite.define(ir.Expr.call(checker, [call.vararg], (), rewrite.loc),
                                 "$starred")
    block.body[index:index] = rewrite.new
    return index + len(rewrite.new)


def _is_tuple_call(func_ir, found, function=tuple):
    """True for the IR expression ``function(x)``."""
    return isinstance(found, ir.expr_types) and found.op == "call" and \
        len(found.args) == 1 and not found.kws and \
        getattr(_definition(func_ir, found.func), "value", None) is function


def _tuple_calls(func_ir, var):
    """The ``tuple(x)`` calls among the parts of a concatenation built in the IR."""
    found = guard(get_definition, func_ir, var)
    if isinstance(found, ir.expr_types) and found.op == "binop" and found.fn.__name__ == "add":
        return _tuple_calls(func_ir, found.lhs) + _tuple_calls(func_ir, found.rhs)
    return [found] if _is_tuple_call(func_ir, found) else []


def _callee_assignment(func_ir, var):
    """The assignment of the variable a call calls (a global Numba's bytecode reader added,
    assigned once)."""
    return next(statement for block in func_ir.blocks.values()
                for statement in block.find_insts(ir.Assign)
                if statement.target.name == var.name)


def _needs_binding(function, call):
    code = function.__code__
    return bool(code.co_flags & _VARIADIC or code.co_kwonlyargcount or call.vararg)


def _bind_variadic(func_ir, block, index, dispatcher):
    """A call of an inlinable helper with ``*args``, ``**kwargs`` or keyword-only parameters
    bound to the helper's positional version; the call's index, or None (not one)."""
    call = block.body[index].value
    function = dispatcher.py_func
    if not _needs_binding(function, call):
        return None
    positional = list(call.args)
    if call.vararg is not None:
        items = _tuple_items(func_ir, call.vararg)
        if items is None:
            # typing says what the unpacked values are: a tile is cuTile's error, a tuple a
            # gap of the compiler (keywords.UnboundStarred)
            rewrite = _Rewrite(func_ir, block, index)
            check = rewrite.define(ir.Global("unpacked_values", unpacked_values,
                                             rewrite.loc), "$unpacked_values")
            return rewrite.finish(ir.Expr.call(check, _unknown_parts(func_ir, call.vararg),
                                               (), call.loc))
        positional += items
    try:
        bound = inspect.signature(function).bind(*positional, **dict(call.kws))
    except TypeError as error:
        raise TileTypeError(f"{function.__name__}(): {error}", _where(call.loc)) from None
    rewrite = _Rewrite(func_ir, block, index)
    bound.arguments.update({name: rewrite.variable(value) if isinstance(value, ir.const_types)
                            else value for name, value in bound.arguments.items()})
    parameters = inspect.signature(function).parameters
    code = function.__code__
    arguments = []
    for name in code.co_varnames[:_parameter_count(code)]:
        parameter = parameters[name]
        if parameter.kind is parameter.VAR_POSITIONAL:
            items = [rewrite.variable(item) for item in bound.arguments.get(name, ())]
            arguments.append(rewrite.define(ir.Expr.build_tuple(items, rewrite.loc), "$args"))
        elif parameter.kind is parameter.VAR_KEYWORD:
            pairs = []
            for key, value in bound.arguments.get(name, {}).items():
                pairs += [rewrite.define(ir.Const(key, rewrite.loc), "$keyword"), value]
            pack = rewrite.define(ir.Global("pack_keywords", pack_keywords, rewrite.loc),
                                  "$pack_keywords")
            arguments.append(rewrite.define(ir.Expr.call(pack, pairs, (), rewrite.loc),
                                            "$kwargs"))
        elif name in bound.arguments:
            arguments.append(bound.arguments[name])
        else:
            arguments.append(rewrite.define(ir.Const(parameter.default, rewrite.loc),
                                            "$default"))
    helper = positional_version(dispatcher)
    target = rewrite.define(ir.Global(function.__name__, helper, rewrite.loc), "$helper")
    return rewrite.finish(ir.Expr.call(target, arguments, (), call.loc))


def _parameter_count(code):
    return code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)


def positional_version(dispatcher):
    """An inlinable helper of the same code as ``dispatcher``'s, every parameter of it
    positional in the code's order (positional, keyword-only, ``*args``, ``**kwargs``);
    one per helper in a compile."""
    made = current().positional_helpers
    if id(dispatcher) not in made:
        function = dispatcher.py_func
        code = function.__code__
        positional = code.replace(co_argcount=_parameter_count(code), co_posonlyargcount=0,
                                  co_kwonlyargcount=0, co_flags=code.co_flags & ~_VARIADIC)
        current().code_globals[positional] = function.__globals__
        made[id(dispatcher)] = (dispatcher, cuda.jit(device=True, inline="always")(
            pytypes.FunctionType(positional, function.__globals__, function.__name__, None,
                                 function.__closure__)))
    return made[id(dispatcher)][1]


def _call_the_item(func_ir, call):
    """A call of a function taken out of a tuple built in the IR (``(f, g)[0](x)``) made a
    call of the variable the tuple holds it in (so that a helper there is inlined); True if
    the call changed."""
    found = guard(get_definition, func_ir, call.func)
    if not (isinstance(found, ir.expr_types) and found.op == "static_getitem" and
            isinstance(found.index, int)):
        return False
    items = _tuple_items(func_ir, found.value)
    if items is None or not -len(items) <= found.index < len(items) or \
            not isinstance(items[found.index], ir.var_types):
        return False
    call.func = items[found.index]
    return True


def bind_call(func_ir, block, index):
    """Bind the call at ``block.body[index]`` as Python would (see the module's docstring):
    its index afterwards, or None where it needs nothing (or cannot be bound yet)."""
    call = block.body[index].value
    if _call_the_item(func_ir, call):
        return index
    checked = _check_starred(func_ir, block, index)
    if checked is not None:
        return checked
    callee = callee_of(func_ir, call)
    if callee is call_unpacked:
        return _expand_unpacking(func_ir, block, index)
    options = getattr(callee, "targetoptions", None)
    if options and options.get("inline") == "always":
        return _bind_variadic(func_ir, block, index, callee)
    return None
