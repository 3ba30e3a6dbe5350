"""Ahead-of-time compilation (``ct.compilation``, cuTile's ``cuda.tile.compilation``): compile a
kernel for a list of signatures and write the results to one file, which
:mod:`numba_tile.exported` loads and launches where numba_tile's compiler is not installed.

A signature comes from example arguments (:meth:`KernelSignature.from_kernel_args`): host
NumPy arrays serve as well as GPU arrays, since only an array's dtype, rank and alignment
(and the values an ``ArrayAnnotation`` makes static) enter the signature. Compiling is what
a launch does, with the same cache and the same errors.

The file is a ZIP archive: ``manifest.json`` and one object file (cubin or PTX) per
signature; :mod:`numba_tile.exported` documents the manifest. One object file per signature
keeps each entry a module of its own, as a launch loads it (PTX modules do not merge by
text, and linking cubins would make their symbols meet).

>>> import io, numpy as np, numba_tile as ct
>>> from numba_tile import compilation, exported
>>> @ct.kernel
... def scale(x, factor, TILE: ct.Constant[int]):
...     t = ct.load(x, (ct.bid(0),), (TILE,))
...     ct.store(x, (ct.bid(0),), (t * factor).astype(x.dtype))
>>> signatures = [
...     compilation.KernelSignature.from_kernel_args(scale, (np.zeros(64, dtype), 2.0, 64))
...     for dtype in (np.float32, np.float16)]
>>> file = io.BytesIO()
>>> compilation.export_kernel(scale, signatures, file, gpu_code="sm_80", output_format="ptx")
>>> manifest = exported.load(file).manifest
>>> [entry["parameters"][0]["dtype"] for entry in manifest["entries"]]
['float32', 'float16']
>>> manifest["entries"][0]["fields"]  # x: pointer, shape, stride; factor; TILE
'Qiifq'
"""

import json
import zipfile

from numba.core import types

from . import exported
from .compiler.contexts import contexts
from .compiler.kernel_compiler import parse_arch
from .compiler.types import ArrayType, ConstantType, ListType, dtype_of_scalar
from .runtime.compile_entry import argument_types, compile_for_types
from .errors import TileCompilerExecutionError, TileUnsupportedFeatureError
from .runtime.driver import current_arch
from .runtime.loaded_kernels import struct_code
from .runtime.kernels import require_kernel

__all__ = ["CallingConvention", "KernelSignature", "export_kernel"]

OUTPUT_FORMATS = ("cubin", "ptx")
# what cuTile's export_kernel writes and numba_tile does not (it has no Tile IR)
_CUTILE_ONLY_FORMATS = ("tileir_bytecode",)
_DEFAULT_GPU_CODE = "sm_90"  # where no GPU can be asked, as ct.compile
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member dates: the same export, the same bytes


