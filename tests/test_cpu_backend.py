"""CPU backend kernels: every group kind and strategy against NumPy, on fresh random inputs,
with poisoned output buffers, odd layouts, 0-d and size-0 arrays, both sides of the parallel and
split thresholds, and typed constants in the generated source."""
from __future__ import annotations

import re

import numpy as np
import pytest

import autofuse
from autofuse.backends.cpu import kernel as cpu_kernel
from autofuse.backends import cpu
from conftest import assert_same, random_array

F32 = np.float32
PAR = cpu_kernel.PARALLEL_ELEMENTS
SPLIT = cpu_kernel.SPLIT_ELEMENTS


@pytest.fixture(autouse=True)
def poisoned_outputs(monkeypatch):
    """Kernel outputs start as NaN / max int / True, so an element left unwritten shows."""
    def poisoned(shape, dtype):
        dtype = np.dtype(dtype)
        fill = (np.nan if dtype.kind == "f" else True if dtype.kind == "b"
                else np.iinfo(dtype).max)
        return np.full(shape, fill, dtype)
    monkeypatch.setattr(cpu, "new_output", poisoned)


def check(fn, *args, strategies=(), loose=False, atol=None):
    """Run `fn` through autofuse (CPU backend) and NumPy; the kernels' strategies must hold
    each of `strategies`. Returns the lowered program."""
    jitted = autofuse.jit(fn, backend="cpu")
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    assert_same(jitted(*args), fn(*copies), loose=loose, atol=atol)
    lowered = jitted.lower(*args)
    assert lowered.backend == "cpu"
    got = [k.strategy for k in lowered.kernels]
    for strategy in strategies:
        assert any(s.startswith(strategy) for s in got), (strategy, got)
    return lowered


def chain(x, y, z, w):
    return np.maximum(x * y + z, 0) * w


