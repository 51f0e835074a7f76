"""Scatter-adds against NumPy: np.add.at, np.bincount and np.histogram on the CPU backend (random
and repeated indices, negative ones, rows, dtypes, layouts, empty inputs, weights, values on bin
edges, errors), how they fuse, the threaded CPU path, the CUDA kernel under the simulator
(histogram_sim_cases.py) and its PTX for sm_90."""
from __future__ import annotations

import re

import numpy as np
import pytest

import autofuse
from autofuse.backends.cpu.scatter import ScatterTuning, parallel_scatter

from conftest import assert_same, copy_keeping_layout, random_array
from simulated import run_cases


def check(fn, *args, loose=False, backend="cpu"):
    expected = fn(*[copy_keeping_layout(a) for a in args])
    result = autofuse.jit(fn, backend=backend)(*args)
    assert_same(result, expected, loose=loose)
    return result


def kinds(fn, *args) -> dict:
    return autofuse.jit(fn).lower(*args).fused.summary()["kinds"]


def add_at(x, i, v):
    y = x.copy()
    np.add.at(y, i, v)
    return y


# -- np.add.at ---------------------------------------------------------------------------------
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_add_at_repeated_and_negative_indices(dtype, backend, rng):
    x = random_array((9,), dtype, rng)
    i = rng.integers(-9, 9, 60)
    i[:5] = 3                                       # repeated: they accumulate
    v = random_array((60,), dtype, rng)
    check(add_at, x, i, v, backend=backend)


def test_add_at_narrow_integers_wrap():
    x = np.full(3, 120, np.int8)
    check(add_at, x, np.zeros(30, np.int64), np.full(30, 9, np.int8))


@pytest.mark.parametrize("layout", ["C", "stride2", "reversed", "F"])
def test_add_at_rows_of_a_matrix(layout, rng):
    x = random_array((6, 4), np.float64, rng, layout)
    i = rng.integers(-6, 6, 11)
    v = random_array((11, 4), np.float64, rng)
    check(add_at, x, i, v)
    check(lambda x, i: add_at(x, i, 1.5), x, i)                       # a scalar broadcast
    check(lambda x, i, w: add_at(x, i, w), x, i, random_array((4,), np.float64, rng))


def test_add_at_index_array_of_two_dimensions_and_strided_operands(rng):
    x = random_array((7,), np.float32, rng)
    i = rng.integers(0, 7, (3, 8))[:, ::2]
    v = random_array((3, 4), np.float32, rng, "reversed")
    check(add_at, x, i, v)


def test_add_at_empty_and_size_zero(rng):
    check(add_at, random_array((5,), np.float32, rng), np.zeros(0, np.int64), np.zeros(0, np.float32))
    check(add_at, np.zeros((4, 0)), rng.integers(0, 4, 6), np.zeros((6, 0)))


def test_add_at_writes_the_argument(rng):
    def f(x, i, v):
        np.add.at(x, i, v * 2)
        return x.sum()
    x, i, v = random_array((8,), np.float64, rng), rng.integers(0, 8, 20), random_array((20,), np.float64, rng)
    expected_x, got_x = x.copy(), x.copy()
    expected = f(expected_x, i, v)
    result = autofuse.jit(f)(got_x, i, v)
    np.testing.assert_allclose(got_x, expected_x, rtol=1e-12)
    assert result == pytest.approx(expected, rel=1e-12)


def test_add_at_out_of_bounds_raises(rng):
    x, v = random_array((5,), np.float32, rng), random_array((4,), np.float32, rng)
    jitted = autofuse.jit(add_at)
    with pytest.raises(autofuse.OutOfBoundsError, match="out of bounds for axis 0 with size 5"):
        jitted(x, np.array([0, 5, 1, 2]), v)
    with pytest.raises(autofuse.OutOfBoundsError):
        jitted(x, np.array([0, -6, 1, 2]), v)
    with pytest.raises(autofuse.OutOfBoundsError, match="index 7"):      # known when tracing
        autofuse.jit(lambda x, v: add_at(x, [0, 7, 1, 1], v))(x, v)
    kept = x.copy()
    with pytest.raises(autofuse.OutOfBoundsError):
        autofuse.jit(lambda x, i, v: np.add.at(x, i, v))(x, np.array([0, 9, 1, 2]), v)
    np.testing.assert_array_equal(x, kept)          # not written where an index is outside


def test_add_at_fuses_index_and_value_producers(rng):
    def f(i, v):
        y = np.zeros(10, np.float32)
        np.add.at(y, (i * 3) % 10, np.exp(v))
        return y
    i, v = rng.integers(0, 100, 50), random_array((50,), np.float32, rng)
    check(f, i, v, loose=True)
    assert kinds(f, i, v) == {"scatter": 1, "input": 1}      # the input: the bounds check


