"""The CUDA backend's kernels run by numba's CUDA simulator (no GPU): their logic against NumPy."""
import pytest

from simulated import SHARDS, run_cases

pytest.importorskip("numba_cuda")


@pytest.mark.sim
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_kernel_kind_under_the_simulator(tmp_path, shard):
    lines = run_cases("sim_cases.py", tmp_path, shard, SHARDS)
    assert len(lines) >= 10 and all(line.endswith(": ok") for line in lines), "\n".join(lines)
