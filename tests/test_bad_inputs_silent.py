"""Bad inputs that were accepted silently (issue 52, item 3), each refused alike by both
executors: ``dtype=None`` (and any non-dtype) where an op takes a dtype; the hints of memory
operations (``latency``, ``allow_tma``, ``check_bounds``) of the wrong type or out of range;
numba.cuda's SIMT intrinsics in tile code; ``async`` kernels and helpers; the argument of a
``ScalarAnnotation`` parameter that is not an int of its dtype; recursion the compiler could
never end (run in a child process with a deadline, so that a hang fails quickly); and, on
the host, architectures and kernel options that were taken for something else."""

import multiprocessing
import typing

import numpy as np
import pytest
from numba import cuda
from numba.cuda import syncthreads as imported_syncthreads
from numba.cuda import threadIdx as imported_thread_index

import numba_tile as ct
from bad_inputs import BadInput, arrays, check, module_file, statement_kernel

F32 = arrays(np.float32, np.float32)
I32 = arrays(np.int32, np.int32)
NONE_DTYPE = (r'Invalid argument "dtype" of {}\(\): Expected a dtype constant such as '
              r"ct\.float32, got None")
NOT_A_DTYPE = r'Invalid argument "dtype" of {}\(\): Expected a dtype constant'
LATENCY_RANGE = r"Latency must be between 1 and 10, got {1}: the latency of {0}\(\), 1 \(low\) " \
    r"to 10 \(high\)"
# (cuTile's words first: a constant of the wrong type, or no constant)
HINT = r'Invalid argument "{{}}" of {{}}\(\): Expected {} constant, but given value (?:is not ' \
    r"constant|has type [^:]+): it must be {}, got {{}}"
LATENCY_TYPE = HINT.format("an integer", "None or a constant int between 1 and 10") \
    .replace("{}", "latency", 1)
TMA_TYPE = HINT.format("a boolean", "None or a constant bool").replace("{}", "allow_tma", 1)
BOUNDS_TYPE = HINT.format("a boolean", "a constant bool").replace("{}", "check_bounds", 1)
SIMT = r"cuda\.{} is a SIMT intrinsic of numba\.cuda: SIMT intrinsics are not tile code"
ASYNC = r"async functions, await, async for and async with are not supported in tile code"
RECURSION = r"call each other too deeply \(runaway recursion\)"
NESTED_RECURSION = r"A function defined inside tile code \(a nested def or a lambda\) calls"


def case(name, statement, error, message, line, args=F32):
    return BadInput(name, statement_kernel(statement), args, error, message, line)


DTYPE_CASES = [
    case("astype_method_none",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)).astype(None)),
         ct.TileTypeError, NONE_DTYPE.format("astype"), ".astype(None)"),
    case("astype_none",
         lambda x, out: ct.store(out, (0,), ct.astype(ct.load(x, (0,), (4,)), None)),
         ct.TileTypeError, NONE_DTYPE.format("astype"), "ct.astype(ct.load"),
    case("arange_none",
         lambda x, out: ct.store(out, (0,), ct.arange(4, dtype=None)),
         ct.TileTypeError, NONE_DTYPE.format("arange"), "ct.arange(4, dtype=None)"),
    case("full_none",
         lambda x, out: ct.store(out, (0,), ct.full((4,), 1, None)),
         ct.TileTypeError, NONE_DTYPE.format("full"), "ct.full((4,), 1, None)"),
    case("full_none_keyword",
         lambda x, out: ct.store(out, (0,), ct.full((4,), 1.5, dtype=None)),
         ct.TileTypeError, NONE_DTYPE.format("full"), "dtype=None"),
    case("zeros_none",
         lambda x, out: ct.store(out, (0,), ct.zeros((4,), None)),
         ct.TileTypeError, NONE_DTYPE.format("zeros"), "ct.zeros((4,), None)"),
    case("ones_none",
         lambda x, out: ct.store(out, (0,), ct.ones((4,), dtype=None)),
         ct.TileTypeError, NONE_DTYPE.format("ones"), "ct.ones((4,), dtype=None)"),
    case("astile_none",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) + ct.astile(1, dtype=None)),
         ct.TileTypeError, NONE_DTYPE.format("astile"), "ct.astile(1, dtype=None)"),
    case("bitcast_none",
         lambda x, out: ct.store(out, (0,), ct.bitcast(ct.load(x, (0,), (4,)), None)),
         ct.TileTypeError, NONE_DTYPE.format("bitcast"), "ct.bitcast("),
    case("astype_int",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)).astype(5)),
         ct.TileTypeError, NOT_A_DTYPE.format("astype"), ".astype(5)"),
    case("arange_string",
         lambda x, out: ct.store(out, (0,), ct.arange(4, dtype="integer")),
         ct.TileTypeError, NOT_A_DTYPE.format("arange"), 'dtype="integer"'),
    case("zeros_tuple",
         lambda x, out: ct.store(out, (0,), ct.zeros((4,), (ct.float32,))),
         ct.TileTypeError, NOT_A_DTYPE.format("zeros"), "ct.zeros((4,), (ct.float32,))"),
]

