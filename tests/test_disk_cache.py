"""The on-disk compile cache (numba_tile/runtime/disk_cache.py): a fresh kernel object, or a new
process, finds a compile on disk; an edit of the kernel, of a helper or of the package, a new
Constant value, options or architecture miss; a corrupt entry is recompiled and rewritten.

Every test has a cache directory of its own; a compile is counted by the calls to
``compile_to_ptx``.
"""

import importlib.util
import linecache
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.runtime import cache_trust, disk_cache
from numba_tile.runtime import compile_entry as compiling
from numba_tile.compiler.kernel_compiler import CompiledKernel

X = np.zeros(1024, np.float32)


def vector_add(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))


def mixed_signedness(a, b):
    ct.store(a, (0,), ct.load(a, (0,), (4,)) + ct.load(b, (0,), (4,)))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("NUMBA_TILE_CACHE_DIR", str(directory))
    monkeypatch.delenv("NUMBA_TILE_CACHE", raising=False)
    return directory


@pytest.fixture
def compiles(monkeypatch, cache_dir):
    """The functions ``compile_to_ptx`` was called with (one per real compile)."""
    calls = []
    real = compiling.compile_to_ptx

    def counting(fn, *args, **kwargs):
        calls.append(fn)
        return real(fn, *args, **kwargs)
    monkeypatch.setattr(compiling, "compile_to_ptx", counting)
    return calls


def entries(directory):
    return sorted(p for p in directory.glob("*.nbtile")) if directory.exists() else []


def compile_vector_add(tile=256, **options):
    """Compile ``vector_add`` through a new kernel object (an empty memory cache)."""
    return ct.compile(ct.kernel(vector_add, **options), (X, X, X, tile), arch="sm_90")


def test_a_fresh_kernel_object_finds_the_compile_on_disk(compiles, cache_dir):
    first = compile_vector_add()
    assert len(compiles) == 1 and len(entries(cache_dir)) == 1
    second = compile_vector_add()
    assert len(compiles) == 1
    assert isinstance(second, CompiledKernel) and second is not first
    assert vars(second) == vars(first)  # every field comes back: ptx, cubin, report, warps...
    assert second.registers == first.registers > 0 and second.cubin == first.cubin
    assert not [p for p in cache_dir.iterdir() if p.suffix == ".tmp"]


def test_memory_cache_comes_first(compiles, cache_dir):
    kernel = ct.kernel(vector_add)
    first = ct.compile(kernel, (X, X, X, 256))
    assert ct.compile(kernel, (X, X, X, 256)) is first and len(compiles) == 1


def test_distinct_constant_values_are_distinct_entries(compiles, cache_dir):
    a, b = compile_vector_add(128), compile_vector_add(256)
    assert len(compiles) == 2 and len(entries(cache_dir)) == 2
    assert compile_vector_add(128).ptx == a.ptx and compile_vector_add(256).ptx == b.ptx
    assert len(compiles) == 2


def test_arch_and_options_are_part_of_the_key(compiles, cache_dir):
    compile_vector_add()
    ct.compile(ct.kernel(vector_add), (X, X, X, 256), arch="sm_80")
    compile_vector_add(num_warps=8)
    assert len(compiles) == 3 and len(entries(cache_dir)) == 3
    assert compile_vector_add(num_warps=8).num_warps == 8 and len(compiles) == 3


def test_a_package_edit_misses(compiles, cache_dir, monkeypatch):
    compile_vector_add()
    monkeypatch.setattr(disk_cache, "_package_fingerprint", lambda: "numba_tile, edited")
    compile_vector_add()
    assert len(compiles) == 2 and len(entries(cache_dir)) == 2


