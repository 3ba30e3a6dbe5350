"""``ct.static_eval(expr)``: a Python expression evaluated when the kernel is compiled.

Both executors take a kernel's source apart before running it: each ``static_eval(EXPR)`` call
becomes ``__numba_tile_static_eval(key, v1, ..., vn)``, where ``v1..vn`` are the kernel's
local variables that ``EXPR`` reads, and ``key`` finds ``EXPR`` compiled as
``lambda v1, ..., vn: EXPR`` (:class:`StaticExpression`). Globals and closure values are read
as they are.

* The interpreter calls the lambda with the values of the block.
* The compiler calls it while typing, with compile-time constants as their values and every
  run-time value as a :class:`RunTimeValue` that knows its type: a tile's ``shape`` and
  ``dtype`` are known, its elements are not. A result that is a constant (a number, a dtype, a
  function, a tuple of those) or one of the run-time values is the call's value. Where the
  expression needs a run-time value's elements (``lhs + rhs`` of two run-time scalars), the
  compiler compiles the expression as ordinary tile code instead (:class:`AsTileCode`), which
  is what running it would compute.

In both, tile operations with an effect (loads, stores, atomics, printing, an array's
``slice``...) and functions defined inside the kernel cannot be called inside
``static_eval``, a ``static_eval`` cannot nest, and an exception the expression raises
becomes a ``TileStaticEvalError``.

``static_assert(COND, MSG)`` and the iterable of ``for ... in static_iter(ITERABLE)`` are
static expressions too, where no tile operation may run. A ``static_iter`` iterable's items
are taken out of it at once (:func:`iteration_items`: at most :data:`MAX_ITERATIONS`, each a
value tile code can hold); the interpreter then runs the loop's body once per item, and the
compiler unrolls it (:mod:`numba_tile.compiler.frontend.static_iter`). Tuple comprehensions
over ``static_iter`` are rewritten into such loops first (:mod:`numba_tile.comprehensions`).

>>> import numba_tile as ct
>>> @ct.kernel
... def show(x):
...     t = ct.load(x, (0,), (4,))
...     print(ct.static_eval(t.shape[0] * len((1, 2))))
>>> import numpy as np
>>> ct.launch(0, (1,), show, (np.zeros(4, np.float32),))
8
"""

import ast
import enum
import itertools
import types

import numpy as np

from . import comprehensions
from . import dtypes as d
from .rules import dataclasses as dataclass_rules
from .errors import TileStaticAssertionError, TileStaticEvalError, TileSyntaxError, \
    TileTypeError
from .rules.syntax import static_iter_problems

CALL_NAME = "__numba_tile_static_eval"
ASSERT_NAME = "__numba_tile_static_assert"
ITER_NAME = "__numba_tile_static_iter"
CONDITION_NAME = comprehensions.CONDITION_NAME
# a construct the rewrite rejects: made an expression that raises its error when it runs
SYNTAX_ERROR_NAME = comprehensions.SYNTAX_ERROR_NAME
#: The most items a ``static_iter`` iterable may give (cuTile's limit).
MAX_ITERATIONS = 1000

# tile operations (by name) that read or write memory, print or check: not callable inside
EFFECTS = frozenset({
    "load", "store", "gather", "scatter", "print", "printf", "assert_", "static_assert",
    "load_advanced_indexing", "store_advanced_indexing", "slice", "tiled_view",
    "get_raw_memory", "load_offset", "store_offset", "atomic_cas", "atomic_xchg", "atomic_add",
    "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "num_tiles",
})


class StaticExpression:
    """One ``static_eval`` expression: ``function`` is ``lambda v1, ..., vn: EXPR`` (its
    globals filled at evaluation), ``names`` the local variables passed, ``local_functions``
    the names of functions defined inside the kernel, ``problem`` a syntax error to raise
    when it runs."""

    __slots__ = ("code", "names", "local_functions", "text", "problem", "construct")

    def __init__(self, code, names, local_functions, text, problem=None,
                 construct="static_eval"):
        self.code, self.names, self.local_functions = code, names, local_functions
        self.text, self.problem, self.construct = text, problem, construct


# every static_eval expression seen in this process, by key (a cache of compiled code, as
# Python's own code objects are; nothing of a compilation is kept here)
_EXPRESSIONS = {}
_KEYS = {}
_NEXT_KEY = itertools.count()


def expression(key):
    return _EXPRESSIONS[key]


class _LocalFunction:
    """A function defined inside the kernel, as ``static_eval`` sees it: not callable.
    ``function``: the function value it stands for (a closure made when the kernel ran),
    which the expression's result holds where it holds this (``static_iter((f, g))``)."""

    def __init__(self, name, function=None):
        self.name, self.function = name, function

    def __call__(self, *args, **kwargs):
        raise local_function_error(self.name)


