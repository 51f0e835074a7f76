"""Random loop programs (tests/loop_fuzz.py): fixed trip counts from 1 to 300, slice assignment
inside, carried arrays and a carried scalar. Each compiles within the trace bound, shares its
sweeps' kernels (distinct kernels bounded by the body, not the trip count) and matches NumPy and
the reference interpreter on the CPU backend."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings

import autofuse

from loop_fuzz import loop_programs, seeded_loop_program
from programs import check_fuzz_program

SEEDS = 24


def _check(program, seed: int) -> None:
    outcome = check_fuzz_program(program, "cpu", seed)
    assert outcome == "ok", f"{outcome}\n{program!r}"
    kernels = autofuse.jit(program.fn, backend="cpu").lower(*program.inputs(seed)).kernels
    distinct = len({kernel.source for kernel in kernels})
    # A sweep is a few kernels; the first and last sweeps may differ from the rest (they read
    # the arguments, or write the results): never a kernel a step.
    assert distinct <= 3 * (4 * program.body + 2), (distinct, len(kernels), repr(program))


@pytest.mark.parametrize("seed", range(SEEDS))
def test_seeded_loop_programs(seed):
    _check(seeded_loop_program(seed), seed)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_seeded_loop_programs_write_cuda_kernels(seed):
    """The CUDA backend's kernel sources of the same programs (written, not run: the simulator
    cases cover their logic) are valid Python: no nesting past the parser's limit."""
    pytest.importorskip("numba_cuda")
    program = seeded_loop_program(seed)
    for kernel in autofuse.jit(program.fn, backend="cuda").lower(*program.inputs(seed)).kernels:
        compile(kernel.source, kernel.name, "exec")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_programs())
def test_drawn_loop_programs(program):
    note(repr(program))
    _check(program, 0)


def _strided_updates(c, v):
    c = c.copy()
    for _ in range(300):
        c[::2] = (v[::2] * 2) % 7
        c = (c * 3 + 1) % 11
    return c


def _same_region(c, v):
    c = c.copy()
    for _ in range(300):
        c[1:-1, 1:-1] = (v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, 2:]) % 13
    return c


@pytest.mark.parametrize("fn, shape", [(_strided_updates, (7,)), (_same_region, (5, 6))],
                         ids=["strided_updates", "same_region"])
@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_chains_of_slice_assignments_nest_within_the_bound(fn, shape, backend):
    """Found by the loop generator: 300 sweeps assigning into a slice fused up to 128 ops of
    slice assignments into one kernel, each rendering the next inside its else branch: the
    source nested past Python's 100 indentation levels (IndentationError compiling it)."""
    import numpy as np
    from autofuse.fusion.cost import CostModel
    rng = np.random.default_rng(5)
    c, v = rng.integers(-4, 6, shape), rng.integers(-4, 6, shape)
    jitted = autofuse.jit(fn, backend=backend)
    np.testing.assert_array_equal(jitted(c, v), fn(c, v))
    groups = jitted.lower(c, v).fused.groups
    assert max(max(g.nesting.values()) for g in groups) <= CostModel().max_nesting