HINT_CASES = [
    case("load_latency_100",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=100)),
         ct.TileValueError, LATENCY_RANGE.format("load", 100), "latency=100"),
    case("load_latency_minus_1",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=-1)),
         ct.TileValueError, LATENCY_RANGE.format("load", -1), "latency=-1"),
    case("load_latency_0",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=0)),
         ct.TileValueError, LATENCY_RANGE.format("load", 0), "latency=0"),
    case("load_latency_11",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=11)),
         ct.TileValueError, LATENCY_RANGE.format("load", 11), "latency=11"),
    case("load_latency_float",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=2.5)),
         ct.TileTypeError, LATENCY_TYPE.format("load", r"constant 2\.5"), "latency=2.5"),
    case("load_latency_whole_float",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=3.0)),
         ct.TileTypeError, LATENCY_TYPE.format("load", r"constant 3\.0"), "latency=3.0"),
    case("load_latency_bool",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=True)),
         ct.TileTypeError, LATENCY_TYPE.format("load", "constant True"), "latency=True"),
    case("load_latency_string",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency="5")),
         ct.TileTypeError, LATENCY_TYPE.format("load", "str '5'"), 'latency="5"'),
    case("load_latency_run_time",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=ct.bid(0) + 1)),
         ct.TileTypeError, LATENCY_TYPE.format("load", "run-time int32 scalar"),
         "latency=ct.bid(0) + 1"),
    case("load_latency_tuple",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), latency=(2,))),
         ct.TileTypeError, LATENCY_TYPE.format("load", r"tuple \(2,\)"), "latency=(2,)"),
    case("store_latency_11",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)), latency=11),
         ct.TileValueError, LATENCY_RANGE.format("store", 11), "latency=11"),
    case("store_latency_float",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)), latency=0.5),
         ct.TileTypeError, LATENCY_TYPE.format("store", r"constant 0\.5"), "latency=0.5"),
    case("gather_latency_100",
         lambda x, out: ct.scatter(out, ct.arange(4, dtype=ct.int32), ct.gather(x, ct.arange(4, dtype=ct.int32), latency=100)),  # noqa: E501
         ct.TileValueError, LATENCY_RANGE.format("gather", 100), "latency=100"),
    case("gather_latency_string",
         lambda x, out: ct.scatter(out, 0, ct.gather(x, 0, latency="low")),
         ct.TileTypeError, LATENCY_TYPE.format("gather", "str 'low'"), 'latency="low"'),
    case("scatter_latency_0",
         lambda x, out: ct.scatter(out, ct.arange(4, dtype=ct.int32), ct.gather(x, ct.arange(4, dtype=ct.int32)), latency=0),  # noqa: E501
         ct.TileValueError, LATENCY_RANGE.format("scatter", 0), "latency=0"),
    case("scatter_latency_run_time",
         lambda x, out: ct.scatter(out, 0, 1.0, latency=ct.bid(0)),
         ct.TileTypeError, LATENCY_TYPE.format("scatter", "run-time int32 scalar"),
         "latency=ct.bid(0)"),
    case("view_load_latency_0",
         lambda x, out: ct.store(out, (0,), x.tiled_view((4,)).load((0,), latency=0)),
         ct.TileValueError, LATENCY_RANGE.format("load", 0), "latency=0"),
    case("view_store_latency_12",
         lambda x, out: out.tiled_view((4,)).store((0,), ct.load(x, (0,), (4,)), latency=12),
         ct.TileValueError, LATENCY_RANGE.format("store", 12), "latency=12"),
    case("raw_load_latency_11",
         lambda x, out: ct.store(out, (0,), x.get_raw_memory().load_offset(ct.arange(4, dtype=ct.int32), latency=11)),  # noqa: E501
         ct.TileValueError, LATENCY_RANGE.format("load_offset", 11), "latency=11"),
    case("raw_store_latency_float",
         lambda x, out: out.get_raw_memory().store_offset(ct.arange(4, dtype=ct.int32), 1.0, latency=2.0),  # noqa: E501
         ct.TileTypeError, LATENCY_TYPE.format("store_offset", r"constant 2\.0"), "latency=2.0"),
    case("load_allow_tma_string",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), allow_tma="yes")),
         ct.TileTypeError, TMA_TYPE.format("load", "str 'yes'"), 'allow_tma="yes"'),
    case("load_allow_tma_int",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), allow_tma=1)),
         ct.TileTypeError, TMA_TYPE.format("load", "constant 1"), "allow_tma=1"),
    case("load_allow_tma_zero",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), allow_tma=0)),
         ct.TileTypeError, TMA_TYPE.format("load", "constant 0"), "allow_tma=0"),
    case("load_allow_tma_run_time",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), allow_tma=ct.bid(0) == 0)),
         ct.TileTypeError, TMA_TYPE.format("load", "run-time bool_ scalar"),
         "allow_tma=ct.bid(0) == 0"),
    case("store_allow_tma_string",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)), allow_tma="no"),
         ct.TileTypeError, TMA_TYPE.format("store", "str 'no'"), 'allow_tma="no"'),
    case("store_allow_tma_float",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)), allow_tma=1.0),
         ct.TileTypeError, TMA_TYPE.format("store", r"constant 1\.0"), "allow_tma=1.0"),
    case("view_load_allow_tma_dtype",
         lambda x, out: ct.store(out, (0,), x.tiled_view((4,)).load((0,), allow_tma=ct.bool_)),
         ct.TileTypeError, TMA_TYPE.format("load", ""), "allow_tma=ct.bool_"),
    case("view_store_allow_tma_int",
         lambda x, out: out.tiled_view((4,)).store((0,), ct.load(x, (0,), (4,)), allow_tma=3),
         ct.TileTypeError, TMA_TYPE.format("store", "constant 3"), "allow_tma=3"),
    case("load_check_bounds_string",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), check_bounds="yes")),
         ct.TileTypeError, BOUNDS_TYPE.format("load", "str 'yes'"), 'check_bounds="yes"'),
    case("load_check_bounds_none",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), check_bounds=None)),
         ct.TileTypeError, BOUNDS_TYPE.format("load", "NoneType None"), "check_bounds=None"),
    case("load_check_bounds_int",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), check_bounds=1)),
         ct.TileTypeError, BOUNDS_TYPE.format("load", "constant 1"), "check_bounds=1"),
    case("load_check_bounds_run_time",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,), check_bounds=ct.bid(0) == 0)),
         ct.TileTypeError, BOUNDS_TYPE.format("load", "run-time bool_ scalar"),
         "check_bounds=ct.bid(0) == 0"),
    case("store_check_bounds_string",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)), check_bounds="False"),
         ct.TileTypeError, BOUNDS_TYPE.format("store", "str 'False'"), 'check_bounds="False"'),
    case("store_check_bounds_run_time",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)), check_bounds=ct.bid(0) > 0),
         ct.TileTypeError, BOUNDS_TYPE.format("store", "run-time bool_ scalar"),
         "check_bounds=ct.bid(0) > 0"),
    case("view_load_check_bounds_string",
         lambda x, out: ct.store(out, (0,), x.tiled_view((4,)).load((0,), check_bounds="no")),
         ct.TileTypeError, BOUNDS_TYPE.format("load", "str 'no'"), 'check_bounds="no"'),
    case("view_store_check_bounds_float",
         lambda x, out: out.tiled_view((4,)).store((0,), ct.load(x, (0,), (4,)), check_bounds=0.0),
         ct.TileTypeError, BOUNDS_TYPE.format("store", r"constant 0\.0"), "check_bounds=0.0"),
    case("gather_check_bounds_run_time",
         lambda x, out: ct.scatter(out, 0, ct.gather(x, 0, check_bounds=ct.bid(0) == 0)),
         ct.TileTypeError, BOUNDS_TYPE.format("gather", "run-time bool_ scalar"),
         "check_bounds=ct.bid(0) == 0"),
    case("scatter_check_bounds_string",
         lambda x, out: ct.scatter(out, 0, 1.0, check_bounds="yes"),
         ct.TileTypeError, BOUNDS_TYPE.format("scatter", "str 'yes'"), 'check_bounds="yes"'),
    case("atomic_check_bounds_string",
         lambda x, out: ct.atomic_add(out, 0, 1, check_bounds="yes"),
         ct.TileTypeError, BOUNDS_TYPE.format("atomic_add", "str 'yes'"), 'check_bounds="yes"',
         args=I32),
    case("atomic_check_bounds_run_time",
         lambda x, out: ct.atomic_max(out, 0, 1, check_bounds=ct.bid(0) == 0),
         ct.TileTypeError, BOUNDS_TYPE.format("atomic_max", "run-time bool_ scalar"),
         "check_bounds=ct.bid(0) == 0", args=I32),
]