def local_function_error(name):
    """The error of a call of function ``name``, defined inside the kernel, in a static
    expression."""
    return TileStaticEvalError(f"{name}() is defined inside the kernel and cannot be called "
                               f"inside static_eval()")


class AsTileCode(Exception):
    """The expression needs a run-time value: compile it as tile code (the compiler catches
    this and compiles the kernel again with this ``key`` left as code)."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


class AsGlobal(Exception):
    """The expression's value is a plain Python function: compile the kernel again with the
    call replaced by a global holding it (:func:`value_name`), which the compiler inlines
    like any helper."""

    def __init__(self, key, value):
        super().__init__(key)
        self.key, self.value = key, value


def value_name(key):
    """The global name that holds a static expression's value (see :class:`AsGlobal`)."""
    return f"__numba_tile_static_value_{key}"


def evaluate(key, values, namespace, static_context, finish=None, made_inside=None):
    """The value of expression ``key`` for the values of its local variables, with global
    and closure names from ``namespace``; run inside ``static_context`` (which makes tile
    operations refuse or defer). ``finish(value)``, run there too, gives the result.
    ``made_inside(value)``: the name of a function value that the kernel made (a closure, a
    lambda: not callable here, as cuTile's closures are not), else None."""
    found = _EXPRESSIONS[key]
    if found.problem is not None:
        raise found.problem[0](found.problem[1])
    scope = dict(namespace)
    for name in found.local_functions:
        scope[name] = _LocalFunction(name)
    if made_inside is not None:
        values = [_local_function(v, made_inside) for v in values]
    function = types.FunctionType(found.code, scope)
    with static_context(found.construct):
        try:
            result = _made_functions(function(*values))
            if found.construct == "static_eval":  # a dataclass instance must be frozen
                dataclass_rules.check_values(result)
            if found.construct == "static_assert":  # the message as run-time values show
                condition, message = result
                return condition, None if message is None else str(message)
            return result if finish is None else finish(result)
        except (TileStaticEvalError, TileSyntaxError, AsTileCode, AsGlobal):
            raise
        except Exception as error:
            if type(error).__module__.startswith("numba_tile"):
                raise
            raise TileStaticEvalError(f"Exception was raised inside {found.construct}() "
                                      f"({type(error).__name__}: {error})") from error


def _local_function(value, made_inside):
    name = made_inside(value)
    return value if name is None else _LocalFunction(name, value)


def _made_functions(value):
    """A result with the functions the kernel made in place of their stand-ins."""
    if isinstance(value, _LocalFunction) and value.function is not None:
        return value.function
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_made_functions(v) for v in value)
    return value


def check_assertion(condition, message, is_run_time):
    """What ``static_assert`` does with its evaluated condition and message:
    ``TileTypeError`` for a condition that is no constant bool (``is_run_time(value)`` says
    whether it is a run-time value), ``TileStaticAssertionError`` where it is false."""
    if is_run_time(condition):
        raise TileTypeError("static_assert() condition must be a compile-time constant")
    if getattr(condition, "is_constant", False) and condition.ndim == 0:
        condition = condition.constant_value()  # a comparison of typed constants
    if not isinstance(condition, (bool, np.bool_)):
        raise TileTypeError(f"static_assert() condition must be a boolean, got {condition!r}")
    if not condition:
        text = "" if message is None else str(message)
        raise TileStaticAssertionError("Static assertion failed" + (f": {text}" if text else ""))


def iteration_items(iterable, is_run_time, is_tile_value):
    """The items of a ``static_iter`` iterable, as a tuple: ``TileTypeError`` if it cannot
    be iterated, ``TileStaticEvalError`` past :data:`MAX_ITERATIONS` items (an endless
    iterator stops there) or for an item tile code cannot hold. ``is_run_time(value)``
    says whether a value is known only when the kernel runs (not iterable at compile
    time), ``is_tile_value(value)`` whether it is a value of tile code (a tile, an
    array...): valid items, as constants and tuples of valid items are.

    >>> from numba_tile.static_expressions import iteration_items
    >>> iteration_items(enumerate("ab"), lambda v: False, lambda v: False)
    ((0, 'a'), (1, 'b'))
    >>> iteration_items(([1, 2],), lambda v: False, lambda v: False)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileStaticEvalError: Invalid item #0 of static_iter() iterable: ...
    """
    if is_run_time(iterable):  # (its value is not known when the kernel compiles)
        raise TileTypeError(f"Invalid static_iter() iterable: '{_type_name(iterable)}' "
                            f"object is not iterable")
    try:
        iterator = iter(iterable)
    except TypeError:
        raise TileTypeError(f"Invalid static_iter() iterable: '{_type_name(iterable)}' "
                            f"object is not iterable") from None
    items = []
    for item in iterator:
        if len(items) == MAX_ITERATIONS:
            raise TileStaticEvalError(f"Maximum number of iterations ({MAX_ITERATIONS}) has "
                                      f"been reached while unpacking the static_iter() "
                                      f"iterable")
        invalid = _invalid_part(item, is_tile_value)
        if invalid is not None:
            raise TileStaticEvalError(f"Invalid item #{len(items)} of static_iter() iterable: "
                                      f"Cannot create constant from value of type "
                                      f"{_type_name(invalid)}.")
        items.append(item)
    return tuple(items)


