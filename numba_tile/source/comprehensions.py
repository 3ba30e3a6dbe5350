"""Tuple comprehensions of tile code: ``tuple(f(x) for x in ct.static_iter(xs) if ...)``.

Both executors rewrite a kernel's source before running it (see
:mod:`.static_expressions`). A tuple comprehension becomes a call of a function
defined just before the statement holding it, whose body is the comprehension as unrolled
``static_iter`` loops adding to a tuple::

    tiles = tuple(t * k for k, t in ct.static_iter(enumerate(parts)) if k != 1)

    # becomes
    def __numba_tile_comprehension_0():
        __numba_tile_items = ()
        for __numba_tile_c0_k, __numba_tile_c0_t in ct.static_iter(enumerate(parts)):
            if __numba_tile_static_condition(__numba_tile_c0_k != 1):
                __numba_tile_items += (__numba_tile_c0_t * __numba_tile_c0_k,)
        return __numba_tile_items
    tiles = __numba_tile_comprehension_0()

A function keeps Python's scoping of a generator expression: the loop variables do not leak
into the kernel, closures made inside capture them as Python's do, and the first iterable is
evaluated where the comprehension is (its loop variables are renamed, so that it reads the
kernel's). The call stays where the comprehension was, so it is evaluated when and as often
as Python would. A loop variable read before a ``for`` of the comprehension binds it
(``for j in ct.static_iter(range(n)) for n in ...``) is cuTile's ``TileSyntaxError``
"Undefined variable n" (:func:`binding_problem`: the kernel's syntax checks report it, and
the rewrite of any function puts an expression raising it, :data:`SYNTAX_ERROR_NAME`, in the
comprehension's place); an ``if`` whose condition is not a compile-time constant is its
``TileTypeError`` (checked by ``__numba_tile_static_condition`` in each executor).

>>> import ast
>>> from numba_tile.source.comprehensions import rewrite
>>> tree = ast.parse("def k(x):\\n    y = tuple(i * 2 for i in ct.static_iter(range(3)))")
>>> rewrite(tree.body[0])
True
>>> print(ast.unparse(tree.body[0].body[-1]))
y = __numba_tile_comprehension_0()
"""

import ast
import copy
import itertools


#: The global that checks a comprehension's ``if`` condition (each executor provides it).
CONDITION_NAME = "__numba_tile_static_condition"
#: What a rewritten function calls where it has a construct that tile code rejects:
#: ``__numba_tile_syntax_error(message)`` becomes a static expression raising
#: ``TileSyntaxError(message)`` when it runs or compiles (a function's source is rewritten
#: whether it runs as tile code or not, so the error waits until it does).
SYNTAX_ERROR_NAME = "__numba_tile_syntax_error"
ITEMS_NAME = "__numba_tile_items"
_FUNCTION_PREFIX = "__numba_tile_comprehension_"
_COMPREHENSIONS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_STATIC_CONSTRUCTS = ("static_eval", "static_assert", "static_iter", "static_exception")


def static_construct(node):
    """``"static_eval"``, ``"static_assert"``, ``"static_iter"`` or ``"static_exception"``
    for a call of one (by name or as an attribute: ``ct.static_iter``), else None."""
    if not isinstance(node, ast.Call):
        return None
    name = node.func.id if isinstance(node.func, ast.Name) else \
        node.func.attr if isinstance(node.func, ast.Attribute) else None
    return name if name in _STATIC_CONSTRUCTS else None


def is_tuple_comprehension(node):
    """True for ``tuple(... for ... in ct.static_iter(...) ...)``: every ``for`` of the
    generator expression iterates over ``static_iter``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id == "tuple" and len(node.args) == 1 and not node.keywords and
            isinstance(node.args[0], ast.GeneratorExp) and
            all(static_construct(g.iter) == "static_iter" and not g.is_async
                for g in node.args[0].generators))


def rewrite(function_node):
    """Rewrite the tuple comprehensions of a function's syntax tree in place (see the
    module's docstring); True if there was one."""
    state = _State()
    function_node.body = state.statements(function_node.body)
    return state.made > 0


def binding_problem(comprehension):
    """The ``Name`` node of the first loop variable of a tuple comprehension read before
    its ``for`` binds it, or None."""
    generator = comprehension.args[0]
    local_names = set(_target_names(generator.generators))
    bound = set()
    for position, part in enumerate(generator.generators):
        # an iterable is read before its targets are bound, the conditions after (the first
        # iterable is evaluated outside the comprehension: its names are not these)
        read = ([part.iter] if position > 0 else []), part.ifs
        for nodes in read:
            for node in nodes:
                found = next((name for name in _free_reads(node, frozenset())
                              if name.id in local_names - bound), None)
                if found is not None:
                    return found
            bound |= set(_target_names([part]))
    return None


def raising_call(message, like):
    """A call of :data:`SYNTAX_ERROR_NAME` raising ``message``, where ``like`` is."""
    call = ast.Call(func=_located(ast.Name(id=SYNTAX_ERROR_NAME, ctx=ast.Load()), like),
                    args=[_located(ast.Constant(message), like)], keywords=[])
    return _located(call, like)


