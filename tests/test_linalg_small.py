"""np.linalg.solve, inv, det, slogdet and cholesky of stacks of small matrices (trace/solving.py,
trace/elimination.py) against NumPy: dtypes, batches and broadcasting, b as vector and matrix,
pivoting, det's sign, singular and not positive definite inputs, NumPy's errors."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from autofuse.trace.elimination import MAX_N

from simulated import run_cases

BACKENDS = ["cpu", "numpy"]
RTOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-10}


def well_conditioned(shape, dtype, rng):
    """Random matrices plus n * I: far from singular, with every pivot chosen by magnitude."""
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def close(result, expected):
    """Same shape and dtype, values within the dtype's tolerance relative to the largest one."""
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape and result.dtype == expected.dtype, (
        result.shape, result.dtype, expected.shape, expected.dtype)
    rtol = RTOL[expected.dtype]
    finite = np.abs(expected[np.isfinite(expected)])
    scale = float(finite.max()) if finite.size else 1.0
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * max(scale, 1.0))


def check(fn, *args, backends=BACKENDS):
    expected = fn(*args)
    for backend in backends:
        result = autofuse.jit(fn, backend=backend)(*args)
        if isinstance(expected, tuple):
            assert isinstance(result, tuple) and len(result) == len(expected)
            for r, e in zip(result, expected):
                close(r, e)
        else:
            close(result, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_solve_vector_and_matrix(n, dtype, rng):
    a = well_conditioned((5, n, n), dtype, rng)
    check(lambda a, b: np.linalg.solve(a, b), a, rng.standard_normal((5, n, 1)).astype(dtype))
    check(lambda a, b: np.linalg.solve(a, b), a, rng.standard_normal(n).astype(dtype))
    check(lambda a, b: np.linalg.solve(a, b), a[0], rng.standard_normal((n, 3)).astype(dtype))


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3,)), ((4, 3, 3), (3,)),
                                             ((2, 1, 3, 3), (5, 3, 2)), ((3, 3), (6, 3, 1)),
                                             ((2, 3, 3), (2, 3, 4)), ((0, 3, 3), (3,)),
                                             ((2, 3, 3), (2, 3, 0)), ((0, 0), (0,))])
def test_solve_broadcasts_as_numpy_2(a_shape, b_shape, rng):
    a = well_conditioned(a_shape, np.float64, rng)
    check(lambda a, b: np.linalg.solve(a, b), a, rng.standard_normal(b_shape))


def test_fused_with_producers_and_consumers(rng):
    """A 3x3 system built and used in the same function: the elimination with the producers of
    a and b (and the singular check) in one kernel, the result assembled with its consumer in
    a second."""
    def f(m, v, lam):
        return np.linalg.solve(np.swapaxes(m, -1, -2) + lam * np.eye(3), v * 2) - v
    m, v = rng.standard_normal((64, 3, 3)), rng.standard_normal((64, 3, 1))
    check(f, m, v, 3.0)
    summary = autofuse.jit(f).lower(m, v, 3.0).fused.summary()
    assert summary["groups"] == 2 and summary["kinds"] == {"input": 1, "loop": 1}, summary


def test_gradients_flow_through_the_elimination(rng):
    """Every traced op is elementwise, so reverse mode differentiates a solve and a det: the
    adjoint solve and det(A) A^-T."""
    a, b = well_conditioned((4, 3, 3), np.float64, rng), rng.standard_normal((4, 3, 1))
    da, db = autofuse.grad(lambda a, b: (np.linalg.solve(a, b) ** 2).sum(), argnums=(0, 1))(a, b)
    x = np.linalg.solve(a, b)
    adjoint = np.linalg.solve(np.swapaxes(a, -1, -2), 2 * x)
    close(db, adjoint)
    close(da, -adjoint @ np.swapaxes(x, -1, -2))
    d_det = autofuse.grad(lambda a: np.linalg.det(a).sum())(a)
    close(d_det, np.linalg.det(a)[:, None, None] * np.swapaxes(np.linalg.inv(a), -1, -2))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_integers_promote_to_float64(dtype, rng):
    a = (rng.integers(-3, 4, (4, 3, 3)) + 8 * np.eye(3, dtype=np.int64)).astype(dtype)
    if dtype == np.bool_:
        a = np.eye(3, dtype=bool) | (rng.random((4, 3, 3)) < 0.2) * np.tri(3, k=-1, dtype=bool)
    check(lambda a: (np.linalg.inv(a), np.linalg.det(a)), a)
    check(lambda a, b: np.linalg.solve(a, b), a, np.arange(3, dtype=np.float32))


def test_mixed_float32_and_float64_give_float64(rng):
    a = well_conditioned((3, 3), np.float32, rng)
    check(lambda a, b: np.linalg.solve(a, b), a, rng.standard_normal(3))


def test_pivoting_with_zeros_on_the_diagonal(rng):
    """A zero (and a tiny) leading entry: elimination without row swaps divides by it."""
    a = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])
    tiny = np.array([[1e-20, 1.0], [1.0, 1.0]])
    perm = np.eye(4)[[3, 0, 2, 1]] * rng.uniform(1, 2, 4)
    for m in (a, tiny, perm, np.stack([a, a[::-1], a[:, ::-1]])):
        check(lambda a: (np.linalg.inv(a), np.linalg.det(a), np.linalg.slogdet(a)), m)
        check(lambda a, b: np.linalg.solve(a, b), m, rng.standard_normal(m.shape[-1]))


