"""Reliability under threads: many threads calling one jitted function with mixed signatures get
NumPy's results, and each signature is traced and compiled exactly once."""
from __future__ import annotations

import threading

import numpy as np

import autofuse
from autofuse.backends import cpu
from autofuse.backends.cpu import dynamic as cpu_classes

THREADS = 8
CALLS = 40


def layer(x, b):
    return np.maximum(x * 2.0 + b, 0).sum(axis=-1) + x.mean()


SIGNATURES = [((3, 5), np.float64), ((3, 5), np.float32), ((4, 2), np.float64), ((7,), np.int64)]


def arguments(k: int):
    shape, dtype = SIGNATURES[k % len(SIGNATURES)]
    x = (np.arange(np.prod(shape)).reshape(shape) % 7 - 3 + k).astype(dtype)
    return x, np.ones(shape[-1], dtype)


def hammer(fn, errors: list) -> None:
    barrier = threading.Barrier(THREADS)

    def work(thread: int) -> None:
        try:
            barrier.wait()
            for call in range(CALLS):
                x, b = arguments(thread + call)
                got = fn(x, b)
                want = layer(x, b)
                assert got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6), (got, want)
        except BaseException as error:       # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_with_mixed_signatures_get_right_results_and_compile_once(monkeypatch):
    builds = []
    original, original_class = cpu.prepare, cpu_classes.prepare_dynamic
    monkeypatch.setattr(cpu, "prepare", lambda entry: (builds.append(entry.name), original(entry)))
    # (a second size of one rank and dtype may build a shape class, by the automatic policy,
    # where the two calls did not race: prepare_dynamic then writes its kernels)
    monkeypatch.setattr(cpu_classes, "prepare_dynamic", lambda *args: (builds.append(args[0].name),
                                                               original_class(*args)))
    fn = autofuse.jit(layer)
    errors = []
    hammer(fn, errors)
    assert not errors, errors[0]
    info = fn.cache_info()
    assert info.traces == len(SIGNATURES) == info.entries
    assert len(builds) == len(SIGNATURES)
    # NOTE: hits are counted without the lock (the fast path); only traces are exact.
    assert info.hits > 0


def test_two_functions_importing_the_same_kernel_at_once():
    """Separate jitted functions with identical kernels race to write and import one module."""
    functions = [autofuse.jit(layer) for _ in range(THREADS)]
    errors, results = [], [None] * THREADS
    barrier = threading.Barrier(THREADS)
    x, b = np.arange(12.0).reshape(3, 4) - 5.5, np.full(4, 0.25)

    def work(k):
        try:
            barrier.wait()
            results[k] = functions[k](x, b)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    for result in results:
        np.testing.assert_allclose(result, layer(x, b), rtol=1e-12)
