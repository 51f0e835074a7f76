"""Where the first call of a corpus loop program goes on the GPU, in a new process with an empty
disk cache: import, the whole first call, and its build (trace, simplify, partition, plan and
write: the rest is compile, link, load and run), timed plainly, then the median of 5 warm calls;
with --profile also a cProfile of the whole first call written to DIR/NAME.prof (read it with pstats);
with --root DIR autofuse is imported from DIR (another checkout, to compare two versions in one
run; the corpus always comes from this one); with --again each program runs a second time in
a new process on the first one's disk cache (a line "cached": true).

    python benchmarks/experiments/loop_first_call_parts.py [--profile DIR] [--root DIR] [--again]
        NAME...
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
lowered = f.lower(*arguments, **static)      # (the first call's entry: its build's seconds)
lower_s = lowered._entry.build_seconds
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
    again = "--again" in argv
    argv = [a for a in argv if a != "--again"]
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
            for cached in (False, True)[:2 if again else 1]:
                try:
                    # (run from the cache folder: `python -c` puts its working folder first on
                    # the path)
                    done = subprocess.run([sys.executable, "-c", CHILD, name, prof], env=env,
                                          cwd=cache, capture_output=True, text=True, timeout=280)
                    row = json.loads(done.stdout.strip().splitlines()[-1]) \
                        if done.returncode == 0 else {"name": name, "error": done.stderr[-400:]}
                except subprocess.TimeoutExpired:
                    row = {"name": name, "error": "over 280 s"}
                print(json.dumps(dict(row, cached=cached)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
