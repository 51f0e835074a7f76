"""Shape classes on a real GPU: 50 batch sizes through the class kernels (sizes as arguments)
against NumPy with CuPy and NumPy inputs, sizes past the stand-in, and main's group kinds whose
CUDA strategies keep their sizes static (correct at every size, the reason shown).

Run on the device machine: `python -m pytest -m gpu tests/test_dynamic_shapes_gpu.py`.
"""
import numpy as np
import pytest

import autofuse
from dynamic_sim_cases import stencil, transposed_sum
from programs import layernorm, softmax

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

RNG = np.random.default_rng(3033)
SIZES = [9, 0, 1] + [n for n in range(2, 50) if n != 9]         # 50 batch sizes
W = (RNG.standard_normal((64, 48)) / 8).astype(np.float32)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + np.tanh(np.float32(0.7978845608) * (y + np.float32(0.044715) * y ** 3)))


def steps(x, y):
    for _ in range(5):
        x = np.tanh(x * np.float32(0.9) + y)
        y = y * np.float32(0.5) - x
    return x + y


def dense(x, w):
    return np.maximum(x @ w, np.float32(0))


KINDS = {
    "elementwise": (bias_gelu, lambda n: (f32(n, 64), f32(64)), 2),
    "loop": (steps, lambda n: (f32(n, 64), f32(n, 64)), 2),
    "rows softmax": (softmax, lambda n: (f32(n, 96),), 2),
    "rows layernorm": (layernorm, lambda n: (f32(n, 96), f32(96), f32(96)), 2),
    "product": (dense, lambda n: (f32(n, 64), W), 2),
}