FLAG = r"{} of {} must be a constant bool, got {}"
KEEPDIMS = r'Invalid argument "keepdims" of {}\(\): Expected a boolean constant, got {}'

FLAG_CASES = [
    case("keepdims_int",
         lambda x, out: ct.store(out, (0,), ct.sum(ct.load(x, (0,), (4,)), axis=0, keepdims=1)),
         ct.TileTypeError, KEEPDIMS.format("sum", "constant 1"), "keepdims=1"),
    case("keepdims_string",
         lambda x, out: ct.store(out, (0,), ct.max(ct.load(x, (0,), (4,)), 0, keepdims="yes")),
         ct.TileTypeError, KEEPDIMS.format("max", "str 'yes'"), 'keepdims="yes"'),
    case("flush_to_zero_string",
         lambda x, out: ct.store(out, (0,), ct.add(ct.load(x, (0,), (4,)), 2.0, flush_to_zero="yes")),  # noqa: E501
         ct.TileTypeError, FLAG.format("flush_to_zero", "add", "str 'yes'"), "flush_to_zero="),
    case("flush_to_zero_int",
         lambda x, out: ct.store(out, (0,), ct.mul(ct.load(x, (0,), (4,)), 2.0, flush_to_zero=1)),
         ct.TileTypeError, FLAG.format("flush_to_zero", "mul", "constant 1"), "flush_to_zero=1"),
    case("flush_to_zero_run_time",
         lambda x, out: ct.store(out, (0,), ct.sub(ct.load(x, (0,), (4,)), 2.0, flush_to_zero=ct.bid(0) == 0)),  # noqa: E501
         ct.TileTypeError, FLAG.format("flush_to_zero", "sub", "run-time bool_ scalar"),
         "flush_to_zero=ct.bid(0) == 0"),
    case("unary_flush_to_zero_none",
         lambda x, out: ct.store(out, (0,), ct.sqrt(ct.load(x, (0,), (4,)), flush_to_zero=None)),
         ct.TileTypeError, FLAG.format("flush_to_zero", "sqrt", "NoneType None"),
         "flush_to_zero=None"),
    case("propagate_nan_string",
         lambda x, out: ct.store(out, (0,), ct.maximum(ct.load(x, (0,), (4,)), 2.0, propagate_nan="no")),  # noqa: E501
         ct.TileTypeError, FLAG.format("propagate_nan", "maximum", "str 'no'"), "propagate_nan="),
]

