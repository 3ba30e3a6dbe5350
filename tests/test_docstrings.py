"""Every docstring example in the package runs (in interpreter mode) and prints what it says."""

import doctest
import importlib
import pkgutil
import typing

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


def _public_callables():
    """Public functions and classes (typing aliases such as ``ScalarInt64`` or ``Shape``
    cannot carry a docstring of their own; the API reference documents them)."""
    for name in numba_tile.__all__:
        value = getattr(numba_tile, name)
        if typing.get_origin(value) in (typing.Annotated, typing.Union):
            continue
        if callable(value) and not isinstance(value, numba_tile.DType) and hasattr(value,
                                                                                "__qualname__"):
            yield name, value


@pytest.mark.parametrize("name,value", list(_public_callables()))
def test_every_public_function_and_class_has_an_example(name, value):
    doc = value.__doc__ or ""
    assert ">>>" in doc, f"numba_tile.{name} has no runnable example in its docstring"


def _public_methods():
    """Public methods and properties of the classes users meet in tile code."""
    for cls in (numba_tile.Tile, numba_tile.Array, numba_tile.TiledView, numba_tile.DType):
        for name, member in vars(cls).items():
            if name.startswith("_") and name != "__call__":
                continue
            if name == "get_raw_memory":  # not in this release: it only raises
                continue
            if callable(member) or isinstance(member, property):
                yield f"{cls.__name__}.{name}", member


@pytest.mark.parametrize("name,member", list(_public_methods()))
def test_every_public_method_has_an_example(name, member):
    doc = (member.fget if isinstance(member, property) else member).__doc__ or ""
    assert ">>>" in doc, f"{name} has no runnable example in its docstring"
