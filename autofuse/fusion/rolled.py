"""A loop simplified and partitioned once, written out for every step.

ir/periods.py cut a traced loop of K steps down to steps 0-4 and the last; that graph was then
simplified and partitioned like any other. If steps 1-4 came out the same (the same nodes,
reading the step before them the same way, in groups of the same kind and members), step 4 is
the loop's steady step: `expand` copies its nodes and groups for steps 5..K-2, joins the last
step and what follows to them, and returns the graph and fused program that simplifying and
partitioning all K steps would have given, at a cost linear in K with a small constant. Where
the steps did not come out the same (a step folded with its neighbour, a value of the first step
kept to the end), it returns None and the caller runs the whole graph through the stages.
"""
from __future__ import annotations

import re

from ..ir.graph import Graph, Node
from ..ir.periods import COPIES, REACH, Period
from .order import launch_order
from .program import Decision, FusedProgram

STEADY = COPIES - 2        # the step copied for the rest (4)
AFTER = COPIES - 1         # the last step (5); what follows the loop is COPIES (6)
_NAMED = re.compile(r"\{n(\d+)\}")     # another node a decision's reason names (program.py)


def _steps(graph: Graph, copy_of: dict, original: dict) -> dict[int, int]:
    """Each node's step: its own from ir/periods.py, or for a node the stages made, the latest
    step among what it reads (-1, before the loop, for one that reads nothing)."""
    step = {}
    for node in graph.nodes:
        found = copy_of.get(node.id)
        was = original.get(node.id)
        if found is None or not _same(node, was):
            found = max((step[s.id] for s in node.inputs), default=-1)
        step[node.id] = found
    return step


def loop_steps(graph: Graph, copy_of: dict, original: dict) -> dict[int, int]:
    """Each node's step as a kernel's span counts it (CostModel.steps): what follows the loop
    counts as its last step, whose kernels it may join."""
    return {k: min(s, AFTER) for k, s in _steps(graph, copy_of, original).items()}


def _same(a: Node, b: Node) -> bool:
    return (a.op == b.op and a.attrs == b.attrs and a.shape == b.shape and a.dtype == b.dtype
            and a.origin == b.origin and len(a.inputs) == len(b.inputs))


class _Steps:
    """The simplified steps 1..STEADY matched node by node, and how the steady step reads."""

    def __init__(self, graph: Graph, step: dict):
        self.step = step
        self.lists = {c: [n for n in graph.nodes if step[n.id] == c] for c in range(COPIES + 1)}
        self.next: dict[int, Node] = {}        # node of step c (1..STEADY-1) -> same in c + 1
        self.back: dict[int, Node] = {}        # node of step c (2..STEADY) -> same in c - 1
        self.fixed: set = set()                # nodes the steady step reads as they are

    def match(self) -> bool:
        lists = self.lists
        if any(len(lists[c]) != len(lists[STEADY]) for c in range(1, STEADY)) or not lists[STEADY]:
            return False
        for c in range(1, STEADY):
            for a, b in zip(lists[c], lists[c + 1]):
                if not _same(a, b):
                    return False
                self.next[a.id], self.back[b.id] = b, a
        return all(self._reads_alike(n, self.back[n.id]) for n in lists[STEADY]) and \
            all(self._reads_alike(n, self.back[n.id], only_near=True) for n in lists[STEADY - 1])

    def _reads_alike(self, now: Node, before: Node, only_near: bool = False) -> bool:
        """`now` (step c) reads the node `before` (step c - 1) read, one step on, or the same
        node from before the loop (then a value that does not change with the step)."""
        c = self.step[now.id]
        for x, y in zip(now.inputs, before.inputs):
            back = c - self.step[x.id]
            if 0 <= back <= REACH and self.step[x.id] >= 0:
                if self.step[y.id] != self.step[x.id] - 1:
                    return False
                if self.step[y.id] < 1:
                    if only_near:
                        continue
                    return False
                if self.next.get(y.id) is not x:
                    return False
            elif x is y:
                if not only_near:
                    self.fixed.add(x.id)
            else:
                return False
        return True

    def steady(self, node: Node) -> Node:
        """The steady step's node that `node` (of steps 1..STEADY) is the same as."""
        while self.step[node.id] < STEADY:
            node = self.next[node.id]
        return node

    def read(self, copies: list, k: int, node: Node) -> Node:
        """What step k (a copied one) reads where the steady step read `node`, a node of an
        earlier step or of none."""
        c = self.step[node.id]
        if c < 0 or node.id in self.fixed:
            return node
        return _node_at(self, copies, k - (STEADY - c), self.steady(node))

    def earlier(self, node: Node, steps: int) -> Node:
        """The node `steps` steps before `node` (which is in the steady step)."""
        for _ in range(steps):
            node = self.back[node.id]
        return node