class _State:
    def __init__(self):
        self.numbers = itertools.count()
        self.made = 0

    def statements(self, statements):
        """The statements with each comprehension of theirs replaced, its function before
        the statement that holds it."""
        result = []
        for statement in statements:
            functions = []
            for field, value in ast.iter_fields(statement):
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    setattr(statement, field, self.statements(value))
                elif isinstance(value, list):
                    for item in value:
                        self._nested_statements(item)
                    setattr(statement, field, [self._replace(item, functions, False)
                                               if isinstance(item, ast.AST) else item
                                               for item in value])
                elif isinstance(value, ast.AST):
                    setattr(statement, field, self._replace(value, functions, in_lambda=False))
            result.extend(functions)
            result.append(statement)
        return result

    def _nested_statements(self, node):
        """Statement lists below non-statement nodes (``except`` handlers, ``match`` cases)."""
        if isinstance(node, (ast.excepthandler, getattr(ast, "match_case", ()))):
            node.body = self.statements(node.body)

    def _replace(self, node, functions, in_lambda):
        """``node`` with its comprehensions replaced by calls (their functions appended to
        ``functions``). The arguments of static constructs are plain Python: left alone."""
        if is_tuple_comprehension(node):
            if in_lambda:
                return raising_call("A tuple comprehension inside a lambda is not supported; "
                                    "define the function with def", node)
            unbound = binding_problem(node)
            if unbound is not None:
                return raising_call(f"Undefined variable {unbound.id} used", node)
            function = self._function(node)
            functions.append(function)
            call = ast.Call(func=ast.Name(id=function.name, ctx=ast.Load()), args=[],
                            keywords=[])
            return _located(call, node)
        if isinstance(node, (ast.stmt, *_COMPREHENSIONS)) or static_construct(node):
            return node
        inner = in_lambda or isinstance(node, ast.Lambda)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [self._replace(v, functions, inner)
                                      if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, self._replace(value, functions, inner))
        return node

    def _function(self, call):
        """The ``def`` computing the comprehension ``call``."""
        number = next(self.numbers)
        self.made += 1
        generator = call.args[0]
        fresh = {name: f"__numba_tile_c{number}_{name}"
                 for name in _target_names(generator.generators)}

        def local(node):
            return _renamed(copy.deepcopy(node), fresh)
        items = _located(ast.Name(id=ITEMS_NAME, ctx=ast.Store()), call)
        element = _located(ast.Tuple(elts=[local(generator.elt)], ctx=ast.Load()),
                           generator.elt)
        body = [_located(ast.AugAssign(target=items, op=ast.Add(), value=element),
                         generator.elt)]
        for position in reversed(range(len(generator.generators))):
            comprehension = generator.generators[position]
            for condition in reversed(comprehension.ifs):
                checker = _located(ast.Name(id=CONDITION_NAME, ctx=ast.Load()), condition)
                check = _located(ast.Call(func=checker, args=[local(condition)], keywords=[]),
                                 condition)
                body = [_located(ast.If(test=check, body=body, orelse=[]), condition)]
            # the first iterable is evaluated in the enclosing scope, the others in the
            # comprehension's
            iterable = copy.deepcopy(comprehension.iter) if position == 0 else \
                local(comprehension.iter)
            body = [_located(ast.For(target=local(comprehension.target), iter=iterable,
                                     body=body, orelse=[]), comprehension.iter)]
        start = _located(ast.Assign(targets=[_located(ast.Name(id=ITEMS_NAME,
                                                               ctx=ast.Store()), call)],
                                    value=_located(ast.Tuple(elts=[], ctx=ast.Load()), call)),
                         call)
        result = _located(ast.Return(value=_located(ast.Name(id=ITEMS_NAME, ctx=ast.Load()),
                                                    call)), call)
        function = ast.FunctionDef(
            name=f"{_FUNCTION_PREFIX}{number}",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                               defaults=[]),
            body=[start] + body + [result], decorator_list=[], returns=None)
        if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
            function.type_params = []
        _located(function, call)
        ast.fix_missing_locations(function)
        # comprehensions in the element or a condition: in the function's own statements
        function.body = self.statements(function.body)
        return function


def _located(node, like):
    return ast.copy_location(node, like)


def _target_names(comprehensions):
    """The names the targets of ``comprehensions`` bind, in order, each once."""
    names = []
    for comprehension in comprehensions:
        for node in ast.walk(comprehension.target):
            if isinstance(node, ast.Name) and node.id not in names:
                names.append(node.id)
    return names


def _scopes(node, shadowed):
    """``(child, names shadowed in it)`` for each child of ``node``: a lambda's parameters
    and a nested comprehension's loop variables are its own (the first iterable of a
    comprehension is evaluated outside it)."""
    if isinstance(node, ast.Lambda):
        parameters = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        return ([(d, shadowed) for d in node.args.defaults + node.args.kw_defaults if d] +
                [(node.body, shadowed | parameters)])
    if isinstance(node, _COMPREHENSIONS):
        inner = shadowed | set(_target_names(node.generators))
        children = [(node.generators[0].iter, shadowed)]
        for position, comprehension in enumerate(node.generators):
            children.append((comprehension.target, inner))
            if position > 0:
                children.append((comprehension.iter, inner))
            children.extend((condition, inner) for condition in comprehension.ifs)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return children + [(e, inner) for e in elements]
    return [(child, shadowed) for child in ast.iter_child_nodes(node)]


def _free_reads(node, shadowed):
    """The ``Name`` nodes below ``node`` that read a variable of its scope."""
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in shadowed:
            yield node
        return
    for child, inner in _scopes(node, shadowed):
        yield from _free_reads(child, inner)


def _renamed(node, fresh, shadowed=frozenset()):
    """``node`` with the comprehension's variables (``fresh``: old name -> new) renamed
    where they mean the comprehension's, in place."""
    if isinstance(node, ast.Name):
        if node.id in fresh and node.id not in shadowed:
            node.id = fresh[node.id]
        return node
    for child, inner in _scopes(node, shadowed):
        _renamed(child, fresh, inner)
    return node
