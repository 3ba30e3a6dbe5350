"""``python -m numba_tile.demo``: launch three example kernels and check them against NumPy.

Runs on the GPU when one is present and this build can compile for it; otherwise in
interpreter mode on the CPU, and says which.
"""

import argparse
import sys

import numpy as np
from numba import cuda

import numba_tile as ct
from numba_tile.runtime.gpu_launch import compiler_available


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, (i,), ct.load(a, (i,), (TILE,)) + ct.load(b, (i,), (TILE,)))


@ct.kernel
def softmax(x, y, TILE_N: ct.Constant[int]):
    row = ct.load(x, index=(ct.bid(0), 0), shape=(1, TILE_N),
                  padding_mode=ct.PaddingMode.NEG_INF).astype(ct.float32)
    num = ct.exp(row - ct.max(row, axis=1, keepdims=True))
    ct.store(y, index=(ct.bid(0), 0), tile=(num / ct.sum(num, axis=1, keepdims=True)).astype(y.dtype))


@ct.kernel
def matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.zeros((TM, TN), ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (bm, k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, bn), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, (bm, bn), acc.astype(C.dtype))


def _relative_error(actual, expected):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def _choose_mode():
    """``(use_gpu, reason)``."""
    try:
        has_gpu = cuda.is_available()
    except Exception:  # numba-cuda missing its CUDA libraries counts as "no GPU"
        has_gpu = False
    if not has_gpu:
        return False, "no CUDA GPU found"
    if not compiler_available():
        return False, "a GPU is present, but this build of numba_tile cannot compile for it"
    return True, "CUDA GPU found"


def _examples(rng):
    n = 1000  # not a multiple of the tile: the last tile is partial
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    c = np.full(n, np.nan, np.float32)
    yield ("vector add (1000 elements, tiles of 256)", vector_add,
           (ct.cdiv(n, 256),), (a, b, c, 256), c, a.astype(np.float64) + b, 1e-6)

    x = rng.standard_normal((64, 100)).astype(np.float32)
    y = np.full_like(x, np.nan)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    yield ("row softmax (64 x 100, tiles of 1 x 128)", softmax, (64,), (x, y, 128), y,
           e / e.sum(1, keepdims=True), 1e-5)

    m, k, nn = 96, 80, 72
    A = rng.standard_normal((m, k)).astype(np.float16)
    B = rng.standard_normal((k, nn)).astype(np.float16)
    C = np.full((m, nn), np.nan, np.float32)
    yield (f"matmul {m}x{k} @ {k}x{nn} (float16 in, float32 out, tiles 32x32x16)", matmul,
           (ct.cdiv(m, 32), ct.cdiv(nn, 32)), (A, B, C, 32, 32, 16), C,
           A.astype(np.float64) @ B.astype(np.float64), 1e-3)


def _run_on_gpu(kernel, grid, args, out):  # pragma: no cover - needs a GPU
    device_args = tuple(cuda.to_device(v) if isinstance(v, np.ndarray) else v for v in args)
    ct.launch(cuda.default_stream(), grid, kernel, device_args)
    cuda.synchronize()
    out[...] = device_args[next(i for i, v in enumerate(args) if v is out)].copy_to_host()


def main(argv=None):
    summary = __doc__.split("\n\n")[0].split(": ", 1)[1]
    argparse.ArgumentParser(prog="python -m numba_tile.demo",
                            description=summary[0].upper() + summary[1:]).parse_args(argv)
    rng = np.random.default_rng(2026)
    use_gpu, reason = _choose_mode()
    print(f"numba_tile {ct.__version__}: running on the "
          f"{'GPU' if use_gpu else 'CPU in interpreter mode'} ({reason})")
    failures = 0
    for title, kernel, grid, args, out, expected, tolerance in _examples(rng):
        where = "GPU" if use_gpu else "interpreter"
        try:
            if use_gpu:  # pragma: no cover - needs a GPU
                _run_on_gpu(kernel, grid, args, out)
        except ct.TileUnsupportedFeatureError as missing:  # pragma: no cover - needs a GPU
            lacking = missing.message.split(" is not compiled yet")[0]
            where = f"interpreter: the compiler lacks {lacking} so far"
            use_this_gpu = False
        else:
            use_this_gpu = use_gpu
        if not use_this_gpu:
            with ct.interpret():
                ct.launch(None, grid, kernel, args)
        error = _relative_error(out, expected)
        ok = error <= tolerance
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {title} [{where}]: relative error {error:.2e} "
              f"(tolerance {tolerance:.0e})")
        print(f"       first results: {np.array2string(out.ravel()[:4], precision=4)}")
    print("all results match NumPy" if not failures else f"{failures} example(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