SIMT_CASES = [
    case("thread_index",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) + cuda.threadIdx.x),
         ct.TileSyntaxError, SIMT.format("threadIdx"), "cuda.threadIdx.x"),
    case("block_index",
         lambda x, out: ct.store(out, (cuda.blockIdx.x,), ct.load(x, (0,), (4,))),
         ct.TileSyntaxError, SIMT.format("blockIdx"), "cuda.blockIdx.x"),
    case("block_dim",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) * cuda.blockDim.x),
         ct.TileSyntaxError, SIMT.format("blockDim"), "cuda.blockDim.x"),
    case("grid_dim",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) * cuda.gridDim.x),
         ct.TileSyntaxError, SIMT.format("gridDim"), "cuda.gridDim.x"),
    case("syncthreads",
         lambda x, out: cuda.syncthreads(),
         ct.TileSyntaxError, SIMT.format("syncthreads"), "cuda.syncthreads()"),
    case("syncthreads_count",
         lambda x, out: cuda.syncthreads_count(1),
         ct.TileSyntaxError, SIMT.format("syncthreads_count"), "cuda.syncthreads_count(1)"),
    case("grid",
         lambda x, out: ct.store(out, (cuda.grid(1),), ct.load(x, (0,), (4,))),
         ct.TileSyntaxError, SIMT.format("grid"), "cuda.grid(1)"),
    case("gridsize",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) + cuda.gridsize(1)),
         ct.TileSyntaxError, SIMT.format("gridsize"), "cuda.gridsize(1)"),
    case("shared_array",
         lambda x, out: cuda.shared.array(4, np.float32),
         ct.TileSyntaxError, SIMT.format("shared"), "cuda.shared.array"),
    case("local_array",
         lambda x, out: cuda.local.array(4, np.float32),
         ct.TileSyntaxError, SIMT.format("local"), "cuda.local.array"),
    case("const_array",
         lambda x, out: cuda.const.array_like(x),
         ct.TileSyntaxError, SIMT.format("const"), "cuda.const.array_like"),
    case("atomic_add",
         lambda x, out: cuda.atomic.add(out, 0, 1.0),
         ct.TileSyntaxError, SIMT.format("atomic"), "cuda.atomic.add"),
    case("lane_id",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) + cuda.laneid),
         ct.TileSyntaxError, SIMT.format("laneid"), "cuda.laneid"),
    case("warp_size",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) * cuda.warpsize),
         ct.TileSyntaxError, SIMT.format("warpsize"), "cuda.warpsize"),
    case("shuffle",
         lambda x, out: cuda.shfl_sync(0xFFFFFFFF, 1, 0),
         ct.TileSyntaxError, SIMT.format("shfl_sync"), "cuda.shfl_sync("),
    case("shuffle_down",
         lambda x, out: cuda.shfl_down_sync(0xFFFFFFFF, 1, 1),
         ct.TileSyntaxError, SIMT.format("shfl_down_sync"), "cuda.shfl_down_sync("),
    case("ballot",
         lambda x, out: cuda.ballot_sync(0xFFFFFFFF, True),
         ct.TileSyntaxError, SIMT.format("ballot_sync"), "cuda.ballot_sync("),
    case("all_sync",
         lambda x, out: cuda.all_sync(0xFFFFFFFF, True),
         ct.TileSyntaxError, SIMT.format("all_sync"), "cuda.all_sync("),
    case("match_any",
         lambda x, out: cuda.match_any_sync(0xFFFFFFFF, 1),
         ct.TileSyntaxError, SIMT.format("match_any_sync"), "cuda.match_any_sync("),
    case("active_mask",
         lambda x, out: cuda.activemask(),
         ct.TileSyntaxError, SIMT.format("activemask"), "cuda.activemask()"),
    case("syncwarp",
         lambda x, out: cuda.syncwarp(),
         ct.TileSyntaxError, SIMT.format("syncwarp"), "cuda.syncwarp()"),
    case("threadfence",
         lambda x, out: cuda.threadfence(),
         ct.TileSyntaxError, SIMT.format("threadfence"), "cuda.threadfence()"),
    case("threadfence_block",
         lambda x, out: cuda.threadfence_block(),
         ct.TileSyntaxError, SIMT.format("threadfence_block"), "cuda.threadfence_block()"),
    case("nanosleep",
         lambda x, out: cuda.nanosleep(100),
         ct.TileSyntaxError, SIMT.format("nanosleep"), "cuda.nanosleep(100)"),
    case("popc",
         lambda x, out: ct.store(out, (0,), ct.load(x, (0,), (4,)) + cuda.popc(3)),
         ct.TileSyntaxError, SIMT.format("popc"), "cuda.popc(3)"),
    case("fma",
         lambda x, out: ct.store(out, (0,), cuda.fma(ct.load(x, (0,), (4,)), 2.0, 1.0)),
         ct.TileSyntaxError, SIMT.format("fma"), "cuda.fma("),
    case("selp",
         lambda x, out: ct.store(out, (0,), cuda.selp(True, ct.load(x, (0,), (4,)), 0.0)),
         ct.TileSyntaxError, SIMT.format("selp"), "cuda.selp("),
    case("cbrt",
         lambda x, out: ct.store(out, (0,), cuda.cbrt(ct.load(x, (0,), (4,)))),
         ct.TileSyntaxError, SIMT.format("cbrt"), "cuda.cbrt("),
    case("load_cache_hint",
         lambda x, out: cuda.ldcg(x, 0),
         ct.TileSyntaxError, SIMT.format("ldcg"), "cuda.ldcg(x, 0)"),
    case("store_cache_hint",
         lambda x, out: cuda.stcs(out, 0, 1.0),
         ct.TileSyntaxError, SIMT.format("stcs"), "cuda.stcs(out, 0, 1.0)"),
    case("libdevice",
         lambda x, out: ct.store(out, (0,), cuda.libdevice.sinf(ct.load(x, (0,), (4,)))),
         ct.TileSyntaxError, SIMT.format(r"libdevice\.sinf"), "cuda.libdevice.sinf"),
    case("imported_syncthreads",
         lambda x, out: imported_syncthreads(),
         ct.TileSyntaxError, SIMT.format("syncthreads"), "imported_syncthreads()"),
    case("imported_thread_index",
         lambda x, out: ct.store(out, (imported_thread_index.x,), ct.load(x, (0,), (4,))),
         ct.TileSyntaxError, SIMT.format("threadIdx"), "imported_thread_index.x"),
    case("simt_in_static_eval",
         lambda x, out: ct.static_eval(cuda.threadIdx),
         ct.TileSyntaxError, SIMT.format("threadIdx"), "ct.static_eval(cuda.threadIdx)"),
]


