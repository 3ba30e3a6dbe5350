"""The compiler's contracts (docs/architecture.rst): no import cycle between its modules, a
function-level import only where a cycle is real and commented, no module-level state written
by a compile (its state lives in the compile state object), and the frontend passes in the
order declared once."""

import ast
import copy
import pathlib
import sys

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.compiler import compile_state
from numba_tile.compiler.frontend import passes

PACKAGE = pathlib.Path(ct.__file__).parent


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """``(module-level imports, function-level imports as (line, target))`` of a module, as
    absolute module names inside numba_tile."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text())
    top_level = {id(node) for node in tree.body}
    outer, inner = set(), []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1] + ([node.module] if node.module else [])
        for alias in node.names:
            candidate = ".".join(base + [alias.name])
            target = candidate if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")
                                   ).exists() else ".".join(base)
            if id(node) in top_level:
                outer.add(target)
            else:
                inner.append((node.lineno, target))
    return outer, inner


def _compiler_modules():
    return sorted((PACKAGE / "compiler").rglob("*.py"))


def test_no_import_cycle_at_module_level():
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        graph[_module_name(path)] = _imports(path)[0]
    state, cycle = {}, []

    def visit(module, stack):
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if target not in graph or target == module:
                continue
            if state.get(target) == "open":
                cycle.extend(stack[stack.index(target):] + [target])
                return True
            if target not in state and visit(target, stack + [target]):
                return True
        state[module] = "done"
        return False

    for module in sorted(graph):
        if module not in state and visit(module, [module]):
            break
    assert not cycle, " -> ".join(cycle)


def test_function_level_imports_in_the_compiler_say_why():
    for path in _compiler_modules():
        lines = path.read_text().splitlines()
        for line, target in _imports(path)[1]:
            assert "#" in lines[line - 1], \
                f"{path.relative_to(PACKAGE)}:{line} imports {target} inside a function " \
                f"without saying which cycle that breaks"


def _mutable_globals():
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("numba_tile.compiler") or module is None:
            continue
        for attribute, value in vars(module).items():
            if isinstance(value, (dict, list, set)) and not attribute.startswith("__"):
                found[(name, attribute)] = value
    return found


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_a_compile_writes_no_module_global(arch):
    """A pipelined matrix product (rings of stages, tensor maps on sm_90, products in flight)
    and a flash-attention kernel (deferred products, index tiles in place) compile without
    changing any dict, list or set held by a module of the compiler, but the cache of
    lowered kernels."""
    from numba_tile.bench import kernels
    a = np.zeros((256, 256), np.float16)
    q = np.zeros((1, 2, 256, 64), np.float16)
    launches = [kernels.matmul_launch(a, a, a, tile_m=128, tile_n=128, tile_k=64),
                kernels.attention_launch(q, q, q, q, causal=True, tile_m=128, tile_n=64,
                                         num_warps=8, pipelined=True)]
    ct.compile(launches[0][0], tuple(launches[0][2]), arch="sm_80")  # imports everything
    before = {key: copy.copy(value) for key, value in _mutable_globals().items()}
    for kernel, _, args in launches:
        ct.compile(kernel.replace_hints(num_stages=3), tuple(args), arch=arch)
    after = _mutable_globals()
    changed = [f"{module}.{name}" for (module, name), value in after.items()
               if (module, name) in before and value != before[(module, name)]
               and (module, name) != ("numba_tile.compiler.kernel_compiler", "_LOWERED")]
    assert not changed


def test_the_frontend_passes_go_where_they_are_declared():
    from numba.cuda.core.typed_passes import NopythonTypeInference
    from numba.cuda.core.untyped_passes import GenericRewrites, LiteralUnroll
    inserted = passes.insert([(GenericRewrites, "g"), (LiteralUnroll, "l"),
                              (NopythonTypeInference, "t")])
    names = [p.__name__ for p, _ in inserted]
    assert names == ["TakePartitionRegions", "RewriteDeviceOutput", "GenericRewrites",
                     "InlineCalls",
                     "UnrollStaticIter", "KeepLoopTests",
                     "PruneConstantBranches", "JoinHelperReturns", "PipelineMmaLoads",
                     "DeferProductWaits", "TakeWarpgroupTurns", "StoreThroughFreedRings",
                     "LiteralUnroll",
                     "RewriteDeviceOutput",
                     "PruneConstantBranches", "InlineDataclassMembers", "OrderJoins",
                     "NopythonTypeInference",
                     "CheckStaticIterItems", "CheckDefinedVariables", "CheckIntegerJoins",
                     "ChooseWarps", "ComputeIndexTilesInPlace",
                     "FindProductsInFlight"]


def test_a_pass_declared_before_what_it_needs_is_refused(monkeypatch):
    from numba.cuda.core.untyped_passes import LiteralUnroll
    from numba_tile.compiler.frontend.deferred_products import DeferProductWaits
    from numba_tile.compiler.frontend.pipelining import PipelineMmaLoads
    monkeypatch.setattr(passes, "STEPS", (
        passes.Step(LiteralUnroll, "before", (DeferProductWaits, PipelineMmaLoads)),))
    with pytest.raises(ct.TileInternalError, match="needs"):
        passes.ordered()


def test_a_compilation_is_gone_when_the_compile_ends():
    @ct.kernel
    def copy_tile(a, b):
        ct.store(b, (0,), ct.load(a, (0,), (16,)))
    x = np.zeros(16, np.float32)
    ct.compile(copy_tile, (x, x), arch="sm_90")
    outside = compile_state.current()
    assert outside is not compile_state.current()  # a fresh one each time: nothing kept
    assert outside.pipelines == {} and outside.passes_run == []
