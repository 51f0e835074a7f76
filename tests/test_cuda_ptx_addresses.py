"""Generated kernels' PTX run by tests/ptx_addresses.py: every global access of every thread in
its buffer. The simulator checks the source's logic; this checks what NVVM compiled of it."""
import os

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

from ptx_addresses import check, kernels_of  # noqa: E402
import sim_cases  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = 4


def test_the_checker_finds_wave_2d_s_illegal_address():
    """The PTX of wave_2d's strip kernel before 76e2294 (48^2, 5 steps; NVVM of CUDA 13.0), whose
    launches hit cudaErrorIllegalAddress on an H200: row r0 + 1, lane 2 of the first strip read
    speed2's interior (parameter 2, 46 x 46) 2**34 bytes past its start."""
    with open(os.path.join(HERE, "data", "wave_2d_strip_unrolled_edge.ptx")) as f:
        ptx = f.read()
    sizes = [48 * 48, 48 * 48, 46 * 46, 48 * 48, 48 * 48]
    faults = check(ptx, [("buffer", n * F32) for n in sizes], (1, 12, 1), (32, 1, 1))
    assert {f.thread for f in faults} == {(0, 0, 0, 0, 0, 0)}
    assert {f.address >> 40 for f in faults} == {3}                  # parameter 2's buffer
    assert all(f.address % (1 << 40) >= 1 << 34 for f in faults)


def wave_2d(u_previous, u, speed2, steps):
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next = np.zeros_like(u)
        u_next[1:-1, 1:-1] = 2.0 * u[1:-1, 1:-1] - u_previous[1:-1, 1:-1] + speed2[1:-1, 1:-1] * laplacian
        u_previous, u = u, u_next
    return u


def _no_faults(fn, args, **options):
    low = autofuse.jit(fn, backend="cuda", **options).lower(*args)
    kernels = kernels_of(low)
    assert kernels
    for name, ptx, arguments, grid, block in kernels:
        faults = check(ptx, arguments, grid, block)
        assert not faults, (name, [str(f) for f in faults[:3]])
    return low


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="PTX is not generated under the simulator")
def test_wave_2d_kernels_read_and_write_in_bounds():
    rng = np.random.default_rng(0)
    u, previous, speed2 = (rng.random((48, 48), dtype=np.float32) for _ in range(3))
    low = _no_faults(lambda a, b, c: wave_2d(a, b, c, 5), (previous, u, speed2))
    assert any(k.strategy.startswith("row strips") for k in low.kernels)


STRIP_AND_EDGE_CASES = ("strip_stencil", "strip_nested_setslice", "strip_shift_and_bias",
                        "strip_wide_columns", "vector_stencil", "vector_nested_setslice",
                        "vector_region_only_reads")


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="PTX is not generated under the simulator")
@pytest.mark.parametrize("name", STRIP_AND_EDGE_CASES)
def test_edge_paths_read_and_write_in_bounds(name):
    """Simulator cases whose kernels take branches at the edges of slice-assigned regions."""
    (case,) = [c for c in sim_cases.CASES if c[0] == name]
    _, fn, args, *settings = case
    settings = dict(settings[0]) if settings else {}
    settings.pop("reference", None)
    settings.pop("strategy", None)
    settings.pop("calls", None)
    with sim_cases.configured(settings) as options:
        _no_faults(fn, args, **options)
