"""Reductions whose outputs are few and whose reduced extent is long (before 31ba589 they ran on
one to sixteen blocks): autofuse's kernels (strategy, grid) and time beside torch.compile and the
memory floor (inputs read, outputs written, over the measured copy bandwidth), in one process,
3 interleaved rounds; results checked against NumPy.

    python benchmarks/experiments/reduction_shapes_probe.py [--only=NAME] [VARIANT ...]

VARIANT: Tuning fields, "two_stage_steps=4+ilp_loads=8" ("" the defaults).
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
    ("x.sum(0), 16384x4096", lambda x: x.sum(0), lambda t, x: x.sum(0), (16384, 4096)),
    ("x.sum((0, 1)), 64x256x256", lambda x: x.sum(axis=(0, 1)), lambda t, x: x.sum((0, 1)),
     (64, 256, 256)),
    ("x.sum(0), (2^22, 2)", lambda x: x.sum(0), lambda t, x: x.sum(0), (1 << 22, 2)),
    ("x.sum(1), (2, 2^22)", lambda x: x.sum(1), lambda t, x: x.sum(1), (2, 1 << 22)),
    ("softmax rows of 2^20, 4 rows", lambda x: np.exp(x - x.max(-1, keepdims=True)),
     lambda t, x: t.exp(x - x.amax(-1, keepdim=True)), (4, 1 << 20)),
]


def _compiled(fn, x, tuning):
    """autofuse.jit(fn, tuning=tuning), compiled and run once."""
    f = autofuse.jit(fn, tuning=tuning)
    got = f(x)
    kernels = "; ".join(f"{k.strategy} grid {k.launch['grid'][0]}" for k in f.lower(x).kernels)
    return f, got, kernels


def main(variants=("",), only=""):
    """Each case: torch.compile and autofuse under each variant of Tuning fields (argv:
    "" for the defaults, "two_stage_steps=4+ilp_loads=8", ...), interleaved in the same
    rounds; host time per call (synchronized batches) and the GPU's time (CUDA events)."""
    import cupy
    import torch
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth(short=2)
    sync = lambda _: cupy.cuda.Device().synchronize()
    for name, fn, torch_fn, shape in CASES:
        if only not in name:
            continue
        host = rng.standard_normal(shape, dtype=np.float32)
        want = fn(host)
        x = cupy.asarray(host)
        entries, kernels = {}, {}
        for variant in variants:
            f, got, kernels[variant] = _compiled(fn, x, gpu.tuning(variant))
            for a, b in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                np.testing.assert_allclose(cupy.asnumpy(a), b, rtol=1e-3, atol=1e-2)
            entries[f"autofuse {variant}".strip()] = (lambda f=f: f(x), sync)
        tx = torch.from_numpy(host).cuda()
        compiled = torch.compile(lambda a: torch_fn(torch, a))
        compiled(tx)
        entries["torch.compile"] = (lambda: compiled(tx), lambda _: torch.cuda.synchronize())
        device = {k: [] for k in entries}
        rounds = gpu.time_rounds(entries, rounds=3, short=2, device=device)
        out_bytes = sum(np.asarray(w).nbytes for w in (want if isinstance(want, tuple) else (want,)))
        floor = (host.nbytes + out_bytes) / bandwidth * 1000
        print(f"{name}: floor {floor:.4f} ms (host ms per call | GPU ms per call)", flush=True)
        for k in entries:
            v = k.replace("autofuse", "").strip()
            print(f"  {k:40s} {float(np.median(rounds[k])):.4f} | {float(np.median(device[k])):.4f}"
                  + (f"  ({kernels[v]})" if k != "torch.compile" else ""), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    only = args.pop(0)[len("--only="):] if args and args[0].startswith("--only=") else ""
    main(tuple(args) or ("",), only)
