"""The CPU rows kernel of a matrix-vector product against a plain numba row loop (issue 34/36
follow-up): x @ w at 4096x1024 float32, autofuse's generated kernel (64 float32 lanes on the
stack, no fast-math flags) beside a prange loop over rows whose sum numba compiles with
fastmath={'reassoc'} only (LLVM then vectorizes the reduction itself; NaN and infinity semantics
kept) or every fast-math flag, and NumPy's sgemv; each in turns after a pause, best of 3 x 30
calls, 7 rounds. First run (2-core machine, 2026-11-29): autofuse median 0.86 ms, reassoc 0.34,
full fast-math 0.38, NumPy 0.25: the lanes kernel is about 3x the vectorized loop here, where x
(16 MiB) sits in L3.

    python benchmarks/experiments/cpu_matvec_rows.py
"""
import statistics
import time
import timeit

import numba
import numpy as np

import autofuse
z = np.float32(0.0)
def make(fm, rowview=True):
    @numba.njit(error_model='numpy', nogil=True, fastmath=fm, parallel=True)
    def f(a0, a1, o0):
        n = a1.shape[1]
        for i0 in numba.prange(a1.shape[0]):
            acc = z
            if rowview:
                r = a1[i0]
                for j in range(n):
                    acc += r[j] * a0[j]
            else:
                for j in range(n):
                    acc += a1[i0, j] * a0[j]
            o0[i0] = acc
        return 0
    return f
rng = np.random.default_rng(0)
x = rng.standard_normal((4096, 1024)).astype(np.float32); w = rng.standard_normal(1024).astype(np.float32)
x[5, 7] = np.nan
o = np.empty(4096, np.float32)
mv = autofuse.jit(lambda x, w: x @ w)
fs = {"autofuse": lambda: mv(x, w), "full fastmath": make(True), "reassoc": make({'reassoc'}),
      "reassoc 2-D index": make({'reassoc'}, False), "numpy": lambda: x @ w}
for k, f in fs.items():
    if k not in ("autofuse", "numpy"):
        f(w, x, o); ref = x @ w
        print(k, "nan row ok:", np.isnan(o[5]), "max rel err", float(np.nanmax(np.abs(o - ref) / np.maximum(1, np.abs(ref)))))
        fs[k] = (lambda f=f: f(w, x, o))
mv(x, w)
res = {k: [] for k in fs}
for rep in range(7):
    for k, f in fs.items():
        time.sleep(0.15); f()
        res[k].append(min(timeit.repeat(f, number=30, repeat=3)) / 30 * 1e3)
for k, v in res.items(): print(k, "median %.3f ms, min %.3f" % (statistics.median(v), min(v)))
