"""Slice assignments written in place: a kernel that writes only the assigned region, into the
memory of the array it assigns into.

`out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]` in a loop makes one group a step whose result
is `out` with row i replaced. Computed whole, each step copies every other row too: a loop over n
rows moves n times the array (an EWMA over 200 rows of 1000: 33 ms against NumPy's 0.6 ms), and a
chain of such assignments fused into one kernel tests every element against every link. NumPy
writes the row in place. So does a kernel here when nothing can tell the difference:

- the group is a pointwise one (elementwise or loop) whose one result is the slice assignment
  (`setslice(base, update)`), and `base` comes from another kernel;
- nothing reads `base` after this kernel (every reader is inside it), and `base` is neither an
  argument of the function (the caller's memory), nor a constant, nor a result;
- every read of `base` inside the kernel is through a slice that lies outside the written region
  (`out[i - 1]` while writing `out[i]`), or that is the region itself read element by element
  at the element written (`y[a:b] = y[a:b] * 2`): no element is read after it is written, in any
  order of the iterations, on any number of threads.

Then the result takes `base`'s memory and the kernel iterates over the update's elements only.
Backends that can write so say it with CostModel.region_updates; the partitioner then also cuts a
chain of slice assignments at each link that writes a small region (fusion/legality.py), so each
link is such a kernel.
"""
from __future__ import annotations

import math

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE
from .group import Group

POINTWISE_KINDS = ("elementwise", "loop")


def small_region(assignment: Node) -> bool:
    """Whether a slice assignment writes at most half of its base (then writing it in place
    beats copying the rest)."""
    base, update = assignment.inputs
    return 2 * update.size <= base.size


def region_base(group: Group, users: dict, results: set) -> Node | None:
    """The array whose memory `group` writes its slice assignment into, in place, or None where
    it computes its result whole (the rules in this module's docstring). `users`: node id ->
    readers (Graph.users); `results`: the ids of the function's results."""
    root = group.root
    if group.kind not in POINTWISE_KINDS or root.op != "setslice" or \
            list(group.outputs) != [root.id]:
        return None
    base, update = root.inputs
    if base.id in group.members or base.op in ("input", "constant") or base.id in results or \
            update.id == base.id:
        return None
    written = _box(root.attrs["start"], root.attrs["step"], update.shape)
    for reader in users[base.id]:
        if reader.id not in group.members:
            return None                        # read after this kernel: its memory must stay
        if reader is root:
            continue
        if reader.op != "slice":
            return None
        read = _box(reader.attrs["start"], reader.attrs["step"], reader.shape)
        if _disjoint(read, written):
            continue
        if _same_elements(reader, root) and _own_index(reader, group, users, update):
            continue
        return None
    return base


def _box(start, step, shape) -> list:
    """Per axis, the indices a slice of `shape` with `start`, `step` touches, as an increasing
    progression (lowest, step, highest) (None for an empty axis)."""
    box = []
    for a, s, n in zip(start, step, shape):
        if n == 0:
            box.append(None)
            continue
        last = a + s * (n - 1)
        box.append((min(a, last), abs(s), max(a, last)))
    return box


def _disjoint(one: list, other: list) -> bool:
    """Whether two slices touch no element in common: on some axis their indices do not meet
    (rows 1, 3, 5 of a red-black sweep against rows 0, 2, 4)."""
    return any(a is None or b is None or not _meet(a, b) for a, b in zip(one, other))


def _meet(one: tuple, other: tuple) -> bool:
    """Whether two increasing progressions (lowest, step, highest) share a value: one exists
    where the lowest values agree modulo the steps' gcd, and the least such value at or past
    both lowest values is at most both highest."""
    (low, step, high), (low2, step2, high2) = map(int, one), map(int, other)
    floor, ceiling = max(low, low2), min(high, high2)
    if floor > ceiling:
        return False
    common = math.gcd(step, step2)
    if (low2 - low) % common:
        return False
    period = step // common * step2
    inverse = pow(step // common, -1, step2 // common) if step2 // common > 1 else 0
    value = low + step * (((low2 - low) // common * inverse) % (step2 // common or 1))
    value += -((value - floor) // period) * period         # the least at or past `floor`
    return value <= ceiling


def _same_elements(read: Node, assignment: Node) -> bool:
    return read.attrs["start"] == assignment.attrs["start"] and \
        read.attrs["step"] == assignment.attrs["step"] and \
        read.shape == assignment.inputs[1].shape


def _own_index(read: Node, group: Group, users: dict, update: Node) -> bool:
    """Whether every member between `read` and the update reads it at the element it computes:
    elementwise ops that do not broadcast it and reshapes (which keep elements in order), so
    element k of the region is read only by the iteration that writes element k."""
    stack, seen = [read], {read.id}
    while stack:
        node = stack.pop()
        for user in users[node.id]:
            if user.id not in group.members or user.id in seen:
                continue
            if user.op == "setslice" and user is group.root:
                if user.inputs[1].id != node.id:
                    return False
                continue
            if not (user.op == "reshape" or (user.kind == ELEMENTWISE and user.shape == node.shape)):
                return False
            seen.add(user.id)
            stack.append(user)
    return True
