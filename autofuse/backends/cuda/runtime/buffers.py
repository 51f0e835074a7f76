"""The buffer plan of a signature's launch list: intermediates share memory by liveness.

A loop of 1,000 steps lowers to 1,000 launches, each writing a new intermediate the next one
reads. Allocated one an intermediate, a call held all 1,000 at once (1,000 x 4 MB for a 1000x1000
float32 grid). Here each intermediate takes the memory of an earlier one of the same shape and
dtype that no launch reads any more, so a call holds about as many intermediates as are live at
once (two or three for a time-stepping loop).

Rules, kept simple so the plan is plainly right:
- results and arguments are never shared (results are fresh per call; arguments are the caller's);
- an intermediate's memory is free only after the last launch that reads it, so a kernel never
  writes into memory it reads (launches of one call run in order: one stream, or a chained graph);
- memory is shared only between intermediates of the same shape and dtype (no views of raw bytes);
- a library step's result (a sort by CuPy or torch, runtime/library_sort.py) is the library's new
  array: it never takes another's memory (later intermediates may take its own once it is dead);
- a slice assignment written in place (a step's `into`: fusion/in_place.py) takes its base's
  memory, which stays taken for as long as the assignment's result is read.
"""
from __future__ import annotations


def shared_buffers(steps, results) -> dict:
    """{intermediate node id: the node id whose memory it takes} (itself where it takes new
    memory), for `steps` (runtime/program.py's CudaStep, in launch order: `params` as (node, cast),
    `outputs` as (node, shape, dtype), `always` whether it launches) and the result node ids."""
    last_read = {}
    for s, step in enumerate(steps):
        for node, _ in step.params:
            last_read[node] = s
    bases = {step.into for step in steps if getattr(step, "into", None) is not None}
    free: dict = {}                 # (shape, dtype) -> representatives whose memory is free
    ending: dict = {}               # step -> representatives freed after it
    owner = {}
    for s, step in enumerate(steps):
        into = getattr(step, "into", None)
        for node, shape, dtype in step.outputs:
            if node in results:
                continue
            key = (tuple(shape), dtype)
            if into is not None:
                owner[node] = owner.get(into, into)
            else:
                available = None if getattr(step, "library", False) else free.get(key)
                owner[node] = available.pop() if available else node
            if node not in bases:       # (a base's memory passes on to its assignment)
                ending.setdefault(max(last_read.get(node, s), s), []).append((owner[node], key))
        for representative, key in ending.pop(s, ()):
            free.setdefault(key, []).append(representative)
    return owner
