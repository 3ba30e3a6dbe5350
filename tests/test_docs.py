"""The Sphinx documentation builds without a warning, its examples run, and the API reference
covers every public name.
"""

import doctest
import re
import sys
import types
from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

import numba_tile
from numba_tile.dtypes import ALL_DTYPES
from numba_tile.promotion import table_dtype

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(autouse=True)
def isolate_sphinx(monkeypatch):
    """Undo what a Sphinx build leaves behind in this process: conf.py's ``sys.path`` entry,
    and the doctest builder's replacement of ``doctest.compile`` (it would make every later
    doctest in the session, tests/test_docstrings.py included, print nothing)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(doctest, "compile", compile, raising=False)


def test_html_builds_without_warnings(tmp_path):
    status = build_main(["-W", "--keep-going", "-q", "-b", "html", str(DOCS_DIR),
                         str(tmp_path / "html")])
    assert status == 0, "the documentation has warnings or errors (see the output above)"
    # The promotion table on the data model page is the package's own table.
    page = (tmp_path / "html" / "data_model.html").read_text()
    table = re.search(r'<table class="promotion-table.*?</table>', page, flags=re.DOTALL)
    assert table, "data_model.html has no promotion table"
    rows = [re.findall(r"<(?:td|th)[^>]*>(?:<p>)?([^<]*)", row)
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), flags=re.DOTALL)]
    expected = [[""] + [t.short_name for t in ALL_DTYPES]]
    expected += [[a.short_name] + [getattr(table_dtype(a, b), "short_name", "ERR")
                                   for b in ALL_DTYPES] for a in ALL_DTYPES]
    assert rows == expected


def test_examples_in_docs_run(tmp_path, monkeypatch):
    """Every ``>>>`` example and ``testcode`` block of the pages and of the docstrings they
    include prints what it claims (interpreter mode, see ``doctest_global_setup``)."""
    monkeypatch.delenv("NUMBA_TILE_INTERPRET", raising=False)
    status = build_main(["-q", "-b", "doctest", str(DOCS_DIR), str(tmp_path / "doctest")])
    report = (tmp_path / "doctest" / "output.txt")
    assert status == 0, report.read_text() if report.exists() else "doctest build failed"


def _documented_names(rst):
    directives = re.findall(r"^\.\. (?:auto(?:function|class|exception|data)|py:data|py:function|"
                            r"py:class)::\s+([\w.]+)", rst, flags=re.MULTILINE)
    names = {name.rsplit(".", 1)[-1] for name in directives}
    if ".. numba-tile-dtype-data::" in rst:
        names |= {dtype.name for dtype in ALL_DTYPES}
    return names


def test_api_reference_lists_every_public_name():
    public = {name for name in numba_tile.__all__
              if not isinstance(getattr(numba_tile, name), types.ModuleType)
              and name != "__version__"}
    documented = _documented_names((DOCS_DIR / "api.rst").read_text())
    missing = sorted(public - documented)
    assert not missing, f"docs/api.rst does not document: {', '.join(missing)}"


# -- claims that go stale: checked against the code -----------------------------------------------
DOCS = Path(__file__).resolve().parent.parent / "docs"


def _doc_text(name):
    return (DOCS / name).read_text()


def test_what_the_api_page_calls_missing_is_missing():
    """Every name under "Not in this release" (where the page has that section) is absent
    from numba_tile (a name that lands must leave the list), and no page sends the reader to
    a section that is not there."""
    import numba_tile as ct
    text = _doc_text("api.rst")
    if "Not in this release" not in text:
        for page in DOCS.glob("*.rst"):
            assert "Not in this release" not in page.read_text(), page.name
        return
    section = text.split("Not in this release")[1]
    names = re.findall(r"``(?:ct\.|numba_tile\.|Array\.)?([A-Za-z_]+)\*?(?:\(\))?``", section)
    assert names, section
    for name in names:
        if name.startswith("atomic_"):
            name = "atomic_add"
        present = hasattr(ct, name) or (name == "get_raw_memory" and
                                        "not in this release" not in
                                        (ct.Array.get_raw_memory.__doc__ or ""))
        assert not present, f"docs/api.rst lists {name} as not implemented, but it is"


def test_docs_name_no_issue_numbers_and_every_benchmark_case():
    from numba_tile.bench import cases
    pages = {path.name: path.read_text() for path in DOCS.glob("*.rst")}
    for name, text in pages.items():
        assert not re.search(r"\bissues? \d", text), f"{name} refers to an issue number"
    performance = pages["performance.rst"]
    for case in cases.all_cases():
        assert f"``{case.name}``" in performance, f"performance.rst lacks {case.name}"


def test_readme_builds_the_docs_where_conf_py_says():
    readme = (DOCS.parent / "README.md").read_text()
    conf = _doc_text("conf.py")
    command = "python -m sphinx -W --keep-going -b html docs docs/_build/html"
    assert command in readme and command in conf
