"""Every notebook in ``notebooks/`` runs top to bottom without an error.

The notebooks are executed with nbclient in a Jupyter kernel started from *this* Python
interpreter (the one running pytest, where numba_tile is installed): a temporary kernelspec
named ``python3`` whose argv is ``sys.executable`` is put first on ``JUPYTER_PATH``, so a
``python3`` kernelspec of some other environment cannot be picked up by mistake. A cell
prepended to each notebook checks this from inside the kernel.
"""

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 120


def _torch_gpu():
    """True where PyTorch sees a CUDA GPU (the fused-kernel notebook times itself there)."""
    try:
        import torch
    except Exception:  # not installed, or without its CUDA libraries
        return False
    return torch.cuda.is_available()


# What a notebook must print, by name: the fused-kernel notebook says when it skips the GPU.
EXPECTED_OUTPUT = {
    "02_writing_a_fused_kernel.ipynb": lambda: ("GPU: " if _torch_gpu()
                                                else "skipping the GPU timing and the plot"),
}


@pytest.fixture(scope="module")
def this_interpreter_kernel(tmp_path_factory):
    """Make the ``python3`` kernelspec start ``sys.executable`` for the tests of this module."""
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python 3 ({sys.executable})",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        mp.setenv("JUPYTER_RUNTIME_DIR", str(root / "runtime"))
        # Each notebook decides its own execution mode.
        mp.delenv("NUMBA_TILE_INTERPRET", raising=False)
        yield KERNEL_NAME


def _check_interpreter_cell():
    source = ("import sys\n"
              f"assert sys.prefix == {sys.prefix!r}, "
              f"f'the notebook kernel runs {{sys.executable}}, not {sys.executable}'")
    return nbformat.v4.new_code_cell(source)


def test_notebooks_exist():
    names = {path.name for path in NOTEBOOKS}
    assert {"01_quickstart.ipynb", "02_writing_a_fused_kernel.ipynb"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, this_interpreter_kernel):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    nb.cells.insert(0, _check_interpreter_cell())
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name=this_interpreter_kernel,
                            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}})
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    if path.name in EXPECTED_OUTPUT:
        printed = "".join(output.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                          for output in cell.outputs)
        assert EXPECTED_OUTPUT[path.name]() in printed, printed
