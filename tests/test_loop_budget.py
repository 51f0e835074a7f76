"""The bound on a trace's size (autofuse/trace/budget.py): a loop that unrolls past jit(max_ops=...)
stops with a TraceError naming the loop's line, the line traced most and what to change; below the
bound the same loop compiles and matches NumPy."""
import numpy as np
import pytest

import autofuse


def heat(u, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u


def _line(fn, text):
    import inspect
    source, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(source) if text in line)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_loop_past_the_bound_names_the_loop_and_the_way_out(backend):
    u = np.random.default_rng(0).random(32).astype(np.float32)
    f = autofuse.jit(heat, static_argnames=("steps",), backend=backend, max_ops=400)
    with pytest.raises(autofuse.TraceError) as caught:
        f.lower(u, steps=1000)
    message = str(caught.value)
    assert "heat(): the trace reached 400 operations" in message
    assert f"test_loop_budget.py:{_line(heat, 'for _ in range')}: for _ in range(steps):" in message
    assert f"traced most often: test_loop_budget.py:{_line(heat, 'u[1:-1] = ')}" in message
    assert "call it in a Python loop" in message and "jit(max_ops=...)" in message


def test_below_the_bound_the_loop_compiles():
    u = np.random.default_rng(1).random(32).astype(np.float32)
    f = autofuse.jit(heat, static_argnames=("steps",), backend="cpu", max_ops=400)
    np.testing.assert_allclose(f(u, steps=20), heat(u, 20), rtol=1e-6)


def test_a_loop_in_a_lambda_still_gets_the_error():
    u = np.ones(8, np.float32)
    f = autofuse.jit(lambda x: heat(x, 100), backend="cpu", max_ops=50)
    with pytest.raises(autofuse.TraceError, match="for _ in range"):
        f(u)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "many"])
def test_max_ops_is_a_positive_int(bad):
    with pytest.raises(autofuse.ArgumentError, match="max_ops"):
        autofuse.jit(heat, max_ops=bad)