def _type_name(value):
    """The Python type's name of a value (a loosely typed constant is an int or a float, a
    compiler's run-time value names the interpreter's type)."""
    named = getattr(value, "__tile_type_name__", None)
    if named is not None:
        return named
    for python_type in (bool, int, float):
        if isinstance(value, python_type):
            return python_type.__name__
    return type(value).__name__


def _invalid_part(value, is_tile_value):
    """The part of a ``static_iter`` item tile code cannot hold, or None."""
    if isinstance(value, tuple):
        return next((p for p in (_invalid_part(v, is_tile_value) for v in value)
                     if p is not None), None)
    if value is None or isinstance(value, (bool, int, float, str, d.DType, enum.Enum)) or \
            is_tile_value(value) or d.dtype_spelling(value) is not None:
        return None
    if callable(value) and not isinstance(value, np.generic):
        return None  # a function: tile code calls it
    return value


def check_condition(value, is_run_time):
    """What a tuple comprehension's ``if`` gives: the constant condition as a bool;
    ``TileTypeError`` where it is known only at run time (cuTile's rule: the tuple's length
    is known when the kernel compiles)."""
    if is_run_time(value):
        raise TileTypeError("Tuple comprehension if-conditions must be statically known")
    if getattr(value, "is_constant", False) and value.ndim == 0:
        value = value.constant_value()  # a typed constant
    return bool(value)


# -- the source rewrite -------------------------------------------------------------------------
_construct = comprehensions.static_construct


def _is_static_eval(node):
    return _construct(node) in ("static_eval", "static_assert")


def _bound_names(node):
    """Names a function binds anywhere (parameters, assignments, loops, nested defs...)."""
    names, functions = set(), set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            names.add(child.id)
        elif isinstance(child, ast.arg):
            names.add(child.arg)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is not node:
            functions.add(child.name)
    return names, functions


def _own_names(expr):
    """Names an expression binds itself (comprehension targets, lambda parameters)."""
    names = set()
    for child in ast.walk(expr):
        if isinstance(child, ast.comprehension):
            names |= {n.id for n in ast.walk(child.target) if isinstance(n, ast.Name)}
        elif isinstance(child, ast.Lambda):
            names |= {a.arg for a in ast.walk(child.args) if isinstance(a, ast.arg)}
    return names


