"""The joint forward+backward programs of value_and_grad planned together: how many kernels the
benchmark programs (benchmarks/gradients.py) become on the CUDA backend (lowered without a GPU)
and what crosses between them, each checked against central finite differences in float64; and
the planning steps that make them so: a total reduction split into rows first (ir/split.py),
broadcast reads keyed by the axes they read (fusion/work.py), a product or reduction joining one
of its readers' kernels (fusion/partition.py), `(a @ b).T` written as `b.T @ a.T` (ir/passes.py)."""
import numpy as np
import pytest

import autofuse
from autofuse.fusion.work import OWN_INDEX, IndexPaths, index_map
from autofuse.ir.graph import Graph

from conftest import rng_for
from test_autodiff import check


def softmax_ce(z, t):
    m = z.max(-1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(-1, keepdims=True)) + m
    return -(t * (z - lse)).sum() / z.shape[0]


def rmsnorm(x, w, r):
    return (x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w * r).sum()


def layernorm(x, w, b, r):
    xc = x - x.mean(-1, keepdims=True)
    return ((xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5) * w + b) * r).sum()


def gelu_mlp(w1, b1, w2, x, r):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return ((h @ w2) * r).sum()


def attention(q, k, v, r):
    s = (q @ np.swapaxes(k, -1, -2)) * 0.125
    e = np.exp(s - s.max(-1, keepdims=True))
    return ((e / e.sum(-1, keepdims=True)) @ v * r).sum()


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _joint(fn, args, argnums):
    return autofuse.value_and_grad(fn, argnums=argnums).lower(*args, backend="cuda").fused


def _groups_holding(fused, op):
    return [g for g in fused.groups if any(n.op == op for n in g.members.values())]


def test_softmax_cross_entropy_forward_and_backward_is_one_rows_kernel():
    rng = rng_for(40)
    z = rng.standard_normal((6, 9))
    t = np.eye(9)[rng.integers(0, 9, 6)]
    check(softmax_ce, z, t)
    fused = _joint(softmax_ce, (_f32(rng, 512, 1024), np.eye(1024, dtype=np.float32)[:512]), 0)
    assert len(fused.groups) == 2, fused.as_text()
    rows, total = fused.groups
    assert rows.reduce_space == ((512, 1024), (1,)) and len(rows.reductions) >= 4
    assert total.reduce_space == ((512,), (0,))
    # z and t read once, the gradient written once, the per-row losses kept, the loss's
    # cotangent (-1/512) read and the loss written: nothing else
    assert fused.bytes_fused() == 3 * 512 * 1024 * 4 + 2 * 512 * 4 + 4 + 4
    assert "# kept between kernels: 2.0 KiB written" in fused.as_text()


@pytest.mark.parametrize("program", [rmsnorm, layernorm])
def test_norm_gradients_hold_dx_and_the_loss_rows_in_one_rows_kernel(program):
    rng = rng_for(41)
    shapes = [(5, 7), (7,), (5, 7)] if program is rmsnorm else [(5, 7), (7,), (7,), (5, 7)]
    args = [rng.standard_normal(s) for s in shapes]
    numbers = tuple(range(len(args) - 1))
    check(program, *args, argnums=numbers)
    big = [_f32(rng, 1024) if s == (7,) else _f32(rng, 256, 1024) for s in shapes]
    fused = _joint(program, big, numbers)
    assert len(fused.groups) == 3, fused.as_text()
    rows = [g for g in fused.groups if g.reduce_space == ((256, 1024), (1,))]
    assert len(rows) == 1 and rows[0].kind == "input"
    # the weight (and bias) gradients are column sums: one kernel of their own, recomputing the
    # normalized rows from x and the kept row statistics; the loss's rows are in the rows kernel
    columns = [g for g in fused.groups if g.reduce_space == ((256, 1024), (0,))]
    assert len(columns) == 1 and len(columns[0].outputs) == len(numbers) - 1


def test_attention_softmax_forward_and_backward_fuse_and_no_kernel_transposes():
    rng = rng_for(42)
    small = [rng.standard_normal((2, 5, 3)) for _ in range(4)]
    check(attention, *small, argnums=(0, 1, 2))
    big = [_f32(rng, 4, 256, 64) for _ in range(4)]
    fused = _joint(attention, big, (0, 1, 2))
    rows = [g for g in fused.groups if g.reduce_space == ((4, 256, 256), (2,))]
    assert len(rows) == 1, fused.as_text()
    assert {n.op for n in rows[0].reductions} == {"max", "sum"}
    assert len(rows[0].outputs) == 2            # the probabilities and the scores' cotangent
    assert len(_groups_holding(fused, "matmul")) == 6
    # 6 products, the rows, the loss: no kernel of one transpose, none of the seed's product
    assert len(fused.groups) == 8
    assert not [g for g in fused.groups if g.matmul is None and g.reduce_space is None]


