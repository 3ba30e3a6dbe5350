"""Every docstring example in the package runs (in interpreter mode) and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

import numba_tile

MODULES = sorted(name for _, name, _ in pkgutil.walk_packages(numba_tile.__path__, "numba_tile.")
                 if not name.endswith("__main__"))


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name, monkeypatch):
    monkeypatch.setenv("NUMBA_TILE_INTERPRET", "1")
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, module_name, globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"
