"""Short reductions feeding other reductions written out as sums of slices (ir/unroll.py): which
are, the one kernel they leave, and the results against NumPy on every backend that runs here."""
import numpy as np
import pytest

import autofuse
from autofuse.ir.unroll import UNROLL_LIMIT

rng = np.random.default_rng(31)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def assign(x, c):
    d2 = ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=-1)
    return d2.argmin(axis=-1), d2.min(axis=-1)


CASES = [
    ("kmeans", assign, lambda: (f32(300, 5), f32(7, 5))),
    ("kmeans_reversed", assign, lambda: (f32(40, 16)[:, ::-1], f32(64, 16)[::-1])),
    ("max_then_sum", lambda x, y: np.abs(x[:, None] * y[None]).max(-1).sum(-1),
     lambda: (rng.standard_normal((50, 3)), rng.standard_normal((9, 3)))),
    ("prod_then_max_over_other_axis", lambda x, y: (x[:, None] - y[None]).prod(-1).max(0),
     lambda: (f32(30, 4), f32(6, 4))),
    ("min_middle_axis", lambda x, y: (x[:, :, None] * y).min(1).sum(-1),
     lambda: (f32(20, 3), f32(3, 40))),
    ("through_elementwise", lambda x, y: np.sqrt(np.abs(x[:, None] * y).sum(-1)).max(0),
     lambda: (f32(64, 2), f32(5, 2))),
    ("leading_short_axis", lambda x, y: np.exp(x[:, None, :] + y[:, :, None]).sum(0).argmax(-1),
     lambda: (f32(4, 50), f32(4, 33))),
    ("no_points", assign, lambda: (f32(0, 5), f32(7, 5))),
    ("nan", lambda x, y: (x[:, None] * y).max(-1).sum(),
     lambda: (np.array([[1, np.nan], [2, 3]], np.float32), f32(3, 2))),
]


def ops(fn, args) -> list:
    return [n.op for n in autofuse.jit(fn, backend="numpy").lower(*args).graph.nodes]


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_results_match_numpy(name, fn, make, backend):
    args = make()
    got, want = autofuse.jit(fn, backend=backend)(*args), fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.result_type(g) == np.result_type(w)
        tolerance = 1e-5 if np.result_type(w) == np.float32 else 1e-12
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance, equal_nan=True)


def test_kmeans_is_one_kernel_reading_only_its_inputs():
    low = autofuse.jit(assign, backend="numpy").lower(f32(1000, 8), f32(16, 8))
    (group,) = low.fused.groups
    assert sorted(n.shape for n in group.inputs) == [(16, 8), (1000, 8)]
    assert "sum" not in [n.op for n in low.graph.nodes]


def test_only_short_float_reductions_feeding_reductions_are_written_out():
    long = UNROLL_LIMIT + 1
    assert "sum" in ops(assign, (f32(10, long), f32(3, long)))              # too long
    assert "sum" in ops(lambda x, c: (x[:, None] * c).sum(-1), (f32(10, 4), f32(3, 4)))  # feeds
    assert "sum" in ops(lambda x: (x * x).sum(-1).max(), (f32(10, 4),))     # no product
    integers = rng.integers(0, 9, (10, 4)).astype(np.int32)
    assert "sum" in ops(assign, (integers, integers))                        # promotes its type
    assert "sum" not in ops(assign, (f32(10, 4), f32(3, 4)))


def test_cuda_kernel_is_a_thread_an_output():
    x, c = np.zeros((1 << 20, 16), np.float32), np.zeros((64, 16), np.float32)
    (kernel,) = autofuse.jit(assign, backend="cuda").lower(x, c).kernels
    assert kernel.strategy == "columns" and "broadcast product" in kernel.reason


def test_cuda_broadcast_product_rows_with_row_outputs_stay_rows():
    x, y = np.zeros((1 << 17, 1), np.float32), np.zeros((1, 256), np.float32)
    (kernel,) = autofuse.jit(lambda x, y: np.exp(x * y) / np.exp(x * y).sum(-1, keepdims=True),
                             backend="cuda").lower(x, y).kernels
    assert kernel.strategy.startswith("row tiles")
