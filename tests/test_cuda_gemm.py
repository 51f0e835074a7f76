"""The compact matrix-product kernel (emit/gemm.py): its logic in the CUDA simulator
(gemm_sim_cases.py), its sm_90 PTX and size, and one compiled kernel for every shape of one
product's structure."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda import compile as cuda_compile
from autofuse.backends.cuda.tuning import Tuning

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COMPACT = Tuning(gemm_over_tiles=True, mma=False)   # float64 too: not on tensor cores


def relu_bias(x, w, b):
    return np.maximum(x @ w + b, 0)


def operands(m, n, k, dtype=np.float32, batch=()):
    return np.ones(batch + (m, k), dtype), np.ones((k, n), dtype), np.ones(n, dtype)


@pytest.mark.sim
def test_compact_kernel_under_the_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "gemm_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) >= 19 and all(line.endswith(": ok") for line in lines), done.stdout


needs_ptx = pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")


@needs_ptx
@pytest.mark.parametrize("dtype, m, n, k, batch", [
    (np.float32, 8192, 4096, 4096, ()), (np.float32, 2048, 64, 2048, (32,)),
    (np.float64, 1000, 1001, 999, ())])
def test_compact_kernel_is_short_and_keeps_accumulators_in_registers(dtype, m, n, k, batch):
    (kernel,) = autofuse.jit(relu_bias, backend="cuda", tuning=COMPACT).lower(
        *operands(m, n, k, dtype, batch)).kernels
    assert kernel.strategy.startswith("compact tiled")
    assert len(kernel.source.splitlines()) < 400
    ptx = kernel.ptx
    assert ".local" not in ptx                       # no local arrays: every index is constant
    kind = "f32" if dtype == np.float32 else "f64"
    assert len(re.findall(rf"fma\.rn\.{kind}", ptx)) >= 512    # a slab's 8 steps written out
    assert kernel.launch.get("min_blocks_per_sm", 0) == (2 if dtype == np.float32 else 0)


@needs_ptx
def test_two_shapes_of_one_product_compile_one_kernel(monkeypatch):
    compiled = []
    real = cuda_compile._compile_ptx
    monkeypatch.setattr(cuda_compile, "_compile_ptx",
                        lambda *args: compiled.append(args[1]) or real(*args))
    monkeypatch.setattr(cuda_compile, "_COMPILED", {})
    jitted = autofuse.jit(relu_bias, backend="cuda", tuning=COMPACT)
    first = jitted.lower(*operands(700, 600, 500)).kernels[0]
    second = jitted.lower(*operands(1300, 900, 260)).kernels[0]
    assert first.source == second.source
    assert first.ptx == second.ptx and len(compiled) == 1
    # a result of at most 64 columns takes other tiles: a new configuration, one more kernel
    narrow = jitted.lower(*operands(1300, 64, 260)).kernels[0]
    assert narrow.ptx and len(compiled) == 2
    assert narrow.launch["grid"] == (1, -(-1300 // 256), 1)


@needs_ptx
def test_products_of_one_structure_in_a_program_share_a_kernel():
    def two(a, b, c, d):
        return np.tanh(a @ b), np.tanh(c @ d)
    args = [np.ones(s, np.float64) for s in ((300, 200), (200, 250), (500, 100), (100, 400))]
    first, second = autofuse.jit(two, backend="cuda").lower(*args).kernels
    assert "the same structure" in second.reason
    # (float64: the tensor-core kernel's 64x64 tiles)
    assert first.launch["grid"] == (4, 5, 1) and second.launch["grid"] == (7, 8, 1)


def test_the_planner_keeps_the_float32_tiles_kernel_by_default():
    kernels = autofuse.jit(relu_bias, backend="cuda").lower(*operands(256, 256, 128)).kernels
    assert [k.strategy.split(",")[0] for k in kernels] == ["tiled 128x128x8"]
    kernels = autofuse.jit(relu_bias, backend="cuda").lower(
        *operands(256, 256, 128, np.float64)).kernels
    assert kernels[0].strategy.startswith("tensor cores (f64")
    kernels = autofuse.jit(relu_bias, backend="cuda", tuning=COMPACT).lower(
        *operands(256, 256, 128, np.float64)).kernels
    assert kernels[0].strategy.startswith("compact tiled")      # (Tuning.mma off)
