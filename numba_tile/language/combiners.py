"""``scan`` and ``reduce`` with a user's combining function, written as tile code: both
executors run these same functions (the compiler inlines them into the kernel as it
inlines a user's helpers), so they compute alike, combining in the same order. The steps of
the combining trees and the checks are the rules' (:mod:`numba_tile.rules.combiners`),
asked at compile time with ``static_eval``.
"""

import functools
import os
import re

from ..errors import TileTypeError
from ..source.tile_functions import function
from ..rules import combiners as combiner_rules
from .debugging import static_eval, static_iter
from .elementwise import where
from .scans import merge_runs, run_element, split_runs, stack_runs, swap_halves, \
    upper_halves
from .shapes import broadcast_to, extract, reshape

# A closure cannot be called with *args of a tuple that an unrolled loop builds, and a
# loop-carried tuple is best taken apart by constant indices: the work of one step on N
# tiles is generated once per N (up to _MOST_TILES), as tile code without loops.
_MOST_TILES = 16


@function(host=True)
def _checked(op, inputs, results):
    """``results`` (of ``func``) checked to be as many tiles as ``inputs``, of their
    dtypes. (The check's value, 0, picks the results: what the caller does with them is
    typed after the check, whose error is then the one raised.)"""
    return (results,)[static_eval(combiner_rules.check_results(op, inputs, results))]


def _joined(count, line):
    """``line`` with each ``{all:EXPR}`` replaced by ``EXPR`` for the tiles ``0 .. count - 1``
    (``#`` standing for the number), joined with commas."""
    while "{all:" in line:
        start = line.index("{all:")
        end = line.index("}", start)
        joined = ", ".join(line[start + 5:end].replace("#", str(i)) for i in range(count))
        line = line[:start] + joined + line[end + 1:]
    return line


# the file the generated functions name: numba_tile's, so that an error in them (of the
# user's func) is placed at the user's call of reduce or scan, as of any op of numba_tile's
_GENERATED_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "<generated>")
_CALL = re.compile(r"^(\s*)(\w+(?:, \w+)+) = func\((.*)\)(\s*#.*)?$")
_CHECK = re.compile(r"^(\s*)(\w+(?:, \w+)+), = checked\((.*), \(\2,\)\)$")


def _checked_calls(lines):
    """``lines`` with each call of ``func`` for several tiles, which unpacks its results,
    and the check after it made into one call whose results the check unpacks: the check's
    error (cuTile's, of results of the wrong count) comes first, not Python's unpacking."""
    out = []
    for line in lines:
        call, check = _CALL.match(line), _CHECK.match(line)
        if call:
            out.append(f"{call[1]}results_of_func = func({call[3]})")
        elif check and out and "results_of_func = func(" in out[-1]:
            out.append(f"{check[1]}{check[2]}, = checked({check[3]}, results_of_func)")
        else:
            out.append(line)
    return out


def _generated(name, count, lines):
    """A tile-code function ``name_count(tiles, step, func, option)`` made of ``lines``: a
    line starting with ``each:`` is repeated for each tile, ``#`` standing for its number;
    ``{all:EXPR}`` joins ``EXPR`` over the tiles with commas (``h0, h1``), which unpacks
    ``func``'s tuple for several tiles and takes its tile for one."""
    body = []
    for line in lines:
        if line.startswith("each:"):
            body += ["    " + line[5:].replace("#", str(i)) for i in range(count)]
            continue
        body.append("    " + _joined(count, line))
    body = _checked_calls(body)
    namespace = {"checked": _checked, "swap_halves": swap_halves,
                 "upper_halves": upper_halves, "where": where,
                 "totals_of": _TOTALS[count] if name != "totals" else None}
    exec(compile(f"def {name}_{count}(tiles, step, func, option):\n" + "\n".join(body) + "\n",
                 _GENERATED_FILE, "exec"), namespace)  # noqa: S102
    return function(namespace[f"{name}_{count}"], host=True)


