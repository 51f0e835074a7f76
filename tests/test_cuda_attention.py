"""Flash attention (issue 35 item 2): which programs ir/attention.py recognizes and what the fused
text says, the fall-backs and why, the kernel's logic under the CUDA simulator
(attention_sim_cases.py), its sm_90 PTX, and the CPU backend unchanged on the same programs."""
import os
import re

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import DEFAULT
from autofuse.ir.interpreter import evaluate_node
from attention_cases import CASES, close, plain, qkv, reference, softmax
from simulated import SHARDS, run_cases

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

needs_ptx = pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")
CAUSAL = {"causal_tril", "causal_offset", "heads_causal_residual"}


def lowered(fn, args, backend="cuda"):
    return autofuse.jit(fn, backend=backend).lower(*args)


@pytest.mark.sim
@pytest.mark.parametrize("shard", range(SHARDS))
def test_attention_kernel_under_the_simulator(tmp_path, shard):
    lines = run_cases("attention_sim_cases.py", tmp_path, shard, SHARDS)
    assert len(lines) >= 10 and all(line.endswith(": ok") for line in lines), "\n".join(lines)


@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_attention_programs_become_one_flash_kernel(name, fn, args):
    low = lowered(fn, args)
    (kernel,) = low.kernels
    assert kernel.strategy.startswith("flash attention"), kernel.strategy
    assert kernel.reason.startswith("flash attention: softmax(q @ k^T")
    text = low.as_text("fused")
    assert "softmax_matmul(" in text and "attention='scores'" in text
    assert "the scores never stored" in text
    assert ("causal tiles skipped" in kernel.strategy) == (name in CAUSAL), kernel.strategy


def test_the_fused_text_names_the_pattern_and_the_scores_ops():
    low = lowered(plain, qkv((2,), 19, 13, 16))
    text = low.as_text("fused")
    # (no extent but the head's in the words, which a shape class compares between sizes; the
    # shapes are on the nodes)
    assert "flash attention: softmax(q @ k^T then multiply) @ v, head 16: one kernel" in text
    assert "f32[2,19,16]" in text
    assert "# 4 ops in 1 kernel (output 1)" in text
    assert "16x8 tiles" in low.kernels[0].reason or "64x32" in low.kernels[0].reason or \
        "query rows a block" in low.kernels[0].reason


