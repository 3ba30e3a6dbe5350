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
are taken out of it at once (:func:`~numba_tile.rules.static_evaluation.iteration_items`:
at most :data:`~numba_tile.rules.static_evaluation.MAX_ITERATIONS`, each a value tile code can
hold); the interpreter then runs the loop's body once per item, and the compiler unrolls it
(:mod:`numba_tile.compiler.frontend.static_iter`). Tuple comprehensions over ``static_iter``
are rewritten into such loops first (:mod:`numba_tile.source.comprehensions`).

This module is the source side, below the rules: the rewrite, the names it calls and the
expressions it compiled, by key. Running an expression and cuTile's rules for its value are
:mod:`numba_tile.rules.static_evaluation`.

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
import itertools
import types

from ..errors import TileStaticEvalError, TileSyntaxError
from . import comprehensions
from .static_iter_uses import static_iter_problems

CALL_NAME = "__numba_tile_static_eval"
ASSERT_NAME = "__numba_tile_static_assert"
ITER_NAME = "__numba_tile_static_iter"
RAISE_NAME = "__numba_tile_static_raise"
CONDITION_NAME = comprehensions.CONDITION_NAME
# a construct the rewrite rejects: made an expression that raises its error when it runs
SYNTAX_ERROR_NAME = comprehensions.SYNTAX_ERROR_NAME

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
    """The :class:`StaticExpression` of ``key`` (what the rewrite put in the call)."""
    return _EXPRESSIONS[key]


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

    def visit_Raise(self, node):
        """``raise ct.static_exception(EXPR)`` becomes the statement
        ``__numba_tile_static_raise(key, v1, ..., vn)``, which raises at compile time."""
        if node.cause is not None or _construct(node.exc) != "static_exception":
            return self.generic_visit(node)  # (the syntax checks refuse it)
        return ast.copy_location(ast.Expr(value=self._static_call(node.exc)), node)

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
        name = {"static_assert": ASSERT_NAME, "static_iter": ITER_NAME,
                "static_exception": RAISE_NAME}.get(found.construct, CALL_NAME)
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
    ``static_assert``, ``static_iter`` or ``static_exception``: a quick test before its
    source is parsed."""
    return any(name in code.co_names for name in ("static_eval", "static_assert",
                                                  "static_iter", "static_exception")) or any(
        isinstance(c, types.CodeType) and mentions_static_construct(c)
        for c in code.co_consts)


def rewrite(function_node, filename, code_key, as_code=frozenset(), also_local=(),
            as_global=frozenset()):
    """Rewrite the ``static_eval`` calls of a function's AST in place; the keys of its
    expressions (empty if it has none).
    ``as_code``: keys of expressions to leave as ordinary code; ``also_local``: names passed
    as values though not local (the free variables, for the interpreter); ``as_global``:
    keys of expressions replaced by the global of their value (:class:`AsGlobal`).
    Tuple comprehensions are rewritten first (:mod:`.comprehensions`); a misuse
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