def _totals_step(count):
    """The totals of the doubled blocks of ``count`` tiles: ``tiles`` holds each element's
    block total, its partner's (the other half's) and the op's inputs (for the check);
    ``step`` is whether the element is in the half that comes second (the upper one, but
    in a reversed scan). One call of ``func`` per element: the two totals are put in the
    order of their blocks first (``func`` need not commute)."""
    return _generated("totals", count, [
        "totals, partners, inputs = tiles",
        "each:first# = where(step, partners[#], totals[#])",
        "each:second# = where(step, totals[#], partners[#])",
        "{all:c#} = func({all:first#}, {all:second#})",
        "{all:c#}, = checked(option, inputs, ({all:c#},))",
        "return ({all:c#},)",
    ])


def _scan_step(count):
    """One doubling of the scanned blocks of ``count`` tiles: ``state`` is the running
    results and the block totals (``option``: reverse)."""
    return _generated("scan_step", count, [
        "axis, width = step",
        "prefixes, totals = tiles",
        "upper = upper_halves(prefixes[0], axis, width)",
        "each:p# = prefixes[#]",
        "each:t# = totals[#]",
        "each:q# = swap_halves(t#, axis, width)",
        "{all:a#} = func({all:q#}, {all:p#})  # the other half's total, then the element",
        "{all:a#}, = checked('scan', prefixes, ({all:a#},))",
        "if option:  # reversed: the high half comes first",
        "    second = where(upper, False, True)",
        "else:",
        "    second = upper",
        "each:p# = where(second, a#, p#)",
        "{all:t#}, = totals_of((({all:t#},), ({all:q#},), prefixes), second, func, 'scan')",
        "return (({all:p#},), ({all:t#},))",
    ])


def _reduce_step(count):
    """One doubling of the combined blocks of ``count`` tiles (``option`` unused)."""
    return _generated("reduce_step", count, [
        "axis, width = step",
        "upper = upper_halves(tiles[0], axis, width)",
        "each:t# = tiles[#]",
        "each:q# = swap_halves(t#, axis, width)",
        "return totals_of((({all:t#},), ({all:q#},), tiles), upper, func, 'reduce')",
    ])


_TOTALS = (None,) + tuple(_totals_step(n) for n in range(1, _MOST_TILES + 1))
_SCAN_STEPS = (None,) + tuple(_scan_step(n) for n in range(1, _MOST_TILES + 1))
_REDUCE_STEPS = (None,) + tuple(_reduce_step(n) for n in range(1, _MOST_TILES + 1))


@functools.lru_cache(maxsize=None)
def _program(op, count, steps, run=1):
    """The tile code of a whole ``op`` on ``count`` tiles (0: a single tile) in ``steps``
    doubling steps, after runs of ``run`` elements (:func:`_runs_scan_lines`,
    :func:`_runs_reduce_lines`), without loops: ``run(x, shape, plan, func, option)``,
    ``plan`` being the :func:`~numba_tile.rules.combiners.scan_plan` or
    :func:`~numba_tile.rules.combiners.reduce_plan`, ``option`` ``reverse`` for a scan.
    Chosen at compile time as the one item of a ``static_iter`` loop (a static_eval's value
    may not differ from one inlined copy of a helper to the next); one per (op, count,
    steps, run)."""
    if count > _MOST_TILES:
        raise TileTypeError(f"{op}() combines at most {_MOST_TILES} tiles, got {count}")
    tiles = max(count, 1)
    if count == 0:
        lines = ["tiles = (broadcast_to(x, shape),)"]
    else:
        lines = ["tiles = (" + "".join(f"broadcast_to(x[{i}], shape), "
                                       for i in range(count)) + ")"]
    if op == "scan" and run > 1:
        lines += _runs_scan_lines(tiles, run, steps)
        lines.append("tiles = (" + "".join(f"r{k}, " for k in range(tiles)) + ")")
    elif op == "scan":  # the running results, and the totals of their blocks
        lines += ["steps = plan[3]", "tiles = (tiles, tiles)"]
        lines += [f"tiles = step(tiles, steps[{k}], func, option)" for k in range(steps)]
        lines.append("tiles = tiles[0]")
    else:
        lines.append("axis, inner, run, steps, index, first, result = plan")
        if run > 1:  # each run's total, its elements combined one after the other
            lines += _runs_reduce_lines(tiles, run)
        lines += [f"tiles = step(tiles, steps[{k}], func, option)" for k in range(steps)]
        # every element holds its axis's total: the first one's is the result
        lines.append("tiles = (" + "".join(
            f"reshape(extract(tiles[{i}], index, first), result), "
            for i in range(tiles)) + ")")
    lines.append("return tiles[0]" if count == 0 else "return tiles")
    namespace = {"broadcast_to": broadcast_to, "extract": extract, "reshape": reshape,
                 "step": (_SCAN_STEPS if op == "scan" else _REDUCE_STEPS)[tiles],
                 "split_runs": split_runs, "merge_runs": merge_runs,
                 "run_element": run_element, "stack_runs": stack_runs,
                 "upper_halves": upper_halves, "swap_halves": swap_halves, "where": where,
                 "checked": _checked, "totals_of": _TOTALS[tiles]}
    name = f"{op}_{count}_{steps}_{run}"
    exec(compile(f"def {name}(x, shape, plan, func, option):\n" +  # noqa: S102
                 "".join(f"    {line}\n" for line in _checked_calls(lines)),
                 _GENERATED_FILE, "exec"), namespace)
    return function(namespace[name], host=True)