def _check(fn, got, args, tolerance=2e-5):
    host = [cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a for a in args]
    want = fn(*host)
    got = cupy.asnumpy(got) if isinstance(got, cupy.ndarray) else got
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("inputs", ["cupy", "numpy"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_fifty_batch_sizes_on_the_gpu(kind, inputs):
    fn, make, most = KINDS[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in SIZES:
        args = make(n)
        if inputs == "cupy":
            args = tuple(cupy.asarray(a) for a in args)
        _check(fn, f(*args), args, 1e-4 if kind == "product" else 2e-5)
    info = f.cache_info()
    assert info.compiles <= most, (kind, info)
    assert "# dynamic: n0 = x.shape[0]" in f.lower(*make(7)).as_text("fused")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_sizes_past_the_stand_in(kind):
    fn, make, _ = KINDS[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in (5, 6, 3000, 70001):               # the class traced at 1009: later sizes above it
        args = tuple(cupy.asarray(a) for a in make(n))
        _check(fn, f(*args), args, 1e-4 if kind == "product" else 2e-5)
    assert f.cache_info().instances >= 3


def cumsum_rows(x):
    return np.cumsum(x * np.float32(2), axis=1)


def sort_rows(x):
    return np.sort(x * np.float32(1.5), axis=-1)


def take_rows(table, i):
    return np.take(table, i, axis=0) * np.float32(2)


def column_sums(x):
    return (x * x).sum(axis=0)


# transposes (tile counts from the sizes; 16-byte vectors where the call's tiles are full) and
# stencils' row strips (the grid's rows from the size): the compiles 50 sizes take at most (a
# stencil's sizes 0-3 compile on their own: the text says why)
TILED = {
    "transpose": (transposed_sum, lambda n: (f32(64, n), f32(n, 64)), 2),
    "stencil": (stencil, lambda n: (f32(n, 256),), 6),
}


@pytest.mark.parametrize("kind", sorted(TILED))
def test_transposes_and_strips_over_fifty_sizes(kind):
    fn, make, most = TILED[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in [37] + [n for n in range(50) if n != 37] + [4096, 70001]:
        args = tuple(cupy.asarray(a) for a in make(n))
        _check(fn, f(*args), args, 1e-5)
    assert f.cache_info().compiles <= most, f.cache_info()
    lowered = f.lower(*(cupy.asarray(a) for a in make(4096)))
    assert "# dynamic: n0" in lowered.as_text("fused")
    assert ("vectors" in lowered.kernels[0].strategy), lowered.kernels[0].strategy


STATIC = {
    "scan": (cumsum_rows, lambda n: (f32(n, 40),)),
    "sort": (sort_rows, lambda n: (f32(n, 40),)),
    "gather": (take_rows, lambda n: (f32(20, 40), RNG.integers(-20, 20, n))),
    "columns": (column_sums, lambda n: (f32(n, 40),)),
}


@pytest.mark.parametrize("kind", sorted(STATIC))
def test_kinds_with_static_sizes_are_right_at_every_size(kind):
    fn, make = STATIC[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in (4, 5, 1, 0, 33, 6):
        args = tuple(cupy.asarray(a) for a in make(n))
        _check(fn, f(*args), args, 1e-4)
    text = f.lower(*make(7)).as_text("fused")
    assert "# dynamic: n0" in text or "# static: " in text


def attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * np.float32(0.125)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def test_attention_keeps_its_flash_kernel_under_the_automatic_policy():
    """A class would run attention as three kernels (1.8x the time on an H200): the automatic
    policy keeps the sequence length static, with the reason, and every size right."""
    f = autofuse.jit(attention, backend="cuda")
    k, v = cupy.asarray(f32(2, 128, 64)), cupy.asarray(f32(2, 128, 64))
    for n in (64, 63, 100):
        q = cupy.asarray(f32(2, n, 64))
        _check(attention, f(q, k, v), (q, k, v), 1e-4)
    lowered = f.lower(cupy.asarray(f32(2, 100, 64)), k, v)
    assert [kernel.strategy.startswith("flash attention") for kernel in lowered.kernels] == [True]
    assert "# static: q.shape[1]" in lowered.as_text("fused")


def test_attention_over_a_varying_batch_is_one_flash_class_kernel():
    """The batch of attention varies: from the second size one class of the flash kernel (the
    batch an argument, the grid from it at each call), right at each size; sizes 1 and 0 run it
    (it had compiled the flash kernel for 4 sizes, then a class of three kernels)."""
    f = autofuse.jit(attention, backend="cuda")
    for n in (3, 5, 6, 7, 9, 11, 12, 1, 0, 40):
        q, k, v = (cupy.asarray(f32(n, 100, 32)) for _ in range(3))
        _check(attention, f(q, k, v), (q, k, v), 1e-4)
    assert f.cache_info().compiles == 2, f.cache_info()
    kernels = f.lower(*(cupy.asarray(f32(13, 100, 32)) for _ in range(3))).kernels
    assert [kernel.strategy.startswith("flash attention") for kernel in kernels] == [True]
    half = autofuse.jit(attention_half, backend="cuda")     # (the tensor-core flash kernel)
    for n in (2, 3, 4):
        q, k, v = (cupy.asarray(f32(n, 8, 128, 64).astype(np.float16)) for _ in range(3))
        host = [cupy.asnumpy(a).astype(np.float32) for a in (q, k, v)]
        got = cupy.asnumpy(half(q, k, v)).astype(np.float32)
        np.testing.assert_allclose(got, attention_half(*host), rtol=2e-2, atol=2e-3)
    assert half.cache_info().compiles == 2 and half.cache_info().instances == 2
    assert "tensor cores" in half.lower(q, k, v).kernels[0].strategy


def attention_half(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * 0.125
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def logits(x, w):
    return x @ w


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_tensor_core_products_whose_rows_vary(dtype):
    """float64 and float16 products as a class run the tensor-core kernels (their sizes and
    strides are arguments, the tile as for many rows): rows that are no multiple of a tile, a
    size past the stand-in, sizes 0 and 1 (its size-1 axes keep their strides in the class),
    against NumPy (float16: float32 sums, NumPy's rounding)."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((192, 136)).astype(dtype)
    bias = rng.standard_normal(136).astype(dtype)

    def dense(x, w, b):
        return np.maximum(x @ w + b, dtype(0))
    f = autofuse.jit(dense, backend="cuda", dynamic=True)
    for n in (1000, 999, 0, 1, 3, 130, 5003):
        x = rng.standard_normal((n, 192)).astype(dtype)
        got = cupy.asnumpy(f(cupy.asarray(x), cupy.asarray(w), cupy.asarray(bias)))
        want = dense(x.astype(np.float64), w.astype(np.float64), bias.astype(np.float64))
        tolerance = 1e-10 if dtype == np.float64 else 2e-2
        assert got.shape == want.shape and got.dtype == dtype
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)
    lowered = f.lower(cupy.asarray(rng.standard_normal((77, 192)).astype(dtype)),
                      cupy.asarray(w), cupy.asarray(bias))
    assert "# dynamic: n0 = x.shape[0]" in lowered.as_text("fused")
    assert lowered.kernels[0].strategy.startswith("tensor cores"), lowered.kernels[0].strategy
    assert f.cache_info().compiles == 1, f.cache_info()


def gradient(x, g):
    return x.T @ g


@pytest.mark.parametrize("columns", [10, 16])
@pytest.mark.parametrize("fn", [logits, gradient], ids=["x @ w", "x.T @ g"])
def test_few_columns_keep_their_runs_in_a_class(fn, columns):
    """x @ w and x.T @ g with a few columns compute runs of a row's outputs a thread
    (emit/runs.py); their class kernels do too (x's rows staged through shared memory as for many
    rows; the two-stage kernel's chunks chosen at launch, 4 elements a step): a class from the
    second size; every size right."""
    second = f32(64, columns) if fn is logits else None
    f = autofuse.jit(fn, backend="cuda")
    for n in (40000, 39999, 40001, 7, 70001, 2):
        x = cupy.asarray(f32(n, 64))
        other = cupy.asarray(second) if second is not None else cupy.asarray(f32(n, columns))
        _check_each(fn, f(x, other), (x, other), 1e-4, summed=64 if fn is logits else n)
    assert (f.cache_info().compiles, f.cache_info().instances) == (2, 5), f.cache_info()
    x = cupy.asarray(f32(40002, 64))
    other = cupy.asarray(second) if second is not None else cupy.asarray(f32(40002, columns))
    lowered = f.lower(x, other)
    assert "# dynamic: n0 = x.shape[0]" in lowered.as_text("fused")
    assert f"{columns} outputs a thread" in lowered.kernels[0].strategy, lowered.kernels[0]


def test_the_softmax_class_narrows_its_row_bound():
    f = autofuse.jit(softmax, backend="cuda")
    for n in (5, 6):                    # (rows of 1000: a block a row; shorter ones row tiles)
        f(cupy.asarray(f32(n, 1000)))
    source = f.lower(cupy.asarray(f32(7, 1000))).kernels[0].source
    assert "while row < ix(n0):" in source


def test_a_float32_product_class_takes_the_tiled_kernel():
    """M varies: the float32 tiles kernel (16-byte loads, double-buffered) with M as an argument
    in its guards and its grid from M at each call, not the compact kernel (1.13x its time)."""
    f = autofuse.jit(dense, backend="cuda")
    for n in (300, 301, 1, 129, 4097):
        x = cupy.asarray(f32(n, 64))
        _check(dense, f(x, W), (x, W), 1e-4)
    kernel = f.lower(cupy.asarray(f32(257, 64)), W).kernels[0]
    assert kernel.strategy.startswith("tiled") and "16-byte loads" in kernel.strategy
    assert "n0" in kernel.source and kernel.launch["grid"][1] == -(-257 // 256)


def bias_gradient(g):
    return (g * np.float32(2)).sum(axis=0)


def column_sum(x):
    return x.sum(axis=0)


def column_mean(x):
    return x.mean(axis=0)


def mse(p, y):
    return ((p - y) ** 2).mean()


# reductions across the batch (two-stage and split kernels whose chunks or grid are chosen at
# launch): the compiles 50 sizes take at most: the first size and the class (a mean's count is
# a form of the size, kept as written where it is 1)
REDUCTIONS = {
    "column sum": (column_sum, lambda n: (f32(n, 256),), 2),
    "bias gradient": (bias_gradient, lambda n: (f32(n, 256),), 2),
    "column mean": (column_mean, lambda n: (f32(n, 256),), 2),
    "mse 2-D": (mse, lambda n: (f32(n, 256), f32(n, 256)), 2),
    "mse 1-D": (mse, lambda n: (f32(64 * n), f32(64 * n)), 2),
}


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_fifty_batch_sizes_of_reductions_on_the_gpu(kind):
    fn, make, most = REDUCTIONS[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in SIZES:
        args = tuple(cupy.asarray(a) for a in make(n))
        with np.errstate(invalid="ignore", divide="ignore"):
            _check(fn, f(*args), args, 1e-4)
    info = f.cache_info()
    text = f.lower(*make(7)).as_text("fused")
    assert info.compiles <= most, (kind, info, text)
    assert "# dynamic: n0" in text and "chosen at launch" in f.lower(*make(7)).kernels[0].strategy


def column_max_argmax(x):
    return x.max(axis=0), x.argmax(axis=0)


def kept_after(x):
    return x.sum(axis=0)


def epilogue(x, b):
    return x.sum(axis=0) * 2 + b


def total_argmax(x):
    return x.argmax(), (x * x).sum()


PAST = {
    "column sum float32": (column_sum, lambda n: (f32(n, 256),)),
    "column sum float64 4096": (column_sum, lambda n: (RNG.standard_normal((n, 4096)),)),
    "column max argmax": (column_max_argmax, lambda n: (f32(n, 100),)),
    "column mean float64": (column_mean, lambda n: (RNG.standard_normal((n, 33)),)),
    "kept axes after": (kept_after, lambda n: (f32(n, 3, 5),)),
    "rows layout": (lambda x: (x * x).sum(axis=(0, 2)), lambda n: (f32(n, 3, 64),)),
    "epilogue": (epilogue, lambda n: (f32(n, 256), f32(256))),
    "long columns": (column_sum, lambda n: (f32(n, 70000),)),
    "mse 1-D": (mse, lambda n: (f32(n), f32(n))),
    "mse float64": (mse, lambda n: (RNG.standard_normal((n, 7)), RNG.standard_normal((n, 7)))),
    "total argmax": (total_argmax, lambda n: (f32(n),)),
}


def _check_each(fn, got, args, tolerance, summed=1):
    """Each result against NumPy's, its values against NumPy's in float64 where the inputs are
    float32 (two float32 sums of `summed` terms in other orders differ by up to about
    `summed` x 2^-24 x their terms' size: a bound of 1e-3 failed a correct sum of 70001 rows)."""
    host = [cupy.asnumpy(a) for a in args]
    want = fn(*host)
    exact = fn(*[h.astype(np.float64) if h.dtype == np.float32 else h for h in host])
    for g, w, x in zip(got if isinstance(want, tuple) else (got,),
                       want if isinstance(want, tuple) else (want,),
                       exact if isinstance(exact, tuple) else (exact,)):
        g = cupy.asnumpy(g) if isinstance(g, cupy.ndarray) else np.asarray(g)
        assert g.shape == np.shape(w) and g.dtype == np.asarray(w).dtype
        reference = x if np.asarray(w).dtype.kind == "f" else w
        np.testing.assert_allclose(g, reference, rtol=tolerance,
                                   atol=tolerance + 4e-7 * summed * 4)


@pytest.mark.parametrize("kind", sorted(PAST))
def test_reductions_at_sizes_past_the_stand_in(kind):
    """Sizes below, at and far past the stand-in (1009), none a multiple of a chunk: the chunks
    and grid chosen at launch cover every row once; the same answer run to run (partials merged
    in chunk order)."""
    fn, make = PAST[kind]
    f = autofuse.jit(fn, backend="cuda")
    sizes = {"long columns": (5, 6, 2, 3, 301),
             "column sum float64 4096": (5, 6, 2, 3, 1013, 3001, 9001)}.get(
        kind, (5, 6, 2, 3, 1013, 3001, 70001))
    for n in sizes:
        args = tuple(cupy.asarray(a) for a in make(n))
        _check_each(fn, f(*args), args, 1e-4, summed=n)
        first, again = f(*args), f(*args)
        for a, b in zip(first if isinstance(first, tuple) else (first,),
                        again if isinstance(again, tuple) else (again,)):
            assert bool((cupy.asarray(a) == cupy.asarray(b)).all()), (kind, n)
    assert f.cache_info().instances >= 4
    assert "# dynamic: n0" in f.lower(*make(7)).as_text("fused")


def batchnorm(x, g, b):
    m = x.mean(axis=0)
    v = ((x - m) ** 2).mean(axis=0)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def column_softmax(x, g, b):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


@pytest.mark.parametrize("fn", [batchnorm, column_softmax], ids=lambda fn: fn.__name__)
def test_whole_column_programs_over_fifty_batch_sizes(fn):
    """Column tiles as a class kernel (the batch a size argument, the grid from the columns),
    under the automatic policy: 50 batch sizes and sizes past the stand-in, against NumPy in
    float64 (float32 sums within a bound that grows with the rows summed); the first size, the
    class and size 1 compile (at size 1 a row-shaped output has the reduced shape: the text says
    it compiles on its own)."""
    f = autofuse.jit(fn, backend="cuda")
    for n in SIZES + [3000, 70001]:
        host = (f32(n, 256), f32(256), f32(256))
        args = tuple(cupy.asarray(a) for a in host)
        try:
            with np.errstate(all="ignore"):
                want = fn(*(a.astype(np.float64) for a in host))
        except ValueError:              # (the max of no rows)
            with pytest.raises(ValueError):
                f(*args)
            continue
        with np.errstate(all="ignore"):
            got = cupy.asnumpy(f(*args))
            own = np.abs(fn(*host).astype(np.float64) - want)
        bound = 2e-7 * max(n, 1) * 8 + 1e-5
        error = np.abs(got.astype(np.float64) - want)
        ok = (error <= bound * (1 + np.abs(want)) + 4 * own) | (np.isnan(got) & np.isnan(want))
        assert got.dtype == np.float32 and ok.all(), (n, np.nanmax(error))
    text = f.lower(*(cupy.asarray(a) for a in (f32(7, 256), f32(256), f32(256)))).as_text("fused")
    assert "# dynamic: n0 = x.shape[0]" in text, text
    assert f.cache_info().compiles <= 2 + text.count("compiles on its own"), f.cache_info()


def test_few_long_rows_beside_a_rows_class():
    """Rows that vary in number, 2^18 elements long: the class (a block a row) runs many rows;
    few rows, which it would run on a few SMs, compile on their own (two-stage rows, each row
    over many blocks), and a first call at few rows keeps the size static (the kinds check);
    every answer against NumPy."""
    long = 1 << 18
    f = autofuse.jit(lambda x: x.sum(axis=-1), backend="cuda")
    for n in (600, 601, 3, 650, 4):
        x = cupy.random.standard_normal((n, long), dtype=np.float32)
        np.testing.assert_allclose(cupy.asnumpy(f(x)),
                                   cupy.asnumpy(x).astype(np.float64).sum(-1), rtol=1e-4,
                                   atol=1e-2)
    assert f.lower(cupy.empty((4, long), np.float32)).kernels[0].strategy.startswith(
        "two-stage rows")
    assert f.cache_info().instances >= 2
    g = autofuse.jit(lambda x: x.max(axis=-1), backend="cuda")
    for n in (3, 4, 5):
        x = cupy.random.standard_normal((n, long), dtype=np.float32)
        assert bool((g(x) == x.max(axis=-1)).all())
    assert "are of other kinds than a class's" in g.lower(cupy.empty((5, long), np.float32)) \
        .as_text("fused")
