"""Softmax's denominator beside its max (ir/online.py, op expsum): where the CUDA backend writes
it, where it does not, the interpreter's value of it, and its sm_90 PTX. The kernels' values
under the simulator: tiles_sim_cases.py ("online_" cases, run by test_cuda_tiles.py)."""
import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import DEFAULT as TUNING
from autofuse.ir.interpreter import evaluate

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402
from tiles_sim_cases import logsumexp, softmax  # noqa: E402


def unkept(x):          # the max without keepdims along axis 0: NumPy aligns it onto the rows
    return np.exp(x - x.max(0)).sum(0)


def misaligned(x):      # ... along axis 1 of a square matrix: each row takes another row's max
    return np.exp(x - x.max(1)).sum(1)


def ops(fn, shape, backend="cuda", dtype=np.float32, **options):
    low = autofuse.jit(fn, backend=backend, **options).lower(np.zeros(shape, dtype))
    return [n.op for n in low.graph.nodes], low


# function, shape, whether the sum becomes expsum, the kernels then
CASES = [
    (softmax(0), (4096, 8192), True, 2),          # columns past the L2: one two-stage, one pass
    (softmax(0), (512, 8192), True, 1),           # column tiles: one pass fewer
    (logsumexp(0), (4096, 8192), True, 1),
    (logsumexp(-1), (16, 1 << 21), True, 1),      # rows longer than max_row: one two-stage
    (logsumexp(-1), (1, 1 << 25), True, 1),       # one split kernel
    (softmax(1), (64, 1024, 128), True, 2),       # a middle axis
    (unkept, (4096, 8192), True, 1),
    (softmax(-1), (8192, 1000), False, 1),        # rows held on chip: as written
    (misaligned, (1024, 1024), False, None),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_where_the_denominator_is_reduced_beside_its_max(case):
    fn, shape, online, kernels = CASES[case]
    found, low = ops(fn, shape, tuning=TUNING)
    assert ("expsum" in found) == online, found
    if kernels is not None:
        assert len(low.kernels) == kernels, [k.strategy for k in low.kernels]


# programs near the pattern: (function, whether it becomes expsum); shape (6, 40, 8)
NEAR = [
    (lambda x, y: np.exp(x - x.max((0, 2), keepdims=True)).sum((0, 2)), True),   # two axes
    (lambda x, y: np.exp(x - x.max(0, keepdims=True)).sum(1), False),        # other axes
    (lambda x, y: np.exp(x - y.max(0, keepdims=True)).sum(0), False),        # another array
    (lambda x, y: np.exp(x.max(0, keepdims=True) - x).sum(0), False),        # max - x
    (lambda x, y: np.exp(2 * (x - x.max(0, keepdims=True))).sum(0), False),  # scaled
    (lambda x, y: np.exp(x - x.max(0, keepdims=True)).sum(0, dtype=np.float64), False),
]


@pytest.mark.parametrize("case", range(len(NEAR)))
def test_only_the_pattern_itself(case):
    fn, online = NEAR[case]
    rng = np.random.default_rng(case)
    x, y = (rng.standard_normal((6, 40, 8)).astype(np.float32) for _ in range(2))
    low = autofuse.jit(fn, backend="cuda").lower(x, y)
    assert ("expsum" in [n.op for n in low.graph.nodes]) == online
    (got,) = evaluate(low.graph, [x, y])
    expected = fn(x, y)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_not_on_the_cpu_nor_when_turned_off():
    assert "expsum" not in ops(softmax(0), (4096, 8192), backend="cpu")[0]
    found, low = ops(softmax(0), (4096, 8192), tuning=TUNING.replace(online_sums=False))
    assert "expsum" not in found and len(low.kernels) == 3


@pytest.mark.parametrize("fn, shape", [(softmax(0), (40, 40)), (logsumexp(0), (40, 40)),
                                       (softmax(1), (6, 40, 40)), (unkept, (40, 40)),
                                       (misaligned, (40, 40))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_the_interpreter_computes_what_numpy_does(fn, shape, dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    x[:, 0] = -np.inf            # an all -inf column / row slice: NaN, as NumPy
    x[:20, 1] = -np.inf
    x[3, 2] = np.inf
    x[4, 3] = np.nan
    low = autofuse.jit(fn, backend="cuda").lower(x)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = fn(x)
        (got,) = evaluate(low.graph, [x])
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype != np.float16 else 1e-3)


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")
@pytest.mark.parametrize("fn, shape", [(logsumexp(0), (4096, 8192)),
                                       (logsumexp(-1), (16, 1 << 21)),
                                       (softmax(0), (512, 8192))])
def test_one_pass_compiles_to_sm90_ptx(fn, shape):
    _, low = ops(fn, shape, tuning=TUNING)
    ptx = low.kernels[0].ptx
    assert ".target sm_90" in ptx and "ex2.approx" in ptx
    assert ".f64" not in ptx.split(".visible .entry")[1]
