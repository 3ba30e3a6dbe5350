"""Sphinx configuration for the numba_tile documentation.

Build the HTML pages with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
and run every example in them with ``python -m sphinx -b doctest docs docs/_build/doctest``.
"""

import os
import sys

import numba_tile

# The examples (the docstrings' included) launch kernels on the CPU: no GPU is needed to build.
os.environ.setdefault("NUMBA_TILE_INTERPRET", "1")

# Our own small extension (tables rendered from numba_tile's code) lives next to this file.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

project = "numba_tile"
author = "numba_tile developers"
copyright = "2025, numba_tile developers"
release = numba_tile.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "numba_tile_tables",
]

root_doc = "index"
exclude_patterns = ["_build"]
nitpicky = False
default_role = "code"

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_default_options = {"show-inheritance": False}

# Examples run with the same flags as tests/test_docstrings.py, in interpreter mode.
doctest_global_setup = """
import os
os.environ["NUMBA_TILE_INTERPRET"] = "1"
import numpy as np
import numba_tile as ct
"""
import doctest as _doctest  # noqa: E402
doctest_default_flags = (_doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE
                         | _doctest.IGNORE_EXCEPTION_DETAIL)

html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["numba_tile.css"]
html_theme_options = {
    "description": "cuTile's tile programming model for Numba",
    "page_width": "1100px",
    "sidebar_width": "220px",
}
