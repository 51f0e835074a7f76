"""What rounding float16 after each op costs: autofuse's float16 kernels in NumPy's rounding
(jit's default float16="numpy") beside float16="float32" (float32 intermediates, only stores
rounded: torch.compile's and jax.jit's semantics), and torch.compile, on the GPU workloads
named *f16. Measured on an H200 (2026-11-21, before float16="float32" existed, by patching
the renderer to the same effect): bias+GELU 0.116 / 0.080 / 0.088 ms, softmax 0.125 / 0.090 /
0.160, layernorm 0.112 / 0.102 / 0.083.

    python benchmarks/experiments/half_rounding_probe.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gpu  # noqa: E402
from workloads import workloads  # noqa: E402

import autofuse  # noqa: E402

def main():
    import cupy
    import torch
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth()
    for workload in workloads():
        if not workload.name.endswith("f16"):
            continue
        host = workload.make(rng)
        inputs = [cupy.asarray(a) for a in host]
        floor = workload.floor_bytes(host) / bandwidth * 1000
        sync = lambda _: cupy.cuda.Device().synchronize()
        rows = []
        for label, mode in (("round each op", "numpy"), ("round stores only", "float32")):
            fn = autofuse.jit(workload.fn(np), float16=mode)
            ms = gpu.time_calls(lambda: fn(*inputs), sync)
            rows.append((label, ms, fn.lower(*inputs).kernels[0].launch.get("registers")))
        tin = [torch.from_numpy(a).cuda() for a in host]
        compiled = torch.compile(workload.torch_fn(torch))
        ms = gpu.time_calls(lambda: compiled(*tin), lambda _: torch.cuda.synchronize())
        rows.append(("torch.compile", ms, None))
        for label, ms, registers in rows:
            print(f"{workload.name:20s} {label:18s} {ms:8.4f} ms  floor x{ms / floor:5.2f}  "
                  f"registers {registers}", flush=True)


if __name__ == "__main__":
    main()