def test_gelu_mlp_forward_epilogue_joins_its_product_and_keeps_the_product():
    rng = rng_for(43)
    small = [rng.standard_normal(s) * 0.5 for s in [(4, 6), (6,), (6, 3), (5, 4), (5, 3)]]
    check(gelu_mlp, *small, argnums=(0, 1, 2), rtol=1e-4, atol=1e-6)
    big = [_f32(rng, *s) for s in [(256, 512), (512,), (512, 256), (384, 256), (384, 256)]]
    fused = _joint(gelu_mlp, big, (0, 1, 2))
    first = next(g for g in fused.groups if g.matmul is not None)
    assert {"tanh", "matmul"} <= {n.op for n in first.members.values()}
    assert {n.op for n in first.outputs.values()} == {"matmul", "multiply"}   # h and gelu(h)
    assert len(fused.groups) == 7, fused.as_text()
    assert "# recomputed in each kernel that reads them, not kept:" in fused.as_text()


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_total_reductions_split_into_rows_first_keep_their_values(backend):
    rng = rng_for(44)

    def f(x, y):
        rows = x - x.max(-1, keepdims=True)
        return rows, (x * y).sum(), x.max(), np.abs(x).min(), (x * 2).sum(axis=(1, 2))
    for shape in [(6, 5, 7), (1, 3, 4), (3, 1, 1)]:
        for x, y in [(rng.standard_normal(shape), rng.standard_normal(shape[-1])),
                     (rng.standard_normal(shape).astype(np.float32)[:, ::-1, ::-1],
                      rng.standard_normal(shape[-1]).astype(np.float32))]:
            jitted = autofuse.jit(f, backend=backend)
            for got, want in zip(jitted(x, y), f(x, y)):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    graph = autofuse.jit(f, backend="cpu").lower(x, y).graph
    sums = [(n.inputs[0].shape, n.attrs["axes"]) for n in graph.nodes if n.op == "sum"]
    assert (shape, (2,)) in sums and (shape[:2], (0, 1)) in sums


def test_integer_and_empty_total_reductions_are_not_split():
    def f(x, i):
        return x.max(-1), x.sum(), i.max(-1), i.sum()
    for x, i in [(np.ones((3, 4)), np.arange(12).reshape(3, 4)),
                 (np.ones((0, 4)), np.ones((0, 4), np.int64))]:
        graph = autofuse.jit(f, backend="cpu").lower(x, i).graph
        totals = [n for n in graph.nodes if n.op == "sum"]
        split = x.size > 0
        assert len([n for n in totals if n.dtype.kind == "f"]) == (2 if split else 1)
        assert len([n for n in totals if n.dtype.kind == "i"]) == 1
        got = autofuse.jit(f, backend="cpu")(x, i)
        for a, b in zip(got[1:2] + got[3:], (x.sum(), i.sum())):
            assert a == b


def test_broadcasts_of_a_per_row_value_are_one_index_whichever_way_they_are_written():
    def f(x):
        m = x.max(-1)
        return x - m.reshape(3, 1), np.broadcast_to(m.reshape(3, 1), (3, 4)) * 2
    graph = autofuse.jit(f, backend="cpu").lower(np.ones((3, 4))).graph
    assert isinstance(graph, Graph)
    users = graph.users()
    column = next(n for n in graph.nodes if n.op == "reshape")
    paths = IndexPaths()
    found = {paths.extend(OWN_INDEX, index_map(user, list(user.inputs).index(column)))
             for user in users[column.id]}
    assert found == {OWN_INDEX}
    (reduction,) = [n for n in graph.nodes if n.op == "max"]
    assert paths.extend(OWN_INDEX, index_map(reduction, 0)) == OWN_INDEX
    # a transpose or a slice reads other elements: an index of its own, as before
    assert paths.extend(OWN_INDEX, ("transpose", (), (4, 3), 0)) != OWN_INDEX


