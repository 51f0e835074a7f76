"""Reductions of one kernel computed each after those it reads, whatever their node ids: a
whole-array reduction beside row reductions is simplified to a reduction of the row results
(`x.sum()` beside `x.var(axis=1)` reads the mean's row sums), which gives the row sum a later
id than the variance's sum that reads it. Found by a sweep of new programs (NotImplementedError:
no rendering for sum inside an input group)."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from conftest import assert_same

PROGRAMS = {
    "sum and row variance": lambda x: (x.sum(), x.var(axis=1)),
    "max and row-max deviations": lambda x: (x.max(), (x - x.max(axis=1, keepdims=True)).sum(1)),
    "std with ddof both ways": lambda x: (x.std(ddof=1), x.std(axis=1, keepdims=True)),
    "mean, row softmax": lambda x: (x.mean(), np.exp(x - x.max(1, keepdims=True)) /
                                    np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)),
}


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("shape, dtype", [((4, 3), np.float64), ((100, 100), np.float32),
                                          ((7, 1), np.float64), ((33, 1000), np.float32)])
def test_whole_and_row_reductions(rng, backend, name, shape, dtype):
    fn = PROGRAMS[name]
    x = rng.standard_normal(shape).astype(dtype)
    got = autofuse.jit(fn, backend=backend)(x)
    for g, w in zip(got, fn(x)):
        assert_same(g, w, loose=True)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_cuda_kernels_order_their_reductions(name):
    """On the CUDA backend (lowered, no GPU needed): each kernel's reductions come after every
    reduction of the same kernel they read."""
    x = np.ones((64, 256), np.float32)
    low = autofuse.jit(PROGRAMS[name], backend="cuda").lower(x)
    for kernel in low.kernels:
        assert kernel.source
    for group in low.fused.groups:
        seen = set()
        for node in group.reductions:
            assert not _reads_reduction(node.inputs[0], group, seen), (name, node)
            seen.add(node.id)


def _reads_reduction(node, group, before: set, walked=None) -> bool:
    """Whether `node` reads (through members of `group`) a reduction not yet in `before`."""
    walked = set() if walked is None else walked
    if node.id in walked or node.id not in group.members:
        return False
    walked.add(node.id)
    if node.kind == "reduce" and node.id not in before:
        return True
    return any(_reads_reduction(source, group, before, walked) for source in node.inputs)
