"""Random tile programs for differential testing: a generator and its NumPy reference.

A program loads one to three arrays (every dtype; partial tiles with padding; contiguous,
strided, reversed and transposed views), combines the tiles with elementwise ops across dtypes
and shapes (broadcasting, loose constants, casts, ``where``), reductions and shape ops, and
stores the result into a view of a poisoned buffer. Every line of tile code is drawn together
with the NumPy computation it must give, so the expected output needs neither executor.

Programs are drawn through a chooser: hypothesis's ``draw`` in ``test_fuzz.py`` (which shrinks
a failure to a small program), or a seeded ``random.Random`` for the long runs of
``fuzz_tile_programs.py``, where a seed reproduces its program.

>>> program = generate(RandomChooser(7))
>>> program.source.splitlines()[3]
'@ct.kernel'
>>> program.expected().shape == program.out_base.shape
True
"""

import math
import random
import types
import warnings

import numpy as np

import numba_tile as ct
from numba_tile.errors import TileError
from numba_tile.promotion import Loose, common_dtype
from numba_tile.rules.elementwise import check_bitwise_operands

DTYPES = (ct.bool_, ct.int8, ct.int16, ct.int32, ct.int64, ct.uint8, ct.uint16, ct.uint32,
          ct.uint64, ct.float16, ct.bfloat16, ct.float32, ct.float64)
POISON_BYTE = 0xA5           # fills every output buffer before a run
MAX_ELEMENTS = 512           # per tile: keeps each compile short
DIMS = (1, 2, 4, 8, 16)


class RandomChooser:
    """Choices from a seeded ``random.Random`` (long runs: the seed reproduces the program)."""

    def __init__(self, seed):
        self.random = random.Random(seed)

    def choice(self, options):
        return options[self.random.randrange(len(options))]

    def integer(self, low, high):
        return self.random.randint(low, high)


class HypothesisChooser:
    """Choices through hypothesis's ``draw``, so that a failing program shrinks."""

    def __init__(self, draw):
        self.draw = draw

    def choice(self, options):
        from hypothesis import strategies as st
        return self.draw(st.sampled_from(list(options)))

    def integer(self, low, high):
        from hypothesis import strategies as st
        return self.draw(st.integers(low, high))


class Value:
    """A tile of the program: its name in the source, dtype, shape and NumPy computation.
    ``exact`` is False once an op whose result the executors may round differently (a float
    sum, a transcendental function) has touched it."""

    def __init__(self, name, dtype, shape, compute, exact=True):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.compute, self.exact = compute, exact


class ArraySpec:
    """An array argument: a base array and the view of it the kernel gets. ``key`` is
    ``(transposed, slices)``: the base is transposed first, then sliced."""

    def __init__(self, name, base, key):
        self.name, self.base, self.key = name, base, key

    def view(self, base):
        transposed, slices = self.key
        if transposed:
            base = base.permute(*reversed(range(base.ndim))) if hasattr(base, "permute") \
                else base.transpose()
        return base[slices]


