"""Run under NUMBA_ENABLE_CUDASIM=1 by test_in_place.py, and directly on a GPU by
test_cuda_gpu_loops.py: slice assignments written in place by CUDA kernels (fusion/in_place.py,
emit/elementwise.region, runtime/buffers.py): each program's in-place kernels counted, its results
against NumPy, twice (the second call reuses memory a first call left). Prints one line a case,
ending ": ok"."""
import os
import sys

import numpy as np

import autofuse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.index_loops import ewma  # noqa: E402  (the EWMA the CPU benchmark times)

rng = np.random.default_rng(11)


def windows(y):
    y = y.copy()
    for i in range(20):
        y[i:i + 3] += 1.5
        y[i:i + 3] *= 0.5
    return y


def columns(y, x):
    y = y.copy()
    for j in range(1, y.shape[1]):
        y[:, j] = y[:, j - 1] / 2 + x[:, j]
    return y


def running_sum_then_scale(x):
    y = x * 1.0
    for i in range(1, y.shape[0]):
        y[i] += y[i - 1]
    return y * 2                       # (the last assignment is read: in place, not a result)


def boundaries(u):
    u = u * 0.5
    for _ in range(6):
        u[1:-1] = 0.5 * (u[:-2] + u[2:])
        u[0] = u[1]
        u[-1] = u[-2]
    return u + 0.0


def strided_rows(y):
    y = y + 0.0
    for i in range(0, y.shape[0], 2):
        y[i, ::3] = y[i, ::3] * 2 + i
    return y.sum(1)


def red_black(u, steps):
    """Gauss-Seidel red-black sweeps: each colour's points written in place, read by the other
    colour through slices on other rows or columns (strided, so disjoint though overlapping)."""
    u = u * 1.0
    for _ in range(steps):
        u[1:-1:2, 1:-1:2] = 0.25 * (u[:-2:2, 1:-1:2] + u[2::2, 1:-1:2] + u[1:-1:2, :-2:2]
                                    + u[1:-1:2, 2::2])
        u[2:-1:2, 2:-1:2] = 0.25 * (u[1:-2:2, 2:-1:2] + u[3::2, 2:-1:2] + u[2:-1:2, 1:-2:2]
                                    + u[2:-1:2, 3::2])
    return u + 0.0


CASES = [
    ("ewma float64", ewma, [rng.random((12, 5)), 0.3], 8),
    ("ewma float32 rows of 33", ewma, [rng.random((10, 33)).astype(np.float32), 0.7], 6),
    ("sliding windows", windows, [rng.random(30)], 30),
    ("columns", columns, [rng.random((6, 7)), rng.random((6, 7))], 4),
    ("running sum, read after", running_sum_then_scale, [rng.random((9, 4))], 6),
    ("boundary rows", boundaries, [rng.random(17)], 6),
    ("strided rows, int", strided_rows, [rng.integers(0, 9, (8, 10))], 2),
    ("red-black sweeps", red_black, [rng.random((11, 9)), 3], 4),
]


def main():
    shard = sys.argv[2] if len(sys.argv) > 2 else ""
    for k, (name, fn, args, at_least) in enumerate(CASES):
        if shard and k % int(shard.split("/")[1]) != int(shard.split("/")[0]):
            continue
        jitted = autofuse.jit(fn, backend="cuda", static_argnums=(1,) if fn is red_black else ())
        low = jitted.lower(*args)
        written = [kernel for kernel in low.kernels if kernel.strategy.startswith("in place")]
        assert len(written) >= at_least, (name, [kernel.strategy for kernel in low.kernels])
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        for _ in range(2):
            got = np.asarray(jitted(*args))
            assert got.shape == expected.shape and got.dtype == expected.dtype, name
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=name)
        print(f"{name}: ok", flush=True)


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
