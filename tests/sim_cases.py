"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_simulator.py: the CUDA backend's kernels for every
group kind and strategy, executed by numba's simulator on small NumPy inputs, against NumPy."""
import contextlib
import math
import os
import sys

import numpy as np

import autofuse
from autofuse.backends.cuda import simulating
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from programs import layernorm, softmax  # noqa: E402
from simulated import in_shard  # noqa: E402

rng = np.random.default_rng(3)
# The tiled product kernel's cases keep their small products tiled (the planner would make
# reductions of them: products_cases.py runs those).
TILED = {"PRODUCTS": ProductLimits(small_side=0, small_k=0, batch_side=0)}
# the general product kernel (emit/matmul.py): not the compact one (and shapes the float32
# tiles kernel refuses)
GENERAL = {**TILED, "GEMM": False}


def f32(*shape):
    return (rng.standard_normal(shape) + 0.1).astype(np.float32)


def f16(*shape):
    return f32(*shape).astype(np.float16)


def _half_chain(x, w):
    y = (x * 300) * (x * 300) / 1000
    return y, (x @ w) * 0.5, y.sum(1) / 64, (x.astype(np.float32) * 3).astype(np.float16) + 1


def _half_chain_in_float32(x, w):
    """_half_chain with its float16 values in float32, rounded where stored and where cast."""
    return tuple(a.astype(np.float16) for a in _half_chain(x.astype(np.float32), w.astype(np.float32)))


def _assign_rows(base, small, tail):
    out = base * 2
    out[1:] = small + 1          # small is read at row i - 1, only where i >= 1
    out[:-1, :8] = tail[1:]      # tail at row i + 1, only where i < rows - 1
    return out


def _stencil(u):
    v = u.copy()
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return v


def _nested(u):
    v = u * 2
    v[2:-3, 5:40] = u[2:-3, 6:41] - 1
    w = v + 1
    w[:, 3:7] = v[:, 4:8] * u[:, 3:7]
    return w


def _nested_rows(u):
    v = u * 2
    v[2:-3, 5:40] = u[1:-4, 6:41] - u[3:-2, 5:40]
    w = v + 1
    w[4:-1, 3:7] = v[3:-2, 4:8] * u[5:, 3:7]
    return w


def _scale_rows_in_place(x):
    x[...] = x / np.abs(x).sum(1, keepdims=True) * 2 + x.mean(1, keepdims=True)
    return x


def _logistic_terms(z, y):
    """A logistic loss over 200 values and its gradient: arithmetic enough (an exp, two logs and
    divisions a value) that the sum splits over blocks an element a thread, dz stored as it goes."""
    p = 1 / (1 + np.exp(-z))
    dz = (p - y) / (p * (1 - p) + 1e-3)
    return -(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7)).sum(), dz