class Program:
    """A generated program: its source, arguments and expected output."""

    def __init__(self, seed, grid):
        self.seed, self.grid = seed, grid
        self.inputs = []       # (ArraySpec, tile shape, padding name or None)
        self.values = []
        self.lines = []
        self.out = None        # ArraySpec of the output (its base is poisoned)
        self.stored_shape = None

    @property
    def exact(self):
        return all(value.exact for value in self.values)

    @property
    def out_base(self):
        return self.out.base

    @property
    def source(self):
        params = ", ".join([spec.name for spec, *_ in self.inputs] + ["out"])
        body = "\n".join("    " + line for line in self.lines)
        return (f"# program of data seed {self.seed}\nimport numba_tile as ct\n\n"
                f"@ct.kernel\ndef program({params}):\n    b = ct.bid(0)\n{body}\n")

    def arguments(self, to_array=np.array):
        """The kernel's arguments, views of fresh copies of the bases made by ``to_array``,
        and the output's copied base (the buffer to read back)."""
        views = [spec.view(to_array(spec.base)) for spec, *_ in self.inputs]
        out_base = to_array(self.out.base)
        return tuple(views) + (self.out.view(out_base),), out_base

    def expected(self, mark_written=False):
        """The output base after the program: each block's tiles through the NumPy
        computation of every line. With ``mark_written``, a bool array of the written
        elements instead."""
        out_base = np.zeros(self.out.base.shape, bool) if mark_written else self.out.base.copy()
        out_view = self.out.view(out_base)
        for block in range(self.grid):
            env = {}
            for spec, tile_shape, padding in self.inputs:
                env[spec.name] = _padded_tile(spec.view(spec.base), block, tile_shape, padding)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for value in self.values:
                    env[value.name] = np.asarray(value.compute(env))
            result = env[self.values[-1].name].reshape(self.stored_shape)
            _store_block(out_view, block, np.ones(result.shape, bool) if mark_written
                         else result)
        return out_base


_PADDING = {None: 0.0, "ZERO": 0.0, "NEG_ZERO": -0.0, "NAN": np.nan, "POS_INF": np.inf,
            "NEG_INF": -np.inf}


def _padded_tile(array, block, tile_shape, padding):
    """The tile at index ``(block, 0, ...)`` of ``array``, padded where it leaves the array."""
    with np.errstate(invalid="ignore"):
        tile = np.full(tile_shape, _PADDING[padding]).astype(array.dtype)
    part = array[_block_slices(block, tile_shape)]
    tile[tuple(slice(0, n) for n in part.shape)] = part
    return tile


def _block_slices(block, tile_shape):
    start = block * tile_shape[0]
    return (slice(start, start + tile_shape[0]),) + tuple(slice(0, n) for n in tile_shape[1:])


def _store_block(out_view, block, result):
    target = out_view[_block_slices(block, result.shape)]
    target[...] = result[tuple(slice(0, n) for n in target.shape)]


def _numpy(dtype):
    return np.dtype(dtype.numpy)


def _cast(values, dtype):
    values = np.asarray(values)
    if dtype.is_bool:
        return values != 0
    return values.astype(_numpy(dtype))


def _random_values(rng, dtype, shape):
    if dtype.is_bool:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.is_float:
        # multiples of 1/8 in [-8, 8]: exact in every float dtype
        return (rng.integers(-64, 65, shape) / 8.0).astype(_numpy(dtype))
    low = -8 if dtype.is_signed else 0
    return rng.integers(low, 17, shape).astype(_numpy(dtype))


def _poisoned(dtype, shape):
    raw = np.full(math.prod(shape) * _numpy(dtype).itemsize, POISON_BYTE, np.uint8)
    return raw.view(_numpy(dtype)).reshape(shape)


def _draw_view(chooser, dtype, shape, make_base, margin=0):
    """A base from ``make_base(base_shape)`` and the key viewing it as an array of ``shape``:
    contiguous, strided or reversed along one axis (bfloat16 lives in PyTorch on the GPU,
    which has no negative strides), or transposed. ``margin`` elements of the base surround
    the view on every side."""
    kinds = ("contiguous", "strided", "transposed") + (() if dtype is ct.bfloat16
                                                       else ("reversed",))
    kind = chooser.choice(kinds)
    axis = chooser.integer(0, len(shape) - 1)
    transposed = kind == "transposed" and len(shape) >= 2
    steps = [1] * len(shape)
    if kind == "strided":
        steps[axis] = 2
    extent = [n * s + 2 * margin for n, s in zip(shape, steps)]
    slices = []
    for i, (n, s) in enumerate(zip(shape, steps)):
        stop = margin + n * s
        if kind == "reversed" and i == axis:
            slices.append(slice(stop - 1, margin - 1 if margin else None, -1))
        else:
            slices.append(slice(margin, stop, s))
    if transposed:
        base = make_base(tuple(reversed(extent)))
    else:
        base = make_base(tuple(extent))
    return base, (transposed, tuple(slices))