def test_add_at_gradient(rng):
    def loss(x, v, i):
        y = x * 1.0
        np.add.at(y, i, v * v)
        return (y * y).sum()
    x, v, i = random_array((5,), np.float64, rng), random_array((9,), np.float64, rng), rng.integers(0, 5, 9)
    dx, dv = autofuse.grad(loss, argnums=(0, 1))(x, v, i)
    y = x.copy()
    np.add.at(y, i, v * v)
    np.testing.assert_allclose(dx, 2 * y, rtol=1e-12)
    np.testing.assert_allclose(dv, 2 * y[i] * 2 * v, rtol=1e-12)


# -- np.bincount -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_bincount(dtype, rng):
    x = rng.integers(0, 2 if dtype == np.bool_ else 12, 500).astype(dtype)
    check(lambda x: np.bincount(x, minlength=16), x)
    check(lambda x, w: np.bincount(x, weights=w, minlength=12), x, random_array((500,), np.float32, rng))
    check(lambda x, w: np.bincount(x, w, 12), x, random_array((500,), np.int32, rng))


def test_bincount_empty_and_known_values(rng):
    check(lambda x: np.bincount(x, minlength=5), np.zeros(0, np.int64))
    check(lambda x: np.bincount(x), np.zeros(0, np.int64))
    check(lambda w: np.bincount(np.array([3, 1, 3]), weights=w), random_array((3,), np.float64, rng))


def test_bincount_errors(rng):
    jitted = autofuse.jit(lambda x: np.bincount(x, minlength=4))
    with pytest.raises(autofuse.NumPyValueError, match="negative"):
        jitted(np.array([0, -1, 2]))
    with pytest.raises(autofuse.UnsupportedError, match="pass a larger minlength"):
        jitted(np.array([0, 4, 2]))
    with pytest.raises(autofuse.UnsupportedError, match="pass minlength="):
        autofuse.jit(lambda x: np.bincount(x))(np.array([0, 1]))
    with pytest.raises(autofuse.DTypeError):
        autofuse.jit(lambda x: np.bincount(x, minlength=3))(np.array([0.5]))
    with pytest.raises(autofuse.ShapeError):
        autofuse.jit(lambda x: np.bincount(x, minlength=3))(np.zeros((2, 2), np.int64))
    assert jitted(np.array([3, 3, 0])).tolist() == [1, 0, 0, 2]      # fine after the errors


def test_bincount_fuses_its_index_computation(rng):
    def f(x):
        return np.bincount(np.clip((x * 10).astype(np.int64), 0, 9), minlength=10)
    x = random_array((300,), np.float32, rng, low=-0.5, high=1.5)
    check(f, x)
    assert kinds(f, x).get("scatter") == 1


# -- np.histogram ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int16, np.float16])
@pytest.mark.parametrize("bins", [1, 7, 64])
def test_histogram_bins_from_the_data(dtype, bins, rng):
    a = random_array((400,), dtype, rng, low=-50, high=50)
    check(lambda a: np.histogram(a, bins=bins), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_histogram_values_on_the_edges(dtype):
    """Each edge itself (NumPy's rule: [e_i, e_i+1), the last bin closed), with values just
    beside the edges, inside and outside the range."""
    for bins, range_ in [(10, (0.0, 1.0)), (7, (-3.0, 4.0)), (3, (0.1, 0.7)), (5, None)]:
        lo, hi = range_ if range_ else (-2.0, 3.0)
        edges = np.histogram_bin_edges(np.array([lo, hi], dtype), bins=bins, range=range_)
        near = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                               [lo - 1, hi + 1, lo, hi]]).astype(dtype)
        if range_ is None:
            near = np.clip(near, lo, hi).astype(dtype)
        check(lambda a: np.histogram(a, bins=bins, range=range_), near)


def test_histogram_range_weights_density(rng):
    a = random_array((500,), np.float32, rng, low=-2, high=2)
    a[:4] = [np.nan, np.inf, -np.inf, 1.0]          # outside any range: ignored
    w32 = random_array((500,), np.float32, rng)
    check(lambda a: np.histogram(a, bins=9, range=(-1, 1)), a)
    check(lambda a, w: np.histogram(a, bins=9, range=(-1.0, 1.5), weights=w), a, w32)
    check(lambda a, w: np.histogram(a, 9, (-1, 1), weights=w), a, random_array((500,), np.int32, rng))
    check(lambda a: np.histogram(a, bins=9, range=(-1, 1), density=True), a, loose=True)
    # (float64 weights: float32 counts' sum rounds in the last bit as NumPy's float32 sum may not)
    check(lambda a, w: np.histogram(a, bins=4, range=(0, 1), weights=w, density=True), a,
          w32.astype(np.float64), loose=True)
    b = random_array((5, 60), np.float64, rng, "stride2")                 # raveled, strided
    check(lambda b, w: np.histogram(b, bins=6, weights=w), b, random_array((5, 60), np.float64, rng))


def test_histogram_degenerate_inputs(rng):
    check(lambda a: np.histogram(a, bins=4), np.full(30, 2.5, np.float32))         # one value
    check(lambda a: np.histogram(a, bins=4), np.full(30, 7, np.int64))
    check(lambda a: np.histogram(a, bins=4), np.zeros(0, np.float32))              # empty
    check(lambda a: np.histogram(a, bins=3, range=(1.0, 1.0)), random_array((20,), np.float64, rng))


