"""The work a kernel does per element once recompute through index maps is expanded.

A kernel computes a member once for every distinct index it is read at: `u[2:] + u[:-2]` computes
u twice, and whatever u was recomputing, twice again. An index is a path of index maps from the
kernel's own index (a slice of a transpose of ...); paths are interned as small ints, 0 being the
kernel's own index, so a member's evaluations are a set of ints and the kernel's work their count.
"""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, SCAN

OWN_INDEX = 0


def index_map(reader: Node, position: int):
    """How `reader` indexes its input at `position`: None where it reads at its own index."""
    source = reader.inputs[position]
    if reader.kind == ELEMENTWISE:
        return None if source.shape == reader.shape else ("broadcast", source.shape, reader.shape)
    if reader.kind == SCAN or (reader.op == "setslice" and position == 0) \
            or (reader.op == "gather" and position > 0):
        return None
    return (reader.op, reader.attrs, reader.shape, position)


class IndexPaths:
    """Interns index paths: `extend(path, map)` is the id of `path` followed by `map`."""

    def __init__(self):
        self._ids: dict = {}

    def extend(self, path: int, step) -> int:
        if step is None:
            return path
        key = (path, step)
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._ids) + 1
        return found


def branches(reader: Node) -> int:
    """How many if/else levels `reader` renders its operands inside (backends/render.py): one
    for a slice assignment, one for each piece of a concatenation but the last."""
    if reader.op == "setslice":
        return 1
    if reader.op == "concatenate":
        return len(reader.inputs) - 1
    return 0


def nesting(readers) -> int:
    """How deep a member's code sits in branches, given `readers` as (reader, its nesting) pairs
    of the members that read it."""
    return max((depth + branches(reader) for reader, depth in readers), default=0)


def evaluations(node: Node, readers, paths: IndexPaths, stored: bool, limit: int) -> frozenset:
    """The indices a kernel computes `node` at, given `readers` as (reader, its indices) pairs of
    the members that read it; `stored`: the kernel also writes it at its own index. Stops growing
    past `limit` (the caller refuses such a kernel anyway)."""
    found = {OWN_INDEX} if stored or not readers else set()
    for reader, indices in readers:
        for position, source in enumerate(reader.inputs):
            if source.id != node.id:
                continue
            step = index_map(reader, position)
            for index in indices:
                found.add(paths.extend(index, step))
                if len(found) > limit:
                    return frozenset(found)
    return frozenset(found)