def test_the_package_fingerprint_covers_every_source_file(tmp_path):
    assert disk_cache._package_fingerprint() == disk_cache._package_fingerprint()  # memoized
    package = tmp_path / "numba_tile"
    shutil.copytree(os.path.dirname(os.path.abspath(ct.__file__)), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    original = disk_cache._fingerprint_of_installation(package)
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "x.pyc").write_bytes(b"bytecode")
    assert disk_cache._fingerprint_of_installation(package) == original
    lowering = package / "compiler" / "lowering" / "elementwise.py"
    lowering.write_text(lowering.read_text() + "# an edit\n")
    edited = disk_cache._fingerprint_of_installation(package)
    assert edited != original
    (package / "compiler" / "frontend" / "new_pass.py").write_text("")
    assert disk_cache._fingerprint_of_installation(package) not in (original, edited)


MODULE = """
import numba_tile as ct

SCALE = {scale}


def helper(t):
    return t * {helper_factor}


@ct.kernel
def scaled_copy(a, b, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(b, (i,), helper(ct.load(a, (i,), (TILE,))) + SCALE)
"""


def import_file(path, name):
    """A fresh import of the module in ``path`` (no bytecode cache, so an edit is seen)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kernel_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "edited_kernels.py"

    def write(scale=1, helper_factor=2):
        path.write_text(MODULE.format(scale=scale, helper_factor=helper_factor))
        return import_file(path, "edited_kernels").scaled_copy
    return write


def test_an_edit_of_the_kernel_misses(compiles, cache_dir, kernel_file):
    compiled = ct.compile(kernel_file(scale=1), (X, X, 256))
    assert ct.compile(kernel_file(scale=1), (X, X, 256)).ptx == compiled.ptx  # re-import: hit
    assert len(compiles) == 1
    edited = ct.compile(kernel_file(scale=3), (X, X, 256))  # SCALE = 3: a global the kernel reads
    assert len(compiles) == 2 and edited.ptx != compiled.ptx
    ct.compile(kernel_file(scale=3, helper_factor=5), (X, X, 256))  # an edit of the helper
    assert len(compiles) == 3 and len(entries(cache_dir)) == 3


def test_an_edit_of_the_kernel_body_misses(compiles, cache_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "body_edit.py"
    source = textwrap.dedent("""
        import numba_tile as ct

        @ct.kernel
        def k(a, b, TILE: ct.Constant[int]):
            ct.store(b, (0,), ct.load(a, (0,), (TILE,)) + 1)
        """)
    path.write_text(source)
    before = ct.compile(import_file(path, "body_edit").k, (X, X, 16))
    path.write_text(source.replace("+ 1", "* 2"))
    after = ct.compile(import_file(path, "body_edit").k, (X, X, 16))
    assert len(compiles) == 2 and before.ptx != after.ptx


def test_closure_values_are_part_of_the_key(compiles, cache_dir):
    def make(offset):
        @ct.kernel
        def shifted(a, b, TILE: ct.Constant[int]):
            ct.store(b, (0,), ct.load(a, (0,), (TILE,)) + offset)
        return shifted
    ct.compile(make(1.0), (X, X, 16))
    ct.compile(make(2.0), (X, X, 16))
    ct.compile(make(1.0), (X, X, 16))
    assert len(compiles) == 2


def test_compile_errors_stay_in_memory(compiles, cache_dir):
    args = (np.zeros(4, np.uint8), np.zeros(4, np.int8))
    kernel = ct.kernel(mixed_signedness)
    for _ in range(2):
        with pytest.raises(ct.TileTypeError):
            ct.compile(kernel, args)
    assert len(compiles) == 1  # the memory cache keeps the error
    with pytest.raises(ct.TileTypeError):
        ct.compile(ct.kernel(mixed_signedness), args)
    assert len(compiles) == 2 and entries(cache_dir) == []


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_disabled_by_the_environment(compiles, cache_dir, monkeypatch, value):
    monkeypatch.setenv("NUMBA_TILE_CACHE", value)
    compile_vector_add()
    compile_vector_add()
    assert len(compiles) == 2 and entries(cache_dir) == []


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "flipped byte",
                                    "other key", "a class in the pickle"])
def test_a_corrupt_entry_is_recompiled_and_rewritten(compiles, cache_dir, damage):
    good = compile_vector_add()
    [entry] = entries(cache_dir)
    data = entry.read_bytes()
    if damage == "empty":
        data = b""
    elif damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "garbage":
        data = os.urandom(len(data))
    elif damage == "flipped byte":
        data = data[:-100] + bytes([data[-100] ^ 1]) + data[-99:]
    elif damage == "other key":
        other = disk_cache.kernel_key(ct.kernel(vector_add), ("other",), "sm_90")
        disk_cache.store(other, good, cache_dir)
        data = (cache_dir / f"{other}.nbtile").read_bytes()
    else:  # a well-formed entry that would run code when read: refused
        import hashlib
        import pickle
        payload = pickle.dumps({"format": disk_cache.FORMAT_VERSION, "key": entry.stem,
                                "fields": good}, protocol=4)
        data = disk_cache._MAGIC + hashlib.sha256(payload).digest() + payload
    entry.write_bytes(data)
    again = compile_vector_add()
    assert len(compiles) == 2 and isinstance(again, CompiledKernel) and again.cubin
    assert again.registers == good.registers and again.num_warps == good.num_warps
    compile_vector_add()  # rewritten: a hit now
    assert len(compiles) == 2


def test_an_unreadable_entry_is_a_miss(compiles, cache_dir):
    compile_vector_add()
    [entry] = entries(cache_dir)
    entry.unlink()
    entry.mkdir()  # a directory where the file was: cannot be read, nor replaced
    with pytest.warns(RuntimeWarning, match="cannot write its compile cache"):
        compile_vector_add()
    assert len(compiles) == 2


def test_an_unwritable_directory_warns_once_and_compiles(compiles, tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("NUMBA_TILE_CACHE_DIR", str(tmp_path / "a_file" / "cache"))
    with pytest.warns(RuntimeWarning, match="does not use the compile cache in .*a_file"):
        assert compile_vector_add().cubin
    assert len(compiles) == 1


def test_kernels_without_source_are_not_cached_on_disk(compiles, cache_dir):
    namespace = {"ct": ct}
    exec(compile(textwrap.dedent("""
        def typed_at_a_prompt(a, b, TILE: ct.Constant[int]):
            ct.store(b, (0,), ct.load(a, (0,), (TILE,)))
        """), "<stdin>", "exec"), namespace)
    fn = namespace["typed_at_a_prompt"]
    assert disk_cache.kernel_key(ct.kernel(fn), (), "sm_90") is None
    ct.compile(ct.kernel(fn), (X, X, 16))
    ct.compile(ct.kernel(fn), (X, X, 16))
    assert len(compiles) == 2 and entries(cache_dir) == []


def test_notebook_cells_are_cached_on_disk(compiles, cache_dir):
    """IPython puts each cell's source in linecache under a file name of its own."""
    source = textwrap.dedent("""
        @ct.kernel
        def in_a_cell(a, b, TILE: ct.Constant[int]):
            ct.store(b, (0,), ct.load(a, (0,), (TILE,)))
        """)
    filename = "/tmp/ipykernel_0/000000001.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        for _ in range(2):
            namespace = {"ct": ct}
            exec(compile(source, filename, "exec"), namespace)
            ct.compile(namespace["in_a_cell"], (X, X, 16))
    finally:
        del linecache.cache[filename]
    assert len(compiles) == 1 and len(entries(cache_dir)) == 1


