"""Linear layouts: where each element of a tile lives among registers, lanes and warps.

Every tile dimension is a power of two, so the map from a hardware location (register index,
lane, warp) to element coordinates can be written as a *linear* map over bits (GF(2)): each bit
of each hardware index has a basis vector of element coordinates, and a location's
coordinates are the XOR of the basis vectors of its set bits. A zero basis vector means the bit
replicates (two locations hold the same element). This is the idea of Triton's linear layouts
(Zhou et al., 2024); this module is our own small implementation of it, pure Python, used by
the compiler to place tiles and to plan layout conversions (DESIGN.md section 3).

>>> from numba_tile.layouts import blocked
>>> layout = blocked((8, 64), num_warps=4, element_bytes=4)
>>> layout.apply(register=1, lane=0, warp=0), layout.apply(register=0, lane=1, warp=0)
((0, 1), (0, 4))
>>> layout.in_sizes
{'register': 4, 'lane': 32, 'warp': 4}
"""

HARDWARE_DIMS = ("register", "lane", "warp")


def _log2(n, what):
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{what} must be a positive power of two, got {n}")
    return n.bit_length() - 1


class LinearLayout:
    """A linear map from hardware locations to coordinates of a tile of ``shape``.

    ``bases[dim]`` lists one coordinate vector per bit of hardware dimension ``dim``
    (``"register"``, ``"lane"``, ``"warp"``); the dimension's size is ``2 ** len(bases[dim])``.

    >>> from numba_tile.layouts import LinearLayout
    >>> layout = LinearLayout((4,), {"register": [(1,)], "lane": [(2,)], "warp": []})
    >>> [layout.apply(register=r, lane=l, warp=0) for l in range(2) for r in range(2)]
    [(0,), (1,), (2,), (3,)]
    """

    __slots__ = ("shape", "bases")

    def __init__(self, shape, bases):
        self.shape = tuple(shape)
        for i, n in enumerate(self.shape):
            _log2(n, f"dimension {i} of the tile shape")
        self.bases = {dim: [tuple(v) for v in bases.get(dim, ())] for dim in HARDWARE_DIMS}
        for dim, vectors in self.bases.items():
            for v in vectors:
                if len(v) != len(self.shape) or any(
                        not 0 <= c < n for c, n in zip(v, self.shape)):
                    raise ValueError(f"basis vector {v} of {dim} is outside the shape {self.shape}")

    # -- identity ----------------------------------------------------------------------------
    def __eq__(self, other):
        return (isinstance(other, LinearLayout) and self.shape == other.shape
                and self.bases == other.bases)

    def __hash__(self):
        return hash((self.shape, tuple((d, tuple(v)) for d, v in self.bases.items())))

    def __repr__(self):
        parts = ", ".join(f"{d}={v}" for d, v in self.bases.items())
        return f"LinearLayout({self.shape}, {parts})"

    # -- sizes -------------------------------------------------------------------------------
    @property
    def in_sizes(self):
        """Size of each hardware dimension (registers per thread, lanes, warps)."""
        return {dim: 1 << len(v) for dim, v in self.bases.items()}

    @property
    def num_elements(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    # -- evaluation --------------------------------------------------------------------------
    def apply(self, register=0, lane=0, warp=0):
        """The coordinates of the element at one hardware location."""
        coords = [0] * len(self.shape)
        for dim, index in (("register", register), ("lane", lane), ("warp", warp)):
            for bit, vector in enumerate(self.bases[dim]):
                if index >> bit & 1:
                    coords = [c ^ v for c, v in zip(coords, vector)]
        return tuple(coords)

    def locations(self):
        """Every ``(register, lane, warp)`` location with its coordinates."""
        sizes = self.in_sizes
        for warp in range(sizes["warp"]):
            for lane in range(sizes["lane"]):
                for register in range(sizes["register"]):
                    yield (register, lane, warp), self.apply(register, lane, warp)

    def is_surjective(self):
        """True if every element of the tile has at least one location."""
        return len(_span(self._all_vectors_as_ints())) == self.num_elements

    def replicated_bits(self, dim):
        """The bits of hardware dimension ``dim`` whose basis is zero (they replicate)."""
        zero = (0,) * len(self.shape)
        return [bit for bit, v in enumerate(self.bases[dim]) if v == zero]

    def _all_vectors_as_ints(self):
        return [self._flat(v) for dim in HARDWARE_DIMS for v in self.bases[dim]]

    def _flat(self, vector):
        """A coordinate vector as one integer: the bits of each coordinate, row-major."""
        flat, shift = 0, 0
        for c, n in zip(reversed(vector), reversed(self.shape)):
            flat |= c << shift
            shift += _log2(n, "dimension")
        return flat

    # -- transformations ---------------------------------------------------------------------
    def slice(self, axis):
        """The layout of a reduction over ``axis``: that coordinate is dropped (its bases
        become replication)."""
        if not 0 <= axis < len(self.shape):
            raise ValueError(f"axis {axis} out of range for rank {len(self.shape)}")
        shape = self.shape[:axis] + self.shape[axis + 1:]
        return LinearLayout(shape, {dim: [v[:axis] + v[axis + 1:] for v in vectors]
                                    for dim, vectors in self.bases.items()})

    def expand_dims(self, axis):
        """Insert an axis of length 1 (costs nothing: every coordinate on it is 0)."""
        shape = self.shape[:axis] + (1,) + self.shape[axis:]
        return LinearLayout(shape, {dim: [v[:axis] + (0,) + v[axis:] for v in vectors]
                                    for dim, vectors in self.bases.items()})

    def permute(self, axes):
        """The layout of the tile with its axes reordered: result axis i is axis ``axes[i]``."""
        return LinearLayout(tuple(self.shape[a] for a in axes),
                            {dim: [tuple(v[a] for a in axes) for v in vectors]
                             for dim, vectors in self.bases.items()})

    def collapse(self, axes):
        """The layout of a tile of size 1 along ``axes`` that lives beside this one: the same
        hardware map with those coordinates dropped to 0. This is what a reduction with
        ``keepdims`` gives, and broadcasting it back over ``axes`` costs nothing.

        >>> from numba_tile.layouts import blocked
        >>> row = blocked((4, 32), num_warps=1, element_bytes=4).collapse((1,))
        >>> row.shape, row.apply(register=3, lane=9)
        ((4, 1), (1, 0))
        """
        shape = tuple(1 if i in axes else n for i, n in enumerate(self.shape))
        return LinearLayout(shape, {dim: [tuple(0 if i in axes else c for i, c in enumerate(v))
                                          for v in vectors]
                                    for dim, vectors in self.bases.items()})

    def split_axis(self, axis, inner):
        """The same hardware map seen on the shape with ``axis`` split into
        ``(n // inner, inner)``, row-major: a reshape that moves nothing (the bits of the
        coordinate are only regrouped).

        >>> from numba_tile.layouts import blocked
        >>> split = blocked((2, 16), num_warps=1, element_bytes=4).split_axis(1, 4)
        >>> split.shape, split.apply(register=3, lane=1)
        ((2, 4, 4), (0, 1, 3))
        """
        _log2(inner, "the inner length")
        shape = self.shape[:axis] + (self.shape[axis] // inner, inner) + self.shape[axis + 1:]
        return LinearLayout(shape, {dim: [v[:axis] + (v[axis] // inner, v[axis] % inner) +
                                          v[axis + 1:] for v in vectors]
                                    for dim, vectors in self.bases.items()})

    def merge_axes(self, axis):
        """The inverse of :meth:`split_axis`: axes ``axis`` and ``axis + 1`` seen as one.

        >>> from numba_tile.layouts import blocked
        >>> layout = blocked((2, 16), num_warps=1, element_bytes=4)
        >>> layout.split_axis(1, 4).merge_axes(1) == layout
        True
        """
        inner = self.shape[axis + 1]
        shape = self.shape[:axis] + (self.shape[axis] * inner,) + self.shape[axis + 2:]
        return LinearLayout(shape, {dim: [v[:axis] + (v[axis] * inner + v[axis + 1],) +
                                          v[axis + 2:] for v in vectors]
                                    for dim, vectors in self.bases.items()})

    def without_unit_change(self, shape):
        """The same hardware map on ``shape``, which is this layout's shape with axes of
        length 1 dropped or added (a reshape that moves nothing), else None.

        >>> from numba_tile.layouts import blocked
        >>> layout = blocked((1, 1, 4, 32), num_warps=1, element_bytes=4)
        >>> squeezed = layout.without_unit_change((4, 32))
        >>> squeezed.shape, squeezed.apply(register=3, lane=9) == layout.apply(3, 9)[2:]
        ((4, 32), True)
        >>> layout.without_unit_change((2, 64)) is None
        True
        """
        kept = [axis for axis, n in enumerate(self.shape) if n != 1]
        placed = [axis for axis, n in enumerate(shape) if n != 1]
        if [self.shape[a] for a in kept] != [shape[a] for a in placed]:
            return None

        def moved(vector):
            out = [0] * len(shape)
            for source, target in zip(kept, placed):
                out[target] = vector[source]
            return tuple(out)
        return LinearLayout(shape, {dim: [moved(v) for v in vectors]
                                    for dim, vectors in self.bases.items()})

    def owner_of(self, coords):
        """A ``(register, lane, warp)`` location holding ``coords`` (the lowest), or None."""
        target = self._flat(coords)
        vectors = [(dim, bit, self._flat(v)) for dim in HARDWARE_DIMS
                   for bit, v in enumerate(self.bases[dim])]
        found = _solve([flat for _, _, flat in vectors], target)
        if found is None:
            return None
        location = {dim: 0 for dim in HARDWARE_DIMS}
        for (dim, bit, _), used in zip(vectors, found):
            if used:
                location[dim] |= 1 << bit
        return location["register"], location["lane"], location["warp"]


def _span(vectors):
    """All XOR combinations of integer bit vectors (small: used for checks and tests)."""
    span = {0}
    for v in vectors:
        span |= {s ^ v for s in span}
    return span


def _solve(vectors, target):
    """Which ``vectors`` XOR to ``target`` (Gaussian elimination over GF(2)), or None."""
    basis = []  # (pivot bit, vector, combination mask)
    for i, v in enumerate(vectors):
        combination = 1 << i
        for pivot, bv, bc in basis:
            if v >> pivot & 1:
                v ^= bv
                combination ^= bc
        if v:
            basis.append((v.bit_length() - 1, v, combination))
    combination = 0
    for pivot, bv, bc in sorted(basis, reverse=True):
        if target >> pivot & 1:
            target ^= bv
            combination ^= bc
    if target:
        return None
    return [combination >> i & 1 for i in range(len(vectors))]


def _unit(rank, axis, value):
    vector = [0] * rank
    vector[axis] = value
    return tuple(vector)


def blocked(shape, num_warps, element_bytes, vector_bytes=16, lanes=32):
    """The default layout: each thread owns a contiguous run of up to ``vector_bytes`` along the
    last axis (so loads and stores vectorize), lanes then warps tile the rest row-major, and
    whatever is left over repeats in more registers. Small tiles replicate across the lanes and
    warps they cannot fill.

    >>> from numba_tile.layouts import blocked
    >>> layout = blocked((2, 4), num_warps=1, element_bytes=4)
    >>> layout.in_sizes, layout.replicated_bits("lane")
    ({'register': 4, 'lane': 32, 'warp': 1}, [1, 2, 3, 4])
    """
    rank = len(shape)
    if rank == 0:
        return LinearLayout((), {"lane": [()] * _log2(lanes, "lanes"),
                                 "warp": [()] * _log2(num_warps, "num_warps")})
    bits = [_log2(n, "tile dimension") for n in shape]  # coordinate bits left per axis
    taken = [0] * rank  # low bits of each axis already assigned

    def take(count, axes):
        """Assign ``count`` hardware bits to the lowest free coordinate bits, fastest axis
        first; bits beyond the tile replicate (zero vectors)."""
        vectors = []
        for _ in range(count):
            for axis in axes:
                if taken[axis] < bits[axis]:
                    vectors.append(_unit(rank, axis, 1 << taken[axis]))
                    taken[axis] += 1
                    break
            else:
                vectors.append((0,) * rank)
        return vectors

    fastest_first = list(reversed(range(rank)))
    per_thread = max(1, vector_bytes // element_bytes)
    vector_bits = min(_log2(per_thread, "elements per vector"), bits[-1])
    registers = take(vector_bits, [rank - 1])
    lane_vectors = take(_log2(lanes, "lanes"), fastest_first)
    warp_vectors = take(_log2(num_warps, "num_warps"), fastest_first)
    registers += take(sum(bits) - sum(taken), fastest_first)
    return LinearLayout(shape, {"register": registers, "lane": lane_vectors,
                                "warp": warp_vectors})


def mma_accumulator(shape, warps_m, warps_n, fragment_rows=16):
    """The accumulator fragment of ``mma.sync.m16n8k*`` tiled over a ``shape`` (M, N) tile:
    per 16x8 block, lane ``l`` holds rows ``l // 4`` and ``l // 4 + 8``, columns
    ``2 * (l % 4)`` and ``+ 1``; warps split M then N; the rest repeats in registers. With
    ``fragment_rows=8`` it is ``mma.sync.m8n8k4``'s (float64): 8x8 blocks, the first two of
    those four elements.

    >>> from numba_tile.layouts import mma_accumulator
    >>> acc = mma_accumulator((16, 8), 1, 1)
    >>> [acc.apply(register=r, lane=5) for r in range(4)]
    [(1, 2), (1, 3), (9, 2), (9, 3)]
    >>> [mma_accumulator((16, 8), 1, 1, fragment_rows=8).apply(register=r, lane=5)
    ...  for r in range(4)]
    [(1, 2), (1, 3), (9, 2), (9, 3)]
    """
    m, n = shape
    if m < fragment_rows * warps_m or n < 8 * warps_n:
        raise ValueError(f"an mma accumulator of shape {shape} cannot be split over "
                         f"{warps_m}x{warps_n} warps")
    registers = [(0, 1), (8, 0)] if fragment_rows == 16 else [(0, 1)]
    lane_vectors = [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]
    warp_vectors, row, col = [], fragment_rows, 8
    for _ in range(_log2(warps_m, "warps_m")):
        warp_vectors.append((row, 0))
        row <<= 1
    for _ in range(_log2(warps_n, "warps_n")):
        warp_vectors.append((0, col))
        col <<= 1
    while col < n:
        registers.append((0, col))
        col <<= 1
    while row < m:
        registers.append((row, 0))
        row <<= 1
    return LinearLayout(shape, {"register": registers, "lane": lane_vectors,
                                "warp": warp_vectors})


def broadcast_projection(src_shape, dst_shape):
    """The map from coordinates of a ``dst_shape`` tile to those of the ``src_shape`` tile that
    broadcasts to it (leading axes dropped, axes of length 1 pinned to 0). It is linear, so it
    applies to basis vectors as well as to coordinates.

    >>> from numba_tile.layouts import broadcast_projection
    >>> broadcast_projection((1, 8), (4, 4, 8))((3, 2, 5))
    (0, 5)
    """
    lead = len(dst_shape) - len(src_shape)

    def project(coords):
        return tuple(0 if n == 1 else c for c, n in zip(coords[lead:], src_shape))
    return project


def register_sources(src, dst, project=None):
    """For each register of layout ``dst``, the register of ``src`` that holds the element it
    needs *in the same thread*, or None if some thread would need an element held elsewhere.

    ``project`` maps ``dst`` coordinates to the ``src`` coordinates they take their value from
    (default: the identity; :func:`broadcast_projection` for broadcasting). A conversion found
    here is free: it only renames registers.

    >>> from numba_tile.layouts import blocked, broadcast_projection, register_sources
    >>> rows = blocked((2, 128), num_warps=1, element_bytes=4)
    >>> row = blocked((128,), num_warps=1, element_bytes=4)
    >>> register_sources(row, rows, broadcast_projection((128,), (2, 128)))
    [0, 1, 2, 3, 0, 1, 2, 3]
    >>> register_sources(blocked((128,), 1, element_bytes=2), row) is None
    True
    """
    project = project or (lambda coords: tuple(coords))
    for dim in ("lane", "warp"):
        if len(src.bases[dim]) != len(dst.bases[dim]):
            return None
        if any(project(d) != s for d, s in zip(dst.bases[dim], src.bases[dim])):
            return None
    held = {}
    for register in range(src.in_sizes["register"]):
        held.setdefault(src.apply(register=register), register)
    sources = []
    for register in range(dst.in_sizes["register"]):
        source = held.get(project(dst.apply(register=register)))
        if source is None:
            return None
        sources.append(source)
    return sources


def conversion_kind(src, dst):
    """The cheapest way to move a tile from layout ``src`` to ``dst``:

    * ``"none"``: same layout;
    * ``"registers"``: every thread already holds what it needs (lane and warp maps agree);
    * ``"shuffle"``: data moves only between lanes of a warp (warp maps agree);
    * ``"shared"``: a round trip through shared memory with a barrier.

    >>> from numba_tile.layouts import blocked, conversion_kind
    >>> a = blocked((16, 16), num_warps=1, element_bytes=4)
    >>> conversion_kind(a, a), conversion_kind(a, a.permute((1, 0)).permute((1, 0)))
    ('none', 'none')
    """
    if src.shape != dst.shape:
        raise ValueError(f"layouts of different shapes: {src.shape} and {dst.shape}")
    if src == dst:
        return "none"
    if _holds_for_every_thread(src, dst, ("lane", "warp")):
        return "registers"
    if _holds_for_every_thread(src, dst, ("warp",)):
        return "shuffle"
    return "shared"


def _holds_for_every_thread(src, dst, fixed_dims):
    """True if, with ``fixed_dims`` equal, whatever ``dst`` puts at a location ``src`` has
    at a location sharing those dims (so the move stays inside the group they name)."""
    src_locations = {}
    for (register, lane, warp), coords in src.locations():
        key = tuple(v for dim, v in (("lane", lane), ("warp", warp)) if dim in fixed_dims)
        src_locations.setdefault(key, set()).add(coords)
    for (register, lane, warp), coords in dst.locations():
        key = tuple(v for dim, v in (("lane", lane), ("warp", warp)) if dim in fixed_dims)
        if coords not in src_locations.get(key, ()):
            return False
    return True
