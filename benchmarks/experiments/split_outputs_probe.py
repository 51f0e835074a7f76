"""A full reduction beside an output of the array it reduces, `y = tanh(x) * 2; return y,
(y * y).sum()`, x 8192x8192 float32: autofuse's split reduction storing y as it goes (c43e8fd)
against the kernel such a group had before (one block over the whole array: Tuning.split_elements
raised past the array's size reproduces it), beside torch.compile and the memory floor (x read, y
written), in one process; results checked against NumPy.

    python benchmarks/experiments/split_outputs_probe.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpu  # noqa: E402

import autofuse  # noqa: E402


def fn(x):
    y = np.tanh(x) * 2
    return y, (y * y).sum()


def main():
    import cupy
    import torch
    rng = np.random.default_rng(5)
    host = rng.standard_normal((8192, 8192), dtype=np.float32)
    want_y, want_total = fn(host)
    x = cupy.asarray(host)
    sync = lambda _: cupy.cuda.Device().synchronize()
    entries = {}
    for label, tuning in (("split, storing y", gpu.tuning("")),
                          ("one block (before)", gpu.tuning(f"split_elements={1 << 40}"))):
        f = autofuse.jit(fn, tuning=tuning)
        y, total = f(x)
        print(label, [k.strategy for k in f.lower(x).kernels], flush=True)
        np.testing.assert_allclose(cupy.asnumpy(y), want_y, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(float(total), want_total, rtol=1e-4)
        entries[label] = (lambda f=f: f(x), sync)
    tx = torch.from_numpy(host).cuda()
    compiled = torch.compile(lambda a: ((b := torch.tanh(a) * 2), (b * b).sum()))
    compiled(tx)
    entries["torch.compile"] = (lambda: compiled(tx), lambda _: torch.cuda.synchronize())
    rounds = gpu.time_rounds(entries, rounds=5, short=2)
    floor = 2 * host.nbytes / gpu.copy_bandwidth(short=2) * 1000
    for label, samples in rounds.items():
        ms = float(np.median(samples))
        print(f"{label:>20s} {ms:9.4f} ms  floor x{ms / floor:6.2f}", flush=True)


if __name__ == "__main__":
    main()