@ct.kernel
async def async_kernel(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


@ct.kernel
async def async_kernel_that_awaits(x, out):
    await async_helper(ct.load(x, (0,), (4,)))


async def async_helper(t):
    return t


@ct.kernel
def calls_an_async_helper(x, out):
    ct.store(out, (0,), async_helper(ct.load(x, (0,), (4,))))


@ct.kernel
def defines_an_async_function(x, out):
    async def inner(t):
        return t
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


def _helper_defining_an_async_function(t):
    async def inner():
        return 1
    return t


@ct.kernel
def calls_a_helper_defining_an_async_function(x, out):
    ct.store(out, (0,), _helper_defining_an_async_function(ct.load(x, (0,), (4,))))


async def _async_generator_helper(t):
    yield t


@ct.kernel
def calls_an_async_generator(x, out):
    ct.store(out, (0,), _async_generator_helper(ct.load(x, (0,), (4,))))


ASYNC_CASES = [
    BadInput("async_kernel", async_kernel, F32, ct.TileSyntaxError,
             r"A kernel cannot be an async function \(async def\): " + ASYNC,
             "async def async_kernel"),
    BadInput("async_kernel_that_awaits", async_kernel_that_awaits, F32, ct.TileSyntaxError,
             r"A kernel cannot be an async function", "async def async_kernel_that_awaits"),
    BadInput("async_helper", calls_an_async_helper, F32, ct.TileSyntaxError, ASYNC,
             "async def async_helper"),
    BadInput("nested_async_def", defines_an_async_function, F32, ct.TileSyntaxError, ASYNC,
             "async def inner(t)"),
    BadInput("helper_with_nested_async_def", calls_a_helper_defining_an_async_function, F32,
             ct.TileSyntaxError, ASYNC, "async def inner()"),
    BadInput("async_generator_helper", calls_an_async_generator, F32, ct.TileSyntaxError,
             ASYNC, "async def _async_generator_helper"),
]


@ct.kernel
def takes_an_int64(x, out, n: ct.ScalarInt64):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + n)


