"""What numba_tile changes in numba-cuda's front end while a kernel compiles.

Python that tile code uses and Numba's front end lacks is added by replacing a few of its
functions for the time of a compile: each module that needs one lists its replacements as
``PATCHES`` (``(owner, name, replacement)``) and :func:`python_frontend` puts them all in
place. The compiler lock is held meanwhile, so no other compilation (an ordinary
``numba.cuda`` kernel) sees them.

>>> from numba_tile.compiler.frontend import numba_patches
>>> from numba.cuda.core.untyped_passes import InlineInlinables
>>> original = InlineInlinables._do_work
>>> with numba_patches.python_frontend():
...     InlineInlinables._do_work is original
False
>>> InlineInlinables._do_work is original
True
"""

import contextlib

from numba.cuda.core.compiler_lock import global_compiler_lock

from ..typing import global_reads, settled_errors
from . import bytecode_columns, call_sites, closures, inlining, variable_versions

_PATCHES = bytecode_columns.PATCHES + closures.PATCHES + inlining.PATCHES + settled_errors.PATCHES + call_sites.PATCHES + \
    global_reads.PATCHES + variable_versions.PATCHES


@contextlib.contextmanager
def python_frontend():
    """Put every replacement of :data:`_PATCHES` in place while the block runs."""
    with global_compiler_lock:
        saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in _PATCHES]
        for owner, name, replacement in _PATCHES:
            setattr(owner, name, replacement)
        try:
            yield
        finally:
            for owner, name, original in saved:
                setattr(owner, name, original)
