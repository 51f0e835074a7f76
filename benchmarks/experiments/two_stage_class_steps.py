"""Two-stage class kernels against their specialized kernels (issue 33): x.T @ g with runs of 10
outputs a thread (1.19-1.22x as a class, sized_classes_gpu.py) and column sums (two-stage
columns), under Tuning.output_run_steps and two_stage_loads, to find what the class loses.

Each program: the specialized kernel (dynamic=False), then the class under each tuning (the
automatic policy after 5 calls one to five rows smaller), alternating rounds, median ms
(dynamic_shapes.gpu_time); answers checked against NumPy in float64.

    python benchmarks/experiments/two_stage_class_steps.py [--json OUT]
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import autofuse  # noqa: E402
from autofuse.backends.cuda.tuning import Tuning  # noqa: E402

from dynamic_shapes import gpu_time  # noqa: E402


def programs(rng):
    m = 1 << 19
    x32, g32 = (rng.standard_normal((m, 64)).astype(np.float32),
                rng.standard_normal((m, 10)).astype(np.float32))
    a16 = rng.standard_normal((8192, 4096)).astype(np.float16)
    a32 = rng.standard_normal((4096, 4096)).astype(np.float32)
    return [("x.T@g f32 (2^19,64).T@(2^19,10)", lambda x, g: x.T @ g, (x32, g32)),
            ("x.T@g f64 (2^19,64).T@(2^19,10)", lambda x, g: x.T @ g,
             (x32.astype(np.float64), g32.astype(np.float64))),
            ("sum(0) 8192x4096 f16", lambda a: a.sum(axis=0), (a16,)),
            ("A.T@y 4096^2 f32", lambda a, y: a.T @ y, (a32, a32[:, 0].copy())),
            ("sum(0) 8192x4096 f32", lambda a: a.sum(axis=0), (a32.repeat(2, axis=0),)),
            ("sum(0) 32768x1000 f32", lambda a: a.sum(axis=0),
             (rng.standard_normal((32768, 1000)).astype(np.float32),)),
            ("sum(0) 1024x32768 f32", lambda a: a.sum(axis=0),
             (rng.standard_normal((1024, 32768)).astype(np.float32),)),
            ("mean(0) 65536x256 f32", lambda a: a.mean(axis=0),
             (rng.standard_normal((65536, 256)).astype(np.float32),))]


# (the defaults since this experiment: class_two_stage_loads 8; a run's steps 1)
TUNINGS = {"class": Tuning(), "class loads 4": Tuning(class_two_stage_loads=4),
           "class run steps 1": Tuning(class_run_steps=1),
           "class run steps 2": Tuning(class_run_steps=2),
           "class run steps 8": Tuning(class_run_steps=8)}


def main():
    import cupy
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--tunings", nargs="*", default=None)
    args = parser.parse_args()
    rows = []
    tunings = {k: v for k, v in TUNINGS.items() if not args.tunings or k in args.tunings}
    for name, fn, host in programs(np.random.default_rng(5)):
        if args.only and name not in args.only:
            continue
        device = [cupy.asarray(a) for a in host]
        want = fn(*(a.astype(np.float64) for a in host))
        made = {"specialized": autofuse.jit(fn, backend="cuda", dynamic=False)}
        for label, tuning in tunings.items():
            # (the automatic policy, the leading axis varied: past its specialized sizes, a class)
            made[label] = autofuse.jit(fn, backend="cuda", tuning=tuning)
            for fewer in range(1, 6):
                made[label](*[a[:-fewer] for a in device])
        row = {"program": name}
        for label, f in made.items():
            got = cupy.asnumpy(f(*device)).astype(np.float64)
            row[f"{label} error"] = float(np.max(np.abs(got - want) / (1 + np.abs(want))))
            lowered = f.lower(*device)
            row[f"{label} kernels"] = [k.strategy for k in lowered.kernels]
            row[f"{label} is a class"] = "# dynamic" in lowered.as_text("fused")
        for _ in range(3):
            for label, f in made.items():
                row.setdefault(f"{label} rounds", []).append(gpu_time(lambda: f(*device)))
        for label in made:
            row[f"{label} ms"] = statistics.median(row.pop(f"{label} rounds"))
        base = row["specialized ms"]
        print(name, " ".join(f"{label} {row[f'{label} ms'] / base:.3f}" for label in made),
              flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
