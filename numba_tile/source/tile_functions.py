"""Helpers marked for tile code: ``ct.function`` writes the marker
``__numba_tile_function__`` (``{"host": ..., "tile": ...}``, plus ``"function"``, the helper
itself, on the host-side stand-in of a helper not callable from the host), and
:func:`tile_function` reads it back. The interpreter, the compiler's frontend and the rules
of ``ct.reduce``/``ct.scan`` all find the function tile code runs through it; numba_tile's own
helpers written as tile code (:mod:`numba_tile.language.combiners`) are marked alike.

>>> import numba_tile as ct
>>> @ct.function
... def twice(t):
...     return t * 2
>>> twice.__numba_tile_function__["host"]
False
"""

import functools


def function(func=None, /, *, host=False, tile=True):
    """Mark a helper callable from tile code (inlined); ``host=True`` keeps it callable from
    host code too (without it, a call from the host is a ``RuntimeError``, as in cuTile).
    Plain undecorated helpers work in kernels as well.

    >>> import numba_tile as ct
    >>> @ct.function
    ... def twice(t):
    ...     return t * 2
    >>> @ct.kernel
    ... def show():
    ...     print(twice(ct.arange(2, dtype=ct.int32)))
    >>> ct.launch(0, (1,), show, ())
    [0, 2]
    """
    def mark(fn):
        fn.__numba_tile_function__ = {"host": host, "tile": tile}
        if host:
            return fn

        @functools.wraps(fn)
        def device_only(*args, **kwargs):
            raise RuntimeError("Device functions can only be called from device code.")
        device_only.__numba_tile_function__ = dict(fn.__numba_tile_function__, function=fn)
        return device_only
    return mark if func is None else mark(func)


def tile_function(value):
    """The function tile code runs for ``value``: the helper a ``@ct.function`` marked
    (not its host-side stand-in), else ``value`` itself.

    >>> import numba_tile as ct
    >>> from numba_tile.source.tile_functions import tile_function
    >>> def twice(t):
    ...     return t * 2
    >>> tile_function(ct.function(twice)) is twice
    True
    """
    marked = getattr(value, "__numba_tile_function__", None)
    return marked.get("function", value) if isinstance(marked, dict) else value