def test_det_sign_of_permutations():
    """Every permutation matrix of 4: det is the permutation's sign (an odd swap count is -1)."""
    import itertools
    stack = np.stack([np.eye(4)[list(p)] for p in itertools.permutations(range(4))])
    check(lambda a: (np.linalg.det(a), np.linalg.slogdet(a)), stack)
    check(lambda a: np.linalg.det(a), stack.astype(np.float32) * -2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 3, MAX_N])
def test_det_slogdet_inv(n, dtype, rng):
    a = (rng.standard_normal((6, n, n)) * 2).astype(dtype)
    check(lambda a: (np.linalg.det(a), np.linalg.slogdet(a), np.linalg.inv(a)), a,
          backends=BACKENDS)


def test_non_contiguous_and_reversed(rng):
    a = well_conditioned((6, 3, 3), np.float64, rng)
    b = rng.standard_normal((6, 3, 4))
    check(lambda a, b: np.linalg.solve(a, b), a[::-2, :, ::-1], b[::2, :, ::2])
    check(lambda a: np.linalg.inv(a), np.swapaxes(a, -1, -2))


def test_largest_supported_size(rng):
    a = well_conditioned((3, MAX_N, MAX_N), np.float64, rng)
    check(lambda a, b: (np.linalg.solve(a, b), np.linalg.det(a)), a, rng.standard_normal(MAX_N),
          backends=["numpy"])


def test_empty_and_zero_size():
    for shape in ((0, 0), (2, 0, 0), (0, 2, 2)):
        check(lambda a: (np.linalg.det(a), np.linalg.inv(a), np.linalg.slogdet(a)), np.zeros(shape))


def test_singular_raises_after_the_call():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    for fn in (lambda a: np.linalg.solve(a, np.ones(2)), lambda a: np.linalg.inv(a)):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            fn(singular)
        with pytest.raises(autofuse.LinAlgError, match="Singular matrix"):
            autofuse.jit(fn)(singular)
        autofuse.jit(fn)(singular[1:])          # the same compiled program, a regular stack
    check(lambda a: (np.linalg.det(a), np.linalg.slogdet(a)), singular)
    zero_column = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 7.0]])
    check(lambda a: (np.linalg.det(a), np.linalg.slogdet(a)), zero_column)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, upper, rng):
    m = rng.standard_normal((4, 3, 3))
    a = (m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)).astype(dtype)
    a_lower_only = np.tril(a) + np.triu(rng.standard_normal((3, 3)), 1).astype(dtype)
    source = np.swapaxes(a_lower_only, -1, -2) if upper else a_lower_only
    check(lambda a: np.linalg.cholesky(a, upper=upper), source)


def test_cholesky_not_positive_definite():
    a = np.stack([np.eye(2), np.array([[1.0, 2.0], [2.0, 1.0]])])
    fn = np.linalg.cholesky
    with pytest.raises(autofuse.LinAlgError, match="not positive definite"):
        autofuse.jit(lambda a: fn(a))(a)
    with pytest.raises(np.linalg.LinAlgError):
        autofuse.jit(lambda a: fn(a))(np.full((2, 2), np.nan))


@pytest.mark.parametrize("call,args,error,text", [
    (np.linalg.inv, (np.ones(3),), autofuse.LinAlgError, "1-dimensional array given"),
    (np.linalg.det, (np.ones((2, 3)),), autofuse.LinAlgError, "must be square"),
    (np.linalg.solve, (np.eye(3), np.ones(2)), autofuse.ShapeError, "core dimension 0"),
    (np.linalg.solve, (np.eye(3), np.ones((4, 3))), autofuse.ShapeError, "core dimension 0"),
    (np.linalg.solve, (np.ones((2, 3, 3)), np.ones((5, 3, 2))), autofuse.ShapeError, "broadcast"),
    (np.linalg.inv, (np.eye(MAX_N + 1),), autofuse.UnsupportedError, f"up to {MAX_N}x{MAX_N}"),
    (np.linalg.det, (np.eye(3, dtype=np.complex128),), autofuse.UnsupportedError, "complex"),
    (np.linalg.det, (np.eye(3, dtype=np.float16),), autofuse.DTypeError, "float16"),
])
def test_errors_name_the_call_and_shapes(call, args, error, text):
    def f(*xs):
        return call(*xs)  # <- error
    with pytest.raises(error, match=text) as raised:
        autofuse.jit(f)(*args)
    message = str(raised.value)
    assert "np.linalg." in message and "test_linalg_small.py" in message
    assert isinstance(raised.value, type(_numpy_error(call, args)))


def _numpy_error(call, args):
    try:
        call(*args)
    except Exception as error:      # noqa: BLE001 (any error NumPy raises is the reference)
        return error
    return NotImplementedError()    # NumPy computes it (sizes, complex): autofuse refuses


@pytest.mark.sim
def test_batched_3x3_solve_under_the_cuda_simulator(tmp_path):
    pytest.importorskip("numba_cuda")
    lines = run_cases("linalg_sim_cases.py", tmp_path)
    assert lines and all(line.endswith(": ok") for line in lines), "\n".join(lines)


def test_float32_solve_compiles_to_ptx(rng):
    pytest.importorskip("numba_cuda")
    from numba import config
    if config.ENABLE_CUDASIM:
        pytest.skip("PTX is not generated under the CUDA simulator")
    a = well_conditioned((256, 3, 3), np.float32, rng)
    b = rng.standard_normal((256, 3)).astype(np.float32)
    low = autofuse.jit(lambda a, b: np.linalg.solve(a, b[..., None])[..., 0],
                       backend="cuda").lower(a, b)
    for kernel in low.kernels:
        ptx = kernel.ptx
        assert ".target sm_90" in ptx and ".visible .entry" in ptx
        assert "div.rn.f64" not in ptx and "fma.rn.f64" not in ptx