def test_histogram_array_bins(rng):
    a = random_array((300,), np.float64, rng, low=-3, high=3)
    edges = np.array([-2.0, -0.5, 0.0, 0.0, 1.0, 2.5])
    a[:6] = edges                                   # on the edges, a zero-width bin among them
    check(lambda a: np.histogram(a, bins=edges), a)
    check(lambda a, e: np.histogram(a, bins=e), a, edges)                 # traced edges
    check(lambda a, e, w: np.histogram(a, bins=e, weights=w), a, edges,
          random_array((300,), np.float32, rng), loose=True)


def test_histogram_errors(rng):
    a = random_array((10,), np.float64, rng)
    with pytest.raises(autofuse.NumPyValueError, match="not finite"):
        autofuse.jit(lambda a: np.histogram(a, bins=3))(np.array([1.0, np.nan]))
    with pytest.raises(autofuse.NumPyValueError, match="max must be larger than min"):
        autofuse.jit(lambda a: np.histogram(a, bins=3, range=(2, 1)))(a)
    with pytest.raises(autofuse.NumPyValueError, match="positive"):
        autofuse.jit(lambda a: np.histogram(a, bins=0))(a)
    with pytest.raises(autofuse.UnsupportedError, match="bins='auto'"):
        autofuse.jit(lambda a: np.histogram(a, bins="auto"))(a)
    with pytest.raises(autofuse.NumPyValueError, match="monotonically"):
        autofuse.jit(lambda a, e: np.histogram(a, bins=e))(a, np.array([0.0, 2.0, 1.0]))
    with pytest.raises(autofuse.NumPyValueError, match="same shape"):
        autofuse.jit(lambda a, w: np.histogram(a, weights=w))(a, a[:4])


def test_histogram_is_one_scatter_kernel_with_its_binning(rng):
    a = random_array((1000,), np.float32, rng)
    f = lambda a: np.histogram(a * 2 + 1, bins=16, range=(-3, 5))[0]     # noqa: E731
    check(f, a)
    assert kinds(f, a) == {"scatter": 1}


# -- the threaded CPU path ---------------------------------------------------------------------
def test_parallel_choice_is_a_value():
    tuning = ScatterTuning()
    assert parallel_scatter(1000, 10 ** 7, tuning)
    assert not parallel_scatter(1000, 10 ** 4, tuning)              # too few values
    assert not parallel_scatter(10 ** 6, 10 ** 6, tuning)           # a base too large to copy
    assert parallel_scatter(10 ** 6, 10 ** 6, ScatterTuning(pieces=2, max_copies_share=4.0))


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8])
def test_threaded_scatter_into_private_copies(dtype, rng):
    x = rng.integers(-300, 300, 300_000)
    v = random_array((300_000,), dtype, rng)
    base = random_array((300,), dtype, rng)
    low = autofuse.jit(add_at).lower(base, x, v)
    (kernel,) = [k for k in low.kernels if k.kind == "scatter"]
    assert kernel.strategy == "scatter into 8 private copies"
    check(add_at, base, x, v, loose=True)
    a = rng.standard_normal(400_000)
    check(lambda a: np.histogram(a, bins=100), a)


# -- the CUDA kernel -------------------------------------------------------------------------
@pytest.mark.sim
@pytest.mark.parametrize("shard", range(2))
def test_scatter_kernels_under_the_simulator(tmp_path, shard):
    pytest.importorskip("numba_cuda")
    lines = run_cases("histogram_sim_cases.py", tmp_path, shard, 2)
    assert len(lines) >= 8 and all(line.endswith(": ok") for line in lines), lines


PTX_CASES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.bool_, np.float16]


@pytest.mark.parametrize("dtype", PTX_CASES, ids=[np.dtype(d).name for d in PTX_CASES])
def test_scatter_kernel_compiles_to_sm90_ptx(dtype):
    pytest.importorskip("numba_cuda")
    from numba import config
    if config.ENABLE_CUDASIM:
        pytest.skip("PTX is not generated under the simulator")
    low = autofuse.jit(add_at, backend="cuda").lower(np.zeros(1000, dtype), np.zeros(10 ** 6, np.int64),
                                                     np.zeros(10 ** 6, dtype))
    (kernel,) = [k for k in low.kernels if k.kind == "scatter"]
    assert kernel.strategy.startswith("atomic scatter")
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".visible .entry" in ptx
    assert ".local" not in ptx
    width = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f32",
             np.dtype(np.int64): "u64"}.get(np.dtype(dtype), "u32")
    assert re.search(rf"(atom|red)\.global\.add\.{width}", ptx), width


def test_complex_scatter_has_no_cuda_kernel():
    with pytest.raises(autofuse.UnsupportedError, match="no CUDA kernel"):
        autofuse.jit(add_at, backend="cuda").lower(np.zeros(4, np.complex64), np.zeros(3, np.int64),
                                                   np.zeros(3, np.complex64))
