"""Reliability of resources and the toolchain: cached calls leak no memory; the disk cache
survives corrupted or half-written entries and concurrent writers; without a usable numba-cuda or
GPU, `jit` works on the CPU backend and says clearly, once, why CUDA is not used."""
from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import autofuse

ROOT = str(Path(__file__).resolve().parent.parent)

SCRIPT = textwrap.dedent("""
    import numpy as np, autofuse
    @autofuse.jit
    def f(x, b):
        return np.maximum(x * 3.0 + b, 0).sum(axis=-1), np.tanh(x).T @ x
    x = np.arange(12.0).reshape(3, 4) - 5
    b = np.ones(4)
    got = f(x, b)
    want = (np.maximum(x * 3.0 + b, 0).sum(axis=-1), np.tanh(x).T @ x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    print("ok")
""")


def run_script(cache: Path, wait: bool = True):
    env = dict(os.environ, AUTOFUSE_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    command = [sys.executable, "-c", SCRIPT]
    if not wait:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


# -- memory ----------------------------------------------------------------------------------

def _growth(calls: int) -> int:
    fn = autofuse.jit(lambda x, y: (np.exp(x) * y).sum(axis=0) + 1)
    x, y = np.ones((8, 16), np.float32), np.full(16, 0.5, np.float32)
    for _ in range(200):                     # compile, fill caches, reach steady state
        fn(x, y)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            fn(x, y)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()


def test_cached_calls_leak_no_memory():
    assert _growth(10_000) < 64 * 1024


@pytest.mark.slow
def test_a_hundred_thousand_cached_calls_leak_no_memory():
    assert _growth(100_000) < 64 * 1024


# -- the disk cache --------------------------------------------------------------------------

def _corrupt(path: Path, mode: str) -> None:
    data = path.read_bytes()
    if mode == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif mode == "garbled":
        path.write_bytes(bytes(b ^ 0x5A for b in data))
    elif mode == "empty":
        path.write_bytes(b"")
    elif mode == "changed" and path.suffix == ".py":     # valid Python computing something else
        path.write_bytes(data.replace(b"3.0", b"4.0").replace(b"tanh", b"sinh"))
    elif mode == "changed":
        # NOTE: numba's binaries carry no checksum: a forged but well-formed binary is trusted
        # (the cache directory is the user's own); a broken one is what this test is about.
        path.write_bytes(data[:-7])


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache filled by one process, copied by each test that corrupts it (as test_disk_load.py
    does): the fill is the same for every corruption."""
    cache = tmp_path_factory.mktemp("filled") / "cache"
    first = run_script(cache)
    assert first.returncode == 0, first.stderr[-2000:]
    return cache


@pytest.mark.parametrize("mode", ["truncated", "garbled", "empty", "changed"])
@pytest.mark.parametrize("files", ["module", "binaries", "all"])
def test_corrupted_cache_entries_recompile(filled, tmp_path, files, mode):
    cache = tmp_path / "cache"
    shutil.copytree(filled, cache)
    suffixes = {"module": (".py",), "binaries": (".nbi", ".nbc"), "all": (".py", ".nbi", ".nbc")}
    hit = 0
    for path in cache.rglob("*"):
        if path.is_file() and path.suffix in suffixes[files] and not path.name.startswith("."):
            _corrupt(path, mode)
            hit += 1
    assert hit >= 2
    second = run_script(cache)
    assert second.returncode == 0 and second.stdout.strip() == "ok", second.stderr[-3000:]
    third = run_script(cache)                # and the repaired cache is good
    assert third.returncode == 0 and third.stdout.strip() == "ok", third.stderr[-3000:]


def test_half_written_temporary_files_are_ignored(tmp_path):
    cache = tmp_path / "cache"
    (cache / "cpu").mkdir(parents=True)
    (cache / "cpu" / ".tmp-abandoned").write_bytes(b"def input_0(")
    done = run_script(cache)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_two_processes_fill_an_empty_cache_at_once(tmp_path):
    for attempt in range(2):
        cache = tmp_path / f"cache{attempt}"
        processes = [run_script(cache, wait=False) for _ in range(2)]
        for process in processes:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0 and out.strip() == "ok", err[-3000:]
        assert not [p for p in (cache / "cpu").iterdir() if p.name.startswith(".tmp-")]
        after = run_script(cache)
        assert after.returncode == 0 and after.stdout.strip() == "ok", after.stderr[-3000:]
        shutil.rmtree(cache)


# -- the toolchain ---------------------------------------------------------------------------

TOOLCHAIN = textwrap.dedent("""
    import sys, warnings
    {setup}
    import numpy as np, autofuse
    f = autofuse.jit(lambda x: x * 2 + 1)
    x = np.arange(3.0)
    assert np.array_equal(f(x), x * 2 + 1)                      # auto: the CPU backend
    try:
        autofuse.jit(lambda x: x * 2, backend="cuda")(x)
    except autofuse.BackendError as error:
        print("BackendError:", str(error).splitlines()[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import os
        os.environ["AUTOFUSE_BACKEND"] = "cuda"
        g = autofuse.jit(lambda x: x - 1)
        assert np.array_equal(g(x), x - 1) and np.array_equal(g(x[:2]), x[:2] - 1)
        h = autofuse.jit(lambda x: x + 5)
        assert np.array_equal(h(x), x + 5)
    print("warnings:", len(caught), caught[0].category.__name__ if caught else "",
          str(caught[0].message) if caught else "")
    assert f.lower(x, backend="cuda").kernels                    # inspection needs no GPU
""")


def run_toolchain(setup: str, **env_changes) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, **env_changes)
    env.pop("AUTOFUSE_BACKEND", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run([sys.executable, "-c", TOOLCHAIN.format(setup=setup)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done.stdout


def test_without_numba_cuda_the_cpu_backend_works_and_cuda_says_why():
    out = run_toolchain("sys.modules['numba.cuda'] = None")
    assert "BackendError: the CUDA backend cannot run: numba-cuda cannot be imported" in out, out
    assert "warnings: 1 GpuUnavailableWarning autofuse: AUTOFUSE_BACKEND=cuda, but numba-cuda" \
        in out, out


def test_with_a_broken_driver_the_cpu_backend_works_and_cuda_says_why():
    setup = ("from cuda.bindings import driver\n"
             "def cuInit(flags):\n"
             "    raise RuntimeError('CUDA driver version is insufficient')\n"
             "driver.cuInit = cuInit")
    out = run_toolchain(setup)
    assert "no usable CUDA driver or GPU (RuntimeError: CUDA driver version is insufficient)" \
        in out, out
    assert "warnings: 1 GpuUnavailableWarning" in out, out


def test_a_device_array_without_cuda_is_a_clear_error(monkeypatch):
    from autofuse import backends

    class DeviceArray:
        __cuda_array_interface__ = {"shape": (3,), "typestr": "<f8", "data": (0, False),
                                    "version": 3, "strides": None}

    monkeypatch.setattr(backends, "cuda_problem", lambda: "numba-cuda finds no usable CUDA GPU")
    with pytest.raises(autofuse.BackendError, match="numba-cuda finds no usable CUDA GPU"):
        autofuse.jit(lambda x: x * 2)(DeviceArray())


def test_numba_cuda_failing_only_at_compile_time_is_a_backend_error_with_the_line():
    """cuda_problem() no longer imports numba (a disk-cache hit must not pay for it), so an
    install that fails on import is found when a kernel compiles: a BackendError there."""
    script = ("import sys, numpy as np\n"
              "import autofuse\n"
              "low = autofuse.jit(lambda x: x * 2, backend='cuda').lower(np.ones(4, np.float32))\n"
              "sys.modules['numba.cuda'] = None\n"
              "try:\n"
              "    low.kernels[0].ptx\n"
              "except autofuse.BackendError as error:\n"
              "    print(error)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=300)
    assert "cannot compile elementwise_0: numba-cuda cannot be imported" in done.stdout, \
        done.stdout + done.stderr[-2000:]
    assert "at <string>:6" in done.stdout, done.stdout     # the user's line (-c has no text)
