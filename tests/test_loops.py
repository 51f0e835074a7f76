"""Time loops (issue 29): unrolled while tracing, they give NumPy's answer, and the kernels grow
with the number of steps, not with recompute of one step inside the next."""
import numpy as np
import pytest

import autofuse

import loop_programs as lp

rng = np.random.default_rng(29)


def jitted(fn, backend):
    return autofuse.jit(fn, backend=backend, static_argnames=("steps",))


def grid(n=12):
    return rng.random((n, n)).astype(np.float32)


@pytest.mark.parametrize("steps", [1, 4, 5, 10])
def test_heat_with_python_float_coefficient_on_cpu(steps):
    u = grid()
    f = jitted(lp.heat, "cpu")
    np.testing.assert_allclose(f(u, 0.1, steps=steps), lp.heat(u, 0.1, steps), rtol=1e-6)
    kernels = f.lower(u, 0.1, steps=steps).kernels
    assert steps <= len(kernels) <= steps + 1        # one per sweep, + the coefficient's cast


@pytest.mark.parametrize("steps", [5, 10, 50])
def test_heat_kernels_and_source_grow_linearly(steps):
    u = grid()
    lowered = jitted(lp.heat, "cpu").lower(u, 0.1, steps=steps)
    assert steps <= len(lowered.kernels) <= steps + 1
    source = sum(len(kernel.source) for kernel in lowered.kernels)
    assert source < 1500 * steps, source               # ~1.1 kB a sweep; 2.1 MB at 5 sweeps once
    np.testing.assert_allclose(lowered.fused.evaluate([u, np.float64(0.1)])[0],
                               lp.heat(u, 0.1, steps), rtol=1e-6)


def test_heat_with_literal_coefficient_on_cpu():
    u = grid()
    f = jitted(lp.heat_literal, "cpu")
    np.testing.assert_allclose(f(u, steps=6), lp.heat_literal(u, 6), rtol=1e-6)
    assert len(f.lower(u, steps=6).kernels) == 6


CASES = [
    ("jacobi_1d", lp.jacobi_1d, lambda: (np.linspace(0.0, 1.0, 24) ** 2,), 6),
    ("wave", lp.wave, lambda: (np.sin(np.linspace(0, 3, 24)), np.sin(np.linspace(0.1, 3.1, 24)),
                               0.25), 6),
    ("life", lp.life, lambda: ((rng.random((10, 10)) < 0.35).astype(np.int64),), 3),
    ("euler", lp.euler, lambda: (rng.random((2, 16)), 0.01), 20),
]


@pytest.mark.parametrize("name, fn, make, steps", CASES, ids=[c[0] for c in CASES])
def test_loop_programs_on_cpu(name, fn, make, steps):
    args = make()
    got = jitted(fn, "cpu")(*args, steps=steps)
    want = fn(*args, steps=steps)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("name, fn, make, steps", CASES, ids=[c[0] for c in CASES])
def test_loop_programs_partition_per_step(name, fn, make, steps):
    """Long loops: the fused program (run group by group) is NumPy's answer, and the kernels per
    step stay bounded."""
    args = make()
    long = steps * 8
    fused = jitted(fn, "numpy").lower(*args, steps=long).fused
    np.testing.assert_allclose(fused.evaluate(list(args))[0], fn(*args, steps=long), rtol=1e-12)
    assert len(fused.groups) <= 2 * long
    assert max(group.work for group in fused.groups) <= fused.cost.max_work
