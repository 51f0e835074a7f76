"""Shape classes on the CUDA backend: the class kernels' logic under the CUDA simulator
(dynamic_sim_cases.py) and their PTX for sm_90, with the sizes as int64 parameters."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")

HERE = os.path.dirname(os.path.abspath(__file__))


CASES = ["elementwise float32", "loop float64", "broadcast column", "rows softmax float32",
         "rows layernorm float32", "reduction float64", "product float32"]


@pytest.mark.sim
@pytest.mark.parametrize("case", CASES)
def test_class_kernels_under_the_simulator(case, tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "dynamic_sim_cases.py"), case],
                          env=env, capture_output=True, text=True, timeout=600)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith(case) and lines[0].endswith(": ok"), done.stdout


def _ptx_process() -> bool:
    from numba import config
    return not config.ENABLE_CUDASIM


@pytest.mark.skipif(not _ptx_process(), reason="PTX is not generated under the CUDA simulator")
def test_class_kernels_compile_to_ptx_with_size_parameters():
    def gelu_bias(x, b):
        y = x + b
        return 0.5 * y * (1.0 + np.tanh(np.float32(0.79788456) * (y + np.float32(0.044715) * y ** 3)))

    f = autofuse.jit(gelu_bias, backend="cuda")
    b = np.ones(256, np.float32)
    f.lower(np.ones((3, 256), np.float32), b)
    lowered = f.lower(np.ones((5, 256), np.float32), b)    # a second size: n0 = x.shape[0]
    kernel = lowered.kernels[0]
    assert kernel.strategy.startswith("grid-stride") and "vectors" in kernel.strategy
    assert "n0" in kernel.source and "sizes n0 are arguments" in kernel.reason
    entry = re.search(r"\.visible \.entry \S+\(([^)]*)\)", kernel.ptx).group(1)
    # three arrays (x, b, the result) as 64-bit pointers, then n0 as a 64-bit value
    assert entry.count(".param .u64") == 4
    assert not re.search(r"^\s*[a-z.]+\.f64\b", kernel.ptx, re.MULTILINE)


def test_column_reductions_keep_their_sizes_static_on_cuda():
    def column_sums(x):
        return (x * x).sum(axis=0)

    f = autofuse.jit(column_sums, backend="cuda", dynamic=True)
    text = f.lower(np.ones((4, 32), np.float32)).as_text("fused")
    assert "# static: x.shape[0]" in text and "plans on its sizes" in text
