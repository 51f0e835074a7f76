"""A traced loop found again in its unrolled graph, and the graph cut down to a few of its steps.

Tracing runs the user's Python loop, so a loop of K steps arrives as K copies of one step's
nodes, each reading the step before it. Simplifying and partitioning all K copies costs time
linear in K for work that is the same in every step. `find_period` finds such a run of copies
(same ops, attributes, shapes, dtypes and source lines; every input either the same node or the
node one step before the one the previous copy read), and `shorten` keeps the nodes before the
run, its first `COPIES - 1` steps, its last step and the nodes after it, so that later stages
work on that and fusion/rolled.py writes the result out for every step.

Only the shape of the graph is compared here; whether the cut-down graph simplifies and
partitions the same way in every step is checked after those stages, by fusion/rolled.py.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .graph import Graph, Node

COPIES = 6             # steps kept: 0-4 as traced, then the last (4 is the one copied for the rest)
MIN_REPEATS = 12       # fewer steps are simplified and partitioned as they are
REACH = 2              # the last step and what follows may read the last REACH + 1 steps only
GROUPINGS = (1, 2, 3, 4)   # traced steps taken as one step, tried in turn (stages.roll)
MIN_GROUPED = COPIES + 2   # steps of several traced steps each, at least


@dataclass(frozen=True)
class Period:
    start: int          # position (in graph.nodes) of the first node of the first step
    length: int         # nodes a step
    repeats: int        # steps
    held: int = 0       # steps a kernel may span, where that bound made the steps alike; 0: none

    @property
    def end(self) -> int:
        return self.start + self.length * self.repeats

    def grouped(self, steps: int) -> "Period | None":
        """The run taken `steps` traced steps at a time (the rest of them after it), or None
        where too few such steps remain."""
        if steps == 1:
            return self
        repeats = self.repeats // steps
        return Period(self.start, self.length * steps, repeats) if repeats >= MIN_GROUPED else None


def _token(node: Node, interned: dict) -> int:
    key = (node.op, node.attrs, node.shape, node.dtype.str, node.origin, len(node.inputs))
    found = interned.get(key)
    if found is None:
        found = interned[key] = len(interned)
    return found


def _candidate_lengths(tokens: list, min_repeats: int) -> list:
    """Step lengths worth trying: the usual distance from the most frequent node to its next, 2nd
    next, ... occurrence, up to as many as a step can hold of it (a loop inside the loop repeats
    it within the step)."""
    token, count = Counter(tokens).most_common(1)[0]
    if count < min_repeats:
        return []
    places = [i for i, t in enumerate(tokens) if t == token]
    found = set()
    for apart in range(1, min(count // min_repeats, 16) + 1):
        if len(places) > apart:
            gaps = Counter(places[i + apart] - places[i] for i in range(len(places) - apart))
            found.add(gaps.most_common(1)[0][0])
    return sorted(found)


def _longest_run(tokens: np.ndarray, length: int) -> tuple[int, int]:
    """(start, size) of the longest stretch where tokens[i] == tokens[i + length]."""
    equal = np.concatenate(([0], (tokens[:-length] == tokens[length:]).view(np.int8), [0]))
    edges = np.flatnonzero(np.diff(equal))
    if edges.size == 0:
        return 0, 0
    starts, ends = edges[0::2], edges[1::2]
    best = int(np.argmax(ends - starts))
    return int(starts[best]), int(ends[best] - starts[best])


def _agrees(nodes: tuple, position: dict, base: int, length: int, first: int) -> bool:
    """Whether the step at `base` reads as the step before it does: each input is the node
    `length` places after the one the step before read, or the same node from before `first`."""
    for i in range(length):
        now, before = nodes[base + i], nodes[base - length + i]
        for x, y in zip(now.inputs, before.inputs):
            at, was = position[x.id], position[y.id]
            if not (at == was + length or (x is y and was < first)):
                return False
    return True


def _longest_chain(nodes: tuple, position: dict, start: int, length: int,
                   repeats: int) -> tuple[int, int]:
    """(first step, steps) of the longest run of steps that each read as the step before them
    (the first step of a loop often reads its starting values from elsewhere)."""
    best, first = (0, 1), 0
    for step in range(1, repeats):
        if not _agrees(nodes, position, start + step * length, length, start + first * length):
            first = step
        if step - first + 1 > best[1]:
            best = (first, step - first + 1)
    return best


def find_period(graph: Graph, min_repeats: int = MIN_REPEATS) -> Period | None:
    """The longest run of at least `min_repeats` identical steps in `graph`, or None."""
    nodes = graph.nodes
    if len(nodes) < 2 * min_repeats:
        return None
    interned: dict = {}
    tokens = [_token(node, interned) for node in nodes]
    array = np.array(tokens, dtype=np.int64)
    best = None
    for length in _candidate_lengths(tokens, min_repeats):
        start, size = _longest_run(array, length)
        repeats = size // length + 1
        if repeats >= min_repeats and (best is None or repeats * length > best.repeats * best.length):
            best = Period(start, length, repeats)
    if best is None:
        return None
    position = {node.id: i for i, node in enumerate(nodes)}
    first, repeats = _longest_chain(nodes, position, best.start, best.length, best.repeats)
    if repeats < min_repeats:
        return None
    return Period(best.start + first * best.length, best.length, repeats)


def shorten(graph: Graph, period: Period) -> tuple[Graph, dict] | None:
    """The graph with the run cut to its first COPIES - 1 steps and its last, and each kept node's
    step there (-1 before the run, COPIES after it); None where the last step or what follows
    reads a step further back than REACH steps before the last."""
    nodes, start, length, repeats = graph.nodes, period.start, period.length, period.repeats
    kept_end = start + (COPIES - 1) * length
    last = period.end - length
    position = {node.id: i for i, node in enumerate(nodes)}
    copy_of: dict[int, int] = {}
    for i in range(kept_end):
        copy_of[nodes[i].id] = -1 if i < start else (i - start) // length
    mapping: dict[int, Node] = {}

    def moved(node: Node) -> Node | None:
        at = position[node.id]
        if at < start:
            return node
        if at >= last:
            return mapping[node.id]
        step, offset = divmod(at - start, length)
        back = repeats - 1 - step
        if back > REACH:
            return None
        return nodes[start + (COPIES - 1 - back) * length + offset]

    result = list(nodes[:kept_end])
    for i in range(last, len(nodes)):
        node = nodes[i]
        inputs = tuple(moved(source) for source in node.inputs)
        if None in inputs:
            return None
        new = Node(node.id, node.op, inputs, node.attrs, node.shape, node.dtype, node.origin)
        mapping[node.id] = new
        copy_of[node.id] = COPIES - 1 if i < period.end else COPIES
        result.append(new)
    outputs = tuple(moved(node) for node in graph.outputs)
    if None in outputs:
        return None
    return Graph(result, graph.inputs, outputs, graph.name), copy_of
