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
from autofuse.backends import sharing
from autofuse.backends.cuda import passable as cuda_passable
from autofuse.fusion.in_place import region_base
from benchmarks.index_loops import ewma
from loop_programs import masked_means
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
        lifted = sharing.plan([k.group for k in low.kernels], strides,
                              *([cuda_passable] if backend == "cuda" else []))
        graph = low._entry.graph
        users, results = graph.users(), {n.id for n in graph.outputs}
        for kernel in low.kernels:
            if "the same structure" not in kernel.reason:
                continue
            arguments = sharing.arguments(kernel.group, lifted.get(kernel.group.id, frozenset()))
            if backend == "cuda":
                own = cuda_generate(kernel.group, kernel.name, strides, lifted=arguments).text
                shared = low._entry.program.kernels[low.kernels.index(kernel)].source.text
            else:
                into = region_base(kernel.group, users, results)
                own = cpu_generate(kernel.group, kernel.name, lifted=arguments, into=into).text
                shared = [s for s in low._entry.program.steps
                          if getattr(s, "group", None) is kernel.group][0].kernel.text
            assert canonical(own) == canonical(shared), (name, backend, kernel.name)
            # (canonical() renames every numbered name, so it cannot tell a lifted argument from
            # a local of the same name: a reduction's `k2 = 0` once overwrote the argument k2)
            body = shared.split("):", 1)[1] if "):" in shared else shared
            for argument in arguments:
                assert not re.search(rf"\b{argument.name}\s*=[^=]", body), (name, argument.name)


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


# -- slices at other offsets: one kernel taking the starts as arguments ---------------------------

def blocks(x):
    """2x3 blocks, each made from the block above it: starts vary along both axes."""
    out = x.copy()
    for i in range(2, x.shape[0] - 1, 2):
        for j in range(0, x.shape[1] - 2, 3):
            out[i:i + 2, j:j + 3] = out[i - 2:i, j:j + 3] * 0.5 + x[i:i + 2, j:j + 3]
    return out


def strided_steps(x):
    """Slice assignments with a step, positive and negative, at moving starts."""
    y = x.copy()
    for k in range(1, 5):
        y[k:k + 32:4] = y[k - 1:k + 31:4] * 0.5 + 1
        y[-k::-5] += x[k] + 1.0
    return y


def shifted_sums(x):
    """Reductions over windows that move: the row sums of x[i:i+4] for each i."""
    return [np.sum(x[i:i + 4] ** 2, axis=0) for i in range(6)]


def shifted_products(image, kernel):
    """A convolution as a sum of products of shifted slices (NPBench's conv2d): each product
    reads the image and the kernel at other starts."""
    height, width = image.shape[1] - kernel.shape[0] + 1, image.shape[2] - kernel.shape[1] + 1
    out = np.zeros((image.shape[0], height, width, kernel.shape[3]), image.dtype)
    for i in range(kernel.shape[0]):
        for j in range(kernel.shape[1]):
            out += image[:, i:i + height, j:j + width, :] @ kernel[i, j]
    return out


def reversed_rows(x):
    """Reversed slices read at moving starts."""
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        out[i] = x[i::-1][0] + x[:i][::-1][0] * 2
    return out


LIFTED = [(ewma, lambda rng: (rng.random((24, 37)), 0.3)),
          (blocks, lambda rng: (rng.random((9, 14)).astype(np.float32),)),
          (strided_steps, lambda rng: (rng.random(40),)),
          (shifted_sums, lambda rng: (rng.random((10, 7)).astype(np.float32),)),
          (reversed_rows, lambda rng: (rng.random((12, 5)),))]


