"""The compact GEMM kernel on the device: correctness against NumPy (odd sizes, transposed,
non-contiguous, batch broadcast, 1-D, size 0, float64), one compile for two shapes, registers
and local memory from the loaded cubins, and timings beside the per-shape kernels (Tuning(gemm=False))."""
import json, os, sys, time
import numpy as np
import cupy
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import autofuse
from autofuse.backends.cuda import compile as cuda_compile
from autofuse.backends.cuda.tuning import Tuning
from workloads import attention, relu_matmul
from gemm import timed

rng = np.random.default_rng(1)
def f(*s, dt=np.float32): return rng.standard_normal(s).astype(dt)
out = {"cases": {}, "kernels": {}, "timings": {}}
cases = [
 ("epi_odd", lambda x, w, b: np.maximum(x @ w + b, 0), (f(1001, 333), f(333, 517), f(517))),
 ("tb", lambda x, w: x @ w.T, (f(257, 129), f(300, 129))),
 ("ta", lambda x, w: x.T @ w, (f(129, 700), f(129, 64))),
 ("tab", lambda x, w: np.tanh(x.T @ w.T), (f(66, 300), f(200, 66))),
 ("bcast", lambda a, b: a @ b, (f(3, 1, 99, 40), f(2, 40, 55))),
 ("f64", lambda a, b, c: np.tanh(a @ b) * 2 + c, (f(333, 171, dt=np.float64), f(171, 290, dt=np.float64), f(333, 290, dt=np.float64))),
 ("f64_t", lambda a, b: a.T @ b, (f(171, 333, dt=np.float64), f(171, 290, dt=np.float64))),
 ("vec", lambda a, b: a @ b, (f(999), f(999, 1300))),
 ("k0", lambda a, b: a @ b + 1, (f(50, 0), f(0, 70))),
 ("noncontig", lambda a, b: a[::2, ::3] @ b[:, ::-1], (f(200, 300), f(100, 120))),
 ("prologue", lambda a, b: (a * 2) @ np.exp(b), (f(200, 300), f(300, 120))),
 ("misaligned", lambda a, b: a[1:, 1:] @ b, (f(101, 65), f(64, 33))),
]
for name, fn, args in cases:
    try:
        jf = autofuse.jit(fn)
        got = cupy.asnumpy(jf(*[cupy.asarray(a) for a in args]))
        want = fn(*[a.astype(np.float64) for a in args])
        tol = 1e-4 if args[0].dtype == np.float32 else 1e-11
        err = float(np.abs(got - want).max() / (np.abs(want).max() + 1e-30)) if want.size else 0.0
        ks = jf.lower(*args).kernels
        out["cases"][name] = {"ok": bool(err <= tol and got.shape == want.shape), "err": err,
                              "kernels": [k.strategy for k in ks]}
    except Exception as e:
        out["cases"][name] = {"ok": False, "err": repr(e)[:300]}
    print(name, out["cases"][name], flush=True)

# one compile for two shapes (and a third, batched)
jf = autofuse.jit(relu_matmul(np))
before = len(cuda_compile._COMPILED)
for m, n, k in ((700, 600, 500), (1300, 900, 260)):
    x, w, b = f(m, k), f(k, n), f(n)
    got = cupy.asnumpy(jf(cupy.asarray(x), cupy.asarray(w), cupy.asarray(b)))
    assert np.allclose(got, np.maximum(x @ w + b, 0), rtol=1e-3, atol=1e-3)
out["compiles_for_two_shapes"] = len(cuda_compile._COMPILED) - before
print("compiles for two shapes:", out["compiles_for_two_shapes"], flush=True)

def resources(jf, args):
    return [(k.strategy, {key: v for key, v in k.launch.items() if key != "grid"}) for k in jf.lower(*args).kernels]

def compare(label, fn_np, args, tunings):
    dev = tuple(cupy.asarray(a) for a in args)
    res = {}
    for tname, tuning in tunings.items():
        jf = autofuse.jit(fn_np, tuning=tuning)
        t0 = time.perf_counter(); jf(*dev); cupy.cuda.Device().synchronize(); first = time.perf_counter() - t0
        ms = timed(jf, dev, 7)
        res[tname] = {"ms": ms, "first_s": first, "kernels": resources(jf, dev)}
        print(label, tname, res[tname], flush=True)
    out["timings"][label] = res

T = {"compact": Tuning(), "old": Tuning(gemm=False), "compact_unbounded": Tuning(gemm_blocks=0),
     "compact_unroll4": Tuning(gemm_unroll=4)}
def g(*s, dt=np.float32): return (rng.standard_normal(s) * 0.5 + 0.1).astype(dt)
compare("relu(x@w+b) 8192x4096x4096 f32", relu_matmul(np), (g(8192, 4096), g(4096, 4096), g(4096)), T)
compare("attention 32x2048x64 f32", attention(np), tuple(g(32, 2048, 64) for _ in range(3)),
        {"compact": T["compact"], "old": T["old"], "compact_unbounded": T["compact_unbounded"]})
compare("relu(x@w+b) 4096^3 f64", relu_matmul(np), (g(4096, 4096, dt=np.float64), g(4096, 4096, dt=np.float64), g(4096, dt=np.float64)),
        {"compact": T["compact"], "old": T["old"]})
x = cupy.asarray(g(4096, 4096, dt=np.float64))
out["timings"]["cupy.matmul 4096^3 f64"] = timed(cupy.matmul, (x, x), 7)
xs = cupy.asarray(g(8192, 4096)); ws = cupy.asarray(g(4096, 4096))
out["timings"]["cupy.matmul 8192x4096x4096 f32"] = timed(cupy.matmul, (xs, ws), 7)
print(out["timings"]["cupy.matmul 4096^3 f64"], out["timings"]["cupy.matmul 8192x4096x4096 f32"])
os.makedirs(os.environ.get("OUT", "."), exist_ok=True)
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "gemm_device.json"), "w"), indent=1)
