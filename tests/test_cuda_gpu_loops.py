"""Loop programs with row-strip stencil kernels on a real GPU, against NumPy.

wave_2d (benchmarks/corpus: a leapfrog step reading two time levels, a stored zeros base and a
narrower array through shifted slices) hit cudaErrorIllegalAddress on an H200 at 48^2 x 20 steps
and 1024^2 x 1000 while the simulator ran the same kernel text correctly. The cause (found by
tests/ptx_addresses.py, which runs the PTX): NVVM compiled the strips' unrolled edge path's
guarded read `a2[ix((r1 - 1) * 46 + (jv2 - 1))]` as lane 0's 32-bit index plus 2, a base that
wraps on the first strip. The edge path now loops over rows with 64-bit indices
(emit/strip.py); both of its forms (Tuning.strip_edge_lanes) run here.
Run on the device machine:
`python -m pytest -m gpu tests/test_cuda_gpu_loops.py`.
"""
import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import DEFAULT
from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, and the GPU marker and skip)


def wave_2d(u_previous, u, speed2, steps):
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next = np.zeros_like(u)
        u_next[1:-1, 1:-1] = (2.0 * u[1:-1, 1:-1] - u_previous[1:-1, 1:-1]
                              + speed2[1:-1, 1:-1] * laplacian)
        u_previous, u = u, u_next
    return u


@pytest.mark.parametrize("lanes", [True, False], ids=["edge_lanes", "edge_elements"])
@pytest.mark.parametrize("n, steps", [(48, 5), (48, 20), (1024, 20), (256, 300)])
def test_wave_2d_on_the_gpu(n, steps, lanes):
    rng = np.random.default_rng(n + steps)
    x = np.linspace(-1.0, 1.0, n)
    u = np.exp(-200.0 * (x[:, None] ** 2 + x[None, :] ** 2)).astype(np.float32)   # a pulse
    previous = u.copy()
    speed2 = (0.2 + 0.05 * rng.random((n, n))).astype(np.float32)
    want = wave_2d(previous, u, speed2, steps)
    jitted = autofuse.jit(wave_2d, static_argnames=("steps",), backend="cuda",
                          tuning=DEFAULT.replace(strip_edge_lanes=lanes))
    assert any("row strips" in k.strategy for k in jitted.lower(previous, u, speed2, steps=steps).kernels)
    for _ in range(2):          # the general path, then the generated call
        got = jitted(cupy.asarray(previous), cupy.asarray(u), cupy.asarray(speed2), steps=steps)
        cupy.cuda.Device().synchronize()
        np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("graph", [None, True, False], ids=["graph", "owned", "launches"])
@pytest.mark.parametrize("case", range(8))
def test_regions_written_in_place_on_the_gpu(case, graph):
    """tests/in_place_sim_cases.py's programs on CuPy arrays, three calls each (the general path,
    then the generated call, replayed as a CUDA graph or launched one by one)."""
    from in_place_sim_cases import CASES
    name, fn, args, at_least = CASES[case]
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    jitted = autofuse.jit(fn, backend="cuda", cuda_graph=graph,
                          static_argnums=(1,) if name.startswith("red-black") else ())
    written = [k for k in jitted.lower(*args).kernels if k.strategy.startswith("in place")]
    assert len(written) >= at_least, name
    device = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    for _ in range(3):
        got = cupy.asnumpy(jitted(*device))
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=name)
