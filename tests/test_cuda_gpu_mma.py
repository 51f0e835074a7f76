"""The tensor-core product kernel (emit/mma_gemm.py) on a real GPU, against NumPy in float64: odd
sizes (no multiple of a tile), transposed operands, batch broadcasting,
prologues and epilogues; float64 (each mma shape), float16, and float32 as "tf32" and
"3xtf32", each within its arithmetic's error.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_mma.py`.
"""
import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import Tuning

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

rng = np.random.default_rng(35)


def rand(dtype, *shape):
    return rng.standard_normal(shape).astype(dtype)


# error (relative to the result's largest magnitude) each arithmetic stays under: float64 exact
# products summed in float64; float16 against NumPy's own float16 answer (float32 sums rounded
# once, then each op rounded: a few units of float16's 2^-11 apart where sums differ in order);
# TF32 operands rounded to 10 fraction bits (2^-11 each: ~1e-2 of the largest value after K =
# 200 terms and a tanh); 3xtf32 close to float32's (eps 1.2e-7) over K terms
TOLERANCE = {"f64": 1e-12, "f16": 4e-3, "tf32": 2e-2, "3xtf32": 2e-5}
PROGRAMS = {
    "relu_bias": (lambda x, w, b: np.maximum(x @ w + b, 0), lambda m, n, k: [(m, k), (k, n), (n,)]),
    "transposed_both": (lambda x, w: np.tanh(x.T @ w.T) * 2, lambda m, n, k: [(k, m), (n, k)]),
    "batch_residual": (lambda a, b, r: a @ b + r, lambda m, n, k: [(3, 1, m, k), (2, k, n), (n,)]),
    "prologue": (lambda x, w: (x * 2) @ (w - 1), lambda m, n, k: [(m, k), (k, n)]),
}
ON = Tuning(mma=True)       # float64/float16 on tensor cores (the default; named for the tests)
DTYPES = {"f64": (np.float64, {"tuning": ON}), "f16": (np.float16, {"tuning": ON}),
          # (float16's default: the pipelined kernel, its element loop at these odd sizes; and
          # the register-staged kernel, emit/mma_gemm.py)
          "f16_registers": (np.float16, {"tuning": ON.replace(mma_stages=0)}),
          "tf32": (np.float32, {"matmul_precision": "tf32", "tuning": ON}),
          "3xtf32": (np.float32, {"matmul_precision": "3xtf32", "tuning": ON})}


@pytest.mark.parametrize("kind", sorted(DTYPES))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_tensor_core_products_match_numpy(program, kind):
    fn, shapes = PROGRAMS[program]
    dtype, options = DTYPES[kind]
    kind = kind.split("_")[0]
    args = [rand(dtype, *shape) for shape in shapes(261, 147, 203)]
    jitted = autofuse.jit(fn, **options)
    got = cupy.asnumpy(jitted(*[cupy.asarray(a) for a in args])).astype(np.float64)
    want = fn(*[a if kind == "f16" else a.astype(np.float64) for a in args]).astype(np.float64)
    assert got.shape == want.shape
    error = np.abs(got - want).max() / np.abs(want).max()
    bound = TOLERANCE[kind]
    if kind == "3xtf32":    # within 10x NumPy's own float32 error on these inputs (measured
        # 3-4.3x here on an H200 and an H100, 11x at K = 4096: the tensor cores' float32 sums
        # truncate; TF32 alone is ~100x), so an operand's low part lost would fail it
        single = np.abs(fn(*args).astype(np.float64) - want).max() / np.abs(want).max()
        bound = max(bound, 10 * single)
    assert error < bound, (error, bound)
    strategies = [k.strategy for k in jitted.lower(*args, backend="cuda").kernels]
    assert any(s.startswith(f"tensor cores ({kind}") for s in strategies), strategies


@pytest.mark.parametrize("shape", ["mma_f64_m8n8k4", "mma_f64_m16n8k4", "mma_f64_m16n8k8",
                                   "mma_f64_m16n8k16"])
