"""Run under NUMBA_ENABLE_CUDASIM=1 by test_autodiff_fusion.py: value_and_grad's joint programs on
the CUDA backend, executed by numba's simulator at small sizes, against the NumPy backend in
float64: softmax cross-entropy (one rows kernel with the loss's row sums), RMSNorm, a GELU
MLP block whose first product keeps its result and computes the GELU as its epilogue (the tiled
and the compact product kernels), a table read at indices (its gradient a scatter-add), and
sorted rows and medians (back through each row's stable order), and paths through complex values
(a short transform's spectrum, complex arithmetic; autodiff/complexes.py).
Prints one "name: ok" line a case."""
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

rng = np.random.default_rng(36)
TILED = Tuning(products=ProductLimits(0, 0, 0))                       # every product a tiled kernel
COMPACT = Tuning(gemm_over_tiles=True, products=ProductLimits(0, 0, 0))


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def softmax_ce(z, t):
    m = z.max(-1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(-1, keepdims=True)) + m
    return -(t * (z - lse)).sum() / z.shape[0]


def rmsnorm(x, w, r):
    return (x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w * r).sum()


def gelu_mlp(w1, b1, w2, x, r):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return ((h @ w2) * r).sum()


def embedding(table, rows, r, columns):
    """Rows of a table read at indices (repeated, negative) and columns taken: the table's
    gradient adds each read's cotangent where it was read (a scatter-add)."""
    return (np.tanh(table[rows]) * r).sum() + (np.take(table, columns, axis=1) ** 2).sum()


def order_statistics(x, w):
    """Sorted rows and their medians: the gradient goes back through each row's stable order."""
    return (np.sort(x, axis=1)[:, -3:] * w[:, None]).sum() + (np.median(x, axis=0) * 2).sum()


def spectrum(x, w):
    """A power spectrum weighted by frequency, and complex arithmetic along the path."""
    z = np.fft.rfft(x, axis=-1)
    return (np.abs(z) ** 2 * w).sum() + (np.exp(1j * x) * (x + 2j)).real.sum()


MLP = (f32(12, 20, scale=0.3), f32(20), f32(20, 9, scale=0.3), f32(11, 12), f32(11, 9))
CASES = [
    ("softmax_ce", softmax_ce, (f32(6, 37), np.eye(37, dtype=np.float32)[rng.integers(0, 37, 6)]),
     (0,), None, 2),
    ("rmsnorm", rmsnorm, (f32(5, 33), f32(33), f32(5, 33)), (0, 1), None, 3),
    ("mlp_tiled", gelu_mlp, MLP, (0, 1, 2), TILED, 7),
    ("mlp_compact", gelu_mlp, MLP, (0, 1, 2), COMPACT, 7),
    ("embedding", embedding, (f32(10, 6), np.array([3, 0, 3, -1, 9, 3, 2]), f32(7, 6),
                              np.array([5, -6, 5])), (0,), None, None),
    ("order_statistics", order_statistics, (f32(6, 9), f32(6)), (0, 1), None, None),
    ("complex_spectrum", spectrum, (f32(4, 16), f32(9)), (0, 1), None, None),
]


def main():
    for name, fn, args, argnums, tuning, kernels in CASES:
        options = {"tuning": tuning} if tuning is not None else {}
        fused = autofuse.value_and_grad(fn, argnums=argnums, backend="cuda", **options)
        value, grads = fused(*args)
        wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
        want_value, want = autofuse.value_and_grad(fn, argnums=argnums, backend="numpy")(*wide)
        assert kernels is None or len(fused.lower(*args).kernels) == kernels, \
            (name, fused.lower(*args).kernels)
        np.testing.assert_allclose(value, want_value, rtol=1e-4, atol=1e-5, err_msg=name)
        for got, expected in zip(grads, want):
            np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-5, err_msg=name)
        print(f"{name}: ok", flush=True)


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
