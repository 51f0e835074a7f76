"""np.gradient (autofuse/trace/gradient.py) against NumPy on the CPU backend and the reference
interpreter: uniform and coordinate spacings, edge orders 1 and 2, axes, integer inputs, the
smallest lengths, non-contiguous inputs, and NumPy's errors."""
import numpy as np
import pytest

import autofuse
from autofuse.errors import AutofuseError

rng = np.random.default_rng(11)


def _close(got, want, dtype):
    tolerance = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, dtype)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


CASES = [
    ("1d", lambda f: np.gradient(f), (rng.standard_normal(9),)),
    ("2d_all_axes", lambda f: np.gradient(f), (rng.standard_normal((5, 7)),)),
    ("axis_and_spacing", lambda f: np.gradient(f, 0.5, axis=1), (rng.standard_normal((4, 6)),)),
    ("spacing_per_axis", lambda f: np.gradient(f, 2.0, 0.25), (rng.standard_normal((4, 6)),)),
    ("edge_order_2", lambda f: np.gradient(f, 1.5, edge_order=2), (rng.standard_normal((6, 5)),)),
    ("float32", lambda f: np.gradient(f, axis=0), (rng.standard_normal((8, 3)).astype(np.float32),)),
    ("integers", lambda f: np.gradient(f), (rng.integers(-9, 9, 7),)),
    ("length_two", lambda f: np.gradient(f), (rng.standard_normal(2),)),
    ("length_three_order_2", lambda f: np.gradient(f, edge_order=2), (rng.standard_normal(3),)),
    ("coordinates", lambda f, x: np.gradient(f, x), (rng.standard_normal(6),
                                                     np.cumsum(rng.random(6) + 0.1))),
    ("coordinates_order_2", lambda f, x: np.gradient(f, x, axis=0, edge_order=2),
     (rng.standard_normal((6, 3)), np.cumsum(rng.random(6) + 0.1))),
    ("strided", lambda f: np.gradient(f[::-2, 1:]), (rng.standard_normal((9, 5)),)),
    ("laplacian", lambda f: sum(np.gradient(g, axis=i) for i, g in enumerate(np.gradient(f))),
     (rng.standard_normal((6, 6)),)),
]


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_numpy(name, fn, args, backend):
    _close(autofuse.jit(fn, backend=backend)(*args), fn(*args), args[0].dtype)


@pytest.mark.parametrize("fn, args", [
    (lambda f: np.gradient(f), (np.ones(1),)),
    (lambda f: np.gradient(f, edge_order=2), (np.ones((2, 5)),)),
    (lambda f: np.gradient(f, 1.0, 2.0), (np.ones(5),)),
    (lambda f, x: np.gradient(f, x), (np.ones(5), np.ones(4))),
    (lambda f: np.gradient(f, edge_order=3), (np.ones(5),)),
])
def test_gradient_errors_as_numpy(fn, args):
    with pytest.raises(Exception) as numpy_error:
        fn(*args)
    with pytest.raises((type(numpy_error.value), AutofuseError)) as ours:
        autofuse.jit(fn, backend="cpu")(*args)
    assert "gradient" in str(ours.value)
