"""Kernels loaded from the disk cache as shared libraries (backends/cpu/native.py, linking.py,
runtime.py): a new process computes what numba computed, bit for bit, without importing numba;
other signatures, corrupted libraries or indexes, and other machines fall back to numba's path
and are repaired."""
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

from autofuse.backends.cpu import linking, native

ROOT = str(Path(__file__).resolve().parent.parent)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or linking.linker() is None,
    reason="shared libraries of kernels are linked on Linux, with ld or cc")

# Five kernels: rows (parallel, with scratch arrays numba allocates), columns, a full reduction
# over a bool mask, int64 arithmetic, a transpose. `layout` passes x in Fortran order (another
# signature of the same kernels); results are printed as bytes for a bit-for-bit comparison.
SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np, autofuse
    from autofuse.backends.cpu import native

    def f(x, y, m, i):
        a = np.exp(x - x.max(-1, keepdims=True))
        s = a / a.sum(-1, keepdims=True)
        c = (x * y[:, None]).sum(0)
        w = np.where(m, x, 0).mean()
        k = (i * 3 + 1) % 7
        t = x.T + 1
        return s, c, w, k, t

    seed, layout = int(sys.argv[1]), sys.argv[2]
    r = np.random.default_rng(seed)
    x = r.standard_normal((512, 256)).astype(np.float32)
    if layout == "F":
        x = np.asfortranarray(x)
    y = r.standard_normal(512).astype(np.float32)
    m = r.random((512, 256)) > 0.5
    i = r.integers(-50, 50, 1000)
    g = autofuse.jit(f)
    got = g(x, y, m, i)
    want = f(x.astype(np.float64), y.astype(np.float64), m, i)     # float32 sums: against float64
    for a, b in zip(got, want):
        tolerance = 1e-4 if a.dtype == np.float32 else 0
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)
    steps = next(iter(g._cache.values())).program.steps
    print(json.dumps({
        "results": [np.ascontiguousarray(a).tobytes().hex() for a in got],
        "native": [isinstance(s.function, native.Function) for s in steps],
        "numba": "numba" in sys.modules, "llvmlite": "llvmlite" in sys.modules,
        "scipy": "scipy" in sys.modules}))
""")


def run(cache: Path, seed: int = 0, layout: str = "C", **env) -> dict:
    environment = dict(os.environ, AUTOFUSE_CACHE_DIR=str(cache), PYTHONPATH=ROOT,
                       AUTOFUSE_CPU_LIBRARIES="1", **env)
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(seed), layout], env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache filled by one process (numba compiled every kernel), and what it computed."""
    cache = tmp_path_factory.mktemp("filled")
    first = run(cache)
    assert first["numba"] and not any(first["native"])
    return cache, first