def generate(chooser, data_seed=None):
    """Draw one program; ``data_seed`` seeds the array contents (default: drawn)."""
    if data_seed is None:
        data_seed = chooser.integer(0, 2 ** 31)
    rng = np.random.default_rng(data_seed)
    program = Program(data_seed, chooser.integer(1, 3))
    frame = [chooser.choice(DIMS) for _ in range(chooser.integer(1, 3))]
    while math.prod(frame) > MAX_ELEMENTS:
        frame[frame.index(max(frame))] //= 2
    for i in range(chooser.integer(1, 3)):
        _add_input(program, chooser, rng, f"x{i}", frame)
    for _ in range(chooser.integer(1, 6)):
        step = chooser.choice(_STEPS)
        value = step(program, chooser)
        if value is not None:
            program.values.append(value)
    _add_store(program, chooser)
    return program


def _add_input(program, chooser, rng, name, frame):
    dtype = chooser.choice(DTYPES)
    rank = chooser.integer(1, len(frame))
    tile_shape = tuple(n if chooser.integer(0, 3) else 1 for n in frame[len(frame) - rank:])
    shape, partial = [], False
    for axis, n in enumerate(tile_shape):
        full = n * program.grid if axis == 0 else n
        kind = chooser.integer(0, 2)
        extent = full if kind == 0 else full + chooser.integer(1, 3) if kind == 2 else \
            max(1, full - chooser.integer(1, max(1, n - 1)))
        partial |= extent < full
        shape.append(extent)
    base, key = _draw_view(chooser, dtype, tuple(shape),
                           lambda base_shape: _random_values(rng, dtype, base_shape))
    paddings = ("ZERO", "NEG_ZERO", "NAN", "POS_INF", "NEG_INF") if dtype.is_float else ("ZERO",)
    padding = chooser.choice(paddings if partial else (None,) + paddings)
    index = ", ".join(["b"] + ["0"] * (len(tile_shape) - 1))
    option = f", padding_mode=ct.PaddingMode.{padding}" if padding else ""
    value = f"t{len(program.inputs)}"
    program.lines.append(f"{value} = ct.load({name}, index=({index},), shape={tile_shape}{option})")
    program.inputs.append((ArraySpec(name, base, key), tile_shape, padding))
    program.values.append(Value(value, dtype, tile_shape, lambda env, n=name: env[n]))


def _fresh_name(program):
    return f"v{len(program.values)}"


def _pick(program, chooser, accept):
    candidates = [v for v in program.values if accept(v)]
    return chooser.choice(candidates) if candidates else None


def _broadcast(*shapes):
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None
    return shape if math.prod(shape) <= MAX_ELEMENTS else None


def _promoted(a, b):
    try:
        return common_dtype(a, b)
    except TileError:
        return None


# binary ops: name -> (operator spelling or None, NumPy computation, kinds of dtype allowed)
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "maximum": None, "minimum": None}
_COMPARISON = {"less": "<", "less_equal": "<=", "greater": ">", "equal": "==",
               "not_equal": "!="}
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}


def _numpy_binary(op, a, b, dtype):
    if op in ("maximum", "minimum"):
        if dtype.is_float:  # NaN loses (propagate_nan=False); -0.0 is below +0.0
            out = (np.fmax if op == "maximum" else np.fmin)(a, b)
            zeros = (a == 0) & (b == 0)
            sign = np.signbit(a) & np.signbit(b) if op == "maximum" else \
                np.signbit(a) | np.signbit(b)
            return np.where(zeros, np.where(sign, -0.0, 0.0).astype(out.dtype), out)
        return (np.maximum if op == "maximum" else np.minimum)(a, b)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "less": np.less,
          "less_equal": np.less_equal, "greater": np.greater, "equal": np.equal,
          "not_equal": np.not_equal, "bitwise_and": np.bitwise_and,
          "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}[op]
    return fn(a, b)


