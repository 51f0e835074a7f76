"""The buffer plan (autofuse/backends/cuda/runtime/buffers.py) without a GPU: a loop of many steps
holds a few intermediates, not one a step; no two intermediates that share memory are live at once
(no launch reads one after the other is written, and none writes memory it reads); results never
share; the generated call and the general path launch the same kernels on the same memory."""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("the simulator runs its own program class", allow_module_level=True)

from autofuse.backends.cuda.runtime import host as cuda_host  # noqa: E402
from test_cuda_host import Array, program_for, recorded  # noqa: E402


def heat(u):
    u = u.copy()
    for _ in range(40):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                              + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1])
    return u


def two_fields(a, b):
    for _ in range(25):
        a, b = a + 0.5 * np.roll(b, 1), b - 0.25 * a * a
    return a, b.sum(), b


def _lifetimes(program):
    """node -> (step written, last step reading it)."""
    written, read = {}, {}
    for s, step in enumerate(program.steps):
        for node, _ in step.params:
            read[node] = s
        for node, _, _ in step.outputs:
            written[node] = s
    return {node: (s, max(read.get(node, s), s)) for node, s in written.items()}


@pytest.mark.parametrize("fn, shapes", [(heat, ((32, 32),)), (two_fields, ((64,), (64,)))],
                         ids=["heat", "two_fields"])
def test_intermediates_share_memory_only_when_dead(fn, shapes):
    program, inputs = program_for(fn, *shapes)
    results = {node for node, _ in program.outputs}
    lifetimes = _lifetimes(program)
    owners = program.buffers
    assert not results & set(owners)
    groups: dict = {}
    for node, owner in owners.items():
        groups.setdefault(owner, []).append(node)
    for owner, nodes in groups.items():
        spans = sorted(lifetimes[n] for n in nodes)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert end < start, (owner, spans)
    # as many buffers as intermediates live at once (all of one shape here), not one a step
    live = max(sum(start <= s <= end for node, (start, end) in lifetimes.items() if node in owners)
               for s in range(len(program.steps)))
    assert len(groups) == live and 2 * live < len(owners)
    _, fresh = cuda_host.plan(program)
    assert len(fresh) == len(groups) + len(results)
    # the graph's own memory (cuda_graph=True): one allocation a shared buffer
    allocated = []
    cuda_host.plan(program, lambda node, shape, dtype: allocated.append(node) or 4096 * len(allocated))
    assert sorted(allocated) == sorted(groups)


@pytest.mark.parametrize("fn, shapes", [(heat, ((32, 32),)), (two_fields, ((64,), (64,)))],
                         ids=["heat", "two_fields"])
def test_generated_call_uses_the_memory_the_general_path_uses(fn, shapes):
    program, inputs = program_for(fn, *shapes)
    fast, _ = cuda_host.build(program)
    general, general_results = recorded(program, program.__call__, inputs)
    generated, generated_results = recorded(program, fast, inputs)

    def roles(launches, results):
        known = {r.pointer: f"result{k}" for k, r in enumerate(results) if isinstance(r, Array)}
        known.update({a.pointer: f"input{k}" for k, a in enumerate(inputs) if isinstance(a, Array)})
        fresh: dict = {}
        return [(kernel, tuple(known.get(arg) or fresh.setdefault(arg, f"fresh{len(fresh)}")
                               for arg in args)) for _, _, kernel, args in launches]
    assert roles(generated, generated_results) == roles(general, general_results)
    assert len({arg for _, args in roles(generated, generated_results) for arg in args
                if arg.startswith("fresh")}) == len(set(program.buffers.values()))
