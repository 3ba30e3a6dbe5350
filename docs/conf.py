"""Sphinx configuration for the numba_tile documentation.

Build the HTML pages with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
and run every example in them with ``python -m sphinx -b doctest docs docs/_build/doctest``.
"""

import doctest
import os
import sys

import numba_tile

# Our own small extension (tables rendered from numba_tile's code) lives next to this file.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

project = "numba_tile"
author = "numba_tile developers"
copyright = "numba_tile developers"
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

# The examples (the docstrings' included) launch kernels on the CPU in interpreter mode, so
# no GPU is needed, with the flags of tests/test_docstrings.py. The environment variable is
# restored after each document: the builder may run inside a test session. Examples that
# need a GPU are marked ``:skipif: not gpu_available``.
doctest_global_setup = """
import os
_saved_interpret_env = os.environ.get("NUMBA_TILE_INTERPRET")
os.environ["NUMBA_TILE_INTERPRET"] = "1"
import numpy as np
import numba_tile as ct
try:
    from numba import cuda as _numba_cuda
    gpu_available = _numba_cuda.is_available()
except Exception:  # no usable CUDA driver: the GPU examples are skipped
    gpu_available = False
"""
doctest_global_cleanup = """
if _saved_interpret_env is None:
    os.environ.pop("NUMBA_TILE_INTERPRET", None)
else:
    os.environ["NUMBA_TILE_INTERPRET"] = _saved_interpret_env
"""
doctest_default_flags = (doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
                         | doctest.IGNORE_EXCEPTION_DETAIL)

html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["numba_tile.css"]
html_theme_options = {
    "description": "cuTile's tile programming model for Numba",
    "page_width": "1100px",
    "sidebar_width": "220px",
}
