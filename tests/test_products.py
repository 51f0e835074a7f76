"""The product planner (autofuse/ir/products.py): each strategy against NumPy on the CPU backend,
the interpreter and the CUDA simulator; the reason in the fused text and the kernel records; a
matrix-vector kernel's source is small."""

import numpy as np
import pytest

import autofuse
from autofuse.ir.products import ProductLimits
from products_cases import CASES
from simulated import SHARDS, in_shard, run_cases



def _tolerance(dtype) -> dict:
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name, fn, args", [case[:3] for case in CASES], ids=[c[0] for c in CASES])
def test_products_match_numpy(name, fn, args, backend):
    expected = fn(*args)
    got = autofuse.jit(fn, backend=backend)(*args)
    pairs = zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]
    assert not isinstance(expected, tuple) or len(got) == len(expected)
    for got, expected in pairs:
        assert np.shape(got) == np.shape(expected) and \
            np.result_type(got) == np.result_type(expected)
        if np.result_type(expected).kind in "iu":
            np.testing.assert_array_equal(got, expected)
        else:
            np.testing.assert_allclose(got, expected, **_tolerance(np.result_type(expected)))


def _sums(fn, args, backend="cpu"):
    graph = autofuse.jit(fn, backend=backend).lower(*args).graph
    return [n for n in graph.nodes if n.op == "sum"], [n for n in graph.nodes if n.op == "matmul"]


@pytest.mark.parametrize("fn, args, word", [
    (lambda a, x: a @ x, (np.ones((40, 24)), np.ones(24)), "N = 1 <= 16"),
    (lambda a, x: a.T @ x, (np.ones((40, 24)), np.ones(40)), "stored by columns"),
    # (elementwise ops keep the transpose's layout: softmax regression's `rate * x.T @ g`)
    (lambda a, g: 0.5 * a.T @ (g - 1), (np.ones((40, 24)), np.ones((40, 3))), "stored by columns"),
    (lambda a, b: a @ b, (np.ones((40, 8)), np.ones((8, 36))), "K = 8 <= 16"),
    (lambda a, b: a @ b, (np.ones((64, 32, 48)), np.ones((48, 48))), "64 products of sides"),
])
def test_the_reason_is_in_the_fused_text(fn, args, word):
    graph = autofuse.jit(fn).lower(*args).graph
    reasons = [n.attrs["product"] for n in graph.nodes if n.attrs.get("product")]
    assert not [n for n in graph.nodes if n.op == "matmul"]
    assert len(reasons) == 1 and word in reasons[0]
    assert word in autofuse.jit(fn).lower(*args).as_text("fused")


def test_an_outer_product_is_one_multiply():
    graph = autofuse.jit(lambda x, y: np.outer(x, y) + 1).lower(np.ones(40), np.ones(36)).graph
    ops = [n.op for n in graph.nodes]
    assert "matmul" not in ops and "sum" not in ops and ops.count("multiply") == 1
    assert "K = 1" in autofuse.jit(lambda x, y: x[:, None] @ y[None, :]).lower(
        np.ones(4), np.ones(3)).as_text("fused")


def test_the_backends_choose_their_products():
    x, a = np.ones(64), np.ones((64, 64))
    vecmat = lambda x, a: x @ a          # noqa: E731
    sums, kept = _sums(vecmat, (x, a), "cpu")
    assert not sums and len(kept) == 1              # BLAS there
    assert len(_sums(vecmat, (x, a), "numpy")[0]) == 1
    large = lambda a, b: a @ b           # noqa: E731
    assert not _sums(large, (a, a))[0] and len(_sums(large, (a, a))[1]) == 1


def test_products_of_other_dtypes_stay_matmul():
    for dtype in (np.float16, np.bool_):
        a, x = np.ones((8, 4), dtype), np.ones(4, dtype)
        fn = lambda a, x: a @ x          # noqa: E731
        sums, kept = _sums(fn, (a, x), "numpy")
        assert not sums and kept
        np.testing.assert_array_equal(autofuse.jit(fn, backend="numpy")(a, x), a @ x)


def test_limits_of_zero_keep_every_product_tiled():
    from autofuse.ir.products import plan
    graph = autofuse.jit(lambda a, x: a @ x[:, None], backend="numpy").lower(
        np.ones((8, 40)), np.ones(40)).traced
    (node,) = [n for n in graph.nodes if n.op == "matmul"]
    assert plan(node, ProductLimits(0, 0, 0)).strategy == "tiled"
    assert plan(node, ProductLimits()).strategy == "reduction"


def test_a_matrix_vector_kernel_is_small():
    pytest.importorskip("numba_cuda")
    low = autofuse.jit(lambda a, x: a @ x, backend="cuda").lower(
        np.ones((4096, 4096), np.float32), np.ones(4096, np.float32))
    (kernel,) = low.kernels
    assert kernel.strategy.startswith("rows") and "N = 1 <= 16" in kernel.reason
    assert len(kernel.source.splitlines()) < 250