def _fallback(fn, args, why):
    low = lowered(fn, args)
    assert not any(k.strategy.startswith("flash attention") for k in low.kernels)
    assert len(low.kernels) > 1
    assert f"not flash attention: {why}" in low.as_text("fused")
    with np.errstate(all="ignore"):
        got = autofuse.jit(fn)(*args)          # (the CPU backend: the same program, right)
    want = reference(fn, args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert close(g, w, args)


def test_scores_used_elsewhere_fall_back_and_say_why():
    def scores_too(q, k, v):
        s = q @ k.transpose(0, 2, 1) * 0.25
        return softmax(s) @ v, s
    _fallback(scores_too, qkv((2,), 9, 7, 16), "the scores (or a value between them")


def test_probabilities_used_elsewhere_fall_back_and_say_why():
    def probabilities_too(q, k, v):
        p = softmax(q @ k.transpose(0, 2, 1) * 0.25)
        return p @ v, p.sum()
    _fallback(probabilities_too, qkv((2,), 9, 7, 16), "a value of the softmax is also used")


def test_a_head_dimension_past_the_bound_falls_back_and_says_why():
    _fallback(plain, qkv((1,), 6, 5, 160), "the head dimension (160) is larger than the kernel "
                                           "holds (at most 128)")


def test_scores_of_two_products_fall_back_and_say_why():
    def two_products(q, k, v, r):
        return softmax(q @ k.transpose(0, 2, 1) + q @ r.transpose(0, 2, 1)) @ v
    args = qkv((2,), 9, 7, 16) + qkv((2,), 9, 7, 16)[1:2]
    _fallback(two_products, args, "the scores combine several products")


def test_a_softmax_over_another_axis_is_not_attention():
    def columns(q, k, v):
        s = q @ k.transpose(0, 2, 1)
        e = np.exp(s - s.max(-2, keepdims=True))
        return (e / e.sum(-2, keepdims=True)) @ v
    q, k, v = qkv((2,), 7, 7, 16)
    text = lowered(columns, (q, k, v)).as_text("fused")
    assert "softmax_matmul" not in text and "flash attention" not in text


def test_the_cpu_backend_keeps_its_kernels_and_text():
    args = qkv((2,), 19, 13, 16)
    low = lowered(plain, args, backend="cpu")
    assert len(low.kernels) == 3
    text = low.as_text("fused")
    assert "softmax_matmul" not in text and "attention=" not in text


@pytest.mark.parametrize("name, fn, args", CASES[:12], ids=[c[0] for c in CASES[:12]])
def test_the_cpu_backend_computes_the_same_programs(name, fn, args):
    with np.errstate(all="ignore"):
        got = autofuse.jit(fn)(*args)
    assert close(got, reference(fn, args), args)


def test_softmax_matmul_is_evaluated_as_numpy_writes_it():
    low = lowered(plain, qkv((2,), 5, 4, 8))
    node = next(n for g in low.fused.groups for n in g.nodes if n.op == "softmax_matmul")
    s, v = qkv((2,), 5, 4, 8)[0] @ np.ones((2, 8, 4), np.float32), qkv((2,), 5, 4, 8)[2]
    got = evaluate_node(node, [s, v])
    assert got.dtype == np.float32 and np.allclose(got, softmax(s) @ v, rtol=1e-6)


@needs_ptx
@pytest.mark.parametrize("fn, dtype, head", [
    (plain, np.float32, 64), (CASES[4][1], np.float32, 64),
    (CASES[2][1], np.float32, 64), (plain, np.float32, 128), (plain, np.float64, 32)],
    ids=["float32", "causal", "float64_scores", "head_128", "float64"])
def test_attention_kernels_compile_to_sm90_without_local_memory(fn, dtype, head):
    batch = (8,) if fn is plain else (4,)
    args = qkv(batch, 1024, 1024, head, dtype=dtype)
    (kernel,) = lowered(fn, args).kernels
    assert kernel.strategy.startswith("flash attention")
    assert len(kernel.source.splitlines()) < 450
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".local" not in ptx
    kind = "f64" if dtype == np.float64 else "f32"
    assert len(re.findall(rf"fma\.rn\.{kind}", ptx)) >= 32
    assert re.search(r"ld\.shared\.v[24]", ptx)
    if dtype == np.float32:
        assert re.search(r"ld\.global\.nc\.v4\.f32", ptx), "no 16-byte staging loads"
        assert "shfl.sync.bfly" in ptx
    float32_held = dtype != np.float64 and fn is not CASES[2][1]
    assert kernel.launch.get("min_blocks_per_sm", 0) == (4 if float32_held else 0)
    if os.environ.get("AUTOFUSE_SHOW_PTX"):
        print(kernel.source)


@needs_ptx
@pytest.mark.parametrize("fn, head", [(plain, 64), (CASES[4][1], 64), (plain, 128)],
                         ids=["head_64", "causal", "head_128"])
def test_float16_attention_compiles_to_mma_sync_without_local_memory(fn, head):
    args = qkv((8,), 1024, 1024, head, dtype=np.float16)
    (kernel,) = lowered(fn, args).kernels
    assert kernel.strategy.startswith("flash attention on tensor cores"), kernel.strategy
    assert "P rounded to float16" in kernel.reason and "float32 sums" in kernel.reason
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".local" not in ptx
    mma = re.findall(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32", ptx)
    assert len(mma) == 2 * (head // 16) * (64 // 8), len(mma)     # q @ k^T and P @ V, a tile
    assert "shfl.sync.bfly" in ptx and "ex2.approx" in ptx


def test_float16_attention_on_tensor_cores_says_so_in_the_fused_text():
    args = qkv((2,), 19, 13, 16, dtype=np.float16)
    low = lowered(plain, args)
    (kernel,) = low.kernels
    assert "mma.sync m16n8k16, float16 operands and float32 sums" in kernel.reason
    off = autofuse.jit(plain, backend="cuda", tuning=DEFAULT.replace(attention_mma=False))
    (plain_kernel,) = off.lower(*args).kernels
    assert "tensor cores" not in plain_kernel.strategy


def test_two_attentions_keep_a_product_each_and_their_own_causal_tiles():
    from attention_cases import two_causal_offsets
    low = lowered(two_causal_offsets, qkv((1,), 20, 20, 16))
    assert [k.strategy.startswith("flash attention") for k in low.kernels] == [True, True]
    reasons = [k.reason for k in low.kernels]
    assert "key <= row+0" in reasons[0] and "key <= row+5" in reasons[1]
    text = low.as_text("fused")
    assert "attention='scores'" in text and "attention='scores 2'" in text
