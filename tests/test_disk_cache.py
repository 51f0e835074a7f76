"""The CPU backend's disk cache: a second process loads compiled kernels instead of compiling
(as shared libraries, without numba; with numba's own cache where those are missing), a change
of generated source or numba version makes new entries, clear_disk_cache empties it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autofuse
from autofuse.backends import disk_cache
from autofuse.backends.cpu import linking

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {root!r})
    if {fake_numba!r}:
        import numba
        numba.__version__ = {fake_numba!r}
    import numpy as np
    import autofuse
    from autofuse.backends import cpu
    from autofuse.backends.cpu import native

    @autofuse.jit
    def f(x, b):
        return np.maximum(x * np.float32({scale}) + b, 0).sum(axis=-1)

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.ones(4, np.float32)
    start = time.perf_counter()
    result = f(x, b)
    first = time.perf_counter() - start
    entry = next(iter(f._cache.values()))
    steps = entry.program.steps
    stats = [s.function.stats for s in steps if not isinstance(s.function, native.Function)]
    # numba's compiler starts by loading every typing and lowering registry (its linalg among
    # them); loading a cached binary needs none of it (cpu/binaries.py)
    compiler = "numba.np.linalg" in sys.modules
    print(json.dumps(dict(result=result.tolist(), first=first, compiler=compiler,
                          hits=sum(sum(s.cache_hits.values()) for s in stats),
                          misses=sum(sum(s.cache_misses.values()) for s in stats),
                          native=len(steps) - len(stats), numba="numba" in sys.modules,
                          kernels=len(steps))))
""")


def run_script(cache: Path, scale: float = 2.0, fake_numba: str = "") -> dict:
    """One new process's call; its `native` kernels were loaded as shared libraries, the
    others' numba `hits` and `misses` count loads and compiles from numba's cache."""
    env = dict(os.environ, AUTOFUSE_CACHE_DIR=str(cache), AUTOFUSE_CPU_LIBRARIES="1")
    script = SCRIPT.format(root=str(ROOT), scale=scale, fake_numba=fake_numba)
    out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                         capture_output=True, text=True, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])


def files(cache: Path, pattern: str) -> set:
    return {p.name for p in cache.rglob(pattern)}


def test_second_process_loads_instead_of_compiling(tmp_path):
    first = run_script(tmp_path)
    assert first["misses"] == first["kernels"] >= 1 and first["hits"] == 0
    modules, binaries = files(tmp_path, "k_*.py"), files(tmp_path, "*.nbc")
    assert modules and binaries and files(tmp_path, "*.nbi")
    libraries = files(tmp_path, "*.so")
    second = run_script(tmp_path)
    assert second["result"] == first["result"]
    if linking.linker() is not None:        # (shared libraries are linked by ld or cc)
        assert second["native"] == second["kernels"] and not second["numba"]
    assert first["compiler"] and not second["compiler"]
    # nothing new was written: same modules, same compiled binaries
    assert files(tmp_path, "k_*.py") == modules and files(tmp_path, "*.nbc") == binaries
    assert files(tmp_path, "*.so") == libraries
    assert second["first"] < first["first"]
    # without the shared libraries, numba loads its own cached binaries, compiling nothing
    shutil.rmtree(tmp_path / "cpu" / "native", ignore_errors=True)
    third = run_script(tmp_path)
    assert third["result"] == first["result"]
    assert third["hits"] == third["kernels"] and third["misses"] == 0
    assert not third["compiler"]


def test_changed_source_or_numba_version_makes_new_entries(tmp_path):
    run_script(tmp_path)
    modules = files(tmp_path, "k_*.py")
    changed = run_script(tmp_path, scale=3.0)        # another constant: other generated source
    assert changed["misses"] >= 1
    after_source = files(tmp_path, "k_*.py")
    assert after_source > modules
    bumped = run_script(tmp_path, fake_numba="0.0.0-test")   # same source, other numba version
    assert bumped["misses"] >= 1 and bumped["hits"] == 0
    assert files(tmp_path, "k_*.py") > after_source