def copy_of(filled, tmp_path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(filled[0], cache)
    return cache


def test_a_new_process_loads_every_kernel_without_numba(filled, tmp_path):
    cache = copy_of(filled, tmp_path)
    assert list((cache / "cpu" / "native").glob("*.so"))
    second = run(cache)
    assert all(second["native"]) and len(second["native"]) == 5
    assert not second["numba"] and not second["llvmlite"] and not second["scipy"]
    # the same code numba ran: bit for bit the same results
    assert second["results"] == filled[1]["results"]
    # fresh random inputs compare with NumPy (inside the script) as well
    assert all(run(cache, seed=7)["native"])


def test_another_signature_falls_back_to_numba_and_is_written(filled, tmp_path):
    cache = copy_of(filled, tmp_path)
    other = run(cache, seed=3, layout="F")     # x in Fortran order: other numba signatures
    assert other["numba"]
    again = run(cache, seed=4, layout="F")     # ... now written as libraries too
    assert all(again["native"]) and not again["numba"]
    assert all(run(cache, seed=5)["native"])   # and the first signatures are still there


@pytest.mark.parametrize("mode", ["truncated", "garbled", "empty"])
@pytest.mark.parametrize("kind", ["library", "index"])
def test_corrupted_native_files_fall_back_and_are_repaired(filled, tmp_path, kind, mode):
    cache = copy_of(filled, tmp_path)
    pattern = "*.so" if kind == "library" else "*.json"
    paths = list((cache / "cpu" / "native").glob(pattern))
    assert paths
    for path in paths:
        data = path.read_bytes()
        path.write_bytes({"truncated": data[: len(data) // 3], "empty": b"",
                          "garbled": bytes(b ^ 0x5A for b in data)}[mode])
    second = run(cache)
    assert second["results"] == filled[1]["results"]
    assert second["numba"]                      # (numba's own cache served the kernels)
    third = run(cache)
    assert all(third["native"]) and not third["numba"]
    assert third["results"] == filled[1]["results"]


def test_a_numba_setting_is_another_machine(filled, tmp_path):
    """numba's settings are part of the machine key: code compiled under others is not used."""
    cache = copy_of(filled, tmp_path)
    other = run(cache, NUMBA_AUTOFUSE_TEST_SETTING="1")
    assert other["numba"] and not any(other["native"])
    assert other["results"] == filled[1]["results"]


def test_without_a_linker_nothing_is_written_and_numba_loads(tmp_path):
    cache = tmp_path / "cache"
    environment = {"PATH": str(tmp_path / "empty")}      # no ld, no cc
    (tmp_path / "empty").mkdir()
    first = run(cache, **environment)
    assert not list((cache / "cpu").rglob("*.so"))
    second = run(cache, **environment)
    assert second["numba"] and second["results"] == first["results"]


def test_signatures_match_numba_typing():
    """signature_of types an array as numba's dispatcher does (dtype, ndim, layout, readonly):
    a library is used only for arrays numba would call that overload with. (An unaligned array,
    which numba.typeof calls aligned, is marked unaligned here: it never matches a library and
    goes to numba as before.)"""
    numba = pytest.importorskip("numba")
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    readonly = base.copy()
    readonly.flags.writeable = False
    unaligned = np.frombuffer(bytes(8 * 6 + 1), np.uint8)[1:].view(np.float64)
    arrays = [base, base.T, base[:, ::2], base[::-1], np.asfortranarray(base), readonly,
              np.zeros((0, 3), np.int32), np.array(1.5), np.ones(3, bool),
              np.ones(2, np.complex64), np.ones((2, 1), np.int8)[::2]]
    for array in arrays:
        numba_key = native._signature(native._numba_signature([numba.typeof(array)]))
        assert native.signature_of([array]) == numba_key, (array.shape, array.strides)
    assert native.signature_of([unaligned])[0][4] is False
    assert native.signature_of([[1.0]]) is None
    assert native.signature_of([np.ma.masked_array([1.0])]) is None


def test_calls_are_routed_by_their_full_signature():
    """Function keys a call by dtype identity, ndim and flag bits after the first call of each
    signature: every argument reaches the callable of its own signature, also when calls of
    different layouts, writability and byte orders alternate."""
    seen = []

    def dispatcher(*args):
        seen.append(native.signature_of(args))
        return native.signature_of(args)

    function = native._function_class(2)(Path("/nonexistent/k_x.py"), "k", {}, lambda: dispatcher)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    readonly = base.copy()
    readonly.flags.writeable = False
    swapped = base.astype(">f4")
    arrays = [base, base.T, base[:, ::2], readonly, swapped, np.asfortranarray(base),
              base.astype(np.float64), base[None], np.ones((0, 4), np.float32)]
    out = np.zeros(3, np.int64)
    for _ in range(3):
        for array in arrays:
            assert function(array, out) == native.signature_of([array, out])
    assert len(seen) == 3 * len(arrays)
    signatures = {native.signature_of([a]) for a in arrays}
    assert len(function.opened) == len(signatures)
    assert all(key[0] != id(swapped.dtype) for key in function.fast)    # (not NumPy's own dtype)


LOOP = textwrap.dedent("""
    import json, sys
    import numpy as np, autofuse
    from autofuse.backends.cpu import native

    def ewma(x, alpha):
        out = np.empty_like(x)
        out[0] = x[0]
        for i in range(1, x.shape[0]):
            out[i] = alpha * x[i] + (1 - alpha) * out[i - 1] + np.float32(i)
        return out

    x = np.random.default_rng(int(sys.argv[1])).random((30, 64)).astype(np.float32)
    g = autofuse.jit(ewma)
    got, again = g(x, np.float32(0.25)), g(x, np.float32(0.25))
    np.testing.assert_allclose(got, ewma(x, np.float32(0.25)), rtol=1e-5)
    np.testing.assert_array_equal(got, again)
    steps = next(iter(g._cache.values())).program.steps
    print(json.dumps({"native": [isinstance(s.function, native.Function) for s in steps],
                      "numba": "numba" in sys.modules, "result": got.tobytes().hex()}))
""")


def test_kernels_taking_starts_and_scalars_load_without_numba(tmp_path):
    """A loop's steps share one kernel that takes its slice starts and scalar constants as
    arguments (backends/sharing.py): its library takes NumPy scalars as numba's wrapper does."""
    environment = dict(os.environ, AUTOFUSE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT,
                       AUTOFUSE_CPU_LIBRARIES="1")
    outputs = []
    for seed in (1, 1):
        done = subprocess.run([sys.executable, "-c", LOOP, str(seed)], env=environment,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = outputs
    assert first["numba"] and not second["numba"]
    assert all(second["native"]) and len(second["native"]) >= 29
    assert first["result"] == second["result"]