def _runs_reduce_lines(count, run):
    """The totals of the runs of a reduction (:func:`~numba_tile.rules.combiners.reduce_plan`),
    each run's elements combined one after the other; they become ``tiles``."""
    tiles = range(count)
    lines = [f"y{k} = split_runs(tiles[{k}], axis, run)" for k in tiles]
    lines += [f"t{k} = run_element(y{k}, inner, 0)" for k in tiles]
    for j in range(1, run):
        lines += [f"e{k} = run_element(y{k}, inner, {j})" for k in tiles]
        lines.append(_joined(count, "{all:t#} = func({all:t#}, {all:e#})"))
        lines.append(_joined(count, "{all:t#}, = checked('reduce', tiles, ({all:t#},))"))
    lines.append("tiles = (" + "".join(f"t{k}, " for k in tiles) + ")")
    return lines


def _runs_scan_lines(count, run, steps):
    """The body of a scan in runs (:func:`~numba_tile.rules.combiners.scan_plan`): the runs
    scanned one element after the other, their totals doubled into each run's offset
    (``has``: whether the run has one yet: the first run of the axis never does), and the
    offsets combined with the elements. ``option`` is ``reverse``: a reversed scan takes
    the elements of a run from the last, and the upper half of a block first."""
    tiles = range(count)
    lines = ["axis, inner, run, steps = plan"]
    lines += [f"y{k} = split_runs(tiles[{k}], axis, run)" for k in tiles]
    lines += [f"e{k}_{j} = run_element(y{k}, inner, {j})" for k in tiles for j in range(run)]
    for reverse in (True, False):
        order = list(reversed(range(run))) if reverse else list(range(run))
        body = [f"p{k}_{order[0]} = e{k}_{order[0]}" for k in tiles]
        for before, j in zip(order, order[1:]):
            body.append(_joined(count, f"{{all:p#_{j}}} = func({{all:p#_{before}}}, "
                                       f"{{all:e#_{j}}})"))
            body.append(_joined(count, f"{{all:p#_{j}}}, = checked('scan', tiles, "
                                       f"({{all:p#_{j}}},))"))
        body += [f"t{k} = p{k}_{order[-1]}" for k in tiles]
        lines += ["if option:" if reverse else "else:"] + ["    " + b for b in body]
    for step in range(steps):
        lines += [f"width_axis, width = steps[{step}]",
                  "upper = upper_halves(t0, width_axis, width)",
                  "if option:", "    second = where(upper, False, True)",
                  "else:", "    second = upper"]
        lines += [f"q{k} = swap_halves(t{k}, width_axis, width)" for k in tiles]
        if step == 0:  # the offsets start here, where a run first follows another
            lines += [f"o{k} = where(second, q{k}, t{k})" for k in tiles]
            lines.append("has = second")
        else:
            lines.append(_joined(count, "{all:c#} = func({all:q#}, {all:o#})"))
            lines.append(_joined(count, "{all:c#}, = checked('scan', tiles, ({all:c#},))"))
            lines += [f"o{k} = where(second, where(has, c{k}, q{k}), o{k})" for k in tiles]
            lines.append("has = has | second")
        lines.append(_joined(count, "{all:t#}, = totals_of((({all:t#},), ({all:q#},), tiles), "
                                    "second, func, 'scan')"))
    for j in range(run):
        if steps:
            lines.append(_joined(count, f"{{all:f#_{j}}} = func({{all:o#}}, {{all:p#_{j}}})"))
            lines.append(_joined(count, f"{{all:f#_{j}}}, = checked('scan', tiles, "
                                        f"({{all:f#_{j}}},))"))
            lines += [f"p{k}_{j} = where(has, f{k}_{j}, p{k}_{j})" for k in tiles]
    parts = [", ".join(f"p{k}_{j}" for j in range(run)) for k in tiles]
    lines += [f"r{k} = merge_runs(stack_runs(({parts[k]},), y{k}, inner), axis)"
              for k in tiles]
    return lines


