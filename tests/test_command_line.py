"""``python -m numba_tile`` (info, cache) and ``--help`` on every command-line entry point."""

import os
import subprocess
import sys

import pytest

import numba_tile as ct
from numba_tile import command_line


def _run(*args, env=None):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_info_reports_versions_gpus_libraries_and_cache(tmp_path):
    env = dict(os.environ, NUMBA_TILE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("CUDA_HOME", None)
    done = _run("numba_tile", "info", env=env)
    assert done.returncode == 0, done.stderr
    report = done.stdout
    assert f"numba_tile {ct.__version__}" in report
    for line in ("numba ", "numba-cuda ", "numpy ", "CUDA driver: ", "GPU ", "nvvm: ",
                 "libdevice: ", "nvjitlink: ", "CUDA_HOME: not set"):
        assert line in report, report
    assert f"compile cache: {tmp_path / 'cache'} (not created yet)" in report


def test_info_names_a_cuda_home(tmp_path):
    env = dict(os.environ, CUDA_HOME=str(tmp_path), NUMBA_TILE_CACHE="0")
    report = _run("numba_tile", "info", env=env).stdout
    assert f"CUDA_HOME: {tmp_path}" in report
    assert "compile cache: off" in report


def test_cache_clear_removes_compiled_kernels_only(tmp_path, capsys):
    folder = tmp_path / "cache"
    folder.mkdir()
    for name in ("a" * 64 + ".nbtile", "b" * 64 + ".nbtile"):
        (folder / name).write_bytes(b"x" * 1024)
    (folder / ".key").write_bytes(b"secret")
    assert command_line.main(["cache", "info", "--directory", str(folder)]) == 0
    assert "(2 kernels, 0.0 MiB)" in capsys.readouterr().out
    assert command_line.main(["cache", "clear", "--directory", str(folder)]) == 0
    assert f"removed 2 compiled kernels from {folder}" in capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir()) == [".key"]


@pytest.mark.parametrize("command", [["numba_tile"], ["numba_tile", "info"],
                                     ["numba_tile", "cache"], ["numba_tile.demo"],
                                     ["numba_tile.bench"]])
def test_every_command_has_help(command):
    done = _run(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m "), done.stdout
    assert "running on the" not in done.stdout  # the demo does not run
