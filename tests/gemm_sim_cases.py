"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_gemm.py: the compact matrix-product kernel
(emit/gemm.py) executed by numba's simulator on small inputs, against NumPy in float64: odd
sizes (no multiple of any tile), transposed and non-contiguous operands, 1-D operands, batch
broadcasting, size-0 dimensions, prologues and epilogues, float32 and float64."""
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

rng = np.random.default_rng(5)
COMPACT = Tuning(gemm_over_tiles=True, mma=False, products=ProductLimits(0, 0, 0))   # every product compact
# Split-K at simulator sizes: K >= 64 in chunks of 16-64 (ir/split_k.py)
SPLIT = Tuning(gemm_over_tiles=True, mma=False,
               products=ProductLimits(0, 0, 0, split_k=64, split_chunk=16))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return rng.standard_normal(shape)


CASES = [
    ("relu_bias_odd", lambda x, w, b: np.maximum(x @ w + b, 0), (f32(37, 21), f32(21, 29), f32(29))),
    ("tall_tiles", lambda x, w: x @ w * 0.5, (f32(131, 9), f32(9, 5))),
    ("wide_tiles", lambda x, w: np.tanh(x @ w) + 1, (f32(3, 11), f32(11, 70))),
    ("transposed_b", lambda x, w: x @ w.T, (f32(13, 10), f32(7, 10))),
    ("transposed_a", lambda x, w: x.T @ w, (f32(10, 13), f32(10, 6))),
    ("transposed_both", lambda x, w: x.T @ w.T, (f32(9, 14), f32(5, 9))),
    ("sliced", lambda x, w: x[::2, 1:] @ w[:, ::-1], (f32(22, 9), f32(8, 6))),
    ("vector_left", lambda x, w: x @ w, (f32(12), f32(12, 7))),
    ("vector_right", lambda x, w: x @ w + 1, (f32(7, 12), f32(12))),
    ("batch_broadcast", lambda a, b: a @ b, (f32(2, 1, 9, 5), f32(2, 5, 6))),
    ("batch_of_one", lambda a, b: a @ b - 2, (f32(1, 4, 6), f32(1, 6, 3))),
    ("empty_k", lambda a, b: a @ b + 1, (f32(5, 0), f32(0, 7))),
    ("empty_m", lambda a, b: a @ b + 1, (f32(0, 3), f32(3, 7))),
    ("empty_batch", lambda a, b: a @ b, (f32(0, 4, 3), f32(3, 5))),
    ("prologue", lambda a, b: (a * 2) @ np.exp(b), (f32(11, 6), f32(6, 9))),
    ("residual_cast", lambda x, w, r: (x @ w + r).astype(np.float64), (f32(10, 8), f32(8, 12), f32(10, 12))),
    ("two_outputs", lambda x, w: (x @ w, np.maximum(x @ w, 0) * 3), (f32(17, 5), f32(5, 9))),
    ("float64", lambda a, b, c: np.tanh(a @ b) * 2 + c, (f64(19, 13), f64(13, 23), f64(19, 23))),
    ("float64_transposed", lambda a, b: a.T @ b, (f64(13, 19), f64(13, 10))),
]
# Products split along K, then summed with the epilogue fused into the sum: (name, fn, args,
# whether the planner splits it).
SPLIT_CASES = [
    ("split_covariance", lambda x: (x - x.mean(0)).T @ (x - x.mean(0)) / (x.shape[0] - 1),
     (f32(96, 5),), True),
    ("split_bias_relu", lambda a, b, c: np.maximum(a @ b + c, 0), (f32(3, 128), f32(128, 7), f32(7)), True),
    ("split_batch", lambda a, b: a @ b, (f32(2, 3, 64), f32(64, 4)), True),
    ("split_transposed_b", lambda a, b: a @ b.T * 2, (f64(6, 96), f64(5, 96)), True),
    ("split_vector", lambda a, b: a @ b, (f32(64), f32(64, 3)), True),
    ("split_k_prime", lambda a, b: a @ b, (f32(4, 67), f32(67, 3)), False),
]


def main() -> None:
    for name, fn, args in CASES:
        got = autofuse.jit(fn, backend="cuda", tuning=COMPACT)(*args)
        want = fn(*[a.astype(np.float64) for a in args])
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        kernels = autofuse.jit(fn, backend="cuda", tuning=COMPACT).lower(*args).kernels
        compact = any(k.strategy.startswith("compact") for k in kernels)
        tolerance = 1e-4 if args[0].dtype == np.float32 else 1e-12
        close = all(g.shape == w.shape and np.allclose(g, w, rtol=tolerance, atol=tolerance)
                    for g, w in zip(got, want))
        print(f"{name}: {'ok' if close and (compact or name == 'sliced') else 'WRONG'}")
    for name, fn, args, splits in SPLIT_CASES:
        jitted = autofuse.jit(fn, backend="cuda", tuning=SPLIT)
        got, want = jitted(*args), fn(*[a.astype(np.float64) for a in args])
        split = "split into" in str(jitted.lower(*args).fused)
        tolerance = 1e-4 if args[0].dtype == np.float32 else 1e-12
        close = got.shape == want.shape and np.allclose(got, want, rtol=tolerance, atol=tolerance)
        print(f"{name}: {'ok' if close and split == splits else 'WRONG'}")


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
