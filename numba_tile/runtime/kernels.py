"""Kernel objects: a tile kernel's function, its options (each may be a ``ByTarget``) and its
caches. The ``ct.kernel`` decorator that makes them is :mod:`.kernel_decorator`'s.

>>> import numba_tile as ct
>>> @ct.kernel(occupancy=2)
... def k(x):
...     pass
>>> k.options["occupancy"], k.replace_hints(occupancy=4).options["occupancy"]
(2, 4)
"""

import functools
import inspect

from ..annotations import parameter_kinds
from ..errors import SourceLocation, TileUnsupportedFeatureError
from ..compiler.kernel_compiler import parse_arch
from ..rules.syntax import check_kernel_source
from ..source.source_code import deep_syntax_trees


class ByTarget:
    """An option value chosen by compile target: ``ByTarget(sm_90=8, default=4)``.

    >>> import numba_tile as ct
    >>> ct.ByTarget(sm_90=8, default=4).resolve("sm_90"), ct.ByTarget(default=4).resolve("sm_80")
    (8, 4)
    """

    _MISSING = object()

    def __init__(self, *, default=_MISSING, **value_by_target):
        self.default = default
        self.value_by_target = {}
        for key, value in value_by_target.items():
            try:
                target = _target(key)
            except ValueError as error:  # (sm_100a, sm_91: never chosen by a compile)
                raise ValueError(f"ByTarget keys look like 'sm_90': {error}") from None
            if target in self.value_by_target:
                raise ValueError(f"ByTarget has two values for {target}")
            self.value_by_target[target] = value

    def resolve(self, target):
        """The value for ``target`` (``"sm_90"``), else the default; None (the option's own
        default) where no default was given.

        >>> import numba_tile as ct
        >>> print(ct.ByTarget(sm_100=16).resolve("sm_90"))
        None
        """
        try:
            target = _target(target)
        except ValueError:
            pass
        if target in self.value_by_target:
            return self.value_by_target[target]
        if self.default is ByTarget._MISSING:
            return None
        return self.default

    def values(self):
        out = list(self.value_by_target.values())
        if self.default is not ByTarget._MISSING:
            out.append(self.default)
        return out

    def __repr__(self):
        items = [f"{k}={v!r}" for k, v in self.value_by_target.items()]
        if self.default is not ByTarget._MISSING:
            items.append(f"default={self.default!r}")
        return f"ByTarget({', '.join(items)})"


def _target(arch):
    """The target a compile for ``arch`` is (``sm_90`` for ``sm_90a``), or ValueError."""
    major, minor = parse_arch(arch)
    return f"sm_{major}{minor}"


def _check(name, valid, description):
    def check(value):
        for v in (value.values() if isinstance(value, ByTarget) else [value]):
            if v is not None and not valid(v):
                raise ValueError(f"{name} must be {description}, got {v!r}")
    return check


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


_OPTION_CHECKS = {
    "num_ctas": _check("num_ctas", lambda v: _int(v) and v in (1, 2, 4, 8, 16),
                       "a power of two in 1..16"),
    "occupancy": _check("occupancy", lambda v: _int(v) and 1 <= v <= 32, "an int in 1..32"),
    "opt_level": _check("opt_level", lambda v: _int(v) and 0 <= v <= 3, "an int in 0..3"),
    "num_worker_warps": _check("num_worker_warps",
                               lambda v: _int(v) and v in (1, 2, 4, 8, 16, 32),
                               "a power of two in 1..32"),
    # numba_tile's own option: warps per thread block on the GPU (None: chosen automatically)
    "num_warps": _check("num_warps", lambda v: _int(v) and v in (1, 2, 4, 8, 16, 32),
                        "a power of two in 1..32"),
    # and: shared-memory stages of the pipelined loads that feed mma in a loop (None: chosen
    # by size; 1: no pipelining)
    "num_stages": _check("num_stages", lambda v: _int(v) and 1 <= v <= 8, "an int in 1..8"),
    # and: a producer warp that issues the copies of the pipelined loads (on sm_90; None:
    # where it pays, see CompileState.producer_warps)
    "warp_specialize": _check("warp_specialize", lambda v: isinstance(v, bool),
                              "True, False or None"),
}
_DEFAULTS = {"num_ctas": None, "occupancy": None, "opt_level": 3, "num_worker_warps": None,
             "num_warps": None, "num_stages": None, "warp_specialize": None}