def gelu(x, b):
    h = x + b
    return F32(0.5) * h * (F32(1) + np.tanh(F32(0.7978845608) * (h + F32(0.044715) * h ** 3)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + F32(1e-5)) * g + b


# -- elementwise: flat and nest, serial and parallel ----------------------------------------------
@pytest.mark.parametrize("size", [PAR // 64 - 1, PAR // 64 + 1], ids=["serial", "parallel"])
def test_flat_chain(rng, size):
    args = [random_array((64, size), F32, rng) for _ in range(4)]
    lowered = check(chain, *args, strategies=["flat"])
    assert lowered.kernels[0].source.count("numba.prange") == (size * 64 >= PAR)


@pytest.mark.parametrize("rows", [PAR // 128 - 1, PAR // 128 + 3])
def test_nest_gelu_row_bias(rng, rows):
    x, b = random_array((rows, 128), F32, rng), random_array((128,), F32, rng)
    lowered = check(gelu, x, b, strategies=["nest"], loose=True)
    assert ("numba.prange" in lowered.kernels[0].source) == (rows * 128 >= PAR)


@pytest.mark.parametrize("layout", ["stride2", "reversed", "F"])
@pytest.mark.parametrize("dtype", [F32, np.float64, np.int32, np.int64])
def test_layouts(rng, layout, dtype):
    x = random_array((33, 20), dtype, rng, layout=layout)
    y = random_array((33, 20), dtype, rng, layout="C")
    check(lambda a, b: a * b + (a - 3), x, y)
    check(lambda a: (a * 2).sum(axis=0), x, loose=True)
    check(lambda a: (a + 1).max(axis=-1), x)


def test_zero_d_and_size_zero(rng):
    s = random_array((), F32, rng)
    check(lambda a: a * 2 + 1, s)
    check(lambda a, b: a * b, s, random_array((4, 5), F32, rng))
    check(lambda a: (a * a).sum(), s)
    empty = random_array((0, 7), F32, rng)
    check(lambda a: np.exp(a) + 1, empty)
    check(lambda a: a.sum(axis=-1), empty)
    check(lambda a: a.sum(axis=0), empty)
    check(lambda a: a.sum(), empty)
    check(softmax, random_array((0, 5), F32, rng))
    check(lambda a, b: a @ b, random_array((0, 4), F32, rng), random_array((4, 3), F32, rng))


# -- reductions: rows (laned and row buffers), split ----------------------------------------------
@pytest.mark.parametrize("cols", [1, 7, 15, 16, 17, 1000])
@pytest.mark.parametrize("dtype", [F32, np.float64, np.int32])
def test_row_reductions_lanes_and_tails(rng, cols, dtype):
    x = random_array((9, cols), dtype, rng)
    check(lambda a: (a * a).sum(axis=-1), x, strategies=["rows"], loose=True)
    check(lambda a: a.max(axis=-1, keepdims=True) - a.min(axis=-1, keepdims=True), x)
    check(lambda a: a.argmax(axis=-1), x)
    if dtype != np.int32:
        check(lambda a: np.prod(a / 4 + 1, axis=-1), x, loose=True)


def test_max_propagates_nan_in_any_lane(rng):
    x = random_array((5, 40), F32, rng)
    x[1, 3] = np.nan
    x[2, 39] = np.nan
    x[3, 17] = np.nan
    check(lambda a: a.max(axis=-1), x)
    check(lambda a: a.min(axis=-1), x)
    check(softmax, x, loose=True)


@pytest.mark.parametrize("shape", [(7, 33), (PAR // 256 + 1, 256), (3, 4, 50)])
def test_softmax_and_layernorm_rows(rng, shape):
    x = random_array(shape, F32, rng)
    g, b = random_array(shape[-1:], F32, rng), random_array(shape[-1:], F32, rng)
    lowered = check(softmax, x, strategies=["rows"], loose=True)
    source = lowered.kernels[0].source
    # exp(x - max) is computed once a row: kept in a row buffer for the final pass
    assert "np.empty(" in source and re.search(r"row\d+\[r\d\] / red", source)
    assert "exp" not in source.rsplit("for r", 1)[1]
    check(layernorm, x, g, b, strategies=["rows"], loose=True)


def test_column_and_middle_axis_reductions(rng):
    x = random_array((40, 6, 18), F32, rng)
    check(lambda a: a.sum(axis=0), x, loose=True)
    check(lambda a: a.sum(axis=1), x, loose=True)
    check(lambda a: a.sum(axis=(0, 2)), x, loose=True)
    check(lambda a: np.exp(a).mean(axis=(1, 2), keepdims=True), x, loose=True)


def _softmax0(a):
    e = np.exp(a - a.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


@pytest.mark.parametrize("shape", [(7, 5), (1, 9), (300, 517), (3, 1, 4), (4, 6, 300), (0, 5),
                                   (1000, 70), (3, 700, 40), (2, 150, 5000)])
def test_columns_layout_reduces_rows_of_accumulators(rng, shape):
    """Reductions over the axis before the contiguous last one ('columns': tiles of contiguous
    columns, the inner loop over them; plain ones on many rows also in blocks of rows merged at
    the end), whole-column programs, and non-contiguous views."""
    x = random_array(shape, F32, rng)
    if shape[-2] >= 128 and x.size >= PAR:
        x.flat[::97] = np.nan           # NaN wins max and argmin wherever a block meets one
        check(lambda v: v.max(axis=-2), x, strategies=["columns in blocks of rows"])
        check(lambda v: v.argmin(axis=-2), x, strategies=["columns in blocks of rows"])
        x = random_array(shape, F32, rng)
    for a in (x, x[::-1], x[..., ::-1]):
        columns = ["columns"] if shape[-1] > 1 and shape[-2] > 0 else []
        check(lambda v: v.sum(axis=-2), a, strategies=columns, loose=True, atol=1e-4)
        if shape[-2] == 0:
            continue
        check(lambda v: np.exp(v).max(axis=-2, keepdims=True), a, loose=True)
        check(lambda v: (v > 0.5).any(axis=-2), a)
        check(lambda v: v.argmin(axis=-2), a)
        if len(shape) == 2:
            check(lambda v: (v - v.mean(axis=0)) / (v.std(axis=0) + 1), a, loose=True)
            check(_softmax0, a, strategies=columns, loose=True)


@pytest.mark.parametrize("shape", [(1000, 70), (1001, 300), (3, 700, 40), (2, 333, 1000)])
def test_whole_column_programs_stream_rows_in_passes(rng, shape):
    """Softmax, z-score and an argmax-then-gather down the axis before the last, on sizes the
    blocks of rows do not divide: one parallel pass over blocks of whole rows per reduction, each
    later pass reading the merged columns of the earlier ones, then the stores."""
    x = random_array(shape, F32, rng)
    if x.size < PAR:
        x = np.concatenate([x] * (-(-PAR // x.size)), axis=-2)
    x.flat[::101] = np.nan if shape == (1001, 300) else x.flat[::101]
    axis = x.ndim - 2
    passes = "columns in blocks of rows, a pass per reduction"

    def softmax(v):
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def zscore(v):
        mean = v.mean(axis=axis, keepdims=True)
        return (v - mean) / (v.std(axis=axis, keepdims=True) + 1), v.mean(axis=axis)

    def peak_share(v):
        return v / v.max(axis=axis, keepdims=True), v.argmax(axis=axis)

    for a in (x, x[..., ::-1]):
        check(softmax, a, strategies=[passes], loose=True)
        check(zscore, a, strategies=[passes], loose=True, atol=1e-5)
        check(peak_share, a, strategies=[passes], loose=True)


def test_whole_column_passes_in_a_shape_class(rng):
    """The same kernel compiled once for a class of row counts (jit's dynamic shapes): its block
    length is computed in the kernel, and every row count gets NumPy's answer."""
    f = autofuse.jit(_softmax0, backend="cpu", dynamic=True)
    for rows in (PAR // 64 + 3, PAR // 64 + 130, PAR // 32 + 7):
        x = random_array((rows, 64), F32, rng)
        assert_same(f(x), _softmax0(x.copy()), loose=True)
    assert "a pass per reduction" in f.lower(x).kernels[0].strategy


@pytest.mark.parametrize("shape", [(200, 7, 60), (5, 4, 3, 2), (0, 3, 4), (70, 1, 3, 300),
                                   (4, 0, 3), (3, 5, 0, 2)])
def test_columns_layout_takes_every_kept_axis_after_the_reduced_one(rng, shape):
    """x.sum(axis=0) of a stack: its rows are whole (H, W) planes, tiled along H."""
    x = random_array(shape, F32, rng)
    x.flat[::89] = np.nan
    for a in (x, x[:, ::-1], x[..., ::2]):
        columns = ["columns"] if a.shape[-1] > 1 and 0 not in a.shape else []
        check(lambda v: np.where(v == v, v, 0).sum(axis=0), a, strategies=columns, loose=True,
              atol=1e-4)
        if shape[0]:        # NumPy's max and argmax of nothing raise (autofuse's ShapeError)
            check(lambda v: v.max(axis=0), a, strategies=columns)
            check(lambda v: v.argmax(axis=0), a, strategies=columns)
            check(lambda v: (v - np.where(v == v, v, 0).mean(axis=0)) / 2, a, loose=True)


@pytest.mark.parametrize("size", [SPLIT - 8, SPLIT + 5], ids=["rows", "split"])
def test_full_reduction_split_threshold(rng, size):
    x = random_array((size,), F32, rng)
    lowered = check(lambda a: (a * a).sum(), x, loose=True)
    assert lowered.kernels[0].strategy == ("split" if size >= SPLIT else "rows")
    i = random_array((size // 8, 8), np.int64, rng)
    check(lambda a: (a * 3).sum(), i)
    check(lambda a: a.max(), i)
    check(lambda a: a.argmin(), random_array((size,), np.float64, rng))


# -- matmul: BLAS tiles and loop tiles with epilogues ---------------------------------------------
@pytest.mark.parametrize("m", [5, 300])
def test_blas_tiles_epilogue(rng, m):
    x, w = random_array((m, 64), F32, rng), random_array((64, 2000), F32, rng)
    b = random_array((2000,), F32, rng)
    # NOTE: BLAS sums a tile's 64 products in an order of its own (per CPU and OpenBLAS kernel),
    # so a result near zero from cancelling terms differs from NumPy's by up to ~K ulps of the
    # terms' magnitude (seen: 1.2e-5 at 0.1576 where the terms reach 40).
    atol = 64 * np.finfo(F32).eps * float((np.abs(x) @ np.abs(w) + np.abs(b)).max())
    lowered = check(lambda x, w, b: np.maximum(x @ w + b, 0), x, w, b, strategies=["blas-tiles"],
                    loose=True, atol=atol)
    if m == 300:
        assert "range(2)" in lowered.kernels[0].source or "blk" in lowered.kernels[0].source
    check(lambda x, w: x.T @ w.T, random_array((9, m), np.float64, rng),
          random_array((7, 9), np.float64, rng))
    check(lambda x, w: (x @ w) * 2, random_array((2, m, 6), F32, rng),
          random_array((2, 6, 5), F32, rng), loose=True)


def test_loop_tiles_integer_matmul(rng):
    x, w = random_array((17, 19), np.int32, rng), random_array((19, 21), np.int32, rng)
    check(lambda x, w: x @ w + 1, x, w, strategies=["loop-tiles"])
    check(lambda x, w: x @ w, random_array((3, 5, 4), np.int64, rng),
          random_array((4, 6), np.int64, rng))


# -- float16: interpreted through NumPy -----------------------------------------------------------
def test_float16_interpreted(rng):
    x = random_array((6, 10), np.float16, rng)
    jitted = autofuse.jit(lambda a: np.exp(a * 2) + a.sum(axis=-1, keepdims=True), backend="cpu")
    expected = np.exp(x * 2) + x.sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(jitted(x), expected)
    kernels = jitted.lower(x).kernels
    assert all(k.source is None and k.strategy.startswith("numpy") for k in kernels)


# -- generated source -----------------------------------------------------------------------------
def test_float32_kernels_hold_no_float64_constants_but_accumulators(rng):
    x, b = random_array((64, 48), F32, rng), random_array((48,), F32, rng)
    for fn, args in [(gelu, (x, b)), (softmax, (x,)), (layernorm, (x, b, b)),
                     (lambda a: np.sqrt(np.abs(a)) / 3 + np.floor(a * 0.1), (x,)),
                     (lambda a: (a * a).sum(), (x,))]:
        for kernel in autofuse.jit(fn).lower(*args).kernels:
            source = kernel.source
            f64 = set(re.findall(r"\b(c_f64_\w+|h_f64_\w+)\b", source))
            for name in f64:
                uses = [line for line in source.splitlines() if name in line and " = np." not in line]
                assert all(re.search(r"\b(acc\d+|lanes\d+\[q\d+\]) = ", line) for line in uses), \
                    (name, uses)
            assert "float64(" not in source.split("def ", 1)[1] or "acc" in source


def test_float32_tanh_is_vectorizable_and_within_8_ulp_of_numpy():
    """float32 tanh on the CPU is a branch-free rational (libm's tanhf kept loops scalar): every
    float32 in a dense sweep of [-10, 10] and the special values agree with np.tanh."""
    x = np.concatenate([np.linspace(-10, 10, 400_001, dtype=np.float32),
                        np.float32([0.0, -0.0, 1e-30, -1e-30, 3e-4, 5e-4, 7.9, 7.91, 20, -20,
                                    np.inf, -np.inf, np.nan])])
    f = autofuse.jit(lambda a: np.tanh(a), backend="cpu")
    got, want = f(x), np.tanh(x)
    assert got.dtype == np.float32
    assert "hyperbolic_tangent_f32" in f.lower(x).kernels[0].source
    finite = np.isfinite(want)
    ulps = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(
        np.maximum(np.abs(want[finite]), np.float32(1e-38))).astype(np.float64)
    assert ulps.max() <= 8
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_is_vectorizable_and_within_2_ulp_of_numpy(dtype):
    """exp on the CPU is branch-free arithmetic on exponent bits (libm's scalar exp kept loops
    scalar): a dense sweep across the whole range, the overflow and subnormal edges and the special
    values agree with np.exp (NumPy's own SIMD exp is itself within a few ulp of the true value)."""
    info = np.finfo(dtype)
    top, bottom = np.log(info.max), np.log(info.smallest_subnormal)
    edges = [top, np.nextafter(top, np.inf), bottom, np.nextafter(bottom, -np.inf),
             np.log(info.tiny), 0.0, -0.0, 1e-30, -1e-30, 2000.0, -2000.0, np.inf, -np.inf, np.nan]
    x = np.concatenate([np.linspace(1.1 * bottom, 1.1 * top, 600_001), edges]).astype(dtype)
    f = autofuse.jit(lambda a: np.exp(a), backend="cpu")
    got = f(x)
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x)
    assert got.dtype == dtype
    assert "exponential_f" in f.lower(x).kernels[0].source
    normal = np.isfinite(want) & (want >= info.tiny)
    ulps = np.abs(got[normal].astype(np.float64) - want[normal]) / np.spacing(want[normal])
    assert ulps.max() <= 2
    # subnormal results: within 2 of the smallest step; overflow, zero and NaN exactly NumPy's
    small = np.isfinite(want) & (want < info.tiny)
    assert np.all(np.abs(got[small] - want[small]) <= 2 * info.smallest_subnormal)
    np.testing.assert_array_equal(got[~np.isfinite(want)], want[~np.isfinite(want)])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert not (got < 0).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_is_vectorizable_and_within_3_ulp_of_numpy(dtype):
    """log on the CPU reads exponent and mantissa from the bits (as exp builds 2**n): over the whole
    positive range, subnormals included, within 3 ulp of np.log (whose own float32 SIMD log is up to
    ~3 ulp from the true value; this one is within 1); zero, negatives, inf and NaN as NumPy."""
    info = np.finfo(dtype)
    x = np.concatenate([
        np.geomspace(info.smallest_subnormal, info.max, 600_001).astype(dtype),
        np.linspace(0.5, 2.0, 100_001, dtype=dtype),
        np.array([0.0, -0.0, -1.0, -np.inf, np.inf, np.nan, 1.0, info.tiny, info.max,
                  info.smallest_subnormal], dtype)])
    f = autofuse.jit(lambda a: np.log(a), backend="cpu")
    got = f(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log(x)
    assert got.dtype == dtype
    assert "logarithm_f" in f.lower(x).kernels[0].source
    regular = np.isfinite(want) & (want != 0)
    ulps = np.abs(got[regular].astype(np.float64) - want[regular]) / np.spacing(np.abs(want[regular]))
    assert ulps.max() <= 3
    np.testing.assert_array_equal(got[~regular], want[~regular])
    truth = np.log(np.float64(x[regular]) if dtype == np.float32 else x[regular])
    if dtype == np.float32:
        assert (np.abs(got[regular] - truth) / np.spacing(np.abs(want[regular]))).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_helpers_side_by_side_in_one_kernel(rng, dtype):
    """exp, log, tanh, floor and cbrt helpers in one kernel, each with its own constants (exp's and
    log's polynomials once shared global names, and log-sum-exp rows came out 1% off)."""
    x = random_array((300, 64), dtype, rng)

    def logsumexp(v):
        m = v.max(axis=-1, keepdims=True)
        return m[..., 0] + np.log(np.exp(v - m).sum(axis=-1))

    def mixed(v):
        return np.tanh(v) + np.exp(v) * np.log(np.abs(v) + 1) + np.floor(v) - np.cbrt(v)
    for fn in (logsumexp, mixed):
        f = autofuse.jit(fn, backend="cpu")
        got, want = f(x), fn(x.copy())
        np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps * 4,
                                   atol=8 * np.finfo(dtype).eps * np.abs(want).max())
    source = autofuse.jit(mixed, backend="cpu").lower(x).kernels[0].source
    assert all(f"{helper}_f" in source for helper in ("exponential", "logarithm"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("length", [16, 130, 1000])
def test_laned_arg_reductions_keep_numpys_first_occurrence(dtype, length):
    """argmax/argmin over rows run in lanes of (best value, its index) folded by value, the
    lower index on ties: the first occurrence wins, the first NaN where there is one, 0 for a
    row of the lowest value, as in NumPy; rows of 16 take 8 lanes, longer ones 64 and a tail."""
    rng = np.random.default_rng(length)
    fn = autofuse.jit(lambda x: (x.argmax(1), x.argmin(1), x.argmax(1) - x.argmin(1)),
                      backend="cpu")
    x = rng.integers(-3, 4, (40, length)).astype(dtype)
    if dtype in (np.float32, np.float64):
        x[rng.integers(0, 40, 25), rng.integers(0, length, 25)] = np.nan
        x[5] = -np.inf
        x[6] = np.inf
    else:
        x[5] = np.iinfo(dtype).min
        x[6] = np.iinfo(dtype).max
    for got, want in zip(fn(x), (x.argmax(1), x.argmin(1), x.argmax(1) - x.argmin(1))):
        np.testing.assert_array_equal(got, want)


def test_any_and_all_over_rows_stop_at_their_answer():
    """A row's any (all) stops at its first true (false) value: rows decided at the first, the
    last or no element, beside a sum of the same rows (its own pass, read whole)."""
    x = np.zeros((6, 300), bool)
    x[1, 0] = x[2, 299] = True
    x[3] = True
    x[4, 150:] = True
    fn = autofuse.jit(lambda b: (b.any(1), b.all(1), b.sum(1), (~b).all(1)), backend="cpu")
    for got, want in zip(fn(x), (x.any(1), x.all(1), x.sum(1), (~x).all(1))):
        np.testing.assert_array_equal(got, want)
    assert "break" in autofuse.jit(lambda b: b.any(1), backend="cpu").lower(x).kernels[0].source
