"""The work a kernel does per element once recompute through index maps is expanded.

A kernel computes a member once for every distinct index it is read at: `u[2:] + u[:-2]` computes
u twice, and whatever u was recomputing, twice again. An index is a path of index maps from the
kernel's own index (a slice of a transpose of ...); paths are interned as small ints, 0 being the
kernel's own index, so a member's evaluations are a set of ints and the kernel's work their count.
"""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, REDUCE, SCAN, SCATTER

OWN_INDEX = 0


def index_map(reader: Node, position: int):
    """How `reader` indexes its input at `position`: None where it reads at its own index."""
    source = reader.inputs[position]
    if reader.kind == ELEMENTWISE or reader.op == "broadcast_to":
        # NOTE: np.broadcast_to and an operator's implicit broadcast are one map (the gradient of
        # a broadcast reads a per-row value both ways): one key, so it is computed once.
        return None if source.shape == reader.shape else ("broadcast", source.shape, reader.shape)
    if reader.kind == SCATTER:
        # NOTE: a scatter kernel's own index is a value's (fusion/scatter.py): values are read
        # there, indices at its first coordinate, the base (a fill) over the base's shape.
        if position == 2 or (position == 1 and source.shape == reader.inputs[2].shape):
            return None
        return ("scatter", position, reader.inputs[2].shape)
    if reader.kind == SCAN or (reader.op == "setslice" and position == 0) \
            or (reader.op == "gather" and position > 0):
        return None
    if reader.op == "reshape" and _drop_ones(source.shape) == _drop_ones(reader.shape):
        return ("units", source.shape, reader.shape)
    if reader.kind == REDUCE and tuple(reader.attrs.get("axes", ())) == \
            tuple(range(len(source.shape) - len(reader.attrs.get("axes", ())), len(source.shape))):
        return ("rows", source.shape, reader.shape)
    return (reader.op, reader.attrs, reader.shape, position)


def _drop_ones(shape: tuple) -> tuple:
    return tuple(extent for extent in shape if extent != 1)


def _projected(axes: tuple, step) -> tuple | None:
    """The kernel axes each axis of a value reads (None: a fixed 0) after one more broadcast or
    unit-axis reshape `step`, given `axes` for its reader; None for any other map."""
    kind, source, reader = step[0], step[1], step[2]
    if kind == "broadcast":
        offset = len(reader) - len(source)
        return tuple(None if extent == 1 and reader[i + offset] != 1 else axes[i + offset]
                     for i, extent in enumerate(source))
    if kind == "units":
        kept = iter(axis for axis, extent in zip(axes, reader) if extent != 1)
        return tuple(None if extent == 1 else next(kept) for extent in source)
    if kind == "rows" and axes == tuple(range(len(axes))):
        return tuple(range(len(source)))       # a row read where its result is: its own rows
    return None


class IndexPaths:
    """Interns index paths: `extend(path, map)` is the id of `path` followed by `map`.

    A path of broadcasts and unit-axis reshapes only reads a value at the kernel index's leading
    or other axes: such paths are keyed by the axes they read, so `x.max(-1)` read back through
    `reshape` then `broadcast_to` and through an operator's broadcast is one index, not two (a
    gradient reads its per-row values every such way); reading the leading axes in order is the
    kernel's own index (a per-row value of a rows kernel, stored at its row)."""

    def __init__(self):
        self._ids: dict = {}
        self._axes: dict[int, tuple] = {}       # path id -> the kernel axes it reads

    def extend(self, path: int, step) -> int:
        if step is None:
            return path
        key = (path, step)
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = self._projection(path, step)
        return found

    def _projection(self, path: int, step) -> int:
        axes = self._axes.get(path)
        if axes is None and path == OWN_INDEX and step[0] in ("broadcast", "units", "rows"):
            axes = tuple(range(len(step[2])))
        projected = None if axes is None else _projected(axes, step)
        if projected is None:
            return len(self._ids) + 1 + len(self._axes)
        kept = tuple(axis for axis in projected if axis is not None)
        if kept == tuple(range(len(kept))):
            return OWN_INDEX
        found = self._ids.get(("axes", projected))
        if found is None:
            found = self._ids[("axes", projected)] = len(self._ids) + 1 + len(self._axes)
            self._axes[found] = projected
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

