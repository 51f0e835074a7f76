"""A cached CUDA call of a program with an index check (the generated cached call): a bad index
raises OutOfBoundsError on the first call and on cached ones, a good one returns NumPy's answer,
and the call's cost (µs, CuPy arrays) for a small gather."""
import time

import cupy
import numpy as np

import autofuse

table = cupy.asarray(np.arange(40.0, dtype=np.float32).reshape(10, 4))
good, bad = cupy.asarray(np.array([1, 9, -2])), cupy.asarray(np.array([1, 10]))
f = autofuse.jit(lambda t, i: (t[i] * 2, t.sum()))
for _ in range(3):
    got, total = f(table, good)
    assert np.array_equal(cupy.asnumpy(got), cupy.asnumpy(table)[[1, 9, -2]] * 2)
    assert float(total) == 780.0
    try:
        f(table, bad)
        raise SystemExit("no OutOfBoundsError")
    except autofuse.errors.OutOfBoundsError:
        pass
ids = cupy.asarray(np.random.default_rng(0).integers(0, 10, 1024))
g = autofuse.jit(lambda t, i: t[i] * 2)
for _ in range(5):
    g(table, ids)
cupy.cuda.Device().synchronize()
began = time.perf_counter()
for _ in range(500):
    g(table, ids)
cupy.cuda.Device().synchronize()
print(f"checks raise on cached calls; small gather {(time.perf_counter() - began) / 500 * 1e6:.1f} µs a call")