def _operands_allowed(op, first, second):
    """Whether cuTile's operand rules of a bitwise op take these operands (each a dtype of a
    tile, or a :class:`Loose` constant): one dtype of two tiles, no float, no bool with
    int8."""
    if op not in _BITWISE:
        return True
    operands = [v if isinstance(v, Loose) else types.SimpleNamespace(dtype=v)
                for v in (first, second)]
    try:
        check_bitwise_operands(op, *operands)
    except ct.TileTypeError:
        return False
    return True


def _binary_allowed(op, dtype):
    if op in _BITWISE:
        return dtype.is_integral or dtype.is_bool
    if op in _ARITHMETIC:
        return not dtype.is_bool
    return True


def _spell_binary(chooser, op, a, b):
    symbol = {**_ARITHMETIC, **_COMPARISON, **_BITWISE}[op]
    if symbol and chooser.integer(0, 2):
        return f"{a} {symbol} {b}"
    return f"ct.{op}({a}, {b})"


def _binary_step(program, chooser):
    op = chooser.choice(tuple(_ARITHMETIC) + tuple(_COMPARISON) + tuple(_BITWISE))
    a = _pick(program, chooser, lambda v: True)
    b = _pick(program, chooser, lambda v: _broadcast(a.shape, v.shape) is not None and
              _promoted(a.dtype, v.dtype) is not None)
    dtype = _promoted(a.dtype, b.dtype)
    if not _binary_allowed(op, dtype) or not _operands_allowed(op, a.dtype, b.dtype) or (
            op in _COMPARISON and not (a.exact and b.exact)):
        return None
    result = ct.bool_ if op in _COMPARISON else dtype

    def compute(env):
        return _numpy_binary(op, _cast(env[a.name], dtype), _cast(env[b.name], dtype), dtype)
    name = _fresh_name(program)
    program.lines.append(f"{name} = {_spell_binary(chooser, op, a.name, b.name)}")
    return Value(name, result, _broadcast(a.shape, b.shape), compute, a.exact and b.exact)


def _constant_step(program, chooser):
    op = chooser.choice(tuple(_ARITHMETIC) + tuple(_COMPARISON) + tuple(_BITWISE))
    constant = chooser.choice((1, 2, 3, 0.5, -1.25, 2.0))
    a = _pick(program, chooser, lambda v: True)
    dtype = _promoted(a.dtype, Loose(constant))
    if dtype is None or not _binary_allowed(op, dtype) or \
            not _operands_allowed(op, a.dtype, Loose(constant)) or \
            (op in _COMPARISON and not a.exact):
        return None
    if op in ("sub",) and dtype.is_integral and not dtype.is_signed:
        return None  # keeps unsigned results small (wrapping is covered by tile - tile)
    result = ct.bool_ if op in _COMPARISON else dtype
    first = chooser.integer(0, 1)
    spelled = _spell_binary(chooser, op, *((repr(constant), a.name) if first
                                           else (a.name, repr(constant))))

    def compute(env):
        x, c = _cast(env[a.name], dtype), _cast(np.asarray(constant), dtype)
        return _numpy_binary(op, *((c, x) if first else (x, c)), dtype)
    name = _fresh_name(program)
    program.lines.append(f"{name} = {spelled}")
    return Value(name, result, a.shape, compute, a.exact)


# unary ops: name -> (spelling template, NumPy computation in float64, exact)
_UNARY = {
    "negative": ("-{x}", np.negative, True),
    "abs": ("ct.abs({x})", np.abs, True),
    "sin": ("ct.sin({x})", np.sin, False),
    "tanh": ("ct.tanh({x})", np.tanh, False),
    "sqrt": ("ct.sqrt(ct.abs({x}))", lambda x: np.sqrt(np.abs(x)), False),
    "exp": ("ct.exp(ct.minimum({x}, 4.0))", lambda x: np.exp(np.fmin(x, 4.0)), False),
}