def expand(graph: Graph, fused: FusedProgram, copy_of: dict, original: dict, period: Period):
    """The whole loop's (graph, fused program) from the cut-down one's, or None (see above).
    `copy_of`: each node id of the cut-down graph before the stages -> its step; `original`: id
    -> that node (the stages may give a new node an id they dropped)."""
    steps = _Steps(graph, _steps(graph, copy_of, original))
    if not steps.match():
        return None
    step, repeats = steps.step, period.repeats
    template = steps.lists[STEADY]
    next_id = max(n.id for n in graph.nodes) + 1
    copies: list[dict] = []                    # for steps STEADY + 1 ..: template id -> node

    # each input of each steady node as (steps back, the steady node it is there), or the node
    # itself where it is read as it is
    recipes = [(node, tuple((STEADY - step[x.id], steps.steady(x)) if step[x.id] >= 0 and
                            x.id not in steps.fixed else (None, x) for x in node.inputs))
               for node in template]
    for k in range(STEADY + 1, repeats - 1):
        made: dict[int, Node] = {}
        copies.append(made)
        for node, recipe in recipes:
            inputs = tuple(x if back is None else made[x.id] if back == 0 else
                           copies[k - back - STEADY - 1][x.id] if k - back > STEADY else
                           steps.earlier(x, STEADY - k + back)
                           for back, x in recipe)
            made[node.id] = Node(next_id, node.op, inputs, node.attrs, node.shape, node.dtype,
                                 node.origin)
            next_id += 1
    tail: dict[int, Node] = {}

    def at_end(node: Node) -> Node | None:
        """A node as the last step and what follows read it."""
        c = step[node.id]
        if c >= AFTER:
            return tail[node.id]
        if c == STEADY or c == STEADY - 1:
            return _node_at(steps, copies, repeats - 1 - (AFTER - c), steps.steady(node))
        return node if (c < 0 or node.id in steps.fixed) else None

    for node in graph.nodes:
        if step[node.id] >= AFTER:
            inputs = tuple(at_end(x) for x in node.inputs)
            if None in inputs:
                return None
            tail[node.id] = Node(node.id, node.op, inputs, node.attrs, node.shape, node.dtype,
                                 node.origin)
    outputs = tuple(at_end(n) for n in graph.outputs)
    if None in outputs:
        return None
    head = [n for n in graph.nodes if step[n.id] <= STEADY]
    nodes = head + [n for made in copies for n in made.values()] + list(tail.values())
    whole = Graph(nodes, graph.inputs, outputs, graph.name)
    groups = _groups(fused, step, steps, copies, at_end)
    if groups is None:
        return None
    order = {node.id: i for i, node in enumerate(nodes)}
    for index, group in enumerate(groups):
        group.id = index
    groups = launch_order(groups, order)
    for index, group in enumerate(groups):
        group.id = index
    decisions = _decisions(fused, step, steps, copies, at_end)
    if decisions is None:
        return None
    return whole, FusedProgram(whole, groups, _in_order(decisions, groups, order), fused.cost)


