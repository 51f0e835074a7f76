"""Interleaved rounds of synchronized batches, the timing of sorts.py, fft.py and gathers.py: each
system's batch length is fitted to about `budget_ms`, a round runs one batch of every system in
an order rotated from round to round, and a system's time is the median over rounds of batch
time / calls."""
from __future__ import annotations

import time

import numpy as np


def time_rounds(entries: dict, rounds: int, sync=lambda value: None, budget_ms=150.0) -> dict:
    """Median ms a call of each entry name -> (fn, args), `sync(result)` ending each batch."""
    calls = {}
    for name, (fn, args) in entries.items():
        for _ in range(2):
            sync(fn(*args))
        start = time.perf_counter()
        sync(fn(*args))
        once = (time.perf_counter() - start) * 1000
        calls[name] = max(2, min(50, int(budget_ms / max(once, 1e-3))))
    times = {name: [] for name in entries}
    names = list(entries)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn, args = entries[name]
            start = time.perf_counter()
            for _ in range(calls[name]):
                result = fn(*args)
            sync(result)
            times[name].append((time.perf_counter() - start) * 1000 / calls[name])
    return {name: float(np.median(t)) for name, t in times.items()}
