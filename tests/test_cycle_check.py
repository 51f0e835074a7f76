"""The partitioner's cycle check (fusion/order.path_outside): its walk back from the merged groups
only ever proves that no path leads back where the walk forward finds none, so every fusion
decision is the forward walk's; and it keeps a loop of masked reductions (azimint's bins, each
merged with the next) from walking the whole loop at every merge."""
import importlib

import numpy as np
import pytest

import autofuse
import loop_programs
from loop_fuzz import seeded_loop_program

order = importlib.import_module("autofuse.fusion.order")
partition = importlib.import_module("autofuse.fusion.partition")


def forward_only(groups, users, positions, groups_of=None, reach=None) -> bool:
    walk = order._forward(groups, users, positions, groups_of or {}, reach)
    while True:
        try:
            next(walk)
        except StopIteration as done:
            return done.value


@pytest.fixture
def checked(monkeypatch):
    """Every cycle check of the partitioner, answered by path_outside and compared with the
    forward walk alone: a list of (path_outside's answer, the forward walk's)."""
    answers = []

    def both(*args, **kwargs):
        got = order.path_outside(*args, **kwargs)
        answers.append((got, forward_only(*args, **kwargs)))
        return got

    monkeypatch.setattr(partition, "path_outside", both)
    return answers


def _lowered(fn, *args, **static):
    jitted = autofuse.jit(fn, backend="cpu", static_argnames=tuple(static))
    return jitted.lower(*args, **static)


def test_the_walk_back_agrees_with_the_walk_forward(checked):
    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    _lowered(loop_programs.masked_means, f32(400), np.abs(f32(400)), bins=40)
    _lowered(loop_programs.heat, f32(12, 12), 0.1, steps=12)
    _lowered(loop_programs.wave, f32(30), f32(30), 0.2, steps=10)
    _lowered(loop_programs.life, (f32(10, 10) > 0).astype(np.int64), steps=6)
    _lowered(lambda x: (x - x.mean(0)) / x.std(0) + x.sum(1, keepdims=True), f32(20, 30))
    for seed in range(40):
        program = seeded_loop_program(seed)
        _lowered(program.fn, *program.inputs())
    assert checked and all(got == want for got, want in checked), \
        [k for k, (got, want) in enumerate(checked) if got != want]
    # both answers occur: merges refused for a cycle and merges allowed
    assert {want for _, want in checked} == {True, False}


def test_masked_means_check_few_values_per_merge(monkeypatch):
    """Each bin's masked sums merge with the kernel of the bins before them: the walk forward
    from that kernel meets every bin's result written since; the walk back from the two meets
    the bin's few inputs. The steps the race takes stay near the walk back's, not the loop's."""
    steps = []
    real_forward = order._forward

    def counted(*args, **kwargs):
        walk = real_forward(*args, **kwargs)
        count = 0
        try:
            while True:
                try:
                    next(walk)
                except StopIteration as done:
                    return done.value
                count += 1
                yield
        finally:                    # (finished, or left once the walk back decided)
            steps.append(count)

    monkeypatch.setattr(order, "_forward", counted)
    rng = np.random.default_rng(1)
    data = rng.standard_normal(2000).astype(np.float32)
    radius = np.abs(rng.standard_normal(2000)).astype(np.float32)
    for bins in (100, 400):
        steps.clear()
        _lowered(loop_programs.masked_means, data, radius, bins=bins)
        assert len(steps) > bins                            # a check for most merges
        # (89 at 100 bins and at 800; the walk forward alone took 174 at 160 bins)
        assert max(steps) < 150, (bins, max(steps))
