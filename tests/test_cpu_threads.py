"""numba's thread count for a CPU call (autofuse/backends/cpu/threads.py): all of numba's threads
on an idle machine, fewer as other tasks keep the cores busy, at least one; and a program's
results are the same bits whatever the count (kernels cut work into a fixed number of pieces)."""
import numba
import numpy as np
import pytest

import autofuse
from autofuse.backends.cpu import threads

RNG = np.random.default_rng()


@pytest.fixture
def pool(monkeypatch):
    """A fresh Pool that reads `busy["running"]` as the machine's running tasks."""
    busy = {"running": 1}
    monkeypatch.setattr(threads, "running_tasks", lambda: busy["running"])
    fresh = threads.Pool()
    monkeypatch.setattr(threads, "POOL", fresh)
    yield fresh, busy
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def test_the_count_is_the_cores_left_by_other_tasks():
    pool = threads.Pool()
    pool.cores = pool.wanted = 8
    assert pool.threads(None) == 8               # nothing known: numba's own count
    assert pool.threads(1) == 8                  # only the caller runs
    assert pool.threads(8) == 8                  # the caller and its own seven workers
    assert pool.threads(11) == 5                 # three other tasks
    assert pool.threads(500) == 1
    pool.wanted = 1
    assert pool.threads(1) == 8 and pool.threads(3) == 6


def test_running_tasks_reads_the_machine_or_says_none():
    running = threads.running_tasks()
    assert running is None or running >= 1


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# name -> (function, its arguments, whether busy cores take threads away: a product's tiles are
# more work than FIT_ELEMENTS wherever they run in parallel, so they keep every thread)
PROGRAMS = {
    "softmax rows": (softmax, lambda: (RNG.standard_normal((512, 300), dtype=np.float32),), True),
    "sum of squares": (lambda x: (x * x).sum(), lambda: (RNG.standard_normal(1 << 19),), True),
    "column sums": (lambda x: x.sum(axis=0) + x.max(axis=0),
                    lambda: (RNG.standard_normal((2000, 300), dtype=np.float32),), True),
    "relu(x @ w + b)": (lambda x, w, b: np.maximum(x @ w + b, 0),
                        lambda: (RNG.standard_normal((400, 300), dtype=np.float32),
                                 RNG.standard_normal((300, 200), dtype=np.float32),
                                 RNG.standard_normal(200, dtype=np.float32)), False),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_busy_cores_take_threads_away_and_results_keep_their_bits(pool, name):
    fresh, busy = pool
    function, make, fitted = PROGRAMS[name]
    f = autofuse.jit(function)
    args = make()
    entry = f.lower(*args)
    assert any(k.source and "prange" in k.source for k in entry.kernels)
    results = {}
    for running in (1, 1, 500, 500, 1):          # idle, busy, idle again; cached calls included
        busy["running"] = running
        fresh.checked = float("-inf")            # (read the machine at this call)
        results.setdefault(running, []).append(f(*args))
        assert numba.get_num_threads() == (1 if running == 500 and fitted else fresh.cores)
    # (against float64: float32 sums of 2000 rows differ from NumPy's own float32 pairwise sums
    # by up to about 1e-4, past a tolerance of that size now and then)
    expected = function(*(a.astype(np.float64) for a in args))
    for got in results[1] + results[500]:
        np.testing.assert_array_equal(got, results[1][0])
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


def test_programs_without_parallel_kernels_leave_the_count_alone(pool):
    fresh, busy = pool
    busy["running"] = 500
    f = autofuse.jit(lambda x: x + 1)
    x = np.arange(10.0)
    for _ in range(3):
        f(x)
    assert fresh.checked == float("-inf")


def test_large_programs_keep_every_thread_on_busy_cores(pool, monkeypatch):
    fresh, busy = pool
    monkeypatch.setattr(threads, "FIT_ELEMENTS", 1 << 19)
    small, large = autofuse.jit(lambda x: (x * x).sum()), autofuse.jit(lambda x: np.exp(x) + 1)
    busy["running"] = 500
    x, y = RNG.standard_normal(1 << 18), RNG.standard_normal(1 << 20)
    for _ in range(2):
        fresh.checked = float("-inf")
        np.testing.assert_allclose(small(x), (x * x).sum())
        assert numba.get_num_threads() == 1
        np.testing.assert_allclose(large(y), np.exp(y) + 1)
        assert numba.get_num_threads() == fresh.cores
