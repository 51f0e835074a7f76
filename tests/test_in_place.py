"""Slice assignments written in place (fusion/in_place.py): which kernels write only their region
into their base's memory, and that every program computes NumPy's answer either way (fresh random
inputs; the in-place kernels' outputs are the base's memory, never poisoned)."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from autofuse.fusion.in_place import region_base
from benchmarks.index_loops import ewma, rows, running


def increments(x):
    """`y[a:b] += v`: the region read element by element where it is written."""
    y = x * 1.0
    for i in range(0, x.shape[0] - 3, 3):
        y[i:i + 3] += 1.5
        y[i:i + 3] *= y[i:i + 3]
    return y


def jacobi(u):
    """Reads overlap the written region (u[2:] while writing u[1:-1]): never in place."""
    for _ in range(4):
        u = u.copy()
        u[1:-1] = 0.5 * (u[2:] + u[:-2])
    return u


def gauss_seidel_rows(u):
    """Row i from rows i - 1 and i + 1 of the current array: row i + 1 is outside the write."""
    u = u.copy()
    for i in range(1, u.shape[0] - 1):
        u[i] = 0.25 * (u[i - 1] + u[i + 1]) + 0.5 * u[i]
    return u


def kept_copy(x):
    """The base is read after the assignment (`before`): it must stay as it was."""
    y = x * 2
    before = y.sum(axis=0)
    y[1] = 0.0
    return y, before


def argument_base(x):
    """Assigning into the caller's array: NumPy writes it; the kernel never writes it early."""
    x[2:4] = x[0:2] + 1
    x[5] = x[6] * 3
    return x.sum()


