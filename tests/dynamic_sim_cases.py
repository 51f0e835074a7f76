"""Shape classes on the CUDA backend under numba's CUDA simulator (run by
test_dynamic_shapes_cuda.py with NUMBA_ENABLE_CUDASIM=1): 50 batch sizes, 0 and 1 among them, of
elementwise and loop programs against NumPy, with the compiles each sweep took. Prints one line a
case, ending ": ok"."""
from __future__ import annotations

import numpy as np

import autofuse

RNG = np.random.default_rng(330)
SIZES = [0, 1] + list(range(2, 50))
# the simulator runs a block's threads as Python threads: rows and product kernels (a block a row
# or a tile) over 50 sizes take minutes, so they run these 10 (the CPU tests sweep all 50): 0 and
# 1, 10 (the first call), sizes of the class below and above it, up to the largest
FEWER = [0, 1, 2, 3, 4, 7, 10, 16, 23, 49]
FIRST = 10          # the first call's size (one outside the class: the class starts at a second)


def bias_relu(x, b):
    return np.maximum(x * np.float32(2) + b, np.float32(0)) - b


def steps(x, y):
    for _ in range(4):
        x = np.tanh(x * 0.9 + y)
        y = y * 0.5 - x
    return x + y


def scaled_columns(x, s):
    return x * s[:, None] + 1.0


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(1e-5)) * g + b


def row_norms(x):
    return np.sqrt((x * x).sum(axis=1))


W = RNG.standard_normal((24, 20)).astype(np.float32)
BIAS = RNG.standard_normal(20).astype(np.float32)


def dense(x):
    return np.maximum(x @ W + BIAS, np.float32(0))


W64, BIAS64 = W.astype(np.float64), BIAS.astype(np.float64)
W16, BIAS16 = W.astype(np.float16), BIAS.astype(np.float16)


def dense_float64(x):
    return np.maximum(x @ W64 + BIAS64, 0.0)


def dense_float16(x):
    return np.maximum(x @ W16 + BIAS16, np.float16(0))


def attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * np.float32(0.25)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


W_FEW = RNG.standard_normal((40, 10)).astype(np.float32)


def logits(x):
    return x @ W_FEW + np.float32(1)


def gradient(x, g):
    return x.T @ g


def transposed_sum(x, y):
    return (x.T + y) * np.float32(2)


def stencil(u):
    v = u.copy()
    v[1:-1, 1:-1] = u[1:-1, 1:-1] + np.float32(0.1) * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    return v


CASES = [
    ("elementwise float32", bias_relu,
     lambda n: (RNG.standard_normal((n, 8)).astype(np.float32),
                RNG.standard_normal(8).astype(np.float32)), 1e-6),
    ("loop float64", steps,
     lambda n: (RNG.standard_normal((n, 6)), RNG.standard_normal((n, 6))), 1e-12),
    ("broadcast column", scaled_columns,
     lambda n: (RNG.standard_normal((n, 5)), RNG.standard_normal(n)), 1e-12),
    ("rows softmax float32", softmax,
     lambda n: (RNG.standard_normal((n, 16)).astype(np.float32),), 1e-6),
    ("rows layernorm float32", layernorm,
     lambda n: (RNG.standard_normal((n, 24)).astype(np.float32),
                RNG.standard_normal(24).astype(np.float32),
                RNG.standard_normal(24).astype(np.float32)), 1e-5),
    ("reduction float64", row_norms, lambda n: (RNG.standard_normal((n, 20)),), 1e-12),
    ("product float32", dense, lambda n: (RNG.standard_normal((n, 24)).astype(np.float32),), 1e-5),
    # tensor-core kernels (their size-1 axes keep their strides in a class: size 1 joins it)
    ("product float64", dense_float64, lambda n: (RNG.standard_normal((n, 24)),), 1e-12),
    ("product float16", dense_float16,
     lambda n: (RNG.standard_normal((n, 24)).astype(np.float16),), 2e-2),
    # attention over a batch that varies: one class of its flash kernel (the batch an argument;
    # an empty batch launches nothing, a batch of 1 keeps its axis)
    # products with a few columns: runs of a row's outputs a thread (x's rows staged through
    # shared memory; x.T @ g's two-stage kernel, its chunks chosen at launch)
    ("product runs staged", logits,
     lambda n: (RNG.standard_normal((n, 40)).astype(np.float32),), 1e-5),
    ("product runs two-stage", gradient,
     lambda n: (RNG.standard_normal((n, 24)), RNG.standard_normal((n, 10))), 1e-10),
    # transposed reads through shared-memory tiles (tile counts from the sizes; vectors where
    # the call's tiles are full), and row strips (a stencil: its grid's rows from the size)
    ("transpose tiles", transposed_sum,
     lambda n: (RNG.standard_normal((40, n)).astype(np.float32),
                RNG.standard_normal((n, 40)).astype(np.float32)), 1e-6),
    ("row strips", stencil, lambda n: (RNG.standard_normal((n, 64)).astype(np.float32),), 1e-5),
    ("product attention", attention,
     lambda n: tuple(RNG.standard_normal((n, 12, 8)).astype(np.float32) for _ in range(3)), 1e-5),
]


def main(names) -> None:
    for name, fn, make, tolerance in CASES:
        if names and name not in names:
            continue
        f = autofuse.jit(fn, backend="cuda")
        sizes = FEWER if name.startswith(("rows", "reduction", "product", "transpose",
                                          "row strips")) else SIZES
        order = [FIRST] + [s for s in sizes if s != FIRST]
        for n in order:
            args = make(n)
            want = fn(*args)
            got = f(*args)
            assert got.shape == want.shape and got.dtype == want.dtype, (name, n)
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance,
                                       err_msg=f"{name} at size {n}")
        info = f.cache_info()
        # size 1 compiles alone for these two (a reshape of size-1 axes; a matrix-vector
        # product)
        # (a stencil's interior is empty or one row at sizes 0-3)
        most = {"broadcast column": 3, "product float32": 3, "row strips": 6,
                "product runs staged": 4, "product runs two-stage": 4}
        assert info.compiles <= most.get(name, 2), (name, info)
        lowered = f.lower(*make(17))
        text = lowered.as_text("fused")
        assert "# dynamic: n0" in text, text
        if name.startswith("product runs"):
            assert "10 outputs a thread" in lowered.kernels[0].strategy, lowered.kernels[0]
        if name in ("transpose tiles", "row strips"):
            assert lowered.kernels[0].strategy.startswith(name), lowered.kernels[0].strategy
        if name == "transpose tiles":
            # (its index arithmetic at 0 and 1 spelled otherwise: cuda dynamic.same_kernel)
            assert "also runs size 0, 1" in text, text
        if name == "product attention":
            assert lowered.kernels[0].strategy.startswith("flash attention"), lowered.kernels
            assert "also runs size 0, 1" in text, text
        if name in ("product float64", "product float16"):
            assert lowered.kernels[0].strategy.startswith("tensor cores"), lowered.kernels[0]
            assert "also runs size 0, 1" in text, text
        print(f"{name}: {info.compiles} compiles, {info.instances} instances: ok")


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    import sys
    main(sys.argv[1:])
