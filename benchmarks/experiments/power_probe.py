"""Whether the GPU's clocks or power differ while one system's calls run back to back: each system
runs a workload's calls for a few seconds at a time, in turn, while nvidia-smi samples the SM and
memory clocks, the power drawn and the temperature every 20 ms; and CUDA events time the calls.

    python benchmarks/experiments/power_probe.py --only "layernorm rows,(x.T+y)*2" [--seconds 3]

Why: Nsight Compute, which times one kernel at a time with caches flushed, found autofuse's
transpose and layernorm kernels faster than Inductor's, while back to back (the benchmark) they
were 0.4-0.7% slower. If a kernel that issues more instructions draws more power, a GPU at its
power limit lowers its clock under it, which a one-off kernel would not show. For each system
the median SM clock, memory clock, power and temperature over its runs (samples of the first
0.3 s of each run left out), and its call time (median over the runs).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpu  # noqa: E402
from workloads import workloads  # noqa: E402

FIELDS = "clocks.sm,clocks.mem,power.draw,temperature.gpu"


class Sampler:
    """nvidia-smi in the background; samples() gives (time, sm MHz, mem MHz, W, C) rows."""

    def __init__(self, period_ms=20):
        self.process = subprocess.Popen(
            ["nvidia-smi", f"--query-gpu=timestamp,{FIELDS}", "--format=csv,noheader,nounits",
             f"-lms={period_ms}"], stdout=subprocess.PIPE, text=True)
        self.rows = []

    def stop(self):
        self.process.terminate()
        out, _ = self.process.communicate()
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            try:
                stamp = time.mktime(time.strptime(parts[0][:19], "%Y/%m/%d %H:%M:%S")) + \
                    float("0" + parts[0][19:])
                self.rows.append((stamp, *[float(p) for p in parts[1:]]))
            except (ValueError, IndexError):
                continue
        return self.rows


def run_for(call, sync, seconds: float, events) -> tuple[float, float, float]:
    """(start, end, ms per call by CUDA events) of calls made back to back for `seconds`."""
    start_event, end_event = events
    calls = 0
    begin = time.time()
    start_event.record()
    while time.time() - begin < seconds:
        for _ in range(20):
            call()
        calls += 20
    end_event.record()
    end_event.synchronize()
    sync(None)
    import cupy
    return begin, time.time(), cupy.cuda.get_elapsed_time(start_event, end_event) / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", required=True, help="comma-separated workload names")
    parser.add_argument("--systems", default="autofuse,torch.compile")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a Tuning field for autofuse's kernels (repeatable)")
    args = parser.parse_args()
    tuning = gpu.tuning("+".join(args.set))
    import cupy
    names, systems = args.only.split(","), args.systems.split(",")
    rng = np.random.default_rng(13)
    events = (cupy.cuda.Event(), cupy.cuda.Event())
    for workload in workloads():
        if workload.name not in names:
            continue
        calls = gpu.checked_calls(workload, workload.make(rng), systems, tuning)
        spans = {system: [] for system in systems}
        sampler = Sampler()
        time.sleep(0.5)
        for turn in range(args.turns):
            for system in (systems if turn % 2 == 0 else systems[::-1]):
                spans[system].append(run_for(*calls[system], args.seconds, events))
        rows = np.array(sampler.stop())
        print(f"== {workload.name} ({len(rows)} samples) {' '.join(args.set)}")
        for system in systems:
            inside = np.concatenate([rows[(rows[:, 0] >= a + 0.3) & (rows[:, 0] <= b)]
                                     for a, b, _ in spans[system]]) if len(rows) else np.zeros((0, 5))
            ms = np.median([m for _, _, m in spans[system]])
            if len(inside):
                sm, mem, watts, celsius = np.median(inside[:, 1:], axis=0)
                low = np.percentile(inside[:, 1], 5)
                print(f"   {system:14s} {ms:8.4f} ms a call   SM {sm:6.0f} MHz (5th pct {low:.0f})"
                      f"  mem {mem:6.0f} MHz  {watts:6.1f} W  {celsius:4.1f} C  "
                      f"({len(inside)} samples)", flush=True)
            else:
                print(f"   {system:14s} {ms:8.4f} ms a call   (no samples)", flush=True)


if __name__ == "__main__":
    main()