class _Rewriter(ast.NodeTransformer):
    def __init__(self, function_node, filename, code_key, as_code, also_local, as_global):
        self.locals, self.functions = _bound_names(function_node)
        self.locals |= set(also_local)
        self.filename, self.code_key, self.as_code = filename, code_key, as_code
        self.as_global = as_global
        self.function_name = function_node.name
        self.index = itertools.count()
        self.keys = []

    def visit_For(self, node):
        if _construct(node.iter) != "static_iter":
            return self.generic_visit(node)
        node.iter = self._static_call(node.iter)
        node.target = self.visit(node.target)
        node.body = [self.visit(statement) for statement in node.body]
        node.orelse = [self.visit(statement) for statement in node.orelse]
        return node

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == SYNTAX_ERROR_NAME:
            return self._static_call(node)  # (a problem found by the rewrite)
        if not _is_static_eval(node):
            return self.generic_visit(node)
        return self._static_call(node)

    def _static_call(self, node):
        """The call of a static construct rewritten (see the module's docstring)."""
        index = next(self.index)
        key = _KEYS.get((self.code_key, index))
        if key is None:
            key = _KEYS[self.code_key, index] = next(_NEXT_KEY)
            _EXPRESSIONS[key] = self._expression(node)
        self.keys.append(key)
        found = _EXPRESSIONS[key]
        if key in self.as_code:
            return self.generic_visit(node.args[0])
        if key in self.as_global:
            return ast.copy_location(ast.Name(id=value_name(key), ctx=ast.Load()), node)
        name = {"static_assert": ASSERT_NAME, "static_iter": ITER_NAME}.get(found.construct,
                                                                            CALL_NAME)
        call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()),
                        args=[ast.Constant(key)] + [ast.Name(id=n, ctx=ast.Load())
                                                    for n in found.names], keywords=[])
        return ast.copy_location(call, node)

    def _expression(self, node):
        text = ast.unparse(node)
        construct = _construct(node) or "static_eval"

        def problem(error, message):
            return StaticExpression(None, (), (), text, (error, message), construct)
        if isinstance(node.func, ast.Name) and node.func.id == SYNTAX_ERROR_NAME:
            return problem(TileSyntaxError, node.args[0].value)
        if construct == "static_assert":
            if not 1 <= len(node.args) <= 2 or node.keywords:
                return problem(TileSyntaxError, "static_assert(cond, msg=None, /) expects one "
                                                "or two positional arguments")
            parts = node.args
            expr = ast.Tuple(elts=list(parts) + [ast.Constant(None)] * (2 - len(parts)),
                             ctx=ast.Load())
            ast.copy_location(expr, parts[0])
        else:
            if len(node.args) != 1 or node.keywords:
                what = "iterable" if construct == "static_iter" else "expression"
                return problem(TileSyntaxError, f"{construct}() expects a single {what}")
            expr = node.args[0]
        for child in ast.walk(expr):
            if isinstance(child, ast.NamedExpr):
                return problem(TileSyntaxError, f"{construct}() expression attempted to modify "
                                                f"a local variable {child.target.id!r}")
            if _construct(child) is not None:
                return problem(TileStaticEvalError, f"{_construct(child)}() cannot be used "
                                                    f"inside {construct}().")
        own = _own_names(expr)
        read = []
        for child in ast.walk(expr):
            if isinstance(child, ast.Name) and child.id in self.locals and \
                    child.id not in own and child.id not in self.functions and \
                    child.id not in read:
                read.append(child.id)
        local_functions = tuple(n for n in self.functions if n not in own)
        lam = ast.Lambda(args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=n) for n in read], kwonlyargs=[],
            kw_defaults=[], defaults=[]), body=expr)
        tree = ast.Expression(body=ast.copy_location(lam, expr))
        ast.fix_missing_locations(tree)
        code = compile(tree, self.filename, "eval")
        lambda_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        # (named after the kernel, where tracebacks and error locations show it)
        lambda_code = lambda_code.replace(co_name=self.function_name)
        return StaticExpression(lambda_code, tuple(read), local_functions, text,
                                construct=construct)


class _Replacer(ast.NodeTransformer):
    """Replaces the nodes ``culprits`` names (by id) by calls raising their message."""

    def __init__(self, culprits):
        self.culprits = culprits

    def visit(self, node):
        message = self.culprits.get(id(node))
        if message is not None:
            return comprehensions.raising_call(message, node)
        return super().visit(node)


def mentions_static_construct(code):
    """True if a function's code (or a function defined in it) names ``static_eval``,
    ``static_assert`` or ``static_iter``: a quick test before its source is parsed."""
    return any(name in code.co_names for name in ("static_eval", "static_assert",
                                                  "static_iter")) or any(
        isinstance(c, types.CodeType) and mentions_static_construct(c)
        for c in code.co_consts)


def rewrite(function_node, filename, code_key, as_code=frozenset(), also_local=(),
            as_global=frozenset()):
    """Rewrite the ``static_eval`` calls of a function's AST in place; the keys of its
    expressions (empty if it has none).
    ``as_code``: keys of expressions to leave as ordinary code; ``also_local``: names passed
    as values though not local (the free variables, for the interpreter); ``as_global``:
    keys of expressions replaced by the global of their value (:class:`AsGlobal`).
    Tuple comprehensions are rewritten first (:mod:`numba_tile.comprehensions`); a misuse
    of ``static_iter`` becomes a call raising the ``TileSyntaxError`` that the kernel's
    syntax checks give (where the function runs: a module's functions are all rewritten)."""
    comprehensions.rewrite(function_node)
    culprits = {id(p[3]): p[1] for p in static_iter_problems(function_node.body)}
    if culprits:
        _Replacer(culprits).visit(function_node)
    rewriter = _Rewriter(function_node, filename, code_key, as_code, also_local, as_global)
    function_node.body = [rewriter.visit(statement) for statement in function_node.body]
    return rewriter.keys


def namespace_of(fn, globals_=None):
    """Globals and closure values of ``fn``, by name: what a static expression reads."""
    scope = dict(fn.__globals__ if globals_ is None else globals_)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:
            pass
    return scope