class Opaque:
    pass


OPAQUE = Opaque()


def reads_an_opaque_global(a):
    if OPAQUE:
        pass


def test_a_global_the_key_cannot_describe_skips_the_disk():
    assert disk_cache.kernel_key(ct.kernel(reads_an_opaque_global), (), "sm_90") is None
    assert disk_cache.kernel_key(ct.kernel(vector_add), (), "sm_90") is not None


def test_concurrent_writers_and_readers_see_whole_entries(cache_dir):
    good = compile_vector_add()
    key = disk_cache.kernel_key(ct.kernel(vector_add), ("concurrent",), "sm_90")
    failures = []

    def write():
        for _ in range(20):
            disk_cache.store(key, good, cache_dir)

    def read():
        for _ in range(50):
            found = disk_cache.load(key, cache_dir)
            if found is not None and vars(found) != vars(good):
                failures.append(found)
    disk_cache.store(key, good, cache_dir)
    threads = [threading.Thread(target=f) for f in (write, write, read, read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert not [p for p in cache_dir.iterdir() if p.suffix == ".tmp"]


def test_a_new_process_finds_the_compile(cache_dir, tmp_path):
    """The point of the disk: a second process compiles nothing."""
    script = tmp_path / "second_process.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import numba_tile as ct
        from numba_tile.runtime import compile_entry as compiling

        calls = []
        real = compiling.compile_to_ptx
        compiling.compile_to_ptx = lambda *a: calls.append(1) or real(*a)

        @ct.kernel
        def vadd(a, b, c, TILE: ct.Constant[int]):
            i = ct.bid(0)
            ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))

        x = np.zeros(1024, np.float32)
        ct.compile(vadd, (x, x, x, 256))
        print(len(calls))
        """))
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ct.__file__)))
    env = dict(os.environ, NUMBA_TILE_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["1"], ["0"]]


# -- trust: only the current user's entries are used (numba_tile/runtime/cache_trust.py) -------------
def test_the_directory_and_key_are_private(compiles, cache_dir):
    compile_vector_add()
    assert oct(cache_dir.stat().st_mode & 0o777) == oct(0o700)
    key = cache_dir / cache_trust.KEY_NAME
    assert oct(key.stat().st_mode & 0o777) == oct(0o600) and key.stat().st_size == 32
    [entry] = entries(cache_dir)
    assert entry.stat().st_mode & 0o077 == 0


def test_a_directory_others_can_write_is_not_used(compiles, cache_dir):
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="does not use the compile cache"):
        compile_vector_add()
    compile_vector_add()  # warned once; compiled again, as nothing was stored
    assert len(compiles) == 2 and entries(cache_dir) == []


def test_a_directory_of_another_user_is_not_used(compiles, cache_dir, monkeypatch):
    compile_vector_add()
    monkeypatch.setattr(os, "getuid", lambda: cache_dir.stat().st_uid + 1)
    with pytest.warns(RuntimeWarning, match="not owned by the current user"):
        compile_vector_add()
    assert len(compiles) == 2


def test_a_planted_entry_is_not_run(compiles, cache_dir):
    """Someone who knows the key but not the user's secret writes an entry: it is a miss,
    compiled again and overwritten."""
    compile_vector_add()
    [entry] = entries(cache_dir)
    record = {"format": disk_cache.FORMAT_VERSION, "key": entry.stem,
              "fields": {**vars(compile_vector_add()), "ptx": "// planted", "cubin": b"planted"}}
    payload = pickle.dumps(record, protocol=4)
    forged = cache_trust.signature(b"another secret".ljust(32, b"."), payload)
    entry.write_bytes(disk_cache._MAGIC + forged + payload)
    compiled = compile_vector_add()
    assert compiled.ptx != "// planted" and compiled.cubin != b"planted"
    assert len(compiles) == 2
    assert disk_cache.load(entry.stem, cache_dir).ptx == compiled.ptx  # rewritten


def test_an_entry_others_can_write_is_a_miss(compiles, cache_dir):
    compile_vector_add()
    [entry] = entries(cache_dir)
    entry.chmod(0o666)
    assert disk_cache.load(entry.stem, cache_dir) is None


def test_a_readable_key_file_makes_the_directory_untrusted(compiles, cache_dir):
    compile_vector_add()
    (cache_dir / cache_trust.KEY_NAME).chmod(0o644)
    with pytest.warns(RuntimeWarning, match="key file"):
        compile_vector_add()
    assert len(compiles) == 2


def _load_in_time(key, directory, seconds=20):
    """``disk_cache.load`` run in a thread that must return within ``seconds``."""
    found = []
    worker = threading.Thread(target=lambda: found.append(disk_cache.load(key, directory)),
                              daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "load() hangs"
    return found[0]


@pytest.mark.parametrize("replacement", ["fifo", "link_to_dev_zero", "huge_sparse_file"])
def test_an_entry_that_is_no_plain_file_is_a_miss(compiles, cache_dir, replacement):
    compile_vector_add()
    [entry] = entries(cache_dir)
    entry.unlink()
    if replacement == "fifo":
        os.mkfifo(entry, 0o600)
    elif replacement == "link_to_dev_zero":
        entry.symlink_to("/dev/zero")
    else:
        with open(entry, "wb") as file:
            file.truncate(cache_trust.MAX_ENTRY_BYTES + 1)
    assert _load_in_time(entry.stem, cache_dir) is None


# -- cuTile's variables and the size cap ----------------------------------------------------------
@pytest.mark.parametrize("value,expected", [("/tmp/tiles", "/tmp/tiles"), ("off", None),
                                            ("0", None), ("none", None), ("", None)])
def test_cutiles_cache_directory_variable(value, expected):
    found = disk_cache.cache_directory({"CUDA_TILE_CACHE_DIR": value})
    assert (None if found is None else str(found)) == expected
    # numba_tile's own variables come first
    assert str(disk_cache.cache_directory({"CUDA_TILE_CACHE_DIR": value,
                                           "NUMBA_TILE_CACHE_DIR": "/tmp/mine"})) == "/tmp/mine"
    assert disk_cache.cache_directory({"CUDA_TILE_CACHE_DIR": value,
                                       "NUMBA_TILE_CACHE": "0"}) is None


def test_size_limit_variables():
    assert disk_cache.size_limit({}) == 1 << 31
    assert disk_cache.size_limit({"CUDA_TILE_CACHE_SIZE": "4096"}) == 4096
    assert disk_cache.size_limit({"CUDA_TILE_CACHE_SIZE": "4096",
                                  "NUMBA_TILE_CACHE_SIZE": "100"}) == 100
    with pytest.warns(RuntimeWarning, match="CUDA_TILE_CACHE_SIZE='2GB' is not a number"):
        assert disk_cache.size_limit({"CUDA_TILE_CACHE_SIZE": "2GB"}) == 1 << 31


def test_a_store_past_the_size_limit_evicts_the_entries_used_longest_ago(cache_dir,
                                                                          monkeypatch):
    compiled = CompiledKernel("entry", "sm_90", "// ptx", b"c" * 5000, "", 4)
    keys = [c * 64 for c in "abc"]
    for age, key in zip((30, 20, 10), keys):
        assert disk_cache.store(key, compiled)
        path = cache_dir / (key + disk_cache.ENTRY_SUFFIX)
        os.utime(path, (1e9 - age, 1e9 - age))
    size = (cache_dir / (keys[0] + disk_cache.ENTRY_SUFFIX)).stat().st_size
    assert disk_cache.load(keys[0]) is not None  # used now: the newest
    monkeypatch.setenv("CUDA_TILE_CACHE_SIZE", str(3 * size))
    assert disk_cache.store("d" * 64, compiled)
    assert [p.name[0] for p in entries(cache_dir)] == ["a", "c", "d"]
    monkeypatch.setenv("CUDA_TILE_CACHE_SIZE", "0")  # the entry just written stays
    assert disk_cache.store("e" * 64, compiled)
    assert [p.name[0] for p in entries(cache_dir)] == ["e"]