def test_cache_dir_follows_environment_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOFUSE_CACHE_DIR", str(tmp_path / "here"))
    assert autofuse.cache_dir() == tmp_path / "here"

    @autofuse.jit
    def g(x):
        return x * np.float32(1.5) + np.float32(0.25)

    x = np.ones(5, np.float32)
    np.testing.assert_array_equal(g(x), x * np.float32(1.5) + np.float32(0.25))
    assert files(tmp_path / "here", "k_*.py")
    autofuse.clear_disk_cache()
    assert not (tmp_path / "here").exists()
    # compiled functions stay usable after clearing, and new kernels write the cache again
    np.testing.assert_array_equal(g(x), x * np.float32(1.5) + np.float32(0.25))
    g(np.ones(7, np.float32))
    assert files(tmp_path / "here", "k_*.py")
    monkeypatch.delenv("AUTOFUSE_CACHE_DIR")
    assert autofuse.cache_dir() == Path(os.path.expanduser("~")) / ".cache" / "autofuse"


def test_write_once_is_atomic_and_idempotent(tmp_path):
    path = tmp_path / "a" / "f.py"
    disk_cache.write_once(path, b"one")
    disk_cache.write_once(path, b"two")
    assert path.read_bytes() == b"one"
    assert not list(path.parent.glob(".tmp-*"))
    assert disk_cache.digest("a", "b") != disk_cache.digest("ab", "")


def cuda_kernel(fn, *args):
    """The CompiledKernel of `fn`'s first fusion group at these arguments, built without a GPU."""
    from autofuse.backends.cuda import compile
    from autofuse.backends.cuda.writer import generate
    record = autofuse.jit(fn, backend="cuda").lower(*args).kernels[0]
    source = generate(record.group, "k", {})
    return compile.CompiledKernel(record, source, compile.module_text(source, False), False)


def test_cuda_cubin_key_covers_target_and_intrinsics(monkeypatch):
    """A cached cubin is reused only for the same module text, target and intrinsics: editing
    intrinsics/vector.py, half.py, the mma files, register_block.py, divide.py or
    backends/selection.py (whose device functions generated kernels import) makes new
    entries."""
    pytest.importorskip("numba_cuda")
    from autofuse.backends.cuda import compile as cuda
    monkeypatch.setattr(cuda, "_version", lambda package: "1.0")     # (CI has no cuda.core)
    kernel = cuda_kernel(lambda x: x * 2 + 1, np.ones(64, np.float32))
    key = kernel.cache_key("sm_90")
    assert key == kernel.cache_key("sm_90") != kernel.cache_key("sm_80")
    from autofuse.backends.cuda.intrinsics import half as cuda_half
    from autofuse.backends.cuda.intrinsics import vector as cuda_vector
    assert {path.name for path in cuda._INTRINSICS} == {"vector.py", "half.py", "mma.py", "mma_shapes.py",
                                                         "register_block.py", "divide.py",
                                                         "selection.py"}
    assert all(open(m.__file__).read() in cuda._intrinsics_text()
               for m in (cuda_half, cuda_vector))
    monkeypatch.setattr(cuda, "_intrinsics_text", lambda: "# edited intrinsics")
    assert kernel.cache_key("sm_90") != key


def test_cuda_cubin_key_covers_the_linker_and_driver_versions(monkeypatch):
    """A cubin linked by one nvJitLink or under one driver is not reused after either changes
    (the driver must load what the linker made, and links where nvJitLink is absent)."""
    pytest.importorskip("numba_cuda")
    from autofuse.backends.cuda import compile as cuda
    monkeypatch.setattr(cuda, "_version", lambda package: "1.0")
    monkeypatch.setattr(cuda, "_distributions", lambda family: "nvidia_nvjitlink-13.0.88")
    kernel = cuda_kernel(lambda x: x * 2 + 1, np.ones(64, np.float32))
    key = kernel.cache_key("sm_90", 13000)
    assert key == kernel.cache_key("sm_90", 13000) != kernel.cache_key("sm_90", 12080)
    monkeypatch.setattr(cuda, "_distributions", lambda family: "nvidia_nvjitlink-13.1.80")
    assert kernel.cache_key("sm_90", 13000) != key


def test_installed_distributions_of_a_family_are_found_by_name(monkeypatch):
    pytest.importorskip("numba_cuda")
    from autofuse.backends.cuda import compile as cuda
    monkeypatch.setattr(cuda, "_dist_infos", lambda: (
        "numpy-2.4.6.dist-info", "nvidia_nvjitlink_cu12-12.8.93.dist-info",
        "nvidia_nvjitlink-13.0.88.dist-info", "nvidia_nvjitlink-13.0.88.dist-info"))
    cuda._distributions.cache_clear()
    try:
        assert cuda._distributions("nvidia-nvjitlink") == \
            "nvidia_nvjitlink-13.0.88,nvidia_nvjitlink_cu12-12.8.93"
        assert cuda._distributions("nvidia-cublas") == ""
    finally:
        cuda._distributions.cache_clear()


