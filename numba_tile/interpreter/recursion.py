"""Recursion in interpreted tile code, refused where the compiler could never end it
(:mod:`numba_tile.compiler.frontend.inlining`): cuTile's ``TileRecursionError`` at the
recursive call, at once, rather than running what a compile rejects.

* A helper (a function of a module, re-bound by the runner) called while a call of it with
  the same :func:`~numba_tile.rules.calls.recursion_key` is running: the same helper with
  the same compile-time constants (its run-time values aside) would be inlined again and
  again. Recursion that changes a constant on the way to its end (``if n > 0:`` on a
  ``Constant`` parameter) runs.
* A function defined in tile code (a nested ``def``, a lambda) called inside itself: the
  compiler inlines it where it is called, so its recursion has no end at all.

The helper's check is :func:`guarded`'s wrapper; the nested function's is a call of
:data:`GUARD_NAME` that the source rewrite (:mod:`.rewrites`) puts first in each function
the tile code defines (:func:`mark` first, on the functions as written, and :func:`rewrite`
last).

>>> import numpy as np, numba_tile as ct
>>> def countdown(t, n):
...     return t if n == 0 else countdown(t + 1, n - 1)
>>> @ct.kernel
... def k(x):
...     ct.scatter(x, 0, countdown(ct.gather(x, 0), ct.bid(0) + 2))
>>> ct.launch(0, (1,), k, (np.zeros(1, np.int32),))
Traceback (most recent call last):
...
numba_tile.errors.TileRecursionError: The kernel's helper functions call each other too deeply ...
...
"""

import ast
import functools
import inspect
import sys

from ..errors import NESTED_RECURSION_MESSAGE, RECURSION_MESSAGE, SourceLocation, \
    TileRecursionError
from ..rules.calls import RUN_TIME, recursion_key
from ..rules.core import constant_value
from ..source.comprehensions import static_construct
from ..source.user_code import frame_location
from . import recursion_sites

#: the name of the check that the rewrite puts first in each function tile code defines
GUARD_NAME = "__numba_tile_recursion_guard"
_MARK = "_numba_tile_defined_inside"  # (an attribute of the function nodes as written)


def mark(node):
    """Mark the functions defined inside ``node`` (a function's syntax tree, as written),
    but in the expressions of ``static_eval`` and the like (plain Python, run at compile
    time)."""
    pending = list(ast.iter_child_nodes(node))
    while pending:
        inner = pending.pop()
        if static_construct(inner):
            continue
        if isinstance(inner, (ast.FunctionDef, ast.Lambda)):
            setattr(inner, _MARK, True)
        pending.extend(ast.iter_child_nodes(inner))


def rewrite(node):
    """Put a call of :data:`GUARD_NAME` first in each function :func:`mark` marked: with
    the place of its call of itself where it has one (the compiler refuses it wherever
    it is, a side of a run-time ``if`` that does not run included)."""
    names = {id(statement.value): statement.targets[0].id for statement in ast.walk(node)
             if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
             isinstance(statement.targets[0], ast.Name)}
    for inner in list(ast.walk(node)):
        if not getattr(inner, _MARK, False):
            continue
        name = getattr(inner, "name", None) or names.get(id(inner))
        site = next((c for c in _own_nodes(inner) if isinstance(c, ast.Call) and
                     isinstance(c.func, ast.Name) and c.func.id == name), None)
        place = [] if site is None else [ast.Constant(value=v) for v in (
            site.lineno, site.col_offset,
            site.end_col_offset if site.end_lineno == site.lineno else None)]
        check = ast.Call(func=ast.Name(id=GUARD_NAME, ctx=ast.Load()), args=place,
                         keywords=[])
        if isinstance(inner, ast.FunctionDef):
            inner.body.insert(0, ast.copy_location(ast.Expr(value=check), inner.body[0]))
        else:  # a lambda: (check(), body)[1]
            inner.body = ast.copy_location(ast.Subscript(
                value=ast.Tuple(elts=[check, inner.body], ctx=ast.Load()),
                slice=ast.Constant(value=1), ctx=ast.Load()), inner.body)
        ast.fix_missing_locations(inner)


