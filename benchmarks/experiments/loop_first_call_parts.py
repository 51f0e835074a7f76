"""Where the first call of a corpus loop program goes on the GPU, in a new process with an empty
disk cache: import, lower (trace, simplify, partition, plan and write), then the rest of the
first call (compile, link, load, run), timed plainly, then the median of 5 warm calls; with
--profile also a cProfile of the whole first call written to DIR/NAME.prof (read it with pstats);
with --root DIR autofuse is imported from DIR (another checkout, to compare two versions in one
run; the corpus always comes from this one).

    python benchmarks/experiments/loop_first_call_parts.py [--profile DIR] [--root DIR] NAME...
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import autofuse, cupy
from benchmarks.corpus import find
import autofuse.backends.cuda
t_import = time.perf_counter() - t0
name, profile = sys.argv[1], sys.argv[2]
program = find(name)
arguments, static = program.arguments("large", program.dtypes[0])
arguments = tuple(cupy.asarray(a) if hasattr(a, "shape") else a for a in arguments)
cupy.cuda.Device().synchronize()
f = autofuse.jit(program.function, static_argnames=program.static, backend="cuda")
begin = time.perf_counter()
lowered = f.lower(*arguments, **static)
lower_s = time.perf_counter() - begin
f = autofuse.jit(program.function, static_argnames=program.static, backend="cuda")
if profile != "-":
    import cProfile
    profiler = cProfile.Profile()
    profiler.enable()
begin = time.perf_counter()
f(*arguments, **static)
cupy.cuda.Device().synchronize()
first_s = time.perf_counter() - begin
if profile != "-":
    profiler.disable()
    profiler.dump_stats(profile)
warm = []
for _ in range(5):
    begin = time.perf_counter()
    f(*arguments, **static)
    cupy.cuda.Device().synchronize()
    warm.append(time.perf_counter() - begin)
print(json.dumps({"name": name, "autofuse": autofuse.__file__, "import_s": t_import,
                  "lower_s": lower_s, "first_call_s": first_s,
                  "warm_ms": sorted(warm)[2] * 1e3, "kernels": len(lowered.kernels),
                  "distinct": len({k.source for k in lowered.kernels})}))
"""


def main(argv):
    profile_dir = None
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = here
    while argv[:1] in (["--profile"], ["--root"]):
        if argv[0] == "--profile":
            profile_dir = argv[1]
        else:
            root = os.path.abspath(argv[1])
        argv = argv[2:]
    for name in argv:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache,
                       PYTHONPATH=os.pathsep.join([root, here, os.environ.get("PYTHONPATH", "")]))
            prof = os.path.join(profile_dir, name + ".prof") if profile_dir else "-"
            try:
                # (run from the cache folder: `python -c` puts its working folder first on the path)
                done = subprocess.run([sys.executable, "-c", CHILD, name, prof], env=env, cwd=cache,
                                      capture_output=True, text=True, timeout=280)
                line = done.stdout.strip().splitlines()[-1] if done.returncode == 0 else \
                    json.dumps({"name": name, "error": done.stderr[-400:]})
            except subprocess.TimeoutExpired:
                line = json.dumps({"name": name, "error": "over 280 s"})
            print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