def _groups(fused: FusedProgram, step: dict, steps: _Steps, copies: list, at_end) -> list | None:
    """The cut-down program's groups, the steady step's copied for each copied step and the last
    step's and what follows moved onto the copies; None where steps 3 and 4 were not grouped
    alike."""
    home = {g.id: max((step[n] for n in g.members), default=-1) for g in fused.groups}
    steady = [g for g in fused.groups if home[g.id] == STEADY]
    before = [g for g in fused.groups if home[g.id] == STEADY - 1]
    if len(steady) != len(before) or not all(
            _grouped_alike(a, b, step, steps) for a, b in zip(before, steady)):
        return None
    groups = [g for g in fused.groups if home[g.id] <= STEADY]
    for k, made in enumerate(copies, start=STEADY + 1):
        def node_for(node, k=k, made=made):
            return made[node.id] if step[node.id] == STEADY else steps.read(copies, k, node)
        groups.extend(g.copied(g.id, node_for) for g in steady)
    for group in fused.groups:
        if home[group.id] > STEADY:
            moved = [at_end(n) for n in (*group.nodes, *group.inputs)]
            if None in moved:
                return None
            groups.append(group.copied(group.id, at_end))
    return groups


def _node_at(steps: _Steps, copies: list, k: int, node: Node) -> Node:
    if k <= STEADY:
        return steps.earlier(node, STEADY - k)
    return copies[k - STEADY - 1][node.id]


def _grouped_alike(before, now, step: dict, steps: _Steps) -> bool:
    """Whether group `now` (the steady step's) holds, one step on, what `before` holds."""
    if before.kind != now.kind or len(before.nodes) != len(now.nodes) or \
            len(before.inputs) != len(now.inputs) or len(before.outputs) != len(now.outputs):
        return False

    def alike(a: Node, b: Node) -> bool:
        if a is b:
            return step[a.id] < 0 or a.id in steps.fixed
        return steps.next.get(a.id) is b

    return (all(alike(a, b) and before.indices[a.id] == now.indices[b.id]
                and before.nesting[a.id] == now.nesting[b.id]
                for a, b in zip(before.nodes, now.nodes))
            and all(alike(a, b) for a, b in zip(before.inputs, now.inputs))
            and all(alike(a, b) for a, b in zip(before.outputs.values(), now.outputs.values())))


def _decisions(fused: FusedProgram, step: dict, steps: _Steps, copies: list, at_end) -> list:
    """The not-fused decisions, those of the steady step made again for each copied step (with
    the other nodes their reasons name, {n<id>}, moved to that step too)."""
    by_id = {node.id: node for node in fused.graph.nodes}

    def moved(decision: Decision, node_for, named) -> Decision | None:
        """The decision in another step; None where its reason names a node of a step that
        has no copy there (a later step: the text would name the wrong node)."""
        names = [by_id[int(i)] for i in _NAMED.findall(decision.reason)]
        if not all(named(node) for node in names):
            return None
        reason = _NAMED.sub(lambda m: "{n%d}" % node_for(by_id[int(m.group(1))]).id,
                            decision.reason)
        return Decision(node_for(decision.producer), node_for(decision.consumer), reason)

    def steady_or_before(node) -> bool:
        return 1 <= step[node.id] <= STEADY or step[node.id] < 0 or node.id in steps.fixed

    found = []
    for decision in fused.decisions:
        c = step[decision.consumer.id]
        if c > STEADY:
            found.append(moved(decision, at_end, lambda node: at_end(node) is not None))
            continue
        found.append(decision)
        if c == STEADY:
            for k, made in enumerate(copies, start=STEADY + 1):
                found.append(moved(decision, lambda node, k=k, made=made: made[node.id]
                                   if step[node.id] == STEADY else steps.read(copies, k, node),
                                   steady_or_before))
    return None if None in found else found


def _in_order(decisions: list, groups: list, order: dict) -> list:
    """Decisions as partition lists them: producers last-placed first, then the launch order of
    the group that reads the value without holding it."""
    holders: dict[int, list] = {}
    for group in groups:
        for node_id in group.members:
            holders.setdefault(node_id, []).append(group)
    taken: dict = {}

    def key(decision: Decision) -> tuple:
        p, c = decision.producer.id, decision.consumer.id
        readers = [g.id for g in holders.get(c, ()) if p not in g.members]
        k = taken[p, c] = taken.get((p, c), -1) + 1
        return -order[p], readers[min(k, len(readers) - 1)] if readers else -1

    return sorted(decisions, key=key)