def _softmax_rows(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _misaligned(*shape, dtype=np.float32):
    """A C-contiguous array whose data starts one element past a 16-byte boundary."""
    size, itemsize = int(np.prod(shape)), np.dtype(dtype).itemsize
    lanes = 16 // itemsize
    buffer = np.empty(size + lanes, dtype)
    skip = (-buffer.__array_interface__["data"][0] // itemsize) % lanes + 1
    out = buffer[skip:skip + size].reshape(shape)
    out[...] = f32(*shape)
    assert out.__array_interface__["data"][0] % 16 == itemsize
    return out


CASES = [
    ("elementwise", lambda x, y, z, w: np.maximum(x * y + z, 0) * w, (f32(8, 4),) * 4),
    ("broadcast", lambda x, b: np.tanh(x + b) * 0.5, (f32(6, 5), f32(5))),
    ("transpose", lambda x, y: (x.T + y) * 2, (f32(3, 5), f32(5, 3))),
    ("transpose_tiles", lambda x, y: (x.T + y) * 2 + x.T, (f32(40, 70), f32(70, 40))),
    ("transpose_exact_tiles", lambda x, y: x.T - y, (f32(64, 32), f32(32, 64))),
    # full tiles take vectors: a row bias (a vector too) and a column one (elements) beside them
    ("transpose_vector_tiles", lambda x, b, c: x.T * b - c[:, None] + x.T,
     (f32(64, 128), f32(64), f32(128))),
    ("transpose_vector_tiles_256_threads", lambda x, y: (x.T + y) * 2,
     (f32(128, 64), f32(64, 128)), {"TILE_THREADS": 256}),
    ("stencil", lambda u: u[2:] - 2 * u[1:-1] + u[:-2], (f32(20),)),
    ("setslice", lambda u: u.copy().__setitem__((slice(1, -1),), 0) or u, (f32(5),)),
    ("concatenate", lambda a, b: np.concatenate([a, b * 2], axis=1), (f32(3, 2), f32(3, 4))),
    ("softmax_rows", softmax, (f32(4, 40),)),
    ("softmax_exact_rows", softmax, (f32(3, 64),)),
    ("layernorm_rows", layernorm, (f32(3, 70), f32(70), f32(70))),
    ("small_full_sum", lambda x: (x * x).sum(), (f32(100),)),
    ("split_sum_argmax", lambda x: ((x * x).sum(), x.argmax(), x.max(), x.argmin()), (f32(1000),)),
    ("column_sums", lambda x: x.sum(0), (f32(6, 5),)),
    # fmod (libdevice's for floats, Python's % moved by a divisor for ints) and compositions
    ("fmod", lambda x, i, j: (np.fmod(x * 7, 1.5), np.fmod(i, j)),
     (f32(4, 9), np.arange(-18, 18).reshape(4, 9), np.array([3, -3, 0, 7, 5, 1, -1, 2, 4]))),
    ("nan_reductions", lambda x: (np.nanmax(x, 1), np.nanmean(x, 0), np.logaddexp(x, x[0])),
     (np.where(f32(5, 8) > 1.2, np.float32(np.nan), f32(5, 8)),)),
    ("arg_rows", lambda x: (x.argmax(1), x.argmin(1), x.max(1)), (f32(3, 40),)),
    ("any_all", lambda x: ((x > 0).any(1), (x > -2).all(1)), (f32(3, 8),)),
    ("mean_var", lambda x: (x.mean(0), x.var(0)), (f32(5, 4),)),
    ("matmul_epilogue", lambda x, w, b: np.maximum(x @ w + b, 0), (f32(5, 7), f32(7, 6), f32(6)), TILED),
    ("matmul_transposed", lambda x, w: x @ w.T, (f32(5, 7), f32(6, 7)), TILED),
    ("batched_matmul", lambda a, b: a @ b, (f32(2, 3, 4), f32(2, 4, 5)), TILED),
    ("attention", lambda q, k, v: softmax(q @ k.swapaxes(-1, -2) / math.sqrt(4)) @ v,
     (f32(2, 6, 4), f32(2, 6, 4), f32(2, 6, 4)), TILED),
    ("python_scalar", lambda x, s: x * s + 1, (f32(4, 3), 2.5)),
    ("ints", lambda a, b: (a // b, a % b, a ** 2, -a, a > b),
     (rng.integers(-9, 9, (3, 4)).astype(np.int32), rng.integers(1, 5, (3, 4)).astype(np.int32))),
    ("float64", lambda x: np.sqrt(np.abs(x)).sum(1), (rng.standard_normal((3, 5)),)),
    ("zero_d", lambda x: x.sum() + x[0, 0], (f32(3, 3),)),
    # several elements a thread per grid-stride step, then the remainder loop; 32-bit indices
    # checked for overflow by the simulator's `ix`
    ("ilp_two_outputs", lambda x, b: (np.tanh(x + b), (x * b - 1).T), (f32(7, 61), f32(61))),
    ("ilp_reshape", lambda x: (x.reshape(13, 3, 20) * 2).transpose(1, 0, 2)[:, ::-2], (f32(39, 20),)),
    # 16-byte vector loads and stores (rows a multiple of the lanes, at least 4 x 32 elements),
    # and the element-by-element path a misaligned base address takes
    ("vector_bias", lambda x, b: np.tanh(x + b) * 0.5, (f32(8, 64), f32(64))),
    ("vector_misaligned", lambda x, b: np.tanh(x + b) * 0.5, (_misaligned(8, 64), f32(64))),
    ("vector_column_and_strided", lambda x, c, y: x * c + y, (f32(8, 64), f32(8, 1),
                                                            f32(8, 68)[:, :64])),
    ("vector_shifted_slice", lambda x: x[:, 1:65] - x[:, :64], (f32(8, 68),)),
    ("vector_float64", lambda x, y: np.sqrt(np.abs(x)) + y, (rng.standard_normal((4, 64)),
                                                             rng.standard_normal(64))),
    ("vector_widening", lambda x: x.astype(np.float64) * 3, (f32(4, 64),)),
    ("vector_bool_out", lambda x, y: (x > y) | (x < -1), (f32(8, 64), f32(8, 64))),
    # two vectors a thread a step (VECTOR_ILP), each with index names of its own, then the
    # remainder a vector at a time: a row bias and a broadcast column beside them, float16
    ("vector_ilp_chain", lambda x, y, z, w: np.maximum(x * y + z, 0) * w, (f32(9, 64),) * 4,
     {"VECTOR_ILP": 2}),
    ("vector_ilp_bias_column", lambda x, b, c, y: x * b + c - y,
     (f32(9, 64), f32(64), f32(9, 1), f32(9, 68)[:, :64]), {"VECTOR_ILP": 2}),
    ("vector_ilp_half", lambda x, b: np.tanh(x + b) * 0.5, (f16(9, 64), f16(64)), {"VECTOR_ILP": 2}),
    # ... placed a block apart inside the block's own stretch (VECTOR_SPREAD "block"): a ragged
    # last stretch, and more vectors a step than some blocks have left
    # 8-byte vectors of float32 (VECTOR_BYTES), plain and with coherent hinted loads; 16-byte
    # ones with no limit on a step's bytes (VECTOR_STEP_BYTES 0)
    ("vector_8_bytes", lambda x, b, c: np.maximum(x * b + c, 0), (f32(9, 64), f32(64), f32(9, 1)),
     {"VECTOR_BYTES": 8}),
    ("vector_16_bytes_many_inputs", lambda x, y, z, w: np.maximum(x * y + z, 0) * w,
     (f32(9, 64),) * 4, {"VECTOR_STEP_BYTES": 0}),
    ("vector_8_bytes_two_inputs", lambda x, y: x * y - 1, (f32(9, 64), f32(9, 64)), {"VECTOR_BYTES": 8}),
    ("vector_block_spread_chain", lambda x, y, z, w: np.maximum(x * y + z, 0) * w,
     (f32(9, 64),) * 4, {"VECTOR_ILP": 2, "VECTOR_SPREAD": "block"}),
    ("vector_block_spread_bias_column", lambda x, b, c, y: x * b + c - y,
     (f32(11, 64), f32(64), f32(11, 1), f32(11, 68)[:, :64]),
     {"VECTOR_ILP": 3, "VECTOR_SPREAD": "block"}),
    # slice assignments under vectors: interior vectors branch-free, edge vectors lane by lane
    ("vector_stencil", lambda u: _stencil(u), (f32(6, 128),)),    # too few rows for strips
    ("vector_nested_setslice", lambda u: _nested(u), (f32(12, 48),)),
    # a vector load of an input read only inside an assigned region stays inside it (the wide
    # fuzzer found it hoisted above the branch: row -1 read, an illegal address on the GPU)
    ("vector_region_only_reads", _assign_rows, (f32(6, 64), f32(5, 64), f32(6, 8))),
    # row strips (cuda_strip.py): a strip's rows loaded once each; ragged last strip, edge strips
    # and columns, nested regions, views, a misaligned base (element by element), other dtypes
    ("strip_stencil", lambda u: _stencil(u), (f32(37, 64),)),
    ("strip_nested_setslice", lambda u: _nested_rows(u), (f32(41, 48),)),
    ("strip_shift_and_bias", lambda u, b: (u[:-2] - 2 * u[1:-1] + u[2:]) * b + u[1:-1].T.T,
     (f32(40, 64), f32(64))),
    ("strip_wide_columns", lambda u: u[3:, 4:] * u[:-3, :-4] - u[1:-2, 2:-2], (f32(35, 68),)),
    ("strip_view_and_reversed", lambda u, w: _stencil(u) + w[::-1],
     (f32(40, 72)[:, 4:68], f32(40, 64))),
    ("strip_misaligned", lambda u: _stencil(u), (_misaligned(24, 64),)),
    ("transpose_tiles_misaligned", lambda x, y: x.T - y, (_misaligned(64, 64), f32(64, 64))),
    ("strip_column_offset_view", lambda u: _stencil(u), (f32(24, 65)[:, 1:],)),
    ("strip_float64_bool", lambda u: (u[2:] - u[:-2], u[2:] > u[:-2]),
     (rng.standard_normal((30, 32)),)),
    ("strip_int8", lambda u: u[1:] * 3 - u[:-1], (rng.integers(-9, 9, (33, 64)).astype(np.int8),)),
    # rows kernels whose items are 16-byte vectors: held inputs and row outputs a vector at a
    # time, other inputs read as vectors; ties, strided rows, a misaligned base, other dtypes
    ("rows_vector_layernorm", layernorm, (f32(3, 128), f32(128), f32(128))),
    ("rows_vector_softmax", softmax, (f32(5, 256),)),
    # division by an unchanging divisor through its reciprocal (cuda_divide), values outside its
    # ranges included; the reference is NumPy's division, so any difference shows
    ("reciprocal_rows_softmax", softmax, (f32(5, 256),), {"INVARIANT_DIVIDE": 1}),
    ("reciprocal_rows_layernorm", layernorm, (f32(3, 128), f32(128), f32(128)),
     {"INVARIANT_DIVIDE": 1}),
    ("reciprocal_scalar_and_constant", lambda x, s: (x / s, x / 3.0, x / np.float32(2.0 ** 30)),
     (np.array([1.5, -0.0, 0.0, np.inf, np.nan, 1e-40, 2.0 ** 110, -3.25] * 16, np.float32),
      np.float32(0.7)), {"INVARIANT_DIVIDE": 1}),
    ("rows_vector_ties_keepdims", lambda x: (x.argmax(1), x - x.max(1, keepdims=True),
                                             x.sum(1, keepdims=True)),
     (rng.integers(-3, 4, (4, 128)).astype(np.float32),)),
    ("rows_vector_misaligned", softmax, (_misaligned(3, 128),)),
    # a whole-array sum beside a row variance: simplified to a sum of the row sums the mean
    # reads, a reduction whose id comes after its reader's (Group.reductions' order)
    ("rows_reduction_read_by_a_later_id", lambda x: (x.sum(), x.var(axis=1)), (f32(5, 128),)),
    # the argument updated in place: a rows kernel reads its held row again (ROW_RELOAD) while
    # writing the same buffer
    ("rows_vector_in_place", _scale_rows_in_place, (f32(4, 256),),
     {"reference": lambda x: x / np.abs(x).sum(1, keepdims=True) * 2 + x.mean(1, keepdims=True)}),
    ("rows_vector_strided_bias", lambda x, b: softmax(x) * b, (f32(4, 132)[:, :128], f32(128))),
    ("rows_vector_float64_bool", lambda x: (x > x.mean(1, keepdims=True), x / x.sum(1, keepdims=True)),
     (rng.standard_normal((3, 64)),)),
    ("rows_vector_int8_3d", lambda x: x - x.max(2, keepdims=True),
     (rng.integers(-9, 9, (2, 3, 256)).astype(np.int8),)),
    # split reductions a vector at a time (REDUCE_VECTORS per step, then single vectors): ties
    # keep the first position, broadcast partners read element by element, a misaligned base
    ("split_vector_ties", lambda x: (x.argmax(), x.argmin(), x.sum()),
     (rng.integers(-3, 4, 4000).astype(np.float32),)),
    # each block a contiguous range of its own (REDUCE_SPREAD "chunk"), the last one shorter;
    # with the halving tails; a grid-stride apart, with plain loads (the default before)
    ("split_vector_chunks", lambda x: (x.argmax(), x.argmin(), x.sum()),
     (rng.integers(-3, 4, 4000).astype(np.float32),), {"REDUCE_SPREAD": "chunk"}),
    ("split_vector_chunks_broadcast", lambda x, c: ((x * c).sum(), x.max()),
     (f32(40, 64), f32(40, 1)), {"REDUCE_SPREAD": "chunk"}),
    ("split_vector_hinted_loads", lambda x, c: ((x * c).sum(), x.argmin()), (f32(40, 64), f32(40, 1)),
     {"REDUCE_LOADS": ".L1::evict_first.L2::cache_hint|evict_first"}),
    ("split_vector_grid_spread", lambda x: (x.argmax(), x.sum()),
     (rng.integers(-3, 4, 4100).astype(np.float32),), {"REDUCE_SPREAD": "grid", "REDUCE_LOADS": ""}),
    ("split_vector_broadcast", lambda x, c: (x * c).sum(), (f32(40, 64), f32(40, 1))),
    ("split_vector_misaligned", lambda x: (x * x).sum(), (_misaligned(40, 64),)),
    ("split_vector_float64", lambda x: ((x > 2).any(), x.max(), x.mean()),
     (rng.standard_normal(2000),)),
    ("split_vector_int8", lambda x: (x.argmax(), x.sum()), (rng.integers(-9, 9, 4096).astype(np.int8),)),
    # split reductions that also store an output of the reduced space as they go (`y, y.sum()`):
    # a vector at a time, with a transposed partner read element by element, of a narrower or
    # bool type, from a misaligned base or a length no vector divides (element by element),
    # blocks over chunks of their own
    ("split_row_outputs", lambda x: (np.exp(x), np.exp(x).sum(), x.argmax()), (f32(40, 64),)),
    ("split_arithmetic", _logistic_terms, (f32(200), np.abs(f32(200)) % 1), {"strategy": "split"}),
    ("split_row_outputs_transposed", lambda x, w: ((y := np.tanh(x) * 0.5 + w.T * 0.25),
                                                   (y * y).sum()), (f32(40, 64), f32(64, 40))),
    ("split_row_outputs_narrow", lambda x: (x.astype(np.float16), x > 0, (x * x).sum()),
     (f32(4096),)),
    ("split_row_outputs_misaligned", lambda x: (x * 2, x.sum()), (_misaligned(40, 64),)),
    ("split_row_outputs_ragged", lambda x: (x * 2 + 1, x.max()), (f32(4001),)),
    ("split_row_outputs_chunks", lambda x: (x - 1, x.min(), x.sum()), (f32(40, 64),),
     {"REDUCE_SPREAD": "chunk"}),
    # two-stage reductions (cuda_two_stage.py; the simulator's sizes: 32 threads, 4 blocks):
    # few outputs over a long extent, cut into chunks across blocks whose partials the tile's last
    # block combines. Columns layout: 2 outputs a block of 2 x 16 threads, ties and NaN in arg-
    # reductions across chunks, outputs fewer than a block's (3 of 4), 32 outputs a block (one
    # thread an output), two tiles, several leading axes, a kept last axis behind a reduced middle
    # one, one chunk (no partials), keepdims, a transposed (strided) and a reversed input, row
    # outputs stored as the loop goes, float16, int8 and bool. Rows layout: a block per chunk of a
    # row, arg-reductions, mixed axes, a row output. Each twice: the counters reset.
    ("two_stage_columns_narrow", lambda x: (x.sum(0), x.mean(0)), (f32(300, 2),),
     {"strategy": "two-stage columns, 2x16 threads, 1 tiles x 4 chunks", "calls": 2}),
    ("two_stage_columns_ties", lambda x: (x.argmax(0), x.argmin(0), x.max(0)),
     (rng.integers(-3, 4, (200, 3)).astype(np.float32),), {"strategy": "two-stage columns", "calls": 2}),
    ("two_stage_columns_nan", lambda x: (x.argmax(0), x.min(0), x.sum(0)),
     (np.where(rng.random((200, 3)) < 0.01, np.nan, f32(200, 3)).astype(np.float32),),
     {"strategy": "two-stage columns"}),
    ("two_stage_columns_two_tiles", lambda x: (x * x).sum(0), (f32(64, 40),),
     {"strategy": "two-stage columns, 32x1 threads, 2 tiles x 4 chunks", "calls": 2,
      "SIM_BLOCKS": 8}),
    ("two_stage_columns_leading_axes", lambda x: x.sum(axis=(0, 1)), (f32(6, 10, 5),),
     {"strategy": "two-stage columns, 8x4 threads"}),
    ("two_stage_columns_middle_axis", lambda x: (x.sum(1), x.max(1, keepdims=True)), (f32(3, 50, 4),),
     {"strategy": "two-stage columns, 16x2 threads"}),
    ("two_stage_columns_one_chunk", lambda x: (x.sum(0), x.argmin(0)), (f32(20, 3),),
     {"strategy": "two-stage columns, 4x8 threads, 1 tiles x 1 chunks"}),
    ("two_stage_columns_strided", lambda x: x.T.sum(0), (f32(2, 300),), {"strategy": "two-stage columns"}),
    ("two_stage_columns_reversed", lambda x: x[::-1, ::-1].sum(0) * 2, (f32(300, 2),),
     {"strategy": "two-stage columns"}),
    ("two_stage_columns_row_outputs", lambda x: (np.exp(x), np.exp(x).sum(0), x > 0), (f32(200, 3),),
     {"strategy": "two-stage columns", "calls": 2}),
    ("two_stage_columns_half", lambda x: (x.sum(0), x.max(0)), (f16(300, 2),),
     {"strategy": "two-stage columns",
      "reference": lambda x: (x.astype(np.float32).sum(0).astype(np.float16), x.max(0))}),
    ("two_stage_columns_int8_bool", lambda x: (x.sum(0), (x > 7).any(0), (x > -9).all(0)),
     (rng.integers(-9, 9, (300, 2)).astype(np.int8),), {"strategy": "two-stage columns"}),
    ("two_stage_rows", lambda x: (x.sum(1), x.argmax(1), x.argmin(1)),
     (rng.integers(-3, 4, (2, 300)).astype(np.float32),),
     {"strategy": "two-stage rows, 1x32 threads, 2 tiles x 2 chunks", "calls": 2}),
    ("two_stage_rows_mixed_axes", lambda x: x.sum(axis=(0, 2)), (f32(3, 2, 100),),
     {"strategy": "two-stage rows"}),
    ("two_stage_rows_row_output", lambda x: (x * 2, x.max(1)), (f32(2, 300),),
     {"strategy": "two-stage rows", "calls": 2}),
    # the float32 matmul with 16-byte loads, double-buffered slabs (cuda_matmul.py): ragged
    # M, N and K, a broadcast batch, two outputs, a misaligned operand (element-by-element path)
    ("matmul_vector_ragged", lambda x, w, b: np.maximum(x @ w + b, 0),
     (f32(130, 36), f32(36, 132), f32(132))),
    ("matmul_vector_batched", lambda a, w: (a @ w, np.tanh(a @ w) * 2),
     (f32(2, 40, 16), f32(16, 24)), TILED),
    ("matmul_vector_misaligned", lambda x, w: x @ w - 1, (_misaligned(24, 16), f32(16, 20)), TILED),
    ("matmul_vector_transposed_b", lambda x, w, b: x @ w.T + b, (f32(130, 36), f32(132, 36), f32(132))),
    ("matmul_vector_transposed_a", lambda x, w: x.T @ w, (f32(36, 132), f32(36, 64))),
    ("matmul_vector_transposed_both", lambda x, w: np.tanh(x.T @ w.T), (f32(20, 68), f32(40, 20))),
    ("matmul_vector_attention_scores", lambda q, k: q @ k.swapaxes(-1, -2) * 0.25,
     (f32(2, 40, 16), f32(2, 52, 16)), TILED),
    # rectangular tiles (cuda_matmul.NARROW, 64 by default): WIDE x 64 where the result has at
    # most 64 columns (attention's P @ V), 64 x WIDE where it has at most 64 rows; ragged M, N, K;
    # WIDE 128 and 256 (the default)
    ("matmul_vector_narrow_n_batched", lambda p, v: p @ v * 0.5, (f32(2, 260, 20), f32(2, 20, 64)),
     {"TILES_NARROW": 64}),
    ("matmul_vector_narrow_n_ragged", lambda x, w, b: np.maximum(x @ w + b, 0),
     (f32(70, 12), f32(12, 36), f32(36)), {"TILES_NARROW": 64, **TILED}),
    ("matmul_vector_narrow_m", lambda x, w: np.tanh(x @ w) + 1, (f32(40, 12), f32(12, 260)),
     {"TILES_NARROW": 64, **TILED}),
    ("matmul_vector_narrow_wide128", lambda p, v: p @ v - 1, (f32(2, 260, 20), f32(2, 20, 64)),
     {"TILES_NARROW": 64, "TILES_WIDE": 128}),
    ("matmul_vector_square_tiles", lambda p, v: p @ v - 1, (f32(2, 70, 20), f32(2, 20, 36)),
     {"TILES_NARROW": 0}),
    # cache-hinted accesses (off by default): the same kernels' logic with the hinted calls
    ("rows_transpose_split", lambda x, g, y: ((x - x.mean(-1, keepdims=True)) * g,
                                              (y.T + y) * 2, (x * x).sum()),
     (f32(4, 256), f32(256), f32(40, 40))),
    ("vector_int8", lambda a, b: a * b + 1, (rng.integers(-9, 9, (8, 64)).astype(np.int8),
                                             rng.integers(-9, 9, (64,)).astype(np.int8))),
    # float16: add, subtract and multiply as float16 ops (cuda_half), others in float32 and
    # rounded to float16 after each op as NumPy does; every kernel kind, 8-wide (16-byte) vectors
    # and their misaligned paths, float16 scalars by value, casts both ways, overflow to inf in
    # an intermediate, reductions accumulated in float32; rows held as halves, 32 a thread (4096
    # long: a kept exp, reciprocal division)
    ("half_vector_gelu", lambda x, b: 0.5 * (x + b) * (1 + np.tanh(0.79788456 * (x + b))),
     (f16(8, 64), f16(64))),
    ("half_vector_misaligned", lambda x, b: np.exp(x) - b, (_misaligned(8, 64, dtype=np.float16),
                                                          f16(64))),
    ("half_overflow_and_casts", lambda x, y: ((x * 300) * (x * 300) / 1000, x.astype(np.float32) * y,
                                              (y * 3).astype(np.float16), x > 0.5,
                                              np.arange(64, dtype=np.float16) * x),
     (f16(4, 64), f32(4, 64))),
    ("half_scalar_by_value", lambda x, s: x * s + np.float16(0.1), (f16(5, 7), np.float16(2.5))),
    ("half_rows_softmax", softmax, (f16(4, 256),)),
    ("half_rows_layernorm", layernorm, (f16(3, 256), f16(256), f16(256))),
    ("half_rows_wide_softmax", softmax, (f16(2, 4096),)),
    ("half_rows_wide_layernorm", layernorm, (f16(2, 4096), f16(4096), f16(4096))),
    ("half_rows_misaligned", softmax, (_misaligned(3, 256, dtype=np.float16),)),
    ("half_rows_ragged", lambda x: (x.argmax(1), x.mean(1), x / x.max(1, keepdims=True)), (f16(5, 70),)),
    # (NumPy sums float16 columns in float16, rounding each step; autofuse in float32, once)
    ("half_columns", lambda x: (x.sum(0), x.max(0), x.argmin(0)), (f16(9, 6),),
     {"reference": lambda x: (x.astype(np.float32).sum(0).astype(np.float16), x.max(0), x.argmin(0))}),
    ("half_split", lambda x: ((x * x).sum(), x.argmax(), x.min(), x.mean()), (f16(4096),)),
    ("half_matmul", lambda x, w, b: np.maximum(x @ w + b, 0), (f16(20, 36), f16(36, 24), f16(24))),
    ("half_transpose_tiles", lambda x, y: (x.T + y) * 2, (f16(40, 70), f16(70, 40))),
    ("half_transpose_vector_tiles", lambda x, y: (x.T + y) * 2, (f16(64, 128), f16(128, 64))),
    ("half_strip", lambda u: _stencil(u), (f16(37, 64),)),
    # jit(float16="float32"): intermediates, sums and matmul results stay float32 (no overflow
    # to inf on the way), only stores and explicit casts round, as torch.compile does
    ("half_float32_mode", _half_chain, (f16(4, 64), f16(64, 8)),
     {"float16": "float32", "reference": _half_chain_in_float32}),
    # rows kernels whose blocks loop over several rows (more rows than ROW_GRID blocks): the
    # shared arrays are written again after the end-of-row barrier; two dependent reductions,
    # sibling arg-reductions, vector and element-by-element rows
    ("rows_looped_layernorm", layernorm, (f32(7, 128), f32(128), f32(128)), {"ROW_GRID": 3}),
    ("rows_looped_siblings", lambda x: (x.argmax(1), x.min(1), x - x.mean(1, keepdims=True)),
     (rng.integers(-3, 4, (5, 40)).astype(np.float32),), {"ROW_GRID": 2}),
    ("rows_looped_softmax_vectors", softmax, (f32(6, 256),), {"ROW_GRID": 4}),
    ("rows_looped_misaligned", softmax, (_misaligned(5, 128),), {"ROW_GRID": 2}),
    ("rows_looped_two_held", lambda x, y: (x * y).sum(1, keepdims=True) - y, (f32(7, 96), f32(7, 96)),
     {"ROW_GRID": 3}),
    # the general product kernel (emit/matmul.py) with its accumulators in a local array, a K step
    # one intrinsic call (intrinsics/register_block.py): ragged M, N, K, batches, transposes, a
    # slice prologue (conv2d_slices), float64, the epilogue reading the array; and the scalar
    # registers it replaces (REGISTER_BLOCK off) on the same program
    ("general_block_ragged", lambda x, w, b: np.maximum(x @ w + b, 0),
     (f32(37, 21), f32(21, 19), f32(19)), {**GENERAL, "strategy": "tiled 128x128x16"}),
    ("general_block_batched_transposed", lambda a, b: np.tanh(a.swapaxes(-1, -2) @ b) * 2,
     (f32(3, 17, 9), f32(3, 17, 11)), {**GENERAL, "strategy": "tiled 128x128x16"}),
    ("general_block_slice_prologue", lambda x, k: x[:, 1:6, 2:7, :] @ k[1, 2] + 1,
     (f32(2, 8, 9, 5), f32(3, 3, 5, 4)), {**TILED, "strategy": "tiled 128x128x16"}),
    ("general_block_float64", lambda x, w: x @ w - 0.5,
     (f32(33, 20).astype(np.float64), f32(20, 18).astype(np.float64)),
     {**GENERAL, "MMA": False, "strategy": "tiled 128x128x16"}),
    ("general_block_off", lambda x, w, b: np.maximum(x @ w + b, 0),
     (f32(37, 21), f32(21, 19), f32(19)),
     {**GENERAL, "REGISTER_BLOCK": False, "strategy": "tiled 128x128x16"}),
    # ... its staging reads and stores written out rather than as loops over a thread's slots
    # (Tuning.staging_loop False): ragged M, N, K (the guards), batches and a transposed
    # operand, float64, no prefetch
    ("general_written_out_ragged", lambda x, w, b: np.maximum(x @ w + b, 0),
     (f32(37, 21), f32(21, 19), f32(19)),
     {**GENERAL, "STAGING_LOOP": False, "strategy": "tiled 128x128x16"}),
    ("general_written_out_batched_transposed", lambda a, b: np.tanh(a.swapaxes(-1, -2) @ b) * 2,
     (f32(3, 17, 9), f32(3, 17, 11)),
     {**GENERAL, "STAGING_LOOP": False, "strategy": "tiled 128x128x16"}),
    ("general_written_out_float64", lambda x, w: x @ w - 0.5,
     (f32(33, 20).astype(np.float64), f32(20, 18).astype(np.float64)),
     {**GENERAL, "MMA": False, "STAGING_LOOP": False, "PREFETCH": False,
      "strategy": "tiled 128x128x16"}),
    # ... its epilogue of more than Tuning.epilogue_loop ops written once, in a loop over the
    # accumulators staged a row of the thread's block at a time: ragged sizes and batches, reads
    # of other arrays, two outputs, float64, and a tile whose rows and columns are all ragged
    ("general_looped_epilogue", lambda x, w, r, s: np.tanh((x @ w + r) * 2 - s) + r * s,
     (f32(37, 21), f32(21, 19), f32(37, 19), f32(19)),
     {**GENERAL, "strategy": "tiled 128x128x16, 8x8 per thread, epilogue looped"}),
    ("general_looped_epilogue_batched", lambda a, b, r: (np.maximum(a @ b + r, 0) * 3 - r,
                                                         a @ b),
     (f32(2, 3, 17, 9), f32(9, 11), f32(3, 1, 11)),
     {**GENERAL, "EPILOGUE_LOOP": 2, "strategy": "tiled 128x128x16, 8x8 per thread, epilogue"}),
    ("general_looped_epilogue_float64", lambda x, w, r: np.exp(-(x @ w - r) ** 2) * r + 1,
     (f32(33, 20).astype(np.float64), f32(20, 18).astype(np.float64),
      f32(33, 18).astype(np.float64)),
     {**GENERAL, "MMA": False, "EPILOGUE_LOOP": 3,
      "strategy": "tiled 128x128x16, 8x8 per thread, epilogue looped"}),
    # short rows written out element by element in a thread's columns kernel (each element
    # loaded once for the row's max, sum and outputs), rows of 10 and of 3 x 4, an arg-reduction
    # (the first of equal values), NaN rows; ROWS_PER_SM 1 so that 300 rows take a thread each
    ("short_rows_softmax", _softmax_rows, (f32(300, 10),),
     {"ROWS_PER_SM": 1, "strategy": "columns, rows of 10 written out"}),
    ("short_rows_two_axes", lambda x: (x - x.mean(axis=(1, 2), keepdims=True)) / 3,
     (f32(300, 3, 4),), {"ROWS_PER_SM": 1, "strategy": "columns, rows of 12 written out"}),
    ("short_rows_argmax", lambda x: (np.round(x).argmax(-1), np.round(x).argmin(-1)),
     (f32(300, 7),), {"ROWS_PER_SM": 1, "strategy": "columns, rows of 7 written out"}),
    ("short_rows_nan", lambda x: (np.where(x > 1.5, np.nan, x).max(-1), x.sum(-1)),
     (f32(300, 5),), {"ROWS_PER_SM": 1, "strategy": "columns, rows of 5 written out"}),
]
# short rows staged in shared memory (emit/short_tiles.py): a block's rows of each contiguous
# full-size input copied as one stretch, full-size outputs gathered and stored as one; blocks of
# 32 rows, the last one part full; an input read with a stride (not staged), float64, an input
# broadcast along the rows (not staged), reduced outputs with and without keepdims; reductions
# without an output of the rows' shape are not staged (nothing gathered)
SHORT = {"ROWS_PER_SM": 0, "THREADS": 32}
CASES += [
    ("short_tiles_softmax", _softmax_rows, (f32(301, 10),),
     dict(SHORT, strategy="columns, rows of 10 written out, 32 a block staged")),
    ("short_tiles_norm", lambda x, g: (x - x.mean(1, keepdims=True)) /
     np.sqrt(x.var(1, keepdims=True) + 1e-5) * g, (f32(130, 12), f32(12)),
     dict(SHORT, strategy="columns, rows of 12 written out, 32 a block staged")),
    ("short_tiles_outputs", lambda x: (x.sum(1), x * 2, x.max(1, keepdims=True)), (f32(99, 5),),
     dict(SHORT, strategy="columns, rows of 5 written out, 32 a block staged")),
    ("short_tiles_reductions_only", lambda x: (x.mean(1), x.var(1)), (f32(99, 12),),
     dict(SHORT, strategy="columns, rows of 12 written out")),
    ("short_tiles_strided_f64", lambda x, y: (x * y, (x * y).sum(1) + (x - y).max(1)),
     (f32(65, 18).astype(np.float64)[:, ::2], f32(65, 9).astype(np.float64)),
     dict(SHORT, strategy="columns, rows of 9 written out, 32 a block staged")),
]


def _with_nans(*shape):
    """f32(*shape) with NaNs and ties in the first rows (selections, arg reductions)."""
    x = f32(*shape)
    x[0, :2] = np.nan
    x[1, :3] = x[1, 3]
    return x


# selections without control flow (backends/selection.py): selects, eager & and |
CASES += [
    ("selections", lambda x, y, i: (np.where(x > y, x, y * 2) + np.fmax(x, y) - np.minimum(x, 0.5),
                                    np.sign(x) + np.sign(i), np.logical_and(x > 0, i > 0) | (y < 0),
                                    np.where(i > 0, i, 2.5)),
     (_with_nans(9, 70), f32(9, 70), np.arange(-300, 330, 1).reshape(9, 70) % 7 - 3)),
    ("selections_arg_reductions", lambda x: (np.argmax(x, axis=1), np.argmin(x, axis=0),
                                             np.argmax(x), np.max(x, axis=1)),
     (_with_nans(9, 70),)),
]


def _tolerance(dtype) -> dict:
    """float16 within 2 units in the last place near 1 (kernels round after each op as NumPy
    does; a transcendental or a longer float32 sum may land one float16 apart)."""
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)


@contextlib.contextmanager
def configured(settings: dict):
    """A case's settings as jit options: generator values (upper-case names of Tuning's fields)
    as a `tuning`, and the jit options (lower-case names, less the runner's own "strategy",
    "calls", "reference") as they are."""
    changes = {key: value for key, value in settings.items() if key.isupper()}
    options = {key: value for key, value in settings.items()
               if not key.isupper() and key not in ("strategy", "calls", "reference")}
    if changes:
        options["tuning"] = Tuning().replace(**changes)
    yield options


def main(only: str = "", shard: str = "", cases=None) -> int:
    """Runs every case of `cases` (CASES by default), or those whose name contains `only`, of
    the shard "i/n" (simulated.in_shard); returns the mismatches."""
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    failures = 0
    for index, (name, fn, args, *settings) in enumerate(CASES if cases is None else cases):
        if only not in name or not in_shard(index, shard):
            continue
        # settings: generator constants (upper case), jit options (lower case) and a
        # "reference" function where NumPy's own answer is not the one expected
        settings = dict(settings[0]) if settings else {}
        reference = settings.pop("reference", fn)
        with np.errstate(over="ignore"):       # (float16 cases overflow to inf on purpose)
            expected = reference(*args)
        options = dict(settings)
        strategy, calls = options.pop("strategy", ""), options.pop("calls", 1)
        if not simulating():    # a GPU's own facts plan other launch shapes: values only there
            strategy = ""
        with configured(options) as options:
            jitted = autofuse.jit(fn, backend="cuda", **options)
            results = [jitted(*args) for _ in range(calls)]
            strategies = [k.strategy for k in jitted.lower(*args).kernels] if strategy else []
        expected = expected if isinstance(expected, tuple) else (expected,)
        ok = True
        for got in results:
            got = got if isinstance(got, tuple) else (got,)
            ok &= len(got) == len(expected) and all(
                np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
                and np.allclose(a, b, equal_nan=True, **_tolerance(np.result_type(b)))
                for a, b in zip(got, expected))
        # a case naming a strategy must run a kernel of it (the path it is there to test)
        ok &= not strategy or any(s.startswith(strategy) for s in strategies)
        print(f"{name}: {'ok' if ok else 'MISMATCH'}" +
              ("" if ok or not strategy else f" (strategies: {strategies})"), flush=True)
        failures += not ok
    return failures


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
