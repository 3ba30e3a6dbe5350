"""Runs the cases: check every implementation against float64, then time the correct ones.

For each case: fresh random inputs on the GPU, the float64 reference, then for each
implementation and each of its parameter sets (only the default one without tuning):

1. prepare it (a NaN-filled output for those that write into one) and run it once;
2. compare with the reference (``||out - ref|| / ||ref||``, see :mod:`numba_tile.bench.cases`);
   over the tolerance, or not finite, is ``FAIL`` and the variant is not timed; an exception
   (a compile error, a CUDA error at the synchronization) is ``ERROR``;
3. time it (:func:`numba_tile.bench.timing.time_on_gpu`), then run and check it once more:
   an error that moves between runs is a race, reported as ``FAIL``.

Where cuTile (``cuda.tile``) can be imported, each case with a numba_tile kernel also runs that
kernel under cuTile (:mod:`numba_tile.bench.cutile`). The fastest correct parameter set of
each implementation stands for it. The result is a
JSON-ready dict, which :mod:`numba_tile.bench.report` prints and writes. Needs PyTorch and a
CUDA GPU, except :func:`summarize_variants`:

>>> from numba_tile.bench.runner import summarize_variants
>>> summarize_variants("torch", [{"label": "-", "status": "ok", "gbps": 2900.0}])["gbps"]
2900.0
"""

import datetime
import platform

import numba_cuda

import numba_tile as ct
from . import compile_times, cutile, kernels, references, timing
from .optional import torch

SEED = 2026


def run_benchmarks(cases, *, repeats=100, warmup=10, tune=True, copy_bytes=1 << 30,
                   log=print):
    """Check and time every implementation of ``cases``; ``log`` gets a line per variant.

    >>> from numba_tile.bench import cases  # doctest: +SKIP
    >>> results = run_benchmarks(cases.all_cases(quick=True), tune=False)  # doctest: +SKIP
    >>> results["cases"][0]["implementations"][0]["name"]  # doctest: +SKIP
    'numba_tile'
    """
    copy_gbps, copy_timing = timing.copy_bandwidth(copy_bytes, repeats=repeats, warmup=warmup)
    log(f"device-to-device copy of {copy_bytes >> 20} MiB: {copy_gbps:.0f} GB/s")
    if cutile.installed() is None and not cutile.IMPORT_ERROR.startswith("ModuleNotFound"):
        log(f"cuTile is installed but cannot be imported ({cutile.IMPORT_ERROR}): its "
            f"column is left out")
    results = {
        "environment": environment(),
        "settings": {"repeats": repeats, "warmup": warmup, "tuned": tune, "l2_flush": True,
                     "seed": SEED},
        "copy": {"bytes": copy_bytes, "gbps": copy_gbps, "timing": copy_timing.as_dict()},
        "cases": [],
    }
    with ct.interpret(False):  # NUMBA_TILE_INTERPRET in the environment must not apply here
        for index, case in enumerate(cases):
            generator = torch.Generator(device="cuda").manual_seed(SEED + index)
            results["cases"].append(_run_case(case, generator, copy_gbps, repeats=repeats,
                                              warmup=warmup, tune=tune, log=log))
            torch.cuda.empty_cache()
        results["launch_overhead_us"] = launch_overhead()
    log("host overhead of a cached launch: " + ", ".join(
        f"{name} {us:.1f} us" for name, us in results["launch_overhead_us"].items()))
    if any(case.name.startswith(("matmul", "attention")) for case in cases):
        major, minor = torch.cuda.get_device_capability()
        results["compile_seconds"] = compile_times.measure(f"sm_{major}{minor}")
        for line in compile_times.report_lines(results["compile_seconds"]):
            log(line.strip())
    return results


def launch_overhead():
    """Host microseconds per launch of a cached kernel with three arrays (``c = a + b`` on
    1024 float32 elements), for numba_tile, PyTorch (``torch.add(a, b, out=c)``), and Triton
    and cuTile where installed: ``{name: microseconds}``.

    >>> launch_overhead()["numba_tile"] < 15  # doctest: +SKIP
    True
    """
    a, b = (torch.rand(1024, device="cuda") for _ in range(2))
    c = torch.empty_like(a)
    stream = torch.cuda.current_stream()
    kernel, grid, args = kernels.vector_add_launch(a, b, c, tile=1024)
    overhead = {"numba_tile": timing.host_overhead_us(
                    lambda: ct.launch(stream, grid, kernel, args)),
                "torch": timing.host_overhead_us(lambda: torch.add(a, b, out=c))}
    if references.triton is not None:
        overhead["triton"] = timing.host_overhead_us(
            lambda: references.triton_vector_add(a, b, c, block=1024))
    module = cutile.installed()
    if module is not None:
        theirs = cutile.translate_kernel(kernel, module)
        overhead[cutile.NAME] = timing.host_overhead_us(
            lambda: module.launch(stream, grid, theirs, args))
    return overhead