def validate_options(options):
    for name, value in options.items():
        if name not in _OPTION_CHECKS:
            raise TypeError(f"Unknown kernel option {name!r}; options are "
                            f"{', '.join(_OPTION_CHECKS)}")
        _OPTION_CHECKS[name](value)
    return options


def require_kernel(kernel):
    """Raise the ``TypeError`` of a launch, a compile or an export given ``kernel`` that is
    no tile kernel, in the same words for each (the traceback names the call).

    >>> from numba_tile.runtime.kernels import require_kernel
    >>> require_kernel(len)
    Traceback (most recent call last):
    ...
    TypeError: Expected a @ct.kernel function, got <built-in function len>; decorate the ...
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"Expected a @ct.kernel function, got {kernel!r}; decorate the "
                        f"function with @ct.kernel")


class Kernel:
    """A tile kernel: start it with ``ct.launch(stream, grid, kernel, args)``.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def k():
    ...     pass
    >>> k()
    Traceback (most recent call last):
    ...
    TypeError: Tile kernel 'k' cannot be called directly; use ct.launch(stream, grid, k, args)
    """

    is_tile_kernel = True  # (what tile code may not call: numba_tile.rules.calls)

    def __init__(self, fn, options):
        self.fn = fn
        self.options = dict(_DEFAULTS, **validate_options(options))
        self.parameters = list(inspect.signature(fn).parameters)
        self._parameter_kinds = None
        self._source_checked = False
        self.compile_cache = {}  # (argument types, arch) -> CompiledKernel or TileError
        self.gpu_cache = {}  # launch signature -> kernel loaded on the device
        self.launch_plans = []  # the launch_plans of signatures launched (a new list each)
        functools.update_wrapper(self, fn)

    def check_source(self):
        """Raise the Tile error for Python that tile code does not take
        (:mod:`numba_tile.rules.syntax`); both executors call it first. Checked once."""
        if not self._source_checked:
            with deep_syntax_trees():  # (a long expression's tree is deep)
                check_kernel_source(self.fn)
            self._source_checked = True

    def check_clusters(self, arch=None):
        """Raise ``TileUnsupportedFeatureError`` where ``num_ctas`` (for ``arch``; its
        default where None, as the interpreter has no target) asks for a cluster of more than
        one CTA a block, which numba_tile does not compile yet: both executors refuse it
        rather than run the kernel otherwise than asked.

        >>> import numba_tile as ct
        >>> @ct.kernel(num_ctas=ct.ByTarget(sm_100=2, default=1))
        ... def k(x):
        ...     pass
        >>> k.check_clusters("sm_90")
        >>> k.check_clusters("sm_100")
        Traceback (most recent call last):
        ...
        numba_tile.errors.TileUnsupportedFeatureError: num_ctas=2 (a cluster of 2 CTAs for each block) is not supported yet: ...
        ...
        """
        value = self.options.get("num_ctas")
        if isinstance(value, ByTarget):
            value = value.resolve(arch) if arch is not None else \
                (None if value.default is ByTarget._MISSING else value.default)
        if value in (None, 1):
            return
        code = self.fn.__code__
        raise TileUnsupportedFeatureError(
            f"num_ctas={value} (a cluster of {value} CTAs for each block) is not supported "
            f"yet: numba_tile runs each block on one CTA; leave num_ctas at 1 or None",
            SourceLocation(code.co_filename, code.co_firstlineno))

    @property
    def parameter_kinds(self):
        """Each parameter's annotation metadata (``Constant``, ``ScalarInt64``...) or None."""
        if self._parameter_kinds is None:  # lazily: postponed annotations may name later globals
            self._parameter_kinds = parameter_kinds(self.fn)
        return self._parameter_kinds

    @functools.cached_property
    def parameter_kind_list(self):
        """The metadata in parameter order (what a launch walks)."""
        return [self.parameter_kinds[p] for p in self.parameters]

    @property
    def _pyfunc(self):
        """The Python function the kernel was made from (cuTile's name for it)."""
        return self.fn

    def replace_hints(self, **hints):
        """A new kernel with some options replaced (and its own compile cache)."""
        options = {k: v for k, v in self.options.items() if k in hints or v != _DEFAULTS[k]}
        options.update(hints)
        return type(self)(self.fn, **options)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"Tile kernel {self.fn.__name__!r} cannot be called directly; use "
                        f"ct.launch(stream, grid, {self.fn.__name__}, args)")

    def __repr__(self):
        return f"<numba_tile kernel {self.fn.__qualname__}>"
