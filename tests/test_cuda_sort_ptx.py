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
