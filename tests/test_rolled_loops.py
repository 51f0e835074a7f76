"""Loops simplified and partitioned on a few of their steps and written out for every step
(ir/periods.py, fusion/rolled.py): the program they give is the one the whole unrolled graph
gives, line for line, and its results are NumPy's."""
import dataclasses

import numpy as np
import pytest

import autofuse
from autofuse.ir.graph import Builder, Graph
from autofuse.fusion import partition, rolled
from autofuse.ir.periods import find_period, shorten

import loop_programs as lp
from conftest import assert_same


def lowered_both(fn, args, static):
    """(rolled lowering, whole-graph lowering) of one call."""
    found = []
    for roll in (True, False):
        f = autofuse.jit(fn, static_argnames=tuple(static), backend="cpu")
        f.options["roll_loops"] = roll
        found.append(f.lower(*args, **static))
    return found


def whole_text(with_roll, whole) -> str:
    """The whole graph's fused text, partitioned as the rolled program was: where the rolled
    loop held each kernel to one step (Period.held), the whole graph's partition is held to its
    own steps (every traced step of the loop numbered, what follows counted as the last)."""
    loop = with_roll._entry.loop
    if loop is None or not loop.held:
        return whole.fused.as_text()
    traced = whole._entry.traced.graph
    copy_of = {node.id: -1 if i < loop.start else min((i - loop.start) // loop.length,
                                                      loop.repeats - 1)
               for i, node in enumerate(traced.nodes)}
    graph = whole._entry.graph
    steps = rolled._steps(graph, copy_of, {node.id: node for node in traced.nodes})
    held = dataclasses.replace(whole.fused.cost, max_steps=loop.held,
                               steps={k: min(s, loop.repeats - 1) for k, s in steps.items()})
    fused = partition(graph, held)
    fused.cost = whole.fused.cost
    return fused.as_text()


def python_counter(u, steps):
    """The counter enters each step as a constant: no two steps are alike."""
    for i in range(steps):
        u = u * 0.5 + i
    return u


def history(u, steps):
    """Every step's sum is kept to the end: the steps are not cut away."""
    sums = []
    for _ in range(steps):
        u = np.roll(u, 1) * 0.9 + 0.1
        sums.append(u.sum())
    return u, np.stack(sums)


def first_and_last(u, steps):
    """A value of the first step is returned with the last."""
    first = None
    for _ in range(steps):
        u = 0.5 * (np.roll(u, 1) + np.roll(u, -1))
        first = u if first is None else first
    return first, u


def invariant_inside(u, x, steps):
    """A value that does not change is computed again inside every step."""
    for _ in range(steps):
        u = u * np.exp(-x) + np.sqrt(x)[::-1] * 1e-3
        u[1:] = u[1:] + u[:-1] * 0.01
    return u


def power(a, x, steps):
    for _ in range(steps):
        x = a @ x
        x = x / np.linalg.norm(x)
    return x


