"""The sort kernels (emit/sorting.py) without a GPU: sm_90 PTX for the shared-memory and the
global-scratch variants, with their strategies, shared memory within 48 KiB, and no float64
arithmetic in a float32 median."""
import re

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("PTX is not generated under the CUDA simulator", allow_module_level=True)

F64 = re.compile(r"^\s*[a-z.]+\.f64\b", re.MULTILINE)


def kernels(fn, *args):
    return autofuse.jit(fn, backend="cuda").lower(*args).kernels


def shared_bytes(ptx: str) -> int:
    return sum(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \w+\[(\d+)\]", ptx))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_sort_rows_of_4096_compile_in_shared_memory(dtype):
    (kernel,) = kernels(lambda a: np.argsort(a, axis=-1), np.zeros((64, 4096), dtype))
    assert kernel.kind == "sort" and kernel.strategy == "bitonic rows"
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and ".visible .entry" in ptx
    assert 0 < shared_bytes(ptx) <= 48 * 1024
    assert kernel.launch["block"] == 512


def test_float32_median_kernel_has_no_float64_arithmetic():
    (kernel,) = kernels(lambda a: np.median(a * 2, axis=-1), np.zeros((128, 1000), np.float32))
    assert kernel.strategy == "bitonic rows"
    assert "shared memory" in kernel.reason
    assert not F64.findall(kernel.ptx), F64.findall(kernel.ptx)[:5]


def test_long_rows_compile_over_global_scratch():
    (kernel,) = kernels(lambda a: np.sort(a), np.zeros(100_000, np.float32))
    assert kernel.strategy == "bitonic rows, global (CuPy's or torch's sort for their arrays)"
    assert "library sort" in kernel.reason
    fused = kernels(lambda a: np.sort(a), np.zeros(100_000, np.float32))
    alone = autofuse.jit(lambda a: np.sort(a), backend="cuda",
                         tuning=autofuse.backends.cuda.Tuning(library_sort=False))
    assert fused[0].strategy != alone.lower(np.zeros(100_000, np.float32)).kernels[0].strategy
    ptx = kernel.ptx
    assert ".target sm_90" in ptx and shared_bytes(ptx) == 0


class _FakeCupy:
    """NumPy standing in for CuPy's sort functions (the step's logic, without a GPU)."""
    sort = staticmethod(lambda x, axis: np.sort(x, axis=axis))
    argsort = staticmethod(lambda x, axis: np.argsort(x, axis=axis, kind="stable"))


class _FakeLibrary:
    def __init__(self, name):
        self.name = name
        self.cupy = _FakeCupy


def test_a_long_lone_sort_is_a_library_step():
    from autofuse.backends.cuda.runtime import host
    from autofuse.backends.cuda.runtime.library_sort import LibrarySortStep
    x = np.random.default_rng(0).standard_normal((3, 5000)).astype(np.float32)
    low = autofuse.jit(lambda a: (np.argsort(a * 2, axis=-1), np.median(a, axis=-1)),
                       backend="cuda").lower(x)
    program = low._entry.program
    steps = [step for step in program.steps if isinstance(step, LibrarySortStep)]
    assert len(steps) == 2 and len(program.steps) == 4     # x * 2, two sorts, the median's reads
    assert host.plannable(program, [x]) is False     # (a NumPy argument: test_cuda_host_library.py
    # has the generated call of device arrays)
    memory = {steps[0].source.id: x * 2, steps[1].source.id: x}
    for step in steps:
        step.launch(memory, _FakeLibrary("cupy"), None, None)
    np.testing.assert_array_equal(memory[steps[0].sort.id], np.argsort(x * 2, kind="stable"))
    np.testing.assert_array_equal(memory[steps[1].sort.id], np.sort(x))
    # the buffer plan reads and sets the kernel step's outputs through the library step
    steps[0].owners = ["elsewhere"]
    assert steps[0].step.owners == ["elsewhere"] and steps[0].outputs == steps[0].step.outputs
