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
from autofuse.backends.cuda import compile_workers  # noqa: E402
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


@pytest.fixture
def workers(monkeypatch):
    """compile_workers with its own pool for the test (closed after it) and a cold caller."""
    monkeypatch.setattr(compile_workers, "_workers", [])
    monkeypatch.setattr(compile_workers, "_caller", {"warm": False})
    yield compile_workers
    compile_workers.close_all()


def _jobs():
    return [(k.text, k.source.name, cuda_compile.signature(k.source), (9, 0), None)
            for k in _kernels()]


def test_a_failing_worker_leaves_its_kernel_to_the_caller(monkeypatch, workers):
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "2")
    here = []
    jobs = [("", "first", (), (9, 0), None), ("raise ValueError('no')", "broken", (), (9, 0), None)]
    assert compile_side_by_side(jobs, here.append) == {} and here == []    # a cold caller waits
    assert workers.running()                          # (a job's failure is not the worker's)
    workers.caller_compiled()                         # a warm caller takes jobs too
    assert compile_side_by_side(jobs, here.append) == {} and set(here) <= {0, 1}


def test_warm_workers_take_jobs_one_after_another_and_stay(monkeypatch, workers):
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "2")       # one worker, the caller cold
    jobs = _jobs() * 2
    here = []
    found = compile_side_by_side(jobs, here.append)
    assert here == [] and sorted(found) == list(range(len(jobs)))
    assert all(entry in ptx for ptx, entry in found.values())
    (worker,) = workers._workers
    pid = worker.process.pid
    assert sorted(compile_side_by_side(jobs[:2], here.append)) == [0, 1]
    assert [w.process.pid for w in workers._workers] == [pid] and here == []
    workers.close_all()
    assert not workers.running() and worker.process.poll() is not None


def test_a_worker_that_died_is_replaced(monkeypatch, workers):
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "2")
    (worker,) = workers.warm()
    worker.kill()
    found = compile_side_by_side(_jobs()[:1], [].append)
    assert list(found) == [0] and workers._workers[0] is not worker


def test_a_cold_process_hands_even_one_kernel_to_a_warm_worker(tmp_path, monkeypatch, workers):
    monkeypatch.setenv("AUTOFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "2")
    monkeypatch.setattr(cuda_compile, "_COMPILED", {})
    (kernel, *_) = _kernels()
    device = {"cc": (9, 0), "driver": 0}
    cuda_compile.prepare_missing([kernel], device)
    assert kernel.ptx is None                         # no worker runs: left to the caller
    workers.warm()
    cuda_compile.prepare_missing([kernel], device)
    assert kernel.ptx is not None and kernel.entry in kernel.ptx


def test_a_function_loaded_before_is_noted_in_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOFUSE_CACHE_DIR", str(tmp_path))
    assert not cuda_compile.compiled_before("g") and not cuda_compile.compiled_before("")
    cuda_compile.note_compiled("g")
    cuda_compile.note_compiled("")
    assert cuda_compile.compiled_before("g") and not cuda_compile.compiled_before("h")
    assert not cuda_compile.compiled_before("")


def test_before_trace_starts_workers_only_for_a_gpu_and_a_new_function(monkeypatch, workers):
    from autofuse.backends import cuda
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "3")
    monkeypatch.setattr(cuda, "cuda_problem", lambda: "no GPU")
    cuda.before_trace("k")
    assert not workers.running()
    monkeypatch.setattr(cuda, "cuda_problem", lambda: None)
    monkeypatch.setattr(cuda, "compiled_before", lambda key: key == "loaded before")
    cuda.before_trace("loaded before")
    assert not workers.running()
    cuda.before_trace("k")
    assert len(workers._workers) == 2 and all(w.wait_ready() for w in workers._workers)


def test_one_process_compiles_everything_in_the_caller(monkeypatch):
    monkeypatch.setenv("AUTOFUSE_COMPILE_PROCESSES", "1")
    assert processes() == 1
    kernels = _kernels()
    cuda_compile.prepare_missing(kernels, {"cc": (9, 0), "driver": 0})
    assert all(k.ptx is None for k in kernels)       # left to each kernel's load, as before
