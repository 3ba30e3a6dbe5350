"""The package's layers (docs/architecture.rst, "Layers"): the import-linter contracts of
pyproject.toml hold, no import cycle joins two modules or more (imports inside functions
included), and the few imports left inside functions are of optional dependencies or kept
out of ``import numba_tile`` for its import time, each saying which."""

import ast
import os
import pathlib
import subprocess
import sys

import grimp

import numba_tile as ct

PACKAGE = pathlib.Path(ct.__file__).parent
ROOT = PACKAGE.parent
# a ceiling, not a budget: each import inside a function must also say why it is there
MAX_FUNCTION_LEVEL_IMPORTS = 25
REASONS = ("optional", "import time")


def test_the_import_contracts_hold():
    """``lint-imports`` (the README's command) passes on the contracts of pyproject.toml."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as lint; "
                               "lint()", "--no-cache", "--no-logo", "--config",
         str(ROOT / "pyproject.toml")],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken." in result.stdout, result.stdout


def _strongly_connected(graph):
    """The strongly connected components of ``graph`` ({module: imported modules}) with more
    than one module (Tarjan's algorithm, iterative: the package is deeper than Python's
    recursion limit allows for a recursive walk)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_strongly_connected_finds_a_cycle_and_only_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _strongly_connected(graph) == [["a", "b", "c"]]


def test_no_import_cycle_joins_two_modules():
    graph = grimp.build_graph("numba_tile", cache_dir=None)
    imports = {module: graph.find_modules_directly_imported_by(module)
               for module in graph.modules}
    cycles = _strongly_connected(imports)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def _function_level_imports():
    """``(path, line, the import's line and the comment lines above it)`` of every import
    inside a function (a ``try:`` just above, of an optional import, is read too)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    # the import, and the comment lines (and a ``try:``) above it
                    first = node.lineno - 1
                    while first > 0 and lines[first - 1].strip().startswith(("#", "try:")):
                        first -= 1
                    context = "\n".join(lines[first:node.lineno])
                    found.append((path.relative_to(ROOT), node.lineno, context))
    return sorted(set(found))


def test_function_level_imports_are_few_and_say_why():
    found = _function_level_imports()
    assert len(found) < MAX_FUNCTION_LEVEL_IMPORTS, "\n".join(
        f"{path}:{line}" for path, line, _ in found)
    for path, line, context in found:
        assert "#" in context and any(reason in context for reason in REASONS), \
            f"{path}:{line} imports inside a function without a comment saying why (an " \
            f"optional dependency, or import time):\n{context}"
