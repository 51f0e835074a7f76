"""The CUDA backend at scale on a real GPU: 100,000 cached calls leak no device or host memory, and
arrays of more than 2^32 elements (whose flat indices overflow 32 bits) get exact answers.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_resources.py`.
"""
import gc
import tracemalloc

import numpy as np
import pytest

import autofuse

pytest.importorskip("cupy")
from gpu_marks import cupy, pytestmark  # noqa: E402,F401  (the GPU marker and skip)

rng = np.random.default_rng(7)
CALLS = 100_000


def _device_state():
    cupy.cuda.Device().synchronize()
    gc.collect()
    pool = cupy.get_default_memory_pool()
    return pool.used_bytes(), pool.total_bytes(), cupy.cuda.runtime.memGetInfo()[0]


def _leak_check(fn, args, calls, mutation=None):
    """Warm up, then `calls` calls: device bytes in use by CuPy's pool unchanged, the pool not
    grown, the driver's free memory not shrunk beyond that, Python heap growth under 64 KiB."""
    for _ in range(200):
        fn(*args)
    used0, total0, free0 = _device_state()
    tracemalloc.start()
    try:
        heap0 = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            result = fn(*args)
        del result
        used1, total1, free1 = _device_state()
        heap = tracemalloc.get_traced_memory()[0] - heap0
    finally:
        tracemalloc.stop()
    assert used1 == used0, f"CuPy pool bytes in use grew by {used1 - used0}"
    assert total1 - total0 <= 1 << 20, f"CuPy pool grew by {total1 - total0} bytes"
    assert free0 - free1 <= (total1 - total0) + (1 << 20), f"device free memory fell by {free0 - free1}"
    assert heap < 64 * 1024, f"host heap grew by {heap} bytes over {calls} calls"


@pytest.mark.slow
def test_a_hundred_thousand_calls_leak_no_device_memory_one_kernel():
    f = autofuse.jit(lambda x, y: np.maximum(x * y + 1, 0))
    x, y = (cupy.asarray(rng.standard_normal(1024).astype(np.float32)) for _ in range(2))
    _leak_check(f, (x, y), CALLS)
    np.testing.assert_allclose(cupy.asnumpy(f(x, y)),      # (the GPU contracts x * y + 1 to an FMA)
                               np.maximum(cupy.asnumpy(x) * cupy.asnumpy(y) + 1, 0), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.slow
def test_a_hundred_thousand_calls_leak_no_device_memory_several_kernels():
    # A split reduction (its scratch buffers and counter), a row reduction, an intermediate.
    def fn(x, w):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)) @ w, (x * x).sum()
    f = autofuse.jit(fn)
    x = cupy.asarray(rng.standard_normal((256, 300)).astype(np.float32))
    w = cupy.asarray(rng.standard_normal((300, 8)).astype(np.float32))
    assert len(f.lower(x, w).kernels) >= 3
    _leak_check(f, (x, w), CALLS)
    got, total = f(x, w)
    want, want_total = fn(cupy.asnumpy(x), cupy.asnumpy(w))
    np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(float(total), want_total, rtol=1e-5)


@pytest.mark.slow
def test_calls_that_mutate_an_argument_leak_nothing():
    def step(u):
        u[1:-1] = 0.5 * (u[2:] + u[:-2])
        return u.sum()
    f = autofuse.jit(step)
    u = cupy.asarray(rng.standard_normal(4096).astype(np.float32))
    _leak_check(f, (u,), CALLS // 10)


@pytest.mark.slow
def test_numpy_inputs_on_the_cuda_backend_leak_nothing():
    f = autofuse.jit(lambda x: np.tanh(x).sum(axis=0), backend="cuda")
    x = rng.standard_normal((64, 32)).astype(np.float32)
    _leak_check(f, (x,), CALLS // 10)
    np.testing.assert_allclose(f(x), np.tanh(x).sum(axis=0), rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_torch_calls_leak_no_device_memory():
    torch = pytest.importorskip("torch")
    f = autofuse.jit(lambda x, y: (x - y.mean()) * 2)
    x, y = (torch.randn(1000, device="cuda") for _ in range(2))
    for _ in range(200):
        f(x, y)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    for _ in range(CALLS):
        result = f(x, y)
    del result
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before


# -- more than 2^32 elements -----------------------------------------------------------------

BIG = 65537 * 65537 + 3             # past 2^32 by 131,076: a 32-bit wrap would alias small indices


@pytest.fixture(scope="module")
def big():
    """A uint8 array of BIG elements holding i % 251 (checkable in closed form anywhere)."""
    x = cupy.empty(BIG, dtype=cupy.uint8)
    step = 1 << 28
    for start in range(0, BIG, step):          # in pieces: an int64 arange of BIG is 34 GB
        stop = min(BIG, start + step)
        x[start:stop] = (cupy.arange(start, stop, dtype=cupy.int64) % 251).astype(cupy.uint8)
    yield x
    del x
    cupy.get_default_memory_pool().free_all_blocks()


def _probe(n):
    return np.array([0, 1, 4098, 4099, (1 << 31) + 5, (1 << 32) - 1, 1 << 32, (1 << 32) + 4099,
                     n - 2, n - 1], dtype=np.int64)


@pytest.mark.slow
def test_elementwise_beyond_2_to_the_32(big):
    y = autofuse.jit(lambda a: a * 3 + 1)(big)
    assert y.dtype == np.uint8 and y.shape == (BIG,)
    at = _probe(BIG)
    want = ((at % 251) * 3 + 1) % 256
    np.testing.assert_array_equal(cupy.asnumpy(y[cupy.asarray(at)]), want)
    assert bool((y == big * 3 + 1).all())          # CuPy's own op, every element
    del y


@pytest.mark.slow
def test_full_reduction_beyond_2_to_the_32(big):
    total = autofuse.jit(lambda a: a.sum(dtype=np.int64))(big)
    i = np.int64(BIG)
    cycles, rest = divmod(i, 251)
    want = cycles * (250 * 251 // 2) + rest * (rest - 1) // 2
    assert int(total) == int(want)
    count = autofuse.jit(lambda a: (a == 250).sum())(big)
    assert int(count) == int(cycles + (rest > 250))


@pytest.mark.slow
def test_row_and_column_reductions_beyond_2_to_the_32(big):
    cols = 4099
    rows = BIG // cols
    n = rows * cols
    assert n > 1 << 32
    x = big[:n].reshape(rows, cols)
    row_sums = autofuse.jit(lambda a: a.sum(axis=1, dtype=np.int64))(x)
    col_max = autofuse.jit(lambda a: a.max(axis=0))(x)
    assert bool((row_sums == x.sum(axis=1, dtype=cupy.int64)).all())
    assert bool((col_max == x.max(axis=0)).all())
    last = (np.arange((rows - 1) * cols, n, dtype=np.int64) % 251).sum()
    assert int(row_sums[-1]) == int(last)


@pytest.mark.slow
def test_transpose_and_strided_views_beyond_2_to_the_32(big):
    side = 65537                          # 65537^2 > 2^32
    x = big[:side * side].reshape(side, side)
    t = autofuse.jit(lambda a: a.T + 1)(x)
    for i, j in ((0, 0), (1, 2), (side - 1, 0), (0, side - 1), (side - 1, side - 2), (40000, 65000)):
        assert int(t[i, j]) == (int((j * side + i) % 251) + 1) % 256, (i, j)
    assert bool((t == x.T + 1).all())
    del t
    back = autofuse.jit(lambda a: a[::-1, ::2] * 2)(x)
    assert bool((back == x[::-1, ::2] * 2).all())
