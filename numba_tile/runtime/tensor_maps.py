"""Tensor maps for the TMA copies of a launch (see :mod:`numba_tile.compiler.planning.tma`):
encoded on the host by the CUDA driver's ``cuTensorMapEncodeTiled`` from an array argument
(its address, shape and strides) and the box the kernel copies, and passed as kernel
parameters. The encoding is :func:`numba_tile.exported.encode_tensor_map`'s, which the loader
of exported kernels shares.

Encoding takes microseconds; a launch loop passes the same arrays again and again, so maps
are kept by what they are made from.

>>> from numba_tile.runtime.tensor_maps import encode_arguments
>>> callable(encode_arguments)
True
"""

from ..exported import encode_tensor_map as encode, map_source_start

_MAX_KEPT = 4096
_kept = {}


def encode_arguments(specs, flat_values, offsets):
    """The maps of ``specs`` for a launch's flat parameter values: ``offsets[p]`` is where
    parameter ``p``'s values (pointer, shape, strides of an array) start. Needs the CUDA
    driver.

    >>> import cupy  # doctest: +SKIP
    >>> a = cupy.zeros((256, 64), cupy.float16)  # doctest: +SKIP
    >>> flat = [a.data.ptr, 256, 64, 64, 1]  # doctest: +SKIP
    >>> [len(m) for m in encode_arguments([(0, 2, 2, 64, 128, 128, False)], flat, [0])]  # doctest: +SKIP
    [128]
    """
    maps = []
    for spec in specs:
        start = map_source_start(spec, offsets)
        ndim = spec[1]
        key = (spec, *flat_values[start:start + 1 + 2 * ndim])
        found = _kept.get(key)
        if found is None:
            if len(_kept) >= _MAX_KEPT:
                _kept.clear()
            found = _kept[key] = encode(spec, flat_values[start],
                                        flat_values[start + 1:start + 1 + ndim],
                                        flat_values[start + 1 + ndim:start + 1 + 2 * ndim])
        maps.append(found)
    return maps
