"""Reliability: NaN, inf and signed zeros propagate exactly as NumPy's (also inside fused
reductions, on the CPU backend and under the CUDA simulator); hostile and odd arguments get NumPy's
answer or a clear AutofuseError naming the call and the user's line, and a failed call changes no
argument."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autofuse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# -- special values --------------------------------------------------------------------------

SPECIAL_CASES = textwrap.dedent('''
    import numpy as np

    nan, inf = np.nan, np.inf
    X = np.array([[1.0, nan, -inf, 0.0, -0.0], [inf, 2.0, -0.0, 0.0, -1.0],
                  [nan, nan, nan, nan, nan], [-inf, -inf, 1.0, 2.0, 3.0]])
    Y = np.array([[0.0, -0.0, 0.0, -0.0, nan], [-0.0, 0.0, nan, inf, -inf],
                  [1.0, -1.0, 0.0, -0.0, 2.0], [0.0, -0.0, 5.0, -5.0, 0.0]])

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    CASES = {
        "max_min": lambda x: (x.max(1), x.min(0), np.max(x), np.min(x)),
        "argmax_argmin": lambda x: (x.argmax(1), x.argmin(0), np.argmax(x), x.argmin(1)),
        "maximum_minimum": lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y),
                                         np.fmin(x, y)),
        "division": lambda x, y: (x / y, y / x, 1.0 / y),
        "domain": lambda x, y: (np.log(x), np.sqrt(x), np.log(y), np.log1p(y - 2)),
        "signed_zero": lambda x, y: (np.sign(x), np.copysign(1.0, x), np.copysign(x, y),
                                     1.0 / np.maximum(x, y), 1.0 / np.minimum(x, y), -x, x * y),
        "softmax": softmax,
        "fused_sums": lambda x: (x.sum(1), x.sum(0), x.prod(1), x.mean(1), (x * 2).sum(),
                                 (x - x.max(0)).sum(0)),
    }


    def same(got, want, what):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
        if got.dtype.kind != "f":
            assert np.array_equal(got, want), (what, got, want)
            return
        assert np.array_equal(np.isnan(got), np.isnan(want)), (what, got, want)
        known = ~np.isnan(want)
        g, w = got[known], want[known]
        assert np.array_equal(np.isinf(g) * np.sign(g), np.isinf(w) * np.sign(w)), (what, got, want)
        assert np.array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0])), (what, got, want)
        assert np.allclose(g, w, rtol=1e-6, atol=0), (what, got, want)


    def check(name, dtype, backend):
        import autofuse
        fn = CASES[name]
        args = (X.astype(dtype), Y.astype(dtype))[:fn.__code__.co_argcount]
        with np.errstate(all="ignore"):
            want = fn(*args)
            got = autofuse.jit(fn, backend=backend)(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for index, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{name} {np.dtype(dtype).name} result {index}")
''')
namespace: dict = {}
exec(SPECIAL_CASES, namespace)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(namespace["CASES"]))
def test_special_values_on_the_cpu_backend(name, dtype):
    namespace["check"](name, dtype, "cpu")


# NOTE: the simulator runs kernels as Python, where math.log(-1.0) and math.sqrt(-1.0) raise
# instead of returning NaN as the GPU does: "domain" runs on the CPU backend only.
SIMULATED = [name for name in namespace["CASES"] if name != "domain"]


@pytest.mark.sim
def test_special_values_under_the_cuda_simulator(tmp_path):
    pytest.importorskip("numba_cuda")
    from simulated import SWITCH_INTERVAL
    script = SPECIAL_CASES + textwrap.dedent(f'''
        import sys
        sys.setswitchinterval({SWITCH_INTERVAL})    # (simulated.py: switch interval, shared arrays)
        for name in {SIMULATED!r}:
            for dtype in ("float64", "float32"):
                check(name, dtype, "cuda")
                print(name, dtype, "ok")
    ''')
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path),
               PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.count(" ok") == 2 * len(SIMULATED)


# -- hostile arguments ---------------------------------------------------------------------------

def add(x, y):
    return x * 2 + y


A = np.arange(6.0).reshape(2, 3)
B = np.ones(3)


def raises_clearly(error_type, fn, *args, names_function=True, **kwargs):
    """The call raises `error_type` (an AutofuseError) naming the function (or, for an error met
    while tracing, the NumPy call) and this file's line, and leaves every argument's bytes as they
    were."""
    assert issubclass(error_type, autofuse.AutofuseError)
    arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)]
    before = [(a.tobytes(), a.dtype, a.shape, a.strides) if a.dtype != object else a.tolist()
              for a in arrays]
    with pytest.raises(error_type) as info:
        fn(*args, **kwargs)
    text = str(info.value)
    assert f"{os.path.basename(__file__)}:" in text, text
    assert not names_function or f"{fn.__name__}()" in text, text
    after = [(a.tobytes(), a.dtype, a.shape, a.strides) if a.dtype != object else a.tolist()
             for a in arrays]
    assert before == after
    return text


def test_wrong_argument_count():
    f = autofuse.jit(add)
    assert "missing a required argument: 'y'" in raises_clearly(autofuse.ArgumentError, f, A)
    assert "too many positional" in raises_clearly(autofuse.ArgumentError, f, A, B, B)


def test_keyword_typo_names_the_keyword_and_the_likely_parameter():
    text = raises_clearly(autofuse.ArgumentError, autofuse.jit(add), A, yy=B)
    assert "unexpected keyword argument 'yy'; did you mean 'y'?" in text


@pytest.mark.parametrize("value", [object(), {1, 2}, "text", b"bytes"], ids=["object", "set", "str", "bytes"])
def test_non_array_objects(value):
    raises_clearly(autofuse.ArgumentError, autofuse.jit(add), A, value)


@pytest.mark.parametrize("dtype", [object, np.clongdouble, "U3", "datetime64[D]", "S2"])
def test_unsupported_dtypes(dtype):
    value = np.zeros(3, dtype=dtype)
    text = raises_clearly(autofuse.DTypeError, autofuse.jit(add), A, value)
    assert "does not support dtype" in text


def test_python_lists_give_numpys_answer():
    """A list where NumPy takes an array is converted as np.asarray would; used as a Python list
    (`x * 2` repeats it) it is the list (tests/test_arguments.py has the rest)."""
    for args in (([[1.0, 2.0, 3.0]], B), (A, [1, 2, 3])):
        np.testing.assert_array_equal(autofuse.jit(add)(*args), add(*args))


def test_python_integer_out_of_int64_range_is_refused_not_wrapped():
    f = autofuse.jit(add)
    np.testing.assert_array_equal(f(A, 7), add(A, 7))            # cached: the fast path next
    text = raises_clearly(autofuse.DTypeError, f, A, 2 ** 70)
    assert "out of bounds for int64" in text
    raises_clearly(autofuse.DTypeError, autofuse.jit(add), A, -(2 ** 63) - 1)


@pytest.mark.parametrize("make", [lambda a: np.matrix(a), lambda a: np.ma.masked_array(a)],
                         ids=["matrix", "masked"])
def test_ndarray_subclasses_with_their_own_semantics_are_refused(make):
    """np.matrix's `*` is a matmul, masked arrays skip masked values: not the plain answer."""
    square = np.arange(4.0).reshape(2, 2)
    fn = autofuse.jit(add)
    text = raises_clearly(autofuse.ArgumentError, fn, make(square), np.ones(2))
    assert "ndarray subclass" in text


