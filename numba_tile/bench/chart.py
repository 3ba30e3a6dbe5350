"""The benchmark's charts, drawn with matplotlib where it is installed: a run's figures
(``results.png``) and its change against an earlier run (``comparison.png``).

What goes on a chart is worked out first, without matplotlib, as :class:`Panel` objects: one
panel for the bandwidth-bound cases (GB/s, with the copy bandwidth as a line), one for the
compute-bound cases (TFLOPS); a bar per case and implementation, labelled with its ratio to
PyTorch (``1.02x``) or with ``FAIL`` or ``ERROR`` where it has no figure:

>>> from numba_tile.bench import chart, report
>>> bandwidth, compute = chart.result_panels(report.example_results())
>>> bandwidth.unit, bandwidth.cases, bandwidth.labels["numba_tile"]
('GB/s', ['vector_add_f32', 'softmax_f16'], ['1.02x', 'FAIL'])
>>> compute.unit, compute.cases, compute.values["torch"], compute.labels["numba_tile"]
('TFLOPS', ['matmul_f16_4096'], [700.0], ['0.86x'])
"""

import dataclasses

REFERENCE = "torch"  # the implementation the ratios on the bars are taken against


@dataclasses.dataclass
class Panel:
    """One set of axes: a group of bars per case, a bar per implementation (``values[name]``
    in case order, None where the implementation has no figure) rising or falling from
    ``baseline``, a text on each bar (``labels[name]``, "" for none), and optionally a
    horizontal line at ``line`` named ``line_label``."""

    title: str
    unit: str
    ylabel: str
    cases: list
    values: dict
    labels: dict
    line: float = None
    line_label: str = ""
    baseline: float = 0.0


def result_panels(results):
    """The panels of a run's chart: bandwidth-bound cases, then compute-bound ones (each only
    where the run has such cases), every case the run has.

    >>> from numba_tile.bench.chart import result_panels
    >>> from numba_tile.bench.report import example_results
    >>> [(panel.title, panel.line) for panel in result_panels(example_results())]
    [('bandwidth-bound cases', 3000.0), ('compute-bound cases', None)]
    """
    panels = []
    for compute in (False, True):
        cases = [c for c in results["cases"] if bool(c.get("flops")) == compute]
        if not cases:
            continue
        key = "tflops" if compute else "gbps"
        names = list(dict.fromkeys(e["name"] for c in cases for e in c["implementations"]))
        values = {name: [] for name in names}
        labels = {name: [] for name in names}
        for case in cases:
            entries = {e["name"]: e for e in case["implementations"]}
            reference = entries.get(REFERENCE)
            reference = reference[key] if reference and reference["status"] == "ok" else None
            for name in names:
                entry = entries.get(name)
                if entry is None:
                    values[name].append(None)
                    labels[name].append("")
                elif entry["status"] != "ok":
                    values[name].append(None)
                    labels[name].append(entry["status"])
                else:
                    values[name].append(entry[key])
                    labels[name].append(f"{entry[key] / reference:.2f}x"
                                        if reference and name != REFERENCE else "")
        if compute:
            panels.append(Panel("compute-bound cases", "TFLOPS", "TFLOPS",
                                [c["name"] for c in cases], values, labels))
        else:
            panels.append(Panel("bandwidth-bound cases", "GB/s",
                                "effective GB/s (read + written)",
                                [c["name"] for c in cases], values, labels,
                                line=results["copy"]["gbps"],
                                line_label="device-to-device copy"))
    return panels


def comparison_panels(rows):
    """The panels of a comparison (rows of :func:`numba_tile.bench.compare.compare`): new/old
    per case and implementation as bars from 1, bandwidth-bound cases then compute-bound
    ones; bars without a ratio say why (``FAIL``, ``ERROR``, ``new``: not in the old run,
    ``gone``: not in the new one).

    >>> from numba_tile.bench.chart import comparison_panels
    >>> [panel] = comparison_panels([
    ...     {"case": "a", "implementation": "numba_tile", "unit": "GB/s", "ratio": 1.1,
    ...      "old_status": "ok", "new_status": "ok"},
    ...     {"case": "b", "implementation": "numba_tile", "unit": "GB/s", "ratio": None,
    ...      "old_status": "absent", "new_status": "ok"}])
    >>> panel.title, panel.cases
    ('bandwidth-bound cases', ['a', 'b'])
    >>> panel.values, panel.labels
    ({'numba_tile': [1.1, None]}, {'numba_tile': ['1.10', 'new']})
    """
    panels = []
    for unit, title in (("GB/s", "bandwidth-bound cases"), ("TFLOPS", "compute-bound cases")):
        chosen = [row for row in rows if row["unit"] == unit]
        if not chosen:
            continue
        cases = list(dict.fromkeys(row["case"] for row in chosen))
        names = list(dict.fromkeys(row["implementation"] for row in chosen))
        values = {name: [None] * len(cases) for name in names}
        labels = {name: [""] * len(cases) for name in names}
        for row in chosen:
            i, name = cases.index(row["case"]), row["implementation"]
            values[name][i] = row["ratio"]
            labels[name][i] = _comparison_label(row)
        panels.append(Panel(title, "new / old", f"new / old ({unit})", cases, values, labels,
                            line=1.0, line_label="no change", baseline=1.0))
    return panels


