"""The general product kernel (emit/matmul.py) with its accumulators as scalar variables or as a
register block (Tuning.register_block): first call in a new process with an empty disk cache,
and warm time (CUDA events, median of 20) on the GPU, for the corpus programs whose products take
that kernel. One JSON line a (program, setting).

    python benchmarks/experiments/register_block_gpu.py [NAME ...]
    python benchmarks/experiments/register_block_gpu.py --rounds NAME   # warm times only, both
        settings in one process, 7 interleaved rounds of 20 calls each (median of medians)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = ["covariance", "correlation_np_cov", "bilinear_einsum", "conv2d_slices"]


def one(name: str, block: bool) -> dict:
    import time
    import cupy
    import numpy as np
    import autofuse
    from autofuse.backends.cuda.tuning import DEFAULT as TUNING
    from benchmarks.corpus import find
    program = find(name)
    arguments, static = program.arguments("large", program.dtypes[0])
    arguments = tuple(cupy.asarray(a) if hasattr(a, "shape") else a for a in arguments)
    f = autofuse.jit(program.function, static_argnames=program.static, backend="cuda",
                     tuning=TUNING.replace(register_block=block))
    begin = time.perf_counter()
    result = f(*arguments, **static)
    cupy.cuda.Device().synchronize()
    first = time.perf_counter() - begin
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(20):
        start.record()
        f(*arguments, **static)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    reference = program.function(*[cupy.asnumpy(a) if hasattr(a, "shape") else a
                                   for a in arguments], **static)
    flat = lambda r: r if isinstance(r, (tuple, list)) else (r,)
    error = max(float(np.max(np.abs(cupy.asnumpy(g) - w)) / (float(np.max(np.abs(w))) or 1.0))
                for g, w in zip(flat(result), flat(reference)))
    kernels = f.lower(*arguments, **static).kernels
    return {"name": name, "register_block": block, "first_call_s": round(first, 2),
            "warm_ms": round(float(np.median(times)), 4), "relative_error": error,
            "strategies": sorted({k.strategy for k in kernels if k.kind == "output"})}


def rounds(name: str, count: int = 7) -> dict:
    import cupy
    import numpy as np
    import autofuse
    from autofuse.backends.cuda.tuning import DEFAULT as TUNING
    from benchmarks.corpus import find
    program = find(name)
    arguments, static = program.arguments("large", program.dtypes[0])
    arguments = tuple(cupy.asarray(a) if hasattr(a, "shape") else a for a in arguments)
    functions = {block: autofuse.jit(program.function, static_argnames=program.static,
                                     backend="cuda", tuning=TUNING.replace(register_block=block))
                 for block in (False, True)}
    times = {False: [], True: []}
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    for f in functions.values():
        f(*arguments, **static)
    for _ in range(count):
        for block, f in functions.items():
            samples = []
            for _ in range(20):
                start.record()
                f(*arguments, **static)
                stop.record()
                stop.synchronize()
                samples.append(cupy.cuda.get_elapsed_time(start, stop))
            times[block].append(float(np.median(samples)))
    return {"name": name, "rounds": count,
            "warm_ms": {str(block): round(float(np.median(t)), 4) for block, t in times.items()},
            "spread_ms": {str(block): [round(min(t), 4), round(max(t), 4)]
                          for block, t in times.items()}}


def main() -> None:
    if sys.argv[1:2] == ["--rounds"]:
        for name in sys.argv[2:] or DEFAULT:
            print(json.dumps(rounds(name)), flush=True)
        return
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(sys.argv[2], sys.argv[3] == "1")))
        return
    for name in sys.argv[1:] or DEFAULT:
        for block in ("0", "1"):
            with tempfile.TemporaryDirectory() as cache:
                environment = dict(os.environ, AUTOFUSE_CACHE_DIR=cache,
                                   PYTHONPATH=REPOSITORY + os.pathsep + os.environ.get("PYTHONPATH", ""))
                done = subprocess.run([sys.executable, __file__, "--one", name, block],
                                      capture_output=True, text=True, env=environment, timeout=400)
                print(done.stdout.strip().splitlines()[-1] if done.returncode == 0 else
                      json.dumps({"name": name, "register_block": block == "1",
                                  "error": done.stderr[-400:]}), flush=True)


if __name__ == "__main__":
    main()
