"""The CUDA scan kernels without a GPU: their logic under numba's CUDA simulator (scan_sim_cases.py,
in a subprocess) and their PTX for sm_90, per strategy and dtype."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.sim
def test_scan_kernels_under_the_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-W", "ignore", os.path.join(HERE, "scan_sim_cases.py")],
                          env=env, capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) >= 19 and all(line.endswith(": ok") for line in lines), done.stdout


PTX_CASES = [
    ((4096, 1000), 1, np.float32, "scan rows"),
    ((8, 1 << 20), 1, np.float32, "scan look-back"),
    ((8, 100000), -1, np.float64, "scan look-back"),
    ((8, 100000), 1, np.int8, "scan look-back"),
    ((8, 100000), 1, np.bool_, "scan look-back"),
    ((8, 100000), 1, np.float16, "scan look-back"),
    ((4096, 4096), 0, np.float32, "scan columns"),
    ((1 << 16, 8), 1, np.int32, "scan columns"),
]


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="PTX is not generated under the simulator")
@pytest.mark.parametrize("shape, axis, dtype, strategy", PTX_CASES,
                         ids=[f"{c[3]}-{np.dtype(c[2]).name}" for c in PTX_CASES])
def test_scan_kernels_compile_to_sm90_ptx(shape, axis, dtype, strategy):
    fn = (lambda x: np.maximum.accumulate(x, axis=axis)) if dtype == np.bool_ else \
        (lambda x: np.cumsum(x * x, axis=axis) / 3)
    low = autofuse.jit(fn, backend="cuda").lower(np.ones(shape, dtype))
    (kernel,) = [k for k in low.kernels if k.kind == "scan"]
    assert kernel.strategy == strategy, kernel.reason
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".visible .entry" in ptx
    assert ".local" not in ptx                      # the thread's items stay in registers
    if strategy != "scan columns":
        assert "shfl.sync.up" in ptx
    if strategy == "scan look-back":
        assert re.search(r"atom\.global\.add\.u64|atom\.global\.add\.s64|atom\.add\.u64", ptx) or \
            "atom.global" in ptx
    if dtype == np.float32:
        assert not re.findall(r"^\s*[a-z.]+\.f64\b", ptx, re.MULTILINE)