class CallingConvention:
    """How a kernel takes its arguments, spelled as cuTile spells its conventions:
    :meth:`cutile_python_v1` and :meth:`cutile_python_v2` (each one object, with ``name``,
    ``code`` and ``version``), :meth:`from_code` (``"t1"``, ``"t2"``). numba_tile lays out
    the arguments of both the same way, the layout its exports name ``numba_tile_v1``
    (``ABI``): the kernel's parameters in order, each flattened to fields of native alignment:

    * an array: its data pointer (64 bits), then its shape and its strides in elements
      (int32 each; int64 where the parameter is annotated ``ct.IndexedWithInt64``);
    * a bool, int or float: one field of its dtype (int32 for ``int``, float32 for
      ``float``; float16 and bfloat16 as their 16 bits, unsigned integers as signed ones);
    * a ``Constant``: its fields (0 or 1) carry nothing: the value is in the code;
    * a tuple or list: its items' fields, one item after the other;

    and after them, 64-byte aligned, the 128-byte tensor map of each TMA copy the kernel
    makes (encoded on the host from an array parameter). A block has ``32 * num_warps``
    threads.

    >>> from numba_tile.compilation import CallingConvention
    >>> CallingConvention.cutile_python_v1()
    CallingConvention('cutile_python_v1', 't1')
    >>> CallingConvention.from_code("t2").version
    2
    """

    #: the argument layout of every convention, as exported kernels name it
    ABI = "numba_tile_v1"
    _VERSIONS = (1, 2)

    def __init__(self, name="cutile_python_v1"):
        for version in self._VERSIONS:
            if name == f"cutile_python_v{version}":
                self._version = version
                return
        raise ValueError(f"Unknown calling convention {name!r}: numba_tile has "
                         f"{', '.join(f'cutile_python_v{v}' for v in self._VERSIONS)}")

    @property
    def name(self):
        """cuTile's name of the convention.

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.cutile_python_v2().name
        'cutile_python_v2'
        """
        return f"cutile_python_v{self._version}"

    @property
    def code(self):
        """The convention's short code (in cuTile's mangled kernel names).

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.cutile_python_v1().code
        't1'
        """
        return f"t{self._version}"

    @property
    def version(self):
        """The convention's version number.

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.cutile_python_v1().version
        1
        """
        return self._version

    @staticmethod
    def cutile_python_v1():
        """The ``cutile_python_v1`` convention (one object for every call).

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.cutile_python_v1() is CallingConvention.cutile_python_v1()
        True
        """
        return _CONVENTIONS[1]

    @staticmethod
    def cutile_python_v2():
        """The ``cutile_python_v2`` convention (one object for every call), the one a launch
        compiles for.

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.cutile_python_v2().name
        'cutile_python_v2'
        """
        return _CONVENTIONS[2]

    @staticmethod
    def from_code(code, /):
        """The convention of a short ``code`` (``"t1"``, ``"t2"``).

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.from_code("t1") == CallingConvention.cutile_python_v1()
        True
        """
        if not isinstance(code, str):
            raise TypeError(f"argument 1 must be str, not {type(code).__name__}")
        for version, convention in _CONVENTIONS.items():
            if code == convention.code:
                return convention
        raise ValueError(f"Unknown calling convention code {code!r}")

    @classmethod
    def of(cls, value):
        """``value`` as a convention: None (the default, ``cutile_python_v1``), a
        convention, or its name.

        >>> from numba_tile.compilation import CallingConvention
        >>> CallingConvention.of("cutile_python_v1") == CallingConvention.of(None)
        True
        """
        if value is None:
            return cls.cutile_python_v1()
        return value if isinstance(value, cls) else cls(value)

    def __eq__(self, other):
        return isinstance(other, CallingConvention) and other.version == self.version

    __hash__ = None  # (as cuTile's: a convention is compared, not a key)

    def __repr__(self):
        return f"CallingConvention({self.name!r}, {self.code!r})"


_CONVENTIONS = {version: CallingConvention(f"cutile_python_v{version}")
                for version in CallingConvention._VERSIONS}


class KernelSignature:
    """The argument types one compile of a kernel is for: what a launch with some arguments
    compiles, without launching. Built by :meth:`from_kernel_args`, or from the Numba types
    that ``from_kernel_args`` computes (``KernelSignature(parameter_types)``).

    >>> import numpy as np, numba_tile as ct
    >>> from numba_tile.compilation import KernelSignature
    >>> @ct.kernel
    ... def fill(x, value, N: ct.Constant[int]):
    ...     pass
    >>> KernelSignature.from_kernel_args(fill, (np.zeros((4, 8), np.float16), 1.5, 8))
    KernelSignature(TileArray(float16, 2, int32, aligned), float32, Literal[int](8))
    """

    def __init__(self, parameter_types, calling_convention=None):
        self.parameter_types = tuple(parameter_types)
        self.calling_convention = CallingConvention.of(calling_convention)

    @classmethod
    def from_kernel_args(cls, kernel, args, calling_convention=None):
        """The signature a launch of ``kernel`` with ``args`` (a tuple) compiles. Arrays may
        be on the host or the GPU: their data is not touched. An argument a launch refuses
        is the same error here.

        >>> import numpy as np, numba_tile as ct
        >>> from numba_tile.compilation import KernelSignature
        >>> @ct.kernel
        ... def k(x):
        ...     pass
        >>> KernelSignature.from_kernel_args(k, (np.zeros(3, np.float64)[::2],))
        KernelSignature(TileArray(float64, 1, int32))
        """
        return cls(argument_types(kernel, args), calling_convention)

    def __eq__(self, other):
        return isinstance(other, KernelSignature) and \
            (other.parameter_types, other.calling_convention) == \
            (self.parameter_types, self.calling_convention)

    def __hash__(self):
        return hash(self.parameter_types)

    def __repr__(self):
        return f"KernelSignature({', '.join(map(str, self.parameter_types))})"


