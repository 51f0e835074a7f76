"""First calls of the corpus's loop programs with their loops simplified and fused once
(ir/periods.py, fusion/rolled.py) and with every step run through the stages, each in a new
process with an empty disk cache, at the corpus's large sizes (or --steps N), on the CPU or CUDA:

    python benchmarks/loop_first_calls.py [--backend cuda] [--steps N] [--json out.json] [NAME ...]

A line a program and way: seconds to lower (trace, simplify, partition, kernel records), seconds
of the whole first call (lower, compile, load, run, synchronize), kernels and distinct kernels,
whether the loop was rolled, and whether the two ways gave the same fused program.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["heat_1d", "heat_2d", "heat_3d", "jacobi_1d", "jacobi_2d", "wave_1d", "wave_2d",
           "advection_upwind", "advection_lax_wendroff", "burgers_1d", "diffusion_periodic",
           "fdtd_2d", "game_of_life", "power_iteration", "sinkhorn", "richardson"]


def one(name: str, backend: str, roll: bool, steps: int | None) -> dict:
    """Measured in this process (run by main() in a new one)."""
    import time
    import hashlib
    import autofuse
    from benchmarks.corpus import find
    program = find(name)
    arguments, static = program.arguments("large", program.dtypes[0])
    if steps is not None and "steps" in static:
        static = dict(static, steps=steps)
    if backend == "cuda":
        import cupy
        arguments = tuple(cupy.asarray(a) if hasattr(a, "shape") else a for a in arguments)
    f = autofuse.jit(program.function, static_argnames=program.static, backend=backend)
    f.options["roll_loops"] = roll
    begin = time.perf_counter()
    lowered = f.lower(*arguments, **static)
    lowered_s = time.perf_counter() - begin
    f = autofuse.jit(program.function, static_argnames=program.static, backend=backend)
    f.options["roll_loops"] = roll
    begin = time.perf_counter()
    f(*arguments, **static)
    if backend == "cuda":
        cupy.cuda.Device().synchronize()
    first_s = time.perf_counter() - begin
    kernels = lowered.kernels
    return {"name": name, "backend": backend, "roll": roll, "steps": static.get("steps"),
            "lower_s": lowered_s, "first_call_s": first_s, "kernels": len(kernels),
            "distinct": len({k.source for k in kernels}),
            "rolled": lowered._entry.loop is not None,
            "fused_digest": hashlib.sha1(lowered.fused.as_text().encode()).hexdigest()[:12]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--json")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--one", nargs=2)          # (name, roll): measure here, print JSON
    options = parser.parse_args()
    if options.one:
        name, roll = options.one
        print(json.dumps(one(name, options.backend, roll == "1", options.steps)))
        return
    rows = []
    for name in options.names or DEFAULT:
        pair = []
        for roll in ("1", "0"):
            with tempfile.TemporaryDirectory() as cache:
                command = [sys.executable, __file__, "--one", name, roll, "--backend",
                           options.backend] + (["--steps", str(options.steps)] if options.steps else [])
                environment = dict(os.environ, AUTOFUSE_CACHE_DIR=cache,
                                   PYTHONPATH=REPOSITORY + os.pathsep + os.environ.get("PYTHONPATH", ""))
                try:
                    done = subprocess.run(command, capture_output=True, text=True, env=environment,
                                          timeout=options.timeout)
                    row = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 \
                        else {"name": name, "roll": roll == "1", "error": done.stderr[-300:]}
                except subprocess.TimeoutExpired:
                    row = {"name": name, "roll": roll == "1", "error": f"over {options.timeout} s"}
            pair.append(row)
            rows.append(row)
            print(json.dumps(row), flush=True)
        if all("fused_digest" in row for row in pair):
            print(f"# {name}: same fused program: {pair[0]['fused_digest'] == pair[1]['fused_digest']}",
                  flush=True)
    if options.json:
        with open(options.json, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