@function(host=True)  # (the interpreter calls it as it is, from ct.scan)
def scan(x, /, axis, func, identity, *, reverse=False):
    """The inclusive scan of ``x`` along ``axis`` by ``func`` (``func(a, b)`` of two 0-d
    tiles, or of two groups of N for a tuple of N tiles whose shapes broadcast to one),
    from the end with ``reverse``; ``identity`` is ``func``'s identity (a constant scalar,
    or a tuple of N). ``func`` may not branch, loop, touch memory or nest a scan.

    >>> import operator
    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.arange(8, dtype=ct.int32) + 1
    ...     print(ct.scan(t, 0, operator.mul, 1))
    ...     print(ct.scan(t % 5, 0, lambda a, b: ct.maximum(a, b), 0, reverse=True))
    >>> ct.launch(0, (1,), show, ())
    [1, 2, 6, 24, 120, 720, 5040, 40320]
    [4, 4, 4, 4, 3, 3, 3, 3]
    """
    count, axis, shape = static_eval(combiner_rules.operands("scan", x, axis, identity))
    static_eval(combiner_rules.check_combiner("scan", func, count))
    plan = static_eval(combiner_rules.scan_plan(shape, axis))
    for run in static_iter((_program("scan", count, len(plan[3]), plan[2]),)):
        result = run(x, shape, plan, func, reverse)
    return result


@function(host=True)
def reduce(x, /, axis, func, identity, *, keepdims=False):
    """The reduction of ``x`` along ``axis`` by ``func`` (``func(a, b)`` of two 0-d tiles,
    or of two groups of N for a tuple of N tiles whose shapes broadcast to one), combining
    neighbouring elements first; ``identity`` is ``func``'s identity (a constant scalar, or
    a tuple of N). ``func`` may not branch, loop, touch memory or nest a reduction.

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     t = ct.reshape(ct.arange(8, dtype=ct.int32), (2, 4))
    ...     print(ct.reduce(t, 1, lambda a, b: a + b, 0))
    ...     low, at = ct.reduce((t, ct.arange(4, dtype=ct.int32)), 1,
    ...                         lambda v, i, w, j: (ct.minimum(v, w), ct.where(w < v, j, i)),
    ...                         (0, 0), keepdims=True)
    ...     print(low, at)
    >>> ct.launch(0, (1,), show, ())
    [6, 22]
    [[0], [4]] [[0], [0]]
    """
    count, axis, shape = static_eval(combiner_rules.operands("reduce", x, axis, identity))
    static_eval(combiner_rules.check_combiner("reduce", func, count))
    plan = static_eval(combiner_rules.reduce_plan(shape, axis, keepdims))
    for run in static_iter((_program("reduce", count, len(plan[3]), plan[2]),)):
        result = run(x, shape, plan, func, 0)
    return result