def test_cuda_versions_read_without_importlib_metadata():
    """The cubin key's toolchain versions come from the .dist-info folder names (importing
    importlib.metadata would cost a first call 15-25 ms): the same as importlib.metadata says."""
    pytest.importorskip("numba_cuda")
    from importlib import metadata
    from autofuse.backends.cuda import compile as cuda
    for package in ("numpy", "numba-cuda", "numba"):
        assert cuda._version(package) == metadata.version(package)


def test_cuda_load_links_on_a_miss_and_reads_the_cache_on_a_hit(tmp_path, monkeypatch):
    """CudaKernel.load without a GPU: on a miss it links the PTX for the device's target (and
    checks a bounded rows kernel for spills with the same target) and writes the cubin; a second
    kernel of the same text loads that cubin without linking."""
    pytest.importorskip("numba_cuda")
    from autofuse.backends.cuda import compile as cuda
    monkeypatch.setenv("AUTOFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cuda, "_version", lambda package: "1.0")
    linked, checked, loaded = [], [], []
    monkeypatch.setattr(cuda, "link", lambda ptx, arch: linked.append(arch) or b"cubin:" + arch.encode())
    monkeypatch.setattr(cuda, "_unless_spilling",
                        lambda cubin, ptx, arch, entry, blocks, tolerated=0:
                        checked.append(arch) or (cubin, 3))
    monkeypatch.setattr(cuda.cuda_driver, "load", lambda cubin, entry: loaded.append(cubin) or entry)
    monkeypatch.setattr(cuda.cuda_driver, "resources", lambda function: {"registers": 32})
    device = {"cc": (9, 0), "sms": 132, "driver": 13000}
    x = np.ones(64, np.float32)
    first = cuda_kernel(lambda x: x * 2 + 1, x)
    first.load(device)
    assert linked == ["sm_90"] and checked == [] and loaded == [b"cubin:sm_90"]
    assert first.function == first.entry and len(files(tmp_path, "k_*.cubin")) == 1
    again = cuda_kernel(lambda x: x * 2 + 1, x)
    again.load(device)
    assert linked == ["sm_90"] and loaded[-1] == b"cubin:sm_90"      # a hit: nothing linked
    rows = cuda_kernel(lambda x: x / x.sum(axis=-1, keepdims=True), np.ones((8, 256), np.float32))
    assert rows.source.min_blocks
    rows.load(device)
    assert linked == ["sm_90", "sm_90"] and checked == ["sm_90"]
    assert len(files(tmp_path, "k_*.cubin")) == 2
    assert rows.record.launch["min_blocks_per_sm"] == 3       # the bound it was linked with ...
    cached = cuda_kernel(lambda x: x / x.sum(axis=-1, keepdims=True), np.ones((8, 256), np.float32))
    cached.load(device)                                      # ... also when read from the cache
    assert checked == ["sm_90"] and cached.record.launch["min_blocks_per_sm"] == 3


def test_the_disk_cache_path_imports_no_numba():
    """A call whose cubin is on disk pays no numba import (about 0.2 s): tracing, a float16
    kernel's source (cuda_half's spellings) and its cache key leave numba unimported. (cuda_half
    once imported numba at module level: the first call from the disk cache went 23 -> 229 ms.)"""
    code = "\n".join([
        "import sys, numpy as np, autofuse",
        "from autofuse.backends.cuda import compile",
        "from autofuse.backends.cuda.writer import generate",
        "half = np.ones((4, 64), np.float16)",
        "low = autofuse.jit(lambda x, b: (x + b) * x - np.tanh(x), backend='cuda').lower(half, half[0])",
        "record = low.kernels[0]",
        "source = generate(record.group, 'k', {})",
        "kernel = compile.CompiledKernel(record, source, compile.module_text(source, False), False)",
        "assert 'half_add' in kernel.text and kernel.cache_key('sm_90')",
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numba_cuda', 'llvmlite')))",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_cpu_module_key_covers_the_select_intrinsic(monkeypatch):
    """The CPU cache's key holds backends/selection.py's source: its select is compiled into the
    cached binaries of every kernel that calls it, so editing it makes new entries."""
    from autofuse.backends import cpu
    path = cpu.module_path("text")
    assert path == cpu.module_path("text")
    monkeypatch.setattr(cpu, "_SELECTION", "# an edited select")
    assert cpu.module_path("text") != path
