"""Sweep benchmarks/fresh/programs.py through autofuse: each program in its own subprocess.

python benchmarks/fresh/run.py [names...]      -> results.json next to this file
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 120
LOWEST = None


def _tol(dtype):
    import numpy as np
    if LOWEST is not None and dtype.kind in "fc" and np.dtype(LOWEST).itemsize < dtype.itemsize:
        dtype = np.dtype(LOWEST)   # a float64 result computed from float32 inputs
    if dtype == np.float16:
        return dict(rtol=1e-2, atol=1e-2)
    if dtype == np.float32 or dtype == np.complex64:
        return dict(rtol=1e-4, atol=1e-5)
    if dtype.kind in "fc":
        return dict(rtol=1e-9, atol=1e-12)
    return None  # exact


def compare(got, want, path="out"):
    """List of difference strings (empty: equal)."""
    import numpy as np
    diffs = []
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return [f"{path}: structure {type(got).__name__} len "
                    f"{len(got) if hasattr(got, '__len__') else '-'} vs {type(want).__name__} {len(want)}"]
        for i, (g, w) in enumerate(zip(got, want)):
            diffs += compare(g, w, f"{path}[{i}]")
        return diffs
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return [f"{path}: dict keys differ"]
        for k in want:
            diffs += compare(got[k], want[k], f"{path}[{k!r}]")
        return diffs
    notes = []
    if type(got) is not type(want):
        notes.append(f"{path}: python type {type(got).__name__} vs {type(want).__name__} (note)")
    g = np.asarray(got)
    w = np.asarray(want)
    if g.dtype != w.dtype:
        diffs.append(f"{path}: dtype {g.dtype} vs numpy {w.dtype}")
    if g.shape != w.shape:
        diffs.append(f"{path}: shape {g.shape} vs numpy {w.shape}")
        return diffs + notes
    tol = _tol(w.dtype)
    try:
        if tol is None or g.dtype.kind not in "fc":
            if not np.array_equal(g, w, equal_nan=w.dtype.kind in "fc"):
                bad = np.argwhere(g != w) if g.ndim else []
                diffs.append(f"{path}: values differ (exact) at {len(bad)} places; first "
                             f"{[tuple(b) for b in bad[:3]]} got {g[tuple(bad[0])] if len(bad) else g} "
                             f"want {w[tuple(bad[0])] if len(bad) else w}")
        else:
            np.testing.assert_allclose(g, w, **tol, equal_nan=True)
    except AssertionError as e:
        msg = str(e).strip().splitlines()
        diffs.append(f"{path}: values differ: " + " | ".join(l.strip() for l in msg[:8] if l.strip()))
    return diffs + notes


def run_one(name):
    import resource
    import warnings
    import numpy as np
    warnings.simplefilter("ignore")
    sys.path.insert(0, HERE)
    import programs
    import autofuse
    fn, make = programs.PROGRAMS[name]
    res = dict(name=name, error=None, diffs=[], notes=[], cuda_lower=None)

    def numpy_ref(seed):
        args = make(seed)
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001
            out = e
        return out, args

    global LOWEST
    fl = [a.dtype for a in make(0) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    LOWEST = min(fl, key=lambda d: d.itemsize) if fl else None

    def split(d):
        hard = [x for x in d if not x.endswith("(note)")]
        soft = [x for x in d if x.endswith("(note)")]
        return hard, soft

    jf = autofuse.jit(fn)
    try:
        for call, seed in (("call1", 0), ("call2", 0), ("call3_seed1", 1)):
            want, wargs = numpy_ref(seed)
            args = make(seed)
            t0 = time.perf_counter()
            if isinstance(want, Exception):
                try:
                    got = jf(*args)
                except Exception as e:  # noqa: BLE001
                    res["notes"].append(f"{call}: both raise: numpy {type(want).__name__}: {want} | "
                                        f"autofuse {type(e).__name__}: {str(e)[:300]} (note)")
                    if call == "call1":
                        res["first_call_s"] = round(time.perf_counter() - t0, 3)
                    continue
                res["diffs"].append(f"{call}: numpy raises {type(want).__name__}: {want}; autofuse "
                                    f"returned {got!r}"[:600])
                continue
            got = jf(*args)
            dt = time.perf_counter() - t0
            if call == "call1":
                res["first_call_s"] = round(dt, 3)
            elif call == "call2":
                res["second_call_s"] = round(dt, 5)
            hard, soft = split(compare(got, want, f"{call}.out"))
            res["diffs"] += hard
            res["notes"] += soft
            for i, (g, w) in enumerate(zip(args, wargs)):
                if isinstance(w, np.ndarray):
                    hard, soft = split(compare(g, w, f"{call}.arg{i}"))
                    res["diffs"] += hard
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        res["error"] = dict(type=f"{type(e).__module__}.{type(e).__qualname__}", message=str(e)[:1500],
                            where=f"{tb[-1].filename}:{tb[-1].lineno}" if tb else None,
                            autofuse_error=isinstance(e, autofuse.errors.AutofuseError)
                            if hasattr(autofuse, "errors") else None)
    try:
        low = autofuse.jit(fn).lower(*make(0), backend="cuda")
        srcs = [k.source for k in low.kernels]
        res["cuda_lower"] = dict(ok=True, kernels=len(srcs))
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        res["cuda_lower"] = dict(ok=False, type=f"{type(e).__module__}.{type(e).__qualname__}",
                                 message=str(e)[:1000],
                                 where=f"{tb[-1].filename}:{tb[-1].lineno}" if tb else None)
    res["maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print("@@RESULT@@" + json.dumps(res, default=str))


def main(names):
    sys.path.insert(0, HERE)
    import programs
    names = names or list(programs.PROGRAMS)
    out_path = os.path.join(HERE, "results.json")
    results = {}
    if os.path.exists(out_path) and names != list(programs.PROGRAMS):
        results = json.load(open(out_path))
    for name in names:
        t0 = time.perf_counter()
        try:
            import tempfile
            env = dict(os.environ, AUTOFUSE_CACHE_DIR=tempfile.mkdtemp(prefix="af_fresh_"))
            p = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                               text=True, timeout=TIMEOUT, env=env)
            line = [l for l in p.stdout.splitlines() if l.startswith("@@RESULT@@")]
            if line:
                r = json.loads(line[-1][len("@@RESULT@@"):])
            else:
                r = dict(name=name, error=dict(type="child-died", message=f"rc={p.returncode} "
                                               + p.stderr[-1500:]))
        except subprocess.TimeoutExpired:
            r = dict(name=name, error=dict(type="TIMEOUT", message=f">{TIMEOUT}s"))
        finally:
            import shutil
            shutil.rmtree(env["AUTOFUSE_CACHE_DIR"], ignore_errors=True)
        r["wall_s"] = round(time.perf_counter() - t0, 1)
        results[name] = r
        status = "OK"
        if r.get("error"):
            status = "ERR " + r["error"]["type"]
        elif r.get("diffs"):
            status = "WRONG"
        cl = r.get("cuda_lower") or {}
        print(f"{name:30s} {status:45s} first={r.get('first_call_s')} rss={r.get('maxrss_mb')} "
              f"cuda={'ok' if cl.get('ok') else cl.get('type')}", flush=True)
        json.dump(results, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        run_one(sys.argv[2])
    else:
        main(sys.argv[1:])
