"""What a shape class costs at its first call (issue 33): for each program, the first call at a
size (a specialized compile), the second at a neighbouring size (the class: traces at stand-in
sizes, compared, then compiled once), and a third size (an instance of the class: no trace, no
compile), wall seconds each, an empty disk cache, CuPy inputs (or NumPy with --cpu).

    python benchmarks/experiments/class_build_time.py [--cpu] [--only NAME ...]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp()
    import autofuse
    from dynamic_shapes import _smaller
    from reductions_sweep import points
    from workloads import workloads
    loads = list(workloads(scale=8)) + [p for p in points() if p.name in (
        "softmax(0) 4096x8192 f32", "x+r layernorm(0) 4096x8192 f32", "sum(0) 8192x4096 f32")]
    if args.cpu:
        convert, sync = (lambda a: a), (lambda: None)
    else:
        import cupy
        convert, sync = cupy.asarray, cupy.cuda.Device().synchronize
    # (numba-cuda and a first kernel loaded, as in a warm process)
    warm = autofuse.jit(lambda x: x + 1, backend="cpu" if args.cpu else "cuda")
    warm(convert(np.ones(8, np.float32)))
    rng = np.random.default_rng(1)
    print(f"{'program':34} {'first':>7} {'class':>7} {'instance':>9}  dynamic")
    for load in loads:
        if args.only and load.name not in args.only:
            continue
        host = [np.ascontiguousarray(a) for a in load.make(rng)]
        smaller = [np.ascontiguousarray(a) for a in _smaller(load, host)]
        third = [np.ascontiguousarray(a) for a in _smaller(load, smaller)]
        f = autofuse.jit(load.fn(np), backend="cpu" if args.cpu else "cuda")
        times = []
        for arrays in (host, smaller, third):
            device = [convert(a) for a in arrays]
            start = time.perf_counter()
            f(*device)
            sync()
            times.append(time.perf_counter() - start)
        text = f.lower(*[convert(a) for a in third]).as_text("fused")
        dynamic = "class" if "# dynamic:" in text else "static"
        print(f"{load.name:34} {times[0]:7.3f} {times[1]:7.3f} {times[2]:9.4f}  {dynamic} "
              f"({f.cache_info().compiles} compiles)", flush=True)


if __name__ == "__main__":
    main()
