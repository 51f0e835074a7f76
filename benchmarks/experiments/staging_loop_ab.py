"""Tuning.staging_loop on the programs whose products take the general tiled kernel: each
program's warm GPU time with the staging written out (the default) and as loops over a thread's
slots, each tuning compiled into its own empty disk cache; each kernel's launch record
(registers, local bytes) printed.

    python benchmarks/experiments/staging_loop_ab.py [--calls 20] [--rounds 5]

Programs: the corpus's covariance and conv2d_slices at their large size, float32 and float64.
Times: CUDA events around `calls` calls, median of rounds (alternating A and B each round).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)

from tiles_bound_ab import alternating  # noqa: E402

CORPUS = ("covariance", "conv2d_slices")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    from benchmarks.corpus import find
    tunings = {"written out": Tuning(), "loops": Tuning(staging_loop=True)}
    for name in CORPUS:
        program = find(name)
        for dtype in (np.float32, np.float64):
            host, static = program.arguments("large", dtype)
            inputs = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
            calls, answers = {}, {}
            for label, tuning in tunings.items():
                os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="staging-ab-")
                jitted = autofuse.jit(program.function, backend="cuda", tuning=tuning,
                                      static_argnames=tuple(static))
                calls[label] = (lambda j=jitted: j(*inputs, **static))
                answers[label] = cupy.asnumpy(cupy.asarray(calls[label]()))
                for k in jitted.lower(*inputs, **static).kernels:
                    if k.kind == "output":
                        print(f"    {label}: {k.name} {k.strategy} {k.launch}", flush=True)
            medians = alternating(calls, args.rounds, args.calls)
            a, b = (medians[label] for label in tunings)
            same = np.allclose(answers["written out"], answers["loops"], rtol=1e-4, atol=1e-4)
            print(f"{name} {np.dtype(dtype).name:8s} written out {a:9.1f} us  loops {b:9.1f} us  "
                  f"loops/written {b / a:.3f}  same answer {same}", flush=True)


if __name__ == "__main__":
    main()
