"""The benchmark's outputs: a text table, a JSON file and, with matplotlib, a PNG chart
(:mod:`numba_tile.bench.chart`).

All three are made from the dict :func:`numba_tile.bench.runner.run_benchmarks` returns, so
they can be remade from a saved JSON file:

>>> import json, tempfile, pathlib
>>> from numba_tile.bench import report
>>> results = report.example_results()
>>> print(report.format_table(results))
numba_tile benchmark on Example GPU (2026-01-01 00:00 UTC)
numba_tile 0.1.0, torch 2.11.0, triton not installed, cuda.tile not installed
device-to-device copy: 3000 GB/s (median of 100 runs); L2 flushed (read) before every run;
GB/s = (bytes read + bytes written) / median time
<BLANKLINE>
case             implementation  variant      rel. error   median us     GB/s   % copy   TFLOPS  vs torch
vector_add_f32   numba_tile      tile=2048       0.0e+00       550.1     2928    97.6%        -      1.02
                 torch           -               0.0e+00       560.0     2876    95.9%        -      1.00
softmax_f16      numba_tile      rows=1       FAIL: relative error 3.0e-01 > 1e-03
                 torch           -               0.0e+00        53.7     2500    83.3%        -      1.00
matmul_f16_4096  numba_tile      tile_m=128      4.0e-04       229.1      439    14.6%    600.0      0.86
                 torch           -               4.0e-04       196.3      513    17.1%    700.0      1.00
<BLANKLINE>
targets for numba_tile's bandwidth or TFLOPS:
  vector_add_f32   2928 GB/s, needs 2732 GB/s (95% of torch): met
  softmax_f16      no figure, needs 2400 GB/s (fixed: triton did not run): NOT met
  matmul_f16_4096  600.0 TFLOPS, needs 525.0 TFLOPS (75% of torch): met
  host overhead of a cached 3-array launch: 9.5 us, needs at most 8 us: NOT met (for comparison, torch 4.0 us)
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> report.write_json(results, out / "results.json")
>>> json.loads((out / "results.json").read_text())["copy"]["gbps"]
3000.0
"""

import json
import pathlib

from . import chart, compile_times
from .runner import summarize_variants

JSON_NAME = "results.json"
LAUNCH_OVERHEAD_TARGET_US = 8
PNG_NAME = "results.png"

_TEXT_COLUMNS = ("case", "implementation", "variant")
_NUMBER_COLUMNS = (("rel. error", 10), ("median us", 10), ("GB/s", 7), ("% copy", 7),
                   ("TFLOPS", 7), ("vs torch", 8))


