"""complex64 / complex128 arrays and complex intermediates (np.exp(1j * x)): elementwise ops with a
complex spelling in the op table, the parts (real, imag, conj, angle, abs), reductions, casts,
matmul and NEP 50 promotion with Python complex scalars, against NumPy on the CPU backend and the
reference interpreter; ordering ops refuse complex operands (autofuse does not order them)."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from autofuse.ir.ops import ELEMENTWISE_UFUNCS, takes_complex

from conftest import BINARY_SHAPES, UNARY_SHAPES, assert_same, copy_keeping_layout

BACKENDS = ["cpu", "numpy"]
COMPLEX = [np.complex64, np.complex128]


def random_complex(shape, dtype, rng, layout="C"):
    """Fresh complex values with both parts in -2 .. 2 (no zeros), laid out as `layout` says."""
    shape = tuple(shape)
    if layout == "stride2":
        return random_complex(shape[:-1] + (2 * shape[-1],), dtype, rng)[..., ::2]
    if layout == "reversed":
        return random_complex(shape, dtype, rng)[::-1]
    parts = rng.uniform(0.1, 2.0, size=(2,) + shape) * rng.choice([-1, 1], size=(2,) + shape)
    values = (parts[0] + 1j * parts[1]).astype(dtype)
    return np.asfortranarray(values) if layout == "F" else values


def check(fn, *args, loose=False):
    expected = fn(*[copy_keeping_layout(a) for a in args])
    for backend in BACKENDS:
        result = autofuse.jit(fn, backend=backend)(*[copy_keeping_layout(a) for a in args])
        assert_same(result, expected, loose=loose)


UNARY = sorted(name for name, row in ELEMENTWISE_UFUNCS.items()
               if row.arity == 1 and takes_complex(name))
BINARY = sorted(name for name, row in ELEMENTWISE_UFUNCS.items()
                if row.arity == 2 and takes_complex(name))


def test_the_op_table_spells_complex_ops():
    assert {"exp", "log", "sqrt", "sin", "tanh", "absolute", "conjugate", "reciprocal"} <= set(UNARY)
    assert {"add", "subtract", "multiply", "divide", "power", "equal", "not_equal"} <= set(BINARY)
    assert not takes_complex("less") and not takes_complex("maximum") and not takes_complex("max")


# every op on 0-d, size-0 and gapped arrays; every layout and broadcast with a few ops
SOME_UNARY = [s for s in UNARY_SHAPES if s[0] in ("0d", "size0", "noncontig")]
SOME_BINARY = [s for s in BINARY_SHAPES if s[0] in ("0d-3x4", "3x1-1x4", "size0")]


def _unary_cases():
    for name in UNARY:
        shapes = UNARY_SHAPES if name in ("exp", "sqrt") else SOME_UNARY
        yield from (pytest.param(name, *s[1:], id=f"{name}-{s[0]}") for s in shapes)


def _binary_cases():
    for name in BINARY:
        shapes = BINARY_SHAPES if name in ("multiply", "divide") else SOME_BINARY
        yield from (pytest.param(name, *s[1:], id=f"{name}-{s[0]}") for s in shapes)


@pytest.mark.parametrize("name, shape, layout", list(_unary_cases()))
@pytest.mark.parametrize("dtype", COMPLEX, ids=["c64", "c128"])
def test_unary(name, shape, layout, dtype, rng):
    ufunc = getattr(np, name)
    # NOTE: cmath's and NumPy's complex transcendentals differ in the last bits (not correctly
    # rounded on either side).
    check(lambda a: ufunc(a), random_complex(shape, dtype, rng, layout), loose=True)


@pytest.mark.parametrize("name, a_shape, b_shape", list(_binary_cases()))
@pytest.mark.parametrize("dtype", COMPLEX, ids=["c64", "c128"])
def test_binary(name, a_shape, b_shape, dtype, rng):
    ufunc = getattr(np, name)
    a, b = random_complex(a_shape, dtype, rng), random_complex(b_shape, dtype, rng)
    if name in ("equal", "not_equal") and a.size and b.size:
        a.flat[0] = b.flat[0]
    check(lambda x, y: ufunc(x, y), a, b, loose=True)


@pytest.mark.parametrize("dtype", COMPLEX, ids=["c64", "c128"])
def test_parts_of_complex_and_real_arrays(dtype, rng):
    z = random_complex((4, 5), dtype, rng)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    n = rng.integers(-3, 4, size=(5,)).astype(np.int32)
    check(lambda z: (z.real, z.imag, np.real(z), np.imag(z), np.conj(z), z.conjugate(), np.abs(z),
                     np.angle(z), np.angle(z, deg=True)), z, loose=True)
    check(lambda x, n: (np.real(x), np.imag(x), np.conj(x), np.angle(x), np.angle(n), x.imag + 1),
          x, n, loose=True)
    check(lambda z: z.real * 2 + z.imag, z[::-1, ::2], loose=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_intermediates_fuse(dtype, rng):
    """np.exp(1j * x): a complex value made and consumed inside one kernel."""
    def phase(x):
        z = np.exp(1j * x)
        return (z * z.conj()).real + z.imag, np.abs(z + 1)
    x = rng.uniform(-3, 3, size=(6, 7)).astype(dtype)
    check(phase, x, loose=True)
    lowered = autofuse.jit(phase, backend="cpu").lower(x)
    assert len(lowered.kernels) == 1
    assert phase(x)[0].dtype == dtype


def test_nep50_promotion_with_python_complex(rng):
    x32 = rng.standard_normal(5).astype(np.float32)
    i32 = rng.integers(-3, 4, size=5).astype(np.int32)
    c64 = random_complex((5,), np.complex64, rng)
    check(lambda x, i, c: (x * 1j, i + 2j, c * 2.5, c + (1 - 1j), x + c, c * np.float64(2)),
          x32, i32, c64)
    # a Python complex argument is a weak scalar, traced once for any value
    f = autofuse.jit(lambda c, w: c * w + w, backend="cpu")
    for w in (0.5 + 2j, -1j):
        assert_same(f(c64, w), c64 * w + w)
    assert_same(autofuse.jit(lambda w: w * 2, backend="cpu")(3 + 1j), (3 + 1j) * 2)


@pytest.mark.parametrize("dtype", COMPLEX, ids=["c64", "c128"])
def test_reductions(dtype, rng):
    z = random_complex((6, 7), dtype, rng)
    check(lambda z: (z.sum(), z.sum(axis=0), np.sum(z, axis=1, keepdims=True), z.mean(),
                     np.mean(z, axis=0), np.prod(z[:3], axis=1), z.var(), np.std(z, axis=1),
                     np.var(z, axis=0, ddof=1)), z, loose=True)
    check(lambda z: (z.sum(axis=0), z.mean(axis=1), z.prod()), z[:, ::-2].T, loose=True)
    check(lambda z: (z.sum(axis=0), z.prod(axis=1)), random_complex((0, 3), dtype, rng))
    check(lambda z: (np.cumsum(z, axis=1), np.cumprod(z[:, :3], axis=1)), z, loose=True)


@pytest.mark.parametrize("dtype", COMPLEX, ids=["c64", "c128"])
def test_matmul(dtype, rng):
    a, b = random_complex((5, 6), dtype, rng), random_complex((6, 4), dtype, rng)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    check(lambda a, b: (a @ b, a.T @ a, np.dot(a[0], b[:, 1]), (a @ b).conj().T), a, b, loose=True)
    check(lambda a, x: x @ a, a, x, loose=True)


def test_casts_keep_the_real_part(rng):
    z = random_complex((3, 4), np.complex128, rng)
    z[0, :3] = [1j, 0, 2]
    x = rng.standard_normal((3, 4)).astype(np.float32)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check(lambda z, x: (z.astype(np.float32), z.astype(np.int64), z.astype(bool),
                            z.astype(np.complex64), x.astype(np.complex128) + z,
                            np.zeros((2,), np.complex64) + 1, z.astype(np.float16)), z, x)


@pytest.mark.parametrize("use", [
    lambda z: z < z, lambda z: np.maximum(z, z), lambda z: z.max(), lambda z: np.argmin(z),
    lambda z: z[z != 0].min(),
    lambda z: np.sort(z), lambda z: np.maximum.accumulate(z), lambda z: np.median(z)])
def test_ordering_is_refused(use, rng):
    z = random_complex((4,), np.complex128, rng)
    with pytest.raises(autofuse.UnsupportedError, match="complex"):
        autofuse.jit(use, backend="cpu")(z)


@pytest.mark.parametrize("use", [lambda z: np.floor(z), lambda z: z // 2, lambda z: np.arctan2(z, z)])
def test_numpy_refusals_stay_type_errors(use, rng):
    z = random_complex((4,), np.complex64, rng)
    with pytest.raises(TypeError):
        use(z)
    with pytest.raises(autofuse.DTypeError):
        autofuse.jit(use, backend="cpu")(z)


@pytest.mark.sim
def test_cuda_kernels_under_the_simulator(tmp_path):
    """complex_cases.py's programs through each CUDA strategy, run by numba's CUDA simulator."""
    import os
    import subprocess
    import sys
    pytest.importorskip("numba_cuda")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(here, "complex_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.count(": ok") == 20, done.stdout


@pytest.mark.parametrize("name", ["elementwise complex64", "row sums complex128",
                                  "column sums complex64", "total complex128",
                                  "matrix product complex64"])
def test_cuda_kernels_compile_to_sm90_ptx(name):
    """Complex accumulators shuffle their two parts; sm_90 PTX without a GPU."""
    pytest.importorskip("numba_cuda")
    from numba import config
    if config.ENABLE_CUDASIM:
        pytest.skip("PTX is not generated under the CUDA simulator")
    from complex_cases import CASES
    fn, make = next((fn, make) for case, fn, make in CASES if case == name)
    for kernel in autofuse.jit(fn, backend="cuda").lower(*make()).kernels:
        assert ".target sm_90" in kernel.ptx and ".visible .entry" in kernel.ptx


def test_special_values_as_numpy(rng):
    """A zero divisor gives NumPy's inf / nan parts (numba's own complex division raises), the
    mean of nothing is nan, and NaN and inf parts pass through as NumPy's do."""
    z = np.array([0j, 1 + 0j, 1 + 2j, 1j, complex(np.nan, 1), complex(np.inf, 0), -1 + 0j],
                 np.complex128)
    with np.errstate(all="ignore"):
        check(lambda a: (a / a[0], a / a, np.reciprocal(a), a[:0].mean(), np.log(a), np.exp(a),
                         np.sqrt(a), np.abs(a), np.isnan(a), np.isinf(a), np.isfinite(a)), z)
        check(lambda a: a / a[0], z.astype(np.complex64))


def test_functions_that_conjugate_or_take_magnitudes(rng):
    """NumPy's vecdot conjugates its first operand, cov its transposed one, and a norm of complex
    values is one of their magnitudes."""
    z = random_complex((3, 4), np.complex128, rng)
    check(lambda a: (np.vecdot(a, a[::-1]), np.cov(a), np.cov(a, bias=True), np.linalg.norm(a),
                     np.linalg.norm(a, axis=1), np.linalg.norm(a, 1), np.linalg.norm(a, "fro"),
                     np.linalg.norm(a[0], 3), np.linalg.norm(a, np.inf, axis=0)), z, loose=True)
    check(lambda a: (np.linalg.norm(a), np.vecdot(a, a)), z.astype(np.complex64), loose=True)
