"""The staged product kernel (emit/staged.py) for stacks of small products and K-small products:
which products the planner sends to it, its logic in the CUDA simulator (staged_sim_cases.py),
its sm_90 PTX, and the CPU backend left as it was."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
needs_ptx = pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")


def ones(*shapes, dtype=np.float32):
    return [np.ones(shape, dtype) for shape in shapes]


ON = Tuning(products=ProductLimits(staged=True, split_k=8192))     # (the default's products)


def strategies(fn, args, backend="cuda"):
    options = {"tuning": ON} if backend == "cuda" else {}
    return [k.strategy for k in autofuse.jit(fn, backend=backend, **options).lower(*args).kernels]


@pytest.mark.sim
def test_staged_kernel_under_the_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "staged_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) >= 14 and all(line.endswith(": ok") for line in lines), done.stdout


@pytest.mark.parametrize("shapes, dtype, staged", [
    (((8192, 32, 48), (48, 48)), np.float64, True),           # the chemistry shape
    (((4096, 16, 16), (16, 16)), np.float32, True),
    (((1024, 64, 64), (1024, 64, 64)), np.float32, True),
    (((8192, 8), (8, 8192)), np.float32, True),                # K small
    (((64, 32, 4), (64, 4, 32)), np.float64, True),
    (((4096, 4096), (4096, 4096)), np.float32, False),         # a large GEMM: tiled
    (((64, 32, 48), (48, 4)), np.float32, False),              # N small: a reduction
    (((6, 32, 48), (48, 48)), np.float32, False),              # too few products
    (((64, 32, 48), (48, 48)), np.int32, False),               # integers keep NumPy's rules
])
def test_the_planner_sends_small_stacks_and_small_k_to_the_staged_kernel(shapes, dtype, staged):
    found = strategies(lambda a, b: a @ b, ones(*shapes, dtype=dtype))
    assert any(s.startswith("staged") for s in found) == staged, found


def test_a_k_small_product_feeding_a_reduction_stays_a_reduction():
    # k-means' shape: the product is a reduction the fusion pass can join to its consumer
    found = strategies(lambda x, c: (x @ c).min(axis=1), ones((4096, 8), (8, 64)))
    assert not any(s.startswith("staged") for s in found), found


def test_the_cpu_backend_keeps_its_reductions():
    found = strategies(lambda x, w: x @ w, ones((64, 32, 48), (48, 48)), backend="cpu")
    assert not any("staged" in s for s in found)
    x, w = np.random.default_rng(3).standard_normal((16, 20, 24)), np.ones((24, 18))
    got = autofuse.jit(lambda x, w: x @ w + 1, backend="cpu")(x, w)
    np.testing.assert_allclose(got, x @ w + 1, rtol=1e-12, atol=1e-12)


def test_the_staged_rule_is_on_by_default_and_can_be_turned_off():
    product = autofuse.jit(lambda a, b: a @ b, backend="cuda")
    assert product.lower(*ones((64, 32, 48), (48, 48))).kernels[0].strategy.startswith("staged")
    off = Tuning(products=ProductLimits(split_k=8192))
    kernels = autofuse.jit(lambda a, b: a @ b, backend="cuda", tuning=off).lower(
        *ones((64, 32, 48), (48, 48))).kernels
    assert not kernels[0].strategy.startswith("staged")


@needs_ptx
@pytest.mark.parametrize("shapes, dtype", [
    (((8192, 32, 48), (48, 48)), np.float32), (((8192, 32, 48), (48, 48)), np.float64),
    (((8192, 8), (8, 8192)), np.float32), (((1024, 64, 64), (1024, 64, 64)), np.float64),
    (((4096, 17, 19), (19, 23)), np.float32)])
def test_staged_kernels_compile_to_sm90_without_local_memory(shapes, dtype):
    (kernel,) = autofuse.jit(lambda a, b, c: np.tanh(a @ b) + c, backend="cuda", tuning=ON).lower(
        *ones(*shapes, shapes[-1][-1:], dtype=dtype)).kernels
    assert kernel.strategy.startswith("staged")
    assert len(kernel.source.splitlines()) < 400
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".local" not in ptx
    kind = "f32" if dtype == np.float32 else "f64"
    assert len(re.findall(rf"fma\.rn\.{kind}", ptx)) >= 8 * 4 or shapes[0][-1] % 4
    assert re.search(r"ld\.shared\.v[24]", ptx)
    if shapes[-1][-1] % 4 == 0:
        assert re.search(r"st\.global\.v[24]\.[fb](32|64)", ptx), "no vector stores"
