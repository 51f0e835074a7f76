"""partition(graph) -> FusedProgram: XLA-style producer-into-consumer fusion by a cost model.

Nodes are visited consumers first. A node joins the group of its consumers when the legality table
allows it; a pointwise node read by several groups is recomputed in each when the cost model says
so; otherwise compatible consumer groups are merged (multi-output fusion) so that it can join them;
failing all that it is materialized as the root of a new group, and the reason is recorded.
"""
from __future__ import annotations

from ..ir.graph import Graph, Node
from ..ir.ops import LAYOUT
from .cost import DEFAULT, CostModel, mib, recompute_wins
from .group import Group
from .legality import can_fuse, merged_reason
from .program import Decision, FusedProgram


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
        self.groups: list[Group] = []
        self._next_id = 0
        self.groups_of: dict[int, list[Group]] = {}
        self.decisions: list[Decision] = []

    def run(self) -> FusedProgram:
        for node in reversed(self.graph.nodes):
            if not _free(node):
                self.place(node)
        self.merge_siblings()
        return self.finish()

    def merge_siblings(self) -> None:
        """Horizontal fusion: groups that read a common value over one iteration space become one
        kernel, so the value is read once (x.mean(0) and x.var(0); several results of x)."""
        merged = True
        while merged:
            merged = False
            for a_index, a in enumerate(self.groups):
                reads_a = self.reads(a)
                for b in self.groups[a_index + 1:]:
                    if reads_a & self.reads(b) and self.try_merge([a, b]) is not None:
                        merged = True
                        break
                if merged:
                    break

    def reads(self, group: Group) -> set:
        return {source.id for node in group.members.values() for source in node.inputs
                if source.id not in group.members and source.ndim > 0}

    # -- one node ------------------------------------------------------------------------------
    def consumer_groups(self, node: Node) -> list[Group]:
        found = {}
        for user in self.users[node.id]:
            for group in self.groups_of.get(user.id, ()):
                found[group.id] = group
        return [found[k] for k in sorted(found)]

    def place(self, node: Node) -> None:
        groups = self.consumer_groups(node)
        is_output = node.id in self.outputs
        if not groups:
            self.new_group(node)
            return
        reasons = {g.id: can_fuse(node, g, self.users, is_output, self.cost) for g in groups}
        if len(groups) == 1:
            if reasons[groups[0].id] is None:
                self.join(node, groups[0])
            else:
                self.materialize(node, groups, reasons)
            return
        if not is_output and all(r is None for r in reasons.values()):
            wins, recomputed, materialized = recompute_wins(node, len(groups), self.cost)
            if wins:
                for group in groups:
                    self.join(node, group)
                return
            if _pointwise(node):
                text = (f"{{p}} is read by {len(groups)} groups; computing it once and storing it "
                        f"({mib(materialized)} moved) costs less than recomputing it in each "
                        f"({mib(recomputed)})")
                reasons = {g.id: text for g in groups}
        merged = self.try_merge(groups)
        if merged is not None:
            reason = can_fuse(node, merged, self.users, is_output, self.cost)
            if reason is None:
                self.join(node, merged)
                return
            reasons = {merged.id: reason}
            groups = [merged]
        elif all(r is None for r in reasons.values()):
            text = (f"{{p}} is read by {len(groups)} groups that cannot be merged into one kernel, "
                    f"and recomputing it in each is not worth it")
            reasons = {g.id: text for g in groups}
        self.materialize(node, groups, reasons)

    def new_group(self, node: Node) -> Group:
        # NOTE: ids must stay unique after merges remove groups (consumer_groups keys on them).
        group = Group(self._next_id, node)
        self._next_id += 1
        self.groups.append(group)
        self.groups_of.setdefault(node.id, []).append(group)
        return group

    def join(self, node: Node, group: Group) -> None:
        group.add(node)
        self.groups_of.setdefault(node.id, []).append(group)

    def materialize(self, node: Node, groups: list[Group], reasons: dict) -> None:
        for group in groups:
            for user in self.users[node.id]:
                if user.id in group.members:
                    reason = reasons.get(group.id) or (
                        "{p} could join this group, but another reader's group cannot take it, so "
                        "it is computed once and stored for all its readers")
                    self.decisions.append(Decision(node, user, reason))
                    break
        self.new_group(node)

    # -- multi-output fusion of consumer groups ------------------------------------------------
    def try_merge(self, groups: list[Group]) -> Group | None:
        """Merge consumer groups into one when their iteration spaces agree and no cycle forms."""
        if any(g.matmul is not None for g in groups):
            return None
        spaces = [g.reduce_space for g in groups if g.reduce_space is not None]
        if len({s for s in spaces}) > 1:
            return None
        if spaces:
            allowed = None
            for g in groups:
                if g.reduce_space is not None:
                    allowed = g.space_shapes()
                    break
            if any(g.reduce_space is None and g.root.shape not in allowed for g in groups):
                return None
        elif len({g.root.shape for g in groups}) > 1:
            return None
        if sum(len(g.members) for g in groups) > self.cost.max_ops:
            return None
        if self.path_between(groups):
            return None
        if spaces:
            trial = Group(-1, groups[0].root)
            for g in groups:
                for node in g.members.values():
                    trial.add(node)
            if merged_reason(trial, self.users, self.cost) is not None:
                return None
        target = groups[0]
        if target.reduce_space is None and spaces:
            target = next(g for g in groups if g.reduce_space is not None)
        for group in groups:
            if group is target:
                continue
            for node in group.members.values():
                target.add(node)
                owners = self.groups_of[node.id]
                owners[:] = [g for g in owners if g is not group]
                if target not in owners:
                    owners.append(target)
            self.groups.remove(group)
        return target

    def path_between(self, groups: list[Group]) -> bool:
        """Whether a value leaves one of `groups` and reaches another through other nodes."""
        inside = set()
        for g in groups:
            inside.update(g.members)
        owner = {}
        for g in groups:
            for node_id in g.members:
                owner.setdefault(node_id, set()).add(g.id)
        for g in groups:
            stack = [u for n in g.members.values() for u in self.users[n.id] if u.id not in inside]
            seen = set()
            while stack:
                node = stack.pop()
                if node.id in seen:
                    continue
                seen.add(node.id)
                for user in self.users[node.id]:
                    if user.id in inside:
                        return True
                    stack.append(user)
        return False

    # -- the result ----------------------------------------------------------------------------
    def finish(self) -> FusedProgram:
        for group in self.groups:
            group.finish(self.order, {n for n in group.members if self.stored_by(n, group)})
        groups = self.launch_order()
        for index, group in enumerate(groups):
            group.id = index
        return FusedProgram(self.graph, groups, self.decisions, self.cost)

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

    def launch_order(self) -> list[Group]:
        """Groups in a topological order (ties broken by their first node): deterministic."""
        producer = {node_id: group for group in self.groups for node_id in group.outputs}
        remaining = sorted(self.groups, key=lambda g: min(self.order[n] for n in g.members))
        done, ordered = set(), []
        while remaining:
            for group in remaining:
                deps = {producer[s.id].id for n in group.members.values() for s in n.inputs
                        if s.id not in group.members and s.id in producer}
                if deps <= done:
                    ordered.append(group)
                    done.add(group.id)
                    remaining.remove(group)
                    break
            else:
                raise AssertionError("fusion produced a cycle between groups")
        return ordered


def _pointwise(node: Node) -> bool:
    return node.kind in ("elementwise", LAYOUT) or node.op == "iota"


def partition(graph: Graph, cost: CostModel = DEFAULT) -> FusedProgram:
    """The fusion groups of a simplified graph, in launch order, with every decision explained."""
    return Partitioner(graph, cost).run()
