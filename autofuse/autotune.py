"""A program's candidates timed at its signature's first call, where a choice sits near its bound.

Some of the CUDA planner's choices follow a bound measured on one GPU (Tuning.column_program_bytes:
a whole-column program as column tiles, or as a reduction kernel a level and a pointwise pass).
Near the bound that measurement says little about another GPU or shape. There the backend names
candidate options (`candidates(entry)`); those whose partition differs from the planner's and
from each other's are compiled and timed on the call's own arguments, in turns, and the fastest
is kept. The choice is remembered on disk per device, function and signature, so that a later
process compiles only it; every kernel's reason says what was timed and taken. Only a call whose
arguments are on the device is timed (host arrays' copies would be most of the time), and not a
program that writes its arguments (each timed call would write them again).
`jit(autotune=False)` takes the planner's choice without timing."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from .backends.disk_cache import cache_dir, digest, write_checked

ROUNDS = 5                 # timed rounds, the candidates in turns; the median of each's
BATCH_SECONDS = 2e-3       # a round's calls of a candidate take at least this long ...
MOST_CALLS = 50            # ... in at most this many calls


@dataclass(frozen=True)
class Timed:
    """What was timed: each candidate's label and seconds a call (None: remembered), and the
    label taken."""
    labels: tuple
    seconds: tuple
    chosen: str

    def text(self) -> str:
        if self.seconds[0] is None:
            return f"{self.chosen}, timed fastest of {', '.join(self.labels)} by an earlier " \
                   f"process at this signature's first call (the disk cache)"
        times = ", ".join(f"{label} {seconds * 1e3:.3f} ms"
                          for label, seconds in zip(self.labels, self.seconds))
        return f"{self.chosen}, the fastest of {times}, timed at this signature's first call"


def structure(entry) -> tuple:
    """The program's partition: each kernel's ops (node ids of the same trace)."""
    return tuple(sorted(tuple(sorted(group.members)) for group in entry.fused.groups))


def tuned(entry, assemble, target, leaves, key, timing: bool = True):
    """`entry`, or the fastest of it and its candidates (`target.candidates(entry)`: (label,
    options) pairs; `assemble(options)` traces and partitions one, `target.prepare` compiles
    it), timed on the call's `leaves`. `timing` False (a lower(), no arguments on the device):
    only a choice remembered on disk is taken."""
    proposed = target.candidates(entry) if not entry.traced.mutations else []
    if not proposed:
        return entry
    seen, found = {structure(entry)}, [("as planned", entry)]
    for label, options in proposed:
        candidate = assemble(options)
        partition = structure(candidate)
        if partition not in seen:
            seen.add(partition)
            found.append((label, candidate))
    if len(found) == 1:
        return entry
    labels = tuple(label for label, _ in found)
    # (the jit's own options too: a jit told other tuning times, and remembers, on its own)
    name = digest(entry.function_key, repr(key), repr(sorted(entry.options.items())),
                  target.device_key(), *labels)
    record = cache_dir() / "autotune" / f"{name}.json"
    remembered = _remembered(record, labels)
    if remembered is None and not (timing and target.timeable(leaves)):
        return entry
    if remembered is not None:
        chosen = dict(found)[remembered]
        if chosen is not entry:
            target.prepare(chosen)
        return _noted(chosen, Timed(labels, (None,) * len(labels), remembered))
    for _, candidate in found[1:]:
        target.prepare(candidate)
    seconds = _timed([candidate for _, candidate in found], leaves, target.synchronize)
    best = min(range(len(found)), key=seconds.__getitem__)
    write_checked(record, json.dumps({"chosen": labels[best], "labels": labels,
                                      "seconds": seconds}).encode())
    return _noted(found[best][1], Timed(labels, tuple(seconds), labels[best]))


def _remembered(record, labels: tuple) -> str | None:
    try:
        chosen = json.loads(record.read_text())["chosen"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return chosen if chosen in labels else None


def _noted(entry, timed: Timed):
    entry.autotuned = timed
    for kernel in entry.kernels:
        kernel.reason = f"{kernel.reason}; program: {timed.text()}"
    return entry


def _batch(entry, inputs, count: int, synchronize) -> float:
    start = time.perf_counter()
    for _ in range(count):
        entry.program(inputs)
    synchronize(entry)
    return time.perf_counter() - start


def _timed(entries: list, leaves, synchronize) -> list:
    """Seconds a call of each entry: the median of ROUNDS rounds, the entries in turns. A round
    times a lead batch of an entry's calls, then one of twice as many, and takes their difference
    over the added calls: the steady rate of calls, without what a batch pays once (the final
    synchronize, the first call after another program's). Each call is the program's own (its
    generated host call, a CUDA graph's launch), not jit's general path: through that (tens of
    microseconds of host time a call) a batch timed the host, and two programs of 20 and 52 us on
    an H200 timed 46 and 44 us; a batch without the lead timed a 15 us program at 23 us."""
    calls = []
    for entry in entries:
        inputs = [leaves[index] for index in entry.input_leaves]
        _batch(entry, inputs, 1, synchronize)       # loads its kernels, settles its host call
        once = max(_batch(entry, inputs, 1, synchronize), 1e-7)
        calls.append(max(1, min(MOST_CALLS, int(BATCH_SECONDS / once))))
    samples = [[] for _ in entries]
    for _ in range(ROUNDS):
        for index, entry in enumerate(entries):
            inputs = [leaves[i] for i in entry.input_leaves]
            lead = _batch(entry, inputs, calls[index], synchronize)
            both = _batch(entry, inputs, 2 * calls[index], synchronize)
            samples[index].append(max(both - lead, 0.0) / calls[index])
    return [sorted(s)[len(s) // 2] for s in samples]
