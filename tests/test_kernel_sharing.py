"""Groups of one structure share one kernel: a loop's sweeps are written and compiled once, each
launch on its own buffers. Sharing is safe only if a group's own kernel would be the shared one
but for names: checked for every program of the golden snapshot, on both code generators."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import autofuse
import golden_sources
from autofuse.backends.cpu.source import generate as cpu_generate
from autofuse.backends.cuda.writer import generate as cuda_generate

pytest.importorskip("numba_cuda")

NAME = re.compile(r"\b([A-Za-z_]+)(\d+)\b")


def canonical(text: str) -> str:
    """`text` with every name that ends in digits renamed in order of first appearance (node ids
    and kernel names differ between groups of one structure; nothing else may)."""
    names: dict = {}
    return NAME.sub(lambda m: names.setdefault(m.group(0), f"{m.group(1)}#{len(names)}"), text)


def heat(u, r=0.1):
    for _ in range(12):
        u = u.copy()
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + r * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                             + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    return u


def wave(u, v, c=0.2):
    for _ in range(10):
        v = v + c * (np.roll(u, 1) + np.roll(u, -1) - 2 * u)
        u = u + v
    return u, v


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_loop_of_sweeps_writes_few_kernels(backend):
    x = np.random.default_rng(1).random((32, 40)).astype(np.float32)
    low = autofuse.jit(heat, backend=backend).lower(x)
    sources = {k.source for k in low.kernels}
    assert len(low.kernels) >= 12 and len(sources) <= 3
    shared = [k for k in low.kernels if "the same structure" in k.reason]
    assert len(shared) == len(low.kernels) - len(sources)


@pytest.mark.parametrize("fn, args", [
    (heat, (np.random.default_rng(2).random((17, 23)),)),
    (wave, (np.random.default_rng(3).random(50).astype(np.float32),
            np.zeros(50, np.float32))),
], ids=["heat", "wave"])
def test_shared_kernels_compute_numpys_answer(fn, args):
    want = fn(*args)
    got = autofuse.jit(fn, backend="cpu")(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


PROGRAMS = golden_sources.programs()


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if not n.startswith("workload/")))
def test_a_shared_kernel_is_the_groups_own_but_for_names(name):
    fn, args, settings = PROGRAMS[name]()
    fn = getattr(fn, "__wrapped__", fn)
    warnings.simplefilter("ignore")
    for backend in ("cpu", "cuda"):
        try:
            low = autofuse.jit(fn, backend=backend).lower(*args)
        except autofuse.AutofuseError:
            continue
        strides = getattr(low._entry, "input_strides", {}) if backend == "cuda" else {}
        for kernel in low.kernels:
            if "the same structure" not in kernel.reason:
                continue
            if backend == "cuda":
                own = cuda_generate(kernel.group, kernel.name, strides).text
                shared = low._entry.program.kernels[low.kernels.index(kernel)].source.text
            else:
                own = cpu_generate(kernel.group, kernel.name).text
                shared = [s for s in low._entry.program.steps
                          if getattr(s, "group", None) is kernel.group][0].kernel.text
            assert canonical(own) == canonical(shared), (name, backend, kernel.name)


def leapfrog(u_previous, u, speed2, steps=6):
    """wave_2d's step: the first sweep reads u_previous's interior made there, later sweeps the
    same slice made a step before (an older node), so the sweeps' members differ in id order."""
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next = np.zeros_like(u)
        u_next[1:-1, 1:-1] = 2.0 * u[1:-1, 1:-1] - u_previous[1:-1, 1:-1] + speed2[1:-1, 1:-1] * laplacian
        u_previous, u = u, u_next
    return u


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_sweeps_share_a_kernel_whatever_their_nodes_order(backend):
    rng = np.random.default_rng(4)
    args = tuple(rng.random((40, 48), dtype=np.float32) for _ in range(3))
    jitted = autofuse.jit(leapfrog, backend=backend)
    low = jitted.lower(*args)
    sweeps = [k for k in low.kernels if len(k.group.inputs) >= 3]     # (not the zeros, slices)
    assert len(sweeps) >= 6 and len({k.source for k in sweeps}) == 1
    if backend == "cpu":
        np.testing.assert_allclose(jitted(*args), leapfrog(*args), rtol=1e-5, atol=1e-5)
