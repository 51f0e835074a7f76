"""Two-stage reductions on a real GPU (cuda_two_stage.py): few outputs over a long extent, at the
sizes where the kernel is chosen (the simulator runs its logic at small ones in sim_cases.py),
against NumPy, with fresh inputs each call (the tiles' counters must reset) and the memory pool
poisoned with NaN first (an output element left unwritten would show).

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_two_stage.py`.
"""
import numpy as np
import pytest

import autofuse
from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, and the GPU marker and skip)

rng = np.random.default_rng(17)


def f32(*shape):
    return (rng.standard_normal(shape) + 0.1).astype(np.float32)


def ties(*shape):
    return rng.integers(-3, 4, shape).astype(np.float32)


def _half_sums(x):
    """autofuse sums float16 in float32 and rounds once (NumPy rounds each step)."""
    return x.astype(np.float32).sum(0).astype(np.float16), x.max(0)


# name, function, inputs, strategy expected, reference (None: the function on NumPy)
CASES = [
    ("columns_with_row_output", lambda x: (np.exp(x), np.exp(x).sum(0)), lambda: (f32(4096, 4096),),
     "two-stage columns, 32x8 threads", None),
    ("columns_of_two", lambda x: (x.sum(0), x.mean(0)), lambda: (f32(1 << 22, 2),),
     "two-stage columns, 2x128 threads", None),
    ("leading_axes", lambda x: x.sum(axis=(0, 1)), lambda: (f32(64, 256, 256),),
     "two-stage columns, 32x8 threads", None),
    ("middle_axis", lambda x: (x.sum(1), x.max(1)), lambda: (f32(8, 4096, 48),),
     "two-stage columns", None),
    ("arg_ties_columns", lambda x: (x.argmax(0), x.argmin(0), x.max(0)), lambda: (ties(100000, 3),),
     "two-stage columns, 4x64 threads", None),
    ("rows_of_two", lambda x: (x.sum(1), x.argmax(1), x.argmin(1)), lambda: (ties(2, 1 << 22),),
     "two-stage rows", None),
    ("long_rows_max", lambda x: np.exp(x - x.max(-1, keepdims=True)), lambda: (f32(4, 1 << 20),),
     "two-stage rows", None),
    ("mixed_axes", lambda x: x.sum(axis=(0, 2)), lambda: (f32(16, 3, 65536),), "two-stage rows", None),
    ("transposed_input", lambda x: x.T.sum(0) * 2, lambda: (f32(3, 1 << 20),), "two-stage columns", None),
    ("half_columns", lambda x: (x.sum(0), x.max(0)), lambda: (f32(1 << 16, 8).astype(np.float16),),
     "two-stage columns, 8x32 threads", _half_sums),
    ("int8_and_bool", lambda x: (x.sum(0), (x > 7).any(0), x.mean(0)),
     lambda: (rng.integers(-9, 9, (1 << 20, 4)).astype(np.int8),), "two-stage columns", None),
    # a run of outputs a thread (emit/runs.py): a linear classifier's weight gradient, a sum and
    # an arg-reduction of a broadcast product, and (a one-pass columns kernel) pixels' colours
    ("gradient_run", lambda x, g: 0.5 * x.T @ g, lambda: (f32(1 << 19, 64), f32(1 << 19, 10)),
     "two-stage columns, 32x8 threads, 2 tiles x 525 chunks, 10 outputs a thread", None),
    ("broadcast_run", lambda x, c: ((x[:, :, None] * c).sum(0), (x[:, :, None] * c).argmax(0)),
     lambda: (ties(1 << 20, 4), f32(8)), "two-stage columns", None),
    ("pixels_run", lambda x, m: x @ m.T, lambda: (f32(1 << 22, 3), f32(4, 3)),
     "columns, 4 outputs a thread", None),
    # a strip of outputs a thread along a long axis (runs.choose_strip): pairwise distances
    ("strip_distances", lambda x, y: ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1),
     lambda: (f32(8192, 8), f32(4096, 8)), "columns, 4 outputs a thread along axis 0", None),
    ("strip_distances_rows_of_3", lambda x, y: np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)),
     lambda: (f32(4096, 3), f32(4000, 3)), "columns, 4 outputs a thread along axis 0", None),
    # x @ w with w of a few columns, x read a row a thread: a block's rows of x staged through
    # shared memory (emit/run_tiles.py), chunks that divide the row or not, rows that do not fill
    # the last block, float64, an epilogue along the run
    ("staged_logits", lambda x, w, b: x @ w + b, lambda: (f32(1 << 19, 64), f32(64, 10), f32(10)),
     "columns, 10 outputs a thread for each of 3 rows, 384 rows a block staged 16", None),
    ("staged_ragged_chunk", lambda x, w: np.tanh(x @ w), lambda: (f32(100003, 72), f32(72, 7)),
     "columns, 7 outputs a thread, 128 rows a block staged 16", None),
    ("staged_float64", lambda x, w: x @ w, lambda: (f32(100000, 48).astype(np.float64),
                                                    f32(48, 5).astype(np.float64)),
     "columns, 5 outputs a thread, 128 rows a block staged 8", None),
    # short rows staged in shared memory (emit/short_tiles.py): softmax over rows of 10, a last
    # block part full; a normalization over rows of 12 in float64 with a scale by column
    ("short_tiles_softmax", lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True),
     lambda: (f32((1 << 19) + 3, 10),), "columns, rows of 10 written out, 256 a block staged",
     None),
    ("short_tiles_norm_f64", lambda x, g: (x - x.mean(1, keepdims=True)) * g,
     lambda: (f32(100003, 12).astype(np.float64), f32(12).astype(np.float64)),
     "columns, rows of 12 written out, 128 a block staged", None),
    ("staged_scaled_input", lambda x, w: (2 * x - 1) @ w.T, lambda: (f32(1 << 18, 40), f32(16, 40)),
     "columns, 16 outputs a thread for each of 2 rows", None),
]


