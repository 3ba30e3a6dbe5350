"""cuTile (NVIDIA's ``cuda.tile``) as a reference implementation, where it can be imported.

numba_tile's benchmark kernels are written in cuTile's API, so cuTile compiles the very same
source. Its implementation of a case is numba_tile's one (same inputs, outputs, grids and
launches) with every ``ct.launch`` sent to ``cuda.tile.launch`` and every kernel rebuilt for
cuTile: the same code object with the numba_tile module replaced by ``cuda.tile`` in its
globals, ``Constant`` annotations and ``ct.function`` helpers rebuilt the same way, and the
kernel options cuTile has (``occupancy``, ``num_ctas``, ``opt_level``, ``num_worker_warps``)
kept. ``num_warps`` and ``num_stages`` are numba_tile's own: cuTile's compiler chooses those,
so the parameter sets that differ only in them are tried once. The compiler is the only
difference between the two columns.

Without cuTile (``import cuda.tile`` fails) the benchmark leaves its column out:

>>> from numba_tile.bench import cutile
>>> cutile.cutile_version() is None or isinstance(cutile.cutile_version(), str)
True
>>> cutile.cutile_params(({"rows": 1}, {"rows": 1, "num_warps": 8}, {"rows": 2}))
({'rows': 1}, {'rows': 2})
"""

import contextlib
import functools
import types
import typing

import numba_tile
from numba_tile.annotations import ConstantAnnotation
from .case_types import Implementation

try:
    import cuda.tile as _installed
    IMPORT_ERROR = None
except Exception as error:  # not installed, or installed without its CUDA libraries
    _installed = None
    IMPORT_ERROR = f"{type(error).__name__}: {error}".splitlines()[0]

NAME = "cutile"
# kernel options both projects have; the others are numba_tile's own
CUTILE_OPTIONS = ("num_ctas", "occupancy", "opt_level", "num_worker_warps")
NUMBA_TILE_ONLY_PARAMS = ("num_warps", "num_stages")


def installed():
    """The ``cuda.tile`` module, or None where it cannot be imported.

    >>> from numba_tile.bench.cutile import installed
    >>> installed() is None or installed().__name__ == "cuda.tile"
    True
    """
    return _installed


def cutile_version(module=None):
    """The version of ``module`` (default: the installed ``cuda.tile``), or None without one.

    >>> import types
    >>> from numba_tile.bench.cutile import cutile_version
    >>> cutile_version(types.SimpleNamespace(__version__="1.2.0"))
    '1.2.0'
    """
    module = module or _installed
    return None if module is None else str(getattr(module, "__version__", "unknown"))


def references(case, module=None):
    """``[cuTile's implementation of case]``: numba_tile's implementation with its launches
    sent to ``module`` (default: the installed ``cuda.tile``); ``[]`` where there is no
    such module or no numba_tile implementation.

    >>> import numba_tile as ct
    >>> from numba_tile.bench import cases
    >>> from numba_tile.bench.cutile import references
    >>> [i.name for i in references(cases.all_cases()[0], module=ct)]  # ct standing in
    ['cutile']
    """
    module = module or _installed
    ours = [i for i in case.implementations if i.name == "numba_tile"]
    if module is None or not ours:
        return []
    return [cutile_implementation(ours[0], module)]


def cutile_implementation(implementation, module):
    """``implementation`` (a numba_tile one) run by cuTile: its ``prepare`` makes the same
    inputs and outputs, and each run sends its ``ct.launch`` calls to ``module.launch`` with
    the kernels rebuilt by :func:`translate_kernel`. A run that launches nothing through
    ``numba_tile.launch`` is a ``RuntimeError`` (it would time numba_tile under cuTile's
    name).

    >>> import numba_tile as ct
    >>> from numba_tile.bench.case_types import Implementation
    >>> from numba_tile.bench.cutile import cutile_implementation
    >>> ours = Implementation("numba_tile", print, ({"rows": 1, "num_warps": 4}, {"rows": 2}))
    >>> theirs = cutile_implementation(ours, module=ct)
    >>> theirs.name, theirs.params
    ('cutile', ({'rows': 1}, {'rows': 2}))
    """
    def prepare(*inputs, **params):
        run = implementation.prepare(*inputs, **params)

        def run_with_cutile():
            with launches_sent_to(module) as launches:
                out = run()
            if not launches:
                raise RuntimeError("the numba_tile implementation launched nothing through "
                                   "numba_tile.launch: there is nothing to send to cuTile")
            return out
        return run_with_cutile
    return Implementation(NAME, prepare, cutile_params(implementation.params))


def cutile_params(params):
    """The parameter sets without numba_tile's own options, each once, in order.

    >>> from numba_tile.bench.cutile import cutile_params
    >>> cutile_params(({"tile": 1024}, {"tile": 1024, "num_warps": 8, "occupancy": 2}))
    ({'tile': 1024}, {'tile': 1024, 'occupancy': 2})
    """
    kept = []
    for p in params:
        p = {k: v for k, v in p.items() if k not in NUMBA_TILE_ONLY_PARAMS}
        if p not in kept:
            kept.append(p)
    return tuple(kept)


