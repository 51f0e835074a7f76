"""Generated kernels stay byte-identical where a change means to keep them: every kernel's source,
strategy and launch on the CUDA and CPU backends, for the programs golden_sources.py lists,
against the snapshot in tests/golden/kernels.json (retake it with `python
tests/golden_sources.py --write` only where a change means to change generated code, and say so)."""
import json

import pytest

import golden_sources

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("the snapshot is of the GPU's sources, not the simulator's", allow_module_level=True)

PROGRAMS = golden_sources.programs()
with open(golden_sources.SNAPSHOT) as _file:
    SNAPSHOT = json.load(_file)


def test_the_snapshot_lists_every_program():
    expected = {f"{name}/{backend}" for name in PROGRAMS for backend in ("cuda", "cpu")}
    assert set(SNAPSHOT) == expected


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kernels_are_as_in_the_snapshot(name):
    assert golden_sources.record(name, PROGRAMS[name]) == {
        key: SNAPSHOT[key] for key in (f"{name}/cuda", f"{name}/cpu")}
