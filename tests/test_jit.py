"""The decorator: options, argument binding, result structures, the per-signature cache, lower()."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

from conftest import assert_same, random_array


def test_bare_decorator(rng):
    @autofuse.jit
    def f(x):
        return x * 2 + 1
    x = random_array((3,), np.float32, rng)
    assert isinstance(f, autofuse.JitFunction)
    assert f.__name__ == "f" and f.__doc__ is None
    assert_same(f(x), x * 2 + 1)


def test_decorator_with_options(rng):
    @autofuse.jit(static_argnames=("axis",), backend="numpy")
    def f(x, axis):
        """Docstring kept."""
        return x.sum(axis=axis)
    x = random_array((3, 4), np.float64, rng)
    assert f.__doc__ == "Docstring kept."
    assert_same(f(x, 0), x.sum(axis=0))
    assert_same(f(x, axis=1), x.sum(axis=1))
    assert f.lower(x, 1).backend == "numpy"


def test_static_argnums_and_string_names(rng):
    f = autofuse.jit(lambda x, n, mode: x[:n] if mode == "head" else x[-n:],
                     static_argnums=(1,), static_argnames="mode")
    x = random_array((5,), np.int64, rng)
    assert_same(f(x, 2, "head"), x[:2])
    assert_same(f(x, 3, "tail"), x[-3:])
    assert f.cache_info().traces == 2


def test_bad_static_options():
    """Static options that name no parameter fail where jit is called, naming that line."""
    with pytest.raises(autofuse.ArgumentError, match=r"static_argnames(.|\n)*test_jit\.py:\d+"):
        autofuse.jit(lambda x: x, static_argnames=("y",))
    for bad in (3, -2, "x", 1.0):
        with pytest.raises(autofuse.ArgumentError,
                           match=r"static_argnums(.|\n)*test_jit\.py:\d+: .*static_argnums"):
            autofuse.jit(lambda x: x, static_argnums=bad)


def test_negative_static_argnums_count_from_the_end(rng):
    f = autofuse.jit(lambda x, n: x * n, static_argnums=-1)
    x = random_array((4,), np.float32, rng)
    assert_same(f(x, 3), x * 3)
    assert f(x, 3) is not None and f.cache_info().traces == 1


def test_unknown_backend(rng):
    f = autofuse.jit(lambda x: x, backend="tpu")
    with pytest.raises(autofuse.ArgumentError, match="tpu"):
        f(random_array((2,), np.float32, rng))


def test_positional_keyword_and_default_arguments(rng):
    def f(x, y=None, *, scale=2.0, offset=1):
        base = x if y is None else x + y
        return base * scale + offset
    jitted = autofuse.jit(f)
    x, y = random_array((3,), np.float32, rng), random_array((3,), np.float32, rng)
    for args, kwargs in [((x,), {}), ((x, y), {}), ((x,), {"y": y}), ((), {"x": x, "y": y}),
                         ((x,), {"scale": 3}), ((x, y), {"offset": 0.5, "scale": np.float32(4)})]:
        assert_same(jitted(*args, **kwargs), f(*args, **kwargs))


def test_varargs_and_kwargs(rng):
    def f(*arrays, **weights):
        total = arrays[0] * weights.get("w0", 1)
        for a in arrays[1:]:
            total = total + a
        return total
    jitted = autofuse.jit(f)
    xs = [random_array((2, 2), np.float64, rng) for _ in range(3)]
    assert_same(jitted(*xs), f(*xs))
    assert_same(jitted(*xs, w0=3.0), f(*xs, w0=3.0))


def test_nested_container_arguments(rng):
    def f(pair, table):
        a, b = pair
        return a @ table["w"] + b
    jitted = autofuse.jit(f)
    a, b = random_array((2, 3), np.float64, rng), random_array((4,), np.float64, rng)
    w = random_array((3, 4), np.float64, rng)
    assert_same(jitted((a, b), {"w": w}), f((a, b), {"w": w}))
    assert_same(jitted([a, b], {"w": w}), f([a, b], {"w": w}))


@pytest.mark.parametrize("scalar", [3, 2.5, True, np.float32(1.5), np.int32(4), np.float64(-2),
                                    np.bool_(True), np.int8(3)])
def test_python_and_numpy_scalar_arguments(scalar, rng):
    def f(x, s):
        return x * s, s * 2, s + s, -x + s
    x = random_array((3,), np.float32, rng)
    assert_same(autofuse.jit(f)(x, scalar), f(x, scalar))


def test_scalar_only_function():
    f = autofuse.jit(lambda a, b: (a + b, a * b, a / b, a // b, a < b))
    for a, b in [(3, 4), (2.5, 2), (np.float32(1.5), 2), (True, 3), (np.int64(7), np.int32(2))]:
        assert_same(f(a, b), (a + b, a * b, a / b, a // b, a < b))


def test_return_structures(rng):
    def f(x):
        return {"sum": x.sum(), "parts": [x[0], x[1:]], "pair": (x * 2, 7), "none": None,
                "scalar": 1.5, "name": "ok", "dim": x.ndim, "zero_d": np.asarray(x[0]) + 0,
                "shape": x.shape}
    x = random_array((4,), np.float64, rng)
    assert_same(autofuse.jit(f)(x), f(x))


def test_return_zero_d_array_vs_scalar(rng):
    x = random_array((), np.float32, rng)
    assert_same(autofuse.jit(lambda a: a)(x), x)
    assert_same(autofuse.jit(lambda a: a + 1)(x), x + 1)
    assert_same(autofuse.jit(lambda a: a.sum(keepdims=True))(x), x.sum(keepdims=True))
    assert_same(autofuse.jit(lambda a: a[()])(x), x[()])
    assert_same(autofuse.jit(lambda a: a[...] * 1)(x), x[...] * 1)
    y = random_array((3,), np.float32, rng)
    assert_same(autofuse.jit(lambda a: a[0] * 2)(y), y[0] * 2)
    assert_same(autofuse.jit(lambda a: a.reshape(3, 1)[1:2, 0].reshape(()))(y),
                y.reshape(3, 1)[1:2, 0].reshape(()))


def test_returning_a_captured_constant(rng):
    table = random_array((3,), np.float64, rng)
    f = autofuse.jit(lambda x: (table, x))
    out = f(random_array((3,), np.float64, rng))
    np.testing.assert_array_equal(out[0], table)


def test_cache_hits_and_retraces(rng):
    calls = []

    @autofuse.jit
    def f(x, s):
        calls.append(1)
        return x * s
    x = random_array((3,), np.float32, rng)
    f(x, 2.0)
    f(random_array((3,), np.float32, rng), 3.0)      # same signature, new values
    assert f.cache_info().traces == 1 and len(calls) == 1
    assert f.cache_info().hits == 1
    f(random_array((4,), np.float32, rng), 2.0)      # new shape
    f(random_array((3,), np.float64, rng), 2.0)      # new dtype
    f(x, 2)                                          # int is another weak type
    f(x, np.float32(2))                              # NumPy scalar: strong
    f(x[::-1].copy()[::-1], 2.0)                     # new strides
    assert f.cache_info().traces == 6
    f(x, 5.0)
    assert f.cache_info().traces == 6
    assert f.cache_info().entries == 6
    f.clear_cache()
    assert f.cache_info().entries == 0
    f(x, 5.0)
    assert f.cache_info().traces == 7


def test_static_value_retraces(rng):
    f = autofuse.jit(lambda x, n: x * n, static_argnames="n")
    x = random_array((3,), np.int32, rng)
    assert_same(f(x, 2), x * 2)
    assert_same(f(x, 2), x * 2)
    assert_same(f(x, 3), x * 3)
    assert f.cache_info().traces == 2


def test_results_are_correct_after_cache_hit(rng):
    f = autofuse.jit(lambda x: np.exp(x) / np.exp(x).sum())
    for _ in range(3):
        x = random_array((5,), np.float64, rng)
        assert_same(f(x), np.exp(x) / np.exp(x).sum())
    assert f.cache_info().traces == 1


def test_control_flow_on_shapes_and_statics_unrolls(rng):
    @autofuse.jit(static_argnames=("steps", "normalize"))
    def f(x, steps, normalize=True):
        for _ in range(steps):
            x = x * 0.5 + 1
        if x.ndim == 2 and x.shape[1] > 2:
            x = x[:, :2]
        if normalize:
            x = x / x.sum()
        return x

    def reference(x, steps, normalize=True):
        for _ in range(steps):
            x = x * 0.5 + 1
        if x.ndim == 2 and x.shape[1] > 2:
            x = x[:, :2]
        return x / x.sum() if normalize else x
    x = random_array((3, 4), np.float64, rng)
    assert_same(f(x, 3), reference(x, 3))
    assert_same(f(x, 0, normalize=False), reference(x, 0, False))
    text = f.lower(x, 3).as_text("traced")
    assert text.count("multiply(") == 3


def test_lower_runs_nothing_and_shows_the_program(rng):
    calls = []

    @autofuse.jit
    def f(x):
        calls.append(1)
        y = x * 1.0 + 0.0
        return np.exp(y) + np.exp(y)
    x = random_array((2, 3), np.float32, rng)
    before = x.copy()
    lowered = f.lower(x)
    text = lowered.as_text()
    assert "# traced" in text and "# simplified" in text
    traced = lowered.as_text("traced")
    simplified = lowered.as_text("simplified")
    assert traced.startswith("# traced\ndef f(v0: f32[2,3]):")
    assert traced.count("exp(") == 2 and simplified.count("exp(") == 1
    assert "multiply" in traced and "multiply" not in simplified
    assert "add(v1, f32(0.0))" in simplified.replace("v0", "v1") or "f32(0.0)" in simplified
    assert "test_jit.py" in traced
    np.testing.assert_array_equal(x, before)
    assert len(calls) == 1
    assert f.cache_info().traces == 1
    f(x)                                               # the lowered signature is cached
    assert f.cache_info().traces == 1 and len(calls) == 1
    assert repr(lowered) == lowered.as_text()


def test_lower_graph_objects(rng):
    f = autofuse.jit(lambda x: x.sum(axis=0))
    lowered = f.lower(random_array((3, 4), np.float64, rng))
    lowered.graph.verify()
    lowered.traced.verify()
    assert [n.op for n in lowered.graph.nodes] == ["input", "sum"]
    assert lowered.graph.outputs[0].shape == (4,)


def test_methods_and_closures(rng):
    class Model:
        def __init__(self, w):
            self.w = w

        @autofuse.jit
        def apply(self, x):
            return x @ self.w
    w = random_array((3, 2), np.float64, rng)
    x = random_array((4, 3), np.float64, rng)
    with pytest.raises(autofuse.ArgumentError):
        Model(w).apply(x)            # self is not an array: it must be static
    Model.apply = autofuse.jit(Model.apply.fn, static_argnames="self")
    model = Model(w)
    assert_same(model.apply(x), x @ w)


def test_repr():
    def softmax(x):
        return x
    assert "softmax" in repr(autofuse.jit(softmax))


def test_threads_share_one_cache(rng):
    import threading
    f = autofuse.jit(lambda x: np.tanh(x) * 2)
    x = random_array((4,), np.float64, rng)
    results = []

    def work():
        for _ in range(5):
            results.append(f(x))
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert_same(r, np.tanh(x) * 2)
    assert f.cache_info().traces == 1


def test_numpy_functions_unchanged_outside_traces(rng):
    f = autofuse.jit(lambda x: np.zeros(3) + x)
    f(random_array((3,), np.float64, rng))
    assert type(np.zeros(3)) is np.ndarray
    assert np.zeros is np.zeros and np.arange(3).tolist() == [0, 1, 2]


@pytest.mark.parametrize("a,b", [(True, False), (True, True), (3, True), (2.5, False), (7, -2)])
def test_python_scalar_arguments_follow_python_operators(a, b):
    """Operators on Python scalars compute as Python does (True + True == 2); NumPy functions on
    them return NumPy scalars, as NumPy does (np.add(2, 3) is np.int64(5))."""
    def ops(x, y):
        return (x + y, x - y, x * y, x / (abs(y) + 1), x < y, x == y, -x, abs(y), x ** 2,
                np.add(x, y), np.maximum(x, y), np.sqrt(abs(x)))
    assert_same(autofuse.jit(ops)(a, b), ops(a, b))
    if not isinstance(a, float):
        bits = autofuse.jit(lambda x, y: (x & y, x | y, x ^ y, ~x, ~y))
        assert_same(bits(a, b), (a & b, a | b, a ^ b, ~a, ~b))
