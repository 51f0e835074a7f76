"""The CUDA backend's kernels run by numba's CUDA simulator (no GPU): their logic against NumPy."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda")

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.sim
def test_every_kernel_kind_under_the_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=600)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) >= 20 and all(line.endswith(": ok") for line in lines), done.stdout