@pytest.mark.parametrize("fn, make", LIFTED, ids=[fn.__name__ for fn, _ in LIFTED])
def test_slices_at_moving_offsets_compute_numpys_answer(fn, make):
    rng = np.random.default_rng()
    args = make(rng)
    want = fn(*args)
    jitted = autofuse.jit(fn, backend="cpu")
    got = jitted(*args)
    got = got if isinstance(got, list) else [got]
    for g, w in zip(got, want if isinstance(want, list) else [want]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    again = jitted(*args)                     # the generated host call passes the same starts
    for g, w in zip(again if isinstance(again, list) else [again], got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_loop_over_an_index_compiles_one_kernel(backend):
    x = np.random.default_rng(5).random((40, 64))
    low = autofuse.jit(ewma, backend=backend).lower(x, 0.3)
    steps = [k for k in low.kernels if k.group.kind == "loop"]
    assert len(steps) >= 39
    # (the first step; the steps written in place; on CUDA the last, a result, computed whole)
    assert len({k.source for k in steps}) <= (2 if backend == "cpu" else 3)
    lifted = [k for k in steps if "passed as arguments" in k.reason]
    assert len(lifted) >= 37
    assert all(f"{sharing.PREFIX}off0" in k.source for k in lifted)


def test_only_the_starts_that_differ_become_arguments():
    x = np.random.default_rng(6).random((12, 14)).astype(np.float32)
    low = autofuse.jit(ewma, backend="cpu").lower(x, 0.5)
    text = [k.source for k in low.kernels if "passed as arguments" in k.reason][0]
    header = [line for line in text.splitlines() if line.startswith("def ")][0]
    # (the rows read and written move: x[i], out[i - 1] and out[i] = ...; their column starts,
    # 0 in every step, stay literals)
    assert header.count("off") == 3, header
    x = np.random.default_rng(6).random((9, 14)).astype(np.float32)
    low = autofuse.jit(blocks, backend="cpu").lower(x)
    text = [k.source for k in low.kernels if "passed as arguments" in k.reason][0]
    header = [line for line in text.splitlines() if line.startswith("def ")][0]
    assert header.count("off") == 6, header        # (blocks move along both axes)


def test_shared_reduction_kernels_with_lifted_constants():
    rng = np.random.default_rng(8)
    data, radius = rng.random(2048).astype(np.float32), rng.random(2048).astype(np.float32)
    f = autofuse.jit(masked_means, backend="cpu", static_argnames=("bins",))
    np.testing.assert_allclose(f(data, radius, bins=40), masked_means(data, radius, 40),
                               rtol=1e-5)
    shared = [k for k in f.lower(data, radius, bins=40).kernels
              if k.group.kind == "input" and "passed as arguments" in k.reason]
    assert shared and all(f"{sharing.PREFIX}k0" in k.source for k in shared)


def test_products_of_shifted_slices_share_one_kernel():
    """The products of a convolution written with shifted slices differ only in their slices'
    starts: the CUDA general product kernel takes them as arguments, so the nine products
    compile as at most two kernels (the first adds to zeros), and the shared kernel's PTX for
    sm_90 builds."""
    rng = np.random.default_rng(9)
    image = rng.random((1, 3, 40, 20)).astype(np.float32)   # (products of 38 rows: tiled)
    kernel = rng.random((3, 3, 20, 20)).astype(np.float32)
    low = autofuse.jit(shifted_products, backend="cuda").lower(image, kernel)
    products = [k for k in low.kernels if k.group.kind == "output"]
    assert len(products) == 9
    assert len({k.source for k in products}) <= 2
    shared = [k for k in products if "passed as arguments" in k.reason]
    assert len(shared) >= 7
    assert f"{sharing.PREFIX}off0" in shared[0].source
    assert ".entry" in shared[0].ptx


@pytest.mark.sim
def test_lifted_offsets_in_the_cuda_simulator(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "lifted.py"
    script.write_text(
        "import numpy as np, autofuse, sys\n"
        f"sys.path[:0] = [{str(__import__('pathlib').Path(__file__).parent)!r}, "
        f"{str(__import__('pathlib').Path(__file__).parent.parent)!r}]\n"
        "from test_kernel_sharing import ewma, blocks, reversed_rows, masked_means, "
        "shifted_products\n"
        "from simulated import prepare_simulator\n"
        "prepare_simulator()\n"
        "rng = np.random.default_rng()\n"
        "for fn, args in [(ewma, (rng.random((9, 33)), 0.3)),\n"
        "                 (blocks, (rng.random((5, 8)).astype(np.float32),)),\n"
        "                 (reversed_rows, (rng.random((6, 5)),)),\n"
        "                 (shifted_products, (rng.random((1, 3, 40, 20)).astype(np.float32),\n"
        "                                     rng.random((3, 3, 20, 20)).astype(np.float32))),\n"
        "                 (masked_means, (rng.random(512).astype(np.float32),\n"
        "                                 rng.random(512).astype(np.float32), 20))]:\n"
        "    static = ('bins',) if fn is masked_means else ()\n"
        "    got = np.asarray(autofuse.jit(fn, backend='cuda', static_argnames=static)(*args))\n"
        "    np.testing.assert_allclose(got, fn(*args), rtol=1e-5, atol=1e-6)\n"
        "print('ok')\n")
    env = dict(__import__("os").environ, NUMBA_ENABLE_CUDASIM="1",
               AUTOFUSE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]
