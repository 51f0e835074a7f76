"""Row and column tiles (emit/tiles.py) and rows over lengths not a multiple of block x lanes:
their logic in the CUDA simulator (tiles_sim_cases.py), their choice by the planner at the sizes
of a GPU, and their sm_90 PTX."""
import re

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import DEFAULT as TUNING
from simulated import SHARDS, run_cases

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

F64 = re.compile(r"^\s*[a-z.]+\.f64\b", re.MULTILINE)


def softmax(axis):
    def f(x):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    return f


def layernorm0(x, r):
    y = x + r
    d = y - y.mean(0)
    return d / np.sqrt((d * d).mean(0) + 1e-5)


@pytest.mark.sim
@pytest.mark.parametrize("shard", range(SHARDS))
def test_tiles_under_the_simulator(tmp_path, shard):
    lines = run_cases("tiles_sim_cases.py", tmp_path, shard, SHARDS)
    assert len(lines) >= 10 and all(line.endswith(": ok") for line in lines), "\n".join(lines)


# function, input shapes, the strategy the planner takes at these sizes (float32; the last float16)
PLANNED = [
    (softmax(0), [(512, 8192)], "column tiles, 16x32 threads, 1 passes"),    # max, expsum
    (layernorm0, [(500, 8192), (500, 8192)], "column tiles, 16x32 threads, 2 passes"),
    (lambda x: x - x.max(1, keepdims=True), [(16, 1024, 128)], "column tiles, 16x32 threads, 1 passes"),
    (lambda x: x.sum(-1), [(1 << 19, 64)], "row tiles, 32x8 threads, 1 passes"),
    (lambda x: x.max(-1), [(1 << 21, 16)], "row tiles, 128x2 threads, 1 passes"),
    (softmax(-1), [(65536, 100)], "row tiles, 16x16 threads, 2 passes"),
    (lambda x: (x.argmax(-1), x.max(-1)), [(8192, 255)], "row tiles, 8x32 threads, 1 passes"),
    (softmax(-1), [(8192, 1000)], "rows, 4-wide vectors"),
    (lambda x: x.sum(-1), [(4096, 1000)], "rows, 4-wide vectors"),
    (softmax(-1), [(8192, 1000)], "rows, 8-wide vectors"),
]


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")
@pytest.mark.parametrize("case", range(len(PLANNED)))
def test_planned_and_compiled_to_sm90_ptx(case):
    fn, shapes, strategy = PLANNED[case]
    dtype = np.float16 if case == len(PLANNED) - 1 else np.float32
    args = [np.zeros(s, dtype) for s in shapes]
    low = autofuse.jit(fn, backend="cuda", tuning=TUNING).lower(*args)
    (kernel,) = low.kernels
    assert kernel.strategy == strategy, kernel.strategy
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".visible .entry" in ptx
    if dtype == np.float32:
        assert not F64.findall(ptx), F64.findall(ptx)[:5]
    if strategy.startswith("row tiles"):       # the lanes of a row combine by shuffles only
        assert "shfl.sync.bfly" in ptx and "bar.sync" not in ptx
    if strategy.startswith("column tiles"):
        assert "bar.sync" in ptx


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")
def test_tiles_can_be_turned_off():
    args = [np.zeros((4096, 8192), np.float32)]
    off = TUNING.replace(column_tiles=False, row_tile_elements=0, column_program_bytes=0)
    (columns,) = autofuse.jit(softmax(0), backend="cuda", tuning=off).lower(*args).kernels
    assert columns.strategy == "columns"
    (rows,) = autofuse.jit(lambda x: x.sum(-1), backend="cuda", tuning=off).lower(
        np.zeros((1 << 19, 64), np.float32)).kernels
    assert rows.strategy.startswith("rows")


# whole-column programs past Tuning.column_program_bytes (16 MiB of columns), or with too few
# columns to fill the GPU that are too long to walk alone: a reduction kernel a level, the
# columns cut across blocks, then one pointwise pass; the fused text says why
SPLIT = [
    (softmax(0), [(4096, 8192)], 2, "would be read again for each level of reductions"),
    (softmax(0), [(2048, 2048)], 2, "too few to fill the GPU"),
    (layernorm0, [(2048, 8192), (2048, 8192)], 3, "would be read again"),
    (lambda x: np.log(np.exp(x).sum(1)), [(64, 1024, 128)], 1, None),    # no column phase
    (lambda x: x - x.max(1, keepdims=True), [(64, 4096, 128)], 2, "would be read again"),
]


@pytest.mark.parametrize("case", range(len(SPLIT)))
def test_long_columns_take_a_kernel_a_level(case):
    fn, shapes, count, why = SPLIT[case]
    args = [np.zeros(s, np.float32) for s in shapes]
    low = autofuse.jit(fn, backend="cuda", tuning=TUNING).lower(*args)
    strategies = [k.strategy for k in low.kernels]
    assert len(strategies) == count, strategies
    assert all(s.startswith("two-stage columns") for s in strategies[:count - 1]), strategies
    if why is not None:
        assert why in str(low.fused) and strategies[-1].startswith("grid-stride"), strategies
    # the same program as one column-tiles kernel where the bound is off
    whole = autofuse.jit(fn, backend="cuda", tuning=TUNING.replace(column_program_bytes=0))
    assert len(whole.lower(*args).kernels) == (1 if why is not None else count)
