"""Ahead-of-time export (``ct.compilation``) and the standalone loader (``numba_tile.exported``).

On the CPU: export files for several signatures in PTX and cubin, to a path and to a file
object, read back; compile errors are a launch's; the loader packs the parameters as a launch
does and imports neither Numba nor NumPy. On a GPU: exported kernels loaded by the loader
(in this process, and in one where numba_tile cannot be imported) compute what NumPy does.
"""

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import numba_tile as ct
from numba_tile import compilation, exported
from numba_tile.runtime.arguments import classify_arguments
from numba_tile.compilation import CallingConvention, KernelSignature, export_kernel
from conftest import gpu_present, relative_error

LOADER_PATH = exported.__file__


@ct.kernel
def scaled_add(x, y, out, factor, TILE: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, (i,), (TILE,)) * factor + ct.load(y, (i,), (TILE,))
    ct.store(out, (i,), t.astype(out.dtype))


@ct.kernel
def matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    """A k-loop of pipelined loads: on sm_90 the TMA copies them (tensor maps)."""
    acc = ct.full((TM, TN), 0, ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, (ct.bid(0), k), (TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, (k, ct.bid(1)), (TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, (ct.bid(0), ct.bid(1)), acc)


def _scaled_add_signatures():
    """float32 (aligned arrays) and float16 (a view one element in: unaligned)."""
    f32 = np.zeros(256, np.float32)
    f16 = np.zeros(257, np.float16)[1:]
    return [KernelSignature.from_kernel_args(scaled_add, (f32, f32, f32, 2.0, 128)),
            KernelSignature.from_kernel_args(scaled_add, (f16, f16, f16, 2.0, 128),
                                             CallingConvention.cutile_python_v1())]


def _cubin_available():
    x = np.zeros(256, np.float32)
    return ct.compile(scaled_add, (x, x, x, 2.0, 128), arch="sm_80").cubin is not None


class GPUArray:
    """What a GPU array of any library shows a launch (its data is never touched here)."""

    def __init__(self, typestr, shape, pointer=0x10000, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "version": 3,
                                         "strides": strides, "data": (pointer, False)}


# -- export files --------------------------------------------------------------------------
@pytest.mark.parametrize("output_format", ["ptx", "cubin"])
@pytest.mark.parametrize("to_path", [False, True], ids=["file_object", "path"])
def test_two_signatures_round_trip(tmp_path, output_format, to_path):
    if output_format == "cubin" and not _cubin_available():
        pytest.skip("no nvJitLink here: no cubin")
    target = tmp_path / f"scaled_add.{output_format}.zip" if to_path else io.BytesIO()
    export_kernel(scaled_add, _scaled_add_signatures(), target, gpu_code="sm_80",
                  output_format=output_format)
    kernel = exported.load(target)
    manifest = kernel.manifest
    assert (manifest["kernel"], manifest["arch"], manifest["object_format"]) == \
        ("scaled_add", "sm_80", output_format)
    assert manifest["calling_convention"] == "numba_tile_v1"
    first, second = kernel.entries
    assert [p["dtype"] for p in first.parameters[:3]] == ["float32"] * 3
    assert [p["aligned"] for p in first.parameters[:3]] == [True] * 3
    assert [(p["dtype"], p["aligned"]) for p in second.parameters[:3]] == [("float16", False)] * 3
    assert first.parameters[3] == {"name": "factor", "fields": "f", "kind": "scalar",
                                   "dtype": "float32"}
    assert first.parameters[4]["kind"] == "constant" and first.parameters[4]["value"] == "128"
    assert first.fields == "QiiQiiQiifq" and first.tensor_maps == []
    assert first.block == (128, 1, 1) and first.dynamic_shared_bytes == 0
    for entry in kernel.entries:
        if output_format == "ptx":
            text = entry.object_code.decode()
            assert ".target sm_80" in text and f".entry {entry.symbol}(" in text
        else:
            assert entry.object_code.startswith(b"\x7fELF")
    assert first.symbol != second.symbol


def test_an_export_is_the_same_bytes_each_time():
    files = [io.BytesIO(), io.BytesIO()]
    for file in files:
        export_kernel(scaled_add, _scaled_add_signatures(), file, gpu_code="sm_90",
                      output_format="ptx")
    assert files[0].getvalue() == files[1].getvalue()
    with zipfile.ZipFile(files[0]) as archive:
        assert archive.namelist() == ["manifest.json", "entry0.ptx", "entry1.ptx"]
        assert json.loads(archive.read("manifest.json"))["version"] == 1


def test_tensor_maps_are_in_the_manifest():
    a = np.zeros((128, 64), np.float16)
    b = np.zeros((64, 128), np.float16)
    c = np.zeros((128, 128), np.float32)
    signature = KernelSignature.from_kernel_args(matmul, (a, b, c, 64, 64, 32))
    file = io.BytesIO()
    export_kernel(matmul, [signature], file, gpu_code="sm_90", output_format="ptx")
    entry = exported.load(file).entries[0]
    assert {m["parameter"] for m in entry.tensor_maps} == {0, 1}
    for spec in entry.tensor_maps:
        assert spec["first_field"] == 5 * spec["parameter"]  # pointer, 2 extents, 2 strides
        assert spec["itemsize"] == 2 and spec["ndim"] == 2


def test_the_maps_of_a_lists_items_are_in_the_manifest():
    """Each item of a list argument has a map, whose values follow the previous item's."""
    from numba_tile.bench.distributed import all_gather_matmul_launch
    inputs = [np.zeros((128, 64), np.float16) for _ in range(3)]
    w = np.zeros((64, 128), np.float16)
    out = np.zeros((384, 128), np.float32)
    kernel, _, args = all_gather_matmul_launch(inputs, w, out, tile=(64, 64, 32))
    file = io.BytesIO()
    export_kernel(kernel, [KernelSignature.from_kernel_args(kernel, args)], file,
                  gpu_code="sm_90", output_format="ptx")
    maps = exported.load(file).entries[0].tensor_maps
    starts = sorted((tuple(m["parameter"]) if isinstance(m["parameter"], list)
                     else m["parameter"], m["first_field"]) for m in maps
                    if not isinstance(m["parameter"], int))
    assert starts == [((0, 0), 0), ((0, 1), 5), ((0, 2), 10)]
    assert [m["first_field"] for m in maps if m["parameter"] == 1] == [15]


# -- compile errors: a launch's -------------------------------------------------------------
@ct.kernel
def mixes_signs(x, y):
    ct.store(x, (0,), ct.load(x, (0,), (2,)) + ct.load(y, (0,), (2,)))


def _launch_error(kernel, args):
    with pytest.raises(ct.TileError) as raised:
        ct.compile(kernel, args, arch="sm_90")
    return raised.value


@pytest.mark.parametrize("output_format", ["cubin", "ptx", "tileir_bytecode"])
def test_compile_errors_are_the_launch_errors(tmp_path, output_format):
    args = (np.ones(2, np.uint8), np.ones(2, np.int8))
    expected = _launch_error(mixes_signs, args)
    signature = KernelSignature.from_kernel_args(mixes_signs, args)
    path = tmp_path / "out.zip"
    with pytest.raises(type(expected)) as raised:
        export_kernel(mixes_signs, [signature], path, gpu_code="sm_90",
                      output_format=output_format)
    assert raised.value.message == expected.message
    assert not path.exists()
    with ct.interpret(), pytest.raises(type(expected)):  # what a launch raises
        ct.launch(0, (1,), mixes_signs, args)


def test_argument_errors_are_the_launch_errors():
    with pytest.raises(TypeError, match="Kernel expects 5 arguments but"):
        KernelSignature.from_kernel_args(scaled_add, (1, 2))
    with pytest.raises(TypeError, match="not supported|cannot be compiled"):
        KernelSignature.from_kernel_args(scaled_add, (object(),) * 4 + (128,))


def test_formats_and_options():
    signature = _scaled_add_signatures()[0]
    with pytest.raises(ct.TileUnsupportedFeatureError, match="cubin, ptx"):
        export_kernel(scaled_add, [signature], io.BytesIO(), gpu_code="sm_90",
                      output_format="tileir_bytecode", bytecode_version="13.1")
    with pytest.raises(ValueError, match="output_format must be one of cubin, ptx"):
        export_kernel(scaled_add, [signature], io.BytesIO(), output_format="sass")
    with pytest.raises(ValueError, match="not a GPU architecture"):
        export_kernel(scaled_add, [signature], io.BytesIO(), gpu_code="sm_42")
    with pytest.raises(TypeError, match="list of KernelSignature"):
        export_kernel(scaled_add, signature, io.BytesIO(), gpu_code="sm_90")
    with pytest.raises(ValueError, match="Unknown calling convention 'cutile_python_v3'"):
        CallingConvention("cutile_python_v3")
    assert KernelSignature(signature.parameter_types, "cutile_python_v1") == signature


def test_ct_compilation_is_the_module():
    assert ct.compilation is compilation


# -- the loader, on the CPU -----------------------------------------------------------------
def test_parameters_are_packed_as_a_launch_packs_them():
    @ct.kernel
    def many(x, h, n, flag, pair, arrays):
        pass
    x = GPUArray("<f4", (4, 8), strides=(64, 4))
    args = (x, np.float16(1.5), 2**31 - 1, True, (3, 0.25),
            [GPUArray("<i2", (16,)), GPUArray("<i2", (16,), 0x20000)])
    file = io.BytesIO()
    export_kernel(many, [KernelSignature.from_kernel_args(many, args)], file,
                  gpu_code="sm_90", output_format="ptx")
    entry = exported.load(file).entries[0]
    assert entry.parameter_values(args) == classify_arguments(many, args)[1]
    assert entry.fields == "Qiiiih" + "ibif" + "Qii" * 2  # a bool is a byte


def _loaded_scaled_add():
    file = io.BytesIO()
    export_kernel(scaled_add, _scaled_add_signatures(), file, gpu_code="sm_90",
                  output_format="ptx")
    return exported.load(file.getvalue())


def test_the_loader_picks_the_entry_that_takes_the_arguments():
    kernel = _loaded_scaled_add()
    aligned = GPUArray("<f4", (256,))
    assert kernel.entry_for((aligned, aligned, aligned, 2.0, 128)) is kernel.entries[0]
    unaligned = GPUArray("<f2", (255,), pointer=0x10002)
    assert kernel.entry_for((unaligned,) * 3 + (2.0, 128)) is kernel.entries[1]
    with pytest.raises(TypeError) as refused:
        kernel.entry_for((aligned, aligned, aligned, 2.0, 64))
    assert "argument 'TILE' is the constant 128, got 64" in str(refused.value)
    with pytest.raises(TypeError, match="must be a 1-d float32 array, got a 1-d float16"):
        kernel.entries[0].launch(0, (1,), (unaligned,) * 3 + (2.0, 128))
    with pytest.raises(TypeError, match="must be a GPU array"):
        kernel.entry_for((np.zeros(256, np.float32),) * 3 + (2.0, 128))


def test_the_loader_needs_neither_numba_nor_numpy(tmp_path):
    path = tmp_path / "scaled_add.zip"
    export_kernel(scaled_add, _scaled_add_signatures(), path, gpu_code="sm_90",
                  output_format="ptx")
    script = textwrap.dedent(f"""
        import importlib.util, sys
        for name in ("numba", "numba_tile", "numpy", "llvmlite"):
            sys.modules[name] = None  # importing any of them fails
        spec = importlib.util.spec_from_file_location("loader_copy", {LOADER_PATH!r})
        loader = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loader)
        kernel = loader.load({str(path)!r})

        class GPUArray:
            __cuda_array_interface__ = {{"shape": (256,), "typestr": "<f4", "version": 3,
                                         "strides": None, "data": (0x10000, False)}}
        values = kernel.entry_for((GPUArray(),) * 3 + (2.0, 128)).parameter_values(
            (GPUArray(),) * 3 + (2.0, 128))
        print(kernel.name, len(kernel.entries), values)
        """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["scaled_add", "2", "[65536,", "256,", "1,", "65536,",
                                     "256,", "1,", "65536,", "256,", "1,", "2.0,", "0]"]


# -- on the GPU -----------------------------------------------------------------------------
gpu = pytest.mark.skipif(not gpu_present(), reason="needs a CUDA GPU")


def _device_library():
    """(to_device, to_host, full) of CuPy, else PyTorch."""
    try:
        import cupy
        return cupy.asarray, cupy.asnumpy, cupy.full
    except ImportError:
        torch = pytest.importorskip("torch")
        import numba_tile.dtypes as d
        return (lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(),
                lambda t: t.cpu().numpy(),
                lambda shape, value, dtype: torch.full(shape, value, device="cuda",
                                                       dtype=d.to_dtype(dtype).torch))


def _synchronize():
    from numba import cuda
    cuda.synchronize()


@gpu
@pytest.mark.parametrize("output_format", ["cubin", "ptx"])
def test_exported_kernels_launch(output_format):
    from numba_tile.runtime.driver import current_arch
    to_device, to_host, full = _device_library()
    file = io.BytesIO()
    export_kernel(scaled_add, _scaled_add_signatures(), file, output_format=output_format)
    kernel = exported.load(file)
    assert kernel.arch == current_arch()  # the default: the current GPU's
    rng = np.random.default_rng(3)
    for dtype, offset in ((np.float32, 0), (np.float16, 1)):
        x, y = (rng.standard_normal(256 + offset).astype(dtype) for _ in range(2))
        out = full((256 + offset,), np.nan, dtype)
        args = (to_device(x)[offset:], to_device(y)[offset:], out[offset:], 2.0, 128)
        kernel.launch(0, (2,), args)
        _synchronize()
        expected = (x[offset:].astype(np.float32) * 2 + y[offset:]).astype(dtype)
        result = to_host(out)
        assert np.isnan(result[:offset]).all()  # nothing written before the view
        assert relative_error(result[offset:], expected) < 1e-3


@gpu
def test_exported_kernels_with_tensor_maps_launch():
    from numba_tile.runtime.driver import current_arch
    to_device, to_host, full = _device_library()
    rng = np.random.default_rng(5)
    a = rng.standard_normal((192, 96)).astype(np.float16)
    b = rng.standard_normal((96, 128)).astype(np.float16)
    signature = KernelSignature.from_kernel_args(
        matmul, (a, b, np.zeros((192, 128), np.float32), 64, 64, 32))
    file = io.BytesIO()
    export_kernel(matmul, [signature], file)
    kernel = exported.load(file)
    if current_arch() == "sm_90":
        assert kernel.entries[0].tensor_maps
    c = full((192, 128), np.nan, np.float32)
    kernel.launch(0, (3, 2), (to_device(a), to_device(b), c, 64, 64, 32))
    _synchronize()
    assert relative_error(to_host(c), np.float64(a) @ np.float64(b)) < 1e-5


@gpu
def test_the_copied_loader_launches_without_numba_tile(tmp_path):
    pytest.importorskip("cupy")
    path = tmp_path / "scaled_add.zip"
    export_kernel(scaled_add, _scaled_add_signatures(), path, output_format="cubin")
    copy = tmp_path / "my_loader.py"
    copy.write_text(open(LOADER_PATH).read())
    script = textwrap.dedent(f"""
        import sys
        for name in ("numba", "numba_tile"):
            sys.modules[name] = None
        import cupy, my_loader
        x = cupy.arange(256, dtype=cupy.float32)
        out = cupy.full(256, cupy.nan, cupy.float32)
        my_loader.load({str(path)!r}).launch(cupy.cuda.get_current_stream(), (2,),
                                             (x, x, out, 0.5, 128))
        assert bool((out == 1.5 * x).all()), out
        print("ok")
        """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
