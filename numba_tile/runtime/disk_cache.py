"""The on-disk compile cache: compiled kernels stored in files, found again by a later process.

:func:`numba_tile.runtime.compile_entry.compile_for_types` looks here when its in-memory
cache (one per kernel object) misses, and stores every successful compile that produced a cubin; compile
errors stay in memory. An entry is one file named by its key, written atomically (a temporary
file in the same directory, then ``os.replace``), so concurrent processes never see half an
entry. A corrupt, truncated or unreadable entry counts as a miss: the kernel is recompiled and
the entry overwritten. Only the current user's entries are used: the directory must be theirs
alone and every entry carries an HMAC under their secret key
(:mod:`numba_tile.runtime.cache_trust`).

The directory is ``NUMBA_TILE_CACHE_DIR``, else cuTile's ``CUDA_TILE_CACHE_DIR`` (``0``,
``off``, ``none`` or empty turn the cache off, as in cuTile), else
``$XDG_CACHE_HOME/numba_tile``, else ``%LOCALAPPDATA%\\numba_tile`` on Windows, else
``~/.cache/numba_tile``; ``NUMBA_TILE_CACHE=0`` turns the disk cache off. The entries take at
most ``NUMBA_TILE_CACHE_SIZE`` bytes, else cuTile's ``CUDA_TILE_CACHE_SIZE``, else 2 GiB: a
store that goes past it deletes the entries used longest ago (a load marks an entry used).

The key (:func:`kernel_key`) hashes

* the kernel function: its source text (required: a kernel whose source cannot be found, such
  as one typed at the ``>>>`` prompt of a plain interpreter, is not cached on disk; Jupyter
  cells have their source and are), its module and qualified name, its code objects (bytecode,
  constants, names, nested code), defaults and closure values, and the current value of every
  global its code reads. Helpers of the user's code (plain Python or ``@ct.function``) reached
  that way are hashed the same way, recursively; a user module is hashed by the attributes the
  code reads from it; constants (numbers, strings, tuples, enum members, dtypes, NumPy arrays)
  by value; a dataclass by its fields and every function of its body and bases (tile code
  calls its dunders without naming them), an instance of one by its fields' values;
  functions, classes and modules of installed libraries by their qualified name;
* the argument types (their text shows the ``Constant`` values), the architecture and the
  kernel's options;
* the package fingerprint (computed once per process): a hash of every ``.py`` file of
  numba_tile, the Python version, the versions of numba, numba-cuda, llvmlite, NumPy and the
  CUDA wheels (NVVM, nvJitLink, cuda-bindings), and Numba's settings in the environment
  (``NUMBA_*`` variables, ``CUDA_HOME``).

Limits: a global of a kind the key does not know (an arbitrary object) makes the kernel
uncached on disk rather than risk a stale entry; compiles without a cubin (no nvJitLink) are
not stored; an edit of an installed library other than those named, an NVVM found outside the
wheels that changes version, or a change of the compiler's behaviour at run time (a test that
patches it) is not seen: set ``NUMBA_TILE_CACHE=0`` or delete the directory.

>>> import tempfile
>>> from numba_tile.runtime import disk_cache
>>> from numba_tile.compiler.kernel_compiler import CompiledKernel
>>> compiled = CompiledKernel("entry", "sm_90", "// ptx", b"cubin", "", 4)
>>> with tempfile.TemporaryDirectory() as directory:
...     disk_cache.store("ab" * 32, compiled, directory)
...     disk_cache.load("ab" * 32, directory).cubin
True
b'cubin'
"""

import builtins
import dataclasses
import dis
import enum
import hashlib
import importlib.metadata
import io
import os
import pickle
import sys
import tempfile
import types
import warnings
from pathlib import Path

import numpy as np

from ..compiler.kernel_compiler import CompiledKernel
from ..dtypes import DType
from ..source.source_code import source_lines
from ..source.user_code import is_user_code
from . import cache_trust
from .kernels import Kernel

FORMAT_VERSION = 3
ENTRY_SUFFIX = ".nbtile"  # the file name of an entry: its key, then this
_MAGIC = b"numba_tile compile cache\n"
_DIGEST_SIZE = hashlib.sha256().digest_size

# distributions whose version changes what a compile produces
_DISTRIBUTIONS = ("numba", "numba-cuda", "llvmlite", "numpy", "ml_dtypes", "cuda-bindings",
                  "cuda-toolkit", "nvidia-nvvm", "nvidia-nvjitlink", "nvidia-cuda-nvcc-cu12",
                  "nvidia-nvjitlink-cu12")


