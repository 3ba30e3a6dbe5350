"""``with`` blocks of compiled tile code: each ``with cm(args) as v:`` on a
``contextlib.contextmanager`` generator (:mod:`numba_tile.rules.context_managers`) is
inlined into the function's source before Numba sees it (Numba compiles no ``with``).

The rewrite of ``with cm(a, b) as v: BODY`` is, in the function's own source::

    (p1, p2) = <cm's parameters bound to (a, b), with cm's defaults>
    <the generator's code before its yield>
    v = <the yielded value>
    BODY
    <the generator's code after its yield>

where the generator's variables are renamed apart from the function's (``p1`` is
``__numba_tile_cm3_start``...) and the globals it reads that the function does not see alike
become globals of their own. A ``break``, ``continue`` or ``return`` that leaves ``BODY`` runs
a copy of the code after the yield first (a ``return``'s value computed before it), so
nested blocks clean up innermost first, as Python's ``with`` does. A generator's own ``with``
blocks are inlined into it first, which leaves its ``yield`` at the top of its body.

Nothing of the generator runs while the kernel compiles: the rewrite only moves its code.
The code of the generator takes the location of the ``with`` in error messages.

>>> import contextlib, numpy as np, numba_tile as ct
>>> @contextlib.contextmanager
... def shifted(t, by):
...     yield t + by
>>> @ct.kernel
... def k(x):
...     with shifted(ct.gather(x, 0), 10) as s:
...         ct.scatter(x, 0, s)
>>> x = np.ones(1, np.int32)
>>> ct.launch(0, (1,), k, (x,))
>>> x
array([11], dtype=int32)
"""

import ast
import builtins
import contextlib
import copy
import dis
import inspect
import itertools
import types

from ...errors import SourceLocation, TileError, TileTypeError, TileUnsupportedFeatureError
from ...rules.calls import call_error
from ...source.user_code import is_user_code
from ...rules.context_managers import generator_function, generator_source, \
    not_a_context_manager

PREFIX = "__numba_tile_cm"
#: the global that raises an error of the rewrite where its code is typed
#: (:mod:`numba_tile.compiler.typing.rewrite_errors`)
ERROR_NAME = "__numba_tile_rewrite_error"
_WITH_OPCODES = {dis.opmap[name] for name in ("BEFORE_WITH", "SETUP_WITH") if name in dis.opmap}
_MISSING = object()


def has_with(code):
    """True if ``code`` (or a function defined in it) has a ``with`` block."""
    return any(i.opcode in _WITH_OPCODES for i in dis.get_instructions(code)) or any(
        isinstance(c, types.CodeType) and has_with(c) for c in code.co_consts)


# -- scopes ---------------------------------------------------------------------------------
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _parameters(arguments):
    return [a.arg for a in arguments.posonlyargs + arguments.args] + \
        ([arguments.vararg.arg] if arguments.vararg else []) + \
        [a.arg for a in arguments.kwonlyargs] + \
        ([arguments.kwarg.arg] if arguments.kwarg else [])


def _own_nodes(nodes):
    """The nodes below ``nodes`` outside functions defined there (their names, defaults and
    decorators are included: they belong to the enclosing scope)."""
    pending = list(nodes)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, _SCOPES):
            pending.extend(node.args.defaults + [d for d in node.args.kw_defaults if d] +
                           getattr(node, "decorator_list", []))
            continue
        pending.extend(ast.iter_child_nodes(node))