def boundaries(u):
    """A stencil sweep, then its boundary rows (small regions) each step."""
    for _ in range(3):
        new = u.copy()
        new[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        new[0] = new[1]
        new[-1] = new[-2]
        u = new
    return u


def columns(x):
    """Regions along the last axis, with a negative step."""
    y = x + 0.0
    for j in range(1, x.shape[1]):
        y[:, j] = y[:, j - 1] * 0.5 + x[:, j]
    y[::-1, 0] = y[:, 1] * 2
    return y


PROGRAMS = [
    (ewma, lambda rng: (rng.random((30, 17)), 0.3)),
    (ewma, lambda rng: (rng.random((12, 4, 5)).astype(np.float32), np.float32(0.25))),
    (rows, lambda rng: (rng.standard_normal((9, 33)),)),
    (running, lambda rng: (rng.random((7, 5)),)),
    (increments, lambda rng: (rng.random(20),)),
    (jacobi, lambda rng: (rng.random(24),)),
    (gauss_seidel_rows, lambda rng: (rng.random((8, 6)),)),
    (kept_copy, lambda rng: (rng.random((4, 5)),)),
    (boundaries, lambda rng: (rng.random((10, 7)).astype(np.float32),)),
    (columns, lambda rng: (rng.random((6, 9)),)),
]


def flat(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("fn, make", PROGRAMS, ids=[f"{fn.__name__}{k}" for k, (fn, _) in
                                                    enumerate(PROGRAMS)])
def test_programs_compute_numpys_answer(fn, make, monkeypatch):
    from autofuse.backends import cpu
    poisoned = lambda shape, dtype: np.full(shape, 7.25 if np.dtype(dtype).kind == "f" else 7,
                                            dtype)
    monkeypatch.setattr(cpu, "new_output", poisoned)
    rng = np.random.default_rng()
    args = make(rng)
    want = flat(fn(*[np.array(a, copy=True) for a in args]))
    jitted = autofuse.jit(fn, backend="cpu")
    for _ in range(2):                          # the general path, then the generated call
        got = flat(jitted(*[np.array(a, copy=True) for a in args]))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_a_caller_array_assigned_into_is_written_as_numpy_writes_it():
    x = np.random.default_rng().random(8)
    want_x = x.copy()
    want = argument_base(want_x)
    got_x = x.copy()
    got = autofuse.jit(argument_base, backend="cpu")(got_x)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got_x, want_x)


def in_place_kernels(fn, *args):
    low = autofuse.jit(fn, backend="cpu").lower(*args)
    return low, [k for k in low.kernels if k.strategy.startswith("in place")]


def test_an_ewma_writes_each_row_in_place_and_compiles_once():
    x = np.random.default_rng(1).random((50, 8))
    low, written = in_place_kernels(ewma, x, 0.5)
    assert len(written) == 49
    # (the first row with the empty array's fill, 1 - alpha, and the rows: three functions)
    assert len({k.source for k in low.kernels}) <= 3


def test_independent_rows_write_in_place_with_the_counter_as_an_argument():
    x = np.random.default_rng(2).random((20, 8))
    low, written = in_place_kernels(rows, x)
    assert len(written) >= 19
    assert len({k.source for k in written}) == 1
    assert any("scalars" in k.reason for k in written)


def test_overlapping_reads_keep_the_whole_array_kernel():
    low, written = in_place_kernels(jacobi, np.random.default_rng(3).random(24))
    assert not written
    graph = low._entry.graph
    users, results = graph.users(), {n.id for n in graph.outputs}
    assert all(region_base(k.group, users, results) is None for k in low.kernels)


def test_a_base_read_afterwards_or_given_by_the_caller_is_not_written_into():
    _, written = in_place_kernels(kept_copy, np.random.default_rng(4).random((4, 5)))
    assert not written
    _, written = in_place_kernels(argument_base, np.random.default_rng(5).random(8))
    assert all("x" not in k.reason for k in written)


def test_boundary_rows_after_a_sweep_are_written_in_place():
    _, written = in_place_kernels(boundaries, np.random.default_rng(6).random((10, 7)))
    assert len(written) >= 3          # (a boundary row a step at least)


def test_the_cuda_backend_writes_regions_in_place_but_not_results():
    """CUDA writes the steps' rows in place too; the last step, the function's result, is
    computed whole (with jit(cuda_graph=True) a graph's intermediates are its own memory, kept
    between calls, which a result must not be)."""
    pytest.importorskip("numba_cuda")
    x = np.random.default_rng(7).random((12, 8))
    low = autofuse.jit(ewma, backend="cuda").lower(x, 0.5)
    written = [k for k in low.kernels if k.strategy.startswith("in place")]
    assert len(written) == len(low.kernels) - 3, [k.strategy for k in low.kernels]
    assert not low.kernels[-1].strategy.startswith("in place")


@pytest.mark.sim
def test_cuda_regions_in_place_under_the_simulator(tmp_path):
    """The CUDA kernels that write a region in place (tests/in_place_sim_cases.py) against NumPy
    under numba's CUDA simulator, each called twice."""
    pytest.importorskip("numba_cuda")
    from simulated import run_cases
    lines = run_cases("in_place_sim_cases.py", tmp_path)
    assert len(lines) >= 7 and all(line.endswith(": ok") for line in lines), "\n".join(lines)


def test_strided_slices_meet_where_their_indices_do():
    """fusion/in_place._meet against sets of indices: progressions of either sign of step."""
    from autofuse.fusion.in_place import _meet
    rng = np.random.default_rng(12)
    for _ in range(3000):
        (a, b), (n, m) = rng.integers(-5, 30, 2), rng.integers(1, 12, 2)
        s, t = rng.choice([1, 2, 3, 4, 6, -1, -2, -3], 2)
        one, other = {a + s * k for k in range(n)}, {b + t * k for k in range(m)}
        assert _meet((min(one), abs(s), max(one)), (min(other), abs(t), max(other))) == \
            bool(one & other), (a, s, n, b, t, m)


def test_red_black_sweeps_write_each_colour_in_place():
    from in_place_sim_cases import red_black
    u = np.random.default_rng(13).random((15, 13))
    jitted = autofuse.jit(red_black, static_argnums=(1,), backend="cpu")
    written = [k for k in jitted.lower(u, 4).kernels if k.strategy.startswith("in place")]
    assert len(written) >= 6
    np.testing.assert_allclose(jitted(u, 4), red_black(u, 4), rtol=1e-12)