def format_table(results):
    """The results as text: a header, one row per case and implementation (``FAIL`` or
    ``ERROR`` in place of the numbers where a check failed), the targets, and notes on
    variants that failed.

    >>> from numba_tile.bench.report import example_results, format_table
    >>> text = format_table(example_results())
    >>> "FAIL: relative error 3.0e-01 > 1e-03" in text, "met" in text
    (True, True)
    """
    env, copy = results["environment"], results["copy"]
    rows, notes = [], []
    for case in results["cases"]:
        torch_gbps = next((e["gbps"] for e in case["implementations"]
                           if e["name"] == "torch" and e["status"] == "ok"), None)
        for index, entry in enumerate(case["implementations"]):
            texts = [case["name"] if index == 0 else "", entry["name"], entry["label"]]
            if entry["status"] == "ok":
                rows.append((texts, _numbers(entry, torch_gbps), None))
            else:
                rows.append((texts, [], _failure(entry, case)))
            if entry["status"] == "ok":
                notes += [f"{case['name']} {entry['name']} {v['label']}: {_failure(v, case)}"
                          for v in entry["variants"] if v["status"] != "ok"]
    widths = [max([len(name)] + [len(texts[i]) for texts, _, _ in rows])
              for i, name in enumerate(_TEXT_COLUMNS)]
    lines = [f"numba_tile benchmark on {env['device']} ({env['date']})",
             f"numba_tile {env['numba_tile']}, torch {env['torch']}, "
             f"triton {env['triton'] or 'not installed'}, "
             f"cuda.tile {env.get('cutile') or 'not installed'}",
             f"device-to-device copy: {copy['gbps']:.0f} GB/s (median of "
             f"{copy['timing']['runs']} runs); L2 flushed (read) before every run;",
             "GB/s = (bytes read + bytes written) / median time",
             "",
             _row(widths, _TEXT_COLUMNS, [name for name, _ in _NUMBER_COLUMNS])]
    lines += [_row(widths, texts, numbers, failure) for texts, numbers, failure in rows]
    lines += ["", "targets for numba_tile's bandwidth or TFLOPS:"]
    for case in results["cases"]:
        target = case["target"]
        achieved = next((e for e in case["implementations"] if e["name"] == "numba_tile"),
                        None)
        verdict = {True: "met", False: "NOT met", None: "cannot tell"}[target["met"]]
        compute = bool(case.get("flops"))
        have = "no figure"
        if achieved and achieved["status"] == "ok":
            have = (f"{achieved['tflops']:.1f} TFLOPS" if compute
                    else f"{achieved['gbps']:.0f} GB/s")
        need = "?"
        if target["required_gbps"] is not None:
            need = (f"{target['required_tflops']:.1f} TFLOPS" if compute
                    else f"{target['required_gbps']:.0f} GB/s")
        lines.append(f"  {case['name']:<{widths[0]}}  {have}, needs {need} "
                     f"({target['description']}): {verdict}")
    overhead = results.get("launch_overhead_us")
    if overhead:
        ours = overhead["numba_tile"]
        verdict = "met" if ours <= LAUNCH_OVERHEAD_TARGET_US else "NOT met"
        others = "".join(f", {name} {us:.1f} us" for name, us in overhead.items()
                         if name != "numba_tile")
        lines.append(f"  host overhead of a cached 3-array launch: {ours:.1f} us, needs "
                     f"at most {LAUNCH_OVERHEAD_TARGET_US} us: {verdict} (for comparison"
                     f"{others or ': none'})")
    lines += compile_times.report_lines(results.get("compile_seconds", {}))
    if notes:
        lines += ["", "variants that failed (the rows above show the best correct one):"]
        lines += [f"  {note}" for note in notes]
    return "\n".join(lines)


def write_json(results, path):
    """Write ``results`` to ``path`` as indented JSON.

    >>> import tempfile, pathlib, json
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> from numba_tile.bench.report import write_json
    >>> write_json({"cases": []}, path)
    >>> json.loads(path.read_text())
    {'cases': []}
    """
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


def write_report(results, directory, *, with_json=True):
    """Write the JSON file (unless not ``with_json``) and the PNG chart
    (:func:`numba_tile.bench.chart.write_chart`) into ``directory`` (created if needed);
    return what was done, a line each.

    >>> import tempfile
    >>> from numba_tile.bench.report import example_results, write_report
    >>> lines = write_report(example_results(), tempfile.mkdtemp())
    >>> lines[0].startswith("wrote ") and lines[0].endswith("results.json")
    True
    >>> lines[1].startswith(("wrote ", "skipped the PNG chart"))
    True
    """
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    done = []
    if with_json:
        write_json(results, directory / JSON_NAME)
        done.append(f"wrote {directory / JSON_NAME}")
    if chart.write_chart(results, directory / PNG_NAME):
        done.append(f"wrote {directory / PNG_NAME}")
    else:
        done.append("skipped the PNG chart: matplotlib is not installed "
                    "(pip install 'numba-tile[bench]')")
    return done


def failed(results):
    """True if any variant of any implementation failed its check or raised.

    >>> from numba_tile.bench.report import example_results, failed
    >>> failed(example_results()), failed({"cases": []})
    (True, False)
    """
    return any(v["status"] != "ok" for case in results["cases"]
               for entry in case["implementations"] for v in entry["variants"])


