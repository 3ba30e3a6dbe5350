"""The compiler's contracts (docs/architecture.rst): the plans apart from LLVM IR, every op
family registered from one table, no module-level state written by a compile (its state
lives in the compile state object), and the frontend passes in the order declared once.
The imports between its parts (typing and the plans never reach the lowering) are
import-linter contracts in pyproject.toml, checked with the rest in tests/test_layers.py."""

import ast
import copy
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.compiler import compile_state, registries
from numba_tile.compiler.frontend import passes

PACKAGE = pathlib.Path(ct.__file__).parent


def test_the_plans_build_no_llvm_ir():
    for path in sorted((PACKAGE / "compiler" / "planning").glob("*.py")):
        tree = ast.parse(path.read_text())
        names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names]
        names += [node.module or "" for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom)]
        assert not [n for n in names if n.split(".")[0] == "llvmlite"], path.name


# what a family module imports to register: templates (typing) or lowerings (lowering)
_REGISTERING = {"typing": ("templates", {"registry", "register_template"}),
                "lowering": ("registry", {"registry", "lower"})}


def _family_modules(package):
    """The modules of ``compiler/<package>/`` that register templates or lowerings."""
    source, names = _REGISTERING[package]
    found = set()
    for path in (PACKAGE / "compiler" / package).glob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == source
               and names & {alias.name for alias in node.names} for node in tree.body):
            found.add(path.stem)
    return found


@pytest.mark.parametrize("package", ["typing", "lowering"])
def test_every_family_module_is_in_the_table(package):
    missing = _family_modules(package) - set(registries.FAMILIES)
    assert not missing, f"compiler/{package}/ modules missing from registries.FAMILIES: " \
                        f"{sorted(missing)}"


def test_the_table_names_only_family_modules():
    families = _family_modules("typing") | _family_modules("lowering")
    unknown = [name for name in registries.FAMILIES if name not in families]
    assert not unknown, f"registries.FAMILIES names no family module: {unknown}"
    assert len(set(registries.FAMILIES)) == len(registries.FAMILIES)


def test_the_typing_families_register_in_the_order_of_the_table():
    """Where two templates share a key, the first registered types a call first: each typing
    family registers when its module has run, which for a module that another imports is
    before that one's. So the table lists them in the order their modules finish running,
    in a fresh interpreter."""
    script = """
import importlib.abc, importlib.machinery, sys
finished = []
class Recording(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        self.loader.exec_module(module)
        finished.append(module.__name__)
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if not name.startswith("numba_tile.compiler.typing."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = Recording(spec.loader)
        return spec
sys.meta_path.insert(0, Finder())
import numba_tile.compiler.registries
print(" ".join(name.rsplit(".", 1)[1] for name in finished))
"""
    # (run where the numba_tile under test is the one imported)
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True, cwd=PACKAGE.parent).stdout.split()
    families = _family_modules("typing")
    in_table = [name for name in registries.FAMILIES if name in families]
    assert [name for name in finished if name in families] == in_table


def test_no_two_lowerings_share_a_key_and_signature():
    """Why the order of the lowering families does not matter: the lowering Numba picks for
    a call is the most specific match, and only a later registration of the same key and
    signature would replace an earlier one."""
    registry = registries.lowering_registry
    for kind in ("functions", "getattrs", "setattrs", "casts", "constants"):
        keys = [repr(entry[1:]) for entry in getattr(registry, kind)]
        assert len(keys) == len(set(keys)), kind


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
                     "RaiseStaticExceptions",
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