def test_a_reduction_joins_one_reader_only_where_no_cycle_forms():
    """n is read by the product's prologue (which may not hold it) and by an elementwise kernel
    that reads the product: n may not join that kernel (the product needs n first)."""
    rng = rng_for(45)

    def f(x, w):
        n = x.sum(-1, keepdims=True)
        b = (x * n) @ w
        return (np.tanh(n) + b).sum(-1)
    x, w = rng.standard_normal((40, 30)), rng.standard_normal((30, 40))
    for backend in ("cpu", "cuda"):
        autofuse.value_and_grad(lambda a, c: f(a, c).sum(), argnums=(0, 1),
                                backend=backend).lower(x, w)
    np.testing.assert_allclose(autofuse.jit(f, backend="cpu")(x, w), f(x, w), rtol=1e-10)
    check(lambda a, c: f(a, c).sum(), x[:4, :3], w[:3, :4], argnums=(0, 1))


def test_a_transposed_product_is_computed_transposed():
    rng = rng_for(46)
    a, b = rng.standard_normal((3, 20, 17)), rng.standard_normal((3, 17, 19))

    def f(x, y):
        return np.swapaxes(x @ y, -1, -2) + 1
    jitted = autofuse.jit(f, backend="cpu")
    np.testing.assert_allclose(jitted(a, b), f(a, b), rtol=1e-12)
    graph = jitted.lower(a, b).graph
    (product,) = [n for n in graph.nodes if n.op == "matmul"]
    assert product.shape == (3, 19, 20)
    # read elsewhere too, or a result itself: left as it is
    both = autofuse.jit(lambda x, y: (x @ y, (x @ y).T), backend="cpu")
    graph = both.lower(a[0], b[0]).graph
    assert [n.shape for n in graph.nodes if n.op == "matmul"] == [(20, 19)]


@pytest.mark.sim
def test_joint_programs_run_under_the_cuda_simulator(tmp_path):
    """tests/autodiff_sim_cases.py: the rows kernel with the loss's row sums, the product
    keeping its result beside its GELU epilogue (tiled and compact), a gather's gradient (a
    scatter-add), a sort's and a path through complex values, run by numba's simulator."""
    import os
    import subprocess
    import sys
    pytest.importorskip("numba_cuda")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(here, "autodiff_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.split() == ["softmax_ce:", "ok", "rmsnorm:", "ok", "mlp_tiled:", "ok",
                                   "mlp_compact:", "ok", "embedding:", "ok",
                                   "order_statistics:", "ok", "complex_spectrum:", "ok"], \
        done.stdout


def adam_step(w, m, v, x, y):
    """One Adam step of a logistic regression, its gradient taken inside the jitted step."""
    def loss(w, x, y):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        return -(y * np.log(p + 1e-7) + (1.0 - y) * np.log(1.0 - p + 1e-7)).mean()
    value, g = autofuse.value_and_grad(loss)(w, x, y)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * (g * g)
    return w - 1e-3 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-8), m, v, value


def _adam_by_hand(w, m, v, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    value = -(y * np.log(p + 1e-7) + (1.0 - y) * np.log(1.0 - p + 1e-7)).mean()
    dz = (-(y / (p + 1e-7)) + (1.0 - y) / (1.0 - p + 1e-7)) * p * (1.0 - p) / len(y)
    g = dz @ x
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * (g * g)
    return w - 1e-3 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-8), m, v, value


def test_an_adam_step_is_three_kernels_with_the_row_gradient_stored_once():
    """value_and_grad inside a jitted Adam step: the answer of the step written by hand, and on
    CUDA x @ w's rows, the loss and dz (split over blocks: an exp, logs and divisions a value),
    then dz @ x with the update; dz is stored, not recomputed for each of x's columns."""
    rng = rng_for(44)
    args = [rng.standard_normal(8) * 0.1, rng.standard_normal(8) * 0.01,
            np.abs(rng.standard_normal(8)) * 0.01, rng.standard_normal((30, 8)),
            (rng.random(30) > 0.5).astype(np.float64)]
    step = autofuse.jit(adam_step)
    for got, want in zip(step(*args), _adam_by_hand(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-12)
    big = [_f32(rng, 1024), _f32(rng, 1024), np.abs(_f32(rng, 1024)), _f32(rng, 16384, 1024),
           (rng.random(16384) > 0.5).astype(np.float32)]
    low = step.lower(*big, backend="cuda")
    assert [k.strategy.split(",")[0] for k in low.kernels] == ["rows", "split", "two-stage columns"]
    column = [g for g in low.fused.groups if g.reduce_space == ((16384, 1024), (0,))]
    assert len(column) == 1 and not any(n.op in ("exp", "log", "divide") and n.shape == (16384,)
                                        for n in column[0].nodes)
    assert "would be computed 1024 times an element" in low.fused.as_text()
