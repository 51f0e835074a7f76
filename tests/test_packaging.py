"""Packaging: `pip install autofuse` is the CPU backend alone, the `cuda` extra adds the GPU stack,
the `test` extra holds what CI needs (it compiles PTX and runs the CUDA simulator); and autofuse
imports and runs on the CPU in a process where no module of the GPU stack can be imported."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GPU_STACK = ("numba-cuda", "cuda-core", "cuda-bindings", "cuda-python", "nvidia-", "cupy")


def project() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements) -> list[str]:
    return [r.split(";")[0].split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip()
            for r in requirements]


def test_the_plain_install_is_cpu_only():
    required = names(project()["dependencies"])
    assert {"numpy", "numba", "llvmlite"} <= set(required)
    assert not [n for n in required if n.startswith(GPU_STACK)], required


def test_the_cuda_extra_adds_the_gpu_stack_and_the_test_extra_what_ci_needs():
    extras = project()["optional-dependencies"]
    cuda, test = set(names(extras["cuda"])), set(names(extras["test"]))
    assert {"numba-cuda", "cuda-bindings", "nvidia-cuda-nvrtc"} <= cuda
    # CI compiles every generated kernel to sm_90 PTX (NVRTC) and runs the simulator (numba-cuda)
    assert {"pytest", "pytest-xdist", "hypothesis", "numba-cuda", "nvidia-cuda-nvrtc"} <= test
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    assert 'pip install -e ".[test]"' in quick_start.split("```")[1]


HIDDEN = textwrap.dedent("""
    import sys

    class NotInstalled:
        '''Every module of the GPU stack fails to import, as where the cuda extra is absent.'''

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numba_cuda", "cuda", "cupy", "torch", "jax") or \\
                    name.startswith("numba.cuda"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    import numpy as np
    import autofuse

    @autofuse.jit
    def layer(x, w, b):
        h = np.maximum(x @ w + b, 0)
        return h / h.sum(axis=-1, keepdims=True).clip(1e-6), (x * x).sum(axis=0)

    rng = np.random.default_rng(0)
    x, w, b = rng.random((5, 4)), rng.random((4, 3)), rng.random(3)
    for _ in range(2):
        got = layer(x, w, b)
        want = layer.fn(x, w, b)
        assert all(np.allclose(g, e) for g, e in zip(got, want))
    assert [k.strategy for k in layer.lower(x, w, b).kernels]
    try:
        autofuse.jit(lambda x: x * 2, backend="cuda")(x)
    except autofuse.BackendError as error:
        print("BackendError:", str(error).splitlines()[0])
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("numba_cuda", "cuda")
                    or m.startswith("numba.cuda"))
    print("loaded:", loaded)
""")


def test_autofuse_runs_on_the_cpu_without_the_gpu_stack(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), AUTOFUSE_CACHE_DIR=str(tmp_path))
    for name in ("AUTOFUSE_BACKEND", "NUMBA_ENABLE_CUDASIM"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", HIDDEN], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "BackendError: the CUDA backend cannot run: numba-cuda cannot be imported" \
        in done.stdout, done.stdout
    assert "loaded: []" in done.stdout, done.stdout