@pytest.mark.sim
@pytest.mark.parametrize("shard", range(SHARDS))
def test_products_under_the_cuda_simulator(tmp_path, shard):
    pytest.importorskip("numba_cuda")
    lines = run_cases("products_cases.py", tmp_path, shard, SHARDS, timeout=600)
    expected = sum(in_shard(i, f"{shard}/{SHARDS}") for i in range(len(CASES)))
    assert len(lines) == expected and all(line.endswith(": ok") for line in lines), "\n".join(lines)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_product_then_softmax_is_the_product_and_one_rows_kernel(backend):
    if backend == "cuda":
        pytest.importorskip("numba_cuda")

    def softmax_of_product(a, w):
        y = a @ w
        e = np.exp(y - y.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    low = autofuse.jit(softmax_of_product, backend=backend).lower(
        np.ones((256, 64), np.float32), np.ones((64, 256), np.float32))
    assert [k.group.kind for k in low.kernels] == ["output", "input"]
    assert low.kernels[1].strategy.startswith("rows")


def test_split_k_chunks():
    """Split-K (ir/split_k.py): only long K with few results, chunks dividing K, off at 0."""
    from autofuse.ir.split_k import split_chunks
    on = ProductLimits(split_k=8192)
    assert split_chunks(64 * 64, 1 << 20, on) == 512                 # chunks of 2048
    assert split_chunks(64 * 64, 15000, on) == 6                      # 2500 divides 15000
    assert split_chunks(64 * 64, 8191, on) == 0                       # K under the threshold
    assert split_chunks(1 << 20, 1 << 20, on) == 0                    # enough results to fill
    assert split_chunks(64, 8209, on) == 0                            # a prime K: no divisor
    assert split_chunks(64 * 64, 1 << 20, ProductLimits()) == 0       # off by default (CPU)


def test_split_k_graph_matches_numpy_in_the_interpreter():
    """The rewritten graph (stacked products, then a sum with the epilogue) evaluated by the
    IR's interpreter equals NumPy, in float64 and in an integer dtype (exact)."""
    from autofuse.ir.interpreter import evaluate
    from autofuse.ir.products import lower_products
    limits = ProductLimits(0, 0, 0, split_k=64, split_chunk=16)
    rng = np.random.default_rng(3)
    for fn, args in [
        (lambda x: (x - x.mean(0)).T @ (x - x.mean(0)) / 95, (rng.standard_normal((96, 5)),)),
        (lambda a, b: a @ b.T + 1, (rng.integers(-9, 9, (4, 100)), rng.integers(-9, 9, (3, 100)))),
        (lambda a, b: a @ b, (rng.standard_normal((2, 3, 80)), rng.standard_normal((80, 4)))),
    ]:
        traced = autofuse.jit(fn, backend="numpy").lower(*args).traced
        graph = lower_products(traced, limits)
        assert any(n.op == "matmul" and "split into" in n.attrs.get("product", "")
                   for n in graph.nodes)
        (got,) = evaluate(graph, list(args))
        want = fn(*args)
        if want.dtype.kind == "i":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, shapes, run", [
    # x read down its rows by neighbouring threads: a thread the 10 outputs of x's column
    (lambda x, g: x.T @ g, ((1 << 19, 64), (1 << 19, 10)), "10 outputs a thread"),
    # x's rows 256 bytes apart: a staged run (emit/run_tiles.py), x's rows copied to shared
    # memory; at K = 256 (16 chunks a row, measured slower staged) a tiled product
    (lambda x, w: x @ w, ((1 << 19, 64), (64, 10)), "10 outputs a thread for each of 3 rows"),
    (lambda x, w: x @ w, ((1 << 16, 256), (256, 4)), None),
    # rows of 3 colour channels, 12 bytes apart: a run of a pixel's 3 outputs
    (lambda x, m: x @ m.T, ((1 << 20, 3), (3, 3)), "3 outputs a thread"),
])
def test_runs_of_outputs_where_the_shared_input_is_read_together(fn, shapes, run):
    args = [np.empty(shape, np.float32) for shape in shapes]
    strategies = [k.strategy for k in autofuse.jit(fn, backend="cuda").lower(*args).kernels]
    found = [s for s in strategies if "outputs a thread" in s]
    assert (found and run in found[0]) if run else not found, strategies


def test_a_run_read_at_a_computed_index_is_refused():
    """A consumer reaching a run's reduction at an index that names no position (a reshape's
    arithmetic) raises RunIndexError, which makes the writer write the kernel without the run."""
    from autofuse.backends.cuda.emit.runs import Run, RunIndexError
    lookup = Run(axis=1, size=3, reason="").result(["red1", "red2", "red3"], (8, 3, 5), (2,))
    assert lookup(("i0", "2")) == "red3" and lookup(("i0", "0", "0")) == "red1"
    with pytest.raises(RunIndexError):
        lookup(("i0", "(i0 * 3 + 1) // 2"))


@pytest.mark.parametrize("shapes, strategy", [
    (((1 << 17, 256), (256, 4)), "tiled"),          # 4-16 columns over K > 128: tiled
    (((1 << 17, 1024), (1024, 16)), "tiled"),
    (((1 << 17, 128), (128, 16)), "columns"),       # K <= 128: the staged run
    (((1 << 17, 1024), (1024, 2)), "rows"),         # 1-2 columns: a reduction (faster than cuBLAS)
    (((1000, 20000), (20000, 4)), "rows"),          # K past split_k: as before
])
def test_few_columns_over_a_long_k_are_tiled(shapes, strategy):
    x, w = (np.empty(shape, np.float32) for shape in shapes)
    kernels = autofuse.jit(lambda x, w: x @ w, backend="cuda").lower(x, w).kernels
    assert kernels[0].strategy.startswith(strategy), [k.strategy for k in kernels]
