"""docs/architecture.rst stays true: it names every module of the package by its path, and
every path and dotted name it gives exists."""

import importlib
import pathlib
import re

import numba_tile as ct

PACKAGE = pathlib.Path(ct.__file__).parent
ROOT = PACKAGE.parent
DOC = (ROOT / "docs" / "architecture.rst").read_text()
# a file path as the page writes it: ``runtime/launch.py``, ``numba_tile/errors.py``,
# ``tests/test_layers.py``
_PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.(?:py|rst|toml|cfg|md))\b")
_DOTTED = re.compile(r"\bnumba_tile(?:\.\w+)+")


def _module_paths():
    """Each module's path inside the package (``runtime/launch.py``); a package by its
    folder (``runtime/``)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative == "__init__.py":
            continue
        yield relative[:-len("__init__.py")] if path.name == "__init__.py" else relative


def test_every_module_is_named():
    missing = [path for path in _module_paths() if path not in DOC]
    assert not missing, "docs/architecture.rst does not name: " + ", ".join(missing)


def _exists(path):
    candidates = [ROOT / path, PACKAGE / path]
    candidates += [ROOT / folder / path for folder in ("docs", "tests")]
    return any(candidate.exists() for candidate in candidates)


def test_every_path_it_names_exists():
    named = {path.removeprefix("numba_tile/") for path in _PATH.findall(DOC)}
    assert "runtime/launch.py" in named  # the pattern finds what the page writes
    missing = sorted(path for path in named if not _exists(path))
    assert not missing, "docs/architecture.rst names files that do not exist: " + \
        ", ".join(missing)


def _resolves(dotted):
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def test_every_dotted_name_it_gives_exists():
    missing = sorted(name for name in set(_DOTTED.findall(DOC)) if not _resolves(name))
    assert not missing, "docs/architecture.rst names what does not exist: " + \
        ", ".join(missing)