def test_each_float64_instruction(shape):
    tile = {"mma_f64_m8n8k4": (2, 2, 4, 4, 2), "mma_f64_m16n8k16": (2, 2, 2, 4, 1)}.get(
        shape, (2, 2, 2, 4, 2))
    fn = PROGRAMS["relu_bias"][0]
    args = [rand(np.float64, *s) for s in PROGRAMS["relu_bias"][1](133, 77, 91)]
    jitted = autofuse.jit(fn, tuning=Tuning(mma=True, mma_f64_shape=shape, mma_f64_tile=tile))
    got = cupy.asnumpy(jitted(*[cupy.asarray(a) for a in args]))
    assert np.allclose(got, fn(*args), rtol=1e-12, atol=1e-12)


def test_float16_matches_numpy_rounding():
    """float16: float32 sums of exact products, rounded once, as NumPy's float16 matmul."""
    x, w = rand(np.float16, 130, 70), rand(np.float16, 70, 90)
    got = cupy.asnumpy(autofuse.jit(lambda x, w: x @ w, tuning=ON)(cupy.asarray(x),
                                                                  cupy.asarray(w)))
    want = (x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)
    assert np.abs(got.astype(np.float32) - want.astype(np.float32)).max() <= \
        2 ** -10 * np.abs(want.astype(np.float32)).max()


# float16 through the pipelined kernel (emit/mma_pipeline.py) where its operands take cp.async:
# sizes whose strides are multiples of 8 elements, edges of partial blocks zero-filled, each
# operand along K or along its tile (ldmatrix .trans), batches, a strided view, launch bounds
PIPELINED = {
    "aligned_edges": (lambda x, w, b: np.maximum(x @ w + b, 0), [(300, 256), (256, 200), (200,)]),
    "transposed_both": (lambda x, w: x.T @ w.T, [(96, 136), (72, 96)]),
    "transposed_a": (lambda x, w: (x.T @ w).astype(np.float32) * 3, [(136, 264), (136, 40)]),
    "batch": (lambda a, b, r: a @ b + r, [(3, 1, 130, 64), (2, 64, 48), (48,)]),
    "long_k": (lambda x, w: x @ w, [(64, 2048), (2048, 64)]),
}


@pytest.mark.parametrize("tuning", ["default", "bounded", "eight_warps", "two_stages"])
@pytest.mark.parametrize("program", sorted(PIPELINED))
def test_float16_pipelined_kernel_matches_numpy(program, tuning):
    fn, shapes = PIPELINED[program]
    changes = {"default": {"mma_stages": 3}, "bounded": {"mma_stages": 3, "mma_blocks": 2},
               "eight_warps": {"mma_stages": 3, "mma_f16_tile": (2, 4, 4, 4, 2), "mma_blocks": 2},
               "two_stages": {"mma_stages": 2}}
    args = [rand(np.float16, *shape) for shape in shapes]
    jitted = autofuse.jit(fn, tuning=ON.replace(**changes[tuning]))
    got = cupy.asnumpy(jitted(*[cupy.asarray(a) for a in args])).astype(np.float64)
    want = fn(*args).astype(np.float64)
    assert got.shape == want.shape
    assert np.abs(got - want).max() / np.abs(want).max() < TOLERANCE["f16"]
    strategies = [k.strategy for k in jitted.lower(*args, backend="cuda").kernels]
    assert any("cp.async stages" in s for s in strategies), strategies


def test_float16_pipelined_kernel_reads_a_strided_view():
    """A view whose row stride is a multiple of 8 elements but whose K is not: cp.async chunks
    read only the elements before K (a short source size), the rest zeros."""
    x, w = rand(np.float16, 200, 64), rand(np.float16, 40, 136)
    fn = lambda x, w: x @ w     # noqa: E731
    gx, gw = cupy.asarray(x)[:, :37], cupy.asarray(w)[:37, :131]
    got = cupy.asnumpy(autofuse.jit(fn, tuning=ON)(gx, gw)).astype(np.float64)
    want = (x[:, :37].astype(np.float32) @ w[:37, :131].astype(np.float32)).astype(np.float64)
    assert np.abs(got - want).max() / np.abs(want).max() < TOLERANCE["f16"]