def _unary_step(program, chooser):
    op = chooser.choice(tuple(_UNARY))
    template, fn, exact = _UNARY[op]
    if exact:
        a = _pick(program, chooser, lambda v: v.dtype.is_float or
                  (v.dtype.is_integral and v.dtype.is_signed))
    else:  # sin of a rounded argument is ill-conditioned: only exact values reach it
        a = _pick(program, chooser, lambda v: v.dtype.is_float and (v.exact or op != "sin"))
    if a is None:
        return None
    dtype = a.dtype

    def compute(env):
        x = env[a.name]
        if exact:
            return fn(x)
        return _cast(fn(x.astype(np.float64)), dtype)
    name = _fresh_name(program)
    program.lines.append(f"{name} = {template.format(x=a.name)}")
    return Value(name, dtype, a.shape, compute, a.exact and exact)


def _cast_step(program, chooser):
    target = chooser.choice(DTYPES)

    def allowed(v):
        # float -> integer is undefined past the target's range; a rounded float's
        # truth value may differ between the executors: neither is drawn
        return not (v.dtype.is_float and (target.is_integral or
                                          (target.is_bool and not v.exact)))
    a = _pick(program, chooser, allowed)
    if a is None:
        return None
    name = _fresh_name(program)
    spelled = f"{a.name}.astype(ct.{target.name})" if chooser.integer(0, 1) else \
        f"ct.astype({a.name}, ct.{target.name})"
    program.lines.append(f"{name} = {spelled}")
    return Value(name, target, a.shape, lambda env: _cast(env[a.name], target), a.exact)


def _where_step(program, chooser):
    cond = _pick(program, chooser, lambda v: v.dtype.is_bool and v.exact)
    if cond is None:
        return None
    x = _pick(program, chooser, lambda v: _broadcast(cond.shape, v.shape) is not None)
    y = _pick(program, chooser, lambda v: _broadcast(cond.shape, x.shape, v.shape) is not None
              and _promoted(x.dtype, v.dtype) is not None)
    if y is None:
        return None
    dtype = _promoted(x.dtype, y.dtype)
    name = _fresh_name(program)
    program.lines.append(f"{name} = ct.where({cond.name}, {x.name}, {y.name})")

    def compute(env):
        return np.where(env[cond.name], _cast(env[x.name], dtype), _cast(env[y.name], dtype))
    return Value(name, dtype, _broadcast(cond.shape, x.shape, y.shape), compute,
                 x.exact and y.exact)


def _reduce_step(program, chooser):
    op = chooser.choice(("sum", "max", "min"))
    a = _pick(program, chooser, lambda v: not v.dtype.is_bool and len(v.shape) >= 1)
    if a is None:
        return None
    rank = len(a.shape)
    axis = chooser.choice((None, chooser.integer(-rank, rank - 1)) +
                          (((0, rank - 1),) if rank >= 2 else ()))
    keepdims = bool(chooser.integer(0, 1))
    axes = tuple(range(rank)) if axis is None else tuple(
        x % rank for x in (axis if isinstance(axis, tuple) else (axis,)))
    shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape) if keepdims or
                  i not in axes)
    dtype = a.dtype

    def compute(env):
        x = env[a.name]
        if dtype.is_float:
            wide = x.astype(np.float64)
            fn = {"sum": np.sum, "max": np.nanmax, "min": np.nanmin}[op]
            out = fn(wide, axis=axes, keepdims=keepdims)
            if op != "sum":  # -0.0 is below +0.0
                positive = np.any((wide == 0) & ~np.signbit(wide), axis=axes, keepdims=keepdims)
                negative = np.any((wide == 0) & np.signbit(wide), axis=axes, keepdims=keepdims)
                zero = 0.0 if (op == "max") else -0.0
                keep = positive if op == "max" else negative
                out = np.where(out == 0, np.where(keep, zero, -zero), out)
            return _cast(out, dtype)
        fn = {"sum": np.sum, "max": np.max, "min": np.min}[op]
        extra = {"dtype": x.dtype} if op == "sum" else {}
        return np.asarray(fn(x, axis=axes, keepdims=keepdims, **extra))
    name = _fresh_name(program)
    options = "" if axis is None and chooser.integer(0, 1) else f", axis={axis!r}"
    options += ", keepdims=True" if keepdims else ""
    program.lines.append(f"{name} = ct.{op}({a.name}{options})")
    return Value(name, dtype, shape, compute, a.exact and not (op == "sum" and dtype.is_float))