def _own_nodes(function):
    """The nodes of a function's body, not those of the functions defined in it."""
    pending = list(function.body) if isinstance(function.body, list) else [function.body]
    while pending:
        inner = pending.pop()
        yield inner
        if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(inner))


def defined_inside_guard(*site):
    """What :data:`GUARD_NAME` calls: the function that called it (one tile code defined)
    must not call itself (``site``: the line and columns of its call of itself) nor be
    running already."""
    frame = sys._getframe(1)
    if site:
        code = frame.f_code
        raise TileRecursionError(NESTED_RECURSION_MESSAGE, SourceLocation(
            code.co_filename, site[0], site[1], site[2], function=code.co_name))
    outer = frame.f_back
    while outer is not None:
        if outer.f_code is frame.f_code:
            raise TileRecursionError(NESTED_RECURSION_MESSAGE, _call_location(frame.f_back))
        outer = outer.f_back


def guarded(fn, running, original):
    """``fn`` (helper ``original`` re-bound) checked for recursion when called; ``running``:
    the keys of the calls of each helper running (a dict of the runner's, one per launch).
    A call that reaches a call of itself with its own key on a side of a run-time branch
    that does not run is refused too (:mod:`.recursion_sites`)."""
    if fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
        return fn  # (its body runs later, where it is iterated)
    signature = _signature(fn)

    def key_of(args, kwargs):
        return _key(signature, args, kwargs)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        key = key_of(args, kwargs)
        calls = running.setdefault(fn.__code__, [])
        if key in calls:
            raise TileRecursionError(RECURSION_MESSAGE, _call_location(sys._getframe(1)))
        try:
            site = recursion_sites.reached_self_call(
                original, _bound(signature, args, kwargs), key, key_of)
        except RecursionError:  # (thousands of levels deep already)
            raise TileRecursionError(RECURSION_MESSAGE,
                                     _call_location(sys._getframe(1))) from None
        if site is not None:
            raise TileRecursionError(RECURSION_MESSAGE, site)
        calls.append(key)
        try:
            return fn(*args, **kwargs)
        finally:
            calls.pop()
    # (what reads the function itself, its source or code, ct.scan's rules of a combining
    # function, finds it through the marker: numba_tile.source.tile_functions)
    checked.__numba_tile_function__ = dict(getattr(fn, "__numba_tile_function__", None) or
                                           {"host": True, "tile": True}, function=fn)
    return checked


def _bound(signature, args, kwargs):
    """The arguments by parameter (defaults included); none where they do not bind."""
    try:
        bound = signature.bind(*args, **kwargs)
    except (AttributeError, TypeError):  # (no signature; Python's error, raised by the call)
        return {}
    bound.apply_defaults()
    return dict(bound.arguments)


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _key(signature, args, kwargs):
    """The call's :func:`~numba_tile.rules.calls.recursion_key` (its arguments bound as
    Python binds them, defaults included, as the compiler inlines them)."""
    values = list(args) + [kwargs[name] for name in sorted(kwargs)]
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = list(bound.arguments.values())
        except TypeError:  # (Python's error, raised by the call itself)
            pass
    return recursion_key([_compile_time(v) for v in values])


def _compile_time(value):
    if isinstance(value, tuple):
        return tuple(_compile_time(item) for item in value)
    if isinstance(value, dict):  # **kwargs
        return tuple((name, _compile_time(item)) for name, item in sorted(value.items()))
    if getattr(value, "is_tile_array", False) or callable(value):
        return value
    constant = constant_value(value, RUN_TIME)
    return RUN_TIME if constant is RUN_TIME else constant


def _call_location(frame):
    """The expression a frame is running (the recursive call)."""
    return frame_location(frame.f_code, frame.f_lineno, frame.f_lasti)