def export_kernel(kernel, signatures, output_file, *, gpu_code=None, output_format="cubin",
                  bytecode_version=None):
    """Compile ``kernel`` for each of ``signatures`` (:class:`KernelSignature`) and the
    architecture ``gpu_code`` (``"sm_90"``; default: the current GPU's, else sm_90), and
    write them to ``output_file`` (a path or a binary file object) as one export file (see
    :mod:`numba_tile.exported`, which launches it).

    ``output_format`` is ``"cubin"`` (machine code for ``gpu_code``'s GPUs) or ``"ptx"``
    (which the driver compiles on loading, for that architecture or a later one). A compile
    error is the one a launch with those arguments raises, and nothing is written; cuTile's
    ``"tileir_bytecode"`` format is a ``TileUnsupportedFeatureError`` once the signatures
    have compiled. ``bytecode_version`` (of that format) is accepted and unused.

    >>> import io, numpy as np, numba_tile as ct
    >>> from numba_tile.compilation import KernelSignature, export_kernel
    >>> @ct.kernel
    ... def bad(x, y):
    ...     ct.store(x, (0,), ct.load(x, (0,), (2,)) + ct.load(y, (0,), (2,)))
    >>> signature = KernelSignature.from_kernel_args(bad, (np.ones(2, np.uint8),
    ...                                                    np.ones(2, np.int8)))
    >>> export_kernel(bad, [signature], io.BytesIO(), gpu_code="sm_90")
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Implicit promotion of uint8 and int8 is not supported. ...
    ...
    """
    del bytecode_version  # only cuTile's Tile IR bytecode has versions
    signatures = _checked_signatures(kernel, signatures)
    if output_format not in OUTPUT_FORMATS + _CUTILE_ONLY_FORMATS:
        raise ValueError(f"output_format must be one of {', '.join(OUTPUT_FORMATS)}, got "
                         f"{output_format!r}")
    arch = gpu_code or _current_gpu_code()
    parse_arch(arch)
    compiled = [compile_for_types(kernel, s.parameter_types, arch) for s in signatures]
    if output_format in _CUTILE_ONLY_FORMATS:
        raise TileUnsupportedFeatureError(
            f"numba_tile cannot write {output_format!r}: it compiles through NVVM, not Tile "
            f"IR; export one of {', '.join(OUTPUT_FORMATS)}")
    if output_format == "cubin" and any(c.cubin is None for c in compiled):
        raise TileCompilerExecutionError(
            "No cubin could be linked (nvJitLink is unavailable): install numba-tile with its "
            "cu12 or cu13 extra, or export output_format='ptx'")
    entries, objects = [], {}
    for number, (signature, kernel_code) in enumerate(zip(signatures, compiled)):
        name = f"entry{number}.{output_format}"
        objects[name] = kernel_code.cubin if output_format == "cubin" else \
            kernel_code.ptx.encode()
        entries.append(_entry_manifest(kernel, signature, kernel_code, name))
    manifest = {"format": exported.FORMAT, "version": exported.VERSION,
                "kernel": kernel.__name__, "arch": arch, "object_format": output_format,
                "calling_convention": CallingConvention.ABI, "entries": entries}
    _write_archive(output_file, manifest, objects)


