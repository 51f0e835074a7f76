"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_tiles.py: the row and column tiles kernels
(emit/tiles.py) and the rows kernel's vector path over rows not a multiple of block x lanes,
executed by numba's simulator on small inputs, against NumPy (sim_cases.main runs them)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_cases import _misaligned, f16, f32, main, rng  # noqa: E402

ROW_TILES = {"ROWS_PER_SM": 0}       # short rows as row tiles however few (the simulator's sizes)


def softmax(axis):
    def f(x):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    return f


def layernorm(axis):
    def f(x, r):
        y = x + r
        d = y - y.mean(axis, keepdims=True)
        return d / np.sqrt((d * d).mean(axis, keepdims=True) + 1e-5)
    return f


def logsumexp(axis):
    def f(x):
        m = x.max(axis=axis, keepdims=True)
        return np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return f


def specials(rows, cols, dtype=np.float32):
    """Columns a softmax along axis 0 meets at its edges: all -inf (NumPy: NaN), -inf before
    and after finite values, +inf and NaN (NaN), the rest random."""
    x = rng.standard_normal((rows, cols)).astype(dtype)
    x[:, 0] = -np.inf
    x[:rows // 2, 1] = -np.inf
    x[rows - 3:, 2] = -np.inf
    x[5, 3] = np.inf
    x[7, 4] = np.nan
    return x


CASES = [
    # softmax's denominator beside its max in one pass (ir/online.py: expsum): column tiles,
    # two-stage columns (split programs), two-stage rows and split over rows past max_row; the
    # edges: -inf columns and leading -inf, +inf, NaN
    ("online_column_tiles_specials", softmax(0), (specials(100, 7),),
     {"strategy": "column tiles, 8x4 threads, 1 passes"}),
    ("online_two_stage_columns_specials", logsumexp(0), (specials(300, 6),),
     {"strategy": "two-stage columns", "COLUMN_PROGRAM_BYTES": 1}),
    ("online_two_stage_columns_float64", softmax(0), (specials(260, 5, np.float64),),
     {"strategy": "two-stage columns", "COLUMN_PROGRAM_BYTES": 1}),
    ("online_long_rows", logsumexp(-1), (specials(40000, 5).T.copy(),),
     {"strategy": "rows (re-read)"}),
    ("online_long_rows_two_stage", logsumexp(-1), (f32(2, 40000),), {"strategy": "two-stage rows"}),
    ("online_long_row_split", logsumexp(-1), (f32(1, 40000),), {"strategy": "split"}),
    # column tiles: whole-column programs, ragged tiles (columns not a multiple of the width),
    # middle axes, several reduced axes, arg-reductions beside the others, float16
    ("column_tiles_softmax", softmax(0), (f32(100, 37),), {"strategy": "column tiles, 16x2"}),
    ("column_tiles_layernorm", layernorm(0), (f32(70, 20), f32(70, 20)),
     {"strategy": "column tiles"}),
    ("column_tiles_middle_axis", softmax(1), (f32(3, 90, 6),), {"strategy": "column tiles"}),
    ("online_middle_axis", logsumexp(1), (f32(3, 90, 6),), {"strategy": "two-stage columns"}),
    ("column_tiles_two_axes", lambda x: x / np.abs(x).sum((0, 1)), (f32(6, 11, 9),),
     {"strategy": "column tiles"}),
    ("column_tiles_arg", lambda x: (x - x.max(0), x.argmax(0), x.argmin(0)), (f32(65, 5),),
     {"strategy": "column tiles"}),
    ("column_tiles_narrow", lambda x: x - x.mean(0), (f32(40, 3),),
     {"strategy": "column tiles, 4x8", "COLUMN_TILE_WIDTH": 4}),
    ("column_tiles_half", softmax(0), (f16(64, 10),), {"strategy": "column tiles"}),
    ("column_tiles_transposed", lambda x: softmax(0)(x.T), (f32(12, 80),),
     {"strategy": "column tiles"}),
    ("column_tiles_several_tiles_a_block", softmax(0), (f32(30, 70),),
     {"strategy": "column tiles", "ROW_GRID": 2, "calls": 2}),
    # whole-column programs past Tuning.column_program_bytes (1 byte here: every one): a
    # reduction kernel a level (the columns cut across blocks), then one pointwise pass
    ("column_program_split_softmax", softmax(0), (f32(300, 7),),
     {"strategy": "two-stage columns", "COLUMN_PROGRAM_BYTES": 1}),
    ("column_program_split_layernorm", layernorm(0), (f32(260, 5), f32(260, 5)),
     {"strategy": "two-stage columns", "COLUMN_PROGRAM_BYTES": 1}),
    ("column_program_split_middle_axis", logsumexp(1), (f32(3, 200, 6),),
     {"strategy": "two-stage columns", "COLUMN_PROGRAM_BYTES": 1}),
    ("column_program_split_half", softmax(0), (f16(300, 9),),
     {"strategy": "two-stage columns", "COLUMN_PROGRAM_BYTES": 1}),
    # row tiles: short rows, a warp or less a row, ragged, dependent passes, arg-reductions
    ("row_tiles_sum", lambda x: x.sum(-1), (f32(9, 37),),
     {"strategy": "row tiles, 4x8", **ROW_TILES}),
    ("row_tiles_softmax", softmax(-1), (f32(7, 200),),
     {"strategy": "row tiles, 1x32", **ROW_TILES}),
    ("row_tiles_arg", lambda x: (x.argmax(-1), x.min(-1), x.argmin(-1)), (f32(5, 64),),
     {"strategy": "row tiles", **ROW_TILES}),
    ("row_tiles_two_axes", lambda x: np.exp(x).sum((1, 2)), (f32(3, 4, 33),),
     {"strategy": "row tiles", **ROW_TILES}),
    ("row_tiles_half", softmax(-1), (f16(6, 50),), {"strategy": "row tiles", **ROW_TILES}),
    ("row_tiles_transposed", lambda x: x.T.sum(-1), (f32(40, 6),),
     {"strategy": "row tiles", **ROW_TILES}),
    ("row_tiles_negative_stride", lambda x: x[::-1, ::-2].max(-1), (f32(5, 90),),
     {"strategy": "row tiles", **ROW_TILES}),
    ("row_tiles_several_tiles_a_block", layernorm(-1), (f32(9, 40), f32(9, 40)),
     {"strategy": "row tiles", "ROW_GRID": 2, **ROW_TILES}),
    # row tiles of 8 elements a lane (Tuning.row_tile_items): rows of 64 (8 lanes a row), 100
    # (16 lanes, the last ones' elements past the row's end), 16 (2 lanes), arg-reductions
    # beside a max, float16, float64 with a row vector broadcast
    ("row_tiles_eight_a_lane", lambda x: np.exp(x).sum(-1), (f32(9, 64),),
     {"strategy": "row tiles, 4x8", **ROW_TILES}),
    ("row_tiles_eight_ragged", softmax(-1), (f32(6, 100),),
     {"strategy": "row tiles, 2x16", **ROW_TILES}),
    ("row_tiles_two_lanes", lambda x: (x.argmax(-1), x.max(-1), x.argmin(-1)),
     (np.round(f32(40, 16) * 2),), {"strategy": "row tiles, 16x2", **ROW_TILES}),
    ("row_tiles_eight_half", lambda x: x.sum(-1), (f16(6, 48),),
     {"strategy": "row tiles", **ROW_TILES}),
    ("row_tiles_eight_f64", lambda x, w: (x * w).sum(-1),
     (f32(5, 36).astype(np.float64), f32(36).astype(np.float64)),
     {"strategy": "row tiles", **ROW_TILES}),
    # a short reduction feeding another, written out (ir/unroll.py): k-means' assignment (a
    # block a point: some 30 points take the kernel that 300 take)
    ("unrolled_kmeans", lambda x, c: (((x[:, None] - c[None]) ** 2).sum(-1).argmin(-1),
                                      ((x[:, None] - c[None]) ** 2).sum(-1).min(-1)),
     (f32(33, 5), f32(7, 5)), {"strategy": "rows"}),
    ("unrolled_distances_max", lambda x, c: ((x[:, None] - c[None]) ** 2).sum(-1).max(-1),
     (f32(31, 3), f32(6, 3)), {"strategy": "rows"}),
    # rows kernel: vectors over rows a multiple of the lanes, not of block x lanes
    ("rows_vector_tail_softmax", softmax(-1), (f32(3, 1000),), {"strategy": "rows, 4-wide"}),
    ("rows_vector_tail_layernorm", lambda x, g, b: layernorm(-1)(x, x) * g + b,
     (f32(5, 1000), f32(1000), f32(1000)), {"strategy": "rows, 4-wide"}),
    ("rows_vector_tail_half", softmax(-1), (f16(4, 1000),), {"strategy": "rows, 8-wide"}),
    ("rows_vector_tail_misaligned", softmax(-1), (_misaligned(3, 1000),), {"strategy": "rows"}),
    ("rows_vector_tail_int", lambda x: x.sum(-1) + x.max(-1),
     (rng.integers(-9, 9, (4, 100)).astype(np.int32),), {"strategy": "rows"}),
    # a thread's vectors combined lane by lane across them, an arg-reduction's item by item (its
    # ties: the first position), in one kernel: rows of small integers, ties in every row
    ("rows_vector_arg_ties", lambda x: (x.argmax(-1), x.max(-1), x.sum(-1), x.argmin(-1)),
     (rng.integers(-2, 3, (3, 1000)).astype(np.float32),), {"strategy": "rows, 4-wide"}),
]


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    sys.exit(main(*sys.argv[1:3], cases=CASES))