def example_results():
    """Made-up results in the format of :func:`numba_tile.bench.runner.run_benchmarks`, for
    examples and tests (not measurements).

    >>> from numba_tile.bench.report import example_results
    >>> [case["name"] for case in example_results()["cases"]]
    ['vector_add_f32', 'softmax_f16', 'matmul_f16_4096']
    """
    def ok(label, gbps, nbytes, error=0.0):
        median = nbytes / gbps / 1e6
        return {"label": label, "params": {}, "status": "ok", "relative_error": error,
                "gbps": gbps, "fraction_of_copy": gbps / 3000.0,
                "timing": {"median_ms": median, "q1_ms": median, "q3_ms": median,
                           "min_ms": median, "runs": 100}}

    def at_tflops(label, tflops, nbytes, flops):
        return {**ok(label, nbytes / (flops / tflops / 1e12) / 1e9, nbytes, 4e-4),
                "tflops": tflops}

    add_bytes, softmax_bytes = 1_610_612_736, 134_217_728
    matmul_bytes, matmul_flops = 3 * 2 * 4096 ** 2, 2 * 4096 ** 3
    numba_tile_add = summarize_variants("numba_tile", [ok("tile=1024", 2900.0, add_bytes),
                                                       ok("tile=2048", 2928.0, add_bytes)])
    numba_tile_softmax = summarize_variants("numba_tile", [
        {"label": "rows=1", "params": {"rows": 1}, "status": "FAIL", "relative_error": 0.3}])
    return {
        "environment": {"device": "Example GPU", "date": "2026-01-01 00:00 UTC",
                        "numba_tile": "0.1.0", "torch": "2.11.0", "triton": None},
        "settings": {"repeats": 100, "warmup": 10, "tuned": True, "l2_flush": True},
        "copy": {"bytes": 1 << 30, "gbps": 3000.0,
                 "timing": {"median_ms": 0.716, "q1_ms": 0.715, "q3_ms": 0.717,
                            "min_ms": 0.714, "runs": 100}},
        "launch_overhead_us": {"numba_tile": 9.5, "torch": 4.0},
        "cases": [
            {"name": "vector_add_f32", "title": "vector add, 2**27 elements, float32",
             "dtype": "float32", "bytes_moved": add_bytes, "tolerance": 1e-5,
             "implementations": [numba_tile_add,
                                 summarize_variants("torch", [ok("-", 2876.0, add_bytes)])],
             "target": {"description": "95% of torch", "required_gbps": 2732.2, "met": True}},
            {"name": "softmax_f16", "title": "row softmax, 8192 x 4096, float16",
             "dtype": "float16", "bytes_moved": softmax_bytes, "tolerance": 1e-3,
             "implementations": [numba_tile_softmax,
                                 summarize_variants("torch", [ok("-", 2500.0, softmax_bytes)])],
             "target": {"description": "fixed: triton did not run",
                        "required_gbps": 2400.0, "met": False}},
            {"name": "matmul_f16_4096", "title": "matmul, 4096 x 4096 x 4096, f16",
             "dtype": "float16", "bytes_moved": matmul_bytes, "flops": matmul_flops,
             "tolerance": 1e-3,
             "implementations": [
                 summarize_variants("numba_tile", [at_tflops("tile_m=128", 600.0,
                                                             matmul_bytes, matmul_flops)]),
                 summarize_variants("torch", [at_tflops("-", 700.0, matmul_bytes,
                                                        matmul_flops)])],
             "target": {"description": "75% of torch",
                        "required_gbps": 0.75 * matmul_bytes / (matmul_flops / 700e12) / 1e9,
                        "required_tflops": 525.0, "met": True}},
        ],
    }


def _numbers(entry, torch_gbps):
    """The columns after the variant: error, time, GB/s, fraction of copy, ratio to torch."""
    ratio = f"{entry['gbps'] / torch_gbps:.2f}" if torch_gbps else "-"
    tflops = f"{entry['tflops']:.1f}" if "tflops" in entry else "-"
    return [f"{entry['relative_error']:.1e}", f"{entry['timing']['median_ms'] * 1e3:.1f}",
            f"{entry['gbps']:.0f}", f"{entry['fraction_of_copy']:.1%}", tflops, ratio]


def _failure(variant, case):
    if variant["status"] == "ERROR":
        return f"ERROR: {variant['error']}"
    text = f"FAIL: relative error {variant['relative_error']:.1e} > {case['tolerance']:.0e}"
    return text + (f" ({variant['error']})" if variant.get("error") else "")


def _row(widths, texts, numbers=(), failure=None):
    """Left-aligned text columns, then right-aligned number columns or a failure text."""
    cells = [t.ljust(w) for t, w in zip(texts, widths)]
    cells += [n.rjust(w) for n, (_, w) in zip(numbers, _NUMBER_COLUMNS)]
    return "  ".join(cells + ([failure] if failure else [])).rstrip()