def two_loops(u, steps):
    for _ in range(steps):
        u[1:-1] = 0.5 * (u[2:] + u[:-2])
    for _ in range(steps // 2):
        u = np.sqrt(np.abs(u)) + 1.0
    return u


def nested(u, steps):
    for _ in range(steps):
        for j in range(3):
            u[1:-1] = u[1:-1] + (0.1 * (j + 1)) * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def accumulate(u, v, steps):
    """x is read only after the loop: unbounded, its chain joins the last step's kernel, so the
    steps are not alike; held to one step a kernel, each step stores x and the loop rolls."""
    x = np.zeros_like(u)
    for _ in range(steps):
        u = np.roll(u, 1) * 0.5 + v
        x = x + 0.1 * u
    return x


def rng_array(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CASES = [
    # name, function, arguments, static, rolled
    ("heat", lp.heat, (rng_array((10, 12), 1, np.float32), 0.1), {"steps": 30}, True),
    ("heat_literal", lp.heat_literal, (rng_array((9, 9), 2),), {"steps": 12}, True),
    ("jacobi", lp.jacobi_1d, (rng_array(33, 3),), {"steps": 40}, True),
    ("wave_two_steps_back", lp.wave, (rng_array(20, 4), rng_array(20, 5), 0.2), {"steps": 25}, True),
    ("life", lp.life, ((rng_array((7, 8), 6) > 0).astype(np.int64),), {"steps": 20}, None),
    ("euler_one_kernel", lp.euler, (rng_array((2, 16), 7), 0.01), {"steps": 30}, None),
    ("python_counter", python_counter, (rng_array(8, 8),), {"steps": 30}, False),
    ("history", history, (rng_array(8, 9),), {"steps": 30}, None),
    ("first_and_last", first_and_last, (rng_array(8, 10),), {"steps": 30}, False),
    ("invariant_inside", invariant_inside, (rng_array(16, 11), np.abs(rng_array(16, 12))),
     {"steps": 24}, None),
    ("power", power, (rng_array((12, 12), 13), rng_array(12, 14)), {"steps": 20}, None),
    ("two_loops", two_loops, (rng_array(24, 15),), {"steps": 30}, True),
    ("nested", nested, (rng_array(24, 16),), {"steps": 14}, True),
    ("accumulate", accumulate, (rng_array(64, 17), rng_array(64, 18)), {"steps": 60}, True),
]


@pytest.mark.parametrize("name, fn, args, static, rolled", CASES, ids=[c[0] for c in CASES])
def test_rolled_program_is_the_whole_program(name, fn, args, static, rolled):
    with_roll, whole = lowered_both(fn, args, static)
    if rolled is not None:
        assert (with_roll._entry.loop is not None) == rolled
    assert with_roll.fused.as_text() == whole_text(with_roll, whole)
    assert whole._entry.loop is None
    f = autofuse.jit(fn, static_argnames=tuple(static), backend="cpu")
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    assert_same(f(*copies, **static), fn(*[a.copy() if isinstance(a, np.ndarray) else a
                                           for a in args], **static))


def test_loop_text_says_what_was_done_once():
    lowered = autofuse.jit(lp.jacobi_1d, static_argnames="steps", backend="cpu").lower(
        np.ones(16), steps=50)
    text = lowered.as_text("fused")
    assert "# loop: 50 steps of" in text
    assert "steps 5-48 copied from step 4" in text


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_steps_held_to_one_kernel_each(backend):
    """A loop that rolls only with each kernel held to one step: the text says so, the CUDA
    program compiles a few kernels for 60 steps, and the answer is NumPy's."""
    u, v = rng_array(64, 19), rng_array(64, 20)
    f = autofuse.jit(accumulate, static_argnames="steps", backend=backend)
    lowered = f.lower(u, v, steps=60)
    assert lowered._entry.loop is not None and lowered._entry.loop.held == 1
    assert "each kernel holds one step's values" in lowered.as_text("fused")
    assert "the kernel would hold values of several steps of the loop" in lowered.as_text("fused")
    if backend == "cuda":
        assert len({kernel.source for kernel in lowered.kernels}) <= 6
    else:
        assert_same(f(u, v, steps=60), accumulate(u, v, steps=60))


def test_steps_not_held_where_that_moves_more_bytes():
    """Mandelbrot's escape counts are summed once after the loop when kernels span steps; held
    to one step, each step would store them (1.4x the bytes): the loop is not held."""
    from benchmarks.corpus import find
    program = find("mandelbrot")
    args, static = program.arguments("large", program.dtypes[0])
    lowered = autofuse.jit(program.function, static_argnames=program.static,
                           backend="cuda").lower(*args, **static)
    loop = lowered._entry.loop
    assert loop is None or not loop.held


def test_corpus_loops_roll_to_the_same_program():
    """The corpus's loops at their small sizes: where a loop rolls, the same fused text."""
    from benchmarks.corpus import find
    count = 0
    for name in ("heat_2d", "wave_2d", "burgers_1d", "advection_lax_wendroff", "sinkhorn",
                 "richardson", "power_iteration", "diffusion_periodic", "least_squares_gd"):
        program = find(name)
        args, static = program.arguments("small", program.dtypes[0])
        with_roll, whole = lowered_both(program.function, args, static)
        assert with_roll.fused.as_text() == whole_text(with_roll, whole), name
        count += with_roll._entry.loop is not None
    assert count >= 7


@pytest.mark.parametrize("name, steps", [("least_squares_gd", 61), ("particles_in_field", 40)])
def test_loops_whose_kernels_repeat_every_few_steps(name, steps):
    """A step's value recomputed in the next steps' kernels (up to the bound on recomputing, then
    stored): the kernels repeat every few steps, which are rolled as one (the remainder after)."""
    from benchmarks.corpus import find
    program = find(name)
    args, static = program.arguments("small", program.dtypes[0])
    with_roll, whole = lowered_both(program.function, args, dict(static, steps=steps))
    assert with_roll._entry.loop is not None
    assert with_roll._entry.loop.length > len(with_roll.traced.nodes) // (steps + 1)
    assert with_roll.fused.as_text() == whole_text(with_roll, whole)


def steps_graph(steps: int, read_early_at_end: bool) -> Graph:
    """x -> (x * 2 + 2) repeated; the end optionally also reads the fourth step's value."""
    b = Builder()
    x = b.add("input", (), {"index": 0}, shape=(4,), dtype=np.float64)
    two = b.add("constant", (), {"value": np.array(2.0)}, shape=(), dtype=np.float64)
    value, kept = x, []
    for _ in range(steps):
        value = b.add("add", (b.add("multiply", (value, two), origin="f.py:3"), two),
                      origin="f.py:3")
        kept.append(value)
    out = b.add("add", (value, kept[3])) if read_early_at_end else value
    return Graph(b.nodes, [x], [out])


def test_period_found_and_cut():
    period = find_period(steps_graph(40, False))
    assert period is not None and period.length == 2 and period.repeats >= 39
    cut, copy_of = shorten(steps_graph(40, False), period)
    assert len(cut.nodes) < 20
    assert sorted(set(copy_of.values()))[-1] >= 5


def test_cut_refused_where_the_end_reads_an_early_step():
    graph = steps_graph(40, True)
    period = find_period(graph)
    assert period is not None
    assert shorten(graph, period) is None


def test_too_few_steps_are_not_cut():
    assert find_period(steps_graph(6, False)) is None


@pytest.mark.parametrize("seed", [0, 8, 16, 24, 32, 48, 171])
def test_random_loops_roll_to_the_same_program(seed):
    """The loop fuzz's programs (tests/loop_fuzz.py): rolled or not, the same fused program
    (48: a reason naming another node; 171: decisions of one producer in launch order)."""
    from loop_fuzz import seeded_loop_program
    program = seeded_loop_program(seed)
    found = []
    for roll in (True, False):
        f = autofuse.jit(program.fn, backend="cpu")
        f.options["roll_loops"] = roll
        found.append(f.lower(*program.inputs(seed)))
    assert found[0].fused.as_text() == whole_text(*found), repr(program)


def test_rolled_steps_with_a_reduction(rng):
    """A loop whose copied steps' kernels hold a reduction (the maximum after an in-place heat
    loop fuses into the last step's kernel): the copies know their reductions' order as the
    group they copy does (found by a sweep of new programs: AttributeError)."""
    def heat(u, steps, alpha):
        for _ in range(steps):
            u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        return u.max(), u.sum()

    for steps in (5, 25):
        u = rng.random(200)
        mine, theirs = u.copy(), u.copy()
        got = autofuse.jit(heat, backend="cpu")(mine, steps, 0.2)
        want = heat(theirs, steps, 0.2)
        for g, w in zip(got, want):
            assert_same(g, w)
        assert_same(mine, theirs)