@ct.kernel
def takes_an_int32(x, out, n: typing.Annotated[int, ct.ScalarAnnotation(dtype=ct.int32)]):
    ct.store(out, (0,), ct.load(x, (0,), (4,)) + n)


def _annotated(value, kernel=takes_an_int64, dtype="int64"):
    return (kernel, value, TypeError, rf"Argument 'n' is annotated as an {dtype} scalar "
                                      rf"\(ScalarAnnotation\): pass an int, got ")


def _out_of_range(value, kernel=takes_an_int64, dtype="int64"):
    return (kernel, value, ValueError, rf"Argument 'n' = {value} does not fit {dtype}")


SCALAR_CASES = [
    BadInput(f"scalar_int64_{name}", kernel, F32 + (value,), error, message, None)
    for name, (kernel, value, error, message) in {
        "float": _annotated(1.5),
        "whole_float": _annotated(2.0),
        "true": _annotated(True),
        "false": _annotated(False),
        "none": _annotated(None),
        "string": _annotated("3"),
        "tuple": _annotated((1, 2)),
        "list": _annotated([1]),
        "complex": _annotated(1j),
        "numpy_float": _annotated(np.float32(1.0)),
        "numpy_bool": _annotated(np.bool_(True)),
        "array": _annotated(np.zeros(4, np.int64)),
        "dtype": _annotated(ct.int64),
        "too_large": _out_of_range(2 ** 63),
        "too_small": _out_of_range(-2 ** 63 - 1),
        "numpy_too_large": _out_of_range(np.uint64(2 ** 64 - 1)),
        "int32_float": _annotated(0.5, takes_an_int32, "int32"),
        "int32_too_large": _out_of_range(2 ** 31, takes_an_int32, "int32"),
    }.items()]


def _direct(t, n):
    return t if n == 0 else _direct(t, n - 1) + 1


def _forever(t):
    return _forever(t)


def _upward(t, n):
    return _upward(t, n + 1)


def _ping(t, n):
    return t if n == 0 else _pong(t, n - 1)


def _pong(t, n):
    return _ping(t, n) * 2


_factorial = lambda t, n: t if n == 0 else _factorial(t * 2, n - 1)  # noqa: E731


def _early_return(t, n):
    if n == 0:
        return t
    return _early_return(t, n - 1)


def _with_keywords(t, *, depth):
    return t if depth == 0 else _with_keywords(t + 1, depth=depth - 1)


def _constant_argument(t, n, unit):
    return t if n == 0 else _constant_argument(t, n - unit, unit)


@ct.kernel
def direct_recursion_run_time_depth(x, out):
    ct.store(out, (0,), _direct(ct.load(x, (0,), (4,)), ct.bid(0) + 2))


@ct.kernel
def direct_recursion_not_taken_in_block_0(x, out):
    ct.store(out, (0,), _direct(ct.load(x, (0,), (4,)), ct.bid(0)))


@ct.kernel
def early_return_recursion_not_taken_in_block_0(x, out):
    ct.store(out, (0,), _early_return(ct.load(x, (0,), (4,)), ct.bid(0)))


@ct.kernel
def mutual_recursion_not_taken_in_block_0(x, out):
    ct.store(out, (0,), _ping(ct.load(x, (0,), (4,)), ct.bid(0)))


@ct.kernel
def recursive_lambda_not_taken_in_block_0(x, out):
    ct.store(out, (0,), _factorial(ct.load(x, (0,), (4,)), ct.bid(0)))


@ct.kernel
def nested_function_recursion_not_taken_in_block_0(x, out):
    def rec(t, n):
        return t if n == 0 else rec(t, n - 1)
    ct.store(out, (0,), rec(ct.load(x, (0,), (4,)), ct.bid(0)))


@ct.kernel
def direct_recursion_without_end(x, out):
    ct.store(out, (0,), _forever(ct.load(x, (0,), (4,))))


@ct.kernel
def recursion_upward_on_a_constant(x, out):
    ct.store(out, (0,), _upward(ct.load(x, (0,), (4,)), 0))


@ct.kernel
def recursion_deeper_than_the_limit(x, out, N: ct.Constant[int]):
    ct.store(out, (0,), _direct(ct.load(x, (0,), (4,)), N))


@ct.kernel
def mutual_recursion_run_time_depth(x, out):
    ct.store(out, (0,), _ping(ct.load(x, (0,), (4,)), ct.bid(0) + 3))


@ct.kernel
def recursive_lambda_run_time_depth(x, out):
    ct.store(out, (0,), _factorial(ct.load(x, (0,), (4,)), ct.bid(0) + 2))