def write_chart(results, path):
    """Draw a run's panels (:func:`result_panels`) into the PNG file ``path``. Returns False
    (and writes nothing) where matplotlib is not installed.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "chart.png"
    >>> from numba_tile.bench.report import example_results
    >>> from numba_tile.bench.chart import write_chart
    >>> drawn = write_chart(example_results(), path)
    >>> drawn == path.exists()
    True
    """
    return _save(draw(result_panels(results), result_title(results)), path)


def write_comparison_chart(rows, path, title):
    """Draw :func:`comparison_panels` of ``rows`` into the PNG file ``path``, with ``title``.
    Returns False (and writes nothing) where matplotlib is not installed.

    >>> import tempfile, pathlib
    >>> from numba_tile.bench.chart import write_comparison_chart
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "comparison.png"
    >>> rows = [{"case": "a", "implementation": "torch", "unit": "GB/s", "ratio": 0.9,
    ...          "old_status": "ok", "new_status": "ok"}]
    >>> write_comparison_chart(rows, path, "this run against old.json") == path.exists()
    True
    """
    return _save(draw(comparison_panels(rows), title), path)


def result_title(results):
    """The title of a run's chart.

    >>> from numba_tile.bench.chart import result_title
    >>> from numba_tile.bench.report import example_results
    >>> result_title(example_results())
    'numba_tile 0.1.0 on Example GPU (2026-01-01 00:00 UTC); on the bars: ratio to torch'
    """
    env = results["environment"]
    return (f"numba_tile {env['numba_tile']} on {env['device']} ({env['date']}); "
            f"on the bars: ratio to {REFERENCE}")


def draw(panels, title):
    """A matplotlib ``Figure`` of ``panels``, one above the other, under ``title``; None
    where matplotlib is not installed.

    >>> from numba_tile.bench import chart, report
    >>> figure = chart.draw(chart.result_panels(report.example_results()), "example")
    >>> figure is None or len(figure.axes) == 2
    True
    """
    try:  # optional dependency, and slow to import: only a chart needs it
        from matplotlib.figure import Figure
    except ImportError:
        return None
    widest = max((len(p.cases) * (0.25 * len(p.values) + 0.4) for p in panels), default=0)
    figure = Figure(figsize=(max(8.0, widest + 3.0), 4.2 * max(len(panels), 1)),
                    layout="constrained")
    axes_list = figure.subplots(len(panels), 1, squeeze=False)[:, 0] if panels else []
    for axes, panel in zip(axes_list, panels):
        _draw_panel(axes, panel)
    figure.suptitle(title, fontsize="medium")
    return figure


def _save(figure, path):
    if figure is None:
        return False
    figure.savefig(path, dpi=120)
    return True


def _draw_panel(axes, panel):
    """Grouped bars from the baseline, each with its label just above the higher of its
    ends (at the baseline where there is no bar)."""
    names = list(panel.values)
    width = 0.8 / max(len(names), 1)
    figures = [v for values in panel.values.values() for v in values if v is not None]
    ends = figures + [panel.baseline] + ([panel.line] if panel.line is not None else [])
    low, high = (0.0 if not panel.baseline else min(ends)), max(ends)
    step = 0.01 * max(high - low, 1e-9)
    for k, name in enumerate(names):
        offsets = [i + (k - (len(names) - 1) / 2) * width for i in range(len(panel.cases))]
        values = panel.values[name]
        axes.bar(offsets, [(v if v is not None else panel.baseline) - panel.baseline
                           for v in values], width, bottom=panel.baseline, label=name)
        for x, value, label in zip(offsets, values, panel.labels[name]):
            if label:
                top = panel.baseline if value is None else max(value, panel.baseline)
                axes.text(x, top + step, label, rotation=90, ha="center", va="bottom",
                          fontsize="x-small", bbox={"facecolor": "white", "alpha": 0.7,
                                                    "edgecolor": "none", "pad": 0.5})
    if panel.line is not None:
        axes.axhline(panel.line, color="black", linestyle="--", linewidth=1,
                     label=panel.line_label)
    # room above the highest bar for its label; a baseline's axis starts below the lowest
    axes.set_ylim(low - (10 * step if panel.baseline else 0), high + 25 * step)
    axes.set_xticks(range(len(panel.cases)), panel.cases, rotation=25, ha="right",
                    fontsize="small")
    axes.set_ylabel(panel.ylabel)
    axes.set_title(panel.title, fontsize="medium")
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")


def _comparison_label(row):
    if row["ratio"] is not None:
        return f"{row['ratio']:.2f}"
    if row["old_status"] == "absent":
        return "new"
    if row["new_status"] == "absent":
        return "gone"
    return row["new_status"] if row["new_status"] != "ok" else row["old_status"]
