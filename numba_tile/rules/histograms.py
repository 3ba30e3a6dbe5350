"""The rule of ``histogram`` (a numba_tile extension): the counts of a tile's integer values
in ``bins`` bins, shared by the interpreter and the compiler.

>>> import numba_tile as ct
>>> from numba_tile.rules.histograms import histogram
>>> histogram(ct.int16, 64)
(64,)
"""

from .core import invalid_argument, tile_shape

#: the most bins of one histogram: the compiled counts live in shared memory (64 KiB)
MOST_BINS = 2 ** 14


def histogram(dtype, bins):
    """The result shape of ``histogram`` of a tile of ``dtype`` into ``bins`` bins (a
    constant power of two, at most :data:`MOST_BINS`); the values must be integers.

    >>> import numba_tile as ct
    >>> from numba_tile.rules.histograms import histogram
    >>> histogram(ct.float32, 8)
    Traceback (most recent call last):
    ...
    numba_tile.errors.TileTypeError: Invalid argument #1 of histogram(): Expected a tile of ...
    """
    if not dtype.is_integral:
        raise invalid_argument("histogram", 1, f"Expected a tile of integers, got {dtype}")
    shape = tile_shape(bins, "histogram", "bins")
    if len(shape) != 1:
        raise invalid_argument("histogram", "bins", f"Expected an integer, got {shape}")
    if shape[0] > MOST_BINS:
        raise invalid_argument("histogram", "bins", f"At most {MOST_BINS} bins are supported, "
                                                    f"got {shape[0]}")
    return shape