def environment():
    """What the numbers were measured on and with.

    >>> environment()["device"]  # doctest: +SKIP
    'NVIDIA H100 80GB HBM3'
    """
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "device": properties.name,
        "multiprocessors": properties.multi_processor_count,
        "l2_bytes": getattr(properties, "L2_cache_size", None),
        "numba_tile": ct.__version__,
        "numba_cuda": getattr(numba_cuda, "__version__", None),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": references.triton_version(),
        "cutile": cutile.cutile_version(),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def relative_error(out, reference):
    """``||out - reference|| / ||reference||`` in float64; NaN where ``out`` has the wrong
    shape, and not finite where ``out`` is.

    >>> import torch  # doctest: +SKIP
    >>> exact = torch.tensor([3.0, 4.0], dtype=torch.float64)  # doctest: +SKIP
    >>> relative_error(torch.tensor([3.0, 4.5]), exact)  # doctest: +SKIP
    0.1
    """
    if tuple(out.shape) != tuple(reference.shape):
        return float("nan")
    difference = torch.linalg.vector_norm(out.double() - reference)
    return float(difference / torch.linalg.vector_norm(reference))


def summarize_variants(name, variants):
    """An implementation's entry: its fastest correct variant's fields, the status (``ok`` if
    any variant is correct, else the first variant's), and all ``variants``.

    >>> from numba_tile.bench.runner import summarize_variants
    >>> entry = summarize_variants("numba_tile", [
    ...     {"label": "rows=1", "status": "ok", "gbps": 2000.0},
    ...     {"label": "rows=2", "status": "ok", "gbps": 2500.0},
    ...     {"label": "rows=4", "status": "FAIL", "relative_error": 0.5}])
    >>> entry["status"], entry["label"], entry["gbps"], len(entry["variants"])
    ('ok', 'rows=2', 2500.0, 3)
    """
    correct = [v for v in variants if v["status"] == "ok"]
    best = max(correct, key=lambda v: v["gbps"]) if correct else variants[0]
    return {"name": name, **best, "variants": variants}


def _run_case(case, generator, copy_gbps, *, repeats, warmup, tune, log):
    inputs = case.make_inputs(torch, generator)
    reference = case.reference(*inputs)
    entries = []
    for implementation in (*case.implementations, *cutile.references(case)):
        if implementation.name == "triton" and references.triton_version() is None:
            continue
        variants = []
        for params in implementation.params if tune else implementation.params[:1]:
            variant = _run_variant(case, implementation, params, inputs, reference,
                                   repeats=repeats, warmup=warmup)
            if variant["status"] == "ok":
                variant["fraction_of_copy"] = variant["gbps"] / copy_gbps
            log(f"{case.name:<26} {implementation.name:<10} {variant['label']:<34} "
                f"{_describe(variant)}")
            variants.append(variant)
        entries.append(summarize_variants(implementation.name, variants))
    gbps = {entry["name"]: entry["gbps"] for entry in entries if entry["status"] == "ok"}
    required, description = case.target.required_gbps(gbps, copy_gbps) \
        if case.target is not None else (None, "none: a measure, next to the references")
    achieved = gbps.get("numba_tile")
    target = {"description": description, "required_gbps": required,
              "met": None if required is None else achieved is not None
              and achieved >= required}
    if case.flops and required is not None:  # the same fraction, in TFLOPS
        target["required_tflops"] = required * 1e9 / case.bytes_moved * case.flops / 1e12
    return {
        "name": case.name, "title": case.title, "dtype": case.dtype,
        "bytes_moved": case.bytes_moved, "flops": case.flops, "tolerance": case.tolerance,
        "implementations": entries, "target": target,
    }


def _run_variant(case, implementation, params, inputs, reference, *, repeats, warmup):
    variant = {"label": implementation.label(params), "params": params}
    try:
        run = implementation.prepare(*inputs, **params)
        error = relative_error(run(), reference)
        torch.cuda.synchronize()
        variant["relative_error"] = error
        if not error <= case.tolerance:
            return {**variant, "status": "FAIL"}
        measured = timing.time_on_gpu(run, repeats=repeats, warmup=warmup)
        error_after = relative_error(run(), reference)
    except Exception as exception:  # a compile or CUDA error fails this variant only
        message = f"{type(exception).__name__}: {exception}".strip().splitlines()[0]
        return {**variant, "status": "ERROR", "error": message[:300]}
    variant["relative_error_after_timing"] = error_after
    if not error_after <= case.tolerance:
        return {**variant, "status": "FAIL", "relative_error": error_after,
                "error": f"after timing; {error:.1e} before: a race?"}
    variant.update(status="ok", timing=measured.as_dict(),
                   gbps=timing.gbps(case.bytes_moved, measured.median_ms))
    if case.flops:
        variant["tflops"] = case.flops / (measured.median_ms * 1e-3) / 1e12
    return variant


def _describe(variant):
    """One log line's worth of a variant's outcome."""
    if variant["status"] == "ok":
        rate = (f"{variant['tflops']:6.1f} TFLOPS" if "tflops" in variant
                else f"{variant['gbps']:6.0f} GB/s")
        return (f"ok  error {variant['relative_error']:.1e}  "
                f"{variant['timing']['median_ms'] * 1e3:9.1f} us  {rate}")
    if variant["status"] == "FAIL":
        return (f"FAIL  error {variant['relative_error']:.1e}"
                + (f" ({variant['error']})" if "error" in variant else ""))
    return f"ERROR  {variant['error']}"
