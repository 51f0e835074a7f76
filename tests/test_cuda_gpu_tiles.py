"""Row and column tiles (emit/tiles.py) and rows over lengths not a multiple of block x lanes on
a real GPU, at the sizes where the planner takes them (the simulator runs their logic at small
ones: tiles_sim_cases.py), against NumPy, the memory pool poisoned with NaN first.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_tiles.py`.
"""
import numpy as np
import pytest

import autofuse
from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, and the GPU marker and skip)
from tiles_sim_cases import specials  # noqa: E402  (-inf, +inf and NaN columns)

rng = np.random.default_rng(31)


def f32(*shape):
    return (rng.standard_normal(shape) + 0.1).astype(np.float32)


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


# name, function, inputs, strategy expected
CASES = [
    ("softmax_axis0", softmax(0), lambda: (f32(512, 8192),), "column tiles"),
    ("softmax_axis0_ragged", softmax(0), lambda: (f32(999, 1001),), "column tiles"),
    ("layernorm_axis0", layernorm(0), lambda: (f32(500, 8192), f32(500, 8192)), "column tiles"),
    ("softmax_middle", softmax(1), lambda: (f32(16, 1024, 250),), "column tiles"),
    # columns past the L2 (Tuning.column_program_bytes): a two-stage kernel a level, softmax's
    # denominator beside its max (ir/online.py); the edges of its one-pass sum
    ("softmax_axis0_long", softmax(0), lambda: (f32(4096, 8192),), "two-stage columns"),
    ("softmax_axis0_specials", softmax(0), lambda: (specials(4099, 4097),), "two-stage columns"),
    ("layernorm_axis0_long", layernorm(0), lambda: (f32(1000, 8192), f32(1000, 8192)),
     "two-stage columns"),
    ("logsumexp_middle_long", lambda x: np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)),
     lambda: (f32(16, 2048, 300),), "two-stage columns"),
    ("logsumexp_long_rows", lambda x: np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)),
     lambda: (specials(1 << 21, 16).T.copy(),), "two-stage rows"),
    ("logsumexp_one_row", lambda x: np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)),
     lambda: (f32(1, 1 << 25),), "split"),
    ("softmax_axis0_half", softmax(0), lambda: (f32(2048, 4096).astype(np.float16),), "column tiles"),
    ("row_tiles_sum_64", lambda x: x.sum(-1), lambda: (f32(1 << 19, 64),), "row tiles"),
    ("row_tiles_softmax_100", softmax(-1), lambda: (f32(65536, 100),), "row tiles"),
    ("row_tiles_arg_255", lambda x: (x.argmax(-1), x.min(-1)),
     lambda: (rng.integers(-3, 4, (40000, 255)).astype(np.float32),), "row tiles"),
    ("row_tiles_ragged_37", lambda x: (x - x.mean(-1, keepdims=True)),
     lambda: (f32(10007, 37),), "row tiles"),
    ("rows_vector_tail_1000", softmax(-1), lambda: (f32(8192, 1000),), "rows, 4-wide vectors"),
    ("rows_vector_tail_layernorm_1000", layernorm(-1), lambda: (f32(4099, 1000), f32(4099, 1000)),
     "rows, 4-wide vectors"),
    ("rows_vector_tail_half_1000", softmax(-1), lambda: (f32(8192, 1000).astype(np.float16),),
     "rows, 8-wide vectors"),
]


@pytest.mark.parametrize("name, fn, make, strategy", CASES, ids=[c[0] for c in CASES])
def test_tiles_on_the_gpu(name, fn, make, strategy):
    host = make()
    block = cupy.full(1 << 27, np.nan, np.float32)
    del block
    inputs = [cupy.asarray(a) for a in host]
    jitted = autofuse.jit(fn)
    assert any(k.strategy.startswith(strategy) for k in jitted.lower(*inputs).kernels)
    with np.errstate(invalid="ignore"):
        want = fn(*host)
    for _ in range(2):
        got = jitted(*inputs)
        got, expected = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, expected):
            g = cupy.asnumpy(g)
            assert g.shape == w.shape and g.dtype == w.dtype
            tolerance = 1e-2 if w.dtype == np.float16 else 1e-4
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance)
            else:
                np.testing.assert_array_equal(g, w)
