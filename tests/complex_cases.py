"""Complex programs that reach each CUDA strategy (rows, two-stage rows and columns, split,
column tiles, the tiled matmul, grid-stride elementwise), shared by the CUDA simulator's run
(complex_sim_cases.py), the PTX check (test_complex.py) and the GPU test (test_cuda_gpu_complex.py)."""
import numpy as np

_rng = np.random.default_rng(5)


def complex_array(shape, dtype):
    parts = _rng.uniform(-2, 2, size=(2,) + tuple(shape))
    return (parts[0] + 1j * parts[1]).astype(dtype)


def _cases(dtype):
    def z(*shape):
        return lambda: (complex_array(shape, dtype),)
    real = np.float32 if dtype == np.complex64 else np.float64
    return [
        ("elementwise", lambda a: a * a.conj() + np.exp(a) / (a - 3j), z(7, 33)),
        ("phase", lambda x: np.exp(1j * x).imag + np.abs(x + 2j),
         lambda: (_rng.uniform(-3, 3, size=(5, 40)).astype(real),)),
        ("row sums", lambda a: a.sum(axis=1), z(16, 300)),
        ("column sums", lambda a: a.sum(axis=0), z(300, 16)),
        ("total", lambda a: a.sum(), z(20000,)),
        ("long rows", lambda a: (a * a).mean(axis=-1), z(4, 5000)),
        ("row products", lambda a: np.prod(a / np.abs(a), axis=1), z(8, 40)),
        ("variance", lambda a: a.var(axis=0), z(70, 33)),
        ("matrix product", lambda a: a @ a.T, z(64, 64)),
        ("matrix-vector", lambda a: a @ a[0], z(64, 64)),
    ]


CASES = [(f"{name} {np.dtype(dtype).name}", fn, make)
         for dtype in (np.complex64, np.complex128) for name, fn, make in _cases(dtype)]


def tolerance(value) -> dict:
    rtol = 2e-4 if np.asarray(value).dtype in (np.complex64, np.float32) else 1e-10
    return {"rtol": rtol, "atol": rtol * max(1.0, float(np.abs(value).max(initial=0)))}