def scope_names(function):
    """The names a function (``ast.FunctionDef`` or ``ast.Lambda``) binds: its parameters
    and whatever its own code assigns (functions and classes it defines included)."""
    names = set(_parameters(function.args))
    body = function.body if isinstance(function.body, list) else [function.body]
    for node in _own_nodes(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


class _Renamer(ast.NodeTransformer):
    """Rename the variables of ``mapping`` in one scope; inner functions keep their own
    (parameters and locals of theirs shadow)."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        node.id = self.mapping.get(node.id, node.id)
        return node

    def _scope(self, node):
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(default)
        for decorator in getattr(node, "decorator_list", []):
            self.visit(decorator)
        if not isinstance(node, ast.Lambda):
            node.name = self.mapping.get(node.name, node.name)
        shadowed = scope_names(node)
        inner = _Renamer({k: v for k, v in self.mapping.items() if k not in shadowed})
        if isinstance(node.body, list):
            node.body = [inner.visit(statement) for statement in node.body]
        else:
            node.body = inner.visit(node.body)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _scope


def _read_names(statements):
    """Every name read below ``statements``, inner functions included."""
    return {node.id for statement in statements for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _relocated(nodes, where):
    """``nodes`` with every position set to that of ``where``."""
    for node in nodes:
        for child in ast.walk(node):
            if "lineno" in child._attributes:
                ast.copy_location(child, where)
    return nodes


# -- leaving a block ------------------------------------------------------------------------
def _with_exits(statements, cleanup, result_name, loop_depth=0):
    """``statements`` where each ``break``/``continue`` leaving them and each ``return``
    runs ``cleanup()`` (fresh statements) first."""
    rewritten = []
    for statement in statements:
        if isinstance(statement, (ast.Break, ast.Continue)) and loop_depth == 0:
            rewritten += _relocated(cleanup(), statement) + [statement]
            continue
        if isinstance(statement, ast.Return):
            keep = []
            if statement.value is not None:
                keep = [ast.copy_location(ast.Assign(
                    targets=[ast.Name(id=result_name, ctx=ast.Store())],
                    value=statement.value), statement)]
                statement.value = ast.copy_location(ast.Name(id=result_name, ctx=ast.Load()),
                                                    statement)
            rewritten += keep + _relocated(cleanup(), statement) + [statement]
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            rewritten.append(statement)
            continue
        inner = loop_depth + isinstance(statement, (ast.For, ast.AsyncFor, ast.While))
        for field in ("body", "orelse"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                # a loop's else runs after the loop: its break leaves the outer loop
                depth = inner if field == "body" else loop_depth
                setattr(statement, field, _with_exits(block, cleanup, result_name, depth))
        rewritten.append(statement)
    return rewritten


# -- the rewrite ----------------------------------------------------------------------------
class WithBlocks:
    """The ``with`` blocks of one function's source inlined: ``fn`` is the function (its
    globals and closure resolve the context managers), ``injected`` receives the new
    globals (name -> value) the rewritten source reads, ``errors`` (a list) the Tile errors
    of blocks that break the rules, each replaced by ``<ERROR_NAME>(its index)``."""

    def __init__(self, fn, injected, errors, counter=None, outer_names=frozenset()):
        self.fn, self.injected, self.errors = fn, injected, errors
        self.counter = counter if counter is not None else itertools.count()
        self.outer_names = outer_names
        self.changed = False
        self.scope = None  # the function whose statements are rewritten (see _method)
        self.held = {}  # id of the assignment making a held context manager -> its name
        self.held_bound = {}  # its name -> (generator, the call), None once entered

    # resolving the context manager of a ``with``
    def _lookup(self, name):
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            try:
                return self.fn.__closure__[code.co_freevars.index(name)].cell_contents
            except ValueError:
                return _MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, _MISSING)

    def _resolve(self, expr, local_names):
        """The value a ``Name`` or attribute chain of non-local names has, or _MISSING."""
        if isinstance(expr, ast.Name):
            return _MISSING if expr.id in local_names else self._lookup(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self._resolve(expr.value, local_names)
            return _MISSING if base is _MISSING else getattr(base, expr.attr, _MISSING)
        return _MISSING

    def _method(self, expr, local_names):
        """``(function, receiver)`` for ``obj.method`` where ``obj`` is a local variable
        assigned once, an instance made by calling a class the function's names resolve
        (``obj = Config(x)``): the class's function and ``obj`` (None for a static
        method); None for anything else."""
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)) or \
                expr.value.id not in local_names or self.scope is None:
            return None
        name = expr.value.id
        stores = [node for node in _own_nodes(self.scope.body)
                  if isinstance(node, ast.Name) and node.id == name and
                  not isinstance(node.ctx, ast.Load)]
        made = [node for node in _own_nodes(self.scope.body) if isinstance(node, ast.Assign)
                and len(node.targets) == 1 and node.targets[0] in stores and
                isinstance(node.value, ast.Call)]
        if len(stores) != 1 or len(made) != 1:
            return None
        cls = self._resolve(made[0].value.func, local_names)
        if not isinstance(cls, type):
            return None
        member = inspect.getattr_static(cls, expr.attr, None)
        if isinstance(member, staticmethod):
            return member.__func__, None
        if isinstance(member, types.FunctionType):
            return member, ast.Name(id=name, ctx=ast.Load())
        return None

    # the rewrite of statements
    def rewrite_function(self, function):
        """Inline the ``with`` blocks of ``function`` (an ``ast.FunctionDef``) in place;
        True if there was one to inline."""
        names = scope_names(function) | self.outer_names
        self.scope = function
        self.held = _held_context_managers(function)
        function.body = self._statements(function.body, names)
        return self.changed

    def _statements(self, statements, local_names):
        rewritten = []
        for statement in statements:
            if isinstance(statement, ast.Assign) and id(statement) in self.held:
                statement = self._bind_held(statement, local_names)
            if isinstance(statement, ast.With):
                try:
                    expanded = self._with(statement, local_names)
                except TileError as error:  # raised if the code is compiled
                    self.errors.append(error)
                    self.changed = True
                    # (with the context manager's value where it is known only by its type)
                    known_by_type = getattr(error, "context_manager", None)
                    expanded = _relocated([ast.Expr(value=ast.Call(
                        func=ast.Name(id=ERROR_NAME, ctx=ast.Load()),
                        args=[ast.Constant(len(self.errors) - 1)] + (
                            [known_by_type] if known_by_type is not None else []),
                        keywords=[]))], statement)
                if expanded is not None:
                    rewritten += expanded
                    continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = WithBlocks(self.fn, self.injected, self.errors, self.counter,
                                   local_names | scope_names(statement))
                inner.scope = statement
                statement.body = inner._statements(statement.body, inner.outer_names)
                self.changed |= inner.changed
                rewritten.append(statement)
                continue
            for field in ("body", "orelse", "finalbody"):
                block = getattr(statement, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    setattr(statement, field, self._statements(block, local_names))
            rewritten.append(statement)
        return rewritten

    def _alias(self, expr, local_names, depth=0):
        """The value of a local variable assigned once from a name the function resolves
        (``c = cm``), else _MISSING."""
        if not isinstance(expr, ast.Name) or self.scope is None or depth > 8:
            return _MISSING
        assigned = [node for node in _own_nodes(self.scope.body)
                    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign,
                                         ast.For, ast.With, ast.NamedExpr)) and
                    any(isinstance(target, ast.Name) and target.id == expr.id
                        for target in ast.walk(getattr(node, "target", None) or
                                               ast.Tuple(elts=getattr(node, "targets", []))))]
        if len(assigned) != 1 or not isinstance(assigned[0], ast.Assign) or \
                len(assigned[0].targets) != 1:
            return _MISSING
        value = assigned[0].value
        if isinstance(value, ast.Name) and value.id in local_names:
            return self._alias(value, local_names, depth + 1)
        return self._resolve(value, local_names)

    def _where(self, node):
        return SourceLocation(self.fn.__code__.co_filename, node.lineno, node.col_offset,
                              node.end_col_offset if node.end_lineno == node.lineno else None,
                              function=self.fn.__name__)

    def _unknown(self, expr):
        """The error of a ``with`` whose context manager is known only once typed: where its
        type is a value of tile code (an array, a tile, None), the interpreter's
        ``TileTypeError`` (:mod:`~numba_tile.compiler.typing.rewrite_errors`), else a gap of
        the compiler."""
        error = TileUnsupportedFeatureError(
            "numba_tile cannot compile this yet: a with block whose context manager is not "
            "known before typing (one held in a local variable or passed in, say). The "
            "interpreter runs it (NUMBA_TILE_INTERPRET=1); docs/compatibility.rst lists what "
            "compiles", self._where(expr))
        error.context_manager = expr
        error.refused = not_a_context_manager(ast.unparse(expr), self._where(expr))
        return error

    def _with(self, statement, local_names):
        """The statements that replace a ``with``; a Tile error where its context manager
        is refused, or is known only once typed (:meth:`_unknown`)."""
        item, rest = statement.items[0], statement.items[1:]
        call = item.context_expr
        bound = None  # (the variable holding the bound arguments of a held one)
        if isinstance(call, ast.Name) and call.id in self.held_bound:
            if self.held_bound[call.id] is None:
                raise TileTypeError("Context manager cannot be reused", self._where(call))
            generator, made = self.held_bound[call.id]
            self.held_bound[call.id] = None  # (entered: a second with is the error)
            bound, call = call, made
            return self._inline_block(statement, generator, call, item, rest, local_names,
                                      bound)
        if not isinstance(call, ast.Call):
            value = call.value if isinstance(call, ast.Constant) else \
                self._resolve(call, local_names)
            if value is _MISSING or isinstance(value, contextlib._GeneratorContextManager):
                raise self._unknown(call)
            raise not_a_context_manager(ast.unparse(call), self._where(call))
        value, receiver = self._resolve(call.func, local_names), None
        if value is _MISSING:
            value = self._alias(call.func, local_names)
        if value is _MISSING:
            method = self._method(call.func, local_names)
            if method is None:
                raise self._unknown(call)
            value, receiver = method
            if receiver is not None:  # obj.cm(a): the generator's self is obj
                call = ast.copy_location(ast.Call(func=call.func, args=[receiver] + call.args,
                                                  keywords=call.keywords), call)
        generator = generator_function(value)
        if generator is None or not is_user_code(generator):
            refused = call_error(value)  # (a class of yours: what calling it raises)
            if refused is not None:
                refused.loc = self._where(call)
                raise refused
            raise not_a_context_manager(ast.unparse(item.context_expr), self._where(call))
        return self._inline_block(statement, generator, call, item, rest, local_names)

    def _inline_block(self, statement, generator, call, item, rest, local_names, bound=None):
        body = statement.body
        if rest:  # with a() as x, b() as y: is a block in a block
            body = [ast.copy_location(ast.With(items=rest, body=body), statement)]
        body = self._statements(body, local_names)
        self.changed = True
        return self._inline(generator, call, item.optional_vars, body, local_names, bound)

    def _bind_held(self, statement, local_names):
        """``cm = make(a, b)`` of a context manager entered later (:func:`_held_context_
        managers`): ``cm = <make's parameters bound to (a, b)>``, the arguments evaluated
        where the context manager is made, as Python does; the ``with`` reads them from
        ``cm``. A ``make`` that is no context manager of the user's keeps the statement
        (the ``with`` then gives its error)."""
        name, made = statement.targets[0].id, statement.value
        generator = generator_function(self._resolve(made.func, local_names))
        if generator is None or not is_user_code(generator) or \
                generator_source(generator) is None:
            return statement
        binder = f"{PREFIX}{next(self.counter)}_held_arguments"
        self.injected[binder] = _argument_binder(generator, generator_source(generator).function)
        self.held_bound[name] = (generator, made)
        self.changed = True
        return ast.copy_location(ast.Assign(targets=statement.targets, value=ast.Call(
            func=ast.Name(id=binder, ctx=ast.Load()), args=made.args,
            keywords=made.keywords)), statement)

    def _inline(self, generator, call, target, body, local_names, bound=None):
        source = generator_source(generator)
        if source is None:
            raise TileTypeError(f"The source of context manager {generator.__name__} is not "
                                f"available: it cannot be compiled")
        function = source.function
        own_names = scope_names(function)
        # its own with blocks first: then its yield is a statement of its body
        inner = WithBlocks(generator, self.injected, self.errors, self.counter)
        inner.scope = function
        known_errors = len(self.errors)
        function.body = inner._statements(function.body, own_names)
        if not _contains(function.body, source.yield_statement):
            # a with block of its own whose context manager tile code refuses held the
            # yield: that error is what compiling this block raises
            raise self.errors[known_errors]
        tag = f"{PREFIX}{next(self.counter)}"
        mapping = {name: f"{tag}_{name}" for name in own_names}
        for name in _read_names(function.body) - own_names:
            value = inner._lookup(name)
            if name.startswith(PREFIX) or value is _MISSING:
                continue
            if name in local_names or self._lookup(name) is not value:
                mapping[name] = f"{tag}_global_{name}"
                self.injected[mapping[name]] = value
        renamer = _Renamer(mapping)
        statements = [renamer.visit(s) for s in function.body]
        at = statements.index(source.yield_statement)
        before, after = statements[:at], statements[at + 1:]
        yielded = source.yield_statement.value.value
        parameters = [mapping[name] for name in _parameters(function.args)]
        self.injected[f"{tag}_arguments"] = _argument_binder(generator, function)
        bind = ast.Call(func=ast.Name(id=f"{tag}_arguments", ctx=ast.Load()),
                        args=call.args, keywords=call.keywords) if bound is None else \
            ast.Name(id=bound.id, ctx=ast.Load())  # (bound where it was made)
        entry = [ast.Assign(targets=[ast.Tuple(
            elts=[ast.Name(id=p, ctx=ast.Store()) for p in parameters], ctx=ast.Store())],
            value=bind) if parameters else ast.Expr(value=bind)]
        if target is not None:
            entry_value = yielded if yielded is not None else ast.Constant(None)
            yield_part = [ast.Assign(targets=[target], value=entry_value)]
        else:
            yield_part = [ast.Expr(value=yielded)] if yielded is not None else []
        _relocated(before + after + yield_part + entry, call)

        def cleanup():
            return copy.deepcopy(after)
        body = _with_exits(body, cleanup, f"{tag}_result")
        return entry + before + yield_part + body + copy.deepcopy(after)


def _held_context_managers(function):
    """The assignments ``cm = make(...)`` of ``function`` (by id) whose variable is set
    there only and read only as the context manager of ``with`` blocks of one statement
    list, outside any loop the assignment is not in (entered at most once each time it is
    made; a second block is cuTile's "Context manager cannot be reused"): such a context
    manager is inlined where it is entered, with the arguments bound where it is made."""
    stores, reads = {}, {}
    for node in _own_nodes(function.body):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else stores).setdefault(
                node.id, []).append(node)
    entered = {}  # name -> the with items whose context manager it is
    loops_of = {}  # id of a node -> the loops around it
    block_of = {}  # id of a with item's name -> the id of the statement list of its with

    def walk(nodes, loops, block):
        for node in nodes:
            loops_of[id(node)] = loops
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if isinstance(item.context_expr, ast.Name):
                        entered.setdefault(item.context_expr.id, []).append(item.context_expr)
                        block_of[id(item.context_expr)] = block
            if isinstance(node, _SCOPES):
                continue
            inner = loops + (node,) if isinstance(node, (ast.For, ast.While)) else loops
            for field, value in ast.iter_fields(node):
                children = value if isinstance(value, list) else [value]
                walk([c for c in children if isinstance(c, ast.AST)], inner,
                     id(value) if isinstance(value, list) else block)
    walk(function.body, (), id(function.body))
    held = {}
    for node in _own_nodes(function.body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
            continue
        name = node.targets[0].id
        uses = entered.get(name, [])
        if len(stores.get(name, [])) != 1 or not uses or \
                len(reads.get(name, [])) != len(uses) or \
                any(loops_of[id(use)] != loops_of[id(node)] for use in uses) or \
                len({block_of[id(use)] for use in uses}) > 1:
            # (entered on two sides of an if: which one runs is known when it runs)
            continue
        held[id(node)] = name
    return held


def _argument_binder(generator, function):
    """A function with the generator's parameters and defaults returning a tuple of them:
    a call of it binds a ``with``'s arguments as calling the generator would."""
    arguments = copy.deepcopy(function.args)
    arguments.defaults = []
    arguments.kw_defaults = [None] * len(arguments.kwonlyargs)
    for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + \
            [a for a in (arguments.vararg, arguments.kwarg) if a is not None]:
        argument.annotation = None
    names = _parameters(function.args)
    binder = ast.FunctionDef(
        name=generator.__name__, args=arguments, decorator_list=[], returns=None,
        body=[ast.Return(value=ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load())
                                               for n in names], ctx=ast.Load()))])
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        binder.type_params = []
    module = ast.fix_missing_locations(ast.Module(body=[binder], type_ignores=[]))
    # (a file name of its own: its source is none of the user's)
    code = compile(module, f"<arguments of {generator.__name__}>", "exec").co_consts[0]
    bound = types.FunctionType(code, generator.__globals__, generator.__name__,
                               generator.__defaults__)
    bound.__kwdefaults__ = generator.__kwdefaults__
    return bound


def _contains(statements, target):
    """True where statement ``target`` is among ``statements`` or nested in them."""
    return any(node is target for statement in statements for node in ast.walk(statement))

