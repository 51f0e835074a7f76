"""Matrix products the planner (autofuse/ir/products.py) sends to the reduction kernels, at small
sizes: shared by test_products.py (CPU backend, interpreter) and, run as a script under
NUMBA_ENABLE_CUDASIM=1, by the CUDA simulator (sim_cases.main over these cases)."""
import os
import sys

import numpy as np

rng = np.random.default_rng(30)


def real(dtype, *shape):
    return rng.standard_normal(shape).astype(dtype)


def ints(dtype, *shape):
    return rng.integers(-20, 20, shape).astype(dtype)


def fortran(array):
    return np.asfortranarray(array)


f32, f64 = np.float32, np.float64


def _logsumexp(t):
    top = t.max(-1, keepdims=True)
    return np.log(np.exp(t - top).sum(-1)) + top[..., 0]


A = real(f32, 40, 24)
# (name, function, arguments, settings: "strategy" a kernel of the case must take on the GPU)
CASES = [
    ("matvec", lambda a, x: a @ x, (A, real(f32, 24)), {"strategy": "rows"}),
    ("matvec_f64_epilogue", lambda a, x, b: np.tanh(a @ x) + b,
     (real(f64, 33, 70), real(f64, 70), real(f64, 33)), {"strategy": "rows"}),
    ("matvec_fortran", lambda a, x: a @ x, (fortran(real(f32, 40, 24)), real(f32, 24))),
    ("matvec_transposed_twice", lambda a, x: a.T @ (a @ x), (A, real(f32, 24))),
    ("matvec_strided_reversed", lambda a, x: a[::2, ::-1] @ x[1:], (A, real(f32, 25))),
    ("vecmat", lambda x, a: x @ a, (real(f32, 40), A)),
    ("vecmat_producer", lambda x, a: np.exp(x * 0.1) @ (a * 2), (real(f32, 40), A)),
    ("dot", lambda x, y: x @ y, (real(f32, 64), real(f32, 64))),
    ("np_dot", lambda x, y: np.dot(x, y) * 2, (real(f64, 300), real(f64, 300))),
    ("outer", lambda x, y: np.outer(x, y), (real(f32, 12), real(f32, 20))),
    ("k_one", lambda x, y: x[:, None] @ y[None, :] + 1, (real(f32, 12), real(f32, 20))),
    ("k_small", lambda a, b: np.maximum(a @ b, 0), (real(f32, 40, 8), real(f32, 8, 36))),
    ("n_small", lambda a, b: a @ b, (A, real(f32, 24, 4))),
    ("m_small", lambda a, b: a @ b, (real(f32, 3, 40), A)),
    ("two_products", lambda a, b, x: 1.5 * a @ x + 0.5 * b @ x,
     (A, real(f32, 40, 24), real(f32, 24))),
    ("vecmat_then_product", lambda a, x: (a @ x) @ a, (A, real(f32, 24))),
    ("batched_small", lambda x, w: x @ w, (real(f32, 16, 20, 24), real(f32, 24, 18)),
     {"strategy": "staged"}),
    ("batched_broadcast", lambda a, b: a @ b, (real(f32, 3, 1, 5, 6), real(f32, 4, 6, 2))),
    ("batched_matvec", lambda a, x: a @ x, (real(f32, 3, 10, 7), real(f32, 7))),
    ("batched_vecmat", lambda x, a: x @ a, (real(f32, 7), real(f32, 3, 7, 10))),
    ("int32_matvec", lambda a, x: a @ x, (ints(np.int32, 30, 20), ints(np.int32, 20))),
    ("int64_k_small", lambda a, b: a @ b, (ints(np.int64, 9, 3), ints(np.int64, 3, 11))),
    ("mixed_dtypes", lambda a, x: a @ x, (ints(np.int32, 30, 20), real(f64, 20))),
    ("empty_rows", lambda a, x: a @ x, (real(f32, 0, 5), real(f32, 5))),
    ("empty_k", lambda a, x: a @ x + 1, (real(f32, 6, 0), real(f32, 0))),
    ("empty_dot", lambda x, y: x @ y, (real(f32, 0), real(f32, 0))),
    # a few columns: a thread a run of a row's outputs (emit/runs.py), x's element loaded once
    # for the run, where neighbouring threads read x at most 16 bytes apart (rows of 3 colour
    # channels; 8 threads a block, so that 2000 outputs fill the simulated H100's columns)
    ("few_columns_epilogue", lambda x, w, b: np.tanh(x @ w + b),
     (real(f32, 400, 3), real(f32, 3, 5), real(f32, 5)),
     {"THREADS": 8, "strategy": "columns, 5 outputs a thread"}),
    ("few_columns_gradient", lambda x, p, y: 0.5 * x.T @ (p - y) / x.shape[0],
     (real(f32, 64, 4), real(f32, 64, 5), real(f32, 64, 5)),
     {"strategy": "two-stage columns, 4x8 threads, 1 tiles x 4 chunks, 5 outputs a thread"}),
    ("few_columns_gradient_f64", lambda x, g: x.T @ g, (real(f64, 64, 3), real(f64, 64, 6)),
     {"strategy": "two-stage columns"}),
]
# x @ w with x read a row a thread: a block's rows of x staged through shared memory a chunk at a
# time, several rows a thread, the results gathered and stored a block's rows at once
# (emit/run_tiles.py); chunks that do not divide the row, rows that do not fill the last block,
# two outputs, an epilogue that reads another input by row
STAGED = {"THREADS": 8, "RUN_STAGE_THREADS": 8, "strategy": "columns, 5 outputs a thread for each of"}
CASES += [
    ("staged_epilogue", lambda x, w, b: np.tanh(x @ w + b),
     (real(f32, 300, 40), real(f32, 40, 5), real(f32, 5)), STAGED),
    ("staged_f64_two_outputs", lambda x, w, s: ((x @ w) * s[:, None], x @ w),
     (real(f64, 230, 12), real(f64, 12, 5), real(f64, 230)), STAGED),
    ("staged_unit_axis", lambda x, w: (x * w.T[None]).sum(-1),      # x of shape (M, 1, K)
     (real(f32, 300, 1, 24), real(f32, 24, 5)), STAGED),
    ("staged_short_rows", lambda x, w: x @ w, (real(f32, 200, 7), real(f32, 7, 16)),
     dict(STAGED, strategy="columns, 16 outputs a thread for each of 2 rows")),
]
# reductions of a broadcast product with a run of outputs: an arg-reduction, and a reduction
# that needs another's result (a log-sum-exp down each row of x * c)
CASES += [
    ("run_argmax", lambda x, c: (x[:, None, :] * c[None, :, :]).argmax(-1),
     (real(f64, 300, 2), real(f64, 5, 2)), {"THREADS": 8, "strategy": "columns, 5 outputs"}),
    ("run_argmax_two_stage", lambda x, c: (x[:, :, None] * c).argmax(0),
     (ints(f64, 64, 3), real(f64, 5)), {"strategy": "two-stage columns, 4x8 threads, "
                                                     "1 tiles x 4 chunks, 5 outputs a thread"}),
    ("run_dependent", lambda x, c: _logsumexp(x[:, None, :] * c[None, :, :]),
     (real(f32, 300, 4), real(f32, 5, 4)), {"THREADS": 8, "strategy": "columns, 5 outputs"}),
]

