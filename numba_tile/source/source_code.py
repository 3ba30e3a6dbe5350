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


def rewritten_code(fn, transform):
    """The code of ``fn`` after ``transform(function_node)`` changed its syntax tree (it
    returns True when it changed something), or None: no source, nothing changed, or the
    source does not compile to free variables of the function
    (a rewrite may drop some: those a static_eval expression alone reads)."""
    code = fn.__code__
    if code.co_name == "<lambda>":
        return None
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
    new_code = _find_code(compiled, code.co_name)
    if new_code is None or not set(new_code.co_freevars) <= set(code.co_freevars):
        return None
    return new_code


def closure_for(new_code, fn, cells):
    """Reorder ``fn``'s closure ``cells`` to the free-variable order of ``new_code``."""
    if not new_code.co_freevars:
        return None
    by_name = dict(zip(fn.__code__.co_freevars, cells))
    return tuple(by_name[name] for name in new_code.co_freevars)
