"""Warm GPU times of kernels whose text the select spellings changed (backends/selection.py):
arg reductions (argmax/argmin take values by selects, no branches), NaN-aware max and where
chains, a stencil's eager guards, for this checkout and another (--root DIR), alternating,
each program in a new process: median of 7 rounds of 20 calls after warm-up (CUDA events).

    python benchmarks/experiments/select_kernels_gpu.py [--root DIR]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys
import numpy as np, cupy as cp, autofuse
def stencil(u):
    v = u.copy()
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return v
rng = np.random.default_rng(0)
x = cp.asarray(rng.standard_normal((16384, 4096), dtype=np.float32))
y = cp.asarray(rng.standard_normal((16384, 4096), dtype=np.float32))
programs = {
    "argmax rows 16384x4096": (lambda x: np.argmax(x, axis=1), (x,)),
    "argmin columns 16384x4096": (lambda x: np.argmin(x, axis=0), (x,)),
    "max and argmax rows": (lambda x: (np.max(x, axis=1), np.argmax(x, axis=1)), (x,)),
    "argmax total": (lambda x: np.argmax(x), (x,)),
    "where/maximum chain": (lambda x, y: np.where(x > y, np.maximum(x, 0), np.fmin(y, x)) * np.sign(y), (x, y)),
    "5-point stencil 8192^2": (stencil, (cp.asarray(rng.standard_normal((8192, 8192), dtype=np.float32)),)),
}
out = {}
for name, (f, args) in programs.items():
    g = autofuse.jit(f, backend="cuda")
    for _ in range(3):
        g(*args)
    cp.cuda.Device().synchronize()
    rounds = []
    for _ in range(7):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(20):
            g(*args)
        stop.record(); stop.synchronize()
        rounds.append(cp.cuda.get_elapsed_time(start, stop) / 20 * 1e3)
    out[name] = sorted(rounds)[3]
print(json.dumps(out))
"""


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    roots = [here]
    if argv[:1] == ["--root"]:
        roots.append(os.path.abspath(argv[1]))
    results = {}
    for turn in range(2):
        for root in roots:
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache,
                           PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
                # (run from the cache folder: `python -c` puts its working folder first on the path)
                done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                                      cwd=cache, text=True, timeout=280)
                if done.returncode != 0:
                    print(root, done.stderr[-600:])
                    continue
                for name, us in json.loads(done.stdout.strip().splitlines()[-1]).items():
                    results.setdefault(name, {}).setdefault(root, []).append(us)
    for name, by_root in results.items():
        cells = "  ".join(f"{os.path.basename(r.rstrip('/')) or r}: " +
                          "/".join(f"{t:.1f}" for t in times) + " us" for r, times in by_root.items())
        print(f"{name:28s} {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