# a strip of outputs a thread along a long kept axis (emit/runs.choose_strip): pairwise distances
# read y's row once for 4 rows of x; a consumer of the strip's results, a 3-D batch with the
# strip on the middle axis, a reversed x, float64 rows of 3, a max reduction, and an axis that
# is no multiple of 4 (no strip: values only). 32 threads a block, so that some 5,000 outputs
# fill the simulated H100's columns
STRIP = {"THREADS": 32, "strategy": "columns, 4 outputs a thread along axis"}
CASES += [
    ("strip_distances", lambda x, y: np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)),
     (real(f32, 160, 8), real(f32, 32, 8)), dict(STRIP, strategy="columns, 4 outputs a thread "
                                                 "along axis 0, rows of 8 written out")),
    ("strip_batched_middle", lambda x, y: np.abs(x[:, :, None, :] - y[:, None, :, :]).max(-1),
     (real(f32, 2, 80, 4), real(f32, 2, 32, 4)), dict(STRIP, strategy="columns, 4 outputs a "
                                                      "thread along axis 1")),
    ("strip_reversed_f64", lambda x, y: ((x[::-1, None, :] - y[None, :, :]) ** 2).sum(-1) + 1,
     (real(f64, 160, 3), real(f64, 33, 3)), STRIP),
    ("strip_long_rows", lambda x, y: (x[:, None, :] * y[None, :, :]).sum(-1) * 0.5,
     (real(f32, 136, 20), real(f32, 40, 20)), STRIP),
    ("strip_ragged_axis", lambda x, y: ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1),
     (real(f32, 162, 5), real(f32, 32, 5)), {"THREADS": 32}),
]


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sim_cases
    sys.exit(sim_cases.main(*sys.argv[1:3], cases=CASES))