@ct.kernel
def recursion_with_keywords_run_time_depth(x, out):
    ct.store(out, (0,), _with_keywords(ct.load(x, (0,), (4,)), depth=ct.bid(0) + 2))


@ct.kernel
def recursion_on_a_run_time_argument(x, out, n):
    ct.store(out, (0,), _constant_argument(ct.load(x, (0,), (4,)), n, 1))


@ct.kernel
def nested_function_recursion(x, out):
    def rec(t, n):
        return t if n == 0 else rec(t, n - 1)
    ct.store(out, (0,), rec(ct.load(x, (0,), (4,)), ct.bid(0) + 2))


@ct.kernel
def nested_function_recursion_on_a_constant(x, out):
    def rec(t, n):
        return t if n == 0 else rec(t, n - 1)
    ct.store(out, (0,), rec(ct.load(x, (0,), (4,)), 3))


@ct.kernel
def nested_lambda_recursion(x, out):
    rec = lambda t, n: t if n == 0 else rec(t, n - 1)  # noqa: E731
    ct.store(out, (0,), rec(ct.load(x, (0,), (4,)), ct.bid(0) + 2))


RECURSION_CASES = [
    BadInput("direct_recursion_run_time_depth", direct_recursion_run_time_depth, F32,
             ct.TileRecursionError, RECURSION, "else _direct(t, n - 1) + 1"),
    BadInput("direct_recursion_not_taken_in_block_0", direct_recursion_not_taken_in_block_0,
             F32, ct.TileRecursionError, RECURSION, "else _direct(t, n - 1) + 1"),
    BadInput("early_return_recursion_not_taken_in_block_0",
             early_return_recursion_not_taken_in_block_0, F32, ct.TileRecursionError,
             RECURSION, "return _early_return(t, n - 1)"),
    BadInput("mutual_recursion_not_taken_in_block_0", mutual_recursion_not_taken_in_block_0,
             F32, ct.TileRecursionError, RECURSION, "return _ping(t, n) * 2"),
    BadInput("recursive_lambda_not_taken_in_block_0", recursive_lambda_not_taken_in_block_0,
             F32, ct.TileRecursionError, RECURSION, "_factorial = lambda"),
    BadInput("nested_function_recursion_not_taken_in_block_0",
             nested_function_recursion_not_taken_in_block_0, F32, ct.TileRecursionError,
             NESTED_RECURSION, "return t if n == 0 else rec(t, n - 1)"),
    BadInput("direct_recursion_without_end", direct_recursion_without_end, F32,
             ct.TileRecursionError, RECURSION, "return _forever(t)"),
    BadInput("recursion_upward_on_a_constant", recursion_upward_on_a_constant, F32,
             ct.TileRecursionError, RECURSION, "return _upward(t, n + 1)"),
    BadInput("recursion_deeper_than_the_limit", recursion_deeper_than_the_limit, F32 + (5000,),
             ct.TileRecursionError, RECURSION, "else _direct(t, n - 1) + 1"),
    BadInput("mutual_recursion_run_time_depth", mutual_recursion_run_time_depth, F32,
             ct.TileRecursionError, RECURSION, "return _ping(t, n) * 2"),
    BadInput("recursive_lambda_run_time_depth", recursive_lambda_run_time_depth, F32,
             ct.TileRecursionError, RECURSION, "_factorial = lambda"),
    BadInput("recursion_with_keywords_run_time_depth", recursion_with_keywords_run_time_depth,
             F32, ct.TileRecursionError, RECURSION, "_with_keywords(t + 1, depth=depth - 1)"),
    BadInput("recursion_on_a_run_time_argument", recursion_on_a_run_time_argument, F32 + (3,),
             ct.TileRecursionError, RECURSION, "_constant_argument(t, n - unit, unit)"),
    BadInput("nested_function_recursion", nested_function_recursion, F32,
             ct.TileRecursionError, NESTED_RECURSION, "return t if n == 0 else rec(t, n - 1)"),
    BadInput("nested_function_recursion_on_a_constant", nested_function_recursion_on_a_constant,
             F32, ct.TileRecursionError, NESTED_RECURSION, "return t if n == 0 else rec(t, n - 1)"),
    BadInput("nested_lambda_recursion", nested_lambda_recursion, F32, ct.TileRecursionError,
             NESTED_RECURSION, "rec = lambda t, n"),
]

CASES = DTYPE_CASES + HINT_CASES + FLAG_CASES + SIMT_CASES + ASYNC_CASES + SCALAR_CASES


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_fails_alike(case):
    check(case, module_file(__name__))


#: the most seconds a recursion case may take (both executors): a hang fails, never waits
RECURSION_DEADLINE = 90


def _checked_in_child(case, filename, results):
    try:
        check(case, filename)
    except BaseException as error:  # (reported to the parent, which fails the test)
        results.put(f"{type(error).__name__}: {error}")
    else:
        results.put(None)


