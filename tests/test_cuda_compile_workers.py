"""A program's missing kernels compiled to PTX side by side in worker processes
(backends/cuda/compile_workers.py), without a GPU: the same PTX as compiled in the calling
process, and a worker that fails leaves its kernel to the caller."""
import re

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("PTX is not generated under the CUDA simulator", allow_module_level=True)

from autofuse.backends.cuda import compile as cuda_compile  # noqa: E402
from autofuse.backends.cuda.compile_workers import compile_side_by_side, processes  # noqa: E402


def _kernels():
    """Three kernels of different structure (rows, columns, elementwise), none compiled yet."""
    def f(x, y, z):
        return x / x.sum(-1, keepdims=True), y.sum(0), np.tanh(z) * 3.5
    x = np.ones((8, 300), np.float32)
    y = np.ones((40, 70), np.float64)
    z = np.ones((3, 5), np.float32)
    low = autofuse.jit(f, backend="cuda").lower(x, y, z)
    return low._entry.program.kernels


def test_workers_make_the_ptx_the_calling_process_makes(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "3")
    monkeypatch.setattr(cuda_compile, "_COMPILED", {})
    kernels = _kernels()
    assert len(kernels) == 3 and processes() == 3
    cuda_compile.prepare_missing(kernels, {"cc": (9, 0), "driver": 0})
    assert all(k.ptx is not None and k.entry in k.ptx for k in kernels)
    side = [_named_alike(k) for k in kernels]
    monkeypatch.setattr(cuda_compile, "_COMPILED", {})
    for kernel in _kernels():
        kernel.prepare_ptx()
        assert _named_alike(kernel) in side


def _named_alike(kernel) -> str:
    """The PTX with its mangled names made alike: numba numbers each function it compiles in a
    process, the kernel and its device functions (`input_1B2v1B...` in one, `input_1B2v2B...`
    in another), and each shared array (`_cudapy_smem_1`)."""
    return re.sub(r"_cudapy_smem_\d+", "smem", re.sub(r"B\d+v\d+B", "BvB", kernel.ptx))


def test_a_failing_worker_leaves_its_kernel_to_the_caller(monkeypatch):
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "2")
    here = []
    jobs = [("", "first", (), (9, 0), None), ("raise ValueError('no')", "broken", (), (9, 0), None)]
    found = compile_side_by_side(jobs, here.append)
    assert here == [0] and found == {}


def test_one_process_compiles_everything_in_the_caller(monkeypatch):
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "1")
    assert processes() == 1
    kernels = _kernels()
    cuda_compile.prepare_missing(kernels, {"cc": (9, 0), "driver": 0})
    assert all(k.ptx is None for k in kernels)       # left to each kernel's load, as before
