"""The sort kernels (emit/sorting.py) run by numba's CUDA simulator (no GPU): sort_sim_cases.py's
cases against NumPy, in a process of its own (the simulator is chosen at import)."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda")

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.sim
def test_sort_kernels_under_the_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "sort_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) >= 24 and all(line.endswith(": ok") for line in lines), done.stdout