def _power_of_two_shape(chooser, size):
    dims = []
    for _ in range(chooser.integer(1, 3) - 1):
        dim = chooser.choice(tuple(n for n in DIMS if size % n == 0))
        dims.append(dim)
        size //= dim
    return tuple(dims) + (size,)


def _shape_step(program, chooser):
    op = chooser.choice(("reshape", "permute", "transpose", "expand_dims", "broadcast_to"))
    a = _pick(program, chooser, lambda v: True)
    rank = len(a.shape)
    name = _fresh_name(program)
    if op == "reshape":
        shape = _power_of_two_shape(chooser, math.prod(a.shape)) if rank else (1,)
        program.lines.append(f"{name} = ct.reshape({a.name}, {shape})")
        return Value(name, a.dtype, shape, lambda env: env[a.name].reshape(shape), a.exact)
    if op in ("permute", "transpose") and rank >= 2:
        axes = list(range(rank))
        if op == "transpose" and rank == 2:
            program.lines.append(f"{name} = ct.transpose({a.name})")
            axes = [1, 0]
        else:
            random.Random(chooser.integer(0, 1000)).shuffle(axes)
            program.lines.append(f"{name} = ct.permute({a.name}, {tuple(axes)})")
        shape = tuple(a.shape[i] for i in axes)
        return Value(name, a.dtype, shape, lambda env: np.transpose(env[a.name], axes), a.exact)
    if op == "expand_dims" and rank <= 2:
        axis = chooser.integer(0, rank)
        program.lines.append(f"{name} = ct.expand_dims({a.name}, {axis})")
        return Value(name, a.dtype, a.shape[:axis] + (1,) + a.shape[axis:],
                     lambda env: np.expand_dims(env[a.name], axis), a.exact)
    if op == "broadcast_to" and 1 in a.shape:
        shape = tuple(chooser.choice((1, 2, 4)) if n == 1 else n for n in a.shape)
        if math.prod(shape) > MAX_ELEMENTS:
            return None
        program.lines.append(f"{name} = ct.broadcast_to({a.name}, {shape})")
        return Value(name, a.dtype, shape, lambda env: np.broadcast_to(env[a.name], shape),
                     a.exact)
    return None


_STEPS = (_binary_step, _binary_step, _constant_step, _unary_step, _cast_step, _where_step,
          _reduce_step, _shape_step)


def _add_store(program, chooser):
    result = program.values[-1]
    stored = result.name
    shape = result.shape
    if not shape:  # a 0-d result is stored as a tile of one element
        shape = (1,)
        stored = f"ct.reshape({stored}, (1,))"
    index = ", ".join(["b"] + ["0"] * (len(shape) - 1))
    program.lines.append(f"ct.store(out, index=({index},), tile={stored})")
    program.stored_shape = shape
    out_shape = []
    for axis, n in enumerate(shape):
        full = n * program.grid if axis == 0 else n
        kind = chooser.integer(0, 2)
        out_shape.append(full if kind == 0 else full + chooser.integer(1, 3) if kind == 2
                         else max(1, full - chooser.integer(1, max(1, n - 1))))
    base, key = _draw_view(chooser, result.dtype, tuple(out_shape),
                           lambda base_shape: _poisoned(result.dtype, base_shape), margin=2)
    program.out = ArraySpec("out", base, key)
