"""Fusion's bounds: no kernel past the cost model's budgets, one legality table for every merge,
and "not fused" lines that agree with the groups printed."""
import random

import numpy as np
from hypothesis import HealthCheck, given, note, settings

import autofuse
from autofuse.fusion import DEFAULT, CostModel, partition

import loop_programs
from programs import _Chooser, _generate, programs


def lowered(fn, *args, static=(), **kw):
    return autofuse.jit(fn, backend="numpy", static_argnames=static, **kw).lower(*args)


def check_explanations(program):
    """Every edge reported "not fused" crosses groups; every edge that crosses is reported."""
    holders = {}
    for group in program.groups:
        for node in group.nodes:
            holders.setdefault(node.id, []).append(group)
    reported = set()
    for decision in program.decisions:
        crossing = [g for g in holders[decision.consumer.id] if decision.producer.id not in g.members]
        assert crossing, f"reported not fused but fused: {decision.text(program.names)}"
        reported.update((decision.producer.id, g.id) for g in crossing)
    for node in program.graph.nodes:
        for source in node.inputs:
            if source.op in ("input", "constant"):
                continue
            for group in holders.get(node.id, ()):
                if source.id not in group.members:
                    assert (source.id, group.id) in reported, \
                        f"{program.names[source.id]} -> {program.names[node.id]} crosses groups " \
                        f"unexplained:\n{program.as_text()}"


def check_budgets(program, cost=DEFAULT):
    for group in program.groups:
        assert len(group.members) <= cost.max_ops
        assert group.work <= cost.max_work, (group, group.work)
        assert len(group.reductions) <= cost.max_reductions, (group, len(group.reductions))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_explanations_agree_with_groups(case):
    fn, shapes, dtype = case
    note(f"steps: {fn.steps}")
    arrays = [np.ones(s, dtype) for s in shapes]
    program = lowered(fn, *arrays).fused
    check_explanations(program)
    check_budgets(program)


def test_fuzz_programs_explanations_agree_with_groups():
    for seed in range(60):
        generated = _generate(_Chooser(rng=random.Random(seed)), max_steps=8, wide=seed % 2 == 1)
        try:
            program = lowered(generated.fn, *generated.inputs(seed)).fused
        except autofuse.errors.AutofuseError:
            continue
        check_explanations(program)
        check_budgets(program)


def heat_program(steps, cost=None):
    u = np.random.default_rng(0).random((8, 8)).astype(np.float32)
    graph = lowered(loop_programs.heat, u, 0.1, steps, static=("steps",)).graph
    return partition(graph, cost or DEFAULT)


def test_heat_loop_with_argument_coefficient_is_one_kernel_per_sweep():
    # The coefficient's cast is read by every sweep: past max_recompute_groups it used to merge
    # all the sweeps' groups into one kernel that recomputed each sweep inside the next.
    for steps in (1, 4, 5, 10, 50):
        program = heat_program(steps)
        check_explanations(program)
        check_budgets(program)
        assert steps <= len(program.groups) <= steps + 1, program.as_text()
        assert max(g.work for g in program.groups) <= 16


def test_merges_apply_the_index_map_rule_to_direct_edges():
    text = heat_program(5).as_text()
    assert "read through 6 different index maps" in text
    assert "more than 4 groups (the most a value is recomputed in)" in text


def test_recompute_through_shifted_readers_stays_within_the_work_budget():
    x = np.linspace(0, 1, 64)
    for steps in (2, 6, 12):
        graph = lowered(loop_programs.stencil_chain, x, steps, static=("steps",)).graph
        for cost in (DEFAULT, CostModel(max_work=8)):
            program = partition(graph, cost)
            check_budgets(program, cost)
            check_explanations(program)
            np.testing.assert_allclose(program.evaluate([x])[0],
                                       loop_programs.stencil_chain(x, steps))


def test_work_counts_each_index_a_member_is_read_at():
    def f(x):
        a = np.exp(x)
        return (a + 1)[1:] + (a * 3)[:-1]
    program = lowered(f, np.ones(16)).fused
    check_explanations(program)
    (group,) = program.groups
    (exp,) = [n for n in group.nodes if n.op == "exp"]
    assert len(group.indices[exp.id]) == 2       # computed at i + 1 and at i
    assert group.work == len(group.nodes) + 1


def test_budget_refusal_is_explained():
    program = partition(heat_program(3).graph, CostModel(max_ops=5))
    check_explanations(program)
    check_budgets(program, CostModel(max_ops=5))
    assert "more than one kernel may hold (5)" in "\n".join(program.explanations())