def cache_directory(environ=None):
    """The directory of the on-disk cache (a ``pathlib.Path``), or None when
    ``NUMBA_TILE_CACHE=0`` turns it off; read from ``environ`` (default ``os.environ``) at
    each call.

    >>> from numba_tile.runtime import disk_cache
    >>> str(disk_cache.cache_directory({"NUMBA_TILE_CACHE_DIR": "/tmp/tiles"}))
    '/tmp/tiles'
    >>> str(disk_cache.cache_directory({"XDG_CACHE_HOME": "/home/me/.xdg"}))
    '/home/me/.xdg/numba_tile'
    >>> print(disk_cache.cache_directory({"NUMBA_TILE_CACHE": "0"}))
    None
    >>> print(disk_cache.cache_directory({"CUDA_TILE_CACHE_DIR": "off"}))
    None
    """
    environ = os.environ if environ is None else environ
    if environ.get("NUMBA_TILE_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    configured = environ.get("NUMBA_TILE_CACHE_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    if "CUDA_TILE_CACHE_DIR" in environ:  # (cuTile's variable, read as cuTile reads it)
        configured = environ["CUDA_TILE_CACHE_DIR"]
        if configured.strip().lower() in ("0", "off", "none", ""):
            return None
        return Path(configured).expanduser()
    base = environ.get("XDG_CACHE_HOME", "").strip()
    if not base and sys.platform == "win32":
        base = environ.get("LOCALAPPDATA", "").strip()
    return Path(base or Path.home() / ".cache") / "numba_tile"


def kernel_key(kernel, arg_types, arch):
    """The cache key (64 hex digits) of compiling ``kernel`` for Numba ``arg_types`` and
    ``arch``, or None where the kernel cannot be cached on disk (no source, or a global the
    key cannot describe).

    >>> import numba_tile as ct
    >>> from numba.core import types
    >>> from numba_tile.runtime import disk_cache
    >>> @ct.kernel
    ... def k(x, N: ct.Constant[int]):
    ...     pass
    >>> one = disk_cache.kernel_key(k, (types.int32, types.literal(1)), "sm_90")
    >>> two = disk_cache.kernel_key(k, (types.int32, types.literal(2)), "sm_90")
    >>> len(one), one == two
    (64, False)
    """
    try:
        function = _Fingerprint().function(kernel.fn, require_source=True)
    except Exception:  # _Uncacheable, or a value the walk did not expect: never an error
        return None
    parts = (FORMAT_VERSION, _package_fingerprint(), function,
             tuple(f"{type(t).__module__}.{type(t).__qualname__}:{t}" for t in arg_types),
             arch, tuple(sorted((name, repr(value)) for name, value in kernel.options.items())))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def load(key, directory=None):
    """The ``CompiledKernel`` stored under ``key`` in ``directory`` (default: the cache
    directory), or None: missing, unreadable, corrupt or of another format all read as None.

    >>> import tempfile
    >>> from numba_tile.runtime import disk_cache
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     print(disk_cache.load("0" * 64, directory))
    None
    """
    directory = cache_directory() if directory is None else directory
    secret = None if directory is None else _trusted_secret(directory)
    if secret is None:
        return None
    path = _entry_path(directory, key)
    data = cache_trust.read_private_file(path, cache_trust.MAX_ENTRY_BYTES)
    if data is None:
        return None
    try:
        header = len(_MAGIC) + _DIGEST_SIZE
        if not data.startswith(_MAGIC) or len(data) < header:
            return None
        payload = data[header:]
        if not cache_trust.authentic(secret, payload, data[len(_MAGIC):header]):
            return None
        record = _PlainUnpickler(io.BytesIO(payload)).load()
        fields = record["fields"]
        if (record["format"] != FORMAT_VERSION or record["key"] != key
                or not isinstance(fields, dict) or not isinstance(fields.get("ptx"), str)
                or not isinstance(fields.get("name"), str)
                or not isinstance(fields.get("cubin"), bytes)):
            return None
    except Exception:  # whatever a damaged file makes pickle raise: a miss
        return None
    compiled = CompiledKernel.__new__(CompiledKernel)
    compiled.__dict__.update(fields)
    try:
        os.utime(path)  # used now: evicted last (see evict)
    except OSError:
        pass
    return compiled


def store(key, compiled, directory=None):
    """Write ``compiled`` (a ``CompiledKernel``) under ``key`` in ``directory`` (default: the
    cache directory), atomically; True when written. A directory that cannot be written is
    warned about once and skipped; a kernel without a cubin is not stored.

    >>> import tempfile
    >>> from numba_tile.runtime import disk_cache
    >>> from numba_tile.compiler.kernel_compiler import CompiledKernel
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     disk_cache.store("cd" * 32, CompiledKernel("e", "sm_80", "", None, "", 4), directory)
    False
    """
    directory = cache_directory() if directory is None else directory
    if directory is None or not isinstance(compiled.cubin, bytes):
        return False
    secret = _trusted_secret(directory)
    if secret is None:
        return False
    path = _entry_path(directory, key)
    try:
        payload = pickle.dumps({"format": FORMAT_VERSION, "key": key,
                                "fields": vars(compiled)}, protocol=4)
    except Exception:  # a field that is not plain data: not stored (load() would refuse it)
        return False
    data = _MAGIC + cache_trust.signature(secret, payload) + payload
    temporary = None
    try:
        os.makedirs(directory, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{key[:16]}-",
                                                 suffix=".tmp")
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
        evict(directory, size_limit(), keep=path)
        return True
    except OSError as error:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        _warn_once(directory, error)
        return False


DEFAULT_SIZE_LIMIT = 1 << 31  # bytes: 2 GiB, as cuTile's cache


def size_limit(environ=None):
    """The most bytes the cache's entries take: ``NUMBA_TILE_CACHE_SIZE``, else cuTile's
    ``CUDA_TILE_CACHE_SIZE``, else 2 GiB (a value that is not a whole number of bytes is
    warned about once, and the default used).

    >>> from numba_tile.runtime import disk_cache
    >>> disk_cache.size_limit({"CUDA_TILE_CACHE_SIZE": "1000"}), disk_cache.size_limit({})
    (1000, 2147483648)
    """
    environ = os.environ if environ is None else environ
    for name in ("NUMBA_TILE_CACHE_SIZE", "CUDA_TILE_CACHE_SIZE"):
        text = environ.get(name)
        if text is None:
            continue
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value >= 0:
            return value
        if name not in _warned_variables:
            _warned_variables.add(name)
            warnings.warn(f"{name}={text!r} is not a number of bytes; the compile cache "
                          f"keeps at most {DEFAULT_SIZE_LIMIT} bytes", RuntimeWarning,
                          stacklevel=4)
    return DEFAULT_SIZE_LIMIT


def evict(directory, limit, keep=None):
    """Delete the entries of the cache in ``directory`` used longest ago (by modification
    time: a load touches its entry) until they take at most ``limit`` bytes, never the
    entry ``keep``. Entries another process deletes meanwhile are skipped.

    >>> import os, tempfile
    >>> from numba_tile.runtime import disk_cache
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     for n, age in (("a", 30), ("b", 20), ("c", 10)):
    ...         path = os.path.join(directory, n * 64 + disk_cache.ENTRY_SUFFIX)
    ...         with open(path, "wb") as file:
    ...             _ = file.write(b"x" * 100)
    ...         os.utime(path, (1e9 - age, 1e9 - age))
    ...     disk_cache.evict(directory, 250)
    ...     sorted(name[0] for name in os.listdir(directory))
    ['b', 'c']
    """
    entries = []
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not name.endswith(ENTRY_SUFFIX):
            continue
        path = os.path.join(directory, name)
        try:
            found = os.stat(path)
        except OSError:
            continue
        entries.append((found.st_mtime, found.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        if keep is not None and os.path.abspath(path) == os.path.abspath(keep):
            continue
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass


def _trusted_secret(directory):
    """The secret key of the cache in ``directory``, or None (warned about once) where the
    directory is not the current user's alone (:mod:`numba_tile.runtime.cache_trust`)."""
    try:
        cache_trust.trusted_directory(directory)
        return cache_trust.secret_key(directory)
    except cache_trust.UntrustedCache as error:
        if str(directory) not in _warned_directories:
            _warned_directories.add(str(directory))
            warnings.warn(f"numba_tile does not use the compile cache in {directory}: {error}. "
                          f"Kernels are compiled without it; set NUMBA_TILE_CACHE_DIR to a "
                          f"directory of your own (mode 0700), or NUMBA_TILE_CACHE=0",
                          RuntimeWarning, stacklevel=4)
        return None


def _entry_path(directory, key):
    if len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
        raise ValueError(f"not a cache key: {key!r}")
    return os.path.join(directory, key + ENTRY_SUFFIX)


_warned_directories = set()
_warned_variables = set()  # (the size variables warned about, once each)


def _warn_once(directory, error):
    if str(directory) not in _warned_directories:
        _warned_directories.add(str(directory))
        warnings.warn(f"numba_tile cannot write its compile cache in {directory} ({error}); "
                      f"set NUMBA_TILE_CACHE_DIR to a writable directory, or NUMBA_TILE_CACHE=0",
                      RuntimeWarning, stacklevel=4)


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data only (dicts, lists, tuples, str, bytes, numbers): an entry can
    name no class or function, so reading one runs no code."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"cache entries hold plain data, not {module}.{name}")


# -- the package fingerprint --------------------------------------------------------------------
_fingerprint_of_process = []


def _package_fingerprint():
    """Hash of numba_tile's ``.py`` files, the Python version, the versions of the libraries
    the compile goes through and the ``NUMBA_*`` settings; computed once per process."""
    if not _fingerprint_of_process:
        package = os.path.dirname(os.path.abspath(__file__))
        _fingerprint_of_process.append(_fingerprint_of_installation(package))
    return _fingerprint_of_process[0]


def _fingerprint_of_installation(package):
    digest = hashlib.sha256()
    digest.update(repr((sys.version, sys.implementation.cache_tag)).encode())
    for name in _DISTRIBUTIONS:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = None
        digest.update(repr((name, version)).encode())
    # Numba's configuration (NUMBA_OPT, NUMBA_CUDA_DEBUGINFO...) and where CUDA is found
    settings = sorted((name, value) for name, value in os.environ.items()
                      if (name.startswith("NUMBA_") and not name.startswith("NUMBA_TILE_"))
                      or name in ("CUDA_HOME", "CUDA_PATH"))
    digest.update(repr(settings).encode())
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                digest.update(os.path.relpath(path, package).replace(os.sep, "/").encode())
                with open(path, "rb") as file:
                    digest.update(hashlib.sha256(file.read()).digest())
    return digest.hexdigest()


# -- the kernel fingerprint ---------------------------------------------------------------------
class _Uncacheable(Exception):
    """The kernel's identity cannot be written down cheaply and soundly: skip the disk."""


_GLOBAL_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"}
_ATTRIBUTE_LOADS = {"LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM", "LOAD_SUPER_ATTR"}


def _qualified(value):
    module = getattr(value, "__module__", None)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not isinstance(name, str):
        raise _Uncacheable(f"no name for {value!r}")
    return f"{module}.{name}"


class _Fingerprint:
    """A nested tuple of strings describing a kernel function and what its code reaches;
    functions and modules already on the walk are referred to by name (recursion)."""

    def __init__(self):
        self._seen = set()

    def function(self, fn, require_source=False):
        if id(fn) in self._seen:
            return ("function-ref", _qualified(fn))
        self._seen.add(id(fn))
        try:
            source = "".join(source_lines(fn)[0])
        except (OSError, TypeError):
            if require_source:
                raise _Uncacheable(f"no source for {fn.__qualname__}") from None
            source = None
        closure = ()
        if fn.__closure__:
            closure = tuple(self._cell(cell) for cell in fn.__closure__)
        return ("function", _qualified(fn), source, self._code(fn.__code__),
                self._globals(fn.__code__, fn.__globals__), closure,
                self.value(fn.__defaults__), self.value(fn.__kwdefaults__),
                self.value(getattr(fn, "__numba_tile_function__", None)))

    def _cell(self, cell):
        try:
            return self.value(cell.cell_contents)
        except ValueError:  # a cell not assigned yet
            return ("empty cell",)

    def _code(self, code):
        consts = tuple(self._code(c) if isinstance(c, types.CodeType) else self.value(c)
                       for c in code.co_consts)
        return ("code", code.co_name, code.co_code, consts, code.co_names, code.co_varnames,
                code.co_freevars, code.co_cellvars, code.co_argcount, code.co_posonlyargcount,
                code.co_kwonlyargcount, code.co_flags)

    def _globals(self, code, module_globals):
        """The value of every global the code (and its nested code) reads."""
        names, attributes = set(), set()
        stack = [code]
        while stack:
            current = stack.pop()
            stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
            for instruction in dis.get_instructions(current):
                if instruction.opname in _GLOBAL_LOADS:
                    names.add(instruction.argval)
                elif instruction.opname in _ATTRIBUTE_LOADS:
                    attributes.add(instruction.argval)
        attributes = frozenset(a for a in attributes if isinstance(a, str))
        out = []
        for name in sorted(n for n in names if isinstance(n, str)):
            if name in module_globals:
                out.append((name, self.value(module_globals[name], attributes)))
            else:
                out.append((name, "builtin" if hasattr(builtins, name) else "undefined"))
        return tuple(out)

    def value(self, value, attributes=frozenset()):
        """A global, closure value, default or constant, by value where it can matter."""
        if value is None or value is Ellipsis or type(value) in (bool, int, float, complex, str,
                                                                 bytes):
            return (type(value).__name__, repr(value))
        if isinstance(value, enum.Enum):
            return ("enum", _qualified(type(value)), value.name, repr(value.value))
        if isinstance(value, (tuple, list)):
            return (type(value).__name__,) + tuple(self.value(v, attributes) for v in value)
        if isinstance(value, (set, frozenset)):
            return (type(value).__name__,) + tuple(sorted(repr(self.value(v)) for v in value))
        if isinstance(value, dict):
            return ("dict",) + tuple(sorted((repr(self.value(k)), self.value(v, attributes))
                                            for k, v in value.items()))
        if isinstance(value, types.CodeType):
            return self._code(value)
        if isinstance(value, types.FunctionType):
            if is_user_code(value) or hasattr(value, "__numba_tile_function__"):
                return self.function(value)
            return ("library function", _qualified(value))
        if isinstance(value, types.ModuleType):
            if not is_user_code(value):
                return ("module", value.__name__)
            if (id(value), attributes) in self._seen:
                return ("module-ref", value.__name__)
            self._seen.add((id(value), attributes))
            return ("user module", value.__name__) + tuple(
                (name, self.value(getattr(value, name), attributes))
                for name in sorted(attributes) if hasattr(value, name))
        if isinstance(value, Kernel):
            return ("kernel", self.function(value.fn),
                    tuple(sorted((k, repr(v)) for k, v in value.options.items())))
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise _Uncacheable("an object array")
            return ("ndarray", value.dtype.str, value.shape,
                    hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest())
        if isinstance(value, (np.generic, np.dtype, DType)):
            return (type(value).__name__, repr(value))
        if dataclasses.is_dataclass(value):
            return self._dataclass(value)
        if isinstance(value, type):
            if issubclass(value, enum.Enum):
                return ("enum class", _qualified(value)) + tuple(
                    (m.name, repr(m.value)) for m in value)
            module = sys.modules.get(value.__module__)
            if module is not None and is_user_code(module):
                return ("user class", _qualified(value)) + tuple(
                    (name, self.value(getattr(value, name), attributes))
                    for name in sorted(attributes) if name in vars(value))
            return ("class", _qualified(value))
        if isinstance(value, (types.BuiltinFunctionType, np.ufunc)):
            return ("builtin", _qualified(value))
        if (type(value).__module__ or "").split(".")[0] == "numba_tile":
            return ("numba_tile object", _qualified(type(value)), repr(value))
        raise _Uncacheable(f"a global of type {type(value).__name__}")

    def _dataclass(self, value):
        """A dataclass by everything of it tile code may run (its fields, every function
        its body or its bases define: tile code calls dunders and methods of ``self``
        without naming them), an instance by its class and its fields' values."""
        if not isinstance(value, type):
            return ("dataclass instance", self._dataclass(type(value))) + tuple(
                self.value(getattr(value, field.name)) for field in dataclasses.fields(value))
        if id(value) in self._seen:
            return ("dataclass-ref", _qualified(value))
        self._seen.add(id(value))
        members = []
        for klass in value.__mro__[:-1]:
            for name, member in sorted(vars(klass).items()):
                member = getattr(member, "fget", getattr(member, "__func__", member))
                if isinstance(member, types.FunctionType):
                    members.append((name, self.function(member)))
                elif not name.startswith("__"):
                    members.append((name, self.value(member)))
        return ("dataclass", _qualified(value), repr(value.__dataclass_params__),
                tuple((f.name, f.init, getattr(f, "kw_only", False),
                       ("no default",) if f.default is dataclasses.MISSING
                       else self.value(f.default),
                       f.default_factory is not dataclasses.MISSING)
                      for f in dataclasses.fields(value)), tuple(members))
