"""The project's own promises: CI runs the README's test commands, the demo works."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ci_runs_exactly_the_readme_test_commands():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Run the tests", 1)[1]
    commands = re.search(r"```bash\n(.*?)```", section, re.S).group(1).strip().splitlines()
    ci = (ROOT / ".ci" / "run").read_text()
    ci_commands = [line for line in ci.splitlines()
                   if line and not line.startswith(("#", "set ", "cd ", "rm "))]
    assert ci_commands == commands


def test_demo_runs_and_checks_its_results():
    from conftest import gpu_present
    result = subprocess.run([sys.executable, "-m", "numba_tile.demo"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("running on the GPU" if gpu_present() else "interpreter mode") in result.stdout
    assert result.stdout.count("  ok  ") == 3
    assert "all results match NumPy" in result.stdout
