"""A function's source (:func:`source_lines`), and its code compiled again from the source
after a change to its syntax tree.

Both executors rewrite kernels this way before running them: the interpreter gives numeric
literals their tile types (:mod:`numba_tile.interpreter.literals`), and both turn
``static_eval`` calls into calls with the expression's local variables
(:mod:`.static_expressions`). The new code keeps the file name and line numbers, so errors
point at the user's source, and the function's free variables stay free.

>>> import ast, types
>>> from numba_tile.source.source_code import rewritten_code
>>> def scale(x):
...     return x * 2
>>> def times_three(node):
...     node.body[0].value.right = ast.Constant(3)
...     return True
>>> types.FunctionType(rewritten_code(scale, times_three), {})(5)
15
"""

import ast
import contextlib
import copy
import inspect
import linecache
import re
import sys
import types

# where a definition's source may start (inspect's own test for a code object's first line)
_DEFINITION = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def source_lines(obj):
    """``inspect.getsourcelines(obj)`` of a function or code object (``(lines, number of the
    first)``), read from :mod:`linecache` without looking the function's module up: on
    meeting a file, ``inspect`` resolves the path of every module loaded so far (and again
    after imports), tens of milliseconds of a kernel's first compile. Where ``linecache``
    has no lines for the file (a module in a zip file), ``inspect`` reads them.

    >>> from numba_tile.source.source_code import source_lines
    >>> lines, first = source_lines(source_lines)
    >>> lines[0].startswith("def source_lines"), first == source_lines.__code__.co_firstlineno
    (True, True)
    """
    code = obj
    if not isinstance(obj, types.CodeType):
        code = getattr(inspect.unwrap(obj), "__code__", None)
        if code is None:
            return inspect.getsourcelines(obj)
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return inspect.getsourcelines(obj)
    start = code.co_firstlineno - 1
    while start > 0:
        if start >= len(lines):
            raise OSError("lineno is out of bounds")
        if _DEFINITION.match(lines[start]):
            break
        start -= 1
    return inspect.getblock(lines[start:]), start + 1


def _find_function(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def _find_code(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                return const
            found = _find_code(const, name)
            if found is not None:
                return found
    return None


#: the recursion limit while a kernel's syntax tree is walked: an expression of a few
#: thousand terms (``t + t + ...``) nests that deep, and each level is a few calls of a
#: recursive visitor
SYNTAX_RECURSION_LIMIT = 20000


@contextlib.contextmanager
def deep_syntax_trees():
    """While the block runs, the recursive walks of a syntax tree may go as deep as a long
    expression's tree is (:data:`SYNTAX_RECURSION_LIMIT`).

    >>> import sys
    >>> from numba_tile.source.source_code import deep_syntax_trees
    >>> with deep_syntax_trees():
    ...     sys.getrecursionlimit() >= 20000
    True
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, SYNTAX_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


#: the name a lambda's syntax tree takes as a function (:func:`lambda_function`)
LAMBDA_NAME = "__numba_tile_lambda"

_FILE_TREES = {}  # filename -> (its text, its syntax tree): the files of lambdas, parsed once


def lambda_function(code):
    """A lambda's syntax tree as that of a function (``def <LAMBDA_NAME>(args): return
    body``), with the line numbers and columns of its file; None where the file's source
    cannot be read, or where the lambdas on its first line cannot be told apart by their
    parameters (two ``lambda x: ...`` on one line)."""
    filename = code.co_filename
    linecache.checkcache(filename)
    text = "".join(linecache.getlines(filename))
    if not text:
        return None
    if _FILE_TREES.get(filename, (None,))[0] != text:
        try:
            _FILE_TREES[filename] = (text, ast.parse(text))
        except SyntaxError:
            _FILE_TREES[filename] = (text, None)
    tree = _FILE_TREES[filename][1]
    if tree is None:
        return None
    count = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    names = code.co_varnames[:count]
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda) and
             node.lineno == code.co_firstlineno and
             tuple(a.arg for a in _parameters(node.args)) == names]
    if len(found) != 1:
        return None
    node = copy.deepcopy(found[0])  # (the file's tree stays as parsed: transforms change it)
    function = ast.FunctionDef(name=LAMBDA_NAME, args=node.args,
                               body=[ast.copy_location(ast.Return(value=node.body), node.body)],
                               decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        function.type_params = []
    return ast.copy_location(function, node)


def _parameters(arguments):
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs] + \
        [a for a in (arguments.vararg, arguments.kwarg) if a is not None]


def _function_tree(code):
    """``(module tree, function node)`` of a function's (or a lambda's) code, with the line
    numbers of its file, or None without source."""
    if code.co_name == "<lambda>":
        node = lambda_function(code)
        return None if node is None else (ast.Module(body=[node], type_ignores=[]), node)
    try:
        # (of the code: a function's own source, not that of what it wraps, as
        # inspect.getsourcelines(fn) gives for a functools.wraps wrapper)
        lines, first_line = source_lines(code)
    except (OSError, TypeError):
        return None
    source = "".join(lines)
    indented = lines[0][:1].isspace()
    try:
        tree = ast.parse("if 1:\n" + source if indented else source)
    except SyntaxError:
        return None
    node = _find_function(tree, code.co_name)
    if node is None:
        return None
    node.decorator_list = []
    ast.increment_lineno(tree, first_line - (2 if indented else 1))
    return tree, node


def rewritten_code(fn, transform):
    """The code of ``fn`` (a function or a lambda) after ``transform(function_node)``
    changed its syntax tree (it returns True when it changed something), or None: no
    source, nothing changed, or the source does not compile to free variables of the
    function (a rewrite may drop some: those a static_eval expression alone reads)."""
    code = fn.__code__
    found = _function_tree(code)
    if found is None:
        return None
    _, node = found
    if not transform(node):
        return None
    body = [node]
    if code.co_freevars:
        # Nest the function so that its free variables stay free (closure cells), not globals.
        outer = ast.FunctionDef(
            name="__numba_tile_outer", args=ast.arguments(
                posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store()) for v in code.co_freevars],
                             value=ast.Constant(None)), node,
                  ast.Return(value=ast.Constant(None))],
            decorator_list=[], returns=None)
        if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
            outer.type_params = []
        body = [outer]
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        compiled = compile(module, code.co_filename, "exec")
    except (SyntaxError, ValueError):
        return None
    new_code = _find_code(compiled, node.name)
    if new_code is None or not set(new_code.co_freevars) <= set(code.co_freevars):
        return None
    if node.name == LAMBDA_NAME:  # (named as Python names it, in tracebacks and messages)
        new_code = new_code.replace(co_name=code.co_name, **(
            {"co_qualname": code.co_qualname} if hasattr(code, "co_qualname") else {}))
    return new_code


def closure_for(new_code, fn, cells):
    """Reorder ``fn``'s closure ``cells`` to the free-variable order of ``new_code``."""
    if not new_code.co_freevars:
        return None
    by_name = dict(zip(fn.__code__.co_freevars, cells))
    return tuple(by_name[name] for name in new_code.co_freevars)
