"""A run against an earlier one: ``python -m numba_tile.bench --compare OLD.json``.

For each case and implementation, the figure of record (TFLOPS for compute-bound cases, GB/s
for the others) of the earlier run's ``results.json`` and of this one, and their ratio:

>>> from numba_tile.bench import compare, report
>>> old, new = report.example_results(), report.example_results()
>>> new["cases"][0]["implementations"][0]["gbps"] = 2990.0
>>> print(compare.format_comparison(old, new, "old.json"))
this run against old.json (Example GPU, 2026-01-01 00:00 UTC)
<BLANKLINE>
case             implementation           old           new  new/old
vector_add_f32   numba_tile          2928 GB/s     2990 GB/s     1.02
                 torch               2876 GB/s     2876 GB/s     1.00
softmax_f16      numba_tile               FAIL          FAIL        -
                 torch               2500 GB/s     2500 GB/s     1.00
matmul_f16_4096  numba_tile       600.0 TFLOPS  600.0 TFLOPS     1.00
                 torch            700.0 TFLOPS  700.0 TFLOPS     1.00
<BLANKLINE>
geometric mean of new/old where both runs have a figure: numba_tile 1.01 (2 cases),
torch 1.00 (3 cases)
"""

import json
import math


def load_results(path):
    """The results a run wrote to ``path`` (its ``results.json``); ``ValueError`` saying what
    is wrong where the file cannot be read or is not such a file.

    >>> import tempfile, pathlib
    >>> from numba_tile.bench.compare import load_results
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text('{"cases": 3}')
    >>> load_results(path)
    Traceback (most recent call last):
    ...
    ValueError: ...x.json is not a results.json of python -m numba_tile.bench (no list of cases)
    """
    try:
        with open(path) as f:
            results = json.load(f)
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON ({error})") from None
    if not (isinstance(results, dict) and isinstance(results.get("cases"), list)
            and isinstance(results.get("environment"), dict)):
        raise ValueError(f"{path} is not a results.json of python -m numba_tile.bench "
                         f"(no list of cases)")
    return results


def compare(old, new):
    """One row per case and implementation of either run (this run's order first): the
    ``unit``, the ``old`` and ``new`` figures (None without one), each run's status (``ok``,
    ``FAIL``, ``ERROR``, or ``absent`` where the run did not have it) and ``ratio``
    (new/old, None unless both are figures).

    >>> from numba_tile.bench.compare import compare
    >>> from numba_tile.bench.report import example_results
    >>> old, new = example_results(), example_results()
    >>> del old["cases"][2]
    >>> row = compare(old, new)[-1]
    >>> row["case"], row["unit"], row["old_status"], row["new"], row["ratio"]
    ('matmul_f16_4096', 'TFLOPS', 'absent', 700.0, None)
    """
    old_cases = {case["name"]: case for case in old["cases"]}
    new_cases = {case["name"]: case for case in new["cases"]}
    rows = []
    for name in dict.fromkeys([*new_cases, *old_cases]):
        pair = (old_cases.get(name), new_cases.get(name))
        compute = any(case and case.get("flops") for case in pair)
        key, unit = ("tflops", "TFLOPS") if compute else ("gbps", "GB/s")
        entries = [{e["name"]: e for e in case["implementations"]} if case else {}
                   for case in pair]
        for implementation in dict.fromkeys([*entries[1], *entries[0]]):
            row = {"case": name, "implementation": implementation, "unit": unit}
            for when, found in zip(("old", "new"), entries):
                entry = found.get(implementation)
                row[f"{when}_status"] = entry["status"] if entry else "absent"
                row[when] = entry.get(key) if entry and entry["status"] == "ok" else None
            row["ratio"] = (row["new"] / row["old"] if row["new"] is not None
                            and row["old"] else None)
            rows.append(row)
    return rows


def geometric_means(rows):
    """``{implementation: (geometric mean of its ratios, number of cases)}`` over the rows
    with a ratio.

    >>> from numba_tile.bench.compare import geometric_means
    >>> geometric_means([{"implementation": "numba_tile", "ratio": 2.0},
    ...                  {"implementation": "numba_tile", "ratio": 0.5},
    ...                  {"implementation": "torch", "ratio": None}])
    {'numba_tile': (1.0, 2)}
    """
    ratios = {}
    for row in rows:
        if row["ratio"]:
            ratios.setdefault(row["implementation"], []).append(row["ratio"])
    return {name: (math.exp(sum(map(math.log, r)) / len(r)), len(r))
            for name, r in ratios.items()}


def format_comparison(old, new, old_name):
    """The comparison as text: a title naming ``old_name`` and the earlier run, notes where
    the two runs are not alike (other GPU, other sizes), a row per case and implementation,
    and the geometric mean of each implementation's ratios.

    >>> from numba_tile.bench.compare import format_comparison
    >>> from numba_tile.bench.report import example_results
    >>> old, new = example_results(), example_results()
    >>> new["environment"]["device"] = "Other GPU"
    >>> print(format_comparison(old, new, "old.json").splitlines()[1])
    note: the earlier run was on Example GPU, this one on Other GPU
    """
    rows = compare(old, new)
    env = old["environment"]
    lines = [f"this run against {old_name} ({env.get('device')}, {env.get('date')})"]
    lines += [f"note: {note}" for note in _differences(old, new)]
    table = [["case", "implementation", "old", "new", "new/old"]]
    previous = None
    for row in rows:
        table.append([row["case"] if row["case"] != previous else "", row["implementation"],
                      _figure(row, "old"), _figure(row, "new"),
                      f"{row['ratio']:.2f}" if row["ratio"] is not None else "-"])
        previous = row["case"]
    widths = [max(len(cells[i]) for cells in table) for i in range(5)]
    lines.append("")
    lines += ["  ".join([cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
                        + [c.rjust(w) for c, w in zip(cells[2:], widths[2:])]).rstrip()
              for cells in table]
    means = geometric_means(rows)
    lines.append("")
    if means:
        lines.append("geometric mean of new/old where both runs have a figure: " + ", ".join(
            f"{name} {mean:.2f} ({count} case{'s' if count != 1 else ''})"
            for name, (mean, count) in means.items()))
    else:
        lines.append("no case and implementation has a figure in both runs")
    return "\n".join(lines)


def _figure(row, when):
    """A figure with its unit, or the status where there is none (``-``: not in that run)."""
    value = row[when]
    if value is None:
        status = row[f"{when}_status"]
        return "-" if status == "absent" else status
    return f"{value:.1f} TFLOPS" if row["unit"] == "TFLOPS" else f"{value:.0f} GB/s"


def _differences(old, new):
    """What makes the two runs' figures less comparable than they look."""
    notes = []
    devices = (old["environment"].get("device"), new["environment"].get("device"))
    if devices[0] != devices[1]:
        notes.append(f"the earlier run was on {devices[0]}, this one on {devices[1]}")
    quick = [bool(r.get("settings", {}).get("quick")) for r in (old, new)]
    if quick[0] != quick[1]:
        notes.append(f"{'the earlier run' if quick[0] else 'this run'} used --quick (smaller "
                     f"sizes, no tuning)")
    return notes