def test_memmap_is_a_plain_array(tmp_path):
    mapped = np.memmap(tmp_path / "m.bin", dtype=np.float64, mode="w+", shape=(2, 3))
    mapped[:] = A
    np.testing.assert_array_equal(autofuse.jit(add)(mapped, B), add(A, B))


def test_read_only_arguments():
    ro = A.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(autofuse.jit(add)(ro, B), add(ro, B))

    def scale(x):
        x *= 2
        return x
    with pytest.raises(ValueError):
        scale(ro)                                                 # NumPy refuses too
    before = ro.tobytes()
    with pytest.raises((ValueError, autofuse.AutofuseError)) as info:
        autofuse.jit(scale)(ro)
    assert "read-only" in str(info.value)
    assert ro.tobytes() == before


def test_the_same_array_passed_twice():
    x = A.copy()
    np.testing.assert_array_equal(autofuse.jit(add)(x, x), add(x, x))

    def accumulate(x, y):
        x += y
        return x.sum()
    before = x.tobytes()
    text = raises_clearly(autofuse.UnsupportedError, autofuse.jit(accumulate), x, x)
    assert "shares memory" in text
    assert x.tobytes() == before


def test_an_argument_written_while_a_view_of_it_is_also_passed():
    def shift(x, y):
        x += y
        return x
    x = np.arange(8.0)
    before = x.tobytes()
    raises_clearly(autofuse.UnsupportedError, autofuse.jit(shift), x[1:5], x[:4])
    assert x.tobytes() == before
    # disjoint memory: allowed, and equal to NumPy
    y, z = np.arange(8.0), np.arange(8.0)
    autofuse.jit(shift)(y[:4], y[4:])
    shift(z[:4], z[4:])
    np.testing.assert_array_equal(y, z)


def test_an_argument_mutated_in_place_and_read_after():
    def f(x, y):
        before = x.sum()
        x *= y
        return before, x.sum(), x
    x1, x2 = A.copy(), A.copy()
    got, want = autofuse.jit(f)(x1, B * 3), f(x2, B * 3)
    assert got[0] == want[0] and got[1] == want[1]
    np.testing.assert_array_equal(x1, x2)


@pytest.mark.parametrize("layout", ["F", "negative", "both_negative", "gapped"])
def test_fortran_and_negative_stride_views(layout):
    base = np.arange(24.0).reshape(4, 6)
    views = {"F": lambda: np.asfortranarray(base), "negative": lambda: base.copy()[::-1],
             "both_negative": lambda: base.copy()[::-1, ::-2], "gapped": lambda: base.copy()[1::2, ::3]}

    def f(x, y):
        return (x * y.T).sum(0), x.T @ x, x[::-1, 1:] + 1

    x = views[layout]()
    y = np.ascontiguousarray(x.T) + 0.5
    before = x.tobytes()
    for got, want in zip(autofuse.jit(f)(x, y), f(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert x.tobytes() == before

    def g(x):
        x[:, :1] += 10
        return x

    x1, x2 = views[layout](), views[layout]()
    autofuse.jit(g)(x1)
    g(x2)
    np.testing.assert_array_equal(x1, x2)


def test_a_failed_call_changes_no_argument():
    """The function writes its first argument, then fails tracing (a value-dependent branch):
    nothing was written."""
    def f(x, y):
        x += y
        if x.sum() > 0:
            return x
        return -x
    x = A.copy()
    before = x.tobytes()
    raises_clearly(autofuse.TraceError, autofuse.jit(f), x, B, names_function=False)
    assert x.tobytes() == before