def _checked_signatures(kernel, signatures):
    require_kernel(kernel)
    if isinstance(signatures, KernelSignature) or not all(
            isinstance(s, KernelSignature) for s in signatures):
        raise TypeError("signatures must be a list of KernelSignature (from "
                        "KernelSignature.from_kernel_args)")
    signatures = list(dict.fromkeys(signatures))  # a signature twice is one entry
    if not signatures:
        raise ValueError("export_kernel() needs at least one signature")
    for signature in signatures:
        if len(signature.parameter_types) != len(kernel.parameters):
            raise TypeError(f"{signature!r} has {len(signature.parameter_types)} parameters; "
                            f"kernel {kernel.__name__!r} takes {len(kernel.parameters)}")
    return signatures


def _current_gpu_code():
    """``sm_XY`` of the current GPU, or sm_90 (as ``ct.compile``) where there is none."""
    try:
        return current_arch()
    except Exception:  # no driver, no device: an export on a build machine
        return _DEFAULT_GPU_CODE


def _entry_manifest(kernel, signature, compiled, object_name):
    """The manifest of one compiled signature (see :mod:`numba_tile.exported`)."""
    parameters = [_describe(name, numba_type) for name, numba_type in
                  zip(kernel.parameters, signature.parameter_types)]
    starts, start = [], 0
    for parameter in parameters:
        starts.append(start)
        start += len(parameter["fields"])
    keys = ("parameter", "ndim", "itemsize", "box_columns", "box_rows", "swizzle", "tfloat32")
    tensor_maps = [dict(zip(keys, spec), first_field=exported.map_source_start(spec, starts))
                   for spec in compiled.tensor_maps]
    return {"symbol": compiled.name, "object": object_name, "parameters": parameters,
            "fields": "".join(p["fields"] for p in parameters), "tensor_maps": tensor_maps,
            "block": [32 * compiled.num_warps, 1, 1],
            "dynamic_shared_bytes": compiled.dynamic_shared_bytes,
            "registers": compiled.registers, "spill_bytes": compiled.spill_bytes}


def _describe(name, numba_type):
    """A parameter's description in the manifest: its kind, what it takes, its fields."""
    fields = "".join(struct_code(t) for t in
                     contexts()[1].get_arg_packer([numba_type]).argument_types)
    description = {"name": name, "fields": fields}
    if isinstance(numba_type, ArrayType):
        description.update(
            kind="array", dtype=numba_type.dtype.name, itemsize=numba_type.dtype.itemsize,
            ndim=numba_type.ndim, index_dtype=numba_type.index_dtype.name,
            aligned=numba_type.aligned, static_shape=list(map(list, numba_type.static_shape)),
            static_strides=list(map(list, numba_type.static_strides)))
    elif isinstance(numba_type, ListType):
        description.update(kind="list", item=_describe(f"{name}[i]", numba_type.dtype),
                           length=numba_type.count)
    elif isinstance(numba_type, types.BaseTuple):
        description.update(kind="tuple", items=[_describe(f"{name}[{i}]", t)
                                                for i, t in enumerate(numba_type)])
    elif isinstance(numba_type, (types.Literal, ConstantType)):
        value = numba_type.value if isinstance(numba_type, ConstantType) else \
            numba_type.literal_value
        description.update(kind="constant", value=exported.constant_text(value))
    elif dtype_of_scalar(numba_type) is not None:
        description.update(kind="scalar", dtype=dtype_of_scalar(numba_type).name)
    else:
        raise TypeError(f"Parameter {name!r} of type {numba_type} cannot be exported")
    return description


def _write_archive(output_file, manifest, objects):
    """The export file: ``manifest.json``, then the object files."""
    with zipfile.ZipFile(output_file, "w", zipfile.ZIP_DEFLATED) as archive:
        members = {exported.MANIFEST: json.dumps(manifest, indent=1).encode(), **objects}
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, _ZIP_DATE), data,
                             compress_type=zipfile.ZIP_DEFLATED)
