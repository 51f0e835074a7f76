"""partition(graph) -> FusedProgram: XLA-style producer-into-consumer fusion by a cost model.

Nodes are visited consumers first. A node joins the group of its consumers when the legality table
allows it; a pointwise node read by several groups is recomputed in each when the cost model says
so; otherwise compatible consumer groups are merged (multi-output fusion) so that it can join them;
failing all that it is materialized as the root of a new group, and the reason is recorded.
"""
from __future__ import annotations

from ..ir.graph import Graph, Node
from .cost import DEFAULT, CostModel, pointwise, recompute_reason
from .group import Group
from .legality import can_fuse, merge_reason, readers_in
from .order import launch_order, path_outside
from .spans import Spans
from .program import Decision, FusedProgram
from .work import IndexPaths, evaluations, nesting

# How many recent groups reading one value a group tries to merge with (horizontal fusion), and
# how many passes over all values it makes: both bound the work on programs of many groups.
SIBLING_WINDOW = 4
SIBLING_PASSES = 3
CYCLE = "a value leaves one of them and comes back through another kernel"


def _free(node: Node) -> bool:
    """Nodes that never get a group: inputs, and constants (0-d ones are inlined, others read)."""
    return node.op in ("input", "constant")


class Partitioner:
    def __init__(self, graph: Graph, cost: CostModel):
        self.graph = graph
        self.cost = cost
        self.users = graph.users()
        self.order = {node.id: index for index, node in enumerate(graph.nodes)}
        self.outputs = {node.id for node in graph.outputs}
        self.groups: dict[int, Group] = {}            # by id, in the order they were made
        self._next_id = 0
        self.groups_of: dict[int, list[Group]] = {}
        self.merged_into: dict[int, int] = {}         # id of a group merged away -> its target
        self.reasons: dict[tuple, str] = {}           # (producer id, reader id) -> why stored
        self.paths = IndexPaths()
        self.spans = Spans(len(graph.nodes))
        self.extent: dict[int, tuple] = {}           # group id -> (first, last) member position

    def run(self) -> FusedProgram:
        for node in reversed(self.graph.nodes):
            if not _free(node):
                self.place(node)
        self.merge_siblings()
        return self.finish()

    def merge_siblings(self) -> None:
        """Horizontal fusion: groups that read a common value over one iteration space become one
        kernel, so the value is read once (x.mean(0) and x.var(0); several results of x)."""
        for _ in range(SIBLING_PASSES):
            readers: dict[int, list[int]] = {}
            for group in self.groups.values():
                for value in self.reads(group):
                    readers.setdefault(value, []).append(group.id)
            merged = False
            # NOTE: a pair refused stays refused while neither group changes (a merge makes a new
            # Group object): a loop's sweeps share several read values (a coefficient, a zeros
            # base) and would otherwise try the same pairs once for each.
            refused: set = set()
            for group_ids in readers.values():
                recent: list[int] = []
                for group_id in group_ids:
                    current = self.surviving(group_id)
                    for other in recent:
                        pair = [self.groups[other], self.groups[current]]
                        key = (id(pair[0]), id(pair[1]))
                        if other == current or key in refused:
                            continue
                        if self.try_merge(pair, cycle_first=True)[0] is not None:
                            current, merged = self.surviving(current), True
                            break
                        refused.add(key)
                    recent = [self.surviving(i) for i in recent]
                    recent = [i for i in dict.fromkeys(recent) if i != current] + [current]
                    recent = recent[-SIBLING_WINDOW:]
            if not merged:
                return

    def surviving(self, group_id: int) -> int:
        """The group that `group_id` was merged into, through any number of merges."""
        found = group_id
        while found in self.merged_into:
            found = self.merged_into[found]
        if found != group_id:
            self.merged_into[group_id] = found       # later look-ups take one step
        return found

    @staticmethod
    def reads(group: Group) -> list:
        found = {}
        for node in group.members.values():
            for source in node.inputs:
                if source.id not in group.members and source.ndim > 0:
                    found[source.id] = True
        return list(found)

    # -- one node ------------------------------------------------------------------------------
    def consumer_groups(self, node: Node) -> list[Group]:
        found = {}
        for user in self.users[node.id]:
            for group in self.groups_of.get(user.id, ()):
                found[group.id] = group
        return [found[k] for k in sorted(found)]

    def indices_in(self, node: Node, group: Group, stored: bool) -> frozenset:
        """The indices `group` would compute `node` at (its readers there are placed)."""
        readers = [(r, group.indices[r.id]) for r in readers_in(node, group, self.users)]
        return evaluations(node, readers, self.paths, stored, self.cost.max_work)

    def depth_in(self, node: Node, group: Group) -> int:
        """The branch levels `group` would compute `node` inside (its readers there are placed)."""
        return nesting((r, group.nesting[r.id]) for r in readers_in(node, group, self.users))

    def place(self, node: Node) -> None:
        groups = self.consumer_groups(node)
        is_output = node.id in self.outputs
        if not groups:
            self.new_group(node)
            return
        indices = {g.id: self.indices_in(node, g, is_output) for g in groups}
        depths = {g.id: self.depth_in(node, g) for g in groups}
        reasons = {g.id: can_fuse(node, g, self.users, is_output, self.cost, indices[g.id],
                                  depths[g.id]) for g in groups}
        if len(groups) == 1:
            if reasons[groups[0].id] is None:
                self.join(node, groups[0], indices[groups[0].id], depths[groups[0].id])
            else:
                self.materialize(node, groups, reasons)
            return
        if not is_output and all(r is None for r in reasons.values()):
            counts = [len(indices[g.id]) for g in groups]
            why_not = recompute_reason(node, counts, self.cost)
            if why_not is None:
                for group in groups:
                    self.join(node, group, indices[group.id], depths[group.id])
                return
            if pointwise(node):
                reasons = {g.id: why_not for g in groups}
        merged, why = self.try_merge(groups)
        if merged is not None:
            merged_indices = self.indices_in(node, merged, is_output)
            merged_depth = self.depth_in(node, merged)
            reason = can_fuse(node, merged, self.users, is_output, self.cost, merged_indices,
                              merged_depth)
            if reason is None:
                self.join(node, merged, merged_indices, merged_depth)
                return
            reasons = {merged.id: reason}
            groups = [merged]
        elif all(r is None for r in reasons.values()):
            text = (f"{{p}} is read by {len(groups)} groups that cannot be merged into one kernel "
                    f"({why}), and recomputing it in each is not worth it")
            reasons = {g.id: text for g in groups}
        if not pointwise(node) and self.join_one(node, groups, reasons, indices, depths):
            return
        self.materialize(node, groups, reasons)

    def join_one(self, node: Node, groups: list[Group], reasons: dict, indices: dict,
                 depths: dict) -> bool:
        """A value computed once (a product, a reduction) that its consumer groups cannot share
        joins the one that may hold it (the most of its readers) and is stored there for the
        others: its own kernel would write it too, and that reader would read it back. False
        where none may, or joining would make a cycle."""
        legal = [g for g in groups if reasons.get(g.id) is None and g.id in indices]
        legal.sort(key=lambda g: -len(readers_in(node, g, self.users)))
        for group in legal:
            trial = self.combined([group], group)
            trial.add(node)
            if path_outside([trial], self.users, self.order, self.groups_of, self.spans.reach):
                continue
            text = ("{p} is computed once, in the kernel of another of its readers, and stored "
                    "for this one")
            for other in groups:
                if other is not group:
                    for user in readers_in(node, other, self.users):
                        self.reasons.setdefault((node.id, user.id), reasons.get(other.id) or text)
            self.join(node, group, indices[group.id], depths[group.id])
            return True
        return False

    def new_group(self, node: Node) -> Group:
        # NOTE: ids must stay unique after merges remove groups (consumer_groups keys on them).
        group = Group(self._next_id, node)
        self._next_id += 1
        self.groups[group.id] = group
        self.groups_of.setdefault(node.id, []).append(group)
        self.stretch(group.id, self.order[node.id], self.order[node.id])
        return group

    def join(self, node: Node, group: Group, indices: frozenset, depth: int = 0) -> None:
        group.add(node, indices, depth)
        self.groups_of.setdefault(node.id, []).append(group)
        self.stretch(group.id, self.order[node.id], self.order[node.id])

    def stretch(self, group_id: int, first: int, last: int) -> None:
        """Group `group_id` now also covers positions `first`..`last` (spans.py)."""
        old = self.extent.get(group_id)
        if old is not None:
            first, last = min(first, old[0]), max(last, old[1])
            if (first, last) == old:
                return
        self.extent[group_id] = (first, last)
        self.spans.record(first, last)

    def materialize(self, node: Node, groups: list[Group], reasons: dict) -> None:
        """Make `node` the root of a new group; record why each reader's group does not hold it."""
        fallback = ("{p} could join this group, but another reader's group cannot take it, so "
                    "it is computed once and stored for all its readers")
        for group in groups:
            for user in readers_in(node, group, self.users):
                self.reasons.setdefault((node.id, user.id), reasons.get(group.id) or fallback)
        self.new_group(node)

    # -- multi-output fusion of consumer groups ------------------------------------------------
    def try_merge(self, groups: list[Group], cycle_first: bool = False,
                  ) -> tuple[Group | None, str | None]:
        """Merge groups into one when the legality table allows every edge the merge makes
        internal and no cycle forms: (the merged group, None), else (None, why not).
        `cycle_first`: look for the cycle once the edges pass, before counting the merged
        group's indices (sibling merges, whose reason nobody reads: a loop's sweeps two steps
        apart pass every edge and would each be counted before the cycle refused them)."""
        target = next((g for g in groups if g.reduce_space is not None), groups[0])
        cycle = (lambda: CYCLE if path_outside(groups, self.users, self.order, self.groups_of,
                                               self.spans.reach)
                 else None) if cycle_first else None
        refusal, trial = merge_reason(groups, lambda: self.combined(groups, target),
                                      self.count_indices, self.users, self.outputs, self.cost,
                                      cycle)
        if refusal is None and not cycle_first and \
                path_outside(groups, self.users, self.order, self.groups_of, self.spans.reach):
            refusal = CYCLE
        if refusal is not None:
            return None, refusal
        for group in groups:
            if group is not target:
                self.merged_into[group.id] = target.id
                del self.groups[group.id]
        self.groups[target.id] = trial
        for group in groups:
            self.stretch(target.id, *self.extent[group.id])
        replaced = {g.id for g in groups}
        for node_id in trial.members:
            owners = self.groups_of[node_id]
            kept = []
            for owner in owners:
                if owner.id not in replaced:
                    kept.append(owner)
                elif trial not in kept:
                    kept.append(trial)
            owners[:] = kept
        return trial, None

    def combined(self, groups: list[Group], target: Group) -> Group:
        """The group `groups` would be as one kernel (with `target`'s id and root), its members
        at their own index until count_indices() counts them."""
        trial = Group(target.id, target.root)
        members = {}
        for group in groups:
            members.update(group.members)
        for node in sorted(members.values(), key=lambda n: self.order[n.id]):
            trial.add(node)
        return trial

    def count_indices(self, trial: Group) -> None:
        """Each member's indices counted again, readers first."""
        ordered = sorted(trial.members.values(), key=lambda n: self.order[n.id])
        for node in reversed(ordered):
            readers = readers_in(node, trial, self.users)
            stored = node.id in self.outputs or len(self.users[node.id]) > len(readers)
            trial.add(node, self.indices_in(node, trial, stored), self.depth_in(node, trial))

    # -- the result ----------------------------------------------------------------------------
    def finish(self) -> FusedProgram:
        groups = list(self.groups.values())
        for group in groups:
            group.finish(self.order, {n for n in group.members if self.stored_by(n, group)})
        groups = launch_order(groups, self.order)
        for index, group in enumerate(groups):
            group.id = index
        return FusedProgram(self.graph, groups, self.decisions(), self.cost)

    def decisions(self) -> list[Decision]:
        """One decision per value and group that reads it without holding it, from the final
        groups (so the text never calls an edge inside a kernel "not fused"); producers in the
        order they were placed, groups in launch order."""
        found = []
        for node in reversed(self.graph.nodes):
            if _free(node):
                continue
            crossing = {}
            for user in self.users[node.id]:
                for group in self.groups_of.get(user.id, ()):
                    if node.id not in group.members and group.id not in crossing:
                        crossing[group.id] = user
            for group_id in sorted(crossing):
                user = crossing[group_id]
                reason = self.reasons.get((node.id, user.id), "{p} is computed by another kernel")
                found.append(Decision(node, user, reason))
        return found

    def stored_by(self, node_id: int, group: Group) -> bool:
        """Whether `group` writes this member to memory: it is a result of the function, or some
        reader computes in a group that does not hold it (a reader recomputed in several groups
        counts in each). One owner stores a recomputed node."""
        owners = self.groups_of[node_id]
        if owners[0] is not group:
            return False
        if node_id in self.outputs:
            return True
        return any(self._read_outside(node_id, self.groups_of.get(user.id, ()))
                   for user in self.users[node_id])

    @staticmethod
    def _read_outside(node_id: int, reader_groups) -> bool:
        return not reader_groups or any(node_id not in g.members for g in reader_groups)


def partition(graph: Graph, cost: CostModel = DEFAULT) -> FusedProgram:
    """The fusion groups of a simplified graph, in launch order, with every decision explained."""
    return Partitioner(graph, cost).run()
