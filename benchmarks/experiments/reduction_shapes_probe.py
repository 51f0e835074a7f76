"""Reductions whose outputs are few and whose reduced extent is long (session 16 found them run on
one to sixteen blocks): autofuse's kernels (strategy, grid) and time beside torch.compile and the
memory floor (inputs read, outputs written, over the measured copy bandwidth), in one process,
3 interleaved rounds; results checked against NumPy.

    python benchmarks/experiments/reduction_shapes_probe.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpu  # noqa: E402

import autofuse  # noqa: E402

# name, NumPy function, torch function, input shape
CASES = [
    ("columns of 4096x4096 with exp(x)", lambda x: (np.exp(x), np.exp(x).sum(0)),
     lambda t, x: (t.exp(x), t.exp(x).sum(0)), (4096, 4096)),
    ("x.sum(0), 4096x4096", lambda x: x.sum(0), lambda t, x: x.sum(0), (4096, 4096)),
    ("x.sum((0, 1)), 64x256x256", lambda x: x.sum(axis=(0, 1)), lambda t, x: x.sum((0, 1)),
     (64, 256, 256)),
    ("x.sum(0), (2^22, 2)", lambda x: x.sum(0), lambda t, x: x.sum(0), (1 << 22, 2)),
    ("x.sum(1), (2, 2^22)", lambda x: x.sum(1), lambda t, x: x.sum(1), (2, 1 << 22)),
    ("softmax rows of 2^20, 4 rows", lambda x: np.exp(x - x.max(-1, keepdims=True)),
     lambda t, x: t.exp(x - x.amax(-1, keepdim=True)), (4, 1 << 20)),
]


def main():
    import cupy
    import torch
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth(short=2)
    sync = lambda _: cupy.cuda.Device().synchronize()
    for name, fn, torch_fn, shape in CASES:
        host = rng.standard_normal(shape, dtype=np.float32)
        want = fn(host)
        f = autofuse.jit(fn)
        x = cupy.asarray(host)
        got = f(x)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(cupy.asnumpy(a), b, rtol=1e-3, atol=1e-2)
        kernels = "; ".join(f"{k.strategy} grid {k.launch['grid'][0]}"
                            for k in f.lower(x).kernels)
        tx = torch.from_numpy(host).cuda()
        compiled = torch.compile(lambda a: torch_fn(torch, a))
        compiled(tx)
        rounds = gpu.time_rounds({"autofuse": (lambda: f(x), sync),
                                  "torch.compile": (lambda: compiled(tx),
                                                    lambda _: torch.cuda.synchronize())},
                                 rounds=3, short=2)
        out_bytes = sum(np.asarray(w).nbytes for w in (want if isinstance(want, tuple) else (want,)))
        floor = (host.nbytes + out_bytes) / bandwidth * 1000
        ms = {k: float(np.median(v)) for k, v in rounds.items()}
        print(f"{name:34s} floor {floor:.4f} ms  autofuse {ms['autofuse']:.4f}  torch.compile "
              f"{ms['torch.compile']:.4f}  ({kernels})", flush=True)


if __name__ == "__main__":
    main()
