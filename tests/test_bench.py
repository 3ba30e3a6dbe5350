"""The benchmark module without a GPU: its kernels compute the right values (in every test
mode), the report writes what it says, and the command exits cleanly where it cannot run.
"""

import json
import subprocess
import sys
import types
import typing

import numpy as np
import pytest

import numba_tile as ct
from numba_tile.bench import __main__ as bench_main
from numba_tile.bench import cases, chart, compare, cutile, kernels, memory_kernels, report
from numba_tile.bench.case_types import Implementation
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
    scatters and histograms are pointer arithmetic there) or none is written here (cumsum,
    the custom scan, the block-scaled product, whose reference is PyTorch's
    dequantize-then-matmul, the 8-bit products next to cuBLASLt's, and the attention kernel
    written as cuTile's documentation teaches, which is measured against sdpa)."""
    for case in cases.all_cases():
        names = [i.name for i in case.implementations]
        memory = case.name.split("_")[0] in ("embedding", "scatter", "histogram", "cumsum",
                                             "scan", "mma") or case.name.startswith(
                                                 ("matmul_f8", "matmul_i8",
                                                  "attention_documented"))
        assert names == (["numba_tile", "torch"] if memory else ["numba_tile", "torch",
                                                                  "triton"])
        assert all(i.params for i in case.implementations)


def test_the_table_shows_figures_failures_and_targets():
    text = report.format_table(report.example_results())
    rows = [line.split() for line in text.splitlines()]
    assert ["vector_add_f32", "numba_tile", "tile=2048", "0.0e+00", "550.1", "2928", "97.6%",
            "-", "1.02"] in rows
    assert ["matmul_f16_4096", "numba_tile", "tile_m=128", "4.0e-04", "229.1", "439", "14.6%",
            "600.0", "0.86"] in rows
    assert "softmax_f16      numba_tile      rows=1      FAIL: relative error 3.0e-01 > 1e-03" \
        in text
    assert "vector_add_f32   2928 GB/s, needs 2732 GB/s (95% of torch): met" in text
    assert "matmul_f16_4096  600.0 TFLOPS, needs 525.0 TFLOPS (75% of torch): met" in text
    assert "triton not installed, cuda.tile not installed" in text


def test_the_table_names_the_cutile_version_of_the_run():
    results = report.example_results()
    results["environment"]["cutile"] = "1.1.0"
    assert "triton not installed, cuda.tile 1.1.0\n" in report.format_table(results)


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
    assert compare.load_results(tmp_path / "out" / "results.json") == results


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


# -- the chart --------------------------------------------------------------------------------


def _with_cutile(results):
    """``results`` as a run with cuTile would have them: a cuTile entry in every case, an
    ERROR in the last."""
    for case in results["cases"]:
        entry = dict(case["implementations"][0], name="cutile")
        case["implementations"].append(entry)
    results["cases"][-1]["implementations"][-1].update(status="ERROR", error="TileError: x")
    results["environment"]["cutile"] = "1.1.0"
    return results


def test_the_chart_shows_every_case_in_the_panel_of_its_unit():
    results = _with_cutile(report.example_results())
    bandwidth, compute = chart.result_panels(results)
    assert (bandwidth.unit, compute.unit) == ("GB/s", "TFLOPS")
    assert bandwidth.cases + compute.cases == [c["name"] for c in results["cases"]]
    assert list(bandwidth.values) == list(compute.values) == ["numba_tile", "torch", "cutile"]
    assert compute.values["numba_tile"] == [600.0] and compute.values["cutile"] == [None]
    # ratios to torch on the bars; none on torch's own; a failure says which
    assert bandwidth.labels == {"numba_tile": ["1.02x", "FAIL"], "torch": ["", ""],
                                "cutile": ["1.02x", "FAIL"]}
    assert compute.labels == {"numba_tile": ["0.86x"], "torch": [""], "cutile": ["ERROR"]}
    assert bandwidth.line == results["copy"]["gbps"] and compute.line is None


def test_the_chart_leaves_out_panels_without_cases_and_ratios_without_torch():
    results = report.example_results()
    del results["cases"][2]
    results["cases"][0]["implementations"][1]["status"] = "FAIL"  # torch
    [panel] = chart.result_panels(results)
    assert panel.unit == "GB/s"
    assert panel.labels["numba_tile"] == ["", "FAIL"] and panel.labels["torch"] == ["FAIL", ""]


def test_the_chart_draws_both_panels_with_the_ratios():
    pytest.importorskip("matplotlib")
    results = _with_cutile(report.example_results())
    figure = chart.draw(chart.result_panels(results), chart.result_title(results))
    bandwidth, compute = figure.axes
    assert [t.get_text() for t in bandwidth.get_xticklabels()] == ["vector_add_f32",
                                                                   "softmax_f16"]
    assert [t.get_text() for t in compute.get_xticklabels()] == ["matmul_f16_4096"]
    assert compute.get_ylabel() == "TFLOPS" and "GB/s" in bandwidth.get_ylabel()
    assert sorted(t.get_text() for t in compute.texts) == ["0.86x", "ERROR"]
    assert sorted(t.get_text() for t in bandwidth.texts) == ["1.02x", "1.02x", "FAIL", "FAIL"]
    assert len(bandwidth.patches) == 3 * 2 and len(compute.patches) == 3


# -- --compare --------------------------------------------------------------------------------


def _two_runs():
    old, new = report.example_results(), report.example_results()
    new["cases"][0]["implementations"][0]["gbps"] = 2990.0  # numba_tile's vector add
    new["cases"][2]["implementations"][0]["tflops"] = 660.0  # numba_tile's matmul
    softmax = new["cases"][1]["implementations"]  # numba_tile's softmax now passes
    softmax[0] = dict(softmax[1], name="numba_tile", gbps=2450.0)
    del old["cases"][2]["implementations"][1]  # torch's matmul: new in this run
    new["environment"]["date"] = "2026-01-02 00:00 UTC"
    return old, new


def test_compare_gives_old_new_and_ratio_per_case_and_implementation():
    old, new = _two_runs()
    rows = {(r["case"], r["implementation"]): r for r in compare.compare(old, new)}
    assert len(rows) == 6
    add = rows["vector_add_f32", "numba_tile"]
    assert (add["unit"], add["old"], add["new"]) == ("GB/s", 2928.0, 2990.0)
    assert add["ratio"] == pytest.approx(2990 / 2928)
    matmul = rows["matmul_f16_4096", "numba_tile"]
    assert (matmul["unit"], matmul["ratio"]) == ("TFLOPS", pytest.approx(1.1))
    softmax = rows["softmax_f16", "numba_tile"]
    assert (softmax["old_status"], softmax["new_status"]) == ("FAIL", "ok")
    assert softmax["ratio"] is None
    torch_matmul = rows["matmul_f16_4096", "torch"]
    assert (torch_matmul["old_status"], torch_matmul["old"], torch_matmul["new"]) == (
        "absent", None, 700.0)


def test_compare_prints_a_row_each_and_the_geometric_means():
    old, new = _two_runs()
    text = compare.format_comparison(old, new, "old.json")
    lines = [line.split() for line in text.splitlines()]
    assert text.splitlines()[0] == "this run against old.json (Example GPU, 2026-01-01 00:00 UTC)"
    assert ["vector_add_f32", "numba_tile", "2928", "GB/s", "2990", "GB/s", "1.02"] in lines
    assert ["softmax_f16", "numba_tile", "FAIL", "2450", "GB/s", "-"] in lines
    assert ["matmul_f16_4096", "numba_tile", "600.0", "TFLOPS", "660.0", "TFLOPS", "1.10"] in lines
    assert ["torch", "-", "700.0", "TFLOPS", "-"] in lines
    assert text.endswith("geometric mean of new/old where both runs have a figure: "
                         "numba_tile 1.06 (2 cases), torch 1.00 (2 cases)")
    assert "note:" not in text


def test_compare_notes_runs_that_are_not_alike():
    old, new = _two_runs()
    new["environment"]["device"] = "NVIDIA H200"
    new["settings"]["quick"] = True
    notes = [line for line in compare.format_comparison(old, new, "o.json").splitlines()
             if line.startswith("note:")]
    assert notes == ["note: the earlier run was on Example GPU, this one on NVIDIA H200",
                     "note: this run used --quick (smaller sizes, no tuning)"]


def test_the_comparison_chart_has_a_bar_per_case_and_implementation():
    old, new = _two_runs()
    bandwidth, compute = chart.comparison_panels(compare.compare(old, new))
    assert bandwidth.cases == ["vector_add_f32", "softmax_f16"]
    assert bandwidth.labels["numba_tile"] == ["1.02", "FAIL"]
    assert compute.labels == {"numba_tile": ["1.10"], "torch": ["new"]}
    assert compute.baseline == compute.line == 1.0


@pytest.mark.parametrize("text,message", [
    (None, "cannot read"), ("{", "is not JSON"), ('{"cases": []}', "is not a results.json")])
def test_a_compare_file_that_cannot_be_used_is_a_usage_error(tmp_path, capsys, text, message):
    path = tmp_path / "old.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(SystemExit) as exit_:
        bench_main.main(["--compare", str(path)])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("python -m numba_tile.bench: error: --compare: ")
    assert message in error
    with pytest.raises(ValueError, match=message):
        compare.load_results(path)


def test_the_command_compares_a_saved_run_without_a_gpu(tmp_path, capsys):
    old, new = _two_runs()
    report.write_json(old, tmp_path / "old.json")
    report.write_json(new, tmp_path / "new.json")
    out = tmp_path / "out"
    status = bench_main.main(["--load", str(tmp_path / "new.json"), "--compare",
                              str(tmp_path / "old.json"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0  # every implementation of the loaded run passed
    assert printed.startswith("numba_tile benchmark on Example GPU (2026-01-02 00:00 UTC)")
    assert f"this run against {tmp_path / 'old.json'} (Example GPU" in printed
    assert not (out / "results.json").exists()  # --load writes no results of its own
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "skipped the PNG chart: matplotlib is not installed" in printed
    else:
        assert printed.rstrip().endswith(f"wrote {out / 'results.png'}\n"
                                         f"wrote {out / 'comparison.png'}")
        assert (out / "comparison.png").read_bytes().startswith(b"\x89PNG")


def test_load_takes_no_run_options(tmp_path, capsys):
    report.write_json(report.example_results(), tmp_path / "r.json")
    with pytest.raises(SystemExit) as exit_:
        bench_main.main(["--load", str(tmp_path / "r.json"), "--quick", "--repeats", "5"])
    assert exit_.value.code == 2
    assert "--quick, --repeats cannot apply" in capsys.readouterr().err


# -- cuTile as a reference ----------------------------------------------------------------------


@pytest.fixture
def fake_cutile():
    """A stand-in for ``cuda.tile`` made of numba_tile's functions: its ``kernel`` takes only
    cuTile's options and checks that the function it gets looks everything up in it; its
    ``launch`` records the kernels it starts and runs them with numba_tile."""
    module = types.ModuleType("cuda.tile")
    module.__dict__.update({k: v for k, v in vars(ct).items() if not k.startswith("__")})
    module.__version__ = "1.1.0"
    module.made, module.launched = [], []
    real_launch = ct.launch  # launches_sent_to replaces ct.launch: keep the real one

    def kernel(fn, **options):
        unknown = set(options) - set(cutile.CUTILE_OPTIONS)
        if unknown:
            raise TypeError(f"cuda.tile.kernel has no option {unknown}")
        assert fn.__globals__["ct"] is module
        module.made.append((fn.__name__, options))
        return ct.kernel(fn, **options)

    def launch(stream, grid, k, args):
        module.launched.append(k.__name__)
        real_launch(stream, grid, k, args)

    module.kernel, module.launch = kernel, launch
    yield module
    cutile.translate_kernel.cache_clear()


def _layer_norm_launch(rng):
    x = rng.standard_normal((5, 200)).astype(np.float32) + 2
    weight, bias = (rng.standard_normal(200).astype(np.float32) for _ in range(2))
    y = np.full_like(x, np.nan)
    expected = _layer_norm(x.astype(np.float64), weight, bias, 1e-5)
    return (kernels.layer_norm_launch(x, weight, bias, y, rows=2, num_warps=8, occupancy=2),
            y, expected, {"occupancy": 2})


def _matmul_launch(rng):  # its blocks' order comes from a ct.function helper
    a = rng.standard_normal((40, 50)).astype(np.float16)
    b = rng.standard_normal((50, 70)).astype(np.float16)
    c = np.full((40, 70), np.nan, np.float32)
    return (kernels.matmul_launch(a, b, c, tile_m=16, tile_n=32, tile_k=16, num_warps=4,
                                  group=2), c, a.astype(np.float64) @ b, {})


def _embedding_launch(rng):
    table = rng.standard_normal((30, 64)).astype(np.float16)
    indices = rng.integers(0, 30, 8)
    out = np.full((8, 64), np.nan, np.float16)
    return (memory_kernels.embedding_launch(table, indices, out, rows=4), out, table[indices],
            {})


@pytest.mark.parametrize("make", [_layer_norm_launch, _matmul_launch, _embedding_launch])
def test_cutile_gets_the_same_kernels_rebuilt_on_its_module(run_kernel, rng, fake_cutile, make):
    (kernel, grid, args), out, expected, options = make(rng)
    theirs = cutile.translate_kernel(kernel, fake_cutile)
    assert fake_cutile.made == [(kernel.__name__, options)]  # no num_warps: numba_tile's own
    assert cutile.translate_kernel(kernel, fake_cutile) is theirs  # one object: one cache
    run_kernel(theirs, grid, args)
    assert relative_error(out, expected) <= 1e-3


def test_a_cutile_run_sends_numba_tiles_launches_to_cutile(rng, fake_cutile):
    x = rng.standard_normal((4, 100)).astype(np.float32)

    def prepare(x, rows=1, **params):  # as the benchmark's numba_tile implementations do
        y = np.full_like(x, np.nan)
        kernel, grid, args = kernels.softmax_launch(x, y, rows=rows, **params)
        return lambda: (ct.launch(0, grid, kernel, args), y)[1]

    ours = Implementation("numba_tile", prepare, ({"rows": 1}, {"rows": 1, "num_warps": 8},
                                                  {"rows": 2, "num_warps": 8}))
    theirs = cutile.cutile_implementation(ours, fake_cutile)
    assert (theirs.name, theirs.params) == ("cutile", ({"rows": 1}, {"rows": 2}))
    launch = ct.launch
    with ct.interpret():
        y = theirs.prepare(x, **theirs.params[1])()
    assert fake_cutile.launched == ["softmax"]
    assert ct.launch is launch  # put back
    assert relative_error(y, _softmax(x.astype(np.float64))) <= 1e-5


def test_a_cutile_run_that_launches_nothing_is_an_error(fake_cutile):
    quiet = Implementation("numba_tile", lambda: (lambda: None))
    run = cutile.cutile_implementation(quiet, fake_cutile).prepare()
    launch = ct.launch
    with pytest.raises(RuntimeError, match="launched nothing through numba_tile.launch"):
        run()
    assert ct.launch is launch


def test_cutile_joins_every_case_with_a_numba_tile_kernel_only_where_installed(monkeypatch,
                                                                               fake_cutile):
    everything = cases.all_cases()
    monkeypatch.setattr(cutile, "_installed", None)
    assert all(cutile.references(case) == [] for case in everything)
    assert cutile.cutile_version() is None
    monkeypatch.setattr(cutile, "_installed", fake_cutile)
    assert cutile.cutile_version() == "1.1.0"
    for case in everything:
        [theirs] = cutile.references(case)
        ours = next(i for i in case.implementations if i.name == "numba_tile")
        assert theirs.name == "cutile"
        assert theirs.params == cutile.cutile_params(ours.params)
        assert not any("num_warps" in p or "num_stages" in p for p in theirs.params)


def test_cutile_annotations_and_helpers_are_its_own():
    marker = object()

    class Constant:  # another project's Constant
        def __class_getitem__(cls, item):
            return typing.Annotated[item, marker]

    other = types.SimpleNamespace(Constant=Constant, function=lambda fn, host, tile: ("fn", fn))

    def helper(x):
        return ct.bid(0) + x

    def kernel_fn(x, n: ct.Constant[int], m: ct.Constant, k: int):
        return helper(n) + [ct.bid(0) for _ in range(m)][0]

    fn = cutile.translate_function(kernel_fn, other)
    assert fn.__annotations__ == {"n": typing.Annotated[int, marker], "m": Constant, "k": int}
    assert fn.__globals__["ct"] is other and kernel_fn.__globals__["ct"] is ct
    closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    assert closure["helper"].__globals__["ct"] is other  # a helper of a kernel in a function
    assert fn.__code__ is kernel_fn.__code__
    wrapped = cutile.translate_function(kernels.attention.fn,
                                        other).__globals__["_attention_block"]
    assert wrapped[0] == "fn" and wrapped[1].__globals__["ct"] is other