@contextlib.contextmanager
def launches_sent_to(module):
    """Within the block, ``numba_tile.launch(stream, grid, kernel, args)`` launches
    :func:`translate_kernel(kernel, module) <translate_kernel>` with ``module.launch``
    instead; the block gets the list of the launches sent (kernel names). Not thread-safe:
    the benchmark runs one thing at a time.

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.bench import kernels
    >>> from numba_tile.bench.cutile import launches_sent_to
    >>> a = np.arange(4, dtype=np.float32); c = np.zeros(4, np.float32)
    >>> with ct.interpret(), launches_sent_to(ct) as launches:  # numba_tile as the "cuTile"
    ...     ct.launch(0, (1,), kernels.vector_add, (a, a, c, 4))
    >>> launches, c
    (['vector_add'], array([0., 2., 4., 6.], dtype=float32))
    """
    original = numba_tile.launch
    send = module.launch  # taken before the swap: ``module`` may be numba_tile itself
    launches = []

    def launch(stream, grid, kernel, kernel_args, /, **options):
        launches.append(kernel.__name__)
        send(stream, grid, translate_kernel(kernel, module), kernel_args, **options)
    numba_tile.launch = launch
    try:
        yield launches
    finally:
        numba_tile.launch = original


@functools.lru_cache(maxsize=None)
def translate_kernel(kernel, module):
    """The numba_tile ``kernel`` as a ``module.kernel`` (``cuda.tile``): its function rebuilt
    by :func:`translate_function`, with the options both projects have (one object per
    kernel and module, so that cuTile keeps its compile cache across launches).

    >>> import numba_tile as ct
    >>> from numba_tile.bench import kernels
    >>> from numba_tile.bench.cutile import translate_kernel
    >>> theirs = translate_kernel(kernels.vector_add.replace_hints(num_warps=8, occupancy=2),
    ...                           module=ct)
    >>> theirs.options["occupancy"], theirs.options["num_warps"]
    (2, None)
    """
    defaults = type(kernel)(kernel.fn).options
    options = {name: value for name, value in kernel.options.items()
               if name in CUTILE_OPTIONS and value != defaults[name]}
    return module.kernel(translate_function(kernel.fn, module), **options)


def translate_function(fn, module):
    """``fn`` with the numba_tile module replaced by ``module`` wherever its code looks it
    up: in its globals and closure, in the helpers it calls (``ct.function`` helpers become
    ``module.function`` ones) and in its ``Constant`` annotations.

    >>> import types, numba_tile as ct
    >>> from numba_tile.bench import kernels
    >>> from numba_tile.bench.cutile import translate_function
    >>> other = types.SimpleNamespace(Constant=ct.Constant,
    ...                               function=lambda fn, host, tile: fn)
    >>> fn = translate_function(kernels.matmul.fn, other)
    >>> fn.__globals__["ct"] is other, fn.__globals__["math"] is kernels.math
    (True, True)
    >>> helper = translate_function(kernels.attention.fn, other).__globals__["_attention_block"]
    >>> helper.__globals__["ct"] is other
    True
    """
    return _Translator(module).function(fn)


class _Translator:
    """Rebuilds functions for another module; each function and each globals dictionary is
    rebuilt once, so helpers that call each other stay consistent."""

    def __init__(self, module):
        self.module = module
        self.functions = {}

    def function(self, fn):
        if fn in self.functions:
            return self.functions[fn]
        new_globals = dict(fn.__globals__)
        # fresh cells, filled below: a kernel defined in a function sees its helpers there
        cells = tuple(types.CellType() for _ in fn.__closure__ or ())
        new = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__,
                                 cells or None)
        self.functions[fn] = new  # before the globals: a helper may call this function
        for old_cell, cell in zip(fn.__closure__ or (), cells):
            try:
                cell.cell_contents = self.value(old_cell.cell_contents)
            except ValueError:  # a cell not assigned yet stays empty
                pass
        new.__kwdefaults__ = fn.__kwdefaults__
        new.__qualname__, new.__module__, new.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
        new.__annotations__ = {name: self.annotation(a)
                               for name, a in fn.__annotations__.items()}
        for name in _names_used(fn.__code__):
            if name in new_globals:
                new_globals[name] = self.value(new_globals[name])
        return new

    def value(self, value):
        if value is numba_tile:
            return self.module
        marks = getattr(value, "__numba_tile_function__", None)
        if isinstance(marks, dict):  # a ct.function helper (the undecorated one is kept)
            helper = self.function(marks.get("function", value))
            return self.module.function(helper, host=marks.get("host", False),
                                        tile=marks.get("tile", True))
        if isinstance(value, types.FunctionType):  # a plain helper: inlined by either
            return self.function(value)
        return value

    def annotation(self, annotation):
        if annotation is numba_tile.Constant:
            return self.module.Constant
        if typing.get_origin(annotation) is typing.Annotated:
            inner, *metadata = typing.get_args(annotation)
            if any(isinstance(m, ConstantAnnotation) for m in metadata):
                return self.module.Constant[inner]
        return annotation


def _names_used(code):
    """The global names ``code`` and the code nested in it (comprehensions, lambdas) use."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names_used(constant)
    return names
