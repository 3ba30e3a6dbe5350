"""The calls of itself that a helper's source reaches on a call, judged as the compiler
judges them (:mod:`numba_tile.compiler.frontend.inlining`): its branches on compile-time
constants decided, both sides of the others taken. The interpreter runs one side of a
run-time ``if`` only, so that ``t if n == 0 else f(t, n - 1)`` on a run-time ``n`` that
is 0 never recurses there; the compiler, which inlines both sides, never ends.
:mod:`.recursion` refuses a call of a helper that reaches a call of itself with the same
compile-time constants (:func:`reached_self_call`).

The judgment is of the source as written, of the helper's own body: a branch whose
condition reads only constants (the arguments that are, module constants, literals) is
decided; a variable assigned a constant expression is that constant; anything else (a
call, a run-time value) is known at run time only.

>>> import numpy as np, numba_tile as ct
>>> def down(t, n):
...     return t if n == 0 else down(t, n - 1)
>>> @ct.kernel
... def k(x):
...     ct.scatter(x, 0, down(ct.gather(x, 0), ct.bid(0)))
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))  # block 0: n is 0, yet never ends
Traceback (most recent call last):
...
numba_tile.errors.TileRecursionError: The kernel's helper functions call each other too deeply ...
...
"""

import ast
import builtins
import enum
import inspect
import types

from ..dtypes import DType
from ..errors import SourceLocation
from ..rules.calls import RUN_TIME
from ..rules.core import constant_value
from ..source.source_code import source_lines

_SITES = {}  # code -> (function node, the calls of itself in it) or None: parsed once
_CONSTANT_TYPES = (bool, int, float, complex, str, bytes, type(None), enum.Enum, DType)


def reached_self_call(fn, bound, key, key_of):
    """The :class:`~numba_tile.errors.SourceLocation` of a call of itself that helper
    ``fn`` (the user's function) reaches, called with ``bound`` (its arguments by
    parameter) and so with ``key``; ``key_of(args, kwargs)`` is the key of a call. None
    if it reaches none of the same key."""
    if not _may_recurse(fn):
        return None
    env = {parameter: _static(value) for parameter, value in bound.items()}
    return _search(fn, fn, env, key, key_of, set(), 0)


#: the most helpers deep that the search follows calls (mutual recursion through others)
_MOST_DEPTH = 4


def _search(fn, helper, env, key, key_of, seen, depth):
    """A call of ``fn`` with ``key`` that ``helper``'s body reaches with ``env``, through
    the helpers it calls."""
    found = _function_of(helper)
    if found is None:
        return None
    node, _, filename = found
    for call, scope in _reached(_body(node), env, helper.__globals__):
        target = helper.__globals__.get(call.func.id)
        arguments = _call_arguments(call, scope, helper.__globals__)
        if arguments is None or not isinstance(target, types.FunctionType):
            continue
        if target is fn:
            if key_of(*arguments) == key:
                end = call.end_col_offset if call.end_lineno == call.lineno else None
                return SourceLocation(filename, call.lineno, call.col_offset, end,
                                      function=helper.__name__)
            continue
        if depth >= _MOST_DEPTH or _self_calls_of(target, fn) is None:
            continue
        try:
            bound = inspect.signature(target).bind(*arguments[0], **arguments[1])
        except (TypeError, ValueError):
            continue
        bound.apply_defaults()
        inner = {parameter: _static(value) for parameter, value in bound.arguments.items()}
        visit = (target.__code__, repr(sorted(inner.items(), key=lambda item: item[0])))
        if visit not in seen:
            seen.add(visit)
            site = _search(fn, target, inner, key, key_of, seen, depth + 1)
            if site is not None:
                return site
    return None


def _self_calls_of(helper, fn):
    """Whether ``helper``'s source names ``fn`` (a call back, maybe): None if not."""
    found = _function_of(helper)
    if found is None or not any(helper.__globals__.get(name) is fn
                                for name in helper.__code__.co_names):
        return None
    return found


def _static(value):
    """What a value is to the judgment: a constant, an array (its dtype and rank are), a
    function, else :data:`RUN_TIME`."""
    if getattr(value, "is_tile_array", False) or callable(value):
        return value
    if isinstance(value, tuple):
        return tuple(_static(item) for item in value)
    if isinstance(value, dict):
        return {name: _static(item) for name, item in value.items()}
    constant = constant_value(value, RUN_TIME)
    return RUN_TIME if constant is RUN_TIME else constant


_MAY_RECURSE = {}  # code -> whether the helper names itself, maybe through others


def _may_recurse(fn):
    """Whether helper ``fn`` names itself, or a helper that does (within
    :data:`_MOST_DEPTH`): found once per helper."""
    code = fn.__code__
    if code not in _MAY_RECURSE:
        reached, pending = set(), [(fn, 0)]
        while pending:
            helper, depth = pending.pop()
            for name in helper.__code__.co_names:
                value = helper.__globals__.get(name)
                if value is fn:
                    reached.add(code)
                elif isinstance(value, types.FunctionType) and depth < _MOST_DEPTH and \
                        value.__code__ not in reached:
                    reached.add(value.__code__)
                    pending.append((value, depth + 1))
        _MAY_RECURSE[code] = code in reached
    return _MAY_RECURSE[code]


def _function_of(fn):
    code = fn.__code__
    if code not in _SITES:
        _SITES[code] = _parse(fn)
    return _SITES[code]


