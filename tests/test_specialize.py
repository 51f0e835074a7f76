"""Python scalars the trace needs by value (shapes, axes, loop counts) are specialized on their own:
one retrace keyed on the value, as numba's literal dispatch does; scalars used as values stay
traced (one compile for every value)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autofuse

from conftest import random_array

BACKENDS = ["cpu", "numpy"]


def zscore(x, axis=0):
    mean = x.mean(axis=axis, keepdims=True)
    return (x - mean) / x.std(axis=axis, keepdims=True)


def smooth(x, n):
    for _ in range(n):
        x = (x[:-2] + x[1:-1] + x[2:]) / 3
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_zscore_axis_positional_and_keyword(backend, rng):
    x = random_array((4, 6), np.float32, rng)
    f = autofuse.jit(zscore, backend=backend)
    for axis in (0, 1, -1, -2):
        np.testing.assert_allclose(f(x, axis), zscore(x, axis), rtol=1e-5)
        np.testing.assert_allclose(f(x, axis=axis), zscore(x, axis=axis), rtol=1e-5)
    assert f.cache_info().entries == 4            # one per axis value; keyword == positional
    np.testing.assert_allclose(f(x), zscore(x), rtol=1e-5)
    assert f.cache_info().entries == 5            # axis left to its default: the function's own
    #                                               constant, a signature of its own


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_count_from_range(backend, rng):
    x = random_array((20,), np.float64, rng)
    f = autofuse.jit(smooth, backend=backend)
    for n in (1, 3, 2, 3, 1, 0):
        np.testing.assert_allclose(f(x, n), smooth(x, n))
    assert f.cache_info().entries == 4


def test_reshape_with_int_arguments(rng):
    f = autofuse.jit(lambda x, k, m: x.reshape(-1, k, m), backend="cpu")
    x = np.arange(24.0)
    assert f(x, 2, 3).shape == (4, 2, 3)
    assert f(x, 3, 4).shape == (2, 3, 4)
    np.testing.assert_array_equal(f(x, 2, 3), x.reshape(-1, 2, 3))
    g = autofuse.jit(lambda x, n: np.zeros((n, 2)) + x.sum(), backend="cpu")
    np.testing.assert_array_equal(g(x, 3), np.zeros((3, 2)) + x.sum())


def test_int_used_as_value_compiles_once(rng):
    x = random_array((5,), np.float32, rng)
    f = autofuse.jit(lambda x, n: x * n + n, backend="cpu")
    for n in (2, 3, 4):
        np.testing.assert_array_equal(f(x, n), x * n + n)
    info = f.cache_info()
    assert (info.traces, info.entries) == (1, 1)
    assert f.lower(x, 2).specialized == {}


def test_learned_once_then_keyed_by_value_without_a_failed_trace(rng):
    x = random_array((20,), np.float64, rng)
    traces = []

    def counted(x, n):
        traces.append(n)
        return smooth(x, n)
    f = autofuse.jit(counted, backend="cpu")
    f(x, 2)
    assert len(traces) == 2                       # the failed trace, then the specialized one
    f(x, 3)
    f(x, 1)
    assert len(traces) == 4                       # one trace each: the value is keyed directly
    f(x, 3)
    f(x, 2)
    assert len(traces) == 4                       # the fast path keys on the value too
    np.testing.assert_allclose(f(x, 1), smooth(x, 1))
    np.testing.assert_allclose(f(x, 3), smooth(x, 3))


def test_bool_and_float_used_concretely():
    def f(x, center, eps):
        if center:
            x = x - x.mean()
        if eps > 0:
            x = x / (x.std() + eps)
        return x
    x = np.arange(6.0)
    jf = autofuse.jit(f, backend="cpu")
    for center, eps in ((True, 1e-3), (False, 0.0), (True, 0.0)):
        np.testing.assert_allclose(jf(x, center, eps), f(x, center, eps))
    assert jf.cache_info().entries == 3


def test_numpy_scalar_axis_is_specialized():
    x = np.arange(6.0).reshape(2, 3)
    f = autofuse.jit(lambda x, axis: x.sum(axis), backend="cpu")
    np.testing.assert_array_equal(f(x, np.int64(1)), x.sum(1))
    np.testing.assert_array_equal(f(x, np.int32(0)), x.sum(0))


def test_mixed_with_static_argnames():
    def f(x, mode, axis):
        y = x.max(axis=axis) if mode == "max" else x.min(axis=axis)
        return y * 2
    jf = autofuse.jit(f, static_argnames="mode", backend="cpu")
    x = np.arange(12.0).reshape(3, 4)
    for mode in ("max", "min"):
        for axis in (0, 1):
            np.testing.assert_array_equal(jf(x, mode, axis), f(x, mode, axis))
    assert jf.cache_info().entries == 4
    assert jf.lower(x, "max", 1).specialized == {"axis": 1}


def test_nested_in_tuples_and_dicts():
    def f(x, shape, cfg):
        y = x.reshape(shape)
        return y.sum(axis=cfg["axis"]) * cfg["scale"]
    jf = autofuse.jit(f, backend="cpu")
    x = np.arange(12.0)
    for shape, axis in (((3, 4), 0), ((2, 6), 1), ((3, 4), 1)):
        cfg = {"axis": axis, "scale": 0.5}
        np.testing.assert_array_equal(jf(x, shape, cfg), f(x, shape, cfg))
    lowered = jf.lower(x, (3, 4), {"axis": 0, "scale": 2.0})
    assert lowered.specialized == {"shape": (3, 4), "cfg['axis']": 0}
    assert "# specialized by value: shape=(3, 4), cfg['axis']=0" in lowered.as_text()
    assert jf.cache_info().entries == 3           # scale stays traced: 3 shape/axis pairs


def test_debug_line_names_the_specialized_arguments(capsys):
    f = autofuse.jit(zscore, backend="cpu")
    x = np.ones((2, 3))
    with autofuse.debug(1):
        f(x, axis=1)
    err = capsys.readouterr().err
    assert "compile zscore(f64[2,3], axis=1)" in err
    assert "specialized by value: axis" in err


def test_array_values_still_raise_trace_error():
    def f(x):
        return np.zeros(int(x.sum()))
    with pytest.raises(autofuse.TraceError, match="needs the value of a traced array"):
        autofuse.jit(f, backend="cpu")(np.ones(3))


def test_value_mixed_with_an_array_is_not_specialized():
    def f(x, n):
        return x.reshape(n + x[0].astype(int))
    with pytest.raises(autofuse.TraceError, match="traced array"):
        autofuse.jit(f, backend="cpu")(np.ones(3), 2)


def test_floats_taken_by_value_are_keyed_by_their_bits():
    """A float the trace needs by value: NaN finds its entry again (NaN != NaN), and -0.0 is not
    0.0 (math.copysign tells them apart)."""
    def f(x, s):
        return x * 2 if s > 0 else x - 1

    jitted = autofuse.jit(f)
    x = np.ones(4)
    for _ in range(3):
        np.testing.assert_array_equal(jitted(x, float("nan")), f(x, float("nan")))
    assert jitted.cache_info().entries == 1

    def signed(x, s):
        return x * 2 if math.copysign(1.0, s) > 0 else x - 1

    jitted = autofuse.jit(signed)
    for s in (0.0, -0.0, 0.0, -0.0):
        np.testing.assert_array_equal(jitted(x, s), signed(x, s))
    assert jitted.cache_info().entries == 2