@pytest.mark.parametrize("case", [c.param() for c in RECURSION_CASES])
def test_recursion_fails_alike_and_fast(case):
    """Run in a forked child with a deadline: a compiler that hangs fails the test."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_checked_in_child,
                            args=(case, module_file(__name__), results))
    child.start()
    child.join(RECURSION_DEADLINE)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"{case.name}: no answer within {RECURSION_DEADLINE} s (a hang)")
    outcome = results.get(timeout=10)
    assert outcome is None, outcome


@ct.kernel
def _copies(x, out):
    ct.store(out, (0,), ct.load(x, (0,), (4,)))


@pytest.mark.parametrize("arch,message", [
    ("sm_100a", r"arch 'sm_100a' is an architecture-specific target, which numba_tile does not "
                r"compile; pass arch='sm_100'"),
    ("sm_120a", r"pass arch='sm_120'"),
    ("sm_80a", r"pass arch='sm_80'"),
    ("sm_89a", r"pass arch='sm_89'"),
    ("sm_100f", r"is not a GPU architecture numba_tile compiles for"),
    ("sm_91", r"is not a GPU architecture numba_tile compiles for"),
    ("SM_90", r"is not a GPU architecture numba_tile compiles for"),
    ("compute_90", r"is not a GPU architecture numba_tile compiles for"),
    (90, r"is not a GPU architecture numba_tile compiles for"),
    (None, r"is not a GPU architecture numba_tile compiles for"),
])
def test_an_architecture_numba_tile_does_not_compile_is_refused(arch, message):
    with pytest.raises(ValueError, match=message):
        ct.compile(_copies, F32, arch=arch)


def test_sm_90a_is_sm_90():
    compiled = ct.compile(_copies, F32, arch="sm_90a")
    assert ".target sm_90a" in compiled.ptx


@pytest.mark.parametrize("options,message", [
    (dict(num_worker_warps=4.0), "num_worker_warps must be a power of two in 1..32, got 4.0"),
    (dict(num_worker_warps=True), "num_worker_warps must be a power of two in 1..32, got True"),
    (dict(num_ctas=2.0), "num_ctas must be a power of two in 1..16, got 2.0"),
    (dict(num_ctas=3), "num_ctas must be a power of two in 1..16, got 3"),
    (dict(occupancy=True), r"occupancy must be an int in 1..32, got True"),
    (dict(occupancy=33), r"occupancy must be an int in 1..32, got 33"),
    (dict(opt_level="3"), r"opt_level must be an int in 0..3, got '3'"),
    (dict(num_warps=3), r"num_warps must be a power of two in 1..32, got 3"),
    (dict(num_stages=0), r"num_stages must be an int in 1..8, got 0"),
    (dict(warp_specialize=1), r"warp_specialize must be True, False or None, got 1"),
    (dict(num_ctas=ct.ByTarget(sm_90=3)), r"num_ctas must be a power of two in 1..16, got 3"),
])
def test_a_bad_kernel_option_is_a_value_error(options, message):
    with pytest.raises(ValueError, match=message):
        ct.kernel(**options)


@pytest.mark.parametrize("keys,message", [
    (dict(sm_100a=1), r"ByTarget keys look like 'sm_90': arch 'sm_100a' is an "
                      r"architecture-specific target"),
    (dict(sm_91=1), r"ByTarget keys look like 'sm_90': arch 'sm_91' is not a GPU"),
    (dict(foo=1), r"ByTarget keys look like 'sm_90'"),
    (dict(sm_90=1, sm_90a=2), r"ByTarget has two values for sm_90"),
])
def test_a_target_no_compile_chooses_is_refused(keys, message):
    with pytest.raises(ValueError, match=message):
        ct.ByTarget(**keys)


def test_sm_90a_and_sm_90_choose_the_same_value():
    assert ct.ByTarget(sm_90a=8, default=4).resolve("sm_90") == 8
    assert ct.ByTarget(sm_90=8, default=4).resolve("sm_90a") == 8


@pytest.mark.parametrize("dtype", [ct.float16, ct.float32, None, "int8"])
def test_a_scalar_annotation_is_of_int32_or_int64(dtype):
    with pytest.raises(ValueError, match="`dtype` must be int32 or int64"):
        ct.ScalarAnnotation(dtype=dtype)


def _halves(t, n):
    if n > 1:
        return _halves(t + t, n // 2)
    return t


@ct.kernel
def recursion_ending_on_a_constant(x, out, N: ct.Constant[int]):
    t = ct.load(x, (0,), (4,))
    if ct.bid(0) == 0:  # (a run-time branch around it: the recursion still ends)
        t = _halves(t, N)
    ct.store(out, (0,), t)


def test_recursion_ending_on_constants_still_runs_and_compiles():
    x, out = F32
    ct.compile(recursion_ending_on_a_constant, (x, out, 8), arch="sm_90")
    with ct.interpret():
        ct.launch(0, (1,), recursion_ending_on_a_constant, (x, out, 8))
    np.testing.assert_allclose(out, x * 8)
