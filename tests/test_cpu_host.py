"""The CPU backend's generated host call (autofuse/backends/cpu/host.py): after a signature's
first call, later calls run one straight-line function. It must return what the general path
returns, on fresh inputs, for every kind of step and argument view."""
import numpy as np
import pytest

import autofuse
from autofuse.backends import cpu

from conftest import random_array, rng_for


def calls(f, *args):
    """The first call (general path) and the second (generated call) of f on args, with the
    program; both must have run."""
    first = f(*args)
    program = f.lower(*args)._entry.program
    assert program.fast is not None, program.host_source
    second = f(*args)
    return first, second, program


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


PROGRAMS = {
    "elementwise": (lambda x, y: np.maximum(x * y + 1.0, 0.0), [(3, 4), (4,)]),
    "rows": (lambda x, y: np.exp(x - x.max(-1, keepdims=True)).sum(-1) + y[0], [(5, 7), (7,)]),
    "full reduction": (lambda x, y: (x * y).sum(), [(6, 5), (6, 5)]),
    "matmul epilogue": (lambda x, y: np.tanh(x @ y.T + 1.0), [(4, 3), (5, 3)]),
    "two results": (lambda x, y: (x + y, (x - y).mean(0)), [(4, 6), (4, 6)]),
    "size 0": (lambda x, y: x * y + 2.0, [(0, 3), (3,)]),
    "0-d": (lambda x, y: x * 2.0 + y.sum(), [(), (3,)]),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_generated_call_returns_what_the_general_path_and_numpy_return(name):
    fn, shapes = PROGRAMS[name]
    f = autofuse.jit(fn)
    rng = rng_for(7)
    args = [random_array(s, np.float32, rng) for s in shapes]
    first, second, program = calls(f, *args)
    expected = fn(*args)
    for got in (first, second):
        got, want = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
        for g, w in zip(got, want):
            same(g, w)
    fresh = [random_array(s, np.float32, rng) for s in shapes]   # new values, same signature
    got, want = f(*fresh), fn(*fresh)
    for g, w in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
        same(g, w)
    assert "def call(inputs):" in program.host_source
    # one result: its own form, which a cached flat call runs (no list around the array)
    single = not isinstance(expected, tuple)
    assert (program.fast_one is not None) == single
    if single:
        assert "def call_one(inputs):" in program.host_source
    if f.lower(*args)._entry.single_array:      # (an array result: not a 0-d one made a scalar)
        assert list(f._fast.values()) == [program.fast_one]


def test_a_computed_result_equal_to_an_argument_or_a_constant_is_a_new_array():
    """`x.astype(x.dtype)` folds to x, and `np.arange(3.0) + 0` to a constant: both results are new
    arrays on every call (NumPy's), and writing to one changes neither x nor later calls."""
    f = autofuse.jit(lambda x, y: (x.astype(x.dtype), y * 2.0, np.arange(3.0) + 0))
    x, y = np.ones(3), np.ones(3)
    for _ in range(3):
        a, b, c = f(x, y)
        assert not np.shares_memory(a, x)
        a[0] = c[0] = 99.0
    np.testing.assert_array_equal(x, 1.0)
    np.testing.assert_array_equal(f(x, y)[2], [0.0, 1.0, 2.0])


def test_python_scalars_and_non_contiguous_views_take_the_generated_call():
    f = autofuse.jit(lambda x, a: x * a + 1.0)
    base = random_array((6, 8), np.float64)
    view = base[::2, ::-3]
    for a in (0.5, 0.5, 2.5):
        np.testing.assert_allclose(f(view, a), view * a + 1.0)
    assert f.lower(view, 0.5)._entry.program.fast is not None


def test_the_generated_call_runs_the_compiled_code_of_its_first_call():
    """Each kernel step of the generated call calls what its first call ran (numba's compiled
    overload, or the library's wrapper), not a dispatcher that types its arguments again; other
    signatures (a strided view, float64) get theirs; a loop's steps sharing one kernel each take
    it with their own slice starts."""
    def steps(x):
        for i in range(4):
            x = x * 0.5 + x[i:i + 1]
        return x
    for fn, args in ((lambda x, y: np.tanh(x * y + 1.0), (random_array((8, 6), np.float32),) * 2),
                     (steps, (random_array((9, 5), np.float64),))):
        f = autofuse.jit(fn)
        for inputs in (args, tuple(a[::-1, ::2] for a in args), tuple(a.astype(np.float64)
                                                                     for a in args)):
            for _ in range(3):
                np.testing.assert_allclose(f(*inputs), fn(*inputs), rtol=1e-6, atol=1e-6)
            program = f.lower(*inputs)._entry.program
            kernels = [step for step in program.steps if isinstance(step, cpu.Step)]
            assert kernels and all(step.entry is not None and step.entry is not step.function
                                   for step in kernels), program.host_source


def test_outputs_of_later_calls_are_written_by_the_kernels(monkeypatch):
    """Poisoned output buffers: a value the kernel does not write would show as NaN."""
    f = autofuse.jit(lambda x: np.sqrt(np.abs(x)) + x.sum(0))
    x = random_array((5, 4), np.float32)
    f(x)

    def poisoned(shape, dtype):
        return np.full(shape, np.nan if np.dtype(dtype).kind == "f" else 7, dtype)
    monkeypatch.setattr(cpu, "new_output", poisoned)
    program = f.lower(x)._entry.program
    program.fast, program.fast_one, program.host_source = cpu.host.build(program)  # the poison
    f._fast.clear()                     # (a cached call holds the one-result form built before)
    np.testing.assert_allclose(f(x), np.sqrt(np.abs(x)) + x.sum(0), rtol=1e-6)


def test_float16_groups_keep_the_general_path_and_say_why():
    f = autofuse.jit(lambda x: x * x + 1)
    x = np.ones(4, np.float16)
    f(x)
    program = f.lower(x)._entry.program
    assert program.fast is None and "general path" in program.host_source
    np.testing.assert_array_equal(f(x), x * x + 1)


def test_matrix_products_run_blas_on_one_thread_and_restore_it():
    """The tiles of a product run on numba's threads with SciPy's BLAS on one (backends/cpu/
    blas.py); the BLAS thread count is what it was after the call, and the answer NumPy's."""
    from autofuse.backends.cpu import blas
    rng = rng_for(3)
    x, w = random_array((256, 128), np.float64, rng), random_array((128, 512), np.float64, rng)
    f = autofuse.jit(lambda a, b: np.tanh(a @ b) + 1.0)
    library = blas._library()
    before = library.get_num_threads() if library is not None else None
    for _ in range(3):
        np.testing.assert_allclose(f(x, w), np.tanh(x @ w) + 1.0, rtol=1e-10, atol=1e-12)
    program = f.lower(x, w)._entry.program
    assert program.uses_blas and "with blas_guard:" in program.host_source
    if library is not None:
        assert library.get_num_threads() == before
        with blas.GUARD:
            with blas.GUARD:
                assert library.get_num_threads() == 1
            assert library.get_num_threads() == 1
        assert library.get_num_threads() == before
