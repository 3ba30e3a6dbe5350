"""The benchmark module without a GPU: its kernels compute the right values (in every test
mode), the report writes what it says, and the command exits cleanly where it cannot run.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from numba_tile.bench import __main__ as bench_main
from numba_tile.bench import cases, kernels, report
from conftest import gpu_present, relative_error

TOLERANCE = {np.float32: 1e-5, np.float16: 1e-3}  # as in numba_tile.bench.cases


def _random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _poisoned(shape, dtype):
    return np.full(shape, np.nan, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("params", [{"tile": 256}, {"tile": 1024, "num_warps": 8}])
def test_vector_add(run_kernel, rng, dtype, params):
    n = 1000  # a partial last tile
    a, b = _random(rng, n, dtype), _random(rng, n, dtype)
    c = _poisoned(n, dtype)
    run_kernel(*kernels.vector_add_launch(a, b, c, **params))
    assert relative_error(c, a.astype(np.float64) + b) <= TOLERANCE[dtype]


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape,params", [((4, 256), {"rows": 1}),
                                          ((5, 200), {"rows": 2, "num_warps": 8})])
def test_softmax(run_kernel, rng, dtype, shape, params):
    x = _random(rng, shape, dtype) * 3
    y = _poisoned(shape, dtype)
    run_kernel(*kernels.softmax_launch(x, y, **params))
    assert relative_error(y, _softmax(x.astype(np.float64))) <= TOLERANCE[dtype]


def _layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape,params", [((4, 256), {"rows": 1}),
                                          ((5, 200), {"rows": 2, "num_warps": 8})])
def test_layer_norm(run_kernel, rng, dtype, shape, params):
    x = _random(rng, shape, dtype) + 2  # a mean far from 0 shows a variance computed badly
    weight = 1 + 0.5 * _random(rng, shape[1], dtype)
    bias = 0.5 * _random(rng, shape[1], dtype)
    y = _poisoned(shape, dtype)
    run_kernel(*kernels.layer_norm_launch(x, weight, bias, y, eps=1e-5, **params))
    expected = _layer_norm(x.astype(np.float64), weight.astype(np.float64),
                           bias.astype(np.float64), 1e-5)
    assert relative_error(y, expected) <= TOLERANCE[dtype]


@pytest.mark.parametrize("shape,params", [((4, 256), {"rows": 1}),
                                          ((5, 300), {"rows": 2, "tile_n": 128}),
                                          ((9, 200), {"rows": 4, "tile_n": 64, "num_warps": 8})])
def test_row_sum(run_kernel, rng, shape, params):
    x = _random(rng, shape, np.float32)
    out = _poisoned(shape[0], np.float32)
    run_kernel(*kernels.row_sum_launch(x, out, **params))
    assert relative_error(out, x.astype(np.float64).sum(axis=1)) <= TOLERANCE[np.float32]


def test_every_case_has_its_implementations_and_a_default_first():
    """numba_tile, PyTorch and Triton; no Triton where it has no such operation (gathers,
    scatters and histograms are pointer arithmetic there) or none is written here (cumsum)."""
    for case in cases.all_cases():
        names = [i.name for i in case.implementations]
        memory = case.name.split("_")[0] in ("embedding", "scatter", "histogram", "cumsum")
        assert names == (["numba_tile", "torch"] if memory else ["numba_tile", "torch",
                                                                  "triton"])
        assert all(i.params for i in case.implementations)


def test_the_table_shows_figures_failures_and_targets():
    text = report.format_table(report.example_results())
    rows = [line.split() for line in text.splitlines()]
    assert ["vector_add_f32", "numba_tile", "tile=2048", "0.0e+00", "550.1", "2928", "97.6%",
            "-", "1.02"] in rows
    assert "softmax_f16     numba_tile      rows=1     FAIL: relative error 3.0e-01 > 1e-03" \
        in text
    assert "vector_add_f32  2928 GB/s, needs 2732 GB/s (95% of torch): met" in text


def test_the_table_lists_failed_variants_and_errors():
    results = report.example_results()
    entry = results["cases"][0]["implementations"][0]
    entry["variants"].append({"label": "tile=4096", "params": {}, "status": "ERROR",
                              "error": "TileUnsupportedFeatureError: ct.foo"})
    text = report.format_table(results)
    assert "vector_add_f32 numba_tile tile=4096: ERROR: TileUnsupportedFeatureError: ct.foo" \
        in text
    assert report.failed(results)


def test_the_report_writes_json_that_reads_back(tmp_path):
    results = report.example_results()
    lines = report.write_report(results, tmp_path / "out")
    assert lines[0] == f"wrote {tmp_path / 'out' / 'results.json'}"
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == results


def test_the_report_says_when_it_skips_the_chart(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    lines = report.write_report(report.example_results(), tmp_path)
    assert lines[1].startswith("skipped the PNG chart: matplotlib is not installed")
    assert not (tmp_path / "results.png").exists()


def test_the_report_draws_a_png_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    lines = report.write_report(report.example_results(), tmp_path)
    assert lines[1] == f"wrote {tmp_path / 'results.png'}"
    assert (tmp_path / "results.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_unknown_case_names_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        bench_main.main(["--only", "softmax,transpose"])
    assert exit_.value.code == 2
    assert "unknown case 'transpose'" in capsys.readouterr().err


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the benchmark would run")
def test_without_a_gpu_the_command_says_so_and_exits_with_2():
    result = subprocess.run([sys.executable, "-m", "numba_tile.bench", "--quick"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert message.startswith("numba_tile.bench: ")
    assert ("no CUDA GPU found" in message) or ("PyTorch is not installed" in message)