def _parse(fn):
    code = fn.__code__
    try:
        lines, first_line = source_lines(code)
        source = "".join(lines)
        indented = lines[0][:1].isspace()
        tree = ast.parse("if 1:\n" + source if indented else source)
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    ast.increment_lineno(tree, first_line - (2 if indented else 1))
    node, name = _function(tree, code)
    if node is None or fn.__globals__.get(name) is not fn:
        return None  # (not a helper that its module's name for it calls)
    return node, name, code.co_filename


def _function(tree, code):
    """The node of ``code``'s function in ``tree`` and the name it is called by."""
    if code.co_name != "<lambda>":
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == code.co_name:
                return node, node.name
        return None, None
    parameters = code.co_varnames[:code.co_argcount]
    for node in ast.walk(tree):  # name = lambda ...: the lambda with these parameters
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Lambda) \
                and tuple(a.arg for a in node.value.args.args) == parameters:
            return node.value, node.targets[0].id
    return None, None


def _body(node):
    return node.body if isinstance(node.body, list) else [ast.Return(value=node.body)]


def _own_nodes(node):
    """The nodes of a function's body, not those of the functions defined in it."""
    pending = list(_body(node))
    while pending:
        inner = pending.pop()
        yield inner
        if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(inner))


def _value(expression, env, module_globals):
    """The compile-time value of an expression, else :data:`RUN_TIME`."""
    namespace = {}
    for node in ast.walk(expression):
        if isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield,
                             ast.YieldFrom, ast.Starred)):
            return RUN_TIME
        if isinstance(node, ast.Name):
            value = env[node.id] if node.id in env else module_globals.get(node.id, RUN_TIME)
            if node.id not in env and not isinstance(value, _CONSTANT_TYPES):
                value = RUN_TIME
            if value is RUN_TIME and hasattr(builtins, node.id) and node.id not in env:
                continue
            if value is RUN_TIME:
                return RUN_TIME
            namespace[node.id] = value
    try:
        value = eval(compile(ast.Expression(body=expression), "<condition>", "eval"),  # noqa: S307
                     {"__builtins__": builtins}, namespace)
    except Exception:  # (a run-time value's attribute, say: left to the run)
        return RUN_TIME
    return value if isinstance(value, _CONSTANT_TYPES) or getattr(
        value, "is_tile_array", False) else RUN_TIME


def _decided(test, env, module_globals):
    """True or False for a condition on constants, None for a run-time one."""
    value = _value(test, env, module_globals)
    if value is RUN_TIME:
        return None
    try:
        return bool(value)
    except Exception:
        return None


def _reached(statements, env, module_globals):
    """``(call, env)`` of each call by name the statements reach; ``env`` is updated
    with the variables they assign. Stops after a ``return`` reached for sure."""
    for statement in statements:
        if isinstance(statement, ast.If):
            taken = _decided(statement.test, env, module_globals)
            yield from _in_expression(statement.test, env, module_globals)
            if taken is not None:
                side = statement.body if taken else statement.orelse
                yield from _reached(side, env, module_globals)
                if _returns(side):
                    return
                continue
            for side in (statement.body, statement.orelse):
                yield from _reached(side, dict(env), module_globals)
            for target in _assigned(statement):
                env[target] = RUN_TIME
            continue
        if isinstance(statement, (ast.For, ast.While)):
            for target in _assigned(statement):
                env[target] = RUN_TIME
            yield from _in_expression(getattr(statement, "iter", None) or statement.test,
                                      env, module_globals)
            yield from _reached(statement.body + statement.orelse, env, module_globals)
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env[statement.name] = RUN_TIME
            continue
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.expr):
                yield from _in_expression(child, env, module_globals)
        if isinstance(statement, ast.Assign):
            value = _value(statement.value, env, module_globals)
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    env[target.id] = value
                else:
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name):
                            env[node.id] = RUN_TIME
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.With)):
            for target in _assigned(statement):
                env[target] = RUN_TIME
        if isinstance(statement, (ast.Return, ast.Raise)):
            return


def _in_expression(expression, env, module_globals):
    if expression is None:
        return
    if isinstance(expression, ast.IfExp):
        yield from _in_expression(expression.test, env, module_globals)
        taken = _decided(expression.test, env, module_globals)
        if taken is None or taken:
            yield from _in_expression(expression.body, env, module_globals)
        if taken is None or not taken:
            yield from _in_expression(expression.orelse, env, module_globals)
        return
    if isinstance(expression, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp,
                               ast.DictComp)):
        return
    if isinstance(expression, ast.Call) and isinstance(expression.func, ast.Name):
        yield expression, dict(env)
    for child in ast.iter_child_nodes(expression):
        if isinstance(child, ast.expr):
            yield from _in_expression(child, env, module_globals)
        elif isinstance(child, ast.keyword):
            yield from _in_expression(child.value, env, module_globals)


def _returns(statements):
    """True where the statements leave the function whatever happens."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return isinstance(last, ast.If) and _returns(last.body) and _returns(last.orelse)


def _assigned(statement):
    return {node.id for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _call_arguments(call, env, module_globals):
    """``(positional values, keyword values)`` of a call of itself, or None (``*args``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return None
    return ([_value(a, env, module_globals) for a in call.args],
            {k.arg: _value(k.value, env, module_globals) for k in call.keywords})