def test_reductions_per_kernel_are_bounded():
    """Sibling reductions of the same arrays merge into one kernel only up to max_reductions
    (each adds its accumulators and combining code to the source), and the cut is explained."""
    rng = np.random.default_rng(0)
    data, radius = rng.random(512), rng.random(512)
    graph = lowered(loop_programs.masked_means, data, radius, 12, static=("bins",)).graph
    for cost in (DEFAULT, CostModel(max_reductions=5)):
        program = partition(graph, cost)
        check_budgets(program, cost)
        check_explanations(program)
        assert max(len(g.reductions) for g in program.groups) > cost.max_reductions // 2
        np.testing.assert_allclose(program.evaluate([data, radius])[0],
                                   loop_programs.masked_means(data, radius, 12))
    assert "more than one kernel may hold (5)" in "\n".join(program.explanations())


def test_loop_programs_explanations_agree_with_groups():
    cases = [(loop_programs.jacobi_1d, (np.ones(16),), 12),
             (loop_programs.wave, (np.ones(16), np.ones(16), 0.25), 12),
             (loop_programs.life, (np.ones((6, 6), np.int64),), 6),
             (loop_programs.euler, (np.ones((2, 8)), 0.01), 60),
             (loop_programs.heat_literal, (np.ones((8, 8), np.float32),), 12)]
    for fn, args, steps in cases:
        program = lowered(fn, *args, steps, static=("steps",)).fused
        check_explanations(program)
        check_budgets(program)


def softmax_regression_gradient(x, w, y):
    logits = x @ w
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return 0.5 * x.T @ (p - y)


def test_transcendental_recompute_through_a_chain_to_a_broadcast():
    """x.T @ (softmax(x @ w) - y) as a column reduction reads the probabilities again for each of
    x's 64 columns: counted through the division, subtraction and transpose between the exp and
    the broadcast (CUDA's model), the exp is stored once rather than computed 64 times."""
    rng = np.random.default_rng(1)
    x, w, y = rng.random((256, 64)), rng.random((64, 10)), rng.random((256, 10))
    graph = lowered(softmax_regression_gradient, x, w, y).graph
    chained = CostModel(broadcast_recompute=64, broadcast_recompute_cost=8, broadcast_chains=True)
    for cost, stored in ((chained, True), (CostModel(broadcast_recompute=64), False)):
        program = partition(graph, cost)
        check_explanations(program)
        (exp,) = [n for n in graph.nodes if n.op == "exp"]
        readers = [g for g in program.groups if any(s.id == exp.id for n in g.nodes
                                                     for s in n.inputs)]
        assert any(exp.id not in g.members for g in readers) == stored
        np.testing.assert_allclose(program.evaluate([x, w, y])[0],
                                   softmax_regression_gradient(x, w, y))
    assert "computed 64 times an element" in "\n".join(partition(graph, chained).explanations())


def logistic_gradient(x, w, y):
    """The logistic loss's gradient x.T @ dz, dz a chain of an exp and divisions a row."""
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    dz = (p - y) / (p * (1.0 - p) + 1e-3) / len(y)
    return dz @ x


def test_a_costly_per_row_value_read_across_a_column_kernel_is_stored():
    """dz @ x is a column reduction: each column's thread computes dz's row again. Counted across
    the kept axis (CUDA's broadcast_across), a dz whose chain costs an exp and divisions is
    computed once and stored; without it (the CPU's model) it stays in the column kernel. A
    cheap per-row value (a scaling) stays either way, as does one read along a row kernel."""
    rng = np.random.default_rng(3)
    x, w, y = rng.standard_normal((512, 96)), rng.standard_normal(96), rng.random(512)
    graph = lowered(logistic_gradient, x, w, y).graph
    base = dict(broadcast_recompute=64, broadcast_recompute_cost=8, broadcast_chains=True)
    for cost, stored in ((CostModel(**base, broadcast_across=True), True),
                         (CostModel(**base), False)):
        program = partition(graph, cost)
        check_explanations(program)
        (column,) = [g for g in program.groups if g.reduce_space is not None
                     and g.reduce_space[1] == (0,)]
        assert any(n.op == "exp" for n in column.nodes) != stored
        np.testing.assert_allclose(program.evaluate([x, w, y])[0], logistic_gradient(x, w, y))
    text = "\n".join(partition(graph, CostModel(**base, broadcast_across=True)).explanations())
    assert "computed 96 times an element in this kernel (read through a broadcast)" in text

    def scaled_columns(x, s):
        return (x * (s * 2.0)[:, None]).sum(0)

    def rows_of(x, s):
        return (x * np.exp(s)[:, None]).sum(1)
    for fn in (scaled_columns, rows_of):
        graph = lowered(fn, x, y).graph
        program = partition(graph, CostModel(**base, broadcast_across=True))
        assert len(program.groups) == 1, fn.__name__
        np.testing.assert_allclose(program.evaluate([x, y])[0], fn(x, y))
