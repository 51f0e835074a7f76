"""First-call timing of a program's candidates (autofuse/autotune.py): which programs the CUDA
backend names candidates for (near the whole-column bounds), the option, and under the simulator
(autotune_sim_cases.py) the timing, the record on disk and the cases left untimed."""
import numpy as np
import pytest

import autofuse
from autofuse.backends import cuda
from autofuse.errors import ArgumentError
from simulated import run_cases

pytest.importorskip("numba_cuda")


def softmax0(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


# shape (float32), whether its program sits near a whole-column bound (16 MiB of columns; under
# 4,096 columns longer than 1,024 elements), a factor of two either way
NEAR = [
    ((2048, 2048), True),         # 16 MiB
    ((1000, 8192), True),         # 31 MiB
    ((4096, 8192), False),        # 128 MiB: a kernel a level, clearly
    ((512, 512), False),          # 1 MiB, short columns: column tiles, clearly
    ((1536, 1024), True),         # 6 MiB, but 1,024 columns of 1,536: near the walk
]


@pytest.mark.parametrize("shape, near", NEAR)
def test_candidates_near_the_column_bounds(shape, near):
    entry = autofuse.jit(softmax0, backend="cuda").lower(np.zeros(shape, np.float32))._entry
    found = cuda.candidates(entry)
    assert bool(found) == near, found
    if near:
        labels = [label for label, _ in found]
        assert labels == ["column tiles", "a kernel a level"]
        assert [options["tuning"].column_program_bytes for _, options in found] == [0, 1]


def test_rows_programs_have_no_candidates():
    entry = autofuse.jit(lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
                         backend="cuda").lower(np.zeros((2048, 2048), np.float32))._entry
    assert cuda.candidates(entry) == []


def test_lower_times_nothing():
    low = autofuse.jit(softmax0, backend="cuda").lower(np.zeros((2048, 2048), np.float32))
    assert not any("program:" in k.reason for k in low.kernels)


def test_the_option_is_checked():
    with pytest.raises(ArgumentError, match="autotune"):
        autofuse.jit(softmax0, autotune="yes")


@pytest.mark.sim
def test_timed_remembered_and_left_alone_under_the_simulator(tmp_path):
    lines = run_cases("autotune_sim_cases.py", tmp_path)
    assert len(lines) == 6 and all(line.endswith(": ok") for line in lines), "\n".join(lines)