def _poison():
    """Leave the pool's free memory full of NaN (and 0xFF bytes), so outputs start as garbage."""
    block = cupy.full(1 << 27, np.nan, np.float32)
    del block


def _check(got, want, inputs, exact):
    """`got` against NumPy's `want`; reduced float32 values against `exact` (the function on
    float64 copies of float32 inputs): NumPy sums a column of a C-contiguous array one row after
    another in float32, tens off over 2^22 rows, so its own answer is no reference for them."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    exact = exact if isinstance(exact, tuple) else (exact,)
    assert len(got) == len(want) == len(exact)
    for g, w, e in zip(got, want, exact):
        g = cupy.asnumpy(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype.kind in "iub" or w.size == inputs[0].size:
            if w.dtype.kind == "f":      # (row outputs: elementwise values)
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
            else:
                np.testing.assert_array_equal(g, w)
        else:
            # sums over millions of elements: within float32's error of a blocked sum
            scale = np.abs(inputs[0].astype(np.float64)).max() * inputs[0].size / max(w.size, 1)
            reference = e if w.dtype == np.float32 else w
            np.testing.assert_allclose(g.astype(np.float64), reference.astype(np.float64),
                                       rtol=2e-3 if w.dtype == np.float16 else 1e-5,
                                       atol=(2e-3 if w.dtype == np.float16 else 1e-6) * scale)


@pytest.mark.parametrize("name, fn, make, strategy, reference", CASES, ids=[c[0] for c in CASES])
def test_two_stage_reductions_match_numpy(name, fn, make, strategy, reference):
    f = autofuse.jit(fn)
    for _ in range(2):                     # fresh inputs: the counters reset after each call
        inputs = make()
        device = [cupy.asarray(a) for a in inputs]
        _poison()
        wide = [a.astype(np.float64) if a.dtype == np.float32 else a for a in inputs]
        _check(f(*device), (reference or fn)(*inputs), inputs, (reference or fn)(*wide))
    strategies = [k.strategy for k in f.lower(*device).kernels]
    assert any(s.startswith(strategy) for s in strategies), strategies


def test_two_stage_results_are_the_same_run_to_run():
    """The tile's last block combines the partials in chunk order whichever block finishes last:
    bit-identical sums call after call."""
    f = autofuse.jit(lambda x: (x.sum(0), x.sum(1)))
    x = cupy.asarray(f32(1 << 21, 4))
    first = [cupy.asnumpy(a) for a in f(x)]
    for _ in range(5):
        again = [cupy.asnumpy(a) for a in f(x)]
        for a, b in zip(first, again):
            np.testing.assert_array_equal(a, b)
