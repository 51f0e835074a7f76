"""Integer-array indexing, np.take and np.take_along_axis (a gather) against NumPy on the CPU
backend, their IndexError for indices out of bounds, and NumPy's error for integers to negative
integer powers; the CUDA kernels of the same programs run in the simulator."""
import os
import subprocess
import sys

import numpy as np
import pytest

import autofuse
from autofuse.ir.interpreter import evaluate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gather_cases import CASES, floats, ints  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _close(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    tolerance = 1e-5 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_gathers_match_numpy_on_the_cpu(name, fn, make):
    args = make()
    jitted = autofuse.jit(fn, backend="cpu")
    _close(jitted(*args), fn(*args))
    entry = jitted.lower(*args)
    (value,) = evaluate(entry.graph, [a for a in args])[:1]
    _close(value, fn(*args))


def test_gather_fuses_with_the_index_producer_and_the_consumers():
    low = autofuse.jit(lambda x, i: x[(i * 7) % 5] * 2 + 1, backend="cpu").lower(floats(5), ints(9, (6,)))
    gathers = [k for k in low.kernels if "gather" in k.ops]
    assert len(gathers) == 1 and {"multiply", "remainder", "add"} <= set(gathers[0].ops)


def test_scalar_result_is_a_numpy_scalar():
    x = floats(5)
    got = autofuse.jit(lambda x: x[np.argmax(x)], backend="cpu")(x)
    assert np.ndim(got) == 0 and got == x.max()


@pytest.mark.parametrize("fn, args", [
    (lambda x, i: x[i], (floats(5), np.array([0, 5]))),
    (lambda x, i: x[i], (floats(5), np.array([-6]))),
    (lambda x, i: x[:, i], (floats(2, 3), np.array([1, 3], np.uint8))),
    (lambda x, i: np.take(x, i), (floats(2, 3), np.array([6]))),
    (lambda x, i: np.take_along_axis(x, i, axis=0), (floats(2, 3), np.array([[2, 0, 0]]))),
    (lambda x, i: x[i * 2], (floats(5), np.array([1, 3]))),
])
def test_indices_out_of_bounds_raise_index_error_after_the_call(fn, args):
    with pytest.raises(IndexError, match="out of bounds for axis") as info:
        autofuse.jit(fn, backend="cpu")(*args)
    assert isinstance(info.value, autofuse.OutOfBoundsError)
    assert "test_gather.py" in str(info.value)
    with pytest.raises(IndexError):
        fn(*args)


def test_an_argument_is_not_updated_when_an_index_is_out_of_bounds():
    def f(x, i):
        x += 1
        return x[i]
    x = floats(4)
    before = x.copy()
    with pytest.raises(IndexError):
        autofuse.jit(f, backend="cpu")(x, np.array([9]))
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("fn", [
    lambda x: x[np.array([3])],
    lambda x: x[[0, -4]],
    lambda x: np.take(x, [9]),
    lambda x: x[:, np.array([True, True, True, True])],
])
def test_constant_indices_are_checked_while_tracing(fn):
    with pytest.raises(IndexError):
        fn(floats(3, 3))
    with pytest.raises(IndexError):
        autofuse.jit(fn, backend="cpu")(floats(3, 3))


def test_index_errors_name_numpy_and_the_shapes():
    with pytest.raises(IndexError, match=r"np.take: .*axis 0 with size 4 \(array \(4,\), indices \(2,\)\)"):
        autofuse.jit(lambda x, i: np.take(x, i), backend="cpu")(floats(4), np.array([1, 4]))


def test_integer_arrays_to_negative_integer_powers_raise_value_error():
    f = autofuse.jit(lambda x, y: x ** y, backend="cpu")
    np.testing.assert_array_equal(f(np.array([2, 3]), np.array([2, 1])), [4, 3])
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        np.array([1, 2]) ** np.array([-1, 1])
    with pytest.raises(ValueError, match="Integers to negative integer powers") as info:
        f(np.array([1, 2]), np.array([-1, 1]))
    assert isinstance(info.value, autofuse.NumPyValueError)
    floats_ok = autofuse.jit(lambda x, y: x ** y, backend="cpu")(np.array([2.0]), np.array([-1]))
    np.testing.assert_array_equal(floats_ok, [0.5])


def test_assignment_through_an_index_array_updates_the_argument_as_numpy():
    def f(x, i, v):
        x[i] += v
        np.add.at(x, i, v)
        return x.sum()
    x, i, v = floats(7), np.array([2, 2, -1, 0]), floats(4)
    want_x = x.copy()
    want = f(want_x, i, v)
    got = autofuse.jit(f, backend="cpu")(x, i, v)
    np.testing.assert_allclose(x, want_x, rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_assignment_through_an_index_out_of_bounds_leaves_the_argument():
    def f(x, i):
        x[i] = 0
    x = floats(4)
    before = x.copy()
    with pytest.raises(IndexError, match="out of bounds"):
        autofuse.jit(f, backend="cpu")(x, np.array([1, 4]))
    np.testing.assert_array_equal(x, before)


def test_unsupported_indexing_says_what_instead():
    with pytest.raises(autofuse.UnsupportedError, match="boolean"):
        autofuse.jit(lambda x, m: x[m, 0], backend="cpu")(floats(3, 2), np.array([True, False, True]))
    with pytest.raises(autofuse.UnsupportedError, match="one integer array along the first axis"):
        autofuse.jit(lambda x, i: x.__setitem__((slice(None), i), 0), backend="cpu")(
            floats(3, 2), np.array([1]))


def test_lists_and_tuples_as_arguments_convert_as_asarray():
    f = autofuse.jit(lambda x, i: np.take(x, i) * 2, backend="cpu")
    np.testing.assert_array_equal(f([1.0, 2.0, 3.0], (2, 0)), [6.0, 2.0])


@pytest.mark.sim
def test_gathers_under_the_cuda_simulator(tmp_path):
    pytest.importorskip("numba_cuda")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "gather_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) == len(CASES) + 2 and all(line.endswith(": ok") for line in lines), done.stdout


def test_gather_kernels_compile_to_sm90_ptx():
    pytest.importorskip("numba_cuda")
    low = autofuse.jit(lambda w, ids: (w[ids] * 2).sum(axis=1), backend="cuda").lower(
        floats(10, 64), ints(10, (300,)))
    for kernel in low.kernels:
        assert ".target sm_90" in kernel.ptx
    assert any("gather" in k.ops for k in low.kernels)


def test_positions_from_an_argmax_need_no_bounds_check():
    low = autofuse.jit(lambda x: np.take_along_axis(x, np.argmax(x, axis=1)[:, None], axis=1),
                       backend="cpu").lower(floats(4, 5))
    assert not any("any" in k.ops for k in low.kernels)
