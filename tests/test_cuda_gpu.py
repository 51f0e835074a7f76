"""The CUDA backend on a real GPU: every group kind against NumPy with CuPy, torch and NumPy inputs.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu.py`.
"""
import math

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import Tuning
from programs import layernorm, softmax
from test_dlpack import Foreign

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

rng = np.random.default_rng(11)


def f32(*shape):
    return (rng.standard_normal(shape) + 0.1).astype(np.float32)


def f16(*shape):
    return f32(*shape).astype(np.float16)


CASES = [
    ("relu_chain", lambda x, y, z, w: np.maximum(x * y + z, 0) * w, lambda: (f32(257, 129),) * 4, 1e-6),
    ("bias_gelu", lambda x, b: 0.5 * (x + b) * (1 + np.tanh(0.7978845608 * ((x + b) + 0.044715 * (x + b) ** 3))),
     lambda: (f32(300, 64), f32(64)), 1e-5),
    ("transpose_add", lambda x, y: (x.T + y) * 2, lambda: (f32(130, 70), f32(70, 130)), 1e-6),
    ("transpose_vector_tiles", lambda x, y, b: (x.T + y) * b, lambda: (f32(192, 256), f32(256, 192), f32(192)), 1e-6),
    ("stencil", lambda u: u[2:] - 2 * u[1:-1] + u[:-2], lambda: (f32(1000),), 1e-6),
    ("sum_squares", lambda x: (x * x).sum(), lambda: (f32(1 << 20),), 1e-4),
    ("small_sum", lambda x: x.sum(), lambda: (f32(1000),), 1e-5),
    ("column_sums", lambda x: x.sum(axis=0), lambda: (f32(300, 200),), 1e-4),
    ("softmax", softmax, lambda: (f32(64, 1000),), 1e-5),
    ("softmax_long_row", softmax, lambda: (f32(8, 20000),), 1e-5),
    ("layernorm", layernorm, lambda: (f32(64, 4096), f32(4096), f32(4096)), 1e-4),
    ("mean_var", lambda x: (x.mean(0), x.var(0)), lambda: (f32(100, 50),), 1e-4),
    ("arg_reductions", lambda x: (x.argmax(1), x.argmin(0), x.argmax()), lambda: (f32(50, 300),), 0),
    ("any_all", lambda x: ((x > 1).any(1), (x > -3).all(0)), lambda: (f32(40, 30),), 0),
    ("relu_matmul_bias", lambda x, w, b: np.maximum(x @ w + b, 0), lambda: (f32(100, 70), f32(70, 90), f32(90)), 1e-4),
    ("matmul_transposed", lambda x, w: x @ w.T, lambda: (f32(65, 33), f32(47, 33)), 1e-4),
    ("batched_matmul", lambda a, b: a @ b, lambda: (f32(3, 20, 30), f32(3, 30, 10)), 1e-4),
    ("matvec", lambda a, v: a @ v, lambda: (f32(50, 40), f32(40)), 1e-4),
    ("attention", lambda q, k, v: softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])) @ v,
     lambda: (f32(2, 64, 16), f32(2, 64, 16), f32(2, 64, 16)), 1e-4),
    ("ints", lambda a, b: (a // b, a % b, a ** 2, np.abs(a), a < b),
     lambda: (rng.integers(-50, 50, (30, 40)).astype(np.int32), rng.integers(1, 7, (30, 40)).astype(np.int32)), 0),
    ("float64", lambda x: np.sqrt(np.abs(x)).sum(1) * np.pi, lambda: (rng.standard_normal((20, 30)),), 1e-12),
    ("scalar_arg", lambda x, s: x * s + 1.0, lambda: (f32(100), 2.5), 1e-6),
    # float16: float32 registers rounded to float16 after each op (NumPy's float16 loops), within
    # 2 units in the last place near 1; 16-byte vectors of 8 halves
    ("half_gelu", lambda x, b: 0.5 * (x + b) * (1 + np.tanh(0.7978845608 * (x + b))),
     lambda: (f16(300, 512), f16(512)), 2e-3),
    ("half_softmax", softmax, lambda: (f16(64, 4096),), 2e-3),
    ("half_layernorm", layernorm, lambda: (f16(64, 4096), f16(4096), f16(4096)), 2e-3),
    ("half_split_reductions", lambda x: ((x * x).sum() / x.size, x.argmax(), x.max()),
     lambda: (f16(1 << 20),), 2e-3),
    ("half_columns_and_transpose", lambda x, y: (x.sum(0) / 64, (x.T + y) * 2), lambda: (f16(64, 96), f16(96, 64)), 2e-3),
    ("half_matmul_epilogue", lambda x, w, b: np.maximum(x @ w + b, 0), lambda: (f16(100, 70), f16(70, 90), f16(90)), 2e-3),
    ("half_scalar_by_value", lambda x, s: x * s + 1, lambda: (f16(256, 64), np.float16(2.5)), 2e-3),
    # every element width of vector access (test_cache_hinted_accesses runs them hinted too)
    ("hinted_int8_bool_int16", lambda a, m, h: (a * 3 + 1, m ^ (a > 0), h * 7 - a),
     lambda: (rng.integers(-40, 40, (256, 64)).astype(np.int8), rng.random((256, 64)) < 0.5,
              rng.integers(-900, 900, (256, 64)).astype(np.int16)), 0),
    ("hinted_int64_float64", lambda a, x: (a * 3 - 1, x * 2.5 + a),
     lambda: (rng.integers(-1 << 40, 1 << 40, (128, 64)), rng.standard_normal((128, 64))), 1e-12),
    ("half_overflow_and_casts", lambda x, y: ((x * 300) * (x * 300) / 1000, x.astype(np.float32) * y),
     lambda: (f16(40, 64), f32(40, 64)), 2e-3),
]


