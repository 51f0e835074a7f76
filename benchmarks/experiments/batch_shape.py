"""How a synchronized batch's time grows with its number of calls, per system: whether calls
after the first few run at a steady rate (the premise of gpu.py's difference of batches), and
what a batch pays once.

    python benchmarks/experiments/batch_shape.py --only "layernorm rows,sum(x*x)" \
        [--systems autofuse,torch.compile,jax.jit] [--lengths 1,2,4,8,22,52,102] [--rounds 5]

For each round, each system (order rotated) runs one synchronized batch of every length; the
table gives the median milliseconds of a whole batch and the marginal milliseconds a call between
consecutive lengths. Where the system's work is ordered on the legacy default stream (CuPy's and
torch's null stream, so not jax), CUDA events recorded after call 2 and after the last call time
the steady calls on the GPU itself, with no host latency in them (`events`).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpu  # noqa: E402
from workloads import workloads  # noqa: E402


def whole(call, sync, calls: int) -> float:
    """Milliseconds of one synchronized batch of `calls` calls."""
    return gpu._batch(call, sync, calls) * calls


def on_device(call, sync, calls: int, skip: int = 2) -> float:
    """Milliseconds a call between CUDA events on the null stream after `skip` calls and after
    `calls` calls."""
    import cupy
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    result = None
    for k in range(calls):
        if k == skip:
            start.record(cupy.cuda.Stream.null)
        result = call()
    end.record(cupy.cuda.Stream.null)
    sync(result)
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) / (calls - skip)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", required=True, help="comma-separated workload names")
    parser.add_argument("--systems", default="autofuse,torch.compile,jax.jit")
    parser.add_argument("--lengths", default="1,2,4,8,22,52,102")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    names, lengths = args.only.split(","), [int(n) for n in args.lengths.split(",")]
    rng = np.random.default_rng(13)
    for workload in workloads():
        if workload.name not in names:
            continue
        host = workload.make(rng)
        systems = gpu.checked_calls(workload, host, args.systems.split(","))
        for call, sync in systems.values():
            gpu._batch(call, sync, 5)
        totals = {s: {n: [] for n in lengths} for s in systems}
        events = {s: [] for s in systems if s != "jax.jit"}
        order = list(systems)
        for round_ in range(args.rounds):
            shift = round_ % len(order)
            for system in order[shift:] + order[:shift]:
                call, sync = systems[system]
                for n in lengths:
                    totals[system][n].append(whole(call, sync, n))
                if system in events:
                    events[system].append(on_device(call, sync, max(lengths)))
        print(f"== {workload.name} (floor {workload.floor_bytes(host) / 4.26e9:.4f} ms at 4.26 TB/s)")
        for system in systems:
            med = {n: statistics.median(totals[system][n]) for n in lengths}
            steps = [f"{a}->{b}: {(med[b] - med[a]) / (b - a):.4f}"
                     for a, b in zip(lengths, lengths[1:])]
            fixed = med[lengths[-1]] - lengths[-1] * (med[lengths[-1]] - med[lengths[-2]]) / (
                lengths[-1] - lengths[-2])
            shown = " ".join(f"{n}:{med[n]:.3f}" for n in lengths)
            ev = (f" events {statistics.median(events[system]):.4f}"
                  f" [{min(events[system]):.4f}, {max(events[system]):.4f}]"
                  if system in events else "")
            print(f"{system:14s} whole {shown}\n{'':14s} a call {' '.join(steps)}"
                  f" | once {fixed:.3f}{ev}", flush=True)


if __name__ == "__main__":
    main()
