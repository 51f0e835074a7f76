"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_staged.py: the staged product kernel
(emit/staged.py) executed by numba's simulator on small inputs, against NumPy in float64: stacks
of small products with a shared right operand, with a batch of both, broadcast batches,
transposed and strided operands, odd sizes, K in several rounds, K-small products, K = 0,
prologues and epilogues, float32 and float64. Small tiles (SMALL) give several tiles a product."""
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

rng = np.random.default_rng(31)
# staged products are off by default until they pass their GPU tests (cuda/tuning.py's note)
STAGED = ProductLimits(staged=True, split_k=8192)
TILES = dict(staged_tile_m=16, staged_tile_m_short=16, staged_tile_n=16, products=STAGED)
SMALL = Tuning(staged_least_threads=8, **TILES)
ROUNDS = Tuning(staged_least_threads=8, staged_shared_bytes=1024, **TILES)      # K 8 a round
TOGETHER = Tuning(staged_least_threads=24, **TILES)                             # 2 items a block
MICRO = Tuning(staged_least_threads=8, staged_rows=2, staged_columns=2, **TILES)
TALL = Tuning(staged_least_threads=8, staged_rows=8, **TILES)                   # 8 rows a thread


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return rng.standard_normal(shape)


# (name, function, arguments, tuning)
CASES = [
    ("shared_right", lambda x, w: x @ w, (f64(9, 12, 10), f64(10, 11)), SMALL),
    ("shared_right_f32_epilogue", lambda x, w, b: np.tanh(x @ w + b) * 2,
     (f32(10, 8, 13), f32(13, 12), f32(12)), SMALL),
    ("batch_of_both", lambda a, b: a @ b - 1, (f64(8, 10, 9), f64(8, 9, 12)), SMALL),
    ("broadcast_batch", lambda a, b: a @ b, (f32(3, 1, 9, 10), f32(4, 10, 8)), SMALL),
    ("transposed_both", lambda a, w: a.transpose(0, 2, 1) @ w.T, (f64(8, 9, 10), f64(11, 9)),
     SMALL),
    ("strided_reversed", lambda x, w: x[:, ::2, 1:] @ w[::-1], (f32(8, 20, 11), f32(10, 9)),
     SMALL),
    ("odd_tiles", lambda x, w: x @ w, (f32(8, 17, 5), f32(5, 19)), SMALL),
    ("k_rounds", lambda x, w: x @ w + 0.5, (f64(8, 9, 20), f64(20, 10)), ROUNDS),
    ("k_rounds_batched_right", lambda a, b: a @ b, (f32(8, 10, 19), f32(8, 19, 9)), ROUNDS),
    ("k_small", lambda a, b, c: np.maximum(a @ b + c, 0), (f32(37, 6), f32(6, 41), f32(41)),
     SMALL),
    ("k_small_f64_default_tiles", lambda a, b: a @ b, (f64(20, 3), f64(3, 30)), Tuning(products=STAGED)),
    ("k_zero", lambda a, b: a @ b + 1, (f32(20, 0), f32(0, 24)), SMALL),
    ("prologue", lambda x, w: np.exp(x * 0.1) @ (w * 2), (f32(8, 9, 10), f32(10, 12)), SMALL),
    ("two_a_block", lambda a, b: a @ b * 3, (f32(9, 8, 8), f32(9, 8, 8)), TOGETHER),
    ("two_a_block_shared_right", lambda x, w: x @ w, (f64(11, 8, 5), f64(5, 8)), TOGETHER),
    ("micro_batch_of_both", lambda a, b: a @ b, (f32(8, 16, 12), f32(8, 12, 16)), MICRO),
    ("micro_transposed_a", lambda a, w: a.transpose(0, 2, 1) @ w,
     (f64(8, 11, 18), f64(11, 13)), MICRO),
    ("bool_output_odd", lambda a, b: a @ b > 0.5, (f32(8, 9, 7), f32(7, 11)), SMALL),
    ("tall_threads", lambda x, w: x @ w + 1, (f32(8, 19, 9), f32(9, 13)), TALL),
    ("tall_threads_f64_both", lambda a, b: a @ b, (f64(8, 16, 20), f64(8, 20, 8)), TALL),
    ("two_outputs_cast", lambda x, w: (x @ w, np.maximum(x @ w, 0).astype(np.float64)),
     (f32(8, 12, 6), f32(6, 16)), SMALL),
]


def main() -> None:
    for name, fn, args, tuning in CASES:
        jitted = autofuse.jit(fn, backend="cuda", tuning=tuning)
        got = jitted(*args)
        want = fn(*[a.astype(np.float64) for a in args])
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        staged = any(k.strategy.startswith("staged") for k in jitted.lower(*args).kernels)
        tolerance = 1e-4 if args[0].dtype == np.float32 else 1e-12
        close = all(g.shape == w.shape and np.allclose(g, w, rtol=tolerance, atol=tolerance)
                    for g, w in zip(got, want))
        print(f"{name}: {'ok' if close and staged else 'WRONG'}"
              + ("" if staged else " (not staged)"), flush=True)


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
