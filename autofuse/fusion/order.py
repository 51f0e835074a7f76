"""Order between groups: whether merging groups would make a cycle, and the launch order.

Both walk only what they must, so partitioning stays linear in the program's size: the cycle check
never leaves the stretch of the program (in topological order) that the groups span.
"""
from __future__ import annotations

import heapq

from .group import Group


def path_outside(groups: list[Group], users: dict, order: dict, groups_of: dict | None = None,
                 ) -> bool:
    """Whether a value leaves one of `groups` and reaches one of them again through nodes outside
    them: merging them would then make a cycle. With `groups_of` (node id -> the groups holding
    it), the other groups count as the kernels they will be: reaching any member of one reaches
    all its results (it runs once all its inputs are ready), so a path through a group that holds
    both an ancestor and a descendant of the merged ones is found too."""
    inside = set()
    for group in groups:
        inside.update(group.members)
    merged = {id(group) for group in groups}
    last = max(order[node_id] for node_id in inside)
    stack, seen, entered = [], set(), set()
    independent: dict = {}
    for group in groups:
        for node in group.members.values():
            stack.extend(u for u in users[node.id]
                         if u.id not in inside and not _recomputed_by(node.id, u, groups_of,
                                                                      inside, independent))
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        for other in (groups_of or {}).get(node.id, ()):
            if id(other) in merged or id(other) in entered:
                continue
            entered.add(id(other))
            for result in _results(other, users, groups_of):
                if result.id in inside:
                    return True
                stack.append(result)
        # NOTE: a node after the last member in topological order reaches no member by itself
        # (only through a group it belongs to, entered above).
        if order[node.id] > last:
            continue
        for user in users[node.id]:
            if user.id in inside:
                return True
            stack.append(user)
    return False


def _recomputed_by(node_id: int, user, groups_of: dict | None, inside: set,
                   independent: dict) -> bool:
    """Whether every kernel computing `user` computes `node_id` itself (a pointwise value
    recomputed there) and reads nothing of the merged groups from memory: then no value flows
    from them to `user` through it. `independent` caches the second answer per kernel."""
    owners = (groups_of or {}).get(user.id, ())
    if not owners or not all(node_id in group.members for group in owners):
        return False
    for group in owners:
        if id(group) not in independent:
            independent[id(group)] = not any(
                source.id in inside and source.id not in group.members
                for member in group.members.values() for source in member.inputs)
        if not independent[id(group)]:
            return False
    return True


def _results(group: Group, users: dict, groups_of: dict) -> list:
    """The nodes that read one of `group`'s results from memory: readers outside it, except
    those whose every group computes the value itself (recomputed there)."""
    found = []
    for member in group.members.values():
        for user in users[member.id]:
            if user.id in group.members:
                continue
            holders = groups_of.get(user.id, ())
            if holders and all(member.id in holder.members for holder in holders):
                continue
            found.append(user)
    return found


def launch_order(groups: list[Group], order: dict) -> list[Group]:
    """Groups in a topological order, the ready group whose first node comes first launching
    first (ties: the order of `groups`): deterministic."""
    producer = {node_id: group for group in groups for node_id in group.outputs}
    waiting, dependents = {}, {group.id: [] for group in groups}
    key = {}
    for position, group in enumerate(groups):
        deps = {producer[s.id].id for n in group.members.values() for s in n.inputs
                if s.id not in group.members and s.id in producer}
        deps.discard(group.id)
        waiting[group.id] = len(deps)
        for dep in deps:
            dependents[dep].append(group)
        key[group.id] = (min(order[n] for n in group.members), position)
    ready = [(key[g.id], g.id, g) for g in groups if waiting[g.id] == 0]
    heapq.heapify(ready)
    ordered = []
    while ready:
        _, _, group = heapq.heappop(ready)
        ordered.append(group)
        for dependent in dependents[group.id]:
            waiting[dependent.id] -= 1
            if waiting[dependent.id] == 0:
                heapq.heappush(ready, (key[dependent.id], dependent.id, dependent))
    if len(ordered) != len(groups):
        raise AssertionError("fusion produced a cycle between groups")
    return ordered