def _check(result, expected, tol):
    result = result if isinstance(result, tuple) else (result,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for got, want in zip(result, expected):
        got = cupy.asnumpy(got) if isinstance(got, cupy.ndarray) else np.asarray(got)
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
        if tol:
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, fn, make, tol", CASES, ids=[c[0] for c in CASES])
def test_cupy_inputs(name, fn, make, tol):
    args = make()
    device_args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    result = autofuse.jit(fn)(*device_args)
    first = result[0] if isinstance(result, tuple) else result
    assert isinstance(first, cupy.ndarray)
    _check(result, fn(*args), tol)


VARIANTS = [c for c in CASES if c[0] in ("bias_gelu", "half_gelu", "sum_squares",
                                          "half_split_reductions")] + [
    ("relu_chain_vectors", lambda x, y, z, w: np.maximum(x * y + z, 0) * w,
     lambda: (f32(257, 128),) * 4, 1e-6),
    ("split_arg_ties", lambda x: (x.argmax(), x.argmin(), x.sum()),
     lambda: (rng.integers(-3, 4, (1 << 20) + 12).astype(np.float32),), 1e-3)]


SPREADS = [("grid", "grid"), ("block", "block"), ("block", "chunk")]


@pytest.mark.parametrize("vector_spread, reduce_spread", SPREADS, ids=["-".join(s) for s in SPREADS])
@pytest.mark.parametrize("name, fn, make, tol", VARIANTS, ids=[c[0] for c in VARIANTS])
def test_generator_variants_off_by_default(name, fn, make, tol, vector_spread, reduce_spread):
    """Two vectors a thread a step in grid-stride loops (Tuning.vector_ilp), measured and left
    off, with both loops' steps placed a grid-stride or a block apart, or a block's range
    contiguous (vector_spread, reduce_spread), still give NumPy's results."""
    tuning = Tuning(vector_ilp=2, vector_spread=vector_spread, reduce_spread=reduce_spread)
    args = make()
    device_args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    jitted = autofuse.jit(fn, tuning=tuning)
    _check(jitted(*device_args), fn(*args), tol)
    assert any(" x2" in k.strategy or k.strategy.startswith("split")
               for k in jitted.lower(*device_args).kernels)


@pytest.mark.parametrize("name, fn, make, tol", CASES[:8], ids=[c[0] for c in CASES[:8]])
def test_numpy_inputs_with_cuda_backend(name, fn, make, tol):
    args = make()
    result = autofuse.jit(fn, backend="cuda")(*args)
    _check(result, fn(*args), tol)


def test_torch_inputs():
    torch = pytest.importorskip("torch")
    x, g, b = f32(32, 256), f32(256), f32(256)
    result = autofuse.jit(layernorm)(*(torch.from_numpy(a).cuda() for a in (x, g, b)))
    assert isinstance(result, torch.Tensor) and result.is_cuda
    np.testing.assert_allclose(result.cpu().numpy(), layernorm(x, g, b), rtol=1e-4, atol=1e-4)


def test_torch_float16_inputs():
    torch = pytest.importorskip("torch")
    x, g, b = f16(32, 1024), f16(1024), f16(1024)
    result = autofuse.jit(layernorm)(*(torch.from_numpy(a).cuda() for a in (x, g, b)))
    assert isinstance(result, torch.Tensor) and result.dtype == torch.float16
    np.testing.assert_allclose(result.cpu().numpy(), layernorm(x, g, b), rtol=2e-3, atol=2e-3)


def test_non_contiguous_and_negative_stride_inputs():
    x = f32(64, 80)
    fn = lambda a, b: np.exp(a) + b * 2
    a, b = cupy.asarray(x)[:, ::2], cupy.asarray(x)[::-1, 1::2]
    _check(autofuse.jit(fn)(a, b), fn(x[:, ::2], x[::-1, 1::2]), 1e-6)


def _relax(u):
    """One Jacobi step written in place, and the new sum."""
    u[1:-1] = 0.5 * (u[2:] + u[:-2])
    return u.sum()


def test_mutation_of_device_argument():
    host = f32(100)
    device = cupy.asarray(host)
    expected = host.copy()
    expected_total = _relax(expected)
    total = autofuse.jit(_relax)(device)
    np.testing.assert_allclose(cupy.asnumpy(device), expected, rtol=1e-6)
    np.testing.assert_allclose(float(total), expected_total, rtol=1e-5)


def test_repeated_calls_and_cache():
    f = autofuse.jit(lambda x: np.tanh(x) * 3)
    x = cupy.asarray(f32(1000))
    for _ in range(5):
        out = f(x)
    assert f.cache_info().traces == 1
    np.testing.assert_allclose(cupy.asnumpy(out), np.tanh(cupy.asnumpy(x)) * 3, rtol=1e-6)


@pytest.mark.slow
def test_more_than_2_to_the_31_elements():
    n = (1 << 31) + 4096
    x = cupy.ones(n, dtype=cupy.int8)
    f = autofuse.jit(lambda a: (a * 2 + 1).sum())
    assert int(f(x)) == 3 * n
    y = autofuse.jit(lambda a: a + 1)(x)
    assert int(y[-1]) == 2 and int(y[n // 2]) == 2


# -- CUDA graph replay (the default; jit(cuda_graph=True) holds intermediates, False launches
# kernels one by one) ---------------------------------------------------------------------------

GRAPH_CASES = [c for c in CASES if c[0] in (
    "relu_chain", "sum_squares", "softmax", "layernorm", "mean_var", "arg_reductions",
    "relu_matmul_bias", "batched_matmul", "attention", "ints", "float64", "scalar_arg")]


@pytest.mark.parametrize("mode", [None, True, False])
@pytest.mark.parametrize("name, fn, make, tol", GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES])
def test_cuda_graph_replay_matches_numpy(name, fn, make, tol, mode):
    f = autofuse.jit(fn, cuda_graph=mode)
    for _ in range(3):                    # fresh inputs each call: the graph reads the new ones
        args = make()
        device = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        _check(f(*device), fn(*args), tol)
    text = f.lower(*device).host_source
    assert ("launch_graph(graph, stream)" in text) == (mode is not False)
    assert ("launch_kernel(kernel0" in text or "launch_overlapped(overlapped0, kernel0" in text) \
        == (mode is False)


def _overlap_step(x, w):
    """Kernels of several kinds (rows, a tiled matmul with its epilogue, a transposed read, a
    split sum) each reading what the one before it wrote."""
    d = x - x.mean(-1, keepdims=True)
    y = np.tanh(d @ w) * 0.5 + x.T * 0.25
    return y, (y * y).sum()


@pytest.mark.parametrize("mode, n", [(None, 2048), (False, 192)], ids=["default_large", "one_by_one"])
def test_overlapped_launches_read_what_the_kernel_before_wrote(mode, n):
    """Kernels launched to overlap the end of the one before them (cuda_host: programmatic stream
    serialization) wait for it before touching memory: a chain of calls, each reading the last
    call's result, with a CuPy kernel between some of them, matches NumPy's chain. 2048x2048
    float32 moves 32 MiB a kernel, so the default launches it one by one, overlapping."""
    f = autofuse.jit(_overlap_step, cuda_graph=mode)
    x, w = f32(n, n), f32(n, n) / np.float32(n ** 0.5)
    gx, gw = cupy.asarray(x), cupy.asarray(w)
    totals = []
    for k in range(8):
        x, total = _overlap_step(x, w)
        gx, gtotal = f(gx, gw)
        totals.append((gtotal, total))
        if k % 3 == 1:                  # a CuPy kernel between two calls reads and writes too
            x, gx = x * np.float32(1.5), gx * cupy.float32(1.5)
    _check(gx, x, 1e-4)
    for got, want in totals:
        np.testing.assert_allclose(float(got), want, rtol=1e-4)
    text = f.lower(gx, gw).host_source
    kernels = f.lower(gx, gw).kernels
    assert len(kernels) >= 3 and "launch_overlapped(" in text
    assert text.count("launch_overlapped(") == sum("wait_for_prerequisite()" in k.source
                                                   for k in kernels)


def test_overlapped_launches_on_torch_streams_read_what_the_kernel_before_wrote():
    """The same chain with torch tensors, on a torch stream of its own: launches go to torch's
    current stream, and torch kernels between calls see each call's results."""
    torch = pytest.importorskip("torch")
    f = autofuse.jit(_overlap_step, cuda_graph=False)
    x, w = f32(192, 192), f32(192, 192) / np.float32(192 ** 0.5)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tx, tw = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
        for k in range(6):
            x, total = _overlap_step(x, w)
            tx, ttotal = f(tx, tw)
            if k % 2:
                x, tx = x * np.float32(1.5), tx * 1.5
        stream.synchronize()
    np.testing.assert_allclose(tx.cpu().numpy(), x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(ttotal), total, rtol=1e-4)
    assert "launch_overlapped(" in f.lower(tx, tw).host_source


def test_calls_from_a_new_thread_match_numpy():
    import threading
    fn = lambda x, w: np.tanh(x @ w).sum(0) + 1
    x, w = f32(64, 32), f32(32, 16)
    for mode in (None, False):
        f = autofuse.jit(fn, cuda_graph=mode)
        _check(f(cupy.asarray(x), cupy.asarray(w)), fn(x, w), 1e-4)    # built on this thread
        found = []
        thread = threading.Thread(target=lambda: found.append(
            cupy.asnumpy(f(cupy.asarray(x), cupy.asarray(w)))))
        thread.start()
        thread.join()
        _check(found[0], fn(x, w), 1e-4)


@pytest.mark.parametrize("mode", [None, True])
def test_cuda_graph_results_are_new_arrays_each_call(mode):
    def fn(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), (x * x).sum()
    f = autofuse.jit(fn, cuda_graph=mode)
    a, b = f32(64, 100), f32(64, 100)
    first = f(cupy.asarray(a))
    second = f(cupy.asarray(b))           # must not overwrite the first call's results
    _check(first, fn(a), 1e-5)
    _check(second, fn(b), 1e-5)
    assert first[0].data.ptr != second[0].data.ptr


def test_cuda_graph_on_other_streams_and_torch():
    fn = lambda x, w: np.maximum(x @ w, 0).sum(0)
    f = autofuse.jit(fn, cuda_graph=True)
    x, w = f32(128, 64), f32(64, 32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        got = f(cupy.asarray(x), cupy.asarray(w))
        stream.synchronize()
    _check(got, fn(x, w), 1e-4)
    torch = pytest.importorskip("torch")
    result = autofuse.jit(fn, cuda_graph=True)(torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda())
    np.testing.assert_allclose(result.cpu().numpy(), fn(x, w), rtol=1e-4, atol=1e-4)


def test_cuda_graph_with_mutation_and_with_numpy_inputs():
    host = f32(100)
    expected = host.copy()
    total = _relax(expected)
    device = cupy.asarray(host)
    got = autofuse.jit(_relax, cuda_graph=True)(device)
    np.testing.assert_allclose(cupy.asnumpy(device), expected, rtol=1e-6)
    np.testing.assert_allclose(float(got), total, rtol=1e-5)
    f = autofuse.jit(lambda x: np.tanh(x) + 1, backend="cuda", cuda_graph=True)
    np.testing.assert_allclose(f(host), np.tanh(host) + 1, rtol=1e-6, atol=1e-6)
    assert "no CUDA graph" in f.lower(host).host_source


class _DLPackOnly(Foreign):
    """A CuPy array seen only through DLPack (no __cuda_array_interface__), whose array-API
    namespace wraps CuPy arrays the same way."""

    def __array_namespace__(self, api_version=None):
        return _DLPackNamespace


class _DLPackNamespace:
    @staticmethod
    def from_dlpack(value):
        return _DLPackOnly(cupy.from_dlpack(value))


def test_dlpack_only_device_arrays_are_read_in_place_and_answered_in_kind():
    fn = lambda x, w: (np.maximum(x @ w, 0), np.exp(x).sum(axis=1))
    x, w = f32(64, 32), f32(32, 16)
    f = autofuse.jit(fn)
    for _ in range(2):                    # the second call is a cache hit
        got = f(_DLPackOnly(cupy.asarray(x)), _DLPackOnly(cupy.asarray(w)))
        assert all(type(g) is _DLPackOnly for g in got)
        _check(tuple(g.array for g in got), fn(x, w), 1e-4)
    assert f.cache_info().traces == 1
    host = f32(100)
    expected = host.copy()
    total = _relax(expected)
    argument = _DLPackOnly(cupy.asarray(host))
    got = autofuse.jit(_relax)(argument)
    np.testing.assert_allclose(cupy.asnumpy(argument.array), expected, rtol=1e-6)
    np.testing.assert_allclose(float(got.array), total, rtol=1e-5)


def test_float32_matmul_vector_kernel_against_numpy():
    """emit/matmul_tiles.py's kernel: ragged M/N/K (K % 8 == 4), a batch broadcast, two outputs,
    operands read transposed (x @ w.T, x.T @ w, attention's q @ k^T), and operands and a result
    not 16-byte aligned (views with an offset: the element-wise path)."""
    fn = lambda x, w, b: np.maximum(x @ w + b, 0)
    x, w, b = f32(260, 132), f32(132, 200), f32(200)
    f = autofuse.jit(fn)
    assert "16-byte loads" in f.lower(cupy.asarray(x), cupy.asarray(w), cupy.asarray(b)).kernels[0].strategy
    _check(f(cupy.asarray(x), cupy.asarray(w), cupy.asarray(b)), fn(x, w, b), 1e-4)
    batched = lambda a, w: (a @ w, np.tanh(a @ w) * 2)
    a, w2 = f32(3, 150, 64), f32(64, 136)
    _check(autofuse.jit(batched)(cupy.asarray(a), cupy.asarray(w2)), batched(a, w2), 1e-4)
    for fn2, args in ((lambda x, w: x @ w.T + 1, (f32(260, 132), f32(200, 132))),
                      (lambda x, w: np.tanh(x.T @ w), (f32(132, 260), f32(132, 200))),
                      (lambda q, k: q @ k.swapaxes(-1, -2) * 0.125, (f32(4, 130, 64), f32(4, 136, 64)))):
        g = autofuse.jit(fn2)
        device = [cupy.asarray(v) for v in args]
        assert "16-byte loads" in g.lower(*device).kernels[0].strategy
        _check(g(*device), fn2(*args), 1e-4)
    flat = cupy.asarray(f32(1 + 260 * 132))
    shifted = flat[1:].reshape(260, 132)                # data 4 bytes past an aligned address
    assert shifted.data.ptr % 16 == 4
    _check(f(shifted, cupy.asarray(w), cupy.asarray(b)),
           fn(cupy.asnumpy(shifted), w, b), 1e-4)


def test_rectangular_matmul_tiles_against_numpy():
    """Tuning.tiles_narrow (64 by default): wide x 64 tiles for attention's P @ V (ragged M), a
    bias epilogue at 36 columns, 64 x wide tiles for a result 40 rows tall; tiles_wide 128, 256."""
    cases = ((lambda p, v: p @ v, (f32(4, 300, 132), f32(4, 132, 64)), "{w}x64"),
             (lambda x, w, b: np.maximum(x @ w + b, 0), (f32(520, 68), f32(68, 36), f32(36)), "{w}x64"),
             (lambda x, w: x @ w - 1, (f32(40, 132), f32(132, 300)), "64x{w}"))
    for wide in (128, 256):
        for fn, args, tiles in cases:
            g = autofuse.jit(fn, tuning=Tuning(tiles_narrow=64, tiles_wide=wide))
            device = [cupy.asarray(v) for v in args]
            assert g.lower(*device).kernels[0].strategy.startswith(f"tiled {tiles.format(w=wide)}x8")
            _check(g(*device), fn(*args), 1e-4)


@pytest.mark.parametrize("dtype, block", [(np.float32, 256), (np.float16, 128)])
def test_rows_kernel_registers_fit_its_launch_bounds(dtype, block):
    """Layernorm's rows kernel, loaded: ptxas kept to the launch bounds' register budget
    (min_blocks_per_sm blocks of `block` threads fit an SM's 64K registers) without spilling, and
    the loaded kernel's resources show in its launch configuration. float16 rows take 128 threads
    of 32 elements each (Tuning.row_bytes)."""
    make = f32 if dtype == np.float32 else f16
    x, g, b = make(64, 4096), make(4096), make(4096)
    f = autofuse.jit(layernorm)
    _check(f(cupy.asarray(x), cupy.asarray(g), cupy.asarray(b)), layernorm(x, g, b),
           1e-4 if dtype == np.float32 else 2e-3)
    (kernel,) = f.lower(cupy.asarray(x), cupy.asarray(g), cupy.asarray(b)).kernels
    launch = kernel.launch
    assert launch["block"] == block and launch["min_blocks_per_sm"] >= 1024 // block
    assert launch["local_bytes"] == 0
    assert -(-launch["registers"] // 8) * 8 * block * launch["min_blocks_per_sm"] <= 65536


def _same_bits(got, want):
    """Equal bit for bit, any NaN matching any NaN."""
    got, want = np.asarray(got), np.asarray(want)
    both_nan = np.isnan(got) & np.isnan(want)
    bits = np.uint16 if want.dtype == np.float16 else np.uint32
    differ = (got.view(bits) != want.view(bits)) & ~both_nan
    return np.flatnonzero(differ)


def test_division_by_an_unchanging_divisor_is_numpys_bit_for_bit():
    """intrinsics/divide.py (Tuning.invariant_divide, on by default): a float32 a / b with b the same over a
    thread's vector loop is taken as a multiply by b's reciprocal and a correction. Against NumPy's division bit for bit: every significand at
    three exponents with random signs, and values outside the correction's ranges (zeros,
    subnormals, huge values, infinities, NaN), for scalar divisors in and outside the ranges, a
    constant divisor, and a row's maximum (a rows kernel)."""
    significands = np.arange(1 << 23, dtype=np.uint32)
    signs = (rng.random(significands.size) < 0.5).astype(np.uint32) << 31
    a = np.concatenate([(((e << 23) | significands) | signs).view(np.float32) for e in (127, 167, 87)]
                       + [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 2.0 ** -101,
                                    -(2.0 ** 101), 3e38, 1e-38, 2.0 ** -100, 2.0 ** 100, 2.0 ** -126,
                                    5.0, -7.5], np.float32)])     # (a multiple of 4: vectors)
    device = cupy.asarray(a)
    by_scalar = autofuse.jit(lambda x, s: x / s, backend="cuda")
    for s in (3.0, 0.1, 7.3e-3, 1234.5, -2.2, 1 - 2.0 ** -24, 2.0 ** 27, 2.0 ** -27, np.inf, 0.0,
              -0.0, np.nan, 2.0 ** -26, 2.0 ** 26):
        s = np.float32(s)
        with np.errstate(all="ignore"):
            want = a / s
        bad = _same_bits(cupy.asnumpy(by_scalar(device, s)), want)
        assert bad.size == 0, (s, a[bad[:5]])
    # a base address not 16-byte aligned: the element-by-element path (IEEE division)
    bad = _same_bits(cupy.asnumpy(by_scalar(device[1:], np.float32(3.0))), a[1:] / np.float32(3.0))
    assert bad.size == 0, a[1:][bad[:5]]
    by_constant = autofuse.jit(lambda x: x / 3.0, backend="cuda")
    assert "cuda.fma" in by_constant.lower(device).kernels[0].source
    bad = _same_bits(cupy.asnumpy(by_constant(device)), a / np.float32(3.0))
    assert bad.size == 0, a[bad[:5]]
    rows = a[:3 * (1 << 23)].reshape(-1, 4096)
    by_row = autofuse.jit(lambda x: x / np.abs(x).max(axis=1, keepdims=True), backend="cuda")
    (kernel,) = by_row.lower(cupy.asarray(rows)).kernels
    assert kernel.strategy.startswith("rows") and "cuda.fma" in kernel.source
    bad = _same_bits(cupy.asnumpy(by_row(cupy.asarray(rows))),
                     rows / np.abs(rows).max(axis=1, keepdims=True))
    assert bad.size == 0, rows.reshape(-1)[bad[:5]]


def test_float16_native_ops_are_numpys_bit_for_bit():
    """intrinsics/half.py (Tuning.native_halves): float16 add, subtract and multiply as add.rn.f16 and
    the like, and chains of them kept in halves, against NumPy's float16 loops bit for bit: every
    float16 value (subnormals, zeros of both signs, infinities, NaN) against four shuffles of
    them, a chain whose multiplies and adds must not fuse, a row vector, a scalar argument, and
    float32 ops (square root, division: correctly rounded) between float16 ones."""
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    a = np.tile(every, 4)
    b = np.concatenate([rng.permutation(every) for _ in range(4)])
    x, y = cupy.asarray(a), cupy.asarray(b)
    programs = [
        ("sum, difference, product", lambda p, q: (p + q, p - q, p * q)),
        ("chain", lambda p, q: (p * q + p) * q - p * 0.3),
        ("with float32 ops", lambda p, q: np.sqrt(np.abs(p * q)) * q + p / q),
    ]
    with np.errstate(all="ignore"):
        for name, fn in programs:
            jitted = autofuse.jit(fn, backend="cuda")
            assert "half_multiply" in jitted.lower(x, y).kernels[0].source, name
            got, want = jitted(x, y), fn(a, b)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                bad = _same_bits(cupy.asnumpy(g), w)
                assert bad.size == 0, (name, a[bad[:5]], b[bad[:5]])
        rows, row = a.reshape(-1, 1024), b[:1024]
        bad = _same_bits(cupy.asnumpy(autofuse.jit(lambda p, r, s: p * r - s, backend="cuda")(
            cupy.asarray(rows), cupy.asarray(row), np.float16(1.5))), rows * row - np.float16(1.5))
        assert bad.size == 0, rows.reshape(-1)[bad[:5]]


VIEWS = {"[::2]": lambda b: b[::2], "[::-1]": lambda b: b[::-1], "[:, ::2]": lambda b: b[:, ::2],
         "[::-2, ::3]": lambda b: b[::-2, ::3], ".T": lambda b: b.T, ".T[::2]": lambda b: b.T[::2]}


@pytest.mark.parametrize("view", list(VIEWS))
def test_numpy_arguments_with_gaps_and_negative_steps(view):
    """NumPy views reach the device compact and C-ordered, and their kernels read them so (the
    general path once copied them compactly under kernels compiled with the host strides)."""
    base = np.random.default_rng(5).standard_normal((64, 300)).astype(np.float32)
    x = VIEWS[view](base)
    for fn in (lambda a: a * 2 + 1, lambda a: np.cumsum(a, axis=-1), lambda a: a.sum(0),
               lambda a: np.exp(a - a.max(-1, keepdims=True))):
        got = autofuse.jit(fn, backend="cuda")(x)
        np.testing.assert_allclose(np.asarray(got), fn(x), rtol=1e-4, atol=1e-3)


# -- a long sort by CuPy or torch, written into the generated host call (runtime/host.py) ------

@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_library_sorts_in_the_generated_call(library):
    """A lone long argsort after a kernel, and the sort a median's kernel reads: the library's
    sort runs inline between the launches (host_source), every call, with new results."""
    def fn(a):
        return np.argsort(a * 2, axis=-1), np.median(a, axis=-1)
    if library == "torch":
        torch = pytest.importorskip("torch")
        move, back = (lambda a: torch.from_numpy(a).cuda()), (lambda a: a.cpu().numpy())
    else:
        move, back = cupy.asarray, cupy.asnumpy
    f = autofuse.jit(fn)
    for _ in range(3):
        x = f32(3, 5000)
        order, median = f(move(x))
        np.testing.assert_array_equal(back(order), np.argsort(x * 2, axis=-1, kind="stable"))
        np.testing.assert_allclose(back(median), np.median(x, axis=-1), rtol=1e-6)
    text = f.lower(move(x)).host_source
    assert text.startswith("# kernels launched one by one, not as a CUDA graph: the call runs "
                           f"{library}'s sort, sort"), text
    assert text.count("sort_") >= 2 and "launch_graph" not in text, text


@pytest.mark.parametrize("mode", [None, False], ids=["graph", "launches"])
@pytest.mark.parametrize("first", ["aligned", "shifted"])
def test_arguments_aligned_at_the_first_call_and_not_after(mode, first):
    """Kernels assume arguments aligned at the first call 16-byte aligned (Tuning.assume_aligned).
    A later call of the same signature (same shape, dtype, strides) whose argument starts 4 bytes
    past a boundary takes the program built for it (CudaProgram.misaligned), and back; both
    orders, graph replay and separate launches, pointwise and rows kernels, answers NumPy's."""
    def shifted(host):
        flat = cupy.empty(host.size + 4, host.dtype)
        view = flat[1:1 + host.size].reshape(host.shape)
        view[...] = cupy.asarray(host)
        assert view.data.ptr % 16
        return view

    programs = [(lambda x, b: np.tanh(x + b) * 0.5, (f32(512, 256), f32(256)), 1e-6),
                (layernorm, (f32(64, 1024), f32(1024), f32(1024)), 1e-4),
                (softmax, (f16(64, 1024),), 1e-2)]
    for fn, host, tol in programs:
        jitted = autofuse.jit(fn, cuda_graph=mode)
        aligned = [cupy.asarray(a) for a in host]
        moved = [shifted(host[0])] + aligned[1:]
        order = [aligned, moved, aligned, moved] if first == "aligned" else \
            [moved, aligned, moved, aligned]
        expected = fn(*host)
        for args in order:
            got = cupy.asnumpy(jitted(*args))
            np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                       rtol=tol, atol=tol)
        assert jitted.cache_info().entries == 1
