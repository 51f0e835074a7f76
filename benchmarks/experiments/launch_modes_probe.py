"""GPU time per call of each benchmark workload with autofuse's kernels launched one by one
(cuda_graph=False) and replayed as a CUDA graph (the default), beside torch.compile: results
checked against NumPy, then 3 interleaved rounds in one process (ms, median).

    python benchmarks/experiments/launch_modes_probe.py ["workload,workload"]
"""
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpu  # noqa: E402
from workloads import workloads  # noqa: E402

import autofuse  # noqa: E402


def main():
    import cupy
    only = sys.argv[1].split(",") if len(sys.argv) > 1 else None
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth()
    sync = lambda _: cupy.cuda.Device().synchronize()
    for workload in workloads():
        if only and workload.name not in only:
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        inputs = [cupy.asarray(a) for a in host]
        calls = {}
        for label, mode in (("kernels", False), ("graph", None)):
            fn = autofuse.jit(workload.fn(np), cuda_graph=mode)
            result = fn(*inputs)
            sync(result)
            gpu.check(cupy.asnumpy(result), reference, workload.tolerance)
            calls[label] = (lambda fn=fn: fn(*inputs), sync)
        calls["torch.compile"] = gpu.system_call("torch.compile", workload, host)
        times = {name: [] for name in calls}
        for _ in range(3):
            for name, (call, wait) in calls.items():
                times[name].append(gpu.time_calls(call, wait))
        floor = workload.floor_bytes(host) / bandwidth * 1000
        print(f"{workload.name:20s} floor {floor:.4f}  " + "  ".join(
            f"{name} {statistics.median(values):.4f}" for name, values in times.items()),
            flush=True)


if __name__ == "__main__":
    main()
